//! Maestro's task scheduler: one pool of workers for short transactions and long
//! analytical queries, after Psaroudakis et al., *Task Scheduling for Highly
//! Concurrent Analytical and Transactional Main-Memory Workloads* (ADMS 2013).
//!
//! - Task graphs ([`TaskGraph`]) with one root, priorities, root queues per priority
//!   and depth-ordered task pools; the first ready successor runs on the same worker.
//! - A flexible concurrency level: workers that block in [`sync`] primitives, in
//!   [`sync::blocking`] regions or while waiting for a graph leave the active level;
//!   the watchdog (and, for long states, the waiting worker itself) activates others
//!   so that the active level stays at the number of hardware contexts.
//! - A concurrency hint ([`Scheduler::concurrency_hint`]) that partitionable
//!   operations use as their task limit, with splitting in [`Scheduler::parallel_for`].
//! - Cancellation and timeouts ([`CancelToken`]): work checks a token at
//!   checkpoints and unwinds; waiting re-raises it up to the statement's root.
//! - Workload classes ([`ClassSpec`]): weighted shares of the contexts between
//!   classes of work, a per-statement parallelism cap and a statement timeout
//!   per class (`class.rs`), decay within a class (`worker.rs`), and one text
//!   form of a class for every command (`class_spec.rs`).
//!
//! The protocol (states, transitions, why no wake-up is lost and no graph deadlocks)
//! is in `PROTOCOL.md` beside this crate's manifest.

mod abort;
mod admission;
mod caller;
mod cancel;
mod class;
mod class_spec;
mod config;
mod context;
mod counts;
mod graph;
mod hint;
mod job;
mod join;
mod latch;
mod memory;
mod parallel;
mod queues;
mod shared;
mod stats;
pub mod sync;
mod turn;
mod watchdog;
mod worker;

use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use parking_lot::Mutex;

pub use admission::{AdmissionCounts, AdmissionLimits, RejectReason, Rejected};
pub use cancel::{CancelReason, CancelToken, Cancelled, catch_cancelled};
pub use class::{
    CLASS_WEIGHT_MAX, CLASSES_MAX, ClassError, ClassId, ClassSpec, ClassStats, current_class,
    set_thread_class, with_class,
};
pub use class_spec::ClassSpecError;
pub use config::{
    BlockActivation, CallerRuns, ConfigError, HintPolicy, SchedulerConfig, detected_contexts,
};
pub use context::{TaskContext, current, current_context, with_context};
pub use counts::{WORKERS_MAX_LIMIT, WorkerCounts, WorkerState};
pub use graph::{GraphError, GraphHandle, NodeId, Step, TaskGraph, TaskPanic, panic_message};
pub use hint::HintEstimator;
pub use join::{Scope, join};
pub use memory::{MemoryPool, StatementMemory};
pub use parallel::ParallelForStats;
pub use queues::POOL_DEPTH_LEVELS;
pub use stats::{SchedulerReport, SchedulerStats, TimelineSample};
pub use watchdog::watchdog_wants;

use crate::job::{HeapJob, StackJob};
use crate::queues::Task;
use crate::shared::Shared;
use crate::stats::Counters;
use crate::watchdog::Watchdog;
use crate::worker::WorkerThread;

/// The tighter of two optional limits (`None`: no limit).
fn tighter<T: Ord>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Default priority of graphs and jobs (of `priority_levels`, 0 = lowest).
pub const DEFAULT_PRIORITY: usize = 1;

/// An admitted statement's place in its class (see [`Scheduler::admit`]):
/// dropping it ends the statement and admits the next one waiting.
pub struct Admitted<'a> {
    scheduler: &'a Scheduler,
    /// `None`: admitted without limits (nothing to give back).
    class: Option<ClassId>,
}

impl std::fmt::Debug for Admitted<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Admitted")
            .field("class", &self.class)
            .finish()
    }
}

impl Drop for Admitted<'_> {
    fn drop(&mut self) {
        if let Some(class) = self.class {
            let classes = &self.scheduler.shared.classes;
            classes.slot(class).admission.done(
                classes.admission_limits(class).as_ref(),
                self.scheduler.shared.admission_loads(),
            );
        }
    }
}

/// A running scheduler: its workers and its watchdog. Dropping it stops the
/// watchdog and lets the workers exit once the queues are empty.
pub struct Scheduler {
    shared: Arc<Shared>,
    watchdog: Mutex<Option<Watchdog>>,
}

/// Why the scheduler could not start.
#[derive(Debug)]
pub enum StartError {
    /// The configuration was refused.
    Config(ConfigError),
    /// The OS refused a thread.
    Thread(std::io::Error),
}

impl std::fmt::Display for StartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StartError::Config(e) => write!(f, "{e}"),
            StartError::Thread(e) => write!(f, "could not start a scheduler thread: {e}"),
        }
    }
}

impl std::error::Error for StartError {}

impl Scheduler {
    /// Starts `config.initial_workers` workers and the watchdog.
    pub fn new(config: SchedulerConfig) -> Result<Scheduler, StartError> {
        config.validate().map_err(StartError::Config)?;
        let shared = Shared::new(config);
        for _ in 0..shared.config.initial_workers {
            if shared.spawn_worker() != shared::Activated::Created {
                shared.shutdown.store(true, Ordering::SeqCst);
                shared.wake_all();
                return Err(StartError::Thread(std::io::Error::other(
                    "could not start the initial workers",
                )));
            }
        }
        let watchdog = Watchdog::start(shared.clone()).map_err(StartError::Thread)?;
        Ok(Scheduler {
            shared,
            watchdog: Mutex::new(Some(watchdog)),
        })
    }

    /// A preset by name with `contexts` overridden.
    pub fn with_preset(name: &str, contexts: usize) -> Result<Scheduler, StartError> {
        let cfg = SchedulerConfig::preset(name)
            .map_err(StartError::Config)?
            .with_contexts(contexts);
        Scheduler::new(cfg)
    }

    pub fn config(&self) -> &SchedulerConfig {
        &self.shared.config
    }

    pub fn contexts(&self) -> usize {
        self.shared.config.contexts
    }

    /// The maximum number of tasks a partitionable operation should create now.
    pub fn concurrency_hint(&self) -> usize {
        self.shared.concurrency_hint()
    }

    /// Submits a graph; its root goes to the root queue of its priority. The graph
    /// inherits the caller's [`TaskContext`].
    pub fn submit(&self, graph: TaskGraph) -> Result<GraphHandle, GraphError> {
        let n = graph.len();
        let inner = graph.build(current_context())?;
        Counters::bump(&self.shared.stats.graphs_submitted);
        Counters::add(&self.shared.stats.nodes_created, n as u64);
        let root = inner.root;
        let priority = inner.priority.min(self.shared.roots.levels() - 1);
        self.shared.push_class_root(
            inner.class,
            priority,
            Task::Node {
                graph: inner.clone(),
                node: root,
            },
        );
        Ok(GraphHandle { inner })
    }

    /// Runs `f` as a one-node graph and returns a handle to its result.
    pub fn spawn<T, F>(&self, f: F) -> JoinHandle<T>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        self.spawn_with_priority(DEFAULT_PRIORITY, f)
    }

    /// [`spawn`](Self::spawn) at a given priority.
    pub fn spawn_with_priority<T, F>(&self, priority: usize, f: F) -> JoinHandle<T>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        let slot = Arc::new(Mutex::new(None));
        let out = slot.clone();
        let mut g = TaskGraph::new().with_priority(priority).with_label("spawn");
        g.add(move || {
            *out.lock() = Some(f());
        });
        let handle = self.submit(g).expect("a one-node graph is valid");
        JoinHandle { handle, slot }
    }

    /// Starts `f` as a root job at `priority` and returns at once: the
    /// lightest way to start independent work (one allocation; no graph, no
    /// handle, no result). It inherits the caller's [`TaskContext`]. A panic in
    /// `f` is caught by the worker and counted in `task_panics`, and otherwise
    /// lost: use [`spawn`](Self::spawn) to observe it.
    pub fn spawn_detached<F>(&self, priority: usize, f: F)
    where
        F: FnOnce() + Send + 'static,
    {
        self.spawn_detached_in(current_class(), priority, f);
    }

    /// [`spawn_detached`](Self::spawn_detached) in workload class `class`.
    pub fn spawn_detached_in<F>(&self, class: ClassId, priority: usize, f: F)
    where
        F: FnOnce() + Send + 'static,
    {
        let ctx = current_context();
        // SAFETY: `f` is 'static, so the job borrows nothing that could end
        // before it runs; a root job runs exactly once (drop runs queued work).
        let job_ref =
            unsafe { HeapJob::into_job_ref(move || with_class(class, || with_context(ctx, f))) };
        Counters::bump(&self.shared.stats.jobs_created);
        let priority = priority.min(self.shared.roots.levels() - 1);
        self.shared
            .push_class_root(class, priority, Task::Job(job_ref));
    }

    // ---- workload classes -----------------------------------------------------

    /// Defines a workload class (see [`ClassSpec`]); the default class keeps
    /// today's behaviour and shares the contexts with the classes by weight.
    pub fn define_class(&self, spec: &ClassSpec) -> Result<ClassId, ClassError> {
        self.shared
            .classes
            .define(spec, self.shared.config.priority_levels)
    }

    /// Changes a class at run time (its weight, priority, cap, timeout, name).
    pub fn update_class(&self, class: ClassId, spec: &ClassSpec) -> Result<(), ClassError> {
        self.shared
            .classes
            .update(class, spec, self.shared.config.priority_levels)
    }

    /// The class named `name` (the default class is `"default"`).
    pub fn class_by_name(&self, name: &str) -> Option<ClassId> {
        self.shared.classes.by_name(name)
    }

    /// The statement timeout of `class`, for whoever starts statements in it.
    pub fn class_timeout(&self, class: ClassId) -> Option<std::time::Duration> {
        self.shared
            .classes
            .exists(class)
            .then(|| self.shared.classes.timeout(class))
            .flatten()
    }

    /// A token for one statement of `class`: the class's statement timeout
    /// and a memory account with the class's per-statement limit, drawing
    /// from the class's pool (its limit and usage in [`ClassStats`]).
    /// `memory_limit_bytes` tightens the statement limit further (`None`:
    /// the class's). An unknown class gets a plain token.
    pub fn statement_token(&self, class: ClassId, memory_limit_bytes: Option<u64>) -> CancelToken {
        self.statement_token_within(class, memory_limit_bytes, None)
    }

    /// [`statement_token`](Self::statement_token) with a timeout of the
    /// statement's own as well (a session's `statement_timeout`): the token
    /// stops at the earlier of it and the class's.
    pub fn statement_token_within(
        &self,
        class: ClassId,
        memory_limit_bytes: Option<u64>,
        timeout: Option<std::time::Duration>,
    ) -> CancelToken {
        let classes = &self.shared.classes;
        if !classes.exists(class) {
            return CancelToken::for_statement(
                timeout,
                Some(StatementMemory::new(memory_limit_bytes, None)),
            );
        }
        let limit = tighter(classes.statement_memory_limit(class), memory_limit_bytes);
        let timeout = tighter(classes.timeout(class), timeout);
        CancelToken::for_statement(
            timeout,
            Some(StatementMemory::new(
                limit,
                Some(classes.memory_pool(class)),
            )),
        )
    }

    /// Every class's weight and counters.
    pub fn class_stats(&self) -> Vec<ClassStats> {
        self.shared.classes.stats()
    }

    /// Admission control for one statement of `class` (`admission.rs`): runs
    /// now, waits in the class's bounded queue, or is rejected with a
    /// retryable error. Hold the returned guard while the statement runs.
    /// A class without limits (or an id this scheduler does not have) is
    /// admitted at once.
    pub fn admit(&self, class: ClassId) -> Result<Admitted<'_>, Rejected> {
        let classes = &self.shared.classes;
        let limits = classes
            .exists(class)
            .then(|| classes.admission_limits(class))
            .flatten();
        let Some(limits) = limits else {
            return Ok(Admitted {
                scheduler: self,
                class: None,
            });
        };
        let queue = &classes.slot(class).admission;
        let loads = || self.shared.admission_loads();
        match queue.admit(&limits, loads(), loads) {
            admission::Decision::Admitted => Ok(Admitted {
                scheduler: self,
                class: Some(class),
            }),
            admission::Decision::Rejected(reason) => Err(Rejected {
                class: classes.name(class),
                reason,
            }),
        }
    }

    /// The load admission control judges by (`admission.rs`): the moving
    /// average of (busy workers + queued roots) ÷ contexts.
    pub fn admission_load(&self) -> f64 {
        self.shared.admission_loads().cpu
    }

    /// The memory load admission control judges by: the moving average of
    /// what running statements charged ÷ `memory_budget_bytes` (`None`
    /// without a budget).
    pub fn admission_memory_load(&self) -> Option<f64> {
        self.shared.admission_loads().memory
    }

    /// [`install`](Self::install) in workload class `class`, at the class's
    /// priority: `f` and everything it spawns run under the class.
    pub fn install_in<R, F>(&self, class: ClassId, f: F) -> R
    where
        F: FnOnce() -> R + Send,
        R: Send,
    {
        let priority = if self.shared.classes.exists(class) {
            self.shared.classes.priority(class)
        } else {
            DEFAULT_PRIORITY
        };
        with_class(class, || {
            self.install_as(Placement::AdmitCaller, priority, f)
        })
    }

    /// Runs `f` on a worker of this scheduler and returns its result; runs it in
    /// place if already on one. The caller blocks meanwhile (as *waiting for a graph*
    /// if it is a worker of another scheduler).
    pub fn install<R, F>(&self, f: F) -> R
    where
        F: FnOnce() -> R + Send,
        R: Send,
    {
        self.install_with_priority(DEFAULT_PRIORITY, f)
    }

    /// [`install`](Self::install) at a given priority: above
    /// [`DEFAULT_PRIORITY`] the job is *urgent* — workers take it before their
    /// own queued work (e.g. a transaction amid analytical operators).
    pub fn install_with_priority<R, F>(&self, priority: usize, f: F) -> R
    where
        F: FnOnce() -> R + Send,
        R: Send,
    {
        self.install_as(Placement::AdmitCaller, priority, f)
    }

    /// [`install_with_priority`](Self::install_with_priority), but the job always
    /// runs on a worker of this scheduler, never on a client caller (for work
    /// whose placement must be the scheduler's alone, e.g. OpenMP masters under
    /// `MAESTRO_OMP_MASTER=scheduler`). On a worker of this scheduler it runs in
    /// place, as `install` does.
    pub fn install_on_worker<R, F>(&self, priority: usize, f: F) -> R
    where
        F: FnOnce() -> R + Send,
        R: Send,
    {
        self.install_as(Placement::Worker, priority, f)
    }

    fn install_as<R, F>(&self, placement: Placement, priority: usize, f: F) -> R
    where
        F: FnOnce() -> R + Send,
        R: Send,
    {
        let current = WorkerThread::current();
        if let Some(w) = current
            && w.belongs_to(&self.shared)
        {
            return f();
        }
        let priority = priority.min(self.shared.roots.levels() - 1);
        let class = current_class();
        if current.is_none()
            && placement == Placement::AdmitCaller
            && self.shared.config.caller_runs == CallerRuns::Counted
        {
            loop {
                match self.shared.admit_caller(class, priority) {
                    caller::Admission::Counted { slot } => {
                        let urgent = class == ClassId::DEFAULT && caller::is_urgent(priority);
                        return caller::run_counted(&self.shared, slot, urgent, f);
                    }
                    caller::Admission::Extra => return caller::run_extra(&self.shared, class, f),
                    caller::Admission::WaitTurn => {
                        if self.shared.wait_turn(class) == turn::Turn::TimedOut {
                            Counters::bump(&self.shared.stats.callers_handed_off);
                            break;
                        }
                    }
                    caller::Admission::HandOff => break,
                }
            }
        }
        let ctx = current_context();
        let job = StackJob::new(move || with_class(class, || with_context(ctx, f)));
        // SAFETY: `job` lives on this frame, unmoved, until its latch is set: we
        // wait for it below before returning, and an abort guard, armed before the
        // JobRef is published, turns any unwinding before the latch is observed
        // (a panic in `push_root`'s notification, in the state accounting, in the
        // wait) into an abort instead of freeing the frame under the worker.
        let job_ref = unsafe { job.as_job_ref() };
        Counters::bump(&self.shared.stats.jobs_created);
        let published = abort::AbortOnDrop::arm("install while its job may run on a worker");
        self.shared
            .push_class_root(class, priority, Task::Job(job_ref));
        worker::wait_as_inactive(WorkerState::WaitingForGraph, || {
            job.latch.wait(None);
            // The worker is done with `job`.
            published.disarm();
        });
        job.into_result()
    }

    /// Fork-join from anywhere: on this scheduler's workers.
    pub fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        self.install(|| join(a, b))
    }

    /// Runs `body`, which may spawn tasks borrowing from the caller's frame, and
    /// returns once all of them finished. Panics of the body or any task are re-raised.
    pub fn scope<'scope, R, F>(&self, body: F) -> R
    where
        F: FnOnce(&Scope<'scope>) -> R + Send,
        R: Send,
    {
        let shared = self.shared.clone();
        self.install(move || join::run_scope(shared, DEFAULT_PRIORITY, body))
    }

    /// Runs `body` over `range` in chunks of at most `grain` items, with at most
    /// [`concurrency_hint`](Self::concurrency_hint) tasks at first, splitting running
    /// pieces when the hint rises (paper §6).
    pub fn parallel_for<F>(&self, range: Range<usize>, grain: usize, body: F) -> ParallelForStats
    where
        F: Fn(Range<usize>) + Sync + Send,
    {
        let shared = self.shared.clone();
        let stats = self.install(move || parallel::run(range, grain, &*shared, &body));
        parallel::record(&self.shared, stats);
        stats
    }

    /// Counters and current worker counts.
    pub fn stats(&self) -> SchedulerStats {
        self.shared.stats()
    }

    /// The current worker counts.
    pub fn worker_counts(&self) -> WorkerCounts {
        self.shared.counts.load()
    }

    /// The watchdog's samples so far (oldest first).
    pub fn timeline(&self) -> Vec<TimelineSample> {
        self.shared.timeline.lock().snapshot()
    }

    /// Drops the samples recorded so far (to start an experiment's window).
    pub fn clear_timeline(&self) {
        self.shared.timeline.lock().clear();
    }

    /// Stats plus timeline as one JSON document.
    pub fn report_json(&self) -> String {
        let report = SchedulerReport {
            stats: self.stats(),
            timeline: self.timeline(),
        };
        serde_json::to_string(&report).expect("report serializes")
    }
}

/// Dropping a scheduler shuts it down gracefully: the watchdog stops, queued
/// work (and work it forks) runs to completion, then every worker thread exits
/// and is joined before `drop` returns.
///
/// Admission: `drop` takes `&mut self`, so no `submit`, `spawn` or `install`
/// on this scheduler can start or be in flight while it runs; only tasks
/// already running can still queue work (join halves, scope spawns, graph
/// successors), and that work runs. Hence no submission is refused.
///
/// If the last owner drops the scheduler on one of its own workers (a task
/// holding the last `Arc<Scheduler>`), that worker cannot wait for itself:
/// `drop` then starts the shutdown without joining, and the workers exit on
/// their own once the work is done.
///
/// A task that waits for something the dropping thread would only do after
/// `drop` returned makes `drop` wait forever, as joining any thread would.
impl Drop for Scheduler {
    fn drop(&mut self) {
        if let Some(mut w) = self.watchdog.lock().take() {
            w.stop();
        }
        if WorkerThread::current().is_some_and(|w| w.belongs_to(&self.shared)) {
            self.shared.shut_down(false);
            return;
        }
        // On a worker of another scheduler, joining is a long wait: leave the
        // active level meanwhile, as for a graph.
        worker::wait_as_inactive(WorkerState::WaitingForGraph, || self.shared.shut_down(true));
    }
}

/// Where an `install`ed job may run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Placement {
    /// On the caller if admission allows ([`CallerRuns`]), else on a worker.
    AdmitCaller,
    /// On a worker.
    Worker,
}

/// The result of [`Scheduler::spawn`].
pub struct JoinHandle<T> {
    handle: GraphHandle,
    slot: Arc<Mutex<Option<T>>>,
}

impl<T> JoinHandle<T> {
    /// Waits for the task; returns its value or its panic.
    pub fn join(self) -> Result<T, TaskPanic> {
        self.handle.wait()?;
        Ok(self
            .slot
            .lock()
            .take()
            .expect("spawned task stored its value"))
    }

    pub fn is_finished(&self) -> bool {
        self.handle.is_finished()
    }
}
