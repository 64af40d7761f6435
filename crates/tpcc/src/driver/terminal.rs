//! One terminal: draws an input, executes it (as a scheduler task or on its
//! own thread), records its latency and outcome, until the stop flag rises.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use maestro_scheduler::{CancelToken, Scheduler};

use super::durable::AckLog;
use super::report::Tally;
use crate::db::Database;
use crate::error::TpccError;
use crate::lock::LockManager;
use crate::mvcc::{self, MvccDatabase};
use crate::random::{NuRandConstants, TpccRng};
use crate::schema::DISTRICTS_PER_WAREHOUSE;
use crate::txn::{
    Executed, InputGenerator, Outcome, TxnInput, TxnKind, TxnOutput, TxnState, execute,
    execute_cancellable,
};

/// The scheduler priority of a transaction task: above the default, so it is
/// *urgent* — workers take it before queued analytical work (a transaction
/// is tens of microseconds; queueing it behind a query's operators would
/// multiply its latency).
pub const TRANSACTION_PRIORITY: usize = maestro_scheduler::DEFAULT_PRIORITY + 1;

/// How long a terminal backs off after its class's admission control
/// rejected a transaction (guessed: a few transactions' time).
const REJECTED_BACKOFF: Duration = Duration::from_millis(10);

/// Counters the driver thread reads for progress; written only by their
/// terminal (`Relaxed`: statistics, never used to synchronize). Padded so
/// terminals on different cores do not share a line.
#[repr(align(128))]
#[derive(Default)]
pub(super) struct Live {
    completed: AtomicU64,
    new_orders: AtomicU64,
    deadlock_aborts: AtomicU64,
}

/// A sum of [`Live`] counters.
pub(super) struct LiveSnapshot {
    pub completed: u64,
    pub new_orders: u64,
    pub deadlock_aborts: u64,
}

impl Live {
    fn bump(counter: &AtomicU64, n: u64) {
        // Single writer: a load and a store, no read-modify-write needed.
        counter.store(counter.load(Ordering::Relaxed) + n, Ordering::Relaxed);
    }

    pub(super) fn sum(live: &[Live]) -> LiveSnapshot {
        let total =
            |f: fn(&Live) -> &AtomicU64| live.iter().map(|l| f(l).load(Ordering::Relaxed)).sum();
        LiveSnapshot {
            completed: total(|l| &l.completed),
            new_orders: total(|l| &l.new_orders),
            deadlock_aborts: total(|l| &l.deadlock_aborts),
        }
    }
}

/// Terminal `t`'s input stream (see the module docs of `driver`).
pub(super) fn generator(
    warehouses: u16,
    t: usize,
    seed: u64,
    constants: NuRandConstants,
) -> InputGenerator {
    let w = u64::from(warehouses.max(1));
    // Both narrowings are exact: the remainders are below W ≤ u16::MAX and 10.
    let w_id = (t as u64 % w) as u16 + 1;
    let d_id = ((t as u64 / w) % u64::from(DISTRICTS_PER_WAREHOUSE)) as u8 + 1;
    let stream = seed ^ (t as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    InputGenerator::new(TpccRng::new(stream, constants), warehouses, w_id, d_id)
}

/// The storage a terminal's transactions run on, with its concurrency
/// control.
#[derive(Clone, Copy)]
pub(super) enum Engine<'a> {
    /// Row tables under strict two-phase locking.
    Locking {
        db: &'a Database,
        locks: &'a LockManager,
    },
    /// Versioned tables under snapshot isolation (first updater wins).
    Mvcc(&'a MvccDatabase),
    /// An engine outside this crate (the SQL store).
    External(&'a dyn super::TxnEngine),
}

impl Engine<'_> {
    /// Runs `input` to its end; aborted attempts (deadlock victims, write
    /// conflicts) are retried inside and counted in `deadlock_aborts`.
    fn execute(
        self,
        state: &mut TxnState,
        input: &crate::txn::TxnInput,
        cancel: Option<&CancelToken>,
    ) -> Result<Executed, TpccError> {
        match self {
            Engine::Locking { db, locks } => match cancel {
                Some(c) => execute_cancellable(db, locks, state, input, c),
                None => execute(db, locks, state, input),
            },
            Engine::Mvcc(db) => mvcc::execute(db, input, cancel).map(|done| Executed {
                outcome: done.outcome,
                deadlock_aborts: done.retries,
            }),
            Engine::External(engine) => engine.execute(input, cancel),
        }
    }
}

pub(super) struct Terminal<'a> {
    engine: Engine<'a>,
    scheduler: Option<&'a Scheduler>,
    stop: &'a AtomicBool,
    live: &'a Live,
    /// The interval between this terminal's transaction starts, if paced.
    pace: Option<Duration>,
    txn_timeout: Option<Duration>,
    class: Option<maestro_scheduler::ClassId>,
    ack_log: Option<&'a AckLog>,
}

impl<'a> Terminal<'a> {
    pub(super) fn new(
        engine: Engine<'a>,
        scheduler: Option<&'a Scheduler>,
        stop: &'a AtomicBool,
        live: &'a Live,
        pace: Option<Duration>,
    ) -> Self {
        Terminal {
            engine,
            scheduler,
            stop,
            live,
            pace,
            txn_timeout: None,
            class: None,
            ack_log: None,
        }
    }

    /// Stops each transaction this long after its submission
    /// ([`crate::driver::RunConfig::txn_timeout`]).
    pub(super) fn with_txn_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.txn_timeout = timeout;
        self
    }

    /// Runs each transaction in workload class `class` (scheduler modes).
    pub(super) fn with_class(mut self, class: Option<maestro_scheduler::ClassId>) -> Self {
        self.class = class;
        self
    }

    /// Appends each acknowledged New-Order to `ack_log`.
    pub(super) fn with_ack_log(mut self, ack_log: Option<&'a AckLog>) -> Self {
        self.ack_log = ack_log;
        self
    }

    /// Runs transactions until the stop flag; an error stops every terminal.
    pub(super) fn run(self, mut inputs: InputGenerator) -> Result<Tally, TpccError> {
        let mut tally = Tally::default();
        let mut state = TxnState::default();
        let engine = self.engine;
        let mut next_start = Instant::now();
        while !self.stop.load(Ordering::Relaxed) {
            if let Some(pace) = self.pace {
                // Paced: start at most one transaction per `pace`; a terminal
                // that fell behind does not burst to catch up.
                let now = Instant::now();
                if next_start > now {
                    std::thread::sleep(next_start - now);
                }
                next_start = next_start.max(now) + pace;
            }
            let input = inputs.next_input();
            let start = Instant::now();
            // Made before submission: time spent queueing counts. Under a
            // workload class the token is the class's statement token (its
            // timeout, and a memory account the undo log charges).
            let cancel = match (self.txn_timeout, self.class, self.scheduler) {
                (Some(timeout), _, _) => Some(CancelToken::with_timeout(timeout)),
                (None, Some(class), Some(s)) => Some(s.statement_token(class, None)),
                (None, _, _) => None,
            };
            // Admission control of the class (one without limits admits at
            // once); a rejected transaction is counted and not run.
            let _admitted = match (self.scheduler, self.class) {
                (Some(s), Some(class)) => match s.admit(class) {
                    Ok(a) => Some(a),
                    Err(_) => {
                        tally.rejected[input.kind().index()] += 1;
                        std::thread::sleep(REJECTED_BACKOFF);
                        continue;
                    }
                },
                _ => None,
            };
            let mut run = || engine.execute(&mut state, &input, cancel.as_ref());
            let result = match (self.scheduler, self.class) {
                (Some(s), Some(class)) => s.install_in(class, run),
                (Some(s), None) => s.install_with_priority(TRANSACTION_PRIORITY, run),
                (None, _) => run(),
            };
            let latency = start.elapsed();
            let done: Executed = match result {
                Ok(done) => done,
                Err(TpccError::Cancelled(_)) => {
                    tally.timed_out[input.kind().index()] += 1;
                    continue;
                }
                Err(e) => {
                    self.stop.store(true, Ordering::Relaxed);
                    return Err(e);
                }
            };
            tally.record(&input, &done, latency);
            Live::bump(&self.live.completed, 1);
            Live::bump(&self.live.deadlock_aborts, u64::from(done.deadlock_aborts));
            if input.kind() == TxnKind::NewOrder && matches!(done.outcome, Outcome::Committed(_)) {
                Live::bump(&self.live.new_orders, 1);
            }
            if let (Some(ack_log), TxnInput::NewOrder(order)) = (self.ack_log, &input)
                && let Outcome::Committed(TxnOutput::NewOrder { o_id, .. }) = done.outcome
                && let Err(e) = ack_log.record(order.w_id, order.d_id, o_id)
            {
                self.stop.store(true, Ordering::Relaxed);
                return Err(e);
            }
        }
        Ok(tally)
    }
}
