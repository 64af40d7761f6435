//! TPC-C's and CH's rows as SQL column tables: each row type's columns
//! with their SQL types ([`ColumnRow`]) and [`build`], which turns rows into
//! a column table — the schema DuckDB gets in
//! `crates/ch/scripts/duckdb_answers.py`, so the query texts of
//! `crates/ch/sql/` run unchanged on both.
//!
//! Types: identifiers and counters up to 16 bits INTEGER, 32-bit ones BIGINT
//! (lossless); money DECIMAL(12,2) (`h_amount`, `ol_amount` DECIMAL(6,2),
//! `i_price` DECIMAL(5,2)); taxes and discounts DECIMAL(4,4); timestamps
//! TIMESTAMP (TPC-C's whole seconds as microseconds); text VARCHAR. The
//! NULLs of `o_carrier_id` (undelivered orders) and `ol_delivery_d`
//! (undelivered lines) are NULL masks ([`LoadedTable::nulls`]).

use std::sync::Arc;

use maestro_sql::store::{ColumnSpec, ColumnType, LoadedTable};
use maestro_storage::column::{Column, DecimalColumn, DictColumn, StrHeap, Table};
use maestro_tpcc::schema::{
    Customer, District, History, Item, NewOrder, Order, OrderLine, Stock, Warehouse,
};

use crate::tables::{Nation, Region, Supplier};
/// One cell of a row, by the column's kind.
pub enum Cell<'r> {
    Int(i64),
    /// Fixed-point with the column's scale (money: cents; rates: 1/10 000).
    Fixed(i64),
    /// Seconds since the epoch.
    Time(Option<u64>),
    /// An integer that may be NULL.
    OptInt(Option<i64>),
    Text(&'r str),
}

/// A column's name, declared type and how a row gives its cell.
pub type Def<R> = (&'static str, ColumnType, fn(&R) -> Cell<'_>);

const INT: ColumnType = ColumnType::Int32;
const BIG: ColumnType = ColumnType::Int64;
const TS: ColumnType = ColumnType::Timestamp;
const TEXT: ColumnType = ColumnType::Str { max_chars: None };
const fn dec(precision: u8, scale: u8) -> ColumnType {
    ColumnType::Decimal {
        precision: Some(precision),
        scale,
    }
}
const MONEY: ColumnType = dec(12, 2);
const RATE: ColumnType = dec(4, 4);

/// A row type's columns as a SQL table.
pub trait ColumnRow: Sized + 'static {
    /// The columns, in the table's order.
    const COLUMNS: &'static [Def<Self>];
    /// Columns whose values are unique (join ordering).
    const UNIQUE: &'static [&'static str] = &[];
    /// Composite keys: TPC-C's primary keys of more than one column (GROUP
    /// BY's functional dependencies, `maestro_sql`'s `functional.rs`).
    const KEYS: &'static [&'static [&'static str]] = &[];
    /// Text columns stored dictionary-encoded (their groupings, joins and
    /// filters run on codes). Only columns TPC-C's transactions never give
    /// a new value: a query's delta shares its main's dictionary, and a
    /// string the dictionary lacks makes that table's delta a merged copy
    /// (`mirror.rs`). The others (`c_data`, `h_data`, `s_dist_*`,
    /// `ol_dist_info`, …: written, or random and unique) stay a string heap.
    const DICTIONARY: &'static [&'static str] = &[];
}

/// Rows `rows` as table `name` of `R`'s columns.
pub fn build<R: ColumnRow>(name: &str, rows: &[R]) -> Result<LoadedTable, String> {
    build_with(name, rows, R::COLUMNS, R::UNIQUE, R::KEYS, R::DICTIONARY)
}

/// Rows `rows` as table `name` with columns `defs`.
fn build_with<R>(
    name: &str,
    rows: &[R],
    defs: &[Def<R>],
    unique: &[&str],
    keys: &[&[&str]],
    dictionary: &[&str],
) -> Result<LoadedTable, String> {
    let mut columns = Vec::with_capacity(defs.len());
    let mut nulls = Vec::with_capacity(defs.len());
    for &(col, ty, get) in defs {
        let mut mask = Vec::new();
        let column = match ty {
            ColumnType::Int32 => Column::Int32(collect_exact(rows, |r| match get(r) {
                Cell::Int(v) => i32::try_from(v).map_err(|_| overflow(name, col, v)),
                Cell::OptInt(v) => {
                    mask.push(v.is_none());
                    i32::try_from(v.unwrap_or(0)).map_err(|_| overflow(name, col, 0))
                }
                _ => Err(kind(name, col)),
            })?),
            ColumnType::Int64 => Column::Int64(collect_exact(rows, |r| match get(r) {
                Cell::Int(v) => Ok(v),
                _ => Err(kind(name, col)),
            })?),
            ColumnType::Decimal { scale, .. } => {
                let values = collect_exact(rows, |r| match get(r) {
                    Cell::Fixed(v) => Ok(v),
                    _ => Err(kind(name, col)),
                })?;
                Column::Decimal(DecimalColumn::new(scale, values).map_err(|e| e.to_string())?)
            }
            ColumnType::Timestamp => Column::Int64(collect_exact(rows, |r| match get(r) {
                Cell::Time(t) => {
                    mask.push(t.is_none());
                    let secs = t.unwrap_or(0);
                    i64::try_from(secs)
                        .ok()
                        .and_then(|s| s.checked_mul(1_000_000))
                        .ok_or_else(|| overflow(name, col, 0))
                }
                _ => Err(kind(name, col)),
            })?),
            ColumnType::Str { .. } if dictionary.contains(&col) => {
                let values = rows
                    .iter()
                    .map(|r| match get(r) {
                        Cell::Text(s) => Ok(s),
                        _ => Err(kind(name, col)),
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                Column::Str(DictColumn::from_strs(values))
            }
            ColumnType::Str { .. } => {
                let bytes = rows
                    .iter()
                    .map(|r| match get(r) {
                        Cell::Text(s) => s.len(),
                        _ => 0,
                    })
                    .sum();
                let mut heap = StrHeap::with_capacity(rows.len(), bytes);
                for r in rows {
                    match get(r) {
                        Cell::Text(s) => heap.push(s),
                        _ => return Err(kind(name, col)),
                    }
                }
                Column::StrHeap(heap)
            }
            // No CH column is declared with these types.
            ColumnType::Date
            | ColumnType::Int16
            | ColumnType::Bool
            | ColumnType::Float64
            | ColumnType::Float32
            | ColumnType::Float64Bits
            | ColumnType::Float32Bits => return Err(kind(name, col)),
        };
        mask.shrink_to_fit();
        nulls.push(mask.contains(&true).then(|| Arc::new(mask)));
        columns.push((col.to_string(), column));
    }
    let specs = defs
        .iter()
        .map(|&(n, ty, _)| ColumnSpec {
            name: n.to_string(),
            ty,
        })
        .collect();
    let data = Table::new(name.to_string(), columns).map_err(|e| e.to_string())?;
    Ok(LoadedTable {
        data: Arc::new(data),
        columns: specs,
        unique_columns: unique.iter().map(|s| s.to_string()).collect(),
        keys: keys
            .iter()
            .map(|k| k.iter().map(|s| s.to_string()).collect())
            .collect(),
        nulls,
    })
}

/// `f` of every row, in a vector of exactly `rows.len()`: collecting through
/// `Result` loses the size hint, and the vector grew by doubling — up to
/// twice the bytes, which a main keeps for its life (the mirror's first
/// mains at W = 2 took 270 MiB, 198 MiB built exactly).
fn collect_exact<R, T>(
    rows: &[R],
    mut f: impl FnMut(&R) -> Result<T, String>,
) -> Result<Vec<T>, String> {
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        out.push(f(r)?);
    }
    Ok(out)
}

fn overflow(table: &str, col: &str, v: i64) -> String {
    format!("{table}.{col}: {v} does not fit its column")
}

fn kind(table: &str, col: &str) -> String {
    format!("{table}.{col}: a value of the wrong kind (a bug in the CH loader)")
}

impl ColumnRow for Warehouse {
    const COLUMNS: &'static [Def<Self>] = &[
        ("w_id", INT, |r| int(r.w_id)),
        ("w_name", TEXT, |r| text(&r.w_name)),
        ("w_street_1", TEXT, |r| text(&r.w_street_1)),
        ("w_street_2", TEXT, |r| text(&r.w_street_2)),
        ("w_city", TEXT, |r| text(&r.w_city)),
        ("w_state", TEXT, |r| text(&r.w_state)),
        ("w_zip", TEXT, |r| text(&r.w_zip)),
        ("w_tax", RATE, |r| Cell::Fixed(r.w_tax.into())),
        ("w_ytd", MONEY, |r| Cell::Fixed(r.w_ytd)),
    ];
    const UNIQUE: &'static [&'static str] = &["w_id"];
    const DICTIONARY: &'static [&'static str] = &[
        "w_name",
        "w_street_1",
        "w_street_2",
        "w_city",
        "w_state",
        "w_zip",
    ];
}

impl ColumnRow for District {
    const COLUMNS: &'static [Def<Self>] = &[
        ("d_id", INT, |r| int(r.d_id)),
        ("d_w_id", INT, |r| int(r.d_w_id)),
        ("d_name", TEXT, |r| text(&r.d_name)),
        ("d_street_1", TEXT, |r| text(&r.d_street_1)),
        ("d_street_2", TEXT, |r| text(&r.d_street_2)),
        ("d_city", TEXT, |r| text(&r.d_city)),
        ("d_state", TEXT, |r| text(&r.d_state)),
        ("d_zip", TEXT, |r| text(&r.d_zip)),
        ("d_tax", RATE, |r| Cell::Fixed(r.d_tax.into())),
        ("d_ytd", MONEY, |r| Cell::Fixed(r.d_ytd)),
        ("d_next_o_id", BIG, |r| int(r.d_next_o_id)),
    ];
    const KEYS: &'static [&'static [&'static str]] = &[&["d_w_id", "d_id"]];
    const DICTIONARY: &'static [&'static str] = &[
        "d_name",
        "d_street_1",
        "d_street_2",
        "d_city",
        "d_state",
        "d_zip",
    ];
}

impl ColumnRow for Customer {
    const COLUMNS: &'static [Def<Self>] = &[
        ("c_id", INT, |r| int(r.c_id)),
        ("c_d_id", INT, |r| int(r.c_d_id)),
        ("c_w_id", INT, |r| int(r.c_w_id)),
        ("c_first", TEXT, |r| text(&r.c_first)),
        ("c_middle", TEXT, |r| text(&r.c_middle)),
        ("c_last", TEXT, |r| text(&r.c_last)),
        ("c_street_1", TEXT, |r| text(&r.c_street_1)),
        ("c_street_2", TEXT, |r| text(&r.c_street_2)),
        ("c_city", TEXT, |r| text(&r.c_city)),
        ("c_state", TEXT, |r| text(&r.c_state)),
        ("c_zip", TEXT, |r| text(&r.c_zip)),
        ("c_phone", TEXT, |r| text(&r.c_phone)),
        ("c_since", TS, |r| Cell::Time(Some(r.c_since))),
        ("c_credit", TEXT, |r| text(&r.c_credit)),
        ("c_credit_lim", MONEY, |r| Cell::Fixed(r.c_credit_lim)),
        ("c_discount", RATE, |r| Cell::Fixed(r.c_discount.into())),
        ("c_balance", MONEY, |r| Cell::Fixed(r.c_balance)),
        ("c_ytd_payment", MONEY, |r| Cell::Fixed(r.c_ytd_payment)),
        ("c_payment_cnt", BIG, |r| int(r.c_payment_cnt)),
        ("c_delivery_cnt", BIG, |r| int(r.c_delivery_cnt)),
        ("c_data", TEXT, |r| text(&r.c_data)),
    ];
    const KEYS: &'static [&'static [&'static str]] = &[&["c_w_id", "c_d_id", "c_id"]];
    const DICTIONARY: &'static [&'static str] = &[
        "c_first",
        "c_middle",
        "c_last",
        "c_street_1",
        "c_street_2",
        "c_city",
        "c_state",
        "c_zip",
        "c_phone",
        "c_credit",
    ];
}

impl ColumnRow for History {
    const COLUMNS: &'static [Def<Self>] = &[
        ("h_c_id", INT, |r| int(r.h_c_id)),
        ("h_c_d_id", INT, |r| int(r.h_c_d_id)),
        ("h_c_w_id", INT, |r| int(r.h_c_w_id)),
        ("h_d_id", INT, |r| int(r.h_d_id)),
        ("h_w_id", INT, |r| int(r.h_w_id)),
        ("h_date", TS, |r| Cell::Time(Some(r.h_date))),
        ("h_amount", dec(6, 2), |r| Cell::Fixed(r.h_amount)),
        ("h_data", TEXT, |r| text(&r.h_data)),
    ];
}

impl ColumnRow for NewOrder {
    const COLUMNS: &'static [Def<Self>] = &[
        ("no_o_id", BIG, |r| int(r.no_o_id)),
        ("no_d_id", INT, |r| int(r.no_d_id)),
        ("no_w_id", INT, |r| int(r.no_w_id)),
    ];
    const KEYS: &'static [&'static [&'static str]] = &[&["no_w_id", "no_d_id", "no_o_id"]];
}

impl ColumnRow for Order {
    const COLUMNS: &'static [Def<Self>] = &[
        ("o_id", BIG, |r| int(r.o_id)),
        ("o_d_id", INT, |r| int(r.o_d_id)),
        ("o_w_id", INT, |r| int(r.o_w_id)),
        ("o_c_id", INT, |r| int(r.o_c_id)),
        ("o_entry_d", TS, |r| Cell::Time(Some(r.o_entry_d))),
        ("o_carrier_id", INT, |r| {
            Cell::OptInt(r.o_carrier_id.map(i64::from))
        }),
        ("o_ol_cnt", INT, |r| int(r.o_ol_cnt)),
        ("o_all_local", INT, |r| int(r.o_all_local)),
    ];
    const KEYS: &'static [&'static [&'static str]] = &[&["o_w_id", "o_d_id", "o_id"]];
}

impl ColumnRow for OrderLine {
    const COLUMNS: &'static [Def<Self>] = &[
        ("ol_o_id", BIG, |r| int(r.ol_o_id)),
        ("ol_d_id", INT, |r| int(r.ol_d_id)),
        ("ol_w_id", INT, |r| int(r.ol_w_id)),
        ("ol_number", INT, |r| int(r.ol_number)),
        ("ol_i_id", BIG, |r| int(r.ol_i_id)),
        ("ol_supply_w_id", INT, |r| int(r.ol_supply_w_id)),
        ("ol_delivery_d", TS, |r| Cell::Time(r.ol_delivery_d)),
        ("ol_quantity", INT, |r| int(r.ol_quantity)),
        ("ol_amount", dec(6, 2), |r| Cell::Fixed(r.ol_amount)),
        ("ol_dist_info", TEXT, |r| dist(&r.ol_dist_info)),
    ];
    const KEYS: &'static [&'static [&'static str]] =
        &[&["ol_w_id", "ol_d_id", "ol_o_id", "ol_number"]];
}

impl ColumnRow for Item {
    const COLUMNS: &'static [Def<Self>] = &[
        ("i_id", BIG, |r| int(r.i_id)),
        ("i_im_id", BIG, |r| int(r.i_im_id)),
        ("i_name", TEXT, |r| text(&r.i_name)),
        ("i_price", dec(5, 2), |r| Cell::Fixed(r.i_price)),
        ("i_data", TEXT, |r| text(&r.i_data)),
    ];
    const UNIQUE: &'static [&'static str] = &["i_id"];
    const DICTIONARY: &'static [&'static str] = &["i_name"];
}

impl ColumnRow for Stock {
    const COLUMNS: &'static [Def<Self>] = &[
        ("s_i_id", BIG, |r| int(r.s_i_id)),
        ("s_w_id", INT, |r| int(r.s_w_id)),
        ("s_quantity", INT, |r| int(r.s_quantity)),
        ("s_dist_01", TEXT, |r| dist(&r.s_dist[0])),
        ("s_dist_02", TEXT, |r| dist(&r.s_dist[1])),
        ("s_dist_03", TEXT, |r| dist(&r.s_dist[2])),
        ("s_dist_04", TEXT, |r| dist(&r.s_dist[3])),
        ("s_dist_05", TEXT, |r| dist(&r.s_dist[4])),
        ("s_dist_06", TEXT, |r| dist(&r.s_dist[5])),
        ("s_dist_07", TEXT, |r| dist(&r.s_dist[6])),
        ("s_dist_08", TEXT, |r| dist(&r.s_dist[7])),
        ("s_dist_09", TEXT, |r| dist(&r.s_dist[8])),
        ("s_dist_10", TEXT, |r| dist(&r.s_dist[9])),
        ("s_ytd", BIG, |r| int(r.s_ytd)),
        ("s_order_cnt", BIG, |r| int(r.s_order_cnt)),
        ("s_remote_cnt", BIG, |r| int(r.s_remote_cnt)),
        ("s_data", TEXT, |r| text(&r.s_data)),
    ];
    const KEYS: &'static [&'static [&'static str]] = &[&["s_w_id", "s_i_id"]];
}

impl ColumnRow for Supplier {
    const COLUMNS: &'static [Def<Self>] = &[
        ("su_suppkey", INT, |r| int(r.su_suppkey as i64)),
        ("su_name", TEXT, |r| text(&r.su_name)),
        ("su_address", TEXT, |r| text(&r.su_address)),
        ("su_nationkey", INT, |r| int(r.su_nationkey)),
        ("su_phone", TEXT, |r| text(&r.su_phone)),
        ("su_acctbal", MONEY, |r| Cell::Fixed(r.su_acctbal)),
        ("su_comment", TEXT, |r| text(&r.su_comment)),
    ];
    const UNIQUE: &'static [&'static str] = &["su_suppkey"];
    const DICTIONARY: &'static [&'static str] = &["su_name", "su_address", "su_phone"];
}

impl ColumnRow for Nation {
    const COLUMNS: &'static [Def<Self>] = &[
        ("n_nationkey", INT, |r| int(r.n_nationkey)),
        ("n_name", TEXT, |r| text(r.n_name)),
        ("n_regionkey", INT, |r| int(r.n_regionkey)),
        ("n_comment", TEXT, |r| text(&r.n_comment)),
    ];
    const UNIQUE: &'static [&'static str] = &["n_nationkey"];
    const DICTIONARY: &'static [&'static str] = &["n_name", "n_comment"];
}

impl ColumnRow for Region {
    const COLUMNS: &'static [Def<Self>] = &[
        ("r_regionkey", INT, |r| int(r.r_regionkey)),
        ("r_name", TEXT, |r| text(r.r_name)),
        ("r_comment", TEXT, |r| text(&r.r_comment)),
    ];
    const UNIQUE: &'static [&'static str] = &["r_regionkey"];
    const DICTIONARY: &'static [&'static str] = &["r_name", "r_comment"];
}

fn int(v: impl Into<i64>) -> Cell<'static> {
    Cell::Int(v.into())
}

fn text(s: &str) -> Cell<'_> {
    Cell::Text(s)
}

fn dist(d: &[u8; 24]) -> Cell<'_> {
    // ASCII by construction (the loader draws letters and digits).
    Cell::Text(std::str::from_utf8(d).unwrap_or(""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_built_from_rows_holds_no_spare_capacity() {
        let rows: Vec<NewOrder> = (1..=1000)
            .map(|o| NewOrder {
                no_o_id: o,
                no_d_id: 1,
                no_w_id: 1,
            })
            .collect();
        let t = build("new_order", &rows).expect("builds");
        // no_o_id is BIGINT (8 bytes), the two ids INTEGER (4 bytes each).
        assert_eq!(t.data.heap_bytes(), 1000 * (8 + 4 + 4));
    }

    fn names<R: ColumnRow>() -> Vec<&'static str> {
        R::COLUMNS.iter().map(|d| d.0).collect()
    }

    #[test]
    fn every_composite_key_names_columns_of_its_table() {
        fn keys<R: ColumnRow>() -> (Vec<&'static str>, &'static [&'static [&'static str]]) {
            (names::<R>(), R::KEYS)
        }
        let tables = [
            ("district", keys::<District>()),
            ("customer", keys::<Customer>()),
            ("new_order", keys::<NewOrder>()),
            ("oorder", keys::<Order>()),
            ("order_line", keys::<OrderLine>()),
            ("stock", keys::<Stock>()),
        ];
        for (table, (columns, keys)) in &tables {
            assert!(!keys.is_empty(), "{table} has a composite key");
            for key in *keys {
                assert!(key.len() > 1, "{table}: {key:?}");
                for c in *key {
                    assert!(columns.contains(c), "{table}: no column {c}");
                }
            }
        }
        assert!(keys::<Item>().1.is_empty());
    }
}
