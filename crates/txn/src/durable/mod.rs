//! Durability (issue 18): a redo log with group commit, checkpoints, and
//! recovery from a data directory.
//!
//! What is acknowledged when: with [`Durability::Sync`] or
//! [`Durability::Group`], [`crate::Transaction::commit`] returns `Ok` only
//! after the transaction's redo record (and every record before it) is on
//! disk (`fdatasync`). Its writes become *visible* to other transactions
//! earlier, at the commit timestamp (before the flush), as in HANA, Silo and
//! most group-commit designs; a transaction that read them commits later, so
//! its record lies after theirs in the log and a crash keeps both or neither
//! of a dependent pair. A failed flush fails every commit it covered with
//! [`crate::TxnError::NotDurable`] (outcome unknown: the record may or may
//! not be on disk) and the database then refuses all commits
//! ([`crate::TxnError::LogFailed`]) until it is restarted and recovered.
//!
//! Files in the data directory: `wal-<seq>.log` segments (see `record` for
//! the frame) and `checkpoint-<ts>.ckpt` (see `checkpoint`). Recovery loads
//! the newest checkpoint (a damaged one is an error naming it), replays
//! every log record with a commit timestamp after the checkpoint's, cuts a
//! torn tail off the last segment (reported), and continues the commit
//! clock after the newest recovered timestamp.

mod checkpoint;
mod file;
mod log;
mod record;
mod recovery;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

pub use file::FaultPlan;
pub(crate) use log::LogWriter;
pub(crate) use record::RedoBuf;

use crate::arena::RowId;
use crate::clock::Timestamp;
use crate::db::Database;
use crate::error::TxnError;
use crate::version::TxnState;
use checkpoint::CheckpointWriter;

/// When a commit is acknowledged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// No log: commits are lost when the process ends (experiments).
    Off,
    /// A commit returns once its record is synced; the waiter holding the
    /// flush lock syncs for everyone whose record is pending (group commit).
    Sync,
    /// As `Sync`, but the flushing waiter first waits up to `delay` while
    /// more commits keep arriving, so more of them share one sync (fewer
    /// syncs, longer commits).
    Group { delay: Duration },
}

impl Durability {
    pub fn name(self) -> &'static str {
        match self {
            Durability::Off => "off",
            Durability::Sync => "sync",
            Durability::Group { .. } => "group",
        }
    }
}

/// How a database logs.
#[derive(Clone, Copy)]
pub struct DurabilityConfig {
    pub durability: Durability,
    /// A segment is closed once it holds this many bytes. Guessed: 64 MiB
    /// keeps the file count low and a checkpoint frees space soon.
    pub segment_bytes_max: u64,
    /// Runs a flush wait: on the scheduler, `maestro_scheduler::sync::blocking`
    /// (the worker is *inactive by user* while it waits); by default the
    /// closure is simply called.
    pub blocking: fn(&mut dyn FnMut()),
    /// Injected write and sync failures (tests).
    pub faults: FaultPlan,
}

fn run_directly(f: &mut dyn FnMut()) {
    f()
}

impl DurabilityConfig {
    pub fn new(durability: Durability) -> Self {
        DurabilityConfig {
            durability,
            segment_bytes_max: 64 << 20,
            blocking: run_directly,
            faults: FaultPlan::default(),
        }
    }
}

impl fmt::Debug for DurabilityConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DurabilityConfig")
            .field("durability", &self.durability)
            .field("segment_bytes_max", &self.segment_bytes_max)
            .field("faults", &self.faults)
            .finish()
    }
}

/// The log's counters since it started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogStats {
    pub durability: Durability,
    /// Write + sync rounds.
    pub flushes: u64,
    /// Commit records made durable.
    pub records: u64,
    pub bytes: u64,
    /// Time spent writing and syncing.
    pub sync_time: Duration,
    /// Why the log stopped, if it did.
    pub failure: Option<String>,
}

impl LogStats {
    /// Commit records made durable per write + sync.
    pub fn records_per_flush(&self) -> f64 {
        self.records as f64 / self.flushes.max(1) as f64
    }
}

impl fmt::Display for LogStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "log ({}): {} commit records in {} flushes ({:.1} per flush), {:.1} MiB, {:.2} s writing and syncing",
            self.durability.name(),
            self.records,
            self.flushes,
            self.records_per_flush(),
            self.bytes as f64 / 1048576.0,
            self.sync_time.as_secs_f64()
        )?;
        match &self.failure {
            Some(failure) => write!(f, "; failed: {failure}"),
            None => Ok(()),
        }
    }
}

/// Why opening, checkpointing or recovering a data directory failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DurableError {
    /// An I/O operation on `path` failed.
    Io {
        path: PathBuf,
        reason: String,
    },
    /// A checkpoint file is damaged (never skipped silently).
    CorruptCheckpoint {
        path: PathBuf,
        reason: String,
    },
    /// A log record before the last segment's tail is damaged: data in the
    /// middle of the log is lost, so recovery stops.
    CorruptLog {
        path: PathBuf,
        offset: u64,
        reason: String,
    },
    /// The directory's tables are not the ones this database registered.
    CatalogMismatch {
        expected: String,
        found: String,
    },
    /// A stored row does not decode as its table's row type.
    Decode {
        table: String,
        row: RowId,
        reason: String,
    },
    /// The call needs a state the database is not in (e.g. recovery into a
    /// database that has committed, a checkpoint without a data directory).
    State {
        reason: String,
    },
    /// `create` on a directory that holds data, or `recover` on one that
    /// holds none.
    DataDir {
        path: PathBuf,
        reason: String,
    },
    Txn(TxnError),
}

impl fmt::Display for DurableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DurableError::Io { path, reason } => write!(f, "{}: {reason}", path.display()),
            DurableError::CorruptCheckpoint { path, reason } => {
                write!(f, "corrupt checkpoint {}: {reason}", path.display())
            }
            DurableError::CorruptLog {
                path,
                offset,
                reason,
            } => write!(
                f,
                "corrupt log record in {} at byte {offset} (not at the log's tail): {reason}",
                path.display()
            ),
            DurableError::CatalogMismatch { expected, found } => write!(
                f,
                "the data directory's tables ({found}) are not this database's ({expected})"
            ),
            DurableError::Decode { table, row, reason } => {
                write!(f, "{table} row {row} does not decode: {reason}")
            }
            DurableError::State { reason } => f.write_str(reason),
            DurableError::DataDir { path, reason } => write!(f, "{}: {reason}", path.display()),
            DurableError::Txn(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for DurableError {}

impl From<TxnError> for DurableError {
    fn from(e: TxnError) -> Self {
        DurableError::Txn(e)
    }
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> DurableError + '_ {
    move |e| DurableError::Io {
        path: path.to_path_buf(),
        reason: e.to_string(),
    }
}

/// What a checkpoint wrote.
#[derive(Debug, Clone)]
pub struct CheckpointReport {
    pub path: PathBuf,
    pub snapshot_ts: Timestamp,
    pub rows: u64,
    pub bytes: u64,
    /// Log segments and older checkpoints removed after it.
    pub files_removed: usize,
    pub elapsed: Duration,
}

/// A torn or damaged record cut off the log's tail.
#[derive(Debug, Clone)]
pub struct TornTail {
    pub path: PathBuf,
    pub offset: u64,
    pub bytes_cut: u64,
    pub reason: String,
}

/// What recovery did.
#[derive(Debug, Clone)]
pub struct RecoveryReport {
    pub checkpoint: PathBuf,
    pub checkpoint_ts: Timestamp,
    pub checkpoint_rows: u64,
    pub segments: usize,
    pub records_replayed: u64,
    /// Records at or before the checkpoint's timestamp (already in it).
    pub records_skipped: u64,
    pub torn_tail: Option<TornTail>,
    /// The newest recovered commit timestamp; new commits follow it.
    pub recovered_ts: Timestamp,
    /// What the application stored with [`Database::create_data_dir`].
    pub meta: Vec<u8>,
    pub elapsed: Duration,
}

/// Does `dir` hold a database?
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DataDirState {
    /// Missing, or without checkpoints and log segments.
    Empty,
    /// At least one checkpoint.
    HoldsData,
}

/// A durable table as checkpoints and recovery see it.
pub(crate) trait DurableRows: Send + Sync {
    fn name(&self) -> &'static str;
    /// Calls `emit` with every row visible at `read_ts`, encoded.
    fn checkpoint_rows(
        &self,
        read_ts: Timestamp,
        emit: &mut dyn FnMut(RowId, &[u8]) -> std::io::Result<()>,
    ) -> std::io::Result<()>;
    /// Recovery: `row` holds the encoded `bytes` (written by `recovery`).
    fn recover_put(&self, row: RowId, bytes: &[u8], recovery: &Arc<TxnState>)
    -> Result<(), String>;
    /// Recovery: `row` was deleted.
    fn recover_delete(&self, row: RowId) -> Result<(), String>;
    /// Recovery: a counter was created with, or had added, `amount`.
    fn recover_counter(&self, row: RowId, created: bool, amount: i64) -> Result<(), String>;
}

/// A database's durable state: its catalog, log and data directory.
#[derive(Default)]
pub(crate) struct Durable {
    catalog: Mutex<Vec<Arc<dyn DurableRows>>>,
    pub(crate) log: OnceLock<Arc<LogWriter>>,
    dir: OnceLock<PathBuf>,
    meta: Mutex<Vec<u8>>,
    /// One checkpoint at a time.
    checkpointing: Mutex<()>,
}

impl Durable {
    /// Adds a table to the catalog; returns its id in log records.
    pub(crate) fn register(&self, table: Arc<dyn DurableRows>) -> Result<u32, DurableError> {
        if self.dir.get().is_some() {
            return Err(DurableError::State {
                reason: format!(
                    "table {} registered after the data directory was opened",
                    table.name()
                ),
            });
        }
        let mut catalog = self.catalog.lock();
        if catalog.iter().any(|t| t.name() == table.name()) {
            return Err(DurableError::State {
                reason: format!("table {} is registered twice", table.name()),
            });
        }
        catalog.push(table);
        Ok(u32::try_from(catalog.len() - 1).expect("fewer than 2^32 tables"))
    }

    fn names(&self) -> String {
        let catalog = self.catalog.lock();
        catalog
            .iter()
            .map(|t| t.name())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl Database {
    /// Whether `dir` holds a database (a checkpoint).
    pub fn data_dir_state(dir: &Path) -> Result<DataDirState, DurableError> {
        if !dir.exists() {
            return Ok(DataDirState::Empty);
        }
        let listing = file::list(dir).map_err(io_error(dir))?;
        if !listing.checkpoints.is_empty() {
            return Ok(DataDirState::HoldsData);
        }
        if !listing.segments.is_empty() {
            return Err(DurableError::DataDir {
                path: dir.to_path_buf(),
                reason: "log segments without a checkpoint: not a complete Maestro data directory"
                    .into(),
            });
        }
        Ok(DataDirState::Empty)
    }

    /// Makes `dir` (created if missing, without a database in it) this
    /// database's data directory: writes a first checkpoint of what the
    /// database holds now (e.g. freshly loaded data) with `meta`, then starts
    /// the log (unless `Off`).
    pub fn create_data_dir(
        &self,
        dir: &Path,
        config: DurabilityConfig,
        meta: &[u8],
    ) -> Result<CheckpointReport, DurableError> {
        std::fs::create_dir_all(dir).map_err(io_error(dir))?;
        if Self::data_dir_state(dir)? == DataDirState::HoldsData {
            return Err(DurableError::DataDir {
                path: dir.to_path_buf(),
                reason: "already holds a database (recover it instead)".into(),
            });
        }
        let listing = file::list(dir).map_err(io_error(dir))?;
        for temp in &listing.temporaries {
            std::fs::remove_file(temp).map_err(io_error(temp))?;
        }
        let durable = &self.shared.durable;
        *durable.meta.lock() = meta.to_vec();
        if durable.dir.set(dir.to_path_buf()).is_err() {
            return Err(DurableError::State {
                reason: "the database already has a data directory".into(),
            });
        }
        // The checkpoint before the first segment: a crash in between leaves
        // a directory that recovers, never a log without a checkpoint.
        let report = self.checkpoint()?;
        self.start_log(dir, config, 1, Vec::new())?;
        Ok(report)
    }

    /// Recovers the database in `dir` into this (empty, registered) database
    /// and starts the log (unless `Off`).
    pub fn recover(
        &self,
        dir: &Path,
        config: DurabilityConfig,
    ) -> Result<RecoveryReport, DurableError> {
        if self.last_commit_ts() != 0 {
            return Err(DurableError::State {
                reason: "recovery needs a database nothing has committed to".into(),
            });
        }
        let catalog = self.shared.durable.catalog.lock().clone();
        let started = Instant::now();
        let (mut report, next_seq, closed) = recovery::recover(&self.shared, dir, &catalog)?;
        let durable = &self.shared.durable;
        *durable.meta.lock() = report.meta.clone();
        if durable.dir.set(dir.to_path_buf()).is_err() {
            return Err(DurableError::State {
                reason: "the database already has a data directory".into(),
            });
        }
        self.start_log(dir, config, next_seq, closed)?;
        report.elapsed = started.elapsed();
        Ok(report)
    }

    fn start_log(
        &self,
        dir: &Path,
        config: DurabilityConfig,
        seq: u64,
        closed: Vec<log::ClosedSegment>,
    ) -> Result<(), DurableError> {
        let durable = &self.shared.durable;
        if config.durability != Durability::Off {
            let writer = LogWriter::start(dir, config, seq, closed).map_err(io_error(dir))?;
            let _ = durable.log.set(Arc::new(writer));
        }
        Ok(())
    }

    /// Writes every durable table as one snapshot sees it to a new
    /// checkpoint, then removes the log segments and checkpoints it makes
    /// unnecessary. Transactions run on meanwhile (the snapshot pins the
    /// versions it reads until the file is written).
    pub fn checkpoint(&self) -> Result<CheckpointReport, DurableError> {
        let durable = &self.shared.durable;
        let dir = durable.dir.get().ok_or_else(|| DurableError::State {
            reason: "checkpoint without a data directory".into(),
        })?;
        let _one = durable.checkpointing.lock();
        let started = Instant::now();
        let snapshot = self.snapshot()?;
        let ts = snapshot.read_ts();
        if let Some(log) = durable.log.get() {
            // Every record at or before `ts` now lies in a closed segment.
            log.rotate()
                .map_err(|reason| DurableError::State { reason })?;
        }
        let catalog = durable.catalog.lock().clone();
        let meta = durable.meta.lock().clone();
        let path = file::checkpoint_path(dir, ts);
        let temp = path.with_extension(&file::TEMP_SUFFIX[1..]);
        let write = || -> std::io::Result<(u64, u64)> {
            let mut writer = CheckpointWriter::create(&temp, ts, &meta, catalog.len() as u32)?;
            for table in &catalog {
                writer.begin_table(table.name())?;
                table.checkpoint_rows(ts, &mut |row, bytes| writer.row(row, bytes))?;
                writer.end_table()?;
            }
            writer.finish(&path)
        };
        let (rows, bytes) = write().map_err(io_error(&temp))?;
        file::sync_dir(dir).map_err(io_error(dir))?;
        drop(snapshot);
        let mut files_removed = 0;
        if let Some(log) = durable.log.get() {
            files_removed += log.remove_through(ts).map_err(io_error(dir))?;
        }
        let listing = file::list(dir).map_err(io_error(dir))?;
        for (older, old_path) in listing.checkpoints {
            if older < ts {
                std::fs::remove_file(&old_path).map_err(io_error(&old_path))?;
                files_removed += 1;
            }
        }
        Ok(CheckpointReport {
            path,
            snapshot_ts: ts,
            rows,
            bytes,
            files_removed,
            elapsed: started.elapsed(),
        })
    }

    /// The log's counters; `None` without a log.
    pub fn log_stats(&self) -> Option<LogStats> {
        self.shared.durable.log.get().map(|log| log.stats())
    }

    /// The data directory, once created or recovered.
    pub fn data_dir(&self) -> Option<&Path> {
        self.shared.durable.dir.get().map(PathBuf::as_path)
    }

    /// The tables registered as durable, in id order.
    pub fn durable_tables(&self) -> String {
        self.shared.durable.names()
    }
}
