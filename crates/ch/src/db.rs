//! The CH-benCHmark database: TPC-C's nine tables on the MVCC storage
//! (`maestro_tpcc::mvcc`), shared by the terminals and the analytical
//! queries, plus the read-only SUPPLIER, NATION and REGION.

use std::time::Instant;

use maestro_tpcc::mvcc::{MvccDatabase, load_mvcc};
use maestro_tpcc::{LoadConfig, LoadProgress, LoadReport, NuRandConstants, Timestamp, TpccError};
use maestro_txn::Snapshot;

use crate::tables::ChTables;

/// How to load.
#[derive(Debug, Clone)]
pub struct ChConfig {
    pub warehouses: u16,
    pub seed: u64,
    /// The load's "now" and the start of the clock transactions read, which
    /// then advances with real time; `None`: the system clock.
    pub clock_start: Option<Timestamp>,
}

pub struct ChDatabase {
    pub tpcc: MvccDatabase,
    pub tables: ChTables,
    /// The load's NURand constants (the terminals' run constants derive
    /// from them, clause 2.1.6).
    pub load_constants: NuRandConstants,
}

impl ChDatabase {
    /// Loads TPC-C's tables (the standard loader, copied into MVCC tables)
    /// and generates the CH tables.
    pub fn load(
        config: &ChConfig,
        progress: &(dyn Fn(&LoadProgress) + Sync),
    ) -> Result<(Self, LoadReport), TpccError> {
        let mut load = LoadConfig::new(config.warehouses);
        load.seed = config.seed;
        if let Some(start) = config.clock_start {
            load.load_time = start;
        }
        let (tpcc, report) = load_mvcc(&load, progress)?;
        if let Some(start) = config.clock_start {
            tpcc.start_clock_at(start);
        }
        let tables = ChTables::generate(config.seed);
        let load_constants = report.constants;
        Ok((
            ChDatabase {
                tpcc,
                tables,
                load_constants,
            },
            report,
        ))
    }

    /// Opens CH-benCHmark on a data directory: TPC-C's tables are created
    /// from a load or recovered ([`maestro_tpcc::mvcc::open_data_dir`]); the
    /// CH tables, read-only, are generated again from the load's seed.
    pub fn open_data_dir(
        dir: &std::path::Path,
        config: &ChConfig,
        durability: maestro_txn::DurabilityConfig,
        progress: &(dyn Fn(&LoadProgress) + Sync),
    ) -> Result<(Self, maestro_tpcc::mvcc::Opened), TpccError> {
        let mut load = LoadConfig::new(config.warehouses);
        load.seed = config.seed;
        if let Some(start) = config.clock_start {
            load.load_time = start;
        }
        let opened = maestro_tpcc::mvcc::open_data_dir(dir, &load, durability, progress)?;
        if let Some(start) = config.clock_start {
            opened.db.start_clock_at(start);
        }
        let db = ChDatabase {
            tpcc: opened.db,
            tables: ChTables::generate(opened.seed),
            load_constants: opened.constants,
        };
        Ok((db, opened.opened))
    }

    /// A consistent snapshot of every table for one query.
    pub fn snapshot(&self) -> Result<Snap<'_>, TpccError> {
        Ok(Snap {
            db: self,
            snapshot: self.tpcc.txn.snapshot()?,
            taken_at: Instant::now(),
        })
    }
}

/// What a query reads: one MVCC snapshot of the TPC-C tables, and the CH
/// tables.
pub struct Snap<'a> {
    pub db: &'a ChDatabase,
    pub snapshot: Snapshot,
    /// When the snapshot was taken (a query's freshness is its age at the end).
    pub taken_at: Instant,
}

impl Snap<'_> {
    pub fn tpcc(&self) -> &MvccDatabase {
        &self.db.tpcc
    }

    pub fn tables(&self) -> &ChTables {
        &self.db.tables
    }
}
