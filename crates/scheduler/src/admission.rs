//! Admission control per workload class (issue 13 part 4; the DEBull 2019
//! paper's design, HANA's admission control, SQL Server's
//! GROUP_MAX_REQUESTS): before a statement starts, [`Scheduler::admit`]
//! decides whether it runs now, waits in its class's bounded FIFO queue, or
//! is rejected with a retryable error.
//!
//! # Load
//!
//! The *load* is the demand on the contexts: `(busy workers + queued roots) ÷
//! contexts`, where busy = active workers not searching for work, sampled at
//! every watchdog tick, averaged over `admission_sample` (1 s by default) and
//! smoothed by an exponentially weighted moving average with
//! `admission_lambda` (0.7 by default: `load ← λ·sample + (1−λ)·load`). It is
//! a demand rather than a CPU utilisation so that it can exceed 1: a
//! utilisation saturates at 100 % exactly when admission matters.
//!
//! The *memory load* (the paper's second signal) is what running statements
//! have charged (`memory.rs`, summed over every class) ÷ the scheduler's
//! `memory_budget_bytes`, sampled and smoothed the same way; without a
//! budget there is no memory signal. A class queues above
//! `queue_above_memory` and rejects above `reject_above_memory` as it does
//! for the CPU load; "below the thresholds" below means below both.
//!
//! # Protocol
//!
//! Per class, under the class's queue mutex: `running` statements admitted
//! and not yet done, and a FIFO of waiting tickets. `admit`:
//! 1. no limits on the class: admitted, uncounted (small transactional
//!    classes bypass admission);
//! 2. load ≥ `reject_above_load`: rejected (`Overloaded`); memory load ≥
//!    `reject_above_memory`: rejected (`MemoryOverloaded`);
//! 3. nobody waits, `running < max_running` and both loads are below their
//!    queue thresholds: admitted (`running += 1`);
//! 4. `queue_max` waiting: rejected (`QueueFull`);
//! 5. else its ticket joins the queue and it sleeps on the class's condvar
//!    (scheduler-aware: a worker waiting here is *blocked*) until its ticket
//!    is granted — then admitted — or `queue_wait_max` passed — then it
//!    leaves the queue and is rejected (`QueueTimeout`).
//!
//! *Granting* moves tickets from the head of the queue to the granted set
//! while `running < max_running` and both loads are below their queue thresholds
//! (`running += 1` each), then wakes every sleeper of the class. It runs
//! when an admitted statement ends (its [`Admitted`] guard drops) and at
//! every load update (so a queue drains in a batch as load falls). No
//! wake-up is lost: a sleeper checks "my ticket granted" under the queue
//! mutex before it waits on the condvar, and granting changes the set and
//! notifies under/after the same mutex. No ticket is lost: a ticket leaves
//! the queue only by being granted (then the waiter, or a timed-out waiter
//! that finds it granted, takes it) or by its own waiter's timeout. FIFO: the
//! head is always granted first. Every `admit` ends admitted or rejected with
//! a reason; the class counts admitted, queued and rejected statements.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::sync::{Condvar, Mutex};

/// A class's admission limits ([`ClassSpec::admission`](crate::ClassSpec::admission)).
#[derive(Clone, Debug, PartialEq)]
pub struct AdmissionLimits {
    /// Statements of the class running at once; later ones queue.
    pub max_running: usize,
    /// Statements waiting at most; beyond, rejected at once.
    pub queue_max: usize,
    /// How long a statement may wait before it is rejected.
    pub queue_wait_max: Duration,
    /// Above this load (module docs) new statements queue even when fewer
    /// than `max_running` run.
    pub queue_above_load: f64,
    /// Above this load new statements are rejected at once.
    pub reject_above_load: f64,
    /// Above this memory load (a fraction of the scheduler's
    /// `memory_budget_bytes`) new statements queue.
    pub queue_above_memory: f64,
    /// Above this memory load new statements are rejected at once.
    pub reject_above_memory: f64,
}

/// What admission judges by: the CPU load and, with a memory budget, the
/// memory load (module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Load {
    pub(crate) cpu: f64,
    pub(crate) memory: Option<f64>,
}

impl Load {
    fn below_queue_thresholds(self, limits: &AdmissionLimits) -> bool {
        self.cpu < limits.queue_above_load
            && self.memory.is_none_or(|m| m < limits.queue_above_memory)
    }
}

impl AdmissionLimits {
    /// `max_running` at once, at most 64 waiting (guessed: a burst of a few
    /// sessions per context) for at most 5 s (guessed: a client's patience),
    /// queueing above a load of 1.0 (every context busy with no backlog) and
    /// rejecting above 4.0 (a backlog of three contexts' worth; guessed);
    /// queueing above 80 % of the memory budget and rejecting above 95 %
    /// (guessed: room for the statements already running to grow).
    pub fn new(max_running: usize) -> AdmissionLimits {
        AdmissionLimits {
            max_running,
            queue_max: 64,
            queue_wait_max: Duration::from_secs(5),
            queue_above_load: 1.0,
            reject_above_load: 4.0,
            queue_above_memory: 0.8,
            reject_above_memory: 0.95,
        }
    }

    pub(crate) fn validate(&self) -> Result<(), String> {
        if self.max_running == 0 {
            return Err("max_running must be at least 1".into());
        }
        if self.queue_wait_max.is_zero() {
            return Err("queue_wait_max must be positive".into());
        }
        let ok = |x: f64| x > 0.0 && !x.is_nan();
        if !ok(self.queue_above_load) || !ok(self.reject_above_load) {
            return Err("load thresholds must be positive".into());
        }
        if self.queue_above_load > self.reject_above_load {
            return Err(format!(
                "queue_above_load {} above reject_above_load {}",
                self.queue_above_load, self.reject_above_load
            ));
        }
        if !ok(self.queue_above_memory) || !ok(self.reject_above_memory) {
            return Err("memory thresholds must be positive".into());
        }
        if self.queue_above_memory > self.reject_above_memory {
            return Err(format!(
                "queue_above_memory {} above reject_above_memory {}",
                self.queue_above_memory, self.reject_above_memory
            ));
        }
        Ok(())
    }
}

/// Why a statement was not admitted. Every reason is transient: retry later.
#[derive(Clone, Debug, PartialEq)]
pub enum RejectReason {
    /// The load was at or above the class's reject threshold.
    Overloaded { load: f64 },
    /// The memory load (charged ÷ budget) was at or above the class's
    /// memory reject threshold.
    MemoryOverloaded { memory: f64 },
    /// The class's queue held `queue_max` statements.
    QueueFull { queue_max: usize },
    /// The statement waited `queue_wait_max` without being admitted.
    QueueTimeout { waited: Duration },
}

/// A statement refused by admission control (retryable).
#[derive(Clone, Debug, PartialEq)]
pub struct Rejected {
    pub class: String,
    pub reason: RejectReason,
}

impl Rejected {
    /// Always true: admission rejects only for load, which passes.
    pub fn is_retryable(&self) -> bool {
        true
    }
}

impl std::fmt::Display for Rejected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let class = &self.class;
        match &self.reason {
            RejectReason::Overloaded { load } => write!(
                f,
                "workload class {class}: rejected, load {load:.2} at or above the reject threshold (retryable)"
            ),
            RejectReason::MemoryOverloaded { memory } => write!(
                f,
                "workload class {class}: rejected, {:.0} % of the memory budget charged, at or above the reject threshold (retryable)",
                memory * 100.0
            ),
            RejectReason::QueueFull { queue_max } => write!(
                f,
                "workload class {class}: rejected, {queue_max} statements already queued (retryable)"
            ),
            RejectReason::QueueTimeout { waited } => write!(
                f,
                "workload class {class}: rejected after waiting {:.0} ms in the admission queue (retryable)",
                waited.as_secs_f64() * 1e3
            ),
        }
    }
}

impl std::error::Error for Rejected {}

/// Admission counters of one class.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AdmissionCounts {
    /// Statements admitted (at once or after waiting).
    pub admitted: u64,
    /// Statements that had to wait in the queue (admitted or not after).
    pub queued: u64,
    /// Statements rejected, for any reason.
    pub rejected: u64,
    /// Statements admitted and not yet done now.
    pub running: usize,
    /// Statements waiting now.
    pub waiting: usize,
}

#[derive(Default)]
struct QueueState {
    running: usize,
    waiting: VecDeque<u64>,
    granted: Vec<u64>,
    next_ticket: u64,
    counts: AdmissionCounts,
}

/// One class's admission queue.
#[derive(Default)]
pub(crate) struct AdmissionQueue {
    state: Mutex<QueueState>,
    changed: Condvar,
}

/// What [`AdmissionQueue::admit`] decided.
#[derive(Debug)]
pub(crate) enum Decision {
    /// Admitted; counted in `running` until [`AdmissionQueue::done`].
    Admitted,
    Rejected(RejectReason),
}

impl AdmissionQueue {
    /// Steps 2–5 of the protocol for a class with `limits` at `load`;
    /// `load_now` re-reads the load while waiting.
    pub(crate) fn admit(
        &self,
        limits: &AdmissionLimits,
        load: Load,
        load_now: impl Fn() -> Load,
    ) -> Decision {
        let mut s = self.state.lock();
        if load.cpu >= limits.reject_above_load {
            s.counts.rejected += 1;
            return Decision::Rejected(RejectReason::Overloaded { load: load.cpu });
        }
        if let Some(memory) = load.memory
            && memory >= limits.reject_above_memory
        {
            s.counts.rejected += 1;
            return Decision::Rejected(RejectReason::MemoryOverloaded { memory });
        }
        if s.waiting.is_empty()
            && s.running < limits.max_running
            && load.below_queue_thresholds(limits)
        {
            s.running += 1;
            s.counts.admitted += 1;
            return Decision::Admitted;
        }
        if s.waiting.len() >= limits.queue_max {
            s.counts.rejected += 1;
            return Decision::Rejected(RejectReason::QueueFull {
                queue_max: limits.queue_max,
            });
        }
        let ticket = s.next_ticket;
        s.next_ticket += 1;
        s.waiting.push_back(ticket);
        s.counts.queued += 1;
        // The queue may be grantable right away (e.g. only the load held it).
        Self::grant(&mut s, limits, load_now());
        let start = Instant::now();
        let deadline = start + limits.queue_wait_max;
        loop {
            if let Some(i) = s.granted.iter().position(|&t| t == ticket) {
                s.granted.swap_remove(i);
                s.counts.admitted += 1;
                drop(s);
                // Others may have been granted in the same batch.
                self.changed.notify_all();
                return Decision::Admitted;
            }
            if Instant::now() >= deadline {
                let i = s
                    .waiting
                    .iter()
                    .position(|&t| t == ticket)
                    .expect("an ungranted ticket is waiting");
                s.waiting.remove(i);
                s.counts.rejected += 1;
                return Decision::Rejected(RejectReason::QueueTimeout {
                    waited: start.elapsed(),
                });
            }
            self.changed.wait_until(&mut s, deadline);
        }
    }

    /// Grants tickets from the head while the limits allow (caller holds the
    /// state and notifies after).
    fn grant(s: &mut QueueState, limits: &AdmissionLimits, load: Load) -> bool {
        let mut any = false;
        while s.running < limits.max_running && load.below_queue_thresholds(limits) {
            let Some(t) = s.waiting.pop_front() else {
                break;
            };
            s.running += 1;
            s.granted.push(t);
            any = true;
        }
        any
    }

    /// An admitted statement ended: frees its place and grants the next.
    pub(crate) fn done(&self, limits: Option<&AdmissionLimits>, load: Load) {
        let mut s = self.state.lock();
        s.running = s
            .running
            .checked_sub(1)
            .expect("a statement ended that was never admitted");
        let granted = limits.is_some_and(|l| Self::grant(&mut s, l, load));
        drop(s);
        if granted {
            self.changed.notify_all();
        }
    }

    /// At a load update: grants what the new load allows (a batch).
    pub(crate) fn regrant(&self, limits: &AdmissionLimits, load: Load) {
        let mut s = self.state.lock();
        if s.waiting.is_empty() {
            return;
        }
        let granted = Self::grant(&mut s, limits, load);
        drop(s);
        if granted {
            self.changed.notify_all();
        }
    }

    pub(crate) fn counts(&self) -> AdmissionCounts {
        let s = self.state.lock();
        AdmissionCounts {
            running: s.running,
            waiting: s.waiting.len() + s.granted.len(),
            ..s.counts
        }
    }
}

/// The load's smoothing: one watchdog period's samples averaged, then folded
/// into the moving average every `sample` period.
pub(crate) struct LoadAverage {
    lambda: f64,
    sum: f64,
    samples: u32,
    average: Option<f64>,
}

impl LoadAverage {
    pub(crate) fn new(lambda: f64) -> Self {
        LoadAverage {
            lambda,
            sum: 0.0,
            samples: 0,
            average: None,
        }
    }

    /// One watchdog tick's demand.
    pub(crate) fn add(&mut self, demand: f64) {
        self.sum += demand;
        self.samples += 1;
    }

    /// Folds the period's mean into the average and returns it.
    pub(crate) fn fold(&mut self) -> f64 {
        let mean = if self.samples == 0 {
            0.0
        } else {
            self.sum / f64::from(self.samples)
        };
        (self.sum, self.samples) = (0.0, 0);
        let next = match self.average {
            None => mean,
            Some(a) => self.lambda * mean + (1.0 - self.lambda) * a,
        };
        self.average = Some(next);
        next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu(load: f64) -> Load {
        Load {
            cpu: load,
            memory: None,
        }
    }

    #[test]
    fn the_average_weights_the_newest_period_by_lambda() {
        let mut l = LoadAverage::new(0.7);
        l.add(1.0);
        l.add(3.0);
        assert_eq!(l.fold(), 2.0);
        l.add(0.0);
        assert!((l.fold() - 0.6).abs() < 1e-12);
        // A period without samples counts as idle.
        assert!((l.fold() - 0.18).abs() < 1e-12);
    }

    #[test]
    fn limits_are_validated() {
        assert!(AdmissionLimits::new(2).validate().is_ok());
        for bad in [
            AdmissionLimits {
                max_running: 0,
                ..AdmissionLimits::new(1)
            },
            AdmissionLimits {
                queue_wait_max: Duration::ZERO,
                ..AdmissionLimits::new(1)
            },
            AdmissionLimits {
                queue_above_load: 5.0,
                ..AdmissionLimits::new(1)
            },
            AdmissionLimits {
                reject_above_load: f64::NAN,
                ..AdmissionLimits::new(1)
            },
        ] {
            assert!(bad.validate().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_queue_is_bounded_fifo_and_drains_on_done() {
        let q = AdmissionQueue::default();
        let limits = AdmissionLimits {
            queue_max: 2,
            queue_wait_max: Duration::from_secs(60),
            ..AdmissionLimits::new(1)
        };
        assert!(matches!(
            q.admit(&limits, cpu(0.0), || cpu(0.0)),
            Decision::Admitted
        ));
        let order = std::sync::Mutex::new(Vec::new());
        std::thread::scope(|s| {
            for who in 0..2 {
                let (q, limits, order) = (&q, &limits, &order);
                // Queue in a known order: wait until the previous one waits.
                while q.counts().waiting != who {
                    std::thread::yield_now();
                }
                s.spawn(move || {
                    assert!(matches!(
                        q.admit(limits, cpu(0.0), || cpu(0.0)),
                        Decision::Admitted
                    ));
                    order.lock().unwrap().push(who);
                    q.done(Some(limits), cpu(0.0));
                });
            }
            while q.counts().waiting != 2 {
                std::thread::yield_now();
            }
            // Full: the third is rejected at once.
            match q.admit(&limits, cpu(0.0), || cpu(0.0)) {
                Decision::Rejected(RejectReason::QueueFull { queue_max: 2 }) => {}
                _ => panic!("a full queue admitted"),
            }
            q.done(Some(&limits), cpu(0.0));
        });
        assert_eq!(*order.lock().unwrap(), [0, 1]);
        let c = q.counts();
        assert_eq!((c.admitted, c.queued, c.rejected), (3, 2, 1));
        assert_eq!((c.running, c.waiting), (0, 0));
    }

    #[test]
    fn overload_rejects_and_a_wait_times_out() {
        let q = AdmissionQueue::default();
        let limits = AdmissionLimits {
            queue_wait_max: Duration::from_millis(30),
            ..AdmissionLimits::new(4)
        };
        match q.admit(&limits, cpu(4.5), || cpu(4.5)) {
            Decision::Rejected(RejectReason::Overloaded { load }) => assert_eq!(load, 4.5),
            _ => panic!("admitted above the reject threshold"),
        }
        // Above the queue threshold: waits, nothing grants it, times out.
        match q.admit(&limits, cpu(2.0), || cpu(2.0)) {
            Decision::Rejected(RejectReason::QueueTimeout { waited }) => {
                assert!(waited >= Duration::from_millis(30));
            }
            _ => panic!("admitted above the queue threshold"),
        }
        // Load fell while it would wait: granted on the spot.
        assert!(matches!(
            q.admit(&limits, cpu(2.0), || cpu(0.5)),
            Decision::Admitted
        ));
        let c = q.counts();
        assert_eq!((c.admitted, c.queued, c.rejected, c.waiting), (1, 2, 2, 0));
    }
}

#[cfg(test)]
mod memory_tests {
    use super::*;

    fn load(memory: f64) -> Load {
        Load {
            cpu: 0.1,
            memory: Some(memory),
        }
    }

    #[test]
    fn memory_above_its_thresholds_queues_then_rejects() {
        let q = AdmissionQueue::default();
        let mut limits = AdmissionLimits::new(4);
        limits.queue_wait_max = Duration::from_millis(30);
        assert!(matches!(
            q.admit(&limits, load(0.5), || load(0.5)),
            Decision::Admitted
        ));
        match q.admit(&limits, load(0.97), || load(0.97)) {
            Decision::Rejected(RejectReason::MemoryOverloaded { memory }) => {
                assert_eq!(memory, 0.97)
            }
            other => panic!("{other:?}"),
        }
        // Between the thresholds: queued, and timed out while memory stays high.
        match q.admit(&limits, load(0.85), || load(0.85)) {
            Decision::Rejected(RejectReason::QueueTimeout { .. }) => {}
            other => panic!("{other:?}"),
        }
        // Admitted once memory falls below the queue threshold.
        assert!(matches!(
            q.admit(&limits, load(0.85), || load(0.2)),
            Decision::Admitted
        ));
        let counts = q.counts();
        assert_eq!((counts.admitted, counts.rejected, counts.queued), (2, 2, 2));
    }

    #[test]
    fn memory_thresholds_are_validated() {
        let mut limits = AdmissionLimits::new(1);
        limits.queue_above_memory = 0.99;
        assert!(limits.validate().is_err());
        limits.queue_above_memory = 0.0;
        assert!(limits.validate().is_err());
    }
}
