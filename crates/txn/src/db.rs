//! The database handle: clock, snapshot registry and garbage collector.

use std::sync::Arc;

use crate::arena::RowId;
use crate::clock::{Clock, Timestamp};
use crate::counter::CounterTable;
use crate::durable::{Durable, DurableError};
use crate::error::TxnError;
use crate::gc::{CollectStats, Collector};
use crate::slots::Rows;
use crate::snapshot::{Registry, Snapshot, TimeKeeper};
use crate::table::Table;
use crate::txn::{Isolation, Transaction};

/// Tuning of a [`Database`].
#[derive(Debug, Clone, Copy)]
pub struct DatabaseConfig {
    /// Snapshots (transactions and read-only snapshots) live at once; a begin
    /// beyond it fails with `SnapshotSlotsExhausted`. Guessed: 4 per core of
    /// a 64-core machine.
    pub snapshot_slots_max: usize,
    /// Rows each commit prunes per row it wrote (0 = GC only through
    /// [`Database::collect`]). Guessed: 2 keeps the queue from growing when
    /// no old snapshot pins versions.
    pub gc_rows_per_written_row: usize,
}

impl Default for DatabaseConfig {
    fn default() -> Self {
        DatabaseConfig {
            snapshot_slots_max: 256,
            gc_rows_per_written_row: 2,
        }
    }
}

pub(crate) struct Shared {
    pub(crate) keeper: Arc<TimeKeeper>,
    collector: Collector,
    config: DatabaseConfig,
    pub(crate) durable: Durable,
}

impl Shared {
    pub(crate) fn after_commit(&self, written: &[(Arc<dyn Rows>, RowId)]) {
        self.collector.enqueue(written);
        let rows_max = written.len() * self.config.gc_rows_per_written_row;
        if rows_max > 0 {
            self.collector.collect(&self.keeper, rows_max, false);
        }
    }
}

/// Cheap to clone; all clones are the same database.
#[derive(Clone)]
pub struct Database {
    pub(crate) shared: Arc<Shared>,
}

impl Database {
    pub fn new(config: DatabaseConfig) -> Self {
        Database {
            shared: Arc::new(Shared {
                keeper: Arc::new(TimeKeeper {
                    clock: Clock::new(),
                    registry: Registry::new(config.snapshot_slots_max),
                }),
                collector: Collector::new(),
                config,
                durable: Durable::default(),
            }),
        }
    }

    pub fn begin(&self, isolation: Isolation) -> Result<Transaction, TxnError> {
        Transaction::begin(&self.shared, isolation)
    }

    /// A read-only snapshot (for analytical queries): no locks, no read set.
    pub fn snapshot(&self) -> Result<Snapshot, TxnError> {
        Snapshot::begin(&self.shared.keeper)
    }

    /// The newest fully committed timestamp.
    pub fn last_commit_ts(&self) -> Timestamp {
        self.shared.keeper.clock.visible()
    }

    /// The oldest read timestamp of a live snapshot (the last commit if none).
    pub fn low_watermark(&self) -> Timestamp {
        let keeper = &self.shared.keeper;
        keeper.registry.horizon(&keeper.clock).low_watermark()
    }

    pub fn snapshot_slots_max(&self) -> usize {
        self.shared.keeper.registry.slots_max()
    }

    /// Prunes up to `rows_max` queued rows (for a background task).
    pub fn collect(&self, rows_max: usize) -> CollectStats {
        self.shared
            .collector
            .collect(&self.shared.keeper, rows_max, true)
    }

    /// Makes `table` durable: its writes are logged and checkpointed, and
    /// recovery restores it. Register every durable table, in the same order
    /// on every start, before [`Database::create_data_dir`] or
    /// [`Database::recover`].
    pub fn make_durable<R>(&self, table: &Arc<Table<R>>) -> Result<(), DurableError>
    where
        R: Clone + Send + Sync + serde::Serialize + serde::de::DeserializeOwned + 'static,
    {
        let id = self.shared.durable.register(Arc::clone(table) as _)?;
        if !table.set_codec(id) {
            return Err(DurableError::State {
                reason: format!("table {} is durable in another database", table.name()),
            });
        }
        Ok(())
    }

    /// [`Database::make_durable`] for a counter table.
    pub fn make_counters_durable(&self, table: &Arc<CounterTable>) -> Result<(), DurableError> {
        let id = self.shared.durable.register(Arc::clone(table) as _)?;
        if !table.set_durable_id(id) {
            return Err(DurableError::State {
                reason: format!("table {} is durable in another database", table.name()),
            });
        }
        Ok(())
    }

    /// Rows waiting for GC.
    pub fn gc_rows_queued(&self) -> usize {
        self.shared.collector.rows_queued()
    }
}

impl Default for Database {
    fn default() -> Self {
        Database::new(DatabaseConfig::default())
    }
}
