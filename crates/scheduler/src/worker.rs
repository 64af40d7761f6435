//! Worker threads: the loop that finds and runs tasks, and the state transitions
//! (active ⇄ blocked / inactive-by-user / waiting-for-graph) that tasks trigger
//! through the scheduler-aware primitives.

use std::cell::{Cell, RefCell};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use crossbeam_deque::{Steal, Worker};
use crossbeam_utils::Backoff;
use crossbeam_utils::sync::Parker;

use crate::class::ClassId;
use crate::config::BlockActivation;
use crate::counts::WorkerState;
use crate::graph::{GraphInner, Step};
use crate::job::JobRef;
use crate::queues::{Popped, Task};
use crate::shared::{Activation, ParkOutcome, Shared};
use crate::stats::Counters;

pub(crate) struct WorkerThread {
    pub(crate) shared: Arc<Shared>,
    pub(crate) slot: usize,
    pub(crate) deque: Worker<JobRef>,
    parker: Parker,
    rng: RefCell<fastrand::Rng>,
    state: Cell<WorkerState>,
    ready: RefCell<Vec<u32>>,
    /// The workload class this worker counts for (`ClassId::NONE` while it
    /// counts for none; `class.rs`, "Shares").
    counted: Cell<ClassId>,
    /// When this worker's time in its class was last added to the class's
    /// service (`Classes::now_ns`; `class.rs`, "Shares").
    class_since: Cell<u64>,
    /// Tasks this worker looked for (between tasks, `roots` true) since it
    /// last took a root: the decay within a class (PROTOCOL.md, "Decay
    /// within a class"). Worker-local: no shared write.
    since_root: Cell<u32>,
}

/// After this many tasks without taking a root, a worker starts a queued
/// root of the class it counts for before its class's older pieces (the
/// decay within a class; guessed: a few operator tasks, so a new short
/// statement waits for at most that many pieces of a long one per worker).
pub(crate) const DECAY_TASKS: u32 = 4;

thread_local! {
    static CURRENT: Cell<*const WorkerThread> = const { Cell::new(std::ptr::null()) };
}

impl WorkerThread {
    /// The worker running on this thread, if any.
    pub(crate) fn current<'a>() -> Option<&'a WorkerThread> {
        let p = CURRENT.with(Cell::get);
        // SAFETY: CURRENT is set by `worker_main` to a WorkerThread on its own stack
        // and reset to null before that frame ends; it is thread-local, so a non-null
        // value always points to a live WorkerThread owned by this very thread, and
        // every caller uses the reference within a task, i.e. inside that frame.
        unsafe { p.as_ref() }
    }

    pub(crate) fn new(
        shared: Arc<Shared>,
        slot: usize,
        deque: Worker<JobRef>,
        parker: Parker,
    ) -> WorkerThread {
        let seed = shared.next_seed();
        WorkerThread {
            shared,
            slot,
            deque,
            parker,
            rng: RefCell::new(fastrand::Rng::with_seed(seed)),
            state: Cell::new(WorkerState::Active),
            ready: RefCell::new(Vec::new()),
            counted: Cell::new(ClassId::NONE),
            class_since: Cell::new(0),
            since_root: Cell::new(0),
        }
    }

    /// Runs `f` with this worker as the thread's current worker. `f` must not
    /// unwind (callers catch panics inside it), so the reset always runs.
    pub(crate) fn run_as_current<R>(&self, f: impl FnOnce() -> R) -> R {
        let previous = CURRENT.with(|c| c.replace(self));
        assert!(
            previous.is_null(),
            "a thread can be the worker of one scheduler at a time"
        );
        let r = f();
        CURRENT.with(|c| c.set(std::ptr::null()));
        r
    }

    /// The deque and parker back (a guest keeps them for its next job).
    pub(crate) fn into_parts(self) -> (Worker<JobRef>, Parker) {
        self.count_for(ClassId::NONE);
        (self.deque, self.parker)
    }

    /// Counts this worker for `class` from now on (none: `ClassId::NONE`), if
    /// its scheduler has classes.
    pub(crate) fn count_for(&self, class: ClassId) {
        let counted = self.counted.get();
        let classes = &self.shared.classes;
        if counted == class {
            if class != ClassId::NONE {
                classes.checkpoint(class, &self.class_since);
            }
            return;
        }
        if classes.defined() == 0 && counted == ClassId::NONE {
            return;
        }
        // An id this scheduler does not have runs in its default class.
        let class = if class == ClassId::NONE || classes.exists(class) {
            class
        } else {
            ClassId::DEFAULT
        };
        classes.move_count(counted, class, &self.class_since);
        self.counted.set(class);
    }

    pub(crate) fn state(&self) -> WorkerState {
        self.state.get()
    }

    /// Whether this worker belongs to `shared`'s scheduler.
    pub(crate) fn belongs_to(&self, shared: &Shared) -> bool {
        std::ptr::eq(Arc::as_ptr(&self.shared), shared)
    }

    fn own_pool(&self) -> usize {
        self.slot % self.shared.pools.len()
    }

    /// Finds a task: own deque, then (with probability p) pools before roots, then
    /// other workers' deques. `roots` false is used while waiting inside a `join`, so
    /// a waiter helps with started work but does not start new graphs.
    pub(crate) fn find_task(&self, roots: bool) -> Option<(Task, Popped)> {
        // Urgent roots (above the default priority, e.g. transactions) go
        // before any partitioned work, so short tasks do not queue behind the
        // operators of long queries — also while this worker waits in a join
        // or scope (`roots == false`), where ordinary roots are not started
        // (PROTOCOL.md, "Priorities").
        // Within the urgent share only: beyond it, urgent roots wait their turn
        // in the ordinary order below, so partitioned work keeps the rest of the
        // contexts (config `urgent_share`).
        // Never while this thread holds a scheduler-aware lock in a wait
        // (`roots == false`): the root could want that very lock and deadlock
        // on its own thread (PROTOCOL.md, "Locks held while waiting").
        if self.shared.classes.defined() > 0 {
            if let Some(t) = self.pop_class_root(true, roots) {
                self.since_root.set(0);
                return Some(t);
            }
            if roots && let Some(t) = self.pop_decayed_root() {
                return Some(t);
            }
        }
        if (roots || crate::sync::locks_held() == 0)
            && self.shared.urgent_below_share()
            && let Some(t) = self.shared.roots.pop_above(crate::DEFAULT_PRIORITY)
        {
            self.shared.queued.fetch_sub(1, Ordering::SeqCst);
            return Some((t, Popped::Urgent));
        }
        if let Some(j) = self.deque.pop() {
            return Some((Task::Job(j), Popped::Own));
        }
        let cfg = &self.shared.config;
        let pools_first = cfg.pools_first_probability >= 1.0
            || self.rng.borrow_mut().f64() < cfg.pools_first_probability;
        if pools_first || !roots {
            if let Some(t) = self.pop_pools() {
                return Some(t);
            }
            if let Some(t) = self.steal_deques() {
                return Some(t);
            }
            if roots { self.pop_root() } else { None }
        } else {
            self.pop_root()
                .or_else(|| self.pop_pools())
                .or_else(|| self.steal_deques())
        }
    }

    fn pop_pools(&self) -> Option<(Task, Popped)> {
        let pools = &self.shared.pools;
        let own = self.own_pool();
        for k in 0..pools.len() {
            let i = (own + k) % pools.len();
            if let Some(t) = pools[i].pop() {
                self.shared.queued.fetch_sub(1, Ordering::SeqCst);
                return Some((t, if k == 0 { Popped::Own } else { Popped::Stolen }));
            }
        }
        None
    }

    /// A root chosen across workload classes (`class.rs`, "Shares"): with
    /// `below_share`, only of the class below its share; else of the class
    /// with the smallest pass that has roots. `roots` false (waiting in a join): only urgent
    /// classes, and none while this thread holds a scheduler-aware lock (as
    /// for urgent roots in `find_task`).
    fn pop_class_root(&self, below_share: bool, roots: bool) -> Option<(Task, Popped)> {
        let shared = &*self.shared;
        if !roots && crate::sync::locks_held() > 0 {
            return None;
        }
        // Roots waiting: for the default class, urgent ones count only while
        // waiting in a join.
        let default_roots = |id: ClassId| {
            if id == ClassId::DEFAULT && !roots {
                shared.roots.any_above(crate::DEFAULT_PRIORITY)
            } else {
                shared.class_has_roots(id)
            }
        };
        let allowed = |id: ClassId, priority: usize| {
            roots || id == ClassId::DEFAULT || crate::caller::is_urgent(priority)
        };
        let class = shared.classes.choose(
            below_share,
            // Between tasks (`roots`) this worker is about to leave
            // the class it counts for; inside a join it stays in it.
            if roots {
                self.counted.get()
            } else {
                ClassId::NONE
            },
            default_roots,
            allowed,
        )?;
        let (t, priority) = if class == ClassId::DEFAULT {
            if roots {
                shared
                    .roots
                    .pop(shared.config.priority_bias, &mut self.rng.borrow_mut())?
            } else {
                (
                    shared.roots.pop_above(crate::DEFAULT_PRIORITY)?,
                    crate::DEFAULT_PRIORITY + 1,
                )
            }
        } else {
            shared
                .classes
                .slot(class)
                .roots
                .pop(shared.config.priority_bias, &mut self.rng.borrow_mut())?
        };
        shared.queued.fetch_sub(1, Ordering::SeqCst);
        // Only the default class's urgent roots count in the urgent share.
        let popped = if class == ClassId::DEFAULT && crate::caller::is_urgent(priority) {
            Popped::Urgent
        } else {
            Popped::Own
        };
        Some((t, popped))
    }

    /// The decay within a class (PROTOCOL.md, "Decay within a class"): a
    /// worker that has run [`DECAY_TASKS`] tasks since it last took a root,
    /// and whose class (not the default: its roots keep today's order) has
    /// roots queued, takes one before its deque and the pools — so the pieces
    /// of a statement that has run long yield, on this worker, to a statement
    /// of the same class that has just arrived.
    fn pop_decayed_root(&self) -> Option<(Task, Popped)> {
        let class = self.counted.get();
        if class == ClassId::NONE || class == ClassId::DEFAULT {
            return None;
        }
        let n = self.since_root.get().saturating_add(1);
        self.since_root.set(n);
        if n <= DECAY_TASKS || !self.shared.class_has_roots(class) {
            return None;
        }
        let shared = &*self.shared;
        let (t, _) = shared
            .classes
            .slot(class)
            .roots
            .pop(shared.config.priority_bias, &mut self.rng.borrow_mut())?;
        shared.queued.fetch_sub(1, Ordering::SeqCst);
        shared.classes.count_decayed(class);
        self.since_root.set(0);
        Some((t, Popped::Own))
    }

    fn pop_root(&self) -> Option<(Task, Popped)> {
        if self.shared.classes.defined() > 0 {
            let t = self.pop_class_root(false, true);
            if t.is_some() {
                self.since_root.set(0);
            }
            return t;
        }
        let (t, priority) = self
            .shared
            .roots
            .pop(self.shared.config.priority_bias, &mut self.rng.borrow_mut())?;
        self.shared.queued.fetch_sub(1, Ordering::SeqCst);
        let popped = if crate::caller::is_urgent(priority) {
            Popped::Urgent
        } else {
            Popped::Own
        };
        Some((t, popped))
    }

    fn steal_deques(&self) -> Option<(Task, Popped)> {
        let hwm = self.shared.slots_high_water.load(Ordering::Acquire);
        if hwm <= 1 {
            return None;
        }
        let start = self.rng.borrow_mut().usize(..hwm);
        for k in 0..hwm {
            let i = (start + k) % hwm;
            if i == self.slot {
                continue;
            }
            let Some(stealer) = self.shared.slots[i].stealer.get() else {
                continue;
            };
            loop {
                match stealer.steal() {
                    Steal::Success(j) => return Some((Task::Job(j), Popped::Stolen)),
                    Steal::Empty => break,
                    Steal::Retry => std::hint::spin_loop(),
                }
            }
        }
        None
    }

    /// Runs one task to completion (a graph task runs its chain of first-ready
    /// successors). Panics never escape: nodes and jobs catch their own.
    pub(crate) fn execute(&self, task: Task, popped: Popped) {
        let slot = &self.shared.slots[self.slot];
        if popped == Popped::Stolen {
            slot.stolen.fetch_add(1, Ordering::Relaxed);
        }
        let _urgent =
            (popped == Popped::Urgent).then(|| crate::caller::UrgentGuard::enter(&self.shared));
        match task {
            Task::Job(job) => {
                slot.executed.fetch_add(1, Ordering::Relaxed);
                // SAFETY: the job was popped from a queue, which hands each JobRef to
                // exactly one taker; stack jobs outlive this call because their owner
                // waits for their latch.
                let r = catch_unwind(AssertUnwindSafe(|| unsafe { job.execute() }));
                if r.is_err() {
                    // Joined jobs record their own panics; a detached job's
                    // (`Scheduler::spawn_detached`) ends here, counted.
                    Counters::bump(&self.shared.stats.task_panics);
                }
            }
            Task::Node { graph, node } => self.run_graph_chain(graph, node),
        }
    }

    /// Runs `node`, then — paper §4 — the first successor it made ready on this same
    /// worker, dispatching the other ready successors to random pools.
    fn run_graph_chain(&self, graph: Arc<GraphInner>, mut node: u32) {
        let shared = &*self.shared;
        let executed = &shared.slots[self.slot].executed;
        let mut ready = self.ready.take();
        loop {
            executed.fetch_add(1, Ordering::Relaxed);
            if graph.run_node(node) == Step::Reissue {
                shared.push_node(self.own_pool(), &graph, node);
                shared.notify_work(1);
                break;
            }
            ready.clear();
            graph.complete_node(node, &mut ready);
            let Some((&first, rest)) = ready.split_first() else {
                break;
            };
            if !rest.is_empty() {
                let pools = shared.pools.len();
                for &s in rest {
                    let pool = if pools == 1 {
                        0
                    } else {
                        self.rng.borrow_mut().usize(..pools)
                    };
                    shared.push_node(pool, &graph, s);
                }
                shared.notify_work(rest.len());
            }
            if self.is_surplus() {
                // Give the successor to the pools and let the caller park this worker.
                shared.push_node(self.own_pool(), &graph, first);
                shared.notify_work(1);
                break;
            }
            node = first;
        }
        self.ready.replace(ready);
    }

    fn is_surplus(&self) -> bool {
        let c = self.shared.counts.load();
        self.shared.active_level(c) > self.shared.config.contexts
    }

    /// Enters an inactive state for the duration of the returned guard. Nested calls
    /// (a blocked wait inside a `blocking` region) keep the outer state.
    pub(crate) fn enter(&self, state: WorkerState) -> Option<StateGuard<'_>> {
        debug_assert_ne!(state, WorkerState::Active);
        debug_assert_ne!(state, WorkerState::Parked);
        if self.state.get() != WorkerState::Active {
            return None;
        }
        let shared = &*self.shared;
        shared.counts.transition(WorkerState::Active, state);
        self.state.set(state);
        let stats = &shared.stats;
        match state {
            WorkerState::Blocked => Counters::bump(&stats.blocked_events),
            WorkerState::InactiveByUser => Counters::bump(&stats.inactive_by_user_events),
            WorkerState::WaitingForGraph => Counters::bump(&stats.waiting_for_graph_events),
            other => panic!("enter({other:?}) is not a task-initiated state"),
        }
        // Long inactivity: activate another worker at once if there is work for it
        // (paper §5). Short blocking is left to the watchdog, except that a parked
        // worker may be woken (`BlockActivation::WakeParked`). This runs inside
        // parking_lot_core's `before_sleep` for *blocked*: everything it reaches
        // uses atomics or std locks only (see `shared::hooksafe`).
        let activation = match state {
            WorkerState::WaitingForGraph => Some(Activation::Replace),
            WorkerState::InactiveByUser if shared.config.count_sys_inactive => {
                Some(Activation::Replace)
            }
            WorkerState::Blocked
                if shared.config.count_sys_inactive
                    && shared.config.block_activation == BlockActivation::WakeParked =>
            {
                Some(Activation::Blocked)
            }
            _ => None,
        };
        if let Some(why) = activation
            && shared.has_work()
        {
            shared.activate(why);
        }
        Some(StateGuard {
            worker: self,
            state,
        })
    }
}

/// Returns the worker to *active* when dropped (also during unwinding).
pub(crate) struct StateGuard<'a> {
    worker: &'a WorkerThread,
    state: WorkerState,
}

impl Drop for StateGuard<'_> {
    fn drop(&mut self) {
        self.worker
            .shared
            .counts
            .transition(self.state, WorkerState::Active);
        self.worker.state.set(WorkerState::Active);
    }
}

/// Runs `f` with the current worker (if any) in `state`; on a client thread it just
/// runs `f`.
pub(crate) fn wait_as_inactive<R>(state: WorkerState, f: impl FnOnce() -> R) -> R {
    let _guard = WorkerThread::current().and_then(|w| w.enter(state));
    f()
}

/// Hook for primitives about to sleep: marks the worker blocked; the returned guard
/// marks it active again.
pub(crate) fn enter_blocked<'a>() -> Option<StateGuard<'a>> {
    WorkerThread::current().and_then(|w| w.enter(WorkerState::Blocked))
}

/// Counts the current worker (if any) for `class` (`class.rs`, "Shares").
pub(crate) fn count_class(class: ClassId) {
    if let Some(w) = WorkerThread::current() {
        w.count_for(class);
    }
}

/// Body of every worker thread.
pub(crate) fn worker_main(shared: Arc<Shared>, slot: usize, parker: Parker) {
    let deque = shared.take_deque(slot);
    let worker = WorkerThread::new(shared, slot, deque, parker);
    crate::class::enter_worker_loop();
    worker.run_as_current(|| worker.run());
    let shared = worker.shared.clone();
    let (deque, _parker) = worker.into_parts();
    // Asserts the deque is empty: a worker exits only when no work is left.
    shared.release_slot(slot, Some(deque));
}

impl WorkerThread {
    fn run(&self) {
        let shared = &*self.shared;
        let spin_rounds = shared.config.idle_spin_rounds;
        loop {
            if let Some((task, popped)) = self.find_task(true) {
                self.execute(task, popped);
                if self.deque.is_empty()
                    && let Some(ParkOutcome::Exit) = shared.park_if_surplus(self.slot, &self.parker)
                {
                    return;
                }
                continue;
            }
            // Nothing to do: count for no class while searching and parked.
            self.count_for(ClassId::NONE);
            // Nothing found: look a little longer before giving the core back,
            // as a *searching* worker that an admitted caller may displace
            // (PROTOCOL.md, "Callers run, counted"): once the level exceeds
            // the contexts, stop searching and park as surplus.
            let backoff = Backoff::new();
            let mut found = None;
            let mut surplus = false;
            shared.searching.fetch_add(1, Ordering::Relaxed);
            for _ in 0..spin_rounds {
                if self.is_surplus() {
                    surplus = true;
                    break;
                }
                backoff.snooze();
                found = self.find_task(true);
                if found.is_some() {
                    break;
                }
            }
            shared.searching.fetch_sub(1, Ordering::Relaxed);
            if let Some((task, popped)) = found {
                self.execute(task, popped);
                continue;
            }
            if surplus {
                match shared.park_if_surplus(self.slot, &self.parker) {
                    Some(ParkOutcome::Exit) => return,
                    // Parked and woken, or no longer surplus: search again.
                    Some(_) | None => continue,
                }
            }
            if shared.shutdown.load(Ordering::SeqCst) && !shared.has_work() {
                shared.counts.remove_worker(WorkerState::Active);
                Counters::bump(&shared.stats.workers_exited);
                return;
            }
            match shared.park_idle(self.slot, &self.parker) {
                ParkOutcome::Retry | ParkOutcome::Woken => {}
                ParkOutcome::Exit => return,
            }
        }
    }

    /// Helps with other work until `done()` holds; after a short search without
    /// success, sleeps as *waiting for a graph* on `sleep` (used by join and scope).
    pub(crate) fn wait_until(&self, done: impl Fn() -> bool, sleep: impl Fn()) {
        let backoff = Backoff::new();
        while !done() {
            if let Some((task, popped)) = self.find_task(false) {
                self.execute(task, popped);
                backoff.reset();
                continue;
            }
            if !backoff.is_completed() {
                backoff.snooze();
                continue;
            }
            let _g = self.enter(WorkerState::WaitingForGraph);
            sleep();
            backoff.reset();
        }
    }
}
