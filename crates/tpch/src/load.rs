//! The bulk loader: generate every table in parts as scheduler tasks, then
//! concatenate each column's parts (and build its dictionary) as tasks too.
//!
//! Memory: the parts of all tables coexist once generation ends (about the size
//! of the final tables); assembly frees each part right after copying it, so the
//! peak is the tables plus the columns being assembled, plus `tpchgen`'s text
//! pool (300 MiB) during generation — shared by concurrent loads and freed when
//! the last one finishes generating.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Instant;

use maestro_scheduler::Scheduler;
use maestro_storage::column::{Column, ColumnBuilder, ColumnError, DataType, Table};
use tpchgen::distribution::Distributions;
use tpchgen::generators::{CustomerGenerator, OrderGenerator, PartGenerator, SupplierGenerator};
use tpchgen::text::TextPool;

use crate::generate::{self, GenContext, GeneratedPart, SUPPLIERS_PER_PART};
use crate::schema::{
    CustomerChunk, LineItemChunk, NationChunk, OrdersChunk, PartChunk, PartSuppChunk, RegionChunk,
    SupplierChunk,
};
use crate::{Database, LoadError, Progress, validate_scale_factor};

/// Default target size of one generation task, in output rows.
pub const DEFAULT_ROWS_PER_PART: usize = 100_000;

/// The size of `tpchgen`'s text pool; comments are slices of it, so it must be
/// exactly the default for the data to match dbgen.
const TEXT_POOL_BYTES: i32 = 300 * 1024 * 1024;

/// How to load.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadOptions {
    pub scale_factor: f64,
    /// Target output rows per generation task (the data do not depend on it).
    pub rows_per_part: usize,
}

impl LoadOptions {
    pub fn new(scale_factor: f64) -> LoadOptions {
        LoadOptions {
            scale_factor,
            rows_per_part: DEFAULT_ROWS_PER_PART,
        }
    }
}

/// Generates and loads all eight tables at `scale_factor` on `scheduler`,
/// reporting to `progress`.
pub fn load(
    scheduler: &Scheduler,
    scale_factor: f64,
    progress: &(dyn Fn(&Progress) + Sync),
) -> Result<Database, LoadError> {
    load_with(scheduler, &LoadOptions::new(scale_factor), progress)
}

/// [`load`] with options.
pub fn load_with(
    scheduler: &Scheduler,
    options: &LoadOptions,
    progress: &(dyn Fn(&Progress) + Sync),
) -> Result<Database, LoadError> {
    let sf = validate_scale_factor(options.scale_factor)?;
    if options.rows_per_part == 0 {
        return Err(LoadError::InvalidOption {
            option: "rows_per_part",
            reason: "must be at least 1",
        });
    }
    let start = Instant::now();
    // Parts per table, in `TABLES` order.
    let plan: Vec<usize> = TABLES
        .iter()
        .map(|t| t.parts(sf, options.rows_per_part))
        .collect();
    let total: usize = plan.iter().sum();
    progress(&Progress::Started {
        scale_factor: sf,
        parts: total,
    });

    let pool = shared_text_pool();
    let text_pool = start.elapsed();
    progress(&Progress::TextPoolReady { elapsed: text_pool });
    let generated = generate_parts(scheduler, sf, &pool, &plan, total, progress);
    drop(pool);
    let generate = start.elapsed() - text_pool;

    let tables = assemble(scheduler, generated)?;
    for (table, spec) in tables.iter().zip(&TABLES) {
        progress(&Progress::TableReady {
            table: spec.name,
            rows: table.num_rows(),
            heap_bytes: table.heap_bytes(),
        });
    }
    let tables: [Table; 8] = tables.try_into().expect("one table per spec");
    let db = Database::from_tables(sf, tables.map(Arc::new));
    let total_time = start.elapsed();
    progress(&Progress::Finished {
        text_pool,
        generate,
        assemble: total_time - text_pool - generate,
        total: total_time,
        rows: db.total_rows(),
        heap_bytes: db.heap_bytes(),
    });
    Ok(db)
}

/// Runs one task per (table, part), largest tables first; returns the parts
/// per table in part order.
fn generate_parts(
    scheduler: &Scheduler,
    sf: f64,
    pool: &TextPool,
    plan: &[usize],
    total: usize,
    progress: &(dyn Fn(&Progress) + Sync),
) -> Vec<Vec<GeneratedPart>> {
    let ctx = GenContext {
        scale_factor: sf,
        distributions: Distributions::static_default(),
        text_pool: pool,
    };
    let slots: Vec<Vec<OnceLock<GeneratedPart>>> = plan
        .iter()
        .map(|&parts| (0..parts).map(|_| OnceLock::new()).collect())
        .collect();
    let done = AtomicUsize::new(0);
    let (ctx, slots_ref, done) = (&ctx, &slots, &done);
    scheduler.scope(|s| {
        for (table, &parts) in plan.iter().enumerate().rev() {
            for (part, slot) in slots_ref[table].iter().enumerate() {
                s.spawn(move |_| {
                    let spec = &TABLES[table];
                    let g = (spec.generate)(ctx, part as i32 + 1, parts as i32);
                    let rows = g.rows;
                    if slot.set(g).is_err() {
                        unreachable!("each part is generated once");
                    }
                    progress(&Progress::PartGenerated {
                        table: spec.name,
                        part: part + 1,
                        parts,
                        rows,
                        done: done.fetch_add(1, Ordering::Relaxed) + 1,
                        total,
                    });
                });
            }
        }
    });
    slots
        .into_iter()
        .map(|parts| {
            parts
                .into_iter()
                .map(|p| p.into_inner().expect("the scope ran every part"))
                .collect()
        })
        .collect()
}

/// Concatenates every column's parts as one task per column (largest tables
/// first) and builds the tables in `TABLES` order.
fn assemble(
    scheduler: &Scheduler,
    generated: Vec<Vec<GeneratedPart>>,
) -> Result<Vec<Table>, ColumnError> {
    // Transpose table → part → column into table → column → part.
    let mut columns: Vec<Vec<Vec<ColumnBuilder>>> = TABLES
        .iter()
        .map(|t| t.schema.iter().map(|_| Vec::new()).collect())
        .collect();
    for (t, parts) in generated.into_iter().enumerate() {
        for part in parts {
            for (c, builder) in part.columns.into_iter().enumerate() {
                columns[t][c].push(builder);
            }
        }
    }
    let slots: Vec<Vec<OnceLock<Result<Column, ColumnError>>>> = TABLES
        .iter()
        .map(|t| t.schema.iter().map(|_| OnceLock::new()).collect())
        .collect();
    let slots_ref = &slots;
    scheduler.scope(|s| {
        for (t, table_columns) in columns.into_iter().enumerate().rev() {
            for (c, parts) in table_columns.into_iter().enumerate() {
                s.spawn(move |_| {
                    let data_type: DataType = TABLES[t].schema[c].1;
                    if slots_ref[t][c]
                        .set(ColumnBuilder::concat(data_type, parts))
                        .is_err()
                    {
                        unreachable!("each column is assembled once");
                    }
                });
            }
        }
    });
    slots
        .into_iter()
        .zip(TABLES.iter())
        .map(|(cols, spec)| {
            let cols = cols
                .into_iter()
                .map(|c| c.into_inner().expect("the scope ran every column"))
                .collect::<Result<Vec<Column>, ColumnError>>()?;
            Table::with_schema(spec.name, spec.schema, cols)
        })
        .collect()
}

/// The text pool, shared with concurrent loads and dropped with the last one.
pub(crate) fn shared_text_pool() -> Arc<TextPool> {
    static POOL: Mutex<Weak<TextPool>> = Mutex::new(Weak::new());
    let mut shared = POOL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(pool) = shared.upgrade() {
        return pool;
    }
    let pool = Arc::new(TextPool::new(
        TEXT_POOL_BYTES,
        Distributions::static_default(),
    ));
    *shared = Arc::downgrade(&pool);
    pool
}

/// How one table is generated.
struct TableSpec {
    name: &'static str,
    schema: &'static [(&'static str, DataType)],
    /// Rows of the generator's driving entity (orders for lineitem, parts for
    /// partsupp); `part/parts` split these.
    driving_rows: fn(f64) -> i64,
    /// Output rows per driving row (on average).
    fan_out: usize,
    generate: fn(&GenContext, i32, i32) -> GeneratedPart,
}

impl TableSpec {
    /// Parts of about `rows_per_part` output rows, at least one, and no more
    /// than driving rows (so that no part is empty).
    fn parts(&self, sf: f64, rows_per_part: usize) -> usize {
        let driving = usize::try_from((self.driving_rows)(sf)).unwrap_or(0).max(1);
        let rows = driving * self.fan_out;
        rows.div_ceil(rows_per_part)
            .clamp(1, driving.min(i32::MAX as usize))
    }
}

/// The eight tables in [`crate::TABLE_NAMES`] order.
const TABLES: [TableSpec; 8] = [
    TableSpec {
        name: RegionChunk::NAME,
        schema: RegionChunk::SCHEMA,
        driving_rows: |_| 5,
        fan_out: 1,
        generate: |ctx, _, _| generate::region(ctx),
    },
    TableSpec {
        name: NationChunk::NAME,
        schema: NationChunk::SCHEMA,
        driving_rows: |_| 25,
        fan_out: 1,
        generate: |ctx, _, _| generate::nation(ctx),
    },
    TableSpec {
        name: SupplierChunk::NAME,
        schema: SupplierChunk::SCHEMA,
        driving_rows: |sf| SupplierGenerator::calculate_row_count(sf, 1, 1),
        fan_out: 1,
        generate: generate::supplier,
    },
    TableSpec {
        name: CustomerChunk::NAME,
        schema: CustomerChunk::SCHEMA,
        driving_rows: |sf| CustomerGenerator::calculate_row_count(sf, 1, 1),
        fan_out: 1,
        generate: generate::customer,
    },
    TableSpec {
        name: PartChunk::NAME,
        schema: PartChunk::SCHEMA,
        driving_rows: |sf| PartGenerator::calculate_row_count(sf, 1, 1),
        fan_out: 1,
        generate: generate::part,
    },
    TableSpec {
        name: PartSuppChunk::NAME,
        schema: PartSuppChunk::SCHEMA,
        driving_rows: |sf| PartGenerator::calculate_row_count(sf, 1, 1),
        fan_out: SUPPLIERS_PER_PART,
        generate: generate::partsupp,
    },
    TableSpec {
        name: OrdersChunk::NAME,
        schema: OrdersChunk::SCHEMA,
        driving_rows: |sf| OrderGenerator::calculate_row_count(sf, 1, 1),
        fan_out: 1,
        generate: generate::orders,
    },
    TableSpec {
        name: LineItemChunk::NAME,
        schema: LineItemChunk::SCHEMA,
        driving_rows: |sf| OrderGenerator::calculate_row_count(sf, 1, 1),
        fan_out: 4,
        generate: generate::lineitem,
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_order_matches_names() {
        let names: Vec<&str> = TABLES.iter().map(|t| t.name).collect();
        assert_eq!(names, crate::TABLE_NAMES);
    }

    #[test]
    fn part_counts() {
        let lineitem = &TABLES[7];
        assert_eq!(lineitem.parts(1.0, 100_000), 60);
        assert_eq!(lineitem.parts(0.01, 100_000), 1);
        assert_eq!(lineitem.parts(0.01, 1), 15_000);
        assert_eq!(TABLES[0].parts(10.0, 1), 5);
        assert_eq!(TABLES[5].parts(1.0, 100_000), 8);
    }
}
