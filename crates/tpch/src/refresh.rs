//! TPC-H's refresh functions (spec clause 2.5): RF1 inserts SF × 1 500 new
//! orders, each with its 1–7 line items; RF2 deletes SF × 1 500 old orders and
//! their line items. Both build copy-on-write versions of ORDERS and LINEITEM
//! ([`maestro_storage::column::Keep`]); [`crate::SharedDatabase`] commits them
//! as one transaction.
//!
//! **Where the rows come from.** dbgen writes refresh sets as extra files; the
//! `tpchgen` crate has no such mode, so RF1 number `n` takes the orders that
//! tpchgen's own generators produce for the row indices right after the
//! loaded population (`population + (n − 1)·count + 1 …`): the same random
//! streams, value rules and text pool as the loaded rows, customer and part
//! keys drawn within this scale factor, order keys continuing the sparse key
//! pattern above the largest loaded key. RF2 number `n` deletes the loaded
//! orders with indices `(n − 1)·count + 1 …= n·count` (the oldest first, as
//! dbgen's delete sets do). Set `n` is the same rows at every run, so DuckDB
//! can apply the very same sets (`maestro tpch refresh --export-sets`).

use std::collections::HashSet;
use std::fmt;
use std::fs::File;
use std::hash::BuildHasherDefault;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use maestro_scheduler::Scheduler;
use maestro_storage::column::{Column, ColumnBuilder, ColumnError, FxHasher, Keep, Table};
use tpchgen::distribution::Distributions;
use tpchgen::generators::OrderGenerator;

use crate::generate::{self, GenContext};
use crate::load::shared_text_pool;
use crate::schema::{LineItemChunk, OrdersChunk};
use crate::{Database, validate_scale_factor};

/// Refresh sets a population offers: RF2 deletes loaded orders, `count` per
/// set, so after this many sets none are left to delete (exactly 1 000 when
/// the order count is divisible by 1 000, as at every SF ≥ 1/1 500 step).
pub const REFRESH_SETS_MAX: u32 = 1000;

/// What a refresh could not do.
#[derive(Debug, Clone, PartialEq)]
pub enum RefreshError {
    /// Set numbers are 1 ..= [`REFRESH_SETS_MAX`].
    SetOutOfRange {
        number: u32,
    },
    /// RF1 of this set ran before on this database: its order keys exist.
    AlreadyApplied {
        number: u32,
        key: i64,
    },
    InvalidScaleFactor(String),
    /// Building a table version failed (a bug: the schemas are fixed).
    Column(ColumnError),
    /// The transaction failed; `retryable` says whether running it again may
    /// succeed (another refresh committed first).
    Txn {
        message: String,
        retryable: bool,
    },
}

impl fmt::Display for RefreshError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RefreshError::SetOutOfRange { number } => write!(
                f,
                "refresh set {number} does not exist: sets are numbered 1 to {REFRESH_SETS_MAX}"
            ),
            RefreshError::AlreadyApplied { number, key } => write!(
                f,
                "RF1 of refresh set {number} was applied before (order {key} exists); a set \
                 inserts its orders once per loaded database"
            ),
            RefreshError::InvalidScaleFactor(m) => write!(f, "{m}"),
            RefreshError::Column(e) => write!(f, "building a table version: {e}"),
            RefreshError::Txn { message, .. } => write!(f, "refresh transaction: {message}"),
        }
    }
}

impl std::error::Error for RefreshError {}

impl From<ColumnError> for RefreshError {
    fn from(e: ColumnError) -> Self {
        RefreshError::Column(e)
    }
}

/// How refresh set numbers map onto tpchgen's order indices.
#[derive(Debug, Clone, Copy)]
struct SetLayout {
    /// Loaded orders.
    population: i64,
    /// Orders per refresh function.
    count: i64,
    /// tpchgen part count whose parts are `count` orders long.
    parts: i32,
    /// The part whose orders come right after the population.
    first_new_part: i32,
}

impl SetLayout {
    fn new(sf: f64) -> SetLayout {
        let population = OrderGenerator::calculate_row_count(sf, 1, 1);
        let parts = population.clamp(1, i64::from(REFRESH_SETS_MAX));
        let count = population / parts;
        SetLayout {
            population,
            count,
            parts: parts as i32,
            // The first part whose start index is at or past the population.
            first_new_part: ((population + count - 1) / count + 1) as i32,
        }
    }

    fn check(&self, number: u32) -> Result<(), RefreshError> {
        if number == 0
            || number > REFRESH_SETS_MAX
            || i64::from(number) * self.count > self.population
        {
            return Err(RefreshError::SetOutOfRange { number });
        }
        Ok(())
    }
}

/// Orders each refresh function inserts or deletes at scale factor `sf`
/// (SF × 1 500, rounded down, at least 1).
pub fn refresh_count(sf: f64) -> usize {
    SetLayout::new(sf).count as usize
}

/// Keeps tpchgen's text pool (TEXT_POOL_BYTES of text, ~1 s to build)
/// alive while it is held, so that several [`rf1_rows`] calls build it once
/// (without a holder, each call builds and drops its own).
pub struct TextPoolGuard {
    _pool: std::sync::Arc<tpchgen::text::TextPool>,
}

/// A [`TextPoolGuard`]: hold it while generating several refresh sets.
pub fn keep_text_pool() -> TextPoolGuard {
    TextPoolGuard {
        _pool: shared_text_pool(),
    }
}

/// RF1's rows: new ORDERS and LINEITEM rows, as tables with the loaded schemas.
#[derive(Debug, Clone, PartialEq)]
pub struct NewRows {
    pub number: u32,
    pub orders: Table,
    pub lineitem: Table,
}

/// The rows RF1 number `number` inserts (1-based, deterministic).
pub fn rf1_rows(sf: f64, number: u32) -> Result<NewRows, RefreshError> {
    let sf =
        validate_scale_factor(sf).map_err(|e| RefreshError::InvalidScaleFactor(e.to_string()))?;
    let layout = SetLayout::new(sf);
    layout.check(number)?;
    let pool = shared_text_pool();
    let ctx = GenContext {
        scale_factor: sf,
        distributions: Distributions::static_default(),
        text_pool: &pool,
    };
    let part = layout.first_new_part + number as i32 - 1;
    let orders = generate::orders(&ctx, part, layout.parts);
    let lineitem = generate::lineitem(&ctx, part, layout.parts);
    let table = |name: &str, schema, builders: Vec<ColumnBuilder>| {
        let columns = builders
            .into_iter()
            .map(ColumnBuilder::finish)
            .collect::<Result<Vec<Column>, _>>()?;
        Table::with_schema(name, schema, columns)
    };
    Ok(NewRows {
        number,
        orders: table(OrdersChunk::NAME, OrdersChunk::SCHEMA, orders.columns)?,
        lineitem: table(LineItemChunk::NAME, LineItemChunk::SCHEMA, lineitem.columns)?,
    })
}

/// The order keys RF2 number `number` deletes (1-based, deterministic).
pub fn rf2_keys(sf: f64, number: u32) -> Result<Vec<i64>, RefreshError> {
    let sf =
        validate_scale_factor(sf).map_err(|e| RefreshError::InvalidScaleFactor(e.to_string()))?;
    let layout = SetLayout::new(sf);
    layout.check(number)?;
    let first = (i64::from(number) - 1) * layout.count + 1;
    Ok((first..first + layout.count)
        .map(OrderGenerator::make_order_key)
        .collect())
}

/// New versions of ORDERS and LINEITEM, with what changed.
#[derive(Debug, Clone)]
pub struct Versions {
    pub orders: Table,
    pub lineitem: Table,
    /// Orders inserted (RF1) or deleted (RF2).
    pub orders_changed: usize,
    /// Line items inserted or deleted.
    pub lineitem_changed: usize,
}

/// RF1 on `db`: its ORDERS and LINEITEM with `rows` appended.
pub fn insert(
    scheduler: &Scheduler,
    db: &Database,
    rows: &NewRows,
) -> Result<Versions, RefreshError> {
    let new_keys: HashSet<i64, BuildHasherDefault<FxHasher>> =
        rows.orders.i64("o_orderkey")?.iter().copied().collect();
    if let Some(&key) = db
        .orders
        .i64("o_orderkey")?
        .iter()
        .find(|k| new_keys.contains(k))
    {
        return Err(RefreshError::AlreadyApplied {
            number: rows.number,
            key,
        });
    }
    let [orders, lineitem] = rebuild(
        scheduler,
        [
            (&db.orders, Keep::All, &rows.orders),
            (&db.lineitem, Keep::All, &rows.lineitem),
        ],
    )?;
    Ok(Versions {
        orders,
        lineitem,
        orders_changed: rows.orders.num_rows(),
        lineitem_changed: rows.lineitem.num_rows(),
    })
}

/// RF2 on `db`: its ORDERS and LINEITEM without the orders of `keys` and
/// their line items. Keys not present (deleted before) delete nothing.
pub fn delete(
    scheduler: &Scheduler,
    db: &Database,
    keys: &[i64],
) -> Result<Versions, RefreshError> {
    let doomed: HashSet<i64, BuildHasherDefault<FxHasher>> = keys.iter().copied().collect();
    let survivors = |table: &Table, key: &str| -> Result<Vec<u32>, RefreshError> {
        Ok(table
            .i64(key)?
            .iter()
            .enumerate()
            .filter(|(_, k)| !doomed.contains(k))
            .map(|(row, _)| row as u32)
            .collect())
    };
    let (keep_orders, keep_lines) = scheduler.join(
        || survivors(&db.orders, "o_orderkey"),
        || survivors(&db.lineitem, "l_orderkey"),
    );
    let (keep_orders, keep_lines) = (keep_orders?, keep_lines?);
    let (no_orders, no_lines) = (db.orders.empty_like(), db.lineitem.empty_like());
    let [orders, lineitem] = rebuild(
        scheduler,
        [
            (&db.orders, Keep::Rows(&keep_orders), &no_orders),
            (&db.lineitem, Keep::Rows(&keep_lines), &no_lines),
        ],
    )?;
    Ok(Versions {
        orders,
        lineitem,
        orders_changed: db.orders.num_rows() - keep_orders.len(),
        lineitem_changed: db.lineitem.num_rows() - keep_lines.len(),
    })
}

/// [`Table::rebuild`] of several tables in one scope, one scheduler task per
/// column, so the small table's columns do not wait for the large one's.
fn rebuild<const N: usize>(
    scheduler: &Scheduler,
    jobs: [(&Table, Keep, &Table); N],
) -> Result<[Table; N], ColumnError> {
    let slots: Vec<Vec<OnceLock<Result<Column, ColumnError>>>> = jobs
        .iter()
        .map(|(table, _, _)| (0..table.num_columns()).map(|_| OnceLock::new()).collect())
        .collect();
    scheduler.scope(|s| {
        for (&(table, keep, appended), table_slots) in jobs.iter().zip(&slots) {
            for (i, slot) in table_slots.iter().enumerate() {
                s.spawn(move |_| {
                    if slot.set(table.rebuild_column(i, keep, appended)).is_err() {
                        unreachable!("each column is rebuilt once");
                    }
                });
            }
        }
    });
    let mut tables = Vec::with_capacity(N);
    for ((table, _, _), table_slots) in jobs.iter().zip(slots) {
        let columns = table_slots
            .into_iter()
            .map(|slot| slot.into_inner().expect("the scope ran every task"))
            .collect::<Result<Vec<_>, _>>()?;
        tables.push(table.with_columns(columns)?);
    }
    Ok(tables
        .try_into()
        .unwrap_or_else(|_| unreachable!("one table per job")))
}

/// Writes `table` as dbgen writes `.tbl` files: fields separated by `|`, one
/// trailing `|` per line, no quoting (TPC-H text holds no `|` or newline).
pub fn write_tbl(table: &Table, out: &mut impl Write) -> std::io::Result<()> {
    for row in 0..table.num_rows() {
        for value in table.row(row) {
            write!(out, "{value}|")?;
        }
        writeln!(out)?;
    }
    Ok(())
}

/// Writes refresh set `number` as dbgen names its update files:
/// `orders.tbl.u<n>` and `lineitem.tbl.u<n>` (RF1's rows) and `delete.<n>`
/// (RF2's keys, one `key|` per line), so another engine can apply the very
/// same sets. Returns the paths written.
pub fn export_set(sf: f64, number: u32, dir: &Path) -> Result<Vec<PathBuf>, String> {
    let rows = rf1_rows(sf, number).map_err(|e| e.to_string())?;
    let keys = rf2_keys(sf, number).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let mut written = Vec::new();
    let mut file = |name: String, fill: &dyn Fn(&mut BufWriter<File>) -> std::io::Result<()>| {
        let path = dir.join(name);
        let wrote = File::create(&path).and_then(|f| {
            let mut w = BufWriter::new(f);
            fill(&mut w)?;
            w.flush()
        });
        wrote.map_err(|e| format!("writing {}: {e}", path.display()))?;
        written.push(path);
        Ok::<(), String>(())
    };
    file(format!("orders.tbl.u{number}"), &|w| {
        write_tbl(&rows.orders, w)
    })?;
    file(format!("lineitem.tbl.u{number}"), &|w| {
        write_tbl(&rows.lineitem, w)
    })?;
    file(format!("delete.{number}"), &|w| {
        keys.iter().try_for_each(|k| writeln!(w, "{k}|"))
    })?;
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_continues_after_the_population() {
        for sf in [0.01, 0.1, 1.0, 0.05] {
            let l = SetLayout::new(sf);
            assert_eq!(l.count, (sf * 1500.0).round() as i64, "sf {sf}");
            let start = i64::from(l.first_new_part - 1) * l.count;
            assert!(start >= l.population, "sf {sf}: starts at {start}");
            assert!(
                start < l.population + l.count,
                "sf {sf}: a gap before {start}"
            );
        }
    }

    #[test]
    fn sets_are_numbered_from_one() {
        assert_eq!(
            rf2_keys(0.01, 0),
            Err(RefreshError::SetOutOfRange { number: 0 })
        );
        assert!(rf2_keys(0.01, REFRESH_SETS_MAX + 1).is_err());
        let keys = rf2_keys(0.01, 1).unwrap();
        assert_eq!(keys.len(), 15);
        // The loaded population's first keys: 1..=7, then 32, 33, …
        assert_eq!(&keys[..9], &[1, 2, 3, 4, 5, 6, 7, 32, 33]);
    }
}
