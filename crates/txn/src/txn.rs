//! Transactions: a snapshot, a write set, and (serializable mode) a read set.
//!
//! Writes create uncommitted versions right away (first updater wins: a row
//! whose newest version is another transaction's uncommitted one refuses the
//! write with [`TxnError::WriteConflict`]; no waiting, hence no deadlocks).
//! Commit, under the clock's commit lock: validate the read set
//! (serializable), draw the commit timestamp, mark the transaction committed
//! (one store: every version it wrote becomes visible at that timestamp),
//! publish the timestamp. Abort removes its versions. Dropping an unfinished
//! transaction aborts it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::arena::RowId;
use crate::clock::Timestamp;
use crate::counter::CounterTable;
use crate::db::Shared;
use crate::durable::RedoBuf;
use crate::error::TxnError;
use crate::slots::Rows;
use crate::snapshot::Snapshot;
use crate::table::Table;
use crate::version::{TxnState, Written};

/// A transaction another one's write conflicted with (see
/// [`Transaction::take_blocker`]).
#[derive(Clone)]
pub struct Blocker(pub(crate) Arc<TxnState>);

impl Blocker {
    /// True once the blocking transaction committed or aborted.
    pub fn is_finished(&self) -> bool {
        !matches!(self.0.status(), crate::version::Status::Active)
    }

    /// Waits until the blocking transaction finished, `wait_max` passed or
    /// `give_up()` holds (a cancelled statement): yields first, then
    /// sleeps with backoff. Never waits forever, so no wait-for cycle can
    /// hang: the retry loops of TPC-C and `maestro serve` abort before they
    /// wait (holding no versions, they close no cycle); the SQL store waits
    /// holding its earlier writes, so a cycle can form there and ends when
    /// its `wait_max` passes. Returns whether the blocker finished.
    pub fn wait(&self, wait_max: Duration, give_up: impl Fn() -> bool) -> bool {
        for _ in 0..BLOCKER_SPINS {
            if self.is_finished() {
                return true;
            }
            std::thread::yield_now();
        }
        let start = Instant::now();
        let mut sleep = BLOCKER_SLEEP_FIRST;
        while !self.is_finished() && start.elapsed() < wait_max && !give_up() {
            std::thread::sleep(sleep);
            sleep = (sleep * 2).min(BLOCKER_SLEEP_MAX);
        }
        self.is_finished()
    }
}

/// A row's newest version whatever this transaction's snapshot sees
/// ([`Transaction::newest`]).
pub enum Newest<R> {
    /// This transaction wrote the newest version itself.
    Own,
    /// Another transaction holds an uncommitted version: wait for it.
    Held(Blocker),
    /// The newest committed version, committed at `ts`.
    Committed { value: R, ts: Timestamp },
    /// No such row (or the newest committed version deleted it).
    Missing,
}

/// Yielding rounds before a [`Blocker::wait`] starts sleeping. Guessed: a
/// running holder finishes a short transaction within tens of µs.
const BLOCKER_SPINS: u32 = 32;
/// First and longest sleep of a [`Blocker::wait`] (doubling in between).
/// Guessed.
const BLOCKER_SLEEP_FIRST: Duration = Duration::from_micros(20);
const BLOCKER_SLEEP_MAX: Duration = Duration::from_micros(500);

impl std::fmt::Debug for Blocker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Blocker")
            .field("finished", &self.is_finished())
            .finish()
    }
}

/// How strongly a transaction is isolated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isolation {
    /// Snapshot isolation: reads from the snapshot, write-write conflicts
    /// refused. Allows write skew.
    Snapshot,
    /// Snapshot isolation plus validation at commit that no row the
    /// transaction read was overwritten by a transaction committed since its
    /// snapshot (backward validation). When every updating transaction runs
    /// in this mode, their history is equivalent to running each at its
    /// commit timestamp, and read-only transactions read a prefix of it.
    /// Point reads are validated per row; scans ([`Transaction::scan`]) per
    /// table, which covers phantoms coarsely. Index-range reads are not
    /// validated yet (no index here).
    Serializable,
}

pub struct Transaction {
    /// Unique among the transactions of the process ([`Transaction::id`]).
    id: u64,
    shared: Arc<Shared>,
    snapshot: Snapshot,
    state: Arc<TxnState>,
    isolation: Isolation,
    /// Rows with a version of this transaction, each once.
    writes: Vec<(Arc<dyn Rows>, RowId)>,
    /// The holder of the uncommitted version the last refused write met.
    blocker: Option<Arc<TxnState>>,
    /// Rows read (serializable mode only), possibly repeated.
    reads: Vec<(Arc<dyn Rows>, RowId)>,
    /// Tables scanned (serializable mode only), possibly repeated.
    scans: Vec<Arc<dyn Rows>>,
    finished: bool,
    /// The wall clock when it began ([`Transaction::started_at`]).
    started_at: std::time::SystemTime,
}

impl Transaction {
    /// The wall-clock time the transaction began: SQL's `now()` reads it,
    /// so every statement of a transaction sees one time (as PostgreSQL's
    /// transaction timestamp).
    pub fn started_at(&self) -> std::time::SystemTime {
        self.started_at
    }

    pub(crate) fn begin(shared: &Arc<Shared>, isolation: Isolation) -> Result<Self, TxnError> {
        static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        Ok(Transaction {
            id: NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            shared: Arc::clone(shared),
            snapshot: Snapshot::begin(&shared.keeper)?,
            state: TxnState::new(),
            isolation,
            writes: Vec::new(),
            blocker: None,
            reads: Vec::new(),
            scans: Vec::new(),
            started_at: std::time::SystemTime::now(),
            finished: false,
        })
    }

    /// A number no other transaction of this process has (never reused):
    /// lets a value a transaction wrote name its writer.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// A handle that tells when this transaction has finished (committed
    /// or aborted, by any path, dropping included): lets state kept beside
    /// a transaction be cleaned up after it.
    pub fn handle(&self) -> Blocker {
        Blocker(Arc::clone(&self.state))
    }

    pub fn isolation(&self) -> Isolation {
        self.isolation
    }

    /// The snapshot this transaction reads (without its own writes).
    pub fn snapshot(&self) -> &Snapshot {
        &self.snapshot
    }

    /// Moves this transaction's snapshot to now: later reads see every
    /// transaction committed so far, besides its own writes, which stay. A
    /// READ COMMITTED statement begins so (PostgreSQL takes a snapshot per
    /// statement at that level). The new snapshot is registered before the
    /// old one is released, so the GC horizon never passes a version this
    /// transaction may still read. Panics in serializable mode, whose
    /// validation compares what it read with one snapshot (a caller's bug).
    pub fn refresh_snapshot(&mut self) -> Result<(), TxnError> {
        assert_eq!(
            self.isolation,
            Isolation::Snapshot,
            "only a snapshot-isolation transaction may move its snapshot"
        );
        let newer = Snapshot::begin(&self.shared.keeper)?;
        // The old one's slot is released when it drops here.
        self.snapshot = newer;
        Ok(())
    }

    /// The row as this transaction sees it: its own write, else its snapshot.
    pub fn read<R: Clone + Send + Sync + 'static>(
        &mut self,
        table: &Arc<Table<R>>,
        row: RowId,
    ) -> Option<R> {
        if self.isolation == Isolation::Serializable {
            self.reads.push((Arc::clone(table) as Arc<dyn Rows>, row));
        }
        table.read_as(self.snapshot.read_ts(), Some(&self.state), row)
    }

    /// `f` of the row as this transaction sees it, without copying the row
    /// (it runs under the row's latch: keep it short). Recorded as a read in
    /// serializable mode, as [`Transaction::read`].
    pub fn read_with<R: Clone + Send + Sync + 'static, T>(
        &mut self,
        table: &Arc<Table<R>>,
        row: RowId,
        f: impl FnOnce(&R) -> T,
    ) -> Option<T> {
        if self.isolation == Isolation::Serializable {
            self.reads.push((Arc::clone(table) as Arc<dyn Rows>, row));
        }
        table.read_with_as(self.snapshot.read_ts(), Some(&self.state), row, f)
    }

    /// Calls `f` on every row this transaction sees (its snapshot plus its
    /// own writes), in row-id order. In serializable mode the whole table
    /// counts as read: a commit that wrote it after the snapshot fails this
    /// transaction's validation (coarse, but it covers phantoms).
    pub fn scan<R: Clone + Send + Sync + 'static>(
        &mut self,
        table: &Arc<Table<R>>,
        f: impl FnMut(RowId, &R),
    ) {
        if self.isolation == Isolation::Serializable {
            self.scans.push(Arc::clone(table) as Arc<dyn Rows>);
        }
        table.scan_as(self.snapshot.read_ts(), &self.state, f);
    }

    /// Inserts a row, visible to others once this transaction commits.
    pub fn insert<R: Clone + Send + Sync + 'static>(
        &mut self,
        table: &Arc<Table<R>>,
        value: R,
    ) -> Result<RowId, TxnError> {
        let row = table.insert_as(&self.state, value)?;
        self.writes.push((Arc::clone(table) as Arc<dyn Rows>, row));
        Ok(row)
    }

    /// Replaces the row's value.
    pub fn update<R: Clone + Send + Sync + 'static>(
        &mut self,
        table: &Arc<Table<R>>,
        row: RowId,
        value: R,
    ) -> Result<(), TxnError> {
        self.write(table, row, Some(value))
    }

    /// Deletes the row (a tombstone version).
    pub fn delete<R: Clone + Send + Sync + 'static>(
        &mut self,
        table: &Arc<Table<R>>,
        row: RowId,
    ) -> Result<(), TxnError> {
        self.write(table, row, None)
    }

    /// Creates a commutative counter holding `value` (visible to others once
    /// this transaction commits).
    pub fn create_counter(
        &mut self,
        table: &Arc<CounterTable>,
        value: i64,
    ) -> Result<RowId, TxnError> {
        let row = table.create_as(&self.state, value)?;
        self.writes.push((Arc::clone(table) as Arc<dyn Rows>, row));
        Ok(row)
    }

    /// Adds `amount` to a counter. Additions commute, so this never conflicts
    /// with another transaction's; readers see the sum of the additions
    /// committed before their snapshot.
    pub fn add(
        &mut self,
        table: &Arc<CounterTable>,
        row: RowId,
        amount: i64,
    ) -> Result<(), TxnError> {
        let written = table.add_as(&self.state, self.snapshot.read_ts(), row, amount)?;
        if written == Written::NewVersion {
            self.writes.push((Arc::clone(table) as Arc<dyn Rows>, row));
        }
        Ok(())
    }

    /// The counter as this transaction sees it (its snapshot plus its own
    /// additions). In serializable mode it counts as read: a commit adding to
    /// it after the snapshot fails this transaction's validation.
    pub fn read_counter(&mut self, table: &Arc<CounterTable>, row: RowId) -> Option<i64> {
        if self.isolation == Isolation::Serializable {
            self.reads.push((Arc::clone(table) as Arc<dyn Rows>, row));
        }
        table.read_as(self.snapshot.read_ts(), Some(&self.state), row)
    }

    /// The row's newest version, read past this transaction's snapshot:
    /// what a write made with [`Transaction::update_over`] builds on. A
    /// caller that derives its value from a newer version than its
    /// snapshot's (a rebase) takes responsibility for what that means for
    /// its isolation; under [`Isolation::Serializable`] the commit still
    /// validates the reads it recorded.
    pub fn newest<R: Clone + Send + Sync + 'static>(
        &mut self,
        table: &Arc<Table<R>>,
        row: RowId,
    ) -> Newest<R> {
        table.newest_as(&self.state, row)
    }

    /// Replaces the row's value with one derived from its version committed
    /// at `over` (read with [`Transaction::newest`]) instead of the
    /// snapshot's: refused as [`Transaction::update`] is, except that only
    /// a version committed after `over` is too new.
    pub fn update_over<R: Clone + Send + Sync + 'static>(
        &mut self,
        table: &Arc<Table<R>>,
        row: RowId,
        value: R,
        over: Timestamp,
    ) -> Result<(), TxnError> {
        self.write_at(table, row, Some(value), over)
    }

    fn write<R: Clone + Send + Sync + 'static>(
        &mut self,
        table: &Arc<Table<R>>,
        row: RowId,
        value: Option<R>,
    ) -> Result<(), TxnError> {
        let read_ts = self.snapshot.read_ts();
        self.write_at(table, row, value, read_ts)
    }

    /// A write refused when the row's newest committed version is newer
    /// than `read_ts`.
    fn write_at<R: Clone + Send + Sync + 'static>(
        &mut self,
        table: &Arc<Table<R>>,
        row: RowId,
        value: Option<R>,
        read_ts: Timestamp,
    ) -> Result<(), TxnError> {
        let written =
            table
                .write_as(&self.state, read_ts, row, value)
                .map_err(|(error, holder)| {
                    self.blocker = holder;
                    error
                })?;
        if written == Written::NewVersion {
            self.writes.push((Arc::clone(table) as Arc<dyn Rows>, row));
        }
        Ok(())
    }

    /// After a [`TxnError::WriteConflict`]: the transaction holding the
    /// row's uncommitted version. Retrying before it finishes meets the same
    /// conflict, so a retry loop waits for [`Blocker::is_finished`] first.
    pub fn take_blocker(&mut self) -> Option<Blocker> {
        self.blocker.take().map(Blocker)
    }

    /// Commits; returns the commit timestamp, or `None` for a transaction
    /// that wrote nothing. On a validation failure the transaction is aborted
    /// and the error says which row failed.
    pub fn commit(mut self) -> Result<Option<Timestamp>, TxnError> {
        self.finished = true;
        let clock = &self.shared.keeper.clock;
        let serializable = self.isolation == Isolation::Serializable;
        if self.writes.is_empty() {
            // No validation even when serializable: validated updaters behave
            // as if run atomically at their commit timestamps, so a snapshot
            // is the state after a prefix of that serial order.
            return Ok(None);
        }
        // The redo record is encoded before the commit lock; under it only
        // its bytes are copied into the log (in timestamp order).
        let log = self.shared.durable.log.get().cloned();
        let mut redo = log.as_ref().map(|_| {
            let mut redo = RedoBuf::new();
            for (table, row) in &self.writes {
                table.redo(*row, &self.state, &mut redo);
            }
            redo
        });
        let mut lsn = None;
        let committed = clock.commit(|ts| {
            if serializable {
                self.validate_reads()?;
            }
            if let (Some(log), Some(redo)) = (&log, redo.as_mut())
                && !redo.is_empty()
            {
                let end = log
                    .append(ts, redo)
                    .map_err(|reason| TxnError::LogFailed { reason })?;
                lsn = Some(end);
            }
            for (table, row) in &self.writes {
                table.note_write_commit(ts, *row);
            }
            self.state.mark_committed(ts);
            Ok(())
        });
        match committed {
            Ok(ts) => {
                self.shared.after_commit(&self.writes);
                if let (Some(log), Some(lsn)) = (&log, lsn) {
                    log.wait_durable(lsn)
                        .map_err(|reason| TxnError::NotDurable { reason })?;
                }
                Ok(Some(ts))
            }
            Err(error) => {
                self.roll_back();
                Err(error)
            }
        }
    }

    /// Aborts, removing every version this transaction wrote.
    pub fn abort(mut self) {
        self.finished = true;
        self.roll_back();
    }

    fn validate_reads(&self) -> Result<(), TxnError> {
        let read_ts = self.snapshot.read_ts();
        for table in &self.scans {
            if table.last_write_commit_ts() > read_ts {
                return Err(TxnError::ScanValidation {
                    table: table.name(),
                });
            }
        }
        for (table, row) in &self.reads {
            if table.newest_commit_ts(*row, &self.state) > read_ts {
                return Err(TxnError::ReadValidation {
                    table: table.name(),
                    row: *row,
                });
            }
        }
        Ok(())
    }

    fn roll_back(&mut self) {
        for (table, row) in self.writes.iter().rev() {
            table.roll_back(*row, &self.state);
        }
        self.state.mark_aborted();
    }
}

impl Drop for Transaction {
    fn drop(&mut self) {
        if !self.finished {
            self.roll_back();
        }
    }
}

impl std::fmt::Debug for Transaction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transaction")
            .field("read_ts", &self.snapshot.read_ts())
            .field("isolation", &self.isolation)
            .field("rows_written", &self.writes.len())
            .finish()
    }
}
