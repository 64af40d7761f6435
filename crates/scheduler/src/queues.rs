//! The two sets of queues of the paper (§4): root queues per priority for graphs not
//! yet started, and task pools for the non-root nodes of started graphs, each pool
//! ordered by node depth (deepest first).
//!
//! Both are lock-free: every priority and every depth level is a crossbeam
//! `Injector` (MPMC FIFO). A pool keeps a bitmask of levels that may be non-empty so
//! that a pop scans only those, deepest first.
//!
//! Bitmask protocol (no task is ever hidden): a pusher pushes, then sets the bit. A
//! popper that finds a level empty clears the bit, then re-checks the level and sets
//! the bit again if it is non-empty. With all three steps `SeqCst`, either the clear
//! comes after the pusher's set in the bit's modification order, and then the
//! re-check sees the push, or it comes before it, and then the set survives.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crossbeam_deque::{Injector, Steal};

use crate::graph::GraphInner;
use crate::job::JobRef;

/// What the queues carry.
pub(crate) enum Task {
    /// A node of a task graph.
    Node { graph: Arc<GraphInner>, node: u32 },
    /// A type-erased job (`spawn`, scope spawns, stolen `join` halves).
    Job(JobRef),
}

/// Depth levels a pool distinguishes; deeper nodes share the last level. Guessed:
/// query plans are far shallower than 64.
pub const POOL_DEPTH_LEVELS: usize = 64;

/// Where a successful pop came from (for the stealing statistics).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Popped {
    /// From the worker's own pool or its own deque.
    Own,
    /// From another worker's pool or deque.
    Stolen,
    /// An urgent root (above the default priority): counted in the urgent
    /// share while it runs.
    Urgent,
}

pub(crate) struct Pool {
    levels: Box<[Injector<Task>]>,
    nonempty: AtomicU64,
}

impl Pool {
    pub(crate) fn new() -> Self {
        Pool {
            levels: (0..POOL_DEPTH_LEVELS).map(|_| Injector::new()).collect(),
            nonempty: AtomicU64::new(0),
        }
    }

    fn level_of(depth: u32) -> usize {
        (depth as usize).min(POOL_DEPTH_LEVELS - 1)
    }

    pub(crate) fn push(&self, depth: u32, task: Task) {
        let level = Self::level_of(depth);
        self.levels[level].push(task);
        // SeqCst: pairs with the popper's clear-then-recheck (module docs).
        self.nonempty.fetch_or(1 << level, Ordering::SeqCst);
    }

    /// Pops a task from the deepest non-empty level.
    pub(crate) fn pop(&self) -> Option<Task> {
        loop {
            let mask = self.nonempty.load(Ordering::SeqCst);
            if mask == 0 {
                return None;
            }
            let mut retry = false;
            let mut bits = mask;
            while bits != 0 {
                let level = 63 - bits.leading_zeros() as usize;
                bits &= !(1 << level);
                match self.levels[level].steal() {
                    Steal::Success(t) => return Some(t),
                    Steal::Retry => retry = true,
                    Steal::Empty => {
                        // SeqCst: the clear-then-recheck half of the module protocol.
                        self.nonempty.fetch_and(!(1 << level), Ordering::SeqCst);
                        if !self.levels[level].is_empty() {
                            self.nonempty.fetch_or(1 << level, Ordering::SeqCst);
                            retry = true;
                        }
                    }
                }
            }
            if !retry {
                return None;
            }
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.levels.iter().map(Injector::len).sum()
    }

    /// Whether no level holds a task; looks only at the levels the non-empty
    /// mask names (a push sets its level's bit), not at all 64.
    pub(crate) fn is_empty(&self) -> bool {
        let mut bits = self.nonempty.load(Ordering::Relaxed);
        while bits != 0 {
            let level = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            if !self.levels[level].is_empty() {
                return false;
            }
        }
        true
    }
}

/// One FIFO per priority for graphs not yet started.
pub(crate) struct RootQueues {
    by_priority: Box<[Injector<Task>]>,
}

impl RootQueues {
    pub(crate) fn new(levels: usize) -> Self {
        RootQueues {
            by_priority: (0..levels).map(|_| Injector::new()).collect(),
        }
    }

    pub(crate) fn levels(&self) -> usize {
        self.by_priority.len()
    }

    pub(crate) fn push(&self, priority: usize, task: Task) {
        self.by_priority[priority.min(self.by_priority.len() - 1)].push(task);
    }

    /// Takes a root, favouring higher priorities: at each non-empty level, from the
    /// highest down, take from it with probability `bias`, else consider the next
    /// lower one. If every coin said "skip", take from the highest non-empty level.
    /// Returns the root and its priority.
    pub(crate) fn pop(&self, bias: f64, rng: &mut fastrand::Rng) -> Option<(Task, usize)> {
        let mut first_nonempty = None;
        for level in (0..self.by_priority.len()).rev() {
            let q = &self.by_priority[level];
            if q.is_empty() {
                continue;
            }
            first_nonempty.get_or_insert(level);
            if (bias >= 1.0 || rng.f64() < bias)
                && let Some(t) = steal_retrying(q)
            {
                return Some((t, level));
            }
        }
        // Fall back to a full scan so a coin flip never makes a non-empty queue look empty.
        let start = first_nonempty?;
        (0..=start)
            .rev()
            .find_map(|l| steal_retrying(&self.by_priority[l]).map(|t| (t, l)))
    }

    /// Takes a root of a priority above `level`, highest first, if any.
    pub(crate) fn pop_above(&self, level: usize) -> Option<Task> {
        (level + 1..self.by_priority.len())
            .rev()
            .filter(|&l| !self.by_priority[l].is_empty())
            .find_map(|l| steal_retrying(&self.by_priority[l]))
    }

    /// Whether a root of a priority above `level` waits.
    pub(crate) fn any_above(&self, level: usize) -> bool {
        self.by_priority
            .iter()
            .skip(level + 1)
            .any(|q| !q.is_empty())
    }

    /// Whether a root of priority `level` or lower waits.
    pub(crate) fn any_at_or_below(&self, level: usize) -> bool {
        self.by_priority
            .iter()
            .take(level + 1)
            .any(|q| !q.is_empty())
    }

    pub(crate) fn len(&self) -> usize {
        self.by_priority.iter().map(Injector::len).sum()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.by_priority.iter().all(Injector::is_empty)
    }
}

fn steal_retrying(q: &Injector<Task>) -> Option<Task> {
    loop {
        match q.steal() {
            Steal::Success(t) => return Some(t),
            Steal::Empty => return None,
            Steal::Retry => std::hint::spin_loop(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::HeapJob;

    fn job(tag: &'static std::sync::atomic::AtomicUsize, v: usize) -> Task {
        // SAFETY: the closure borrows only a `'static` counter, so no borrowed
        // data can go away before the job runs.
        Task::Job(unsafe {
            HeapJob::into_job_ref(move || {
                tag.store(v, Ordering::SeqCst);
            })
        })
    }

    fn run(t: Task) {
        match t {
            // SAFETY: each popped JobRef is executed exactly once here.
            Task::Job(j) => unsafe { j.execute() },
            Task::Node { .. } => unreachable!(),
        }
    }

    #[test]
    fn pool_pops_deepest_first() {
        static TAG: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let p = Pool::new();
        assert!(p.is_empty());
        p.push(1, job(&TAG, 1));
        assert!(!p.is_empty());
        p.push(7, job(&TAG, 7));
        p.push(3, job(&TAG, 3));
        p.push(1000, job(&TAG, 1000));
        let mut order = vec![];
        while let Some(t) = p.pop() {
            run(t);
            order.push(TAG.load(Ordering::SeqCst));
        }
        assert_eq!(order, vec![1000, 7, 3, 1]);
        assert_eq!(p.len(), 0);
        assert!(p.is_empty());
    }

    #[test]
    fn roots_favour_high_priority_and_never_hide_work() {
        static TAG: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let r = RootQueues::new(3);
        r.push(0, job(&TAG, 0));
        r.push(2, job(&TAG, 2));
        let mut rng = fastrand::Rng::with_seed(1);
        run(r.pop(1.0, &mut rng).unwrap().0);
        assert_eq!(TAG.load(Ordering::SeqCst), 2);
        // bias 0: every coin says skip, the fallback still finds the low-priority root.
        run(r.pop(0.0, &mut rng).unwrap().0);
        assert_eq!(TAG.load(Ordering::SeqCst), 0);
        assert!(r.pop(0.0, &mut rng).is_none());
    }

    #[test]
    fn concurrent_push_pop_loses_nothing() {
        use std::sync::atomic::AtomicUsize;
        static SUM: AtomicUsize = AtomicUsize::new(0);
        let p = Arc::new(Pool::new());
        let per = 20_000;
        let pushers: Vec<_> = (0..2)
            .map(|k| {
                let p = p.clone();
                std::thread::spawn(move || {
                    for i in 0..per {
                        p.push(
                            (i % 5) as u32 + k,
                            // SAFETY: the closure touches only a `static`.
                            Task::Job(unsafe {
                                HeapJob::into_job_ref(|| {
                                    SUM.fetch_add(1, Ordering::SeqCst);
                                })
                            }),
                        );
                    }
                })
            })
            .collect();
        let popped = Arc::new(AtomicUsize::new(0));
        let poppers: Vec<_> = (0..2)
            .map(|_| {
                let p = p.clone();
                let popped = popped.clone();
                std::thread::spawn(move || {
                    while popped.load(Ordering::SeqCst) < 2 * per {
                        if let Some(t) = p.pop() {
                            run(t);
                            popped.fetch_add(1, Ordering::SeqCst);
                        }
                    }
                })
            })
            .collect();
        for t in pushers.into_iter().chain(poppers) {
            t.join().unwrap();
        }
        assert_eq!(SUM.load(Ordering::SeqCst), 2 * per);
    }
}
