//! TPC-C on a data directory (issue 18): the nine tables and the two
//! year-to-date counter tables are durable (`maestro_txn`'s redo log,
//! checkpoints and recovery); the indexes are not logged but rebuilt from
//! the recovered rows, and the data directory's metadata keeps what a run
//! needs besides the rows (warehouses, the load's NURand constants).

use std::path::Path;
use std::time::Instant;

use maestro_txn::{
    CheckpointReport, DataDirState, Database as TxnDatabase, DatabaseConfig, DurabilityConfig,
    DurableError, RecoveryReport,
};
use serde::{Deserialize, Serialize};

use super::db::{MvccDatabase, MvccRow};
use crate::db::TableCounts;
use crate::error::TpccError;
use crate::load::{LoadConfig, LoadProgress, LoadReport, load};
use crate::random::NuRandConstants;

/// What the data directory stores besides the tables.
#[derive(Debug, Serialize, Deserialize)]
struct Meta {
    /// Written by this format; others are refused.
    format: u32,
    warehouses: u16,
    seed: u64,
    c_last: u64,
    c_id: u64,
    ol_i_id: u64,
}

const META_FORMAT: u32 = 1;

/// How [`open_data_dir`] got its database.
#[derive(Debug)]
pub enum Opened {
    /// The directory held no database: W warehouses were loaded and written
    /// as its first checkpoint.
    Created {
        load: LoadReport,
        checkpoint: CheckpointReport,
    },
    /// The directory's database was recovered.
    Recovered {
        recovery: Box<RecoveryReport>,
        /// Seconds spent rebuilding the indexes after recovery.
        index_seconds: f64,
    },
}

/// A database opened on a data directory.
pub struct DurableDatabase {
    pub db: MvccDatabase,
    pub opened: Opened,
    /// The load's NURand constants (from the load, or from the metadata).
    pub constants: NuRandConstants,
    /// The load's seed (from the load, or from the metadata): what
    /// regenerates data kept outside the durable tables (CH's tables).
    pub seed: u64,
    /// Rows when the run starts.
    pub counts: TableCounts,
}

impl MvccDatabase {
    /// Registers the tables with the transaction core's durable catalog, in
    /// a fixed order (the same on every start).
    pub fn make_durable(&self) -> Result<(), DurableError> {
        let txn = &self.txn;
        txn.make_durable(&self.warehouse)?;
        txn.make_durable(&self.district)?;
        txn.make_durable(&self.customer)?;
        txn.make_durable(&self.history)?;
        txn.make_durable(&self.new_order)?;
        txn.make_durable(&self.orders)?;
        txn.make_durable(&self.order_line)?;
        txn.make_durable(&self.item)?;
        txn.make_durable(&self.stock)?;
        txn.make_counters_durable(&self.warehouse_ytd)?;
        txn.make_counters_durable(&self.district_ytd)
    }

    /// Adds every visible row's index entries (after recovery, whose rows
    /// arrive without them).
    pub fn rebuild_indexes(&self) -> Result<(), TpccError> {
        let snapshot = self.txn.snapshot()?;
        let mut failed = None;
        let mut add = |entries: Result<[Option<(crate::db::IndexId, u64)>; 2], TpccError>, id| {
            match entries {
                Ok(entries) => {
                    for (index, key) in entries.into_iter().flatten() {
                        self.index.get(index).insert(key, id);
                    }
                }
                Err(e) => failed = Some(e),
            }
        };
        macro_rules! rebuild {
            ($($ty:ty),*) => {$(
                <$ty as MvccRow>::mvcc_table(self)
                    .scan(&snapshot, |id, row| add(crate::db::Row::index_entries(row), id));
            )*};
        }
        use crate::schema::*;
        rebuild!(
            Warehouse, District, Customer, History, NewOrder, Order, OrderLine, Item, Stock
        );
        failed.map_or(Ok(()), Err)
    }

    /// Live rows per table (one snapshot, counted without copying).
    pub fn counts(&self) -> Result<TableCounts, TpccError> {
        let snapshot = self.txn.snapshot()?;
        let mut counts = TableCounts::default();
        macro_rules! count {
            ($($field:ident),*) => {$(
                self.$field.scan(&snapshot, |_, _| counts.$field += 1);
            )*};
        }
        count!(
            warehouse, district, customer, history, new_order, orders, order_line, item, stock
        );
        Ok(counts)
    }
}

/// Opens the TPC-C database in `dir`: recovers it if the directory holds
/// one (then `load.warehouses`, if not 0, must match), else loads
/// `load.warehouses` warehouses and writes them as the first checkpoint.
/// The log then runs as `config` says.
pub fn open_data_dir(
    dir: &Path,
    load_config: &LoadConfig,
    config: DurabilityConfig,
    progress: &(dyn Fn(&LoadProgress) + Sync),
) -> Result<DurableDatabase, TpccError> {
    match TxnDatabase::data_dir_state(dir)? {
        DataDirState::HoldsData => recover(dir, load_config.warehouses, config),
        DataDirState::Empty => create(dir, load_config, config, progress),
    }
}

fn create(
    dir: &Path,
    load_config: &LoadConfig,
    config: DurabilityConfig,
    progress: &(dyn Fn(&LoadProgress) + Sync),
) -> Result<DurableDatabase, TpccError> {
    if load_config.warehouses == 0 {
        return Err(TpccError::InvalidOption {
            option: "warehouses",
            reason: format!(
                "{} holds no database: give the warehouses to load",
                dir.display()
            ),
        });
    }
    let (source, report) = load(load_config, progress)?;
    let db = MvccDatabase::new(load_config.warehouses, DatabaseConfig::default());
    db.make_durable()?;
    db.copy_from(&source)?;
    let counts = source.counts();
    drop(source);
    let c = report.constants;
    let meta = Meta {
        format: META_FORMAT,
        warehouses: load_config.warehouses,
        seed: load_config.seed,
        c_last: c.c_last,
        c_id: c.c_id,
        ol_i_id: c.ol_i_id,
    };
    let meta = serde_json::to_vec(&meta).expect("plain struct");
    let checkpoint = db.txn.create_data_dir(dir, config, &meta)?;
    Ok(DurableDatabase {
        db,
        constants: c,
        seed: load_config.seed,
        counts,
        opened: Opened::Created {
            load: report,
            checkpoint,
        },
    })
}

fn recover(
    dir: &Path,
    warehouses: u16,
    config: DurabilityConfig,
) -> Result<DurableDatabase, TpccError> {
    let checkpoint = dir.display();
    // The warehouse count is in the metadata recovery reads; it is set once
    // known (nothing sized by it exists before the run).
    let probe = MvccDatabase::new(warehouses.max(1), DatabaseConfig::default());
    probe.make_durable()?;
    let recovery = probe.txn.recover(dir, config)?;
    let meta: Meta = serde_json::from_slice(&recovery.meta).map_err(|e| {
        TpccError::Durable(DurableError::CorruptCheckpoint {
            path: recovery.checkpoint.clone(),
            reason: format!("TPC-C metadata unreadable: {e}"),
        })
    })?;
    if meta.format != META_FORMAT {
        return Err(TpccError::Durable(DurableError::DataDir {
            path: dir.to_path_buf(),
            reason: format!(
                "metadata format {} (this build reads {META_FORMAT})",
                meta.format
            ),
        }));
    }
    if warehouses != 0 && warehouses != meta.warehouses {
        return Err(TpccError::InvalidOption {
            option: "warehouses",
            reason: format!(
                "{checkpoint} holds W={}, not W={warehouses} (omit --warehouses to use it)",
                meta.warehouses
            ),
        });
    }
    let mut db = probe;
    db.set_warehouses(meta.warehouses);
    let started = Instant::now();
    db.rebuild_indexes()?;
    let index_seconds = started.elapsed().as_secs_f64();
    let counts = db.counts()?;
    Ok(DurableDatabase {
        db,
        constants: NuRandConstants {
            c_last: meta.c_last,
            c_id: meta.c_id,
            ol_i_id: meta.ol_i_id,
        },
        seed: meta.seed,
        counts,
        opened: Opened::Recovered {
            recovery: Box::new(recovery),
            index_seconds,
        },
    })
}
