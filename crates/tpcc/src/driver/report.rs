//! What a run reports: per transaction type the commits, rollbacks, aborts
//! and latency percentiles; the totals (tpmC, transactions per second, abort
//! rate); the lock manager's and the scheduler's counters; and an audit of
//! what committed transactions changed, which tests compare with the data.

use std::fmt;
use std::time::Duration;

use maestro_scheduler::SchedulerStats;

use super::Cc;
use super::latency::{Histogram, LatencySummary};
use crate::lock::{LatchFlavour, LockStats};
use crate::schema::Money;
use crate::txn::{Executed, Outcome, TxnInput, TxnKind, TxnOutput};

/// What committed transactions did, summed: the expected changes of the
/// database (a lost update makes the data disagree with these).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Audit {
    /// Committed Payments and the sum of their `h_amount`.
    pub payments: u64,
    pub payment_amount: Money,
    /// Committed New-Orders, their order lines and the quantities ordered.
    pub new_orders: u64,
    pub order_lines: u64,
    pub ordered_quantity: u64,
    /// Orders delivered by committed Deliveries.
    pub delivered_orders: u64,
}

impl Audit {
    fn add(&mut self, o: &Audit) {
        self.payments += o.payments;
        self.payment_amount += o.payment_amount;
        self.new_orders += o.new_orders;
        self.order_lines += o.order_lines;
        self.ordered_quantity += o.ordered_quantity;
        self.delivered_orders += o.delivered_orders;
    }
}

/// One terminal's (then the run's) tallies per transaction type.
#[derive(Clone, Default)]
pub(crate) struct Tally {
    pub committed: [u64; 5],
    pub rolled_back: [u64; 5],
    pub deadlock_aborts: [u64; 5],
    /// Transactions stopped by their timeout (rolled back, not retried).
    pub timed_out: [u64; 5],
    /// Transactions their class's admission control rejected (not run).
    pub rejected: [u64; 5],
    pub latency: [Histogram; 5],
    pub audit: Audit,
}

impl Tally {
    pub(crate) fn record(&mut self, input: &TxnInput, done: &Executed, latency: Duration) {
        let k = input.kind().index();
        self.deadlock_aborts[k] += u64::from(done.deadlock_aborts);
        self.latency[k].record(latency);
        let output = match &done.outcome {
            Outcome::RolledBack => {
                self.rolled_back[k] += 1;
                return;
            }
            Outcome::Committed(output) => output,
        };
        self.committed[k] += 1;
        let a = &mut self.audit;
        match (input, output) {
            (TxnInput::Payment(p), _) => {
                a.payments += 1;
                a.payment_amount += p.h_amount;
            }
            (TxnInput::NewOrder(n), _) => {
                a.new_orders += 1;
                a.order_lines += n.lines().len() as u64;
                a.ordered_quantity += n.lines().iter().map(|l| u64::from(l.quantity)).sum::<u64>();
            }
            (_, TxnOutput::Delivery { delivered }) => {
                a.delivered_orders += delivered.iter().flatten().count() as u64;
            }
            _ => {}
        }
    }

    pub(crate) fn merge(&mut self, o: &Tally) {
        for k in 0..5 {
            self.committed[k] += o.committed[k];
            self.rolled_back[k] += o.rolled_back[k];
            self.deadlock_aborts[k] += o.deadlock_aborts[k];
            self.timed_out[k] += o.timed_out[k];
            self.rejected[k] += o.rejected[k];
            self.latency[k].merge(&o.latency[k]);
        }
        self.audit.add(&o.audit);
    }
}

/// One transaction type's results.
#[derive(Debug, Clone, PartialEq)]
pub struct KindReport {
    pub kind: TxnKind,
    pub committed: u64,
    /// New-Order's 1 % rollbacks (0 for the other types).
    pub rolled_back: u64,
    /// Attempts aborted and retried: deadlock victims under 2PL, write-write
    /// conflicts (and snapshots refused) under MVCC.
    pub deadlock_aborts: u64,
    /// Transactions stopped by `--txn-timeout` (rolled back, not retried,
    /// not in the latency).
    pub timed_out: u64,
    /// Transactions their workload class's admission control rejected
    /// (retryable; not run, not in the latency).
    pub rejected: u64,
    /// Submission to completion, retries included, of committed and
    /// rolled-back transactions.
    pub latency: LatencySummary,
}

/// The result of [`crate::driver::run`].
#[derive(Debug, Clone)]
pub struct RunReport {
    /// `single-pool`, `single-pool-nosys`, `single-hints` or `receivers`.
    pub mode: String,
    /// The concurrency control the transactions ran under.
    pub cc: Cc,
    /// The lock manager's shard-latch flavour.
    pub latch: LatchFlavour,
    pub warehouses: u16,
    pub terminals: usize,
    /// From the start until every terminal finished its last transaction.
    pub elapsed: Duration,
    /// In [`TxnKind::ALL`] order.
    pub kinds: Vec<KindReport>,
    pub locks: LockStats,
    /// The scheduler's counters at the end (scheduler modes only).
    pub scheduler: Option<SchedulerStats>,
    pub audit: Audit,
    /// The log and checkpoints of a run on a data directory.
    pub durability: Option<super::DurabilityReport>,
}

impl RunReport {
    pub(crate) fn new(
        head: (String, Cc, LatchFlavour, u16, usize, Duration),
        tally: &Tally,
        locks: LockStats,
        scheduler: Option<SchedulerStats>,
    ) -> Self {
        let (mode, cc, latch, warehouses, terminals, elapsed) = head;
        let kinds = TxnKind::ALL
            .iter()
            .map(|&kind| {
                let k = kind.index();
                KindReport {
                    kind,
                    committed: tally.committed[k],
                    rolled_back: tally.rolled_back[k],
                    deadlock_aborts: tally.deadlock_aborts[k],
                    timed_out: tally.timed_out[k],
                    rejected: tally.rejected[k],
                    latency: tally.latency[k].summary(),
                }
            })
            .collect();
        RunReport {
            mode,
            cc,
            latch,
            warehouses,
            terminals,
            elapsed,
            kinds,
            locks,
            scheduler,
            audit: tally.audit,
            durability: None,
        }
    }

    pub fn kind(&self, kind: TxnKind) -> &KindReport {
        &self.kinds[kind.index()]
    }

    pub fn committed(&self) -> u64 {
        self.kinds.iter().map(|k| k.committed).sum()
    }

    /// New-Order's 1 % rollbacks.
    pub fn user_rollbacks(&self) -> u64 {
        self.kinds.iter().map(|k| k.rolled_back).sum()
    }

    pub fn deadlock_aborts(&self) -> u64 {
        self.kinds.iter().map(|k| k.deadlock_aborts).sum()
    }

    /// Transactions stopped by their timeout.
    pub fn timed_out(&self) -> u64 {
        self.kinds.iter().map(|k| k.timed_out).sum()
    }

    /// Transactions their workload class's admission control rejected.
    pub fn rejected(&self) -> u64 {
        self.kinds.iter().map(|k| k.rejected).sum()
    }

    /// Transactions that ended (committed or rolled back by the 1 % rule).
    pub fn completed(&self) -> u64 {
        self.committed() + self.user_rollbacks()
    }

    fn per_second(&self, n: u64) -> f64 {
        n as f64 / self.elapsed.as_secs_f64().max(f64::MIN_POSITIVE)
    }

    /// Committed New-Orders per minute.
    pub fn tpmc(&self) -> f64 {
        60.0 * self.per_second(self.kind(TxnKind::NewOrder).committed)
    }

    /// Completed transactions of all types per second.
    pub fn transactions_per_second(&self) -> f64 {
        self.per_second(self.completed())
    }

    /// Retried aborts per attempt: aborts / (completed + aborts).
    pub fn abort_rate(&self) -> f64 {
        let aborts = self.deadlock_aborts();
        match self.completed() + aborts {
            0 => 0.0,
            attempts => aborts as f64 / attempts as f64,
        }
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

impl fmt::Display for RunReport {
    /// A table for people: totals, then one line per transaction type.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "TPC-C {} ({}): W={} T={} over {:.2} s",
            self.mode,
            self.cc,
            self.warehouses,
            self.terminals,
            self.elapsed.as_secs_f64()
        )?;
        writeln!(
            f,
            "tpmC {:.0}   transactions/s {:.0}   abort rate {:.4} ({} {}, {} user rollbacks, {} timed out, {} rejected)",
            self.tpmc(),
            self.transactions_per_second(),
            self.abort_rate(),
            self.deadlock_aborts(),
            match self.cc {
                Cc::TwoPhaseLocking => "deadlock aborts",
                Cc::Mvcc | Cc::Sql => "write-conflict retries",
            },
            self.user_rollbacks(),
            self.timed_out(),
            self.rejected()
        )?;
        writeln!(
            f,
            "{:<13} {:>9} {:>7} {:>7} {:>9} {:>9} {:>9} {:>9}",
            "type", "committed", "rollbk", "aborts", "p50 ms", "p90 ms", "p99 ms", "max ms"
        )?;
        for k in &self.kinds {
            let l = &k.latency;
            writeln!(
                f,
                "{:<13} {:>9} {:>7} {:>7} {:>9.3} {:>9.3} {:>9.3} {:>9.3}",
                k.kind.name(),
                k.committed,
                k.rolled_back,
                k.deadlock_aborts,
                ms(l.p50),
                ms(l.p90),
                ms(l.p99),
                ms(l.max)
            )?;
        }
        match self.cc {
            Cc::TwoPhaseLocking => write!(
                f,
                "locks: {} acquired, {} waits, {} deadlock victims; {} latches, {} contended",
                self.locks.acquired,
                self.locks.waits,
                self.locks.deadlock_victims,
                self.latch,
                self.locks.latch_contended
            )?,
            Cc::Mvcc => write!(
                f,
                "mvcc: snapshot isolation, first updater wins; no row locks"
            )?,
            Cc::Sql => write!(
                f,
                "sql: statements on the SQL store (main + delta), snapshot isolation, row locks on write"
            )?,
        }
        if let Some(s) = &self.scheduler {
            write!(
                f,
                "\nscheduler: {} tasks, {} blocked events, {} workers created, peak {} workers",
                s.tasks_executed, s.blocked_events, s.workers_created, s.workers_peak
            )?;
        }
        if let Some(d) = &self.durability {
            match &d.log {
                Some(log) => write!(f, "\n{log}")?,
                None => write!(f, "\nlog: off (this run's commits are not durable)")?,
            }
            let seconds = d.checkpoint_seconds();
            write!(
                f,
                "\ncheckpoints: {} during the run ({:.2} s in total)",
                d.checkpoints.len(),
                seconds
            )?;
        }
        writeln!(f)
    }
}
