//! The TPC-C driver: T terminals, each bound to a home warehouse, run the
//! standard mix with zero keying and think times for a fixed duration.
//!
//! Two execution modes:
//! - **scheduler** (`single-pool`, `single-pool-nosys`, `single-hints`): each
//!   transaction is one urgent scheduler job ([`Scheduler::install_with_priority`]).
//!   The scheduler's admission decides where it runs: on the terminal thread
//!   itself, counted as an active worker, when a context is free (or beside busy
//!   workers within the urgent share), else on a worker while the terminal
//!   waits (scheduler `PROTOCOL.md`, "Callers run, counted"). A lock wait inside
//!   the job makes its thread *blocked*, and the scheduler may activate another.
//! - **receivers**: each terminal runs its transactions on its own thread
//!   (the papers' baseline, HANA's "receiver" threads).
//!
//! Terminal `t` has home warehouse `t mod W + 1` and Stock-Level district
//! `(t div W) mod 10 + 1`; its inputs come from a generator seeded by
//! `(seed, t)` with the run's NURand constants (clause 2.1.6), drawn from the
//! seed and the load's constants.
//!
//! Two storages ([`Storage`]): the row tables under strict 2PL (the default)
//! or the versioned tables of [`crate::mvcc`] under snapshot isolation
//! (`--cc mvcc`), where a write-write conflict aborts the later writer, which
//! retries on a fresh snapshot (counted like a deadlock victim).
//!
//! The lock manager's shard latches are of [`RunConfig::latch`]'s flavour
//! (blocking by default; see [`crate::lock::LatchFlavour`]).
//!
//! Stopping: the driver thread sleeps in steps of the progress interval, then
//! raises a stop flag; each terminal finishes the transaction it is in. The
//! elapsed time runs until the last terminal stopped, so every counted
//! transaction lies inside it.

mod durable;
mod latency;
mod report;
mod terminal;

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use maestro_scheduler::{CancelToken, Scheduler};

use crate::db::Database;
use crate::error::TpccError;
use crate::lock::{LatchFlavour, LockManager};
use crate::random::NuRandConstants;
use crate::txn::Executed;

use crate::mvcc::MvccDatabase;
pub use durable::{AckLog, CHECKPOINT_PRIORITY, DurabilityReport};
pub use latency::{Histogram, LatencySummary, RELATIVE_ERROR};
use report::Tally;
pub use report::{Audit, KindReport, RunReport};
use terminal::{Engine, Live, Terminal};

/// The concurrency control a run used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cc {
    /// Strict two-phase locking on the row tables, deadlocks detected.
    TwoPhaseLocking,
    /// Snapshot isolation on versioned tables, first updater wins.
    Mvcc,
    /// The transactions as SQL statements on the SQL store (main + delta
    /// columns): snapshot isolation with row locks on write
    /// ([`TxnEngine`], `maestro_server::tpcc`).
    Sql,
}

impl Cc {
    pub const ALL: [Cc; 3] = [Cc::TwoPhaseLocking, Cc::Mvcc, Cc::Sql];

    pub fn name(self) -> &'static str {
        match self {
            Cc::TwoPhaseLocking => "2pl",
            Cc::Mvcc => "mvcc",
            Cc::Sql => "sql",
        }
    }
}

/// A storage outside this crate that runs the five transactions — the SQL
/// store, through SQL statements (`maestro_server::tpcc`) — so the same
/// terminals, input streams, pacing, timeouts and report measure it.
pub trait TxnEngine: Sync {
    /// Warehouses loaded.
    fn warehouses(&self) -> u16;

    /// Runs `input` to its end: committed, or New-Order's rollback.
    /// Conflicts with other transactions are retried inside and counted
    /// in [`Executed::deadlock_aborts`]; a cancelled `cancel` ends it with
    /// [`TpccError::Cancelled`].
    fn execute(
        &self,
        input: &crate::txn::TxnInput,
        cancel: Option<&CancelToken>,
    ) -> Result<Executed, TpccError>;
}

impl fmt::Display for Cc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The database a run's transactions execute on.
#[derive(Clone, Copy)]
pub enum Storage<'a> {
    /// Row tables under strict 2PL.
    Locking(&'a Database),
    /// Versioned tables under snapshot isolation.
    Mvcc(&'a MvccDatabase),
    /// An engine outside this crate (`Cc::Sql`).
    External(&'a dyn TxnEngine),
}

impl Storage<'_> {
    pub fn cc(self) -> Cc {
        match self {
            Storage::Locking(_) => Cc::TwoPhaseLocking,
            Storage::Mvcc(_) => Cc::Mvcc,
            Storage::External(_) => Cc::Sql,
        }
    }

    pub fn warehouses(self) -> u16 {
        match self {
            Storage::Locking(db) => db.warehouses(),
            Storage::Mvcc(db) => db.warehouses(),
            Storage::External(engine) => engine.warehouses(),
        }
    }
}

/// How transactions execute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// One scheduler task per transaction, on a scheduler of this preset.
    Scheduler(Preset),
    /// On the terminal's own thread.
    Receivers,
}

/// The scheduler presets a run can use (paper §7's variants).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preset {
    SinglePool,
    SinglePoolNoSys,
    SingleHints,
}

impl Mode {
    /// Every mode, by the names [`Mode::from_str`] accepts.
    pub const ALL: [Mode; 4] = [
        Mode::Scheduler(Preset::SinglePool),
        Mode::Scheduler(Preset::SinglePoolNoSys),
        Mode::Scheduler(Preset::SingleHints),
        Mode::Receivers,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Mode::Scheduler(Preset::SinglePool) => "single-pool",
            Mode::Scheduler(Preset::SinglePoolNoSys) => "single-pool-nosys",
            Mode::Scheduler(Preset::SingleHints) => "single-hints",
            Mode::Receivers => "receivers",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Mode {
    type Err = TpccError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Mode::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| TpccError::InvalidOption {
                option: "scheduler",
                reason: format!(
                    "unknown mode {s:?}; expected one of {}",
                    Mode::ALL.map(Mode::name).join(", ")
                ),
            })
    }
}

/// A run's parameters.
#[derive(Debug, Clone)]
pub struct RunConfig {
    pub terminals: usize,
    pub duration: Duration,
    pub mode: Mode,
    /// Seeds the run's NURand constants and every terminal's inputs.
    pub seed: u64,
    /// Hardware contexts the scheduler keeps active (scheduler modes).
    pub contexts: usize,
    /// The load's NURand constants ([`crate::LoadReport::constants`]).
    pub load_constants: NuRandConstants,
    /// How often `progress` is called.
    pub progress_interval: Duration,
    /// The lock manager's shard latches ([`LatchFlavour`]); 2PL waits block
    /// whatever the flavour.
    pub latch: LatchFlavour,
    /// At most this many transactions per second in total (spread evenly over
    /// the terminals, each pacing its own starts); `None`: as fast as they go.
    /// For long runs whose inserted rows must fit in memory.
    pub max_tps: Option<f64>,
    /// A transaction not done this long after it was submitted (queueing for
    /// the scheduler included) stops at its next lock request or within
    /// [`crate::lock::CANCEL_POLL`] of a lock wait, rolls back and counts as
    /// timed out (not retried); `None`: no timeout.
    pub txn_timeout: Option<Duration>,
    /// The scheduler workload class transactions run in (scheduler modes;
    /// `None`: the default class at the transaction priority, urgent).
    pub class: Option<maestro_scheduler::ClassId>,
    /// A workload class to define on the run's scheduler (or take, if one of
    /// its name exists) and run every transaction in, instead of `class`
    /// (`tpcc run --class`; scheduler modes only). Its admission control
    /// applies (rejections counted, not run) and its timeout and memory
    /// limits per transaction (as `txn_timeout`: timed out, counted).
    pub class_spec: Option<maestro_scheduler::ClassSpec>,
    /// With a data directory (MVCC): a checkpoint this often during the run.
    pub checkpoint_interval: Option<Duration>,
    /// Where acknowledged New-Orders are appended (see [`AckLog`]).
    pub ack_log: Option<Arc<AckLog>>,
}

impl RunConfig {
    /// Seed 0, the detected contexts, progress every second, blocking latches.
    pub fn new(
        terminals: usize,
        duration: Duration,
        mode: Mode,
        load_constants: NuRandConstants,
    ) -> Self {
        RunConfig {
            terminals,
            duration,
            mode,
            seed: 0,
            contexts: maestro_scheduler::detected_contexts(),
            load_constants,
            progress_interval: Duration::from_secs(1),
            max_tps: None,
            txn_timeout: None,
            latch: LatchFlavour::default(),
            class: None,
            class_spec: None,
            checkpoint_interval: None,
            ack_log: None,
        }
    }

    fn validate(&self) -> Result<(), TpccError> {
        let bad = |option, reason: &str| {
            Err(TpccError::InvalidOption {
                option,
                reason: reason.into(),
            })
        };
        if self.terminals == 0 {
            return bad("terminals", "at least one terminal is needed");
        }
        if self.duration.is_zero() {
            return bad("duration", "the duration must be positive");
        }
        if self.contexts == 0 {
            return bad("contexts", "at least one context is needed");
        }
        if self.max_tps.is_some_and(|r| !(r > 0.0 && r.is_finite())) {
            return bad("max_tps", "the rate must be a positive number");
        }
        if self.progress_interval.is_zero() {
            return bad("progress_interval", "the interval must be positive");
        }
        if self.txn_timeout.is_some_and(|t| t.is_zero()) {
            return bad("txn_timeout", "the timeout must be positive");
        }
        if self.checkpoint_interval.is_some_and(|t| t.is_zero()) {
            return bad("checkpoint_interval", "the interval must be positive");
        }
        Ok(())
    }
}

/// Reported once per progress interval while a run lasts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunProgress {
    pub elapsed: Duration,
    /// Transactions completed so far, and New-Orders committed.
    pub completed: u64,
    pub new_orders: u64,
    pub deadlock_aborts: u64,
    /// Completed per second over the last interval.
    pub recent_tps: f64,
}

impl fmt::Display for RunProgress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:>6.1} s: {} transactions ({:.0}/s now), {} new orders, {} aborts",
            self.elapsed.as_secs_f64(),
            self.completed,
            self.recent_tps,
            self.new_orders,
            self.deadlock_aborts
        )
    }
}

/// Runs the mix on `db` as `config` says; `progress` is called from the
/// calling thread once per progress interval.
pub fn run(
    db: &Database,
    config: &RunConfig,
    progress: &dyn Fn(&RunProgress),
) -> Result<RunReport, TpccError> {
    run_storage(Storage::Locking(db), config, progress)
}

/// [`run`] on either storage.
pub fn run_storage(
    storage: Storage<'_>,
    config: &RunConfig,
    progress: &dyn Fn(&RunProgress),
) -> Result<RunReport, TpccError> {
    config.validate()?;
    let own = match config.mode {
        Mode::Scheduler(_) => Some(
            Scheduler::with_preset(config.mode.name(), config.contexts).map_err(|e| {
                TpccError::InvalidOption {
                    option: "scheduler",
                    reason: e.to_string(),
                }
            })?,
        ),
        Mode::Receivers => None,
    };
    run_on_storage(storage, config, own.as_ref(), progress)
}

/// [`run`] on a scheduler the caller owns (shared with other work, e.g. TPC-H
/// queries in the mixed workload): in scheduler mode the transactions become
/// tasks of `scheduler`, whose preset then wins over `config.mode`'s;
/// `None` runs them on the terminals' threads (receivers) whatever the mode.
/// The report's scheduler counters then include the other work's.
pub fn run_on(
    db: &Database,
    config: &RunConfig,
    scheduler: Option<&Scheduler>,
    progress: &dyn Fn(&RunProgress),
) -> Result<RunReport, TpccError> {
    run_on_storage(Storage::Locking(db), config, scheduler, progress)
}

/// [`run_on`] on either storage.
pub fn run_on_storage(
    storage: Storage<'_>,
    config: &RunConfig,
    scheduler: Option<&Scheduler>,
    progress: &dyn Fn(&RunProgress),
) -> Result<RunReport, TpccError> {
    config.validate()?;
    // Unused under MVCC (its report shows no lock counters).
    let locks = LockManager::with_flavour(config.latch);
    let engine = match storage {
        Storage::Locking(db) => Engine::Locking { db, locks: &locks },
        Storage::Mvcc(db) => Engine::Mvcc(db),
        Storage::External(engine) => Engine::External(engine),
    };
    let constants = NuRandConstants::for_run(
        &config.load_constants,
        &mut fastrand::Rng::with_seed(config.seed),
    );
    let class = match (&config.class_spec, scheduler) {
        (None, _) => config.class,
        (Some(spec), Some(s)) => Some(match s.class_by_name(&spec.name) {
            Some(c) => c,
            None => s.define_class(spec).map_err(|e| TpccError::InvalidOption {
                option: "class",
                reason: e.to_string(),
            })?,
        }),
        (Some(_), None) => {
            return Err(TpccError::InvalidOption {
                option: "class",
                reason: "workload classes need a scheduler variant, not receivers".into(),
            });
        }
    };
    let live: Vec<Live> = (0..config.terminals).map(|_| Live::default()).collect();
    let stop = AtomicBool::new(false);
    let start = Instant::now();
    let results = std::thread::scope(|s| {
        let handles: Vec<_> = (0..config.terminals)
            .map(|t| {
                let pace = config
                    .max_tps
                    .map(|r| Duration::from_secs_f64(config.terminals as f64 / r));
                let terminal = Terminal::new(engine, scheduler, &stop, &live[t], pace)
                    .with_txn_timeout(config.txn_timeout)
                    .with_class(class)
                    .with_ack_log(config.ack_log.as_deref());
                let generator =
                    terminal::generator(storage.warehouses(), t, config.seed, constants);
                s.spawn(move || terminal.run(generator))
            })
            .collect();
        let checkpointer = match (storage, config.checkpoint_interval) {
            (Storage::Mvcc(db), Some(interval)) if db.txn.data_dir().is_some() => {
                let stop = &stop;
                Some(s.spawn(move || durable::checkpoints(db, interval, scheduler, stop)))
            }
            _ => None,
        };
        watch(start, config, &live, &stop, progress);
        let tallies: Vec<Result<Tally, TpccError>> = handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect();
        let checkpoints = checkpointer
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .transpose();
        (tallies, checkpoints)
    });
    let (results, checkpoints) = results;
    let elapsed = start.elapsed();
    let mut tally = Tally::default();
    for r in results {
        tally.merge(&r?);
    }
    let head = (
        config.mode.name().to_string(),
        storage.cc(),
        config.latch,
        storage.warehouses(),
        config.terminals,
        elapsed,
    );
    let stats = scheduler.map(Scheduler::stats);
    let mut report = RunReport::new(head, &tally, locks.stats(), stats);
    if let Storage::Mvcc(db) = storage
        && db.txn.data_dir().is_some()
    {
        report.durability = Some(DurabilityReport {
            log: db.txn.log_stats(),
            checkpoints: checkpoints?.unwrap_or_default(),
        });
    }
    Ok(report)
}

/// The driver thread: progress every interval until the duration is over or
/// a terminal stopped the run (on an error); then raises the stop flag.
fn watch(
    start: Instant,
    config: &RunConfig,
    live: &[Live],
    stop: &AtomicBool,
    progress: &dyn Fn(&RunProgress),
) {
    let deadline = start + config.duration;
    let (mut last_completed, mut last_at) = (0, start);
    while !stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        if now >= deadline {
            break;
        }
        let next = (last_at + config.progress_interval).min(deadline);
        std::thread::sleep(next.saturating_duration_since(now));
        if Instant::now() < deadline {
            let snapshot = Live::sum(live);
            let now = Instant::now();
            let secs = now.duration_since(last_at).as_secs_f64();
            progress(&RunProgress {
                elapsed: now.duration_since(start),
                completed: snapshot.completed,
                new_orders: snapshot.new_orders,
                deadlock_aborts: snapshot.deadlock_aborts,
                recent_tps: (snapshot.completed - last_completed) as f64
                    / secs.max(f64::MIN_POSITIVE),
            });
            (last_completed, last_at) = (snapshot.completed, now);
        }
    }
    stop.store(true, Ordering::Relaxed);
}
