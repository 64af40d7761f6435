//! The driver's durability pieces: the acknowledgement log an outside crash
//! test checks, and the background checkpoints of a run on a data directory.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use maestro_scheduler::Scheduler;
use maestro_txn::{CheckpointReport, LogStats};
use parking_lot::Mutex;

use crate::error::TpccError;
use crate::mvcc::MvccDatabase;

/// Appends `w_id,d_id,o_id` of every New-Order whose commit was
/// acknowledged, one `write` per line right after the acknowledgement (no
/// sync: the file outlives a killed process in the page cache; it is the
/// crash test's record of what the database promised).
#[derive(Debug)]
pub struct AckLog {
    path: PathBuf,
    file: Mutex<File>,
}

impl AckLog {
    /// Opens `path` for appending (created if missing).
    pub fn open(path: &Path) -> Result<Self, TpccError> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| io_failure(path, e))?;
        Ok(AckLog {
            path: path.to_path_buf(),
            file: Mutex::new(file),
        })
    }

    pub(super) fn record(&self, w_id: u16, d_id: u8, o_id: u32) -> Result<(), TpccError> {
        let line = format!("{w_id},{d_id},{o_id}\n");
        self.file
            .lock()
            .write_all(line.as_bytes())
            .map_err(|e| io_failure(&self.path, e))
    }
}

fn io_failure(path: &Path, e: std::io::Error) -> TpccError {
    TpccError::InvalidOption {
        option: "ack_log",
        reason: format!("{}: {e}", path.display()),
    }
}

/// The checkpoints' priority: below transactions and queries, so a
/// checkpoint fills idle contexts. (The "own workload class" needs
/// a class per run; the priority is the lighter tool for one background
/// task.)
pub const CHECKPOINT_PRIORITY: usize = 0;

/// A run's durability, for the report.
#[derive(Debug, Clone)]
pub struct DurabilityReport {
    /// The log's counters at the end of the run (`None`: durability off).
    pub log: Option<LogStats>,
    pub checkpoints: Vec<CheckpointReport>,
}

impl DurabilityReport {
    /// Time the run's checkpoints took together.
    pub fn checkpoint_seconds(&self) -> f64 {
        self.checkpoints
            .iter()
            .map(|c| c.elapsed.as_secs_f64())
            .fold(0.0, |a, b| a + b)
    }
}

/// Takes a checkpoint every `interval` until `stop`, each as a task on
/// `scheduler` (at [`CHECKPOINT_PRIORITY`]) or on this thread without one.
pub(super) fn checkpoints(
    db: &MvccDatabase,
    interval: Duration,
    scheduler: Option<&Scheduler>,
    stop: &AtomicBool,
) -> Result<Vec<CheckpointReport>, TpccError> {
    /// How often the loop looks at `stop` while it waits. Guessed: short
    /// against any sensible interval, long against a wake-up's cost.
    const STOP_POLL: Duration = Duration::from_millis(20);
    let mut taken = Vec::new();
    let mut next = Instant::now() + interval;
    loop {
        while Instant::now() < next {
            if stop.load(Ordering::Relaxed) {
                return Ok(taken);
            }
            std::thread::sleep(STOP_POLL.min(next.saturating_duration_since(Instant::now())));
        }
        let checkpoint = || db.txn.checkpoint();
        let report = match scheduler {
            Some(s) => s.install_with_priority(CHECKPOINT_PRIORITY, checkpoint),
            None => checkpoint(),
        };
        match report {
            Ok(report) => taken.push(report),
            Err(e) => {
                stop.store(true, Ordering::Relaxed);
                return Err(e.into());
            }
        }
        next = Instant::now() + interval;
    }
}
