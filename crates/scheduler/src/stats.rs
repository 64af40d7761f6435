//! Observability: atomic counters and the timeline the watchdog samples.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;

/// Scheduler-wide counters, all `Relaxed`: they are statistics, never used to
/// synchronize anything.
#[derive(Default)]
pub(crate) struct Counters {
    pub graphs_submitted: AtomicU64,
    pub nodes_created: AtomicU64,
    pub jobs_created: AtomicU64,
    pub workers_created: AtomicU64,
    pub workers_exited: AtomicU64,
    pub workers_parked: AtomicU64,
    pub workers_woken: AtomicU64,
    pub worker_cap_reached: AtomicU64,
    pub blocked_events: AtomicU64,
    pub inactive_by_user_events: AtomicU64,
    pub waiting_for_graph_events: AtomicU64,
    pub surplus_parks: AtomicU64,
    pub watchdog_activations: AtomicU64,
    pub stall_rescues: AtomicU64,
    pub latch_spin_acquires: AtomicU64,
    pub latch_parks: AtomicU64,
    pub parallel_for_tasks: AtomicU64,
    pub parallel_for_splits: AtomicU64,
    pub task_panics: AtomicU64,
    pub callers_counted: AtomicU64,
    pub callers_extra: AtomicU64,
    pub callers_handed_off: AtomicU64,
    pub callers_waited_turn: AtomicU64,
}

impl Counters {
    pub(crate) fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }
    pub(crate) fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }
}

/// A snapshot of every counter plus the current worker counts.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SchedulerStats {
    pub name: String,
    pub contexts: usize,
    /// Task graphs submitted.
    pub graphs_submitted: u64,
    /// Graph nodes created (all nodes of submitted graphs).
    pub nodes_created: u64,
    /// Jobs created (`spawn`, scope spawns, `join` halves offered for stealing).
    pub jobs_created: u64,
    /// Tasks created = nodes + jobs.
    pub tasks_created: u64,
    /// Tasks executed (nodes, including re-issues, and jobs run from a queue).
    pub tasks_executed: u64,
    /// Tasks taken from another worker's pool or deque.
    pub tasks_stolen: u64,
    pub workers_created: u64,
    pub workers_exited: u64,
    pub workers_parked: u64,
    pub workers_woken: u64,
    /// Times a wanted worker was not created because `workers_max` was reached.
    pub worker_cap_reached: u64,
    /// Entries into each inactive state.
    pub blocked_events: u64,
    pub inactive_by_user_events: u64,
    pub waiting_for_graph_events: u64,
    /// Workers that parked because the active level exceeded the contexts.
    pub surplus_parks: u64,
    /// Workers the watchdog woke or created.
    pub watchdog_activations: u64,
    /// Workers the watchdog woke or created beyond the contexts for a stall
    /// (queued work, full level, no task taken for `stall_rescue_after`).
    pub stall_rescues: u64,
    pub latch_spin_acquires: u64,
    pub latch_parks: u64,
    pub parallel_for_tasks: u64,
    pub parallel_for_splits: u64,
    pub task_panics: u64,
    /// Jobs callers outside the pool ran themselves as counted guest workers.
    pub callers_counted: u64,
    /// Urgent jobs callers ran themselves, uncounted, within the urgent share.
    pub callers_extra: u64,
    /// Jobs callers handed to a worker (queued as roots) and waited for.
    pub callers_handed_off: u64,
    /// Times an urgent caller waited for its turn in the urgent share
    /// (`Admission::WaitTurn`) before it ran its job (or, past the wait's
    /// bound, handed it off).
    pub callers_waited_turn: u64,
    /// Current worker counts (guest callers included in total and active).
    pub workers_total: usize,
    pub workers_active: usize,
    pub workers_blocked: usize,
    pub workers_inactive_by_user: usize,
    pub workers_waiting_for_graph: usize,
    pub workers_parked_now: usize,
    pub workers_peak: usize,
    pub concurrency_hint: usize,
}

/// One watchdog sample (paper Figure 6).
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct TimelineSample {
    /// Milliseconds since the scheduler started.
    pub t_ms: f64,
    /// The active concurrency level as the policy sees it.
    pub active: usize,
    pub blocked: usize,
    pub inactive_by_user: usize,
    pub waiting_for_graph: usize,
    pub parked: usize,
    pub total: usize,
    pub queued_roots: usize,
    pub queued_tasks: usize,
    pub hint: usize,
}

/// A bounded ring of samples.
pub(crate) struct Timeline {
    samples: VecDeque<TimelineSample>,
    capacity: usize,
}

impl Timeline {
    pub(crate) fn new(capacity: usize) -> Self {
        Timeline {
            samples: VecDeque::with_capacity(capacity.min(4096)),
            capacity,
        }
    }
    pub(crate) fn push(&mut self, s: TimelineSample) {
        if self.samples.len() == self.capacity {
            self.samples.pop_front();
        }
        self.samples.push_back(s);
    }
    pub(crate) fn snapshot(&self) -> Vec<TimelineSample> {
        self.samples.iter().copied().collect()
    }
    pub(crate) fn clear(&mut self) {
        self.samples.clear();
    }
}

/// The JSON export of stats and timeline together.
#[derive(Serialize)]
pub struct SchedulerReport {
    pub stats: SchedulerStats,
    pub timeline: Vec<TimelineSample>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeline_is_bounded() {
        let mut t = Timeline::new(3);
        for i in 0..5 {
            t.push(TimelineSample {
                t_ms: i as f64,
                active: i,
                blocked: 0,
                inactive_by_user: 0,
                waiting_for_graph: 0,
                parked: 0,
                total: 0,
                queued_roots: 0,
                queued_tasks: 0,
                hint: 1,
            });
        }
        let s = t.snapshot();
        assert_eq!(s.len(), 3);
        assert_eq!(s[0].active, 2);
        assert_eq!(s[2].active, 4);
    }
}
