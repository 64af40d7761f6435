//! State shared by the scheduler handle, its workers and its watchdog: queues, the
//! worker accounting, the idle list, and worker activation (wake or create).
//!
//! The protocol (idle list, no lost wake-up, worker bound) is written down in
//! `PROTOCOL.md` next to this crate's `Cargo.toml`.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering, fence};
use std::sync::{Arc, OnceLock, Weak};
use std::time::Instant;

use crossbeam_deque::{Stealer, Worker};
use crossbeam_utils::CachePadded;
use crossbeam_utils::sync::{Parker, Unparker};
use parking_lot::Mutex;

/// Locks that may be taken inside `parking_lot_core::park`'s `before_sleep` hook
/// (the *blocked* transition wakes a parked worker there). A thread queued on one
/// parking-lot key must not park on another, so these are std (futex) locks, never
/// parking_lot ones. Poisoning is ignored: no code panics while holding them.
mod hooksafe {
    use std::sync::PoisonError;

    pub(crate) struct Mutex<T>(std::sync::Mutex<T>);
    impl<T> Mutex<T> {
        pub(crate) fn new(v: T) -> Self {
            Mutex(std::sync::Mutex::new(v))
        }
        pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, T> {
            self.0.lock().unwrap_or_else(PoisonError::into_inner)
        }
    }
}

use crate::class::{ClassId, Classes};
use crate::config::{HintPolicy, SchedulerConfig};
use crate::counts::{AtomicWorkerCounts, WorkerCounts, WorkerState};
use crate::graph::GraphInner;
use crate::job::JobRef;
use crate::queues::{Pool, RootQueues, Task};
use crate::stats::{Counters, SchedulerStats, Timeline, TimelineSample};
use crate::turn::TurnGate;

/// Per-worker-slot data others need: its deque's stealer, its unparker and its
/// own (uncontended) counters.
///
/// The deque belongs to the slot, not to the thread: whoever takes the slot (a
/// worker or a guest) takes its owner side and gives it back, empty, with the
/// slot. So the stealer never changes once made, and the idle path
/// (`has_work`) and thieves read it without a lock.
pub(crate) struct Slot {
    /// The thieves' side of the slot's deque, made with it on the slot's first
    /// use and fixed from then on.
    pub(crate) stealer: OnceLock<Stealer<JobRef>>,
    /// The owner's side while the slot is free; `None` while it is taken.
    deque: hooksafe::Mutex<Option<Worker<JobRef>>>,
    unparker: hooksafe::Mutex<Option<Unparker>>,
    pub(crate) executed: CachePadded<AtomicUsize>,
    pub(crate) stolen: CachePadded<AtomicUsize>,
    /// Jobs this worker offered from `join` (kept per worker: a shared counter
    /// would be contended on every fork).
    pub(crate) created: CachePadded<AtomicUsize>,
}

/// Why someone asks for another active worker; decides whether creating a thread
/// is justified when no parked worker can be woken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Activation {
    /// New work was queued. Creates a thread only for a deficit not caused by
    /// *blocked* workers (blocked may be short; the watchdog judges those).
    Submit,
    /// A worker entered waiting-for-graph or inactive-by-user (long states): replace
    /// it at once (paper §5).
    Replace,
    /// The watchdog saw the active level below the contexts with work queued.
    Watchdog,
    /// A worker is about to sleep as *blocked* and work is queued: wake a parked
    /// worker if there is one, but never create a thread (blocking may be short;
    /// creating threads for it stays the watchdog's call, as in the paper).
    Blocked,
}

/// Outcome of trying to activate one worker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Activated {
    /// A parked worker was woken.
    Woken,
    /// A new worker thread was started.
    Created,
    /// The active level is already at or above the contexts.
    NotNeeded,
    /// Needed, but the policy for this reason does not create threads.
    Declined,
    /// Needed, but `workers_max` threads are alive (or the OS refused a thread).
    CapReached,
}

pub(crate) struct Shared {
    pub(crate) config: SchedulerConfig,
    pub(crate) counts: AtomicWorkerCounts,
    pub(crate) roots: RootQueues,
    /// Workload classes, with the root queues of every class but the default
    /// (whose roots are `roots`).
    pub(crate) classes: Classes,
    pub(crate) pools: Box<[Pool]>,
    /// Tasks in the root queues plus the pools. `SeqCst`: half of the Dekker pair of
    /// the park protocol (PROTOCOL.md).
    pub(crate) queued: CachePadded<AtomicUsize>,
    pub(crate) slots: Box<[Slot]>,
    /// One past the highest slot ever used: scans stop here.
    pub(crate) slots_high_water: AtomicUsize,
    free_slots: hooksafe::Mutex<BTreeSet<usize>>,
    /// Slots of parked workers. Invariant (outside the lock's critical sections):
    /// `idle.len() == counts.parked()`.
    idle: hooksafe::Mutex<Vec<usize>>,
    pub(crate) hint: AtomicUsize,
    /// Admission control's load average, as f64 bits (`admission.rs`).
    pub(crate) admission_load_bits: AtomicU64,
    /// The memory load's moving average (an `f64`; meaningful only with a
    /// memory budget).
    pub(crate) admission_memory_bits: AtomicU64,
    /// The hint's unrounded EMA of free contexts, as f64 bits (0 when pinned).
    pub(crate) hint_free_bits: AtomicU64,
    pub(crate) stats: Counters,
    peak_workers: AtomicUsize,
    pub(crate) timeline: Mutex<Timeline>,
    pub(crate) shutdown: AtomicBool,
    /// Join handles of every worker thread started (exited ones too, pruned of
    /// finished threads only when more than `workers_max` accumulate), joined by
    /// `Drop for Scheduler`. A hooksafe lock: `spawn_worker` may run wherever
    /// activation runs.
    worker_threads: hooksafe::Mutex<Vec<std::thread::JoinHandle<()>>>,
    pub(crate) started: Instant,
    /// Urgent work running now: guests, extra callers and workers running urgent
    /// roots (`caller::UrgentGuard`). Relaxed: a share, not a synchronization.
    pub(crate) urgent_running: CachePadded<AtomicUsize>,
    /// Where urgent callers of the default class beyond the urgent share wait
    /// for their turn (`Shared::wait_turn`); `UrgentGuard` ends a turn.
    pub(crate) urgent_turn: TurnGate,
    /// Callers running as counted guests now (included in the counts' total):
    /// parked base workers judge "extra worker" without them.
    pub(crate) guests_now: AtomicUsize,
    /// Workers that found no task and are still looking before they park
    /// (active, but a caller may take their context: they then park as
    /// surplus). Relaxed: an estimate for admission only.
    pub(crate) searching: CachePadded<AtomicUsize>,
    seed_counter: AtomicUsize,
    me: Weak<Shared>,
}

impl Shared {
    pub(crate) fn new(config: SchedulerConfig) -> Arc<Self> {
        let slots = (0..config.workers_max)
            .map(|_| Slot {
                stealer: OnceLock::new(),
                deque: hooksafe::Mutex::new(None),
                unparker: hooksafe::Mutex::new(None),
                executed: CachePadded::new(AtomicUsize::new(0)),
                stolen: CachePadded::new(AtomicUsize::new(0)),
                created: CachePadded::new(AtomicUsize::new(0)),
            })
            .collect();
        Arc::new_cyclic(|me| Shared {
            me: me.clone(),
            counts: AtomicWorkerCounts::new(),
            roots: RootQueues::new(config.priority_levels),
            classes: Classes::new(config.priority_levels),
            pools: (0..config.pools).map(|_| Pool::new()).collect(),
            queued: CachePadded::new(AtomicUsize::new(0)),
            slots,
            slots_high_water: AtomicUsize::new(0),
            free_slots: hooksafe::Mutex::new((0..config.workers_max).collect()),
            idle: hooksafe::Mutex::new(Vec::new()),
            hint: AtomicUsize::new(config.contexts),
            admission_load_bits: AtomicU64::new(0f64.to_bits()),
            admission_memory_bits: AtomicU64::new(0f64.to_bits()),
            hint_free_bits: AtomicU64::new((config.contexts as f64).to_bits()),
            stats: Counters::default(),
            peak_workers: AtomicUsize::new(0),
            timeline: Mutex::new(Timeline::new(config.timeline_capacity_samples)),
            shutdown: AtomicBool::new(false),
            worker_threads: hooksafe::Mutex::new(Vec::new()),
            started: Instant::now(),
            urgent_running: CachePadded::new(AtomicUsize::new(0)),
            urgent_turn: TurnGate::default(),
            guests_now: AtomicUsize::new(0),
            searching: CachePadded::new(AtomicUsize::new(0)),
            seed_counter: AtomicUsize::new(0),
            config,
        })
    }

    pub(crate) fn active_level(&self, c: WorkerCounts) -> usize {
        c.active_level(self.config.count_sys_inactive)
    }

    /// The hint: the larger of the sampled EMA and the contexts free right now
    /// (see [`Self::free_contexts_now`]), so that load which has just gone
    /// away (the previous operator of the same query) does not keep the next
    /// operator serial for the EMA's lag; sustained load keeps `free_now` at 0
    /// and the EMA decides, as in the paper.
    ///
    /// Capped by the running statement's class's `max_parallelism`.
    pub(crate) fn concurrency_hint(&self) -> usize {
        self.unclamped_hint().min(self.concurrency_hint_cap())
    }

    /// The current class's `max_parallelism` (`usize::MAX` if none).
    pub(crate) fn concurrency_hint_cap(&self) -> usize {
        if self.classes.defined() == 0 {
            return usize::MAX;
        }
        let class = crate::class::current_class();
        match self
            .classes
            .exists(class)
            .then(|| self.classes.max_parallelism(class))
        {
            Some(Some(cap)) => cap,
            _ => usize::MAX,
        }
    }

    fn unclamped_hint(&self) -> usize {
        match self.config.hint {
            HintPolicy::PinnedToContexts => self.config.contexts,
            HintPolicy::Ema { .. } => self
                .hint
                .load(Ordering::Relaxed)
                .max(self.free_contexts_now())
                .clamp(1, self.config.contexts),
        }
    }

    /// Free contexts for `parallel_for` splitting: the EMA, or more if more
    /// are free right now.
    pub(crate) fn free_contexts_estimate(&self) -> f64 {
        match self.config.hint {
            HintPolicy::PinnedToContexts => 0.0,
            HintPolicy::Ema { .. } => f64::from_bits(self.hint_free_bits.load(Ordering::Relaxed))
                .max(self.free_contexts_now() as f64),
        }
    }

    /// `contexts − active − queued roots`, at least 0: contexts that no running
    /// task and no waiting root will take. Two relaxed loads; the deques are not
    /// counted (too costly per call), so this can overstate while a splitting
    /// loop's halves wait in a deque — they are taken within microseconds.
    ///
    /// Asked from an active worker of this scheduler (a pool worker or a guest,
    /// i.e. a caller running its own job), the asker's own context counts as
    /// free: the asker runs one of the operation's tasks on it. (A query plan
    /// runs as one job; without this, one `hint` stream alone would run its
    /// operators one task each on 2 contexts.)
    pub(crate) fn free_contexts_now(&self) -> usize {
        let active = self.active_level(self.counts.load());
        let own = crate::worker::WorkerThread::current().map_or(0, |w| {
            usize::from(w.belongs_to(self) && w.state() == WorkerState::Active)
        });
        self.config
            .contexts
            .saturating_sub(active.saturating_sub(own))
            .saturating_sub(self.queued.load(Ordering::Relaxed))
    }

    pub(crate) fn next_seed(&self) -> u64 {
        let k = self.seed_counter.fetch_add(1, Ordering::Relaxed) as u64;
        match self.config.seed {
            Some(s) => s.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(k),
            None => fastrand::u64(..),
        }
    }

    // ---- queues -------------------------------------------------------------

    /// Queues a root (a graph's first node or a job from outside the workers).
    pub(crate) fn push_root(&self, priority: usize, task: Task) {
        // Count before pushing, so that a pop (which decrements after it succeeds)
        // can never drive `queued` below zero. SeqCst: the submitter's half of the
        // park protocol; pairs with the fence in `has_work`.
        self.queued.fetch_add(1, Ordering::SeqCst);
        self.roots.push(priority, task);
        self.notify_work(1);
    }

    /// Queues a root of workload class `class` (the default class's go to
    /// `roots`, as [`Self::push_root`] does).
    pub(crate) fn push_class_root(&self, class: ClassId, priority: usize, task: Task) {
        if class == ClassId::DEFAULT || !self.classes.exists(class) {
            return self.push_root(priority, task);
        }
        // As in `push_root`: count first, SeqCst.
        self.queued.fetch_add(1, Ordering::SeqCst);
        self.classes.slot(class).roots.push(priority, task);
        self.notify_work(1);
    }

    /// Queues a non-root node into pool `pool`.
    pub(crate) fn push_pool(&self, pool: usize, depth: u32, task: Task) {
        // SeqCst, and before the push: as in `push_root`.
        self.queued.fetch_add(1, Ordering::SeqCst);
        self.pools[pool % self.pools.len()].push(depth, task);
    }

    /// Queues a graph node at its depth into pool `pool`.
    pub(crate) fn push_node(&self, pool: usize, graph: &Arc<GraphInner>, node: u32) {
        let task = Task::Node {
            graph: graph.clone(),
            node,
        };
        self.push_pool(pool, graph.depth(node), task);
    }

    /// Whether any task waits anywhere (queues or any worker's deque).
    pub(crate) fn has_work(&self) -> bool {
        // SeqCst fence: pairs with the fence in `notify_work` (for deque pushes, which
        // do not touch `queued`).
        fence(Ordering::SeqCst);
        if self.queued.load(Ordering::SeqCst) > 0 {
            return true;
        }
        let hwm = self.slots_high_water.load(Ordering::Acquire);
        self.slots[..hwm]
            .iter()
            .any(|s| s.stealer.get().is_some_and(|st| !st.is_empty()))
    }

    /// Tasks waiting anywhere: the queues plus every worker's deque (approximate
    /// while others push and pop; used for how many workers to activate).
    pub(crate) fn queued_estimate(&self) -> usize {
        let hwm = self.slots_high_water.load(Ordering::Acquire);
        let in_deques: usize = self.slots[..hwm]
            .iter()
            .map(|s| s.stealer.get().map_or(0, Stealer::len))
            .sum();
        self.queued.load(Ordering::SeqCst).saturating_add(in_deques)
    }

    // ---- activation -----------------------------------------------------------

    /// After queuing `n` tasks: wake (or create) up to `n` workers while the active
    /// level is below the contexts.
    pub(crate) fn notify_work(&self, n: usize) {
        // SeqCst fence: the pusher's store-load barrier between "task queued" and
        // "read the counts" (PROTOCOL.md, no lost wake-up).
        fence(Ordering::SeqCst);
        for _ in 0..n {
            let c = self.counts.load();
            if self.active_level(c) >= self.config.contexts {
                return;
            }
            match self.activate(Activation::Submit) {
                Activated::Woken | Activated::Created => {}
                _ => return,
            }
        }
    }

    /// Tries to bring one more worker into the active state.
    pub(crate) fn activate(self: &Shared, why: Activation) -> Activated {
        let c = self.counts.load();
        let active = self.active_level(c);
        let contexts = self.config.contexts;
        if active >= contexts {
            return Activated::NotNeeded;
        }
        if c.parked() > 0 && self.wake_one() {
            if why == Activation::Watchdog {
                Counters::bump(&self.stats.watchdog_activations);
            }
            return Activated::Woken;
        }
        // `wake_one` can fail because a worker that was counted parked found work
        // and reverted to active meanwhile: judge creation on fresh counts.
        let c = self.counts.load();
        let active = self.active_level(c);
        if active >= contexts || c.parked() > 0 {
            return Activated::NotNeeded;
        }
        let create = match why {
            Activation::Submit => {
                let blocked = if self.config.count_sys_inactive {
                    c.blocked()
                } else {
                    0
                };
                // A fixed pool only grows to replace workers waiting for graphs.
                active + blocked < contexts
                    && (self.config.flexible_concurrency || c.waiting_for_graph() > 0)
            }
            Activation::Replace => true,
            Activation::Watchdog => self.config.flexible_concurrency,
            Activation::Blocked => false,
        };
        if !create {
            return Activated::Declined;
        }
        let created = self.spawn_worker();
        if created == Activated::Created && why == Activation::Watchdog {
            Counters::bump(&self.stats.watchdog_activations);
        }
        created
    }

    /// The watchdog saw a stall (PROTOCOL.md, "Stall rescue"): work queued,
    /// the level at the contexts, no queued task taken for
    /// `stall_rescue_after`. Activates one worker beyond the contexts — the
    /// only activation that does: a parked one, else (flexible concurrency
    /// only) a new thread. It runs what it finds and parks again as surplus
    /// after its first task (`park_if_surplus`), so the level returns to the
    /// contexts by itself.
    pub(crate) fn rescue(&self) -> Activated {
        // Counted before the worker can run, taken back if none comes: a
        // reader that saw the rescued work done (it happens after the wake)
        // then sees the count too.
        Counters::bump(&self.stats.stall_rescues);
        let woken = self.counts.load().parked() > 0 && self.wake_one();
        let outcome = if woken {
            Activated::Woken
        } else if self.config.flexible_concurrency {
            self.spawn_worker()
        } else {
            Activated::Declined
        };
        if !matches!(outcome, Activated::Woken | Activated::Created) {
            self.stats.stall_rescues.fetch_sub(1, Ordering::Relaxed);
        }
        outcome
    }

    /// Tasks taken from a queue or a deque so far (every worker and guest):
    /// the stall rescue's measure of progress. Relaxed loads of monotonic
    /// counters; a stale sum only delays a rescue by a tick.
    pub(crate) fn tasks_taken(&self) -> u64 {
        let hwm = self.slots_high_water.load(Ordering::Acquire);
        self.slots[..hwm]
            .iter()
            .map(|s| s.executed.load(Ordering::Relaxed) as u64)
            .sum()
    }

    /// Wakes the most recently parked worker. The waker performs the worker's
    /// `Parked -> Active` transition itself, under the idle lock, so that the counts
    /// are right before the woken thread even runs and no second waker picks it.
    pub(crate) fn wake_one(&self) -> bool {
        let mut idle = self.idle.lock();
        let Some(slot) = idle.pop() else {
            return false;
        };
        self.counts
            .transition(WorkerState::Parked, WorkerState::Active);
        drop(idle);
        Counters::bump(&self.stats.workers_woken);
        if let Some(u) = self.slots[slot].unparker.lock().as_ref() {
            u.unpark();
        }
        true
    }

    pub(crate) fn wake_all(&self) {
        while self.wake_one() {}
    }

    /// Graceful shutdown, the body of `Drop for Scheduler` after the watchdog
    /// stopped: from now on idle workers exit instead of parking once no work
    /// is left anywhere (queued work still runs, and running tasks may still
    /// fork and queue work, which runs too); wake the parked ones, then join
    /// every worker thread — also threads started meanwhile to replace waiting
    /// workers — until none is left. `join_workers` is false when called on a
    /// worker of this very scheduler, which cannot wait for itself.
    pub(crate) fn shut_down(&self, join_workers: bool) {
        self.shutdown.store(true, Ordering::SeqCst);
        self.wake_all();
        if !join_workers {
            return;
        }
        loop {
            // Taken under the lock, joined outside it: an exiting worker may
            // still activate (and so spawn and register) another.
            let threads = std::mem::take(&mut *self.worker_threads.lock());
            if threads.is_empty() {
                // Every thread ever spawned was joined: a spawner registers its
                // thread before it returns, and the spawners are workers we
                // joined (the watchdog stopped before, clients cannot reach a
                // scheduler being dropped).
                return;
            }
            for t in threads {
                // A worker never unwinds (tasks catch their panics); if one
                // did, shutdown still goes on.
                let _ = t.join();
            }
        }
    }

    /// Starts a worker thread if `total < workers_max`.
    pub(crate) fn spawn_worker(&self) -> Activated {
        let Some(after) = self.counts.try_add_worker(self.config.workers_max) else {
            Counters::bump(&self.stats.worker_cap_reached);
            return Activated::CapReached;
        };
        // A worker that just left is uncounted before it returns its slot, so at
        // the cap a slot may be missing for a moment: treat that as the cap.
        let Some(slot) = self.take_slot() else {
            self.counts.remove_worker(WorkerState::Active);
            Counters::bump(&self.stats.worker_cap_reached);
            return Activated::CapReached;
        };
        self.peak_workers
            .fetch_max(after.total(), Ordering::Relaxed);
        let parker = Parker::new();
        self.register_unparker(slot, &parker);
        let shared = self.arc();
        // The new thread takes the slot's deque itself: were the spawn refused,
        // a deque moved into the closure would be lost with it.
        let spawned = std::thread::Builder::new()
            .name(format!("maestro-{}-{slot}", self.config.name))
            .spawn(move || crate::worker::worker_main(shared, slot, parker));
        match spawned {
            Ok(handle) => {
                let mut threads = self.worker_threads.lock();
                if threads.len() >= self.config.workers_max {
                    // Idle extra workers come and go: forget the finished ones.
                    threads.retain(|h| !h.is_finished());
                }
                threads.push(handle);
                drop(threads);
                Counters::bump(&self.stats.workers_created);
                Activated::Created
            }
            Err(_) => {
                self.release_slot(slot, None);
                self.counts.remove_worker(WorkerState::Active);
                Counters::bump(&self.stats.worker_cap_reached);
                Activated::CapReached
            }
        }
    }

    /// A free worker slot (lowest first), if any.
    pub(crate) fn take_slot(&self) -> Option<usize> {
        self.free_slots.lock().pop_first()
    }

    /// Publishes the parker of a worker (or guest) taking `slot`, so wakers
    /// reach it.
    pub(crate) fn register_unparker(&self, slot: usize, parker: &Parker) {
        *self.slots[slot].unparker.lock() = Some(parker.unparker().clone());
    }

    /// The owner side of `slot`'s deque, for the thread that took the slot
    /// (made on the slot's first use). Thieves see the deque from now on.
    pub(crate) fn take_deque(&self, slot: usize) -> Worker<JobRef> {
        let s = &self.slots[slot];
        // Taken out of the lock first: no code panics while holding it.
        let free = s.deque.lock().take();
        let deque = match free {
            Some(d) => d,
            None => {
                let d = Worker::new_lifo();
                assert!(
                    s.stealer.set(d.stealer()).is_ok(),
                    "slot {slot}: its deque is taken by another thread (a slot taken twice)"
                );
                d
            }
        };
        // AcqRel: pairs with the Acquire loads of the high-water mark before a
        // thief or `has_work` reads the stealers (the stealer set above is
        // visible to whoever sees this slot below the mark).
        self.slots_high_water.fetch_max(slot + 1, Ordering::AcqRel);
        deque
    }

    /// Frees `slot`, giving back its deque (empty) if the leaving thread took it.
    pub(crate) fn release_slot(&self, slot: usize, deque: Option<Worker<JobRef>>) {
        let s = &self.slots[slot];
        if let Some(d) = deque {
            assert!(
                d.is_empty(),
                "slot {slot} given back with jobs in its deque"
            );
            let previous = s.deque.lock().replace(d);
            assert!(
                previous.is_none(),
                "slot {slot}: two deques given back (a slot taken twice)"
            );
        }
        *s.unparker.lock() = None;
        self.free_slots.lock().insert(slot);
    }

    // ---- parking --------------------------------------------------------------

    /// Parks an active worker that found no work. Returns `Retry` if work appeared
    /// (or shutdown began) before it slept, `Woken` after a waker activated it, or
    /// `Exit` if it timed out as an extra worker and left (already uncounted).
    pub(crate) fn park_idle(&self, slot: usize, parker: &Parker) -> ParkOutcome {
        {
            let mut idle = self.idle.lock();
            self.counts
                .transition(WorkerState::Active, WorkerState::Parked);
            // The worker's half of the Dekker pair: "I am parked" (SeqCst RMW above)
            // then "is there work?" (has_work fences and loads SeqCst).
            if self.has_work() || self.shutdown.load(Ordering::SeqCst) {
                self.counts
                    .transition(WorkerState::Parked, WorkerState::Active);
                return ParkOutcome::Retry;
            }
            idle.push(slot);
        }
        Counters::bump(&self.stats.workers_parked);
        self.sleep_until_woken(slot, parker)
    }

    /// Parks an active worker if the active level exceeds the contexts (after its
    /// current task; workers are never pre-empted). During shutdown it parks
    /// nobody: it returns `Exit` (the worker already uncounted) if no work is
    /// left anywhere, else `None`.
    pub(crate) fn park_if_surplus(&self, slot: usize, parker: &Parker) -> Option<ParkOutcome> {
        {
            let mut idle = self.idle.lock();
            // Never park during shutdown: a parked worker would sleep until its
            // idle timeout before seeing it, and the scheduler's drop joins it.
            // Leave instead once no work is left (as the idle path does), else
            // go on working. Read under the idle lock, which `wake_all` takes
            // after setting the flag: either we see the flag or the waker sees
            // us on the list.
            if self.shutdown.load(Ordering::SeqCst) {
                drop(idle);
                if self.has_work() {
                    return None;
                }
                self.counts.remove_worker(WorkerState::Active);
                Counters::bump(&self.stats.workers_exited);
                return Some(ParkOutcome::Exit);
            }
            if !self
                .counts
                .try_park_surplus(self.config.contexts, self.config.count_sys_inactive)
            {
                return None;
            }
            idle.push(slot);
        }
        Counters::bump(&self.stats.surplus_parks);
        Counters::bump(&self.stats.workers_parked);
        Some(self.sleep_until_woken(slot, parker))
    }

    fn sleep_until_woken(&self, slot: usize, parker: &Parker) -> ParkOutcome {
        loop {
            parker.park_timeout(self.config.idle_worker_exit);
            let mut idle = self.idle.lock();
            let Some(pos) = idle.iter().position(|&s| s == slot) else {
                // A waker removed us and already moved us to Active.
                return ParkOutcome::Woken;
            };
            let c = self.counts.load();
            let shutting_down = self.shutdown.load(Ordering::SeqCst);
            let callers = self.guests_now.load(Ordering::Relaxed);
            if shutting_down || c.total().saturating_sub(callers) > self.config.initial_workers {
                // Leave: extra workers give their thread back after an idle period.
                idle.swap_remove(pos);
                self.counts.remove_worker(WorkerState::Parked);
                drop(idle);
                Counters::bump(&self.stats.workers_exited);
                return ParkOutcome::Exit;
            }
            // Spurious wake-up or timeout of a base worker: stay parked.
        }
    }

    // ---- admission control -------------------------------------------------------

    /// One sample of the demand on the contexts: (busy workers + queued
    /// roots) ÷ contexts (`admission.rs`, "Load").
    pub(crate) fn demand(&self) -> f64 {
        let active = self.active_level(self.counts.load());
        let busy = active.saturating_sub(self.searching.load(Ordering::Relaxed));
        (busy + self.queued_roots()) as f64 / self.config.contexts as f64
    }

    /// Roots waiting in every class's queues (the default class's included).
    fn queued_roots(&self) -> usize {
        self.roots.len()
            + (1..self.classes.defined())
                .map(|i| self.classes.slot(ClassId::from_index(i)).roots.len())
                .sum::<usize>()
    }

    /// Whether class `class` has roots queued (the default class's are
    /// `roots`).
    pub(crate) fn class_has_roots(&self, class: ClassId) -> bool {
        if class == ClassId::DEFAULT {
            !self.roots.is_empty()
        } else {
            !self.classes.slot(class).roots.is_empty()
        }
    }

    /// After a load update: every class's queue admits what the load allows.
    /// What running statements have charged, over every class (`memory.rs`).
    pub(crate) fn memory_charged(&self) -> u64 {
        (0..self.classes.defined())
            .map(|i| {
                self.classes
                    .memory_pool(ClassId::from_index(i))
                    .used_bytes()
            })
            .sum()
    }

    /// The loads admission control judges by (watchdog's moving averages).
    pub(crate) fn admission_loads(&self) -> crate::admission::Load {
        // Relaxed: a statistic; a stale load delays a decision by one sample.
        let bits = |a: &AtomicU64| f64::from_bits(a.load(Ordering::Relaxed));
        crate::admission::Load {
            cpu: bits(&self.admission_load_bits),
            memory: self
                .config
                .memory_budget_bytes
                .map(|_| bits(&self.admission_memory_bits)),
        }
    }

    pub(crate) fn regrant_admissions(&self, load: crate::admission::Load) {
        for i in 0..self.classes.defined() {
            let c = ClassId::from_index(i);
            if let Some(limits) = self.classes.admission_limits(c) {
                self.classes.slot(c).admission.regrant(&limits, load);
            }
        }
    }

    // ---- observation ------------------------------------------------------------

    pub(crate) fn sample(&self) -> TimelineSample {
        let c = self.counts.load();
        let queued_roots = self.queued_roots();
        let queued_tasks = self.pools.iter().map(Pool::len).sum();
        TimelineSample {
            t_ms: self.started.elapsed().as_secs_f64() * 1e3,
            active: self.active_level(c),
            blocked: c.blocked(),
            inactive_by_user: c.inactive_by_user(),
            waiting_for_graph: c.waiting_for_graph(),
            parked: c.parked(),
            total: c.total(),
            queued_roots,
            queued_tasks,
            hint: match self.config.hint {
                HintPolicy::PinnedToContexts => self.config.contexts,
                HintPolicy::Ema { .. } => self.hint.load(Ordering::Relaxed),
            },
        }
    }

    pub(crate) fn stats(&self) -> SchedulerStats {
        let r = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
        let s = &self.stats;
        let hwm = self.slots_high_water.load(Ordering::Acquire);
        let sum_slots = |counter: fn(&Slot) -> &AtomicUsize| -> usize {
            self.slots[..hwm]
                .iter()
                .map(|s| counter(s).load(Ordering::Relaxed))
                .sum()
        };
        // A job a caller ran itself is a task all the same: the scheduler
        // decided where it runs (admission), only no queue carried it.
        let by_callers = r(&s.callers_counted) + r(&s.callers_extra);
        let executed = self.tasks_taken() + by_callers;
        let stolen = sum_slots(|s| &s.stolen);
        let joins = sum_slots(|s| &s.created);
        let jobs_created = r(&s.jobs_created) + joins as u64 + by_callers;
        let c = self.counts.load();
        SchedulerStats {
            name: self.config.name.clone(),
            contexts: self.config.contexts,
            graphs_submitted: r(&s.graphs_submitted),
            nodes_created: r(&s.nodes_created),
            jobs_created,
            tasks_created: r(&s.nodes_created) + jobs_created,
            tasks_executed: executed,
            tasks_stolen: stolen as u64,
            workers_created: r(&s.workers_created),
            workers_exited: r(&s.workers_exited),
            workers_parked: r(&s.workers_parked),
            workers_woken: r(&s.workers_woken),
            worker_cap_reached: r(&s.worker_cap_reached),
            blocked_events: r(&s.blocked_events),
            inactive_by_user_events: r(&s.inactive_by_user_events),
            waiting_for_graph_events: r(&s.waiting_for_graph_events),
            surplus_parks: r(&s.surplus_parks),
            watchdog_activations: r(&s.watchdog_activations),
            stall_rescues: r(&s.stall_rescues),
            latch_spin_acquires: r(&s.latch_spin_acquires),
            latch_parks: r(&s.latch_parks),
            parallel_for_tasks: r(&s.parallel_for_tasks),
            parallel_for_splits: r(&s.parallel_for_splits),
            task_panics: r(&s.task_panics),
            callers_counted: r(&s.callers_counted),
            callers_extra: r(&s.callers_extra),
            callers_handed_off: r(&s.callers_handed_off),
            callers_waited_turn: r(&s.callers_waited_turn),
            workers_total: c.total(),
            workers_active: self.active_level(c),
            workers_blocked: c.blocked(),
            workers_inactive_by_user: c.inactive_by_user(),
            workers_waiting_for_graph: c.waiting_for_graph(),
            workers_parked_now: c.parked(),
            workers_peak: self.peak_workers.load(Ordering::Relaxed),
            concurrency_hint: self.concurrency_hint(),
        }
    }

    /// The `Arc` this `Shared` lives in (workers and the watchdog hold clones).
    fn arc(&self) -> Arc<Shared> {
        self.me
            .upgrade()
            .expect("Shared is only reachable through a live Arc")
    }
}

/// Outcome of a park attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ParkOutcome {
    /// Did not sleep: work or shutdown appeared during the attempt.
    Retry,
    /// Slept and was activated by a waker.
    Woken,
    /// Left the pool (no longer counted); the thread must return.
    Exit,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shared() -> Arc<Shared> {
        Shared::new(SchedulerConfig::single_pool().with_contexts(2))
    }

    #[test]
    fn a_slot_keeps_one_deque_and_its_stealer_sees_what_the_next_taker_pushes() {
        let s = shared();
        let slot = s.take_slot().expect("a free slot");
        let first = s.take_deque(slot);
        let stealer = s.slots[slot]
            .stealer
            .get()
            .expect("made on first use")
            .clone();
        s.release_slot(slot, Some(first));
        assert_eq!(s.take_slot(), Some(slot), "the lowest free slot is reused");
        let again = s.take_deque(slot);
        // SAFETY: the closure borrows nothing, so the job may run whenever.
        again.push(unsafe { crate::job::HeapJob::into_job_ref(|| {}) });
        assert!(
            s.has_work(),
            "has_work sees the slot's deque without a lock"
        );
        match stealer.steal() {
            // SAFETY: a JobRef from `into_job_ref`, run once (it frees itself).
            crossbeam_deque::Steal::Success(j) => unsafe { j.execute() },
            other => panic!(
                "the stealer made with the first taker's deque must reach the second's: {:?}",
                other.is_empty()
            ),
        }
        s.release_slot(slot, Some(again));
    }

    #[test]
    #[should_panic(expected = "given back with jobs")]
    fn a_slot_given_back_with_jobs_is_refused() {
        let s = shared();
        let slot = s.take_slot().expect("a free slot");
        let d = s.take_deque(slot);
        // SAFETY: never run; the panic below leaks the boxed job, which is
        // harmless (it captures nothing).
        d.push(unsafe { crate::job::HeapJob::into_job_ref(|| {}) });
        s.release_slot(slot, Some(d));
    }
}
