//! `Executor` (one per engine and policy, shared by its clients) and
//! `ExecContext` (one per query run): the granularity policy, the per-run
//! profile, and the adaptive feedback.

use std::sync::Arc;
use std::time::Instant;

use std::sync::atomic::{AtomicU64, Ordering};

use maestro_scheduler::{CancelToken, Scheduler, catch_cancelled};
use parking_lot::Mutex;
use rayon::ThreadPool;

use crate::adaptive::{AdaptiveState, PlanTicket};
use crate::error::ExecError;
use crate::granularity::Granularity;
use crate::profile::{OpCall, OpId, QueryProfile, Recorder};

/// Operators give a task at least this many rows by default: below it, task
/// overhead and partial-result merging cost more than parallelism saves.
pub const DEFAULT_MIN_ROWS_PER_TASK: usize = 16 * 1024;

/// Where plans and their operators' tasks run.
#[derive(Clone)]
pub enum Backend {
    /// The whole plan is one job `install`ed on the Maestro scheduler: it runs
    /// on the caller's thread when admitted (a counted guest worker), else on a
    /// worker; operators' tasks fork from it. One admission per query, not one
    /// per operator phase (each of which would otherwise be a hand-off to a
    /// worker whenever the level is full).
    Maestro,
    /// The papers' baselines, for comparison: each plan runs on a thread of
    /// `plans` (`Executor::run_plan`), its operators' tasks on `operators`.
    /// Separate pools of `contexts` threads each are *Multiple-Pools* (fixed
    /// executor and dispatcher pools); one pool for both is what a Rust engine
    /// on rayon would do. No concurrency hint exists here: `hint` behaves as
    /// `static`.
    Pools {
        plans: Arc<ThreadPool>,
        operators: Arc<ThreadPool>,
    },
}

/// Runs queries on one scheduler with one granularity policy. Cheap to clone;
/// clones share the adaptive state.
#[derive(Clone)]
pub struct Executor {
    scheduler: Arc<Scheduler>,
    backend: Backend,
    granularity: Granularity,
    adaptive: Arc<AdaptiveState>,
    min_rows_per_task: usize,
}

impl Executor {
    pub fn new(scheduler: Arc<Scheduler>, granularity: Granularity) -> Executor {
        Executor {
            scheduler,
            backend: Backend::Maestro,
            granularity,
            adaptive: Arc::new(AdaptiveState::default()),
            min_rows_per_task: DEFAULT_MIN_ROWS_PER_TASK,
        }
    }

    /// Shares `state` (learned plans) with other executors, e.g. other clients.
    pub fn with_adaptive_state(mut self, state: Arc<AdaptiveState>) -> Executor {
        self.adaptive = state;
        self
    }

    /// Runs plans and operators on thread pools instead of the scheduler
    /// ([`Backend::Pools`]); the scheduler stays for everything else.
    pub fn with_backend(mut self, backend: Backend) -> Executor {
        self.backend = backend;
        self
    }

    pub fn backend(&self) -> &Backend {
        &self.backend
    }

    /// Runs a plan's code as one scheduler job ([`Backend::Maestro`]) or on a
    /// thread of the plan pool, the caller waiting. A thread in a workload
    /// class ([`maestro_scheduler::set_thread_class`]) runs it in that class
    /// at the class's priority, as [`run_plan_in`](Self::run_plan_in).
    pub fn run_plan<R: Send>(&self, plan: impl FnOnce() -> R + Send) -> R {
        match &self.backend {
            Backend::Maestro => match maestro_scheduler::current_class() {
                maestro_scheduler::ClassId::DEFAULT => self.scheduler.install(plan),
                class => self.scheduler.install_in(class, plan),
            },
            Backend::Pools { plans, .. } => plans.install(plan),
        }
    }

    /// [`run_plan`](Self::run_plan) in workload class `class` (at its
    /// priority, everything the plan spawns in it:
    /// [`Scheduler::install_in`]). The pools backend has no classes: the
    /// plan runs as `run_plan` runs it.
    pub fn run_plan_in<R: Send>(
        &self,
        class: maestro_scheduler::ClassId,
        plan: impl FnOnce() -> R + Send,
    ) -> R {
        match &self.backend {
            Backend::Maestro => self.scheduler.install_in(class, plan),
            Backend::Pools { plans, .. } => plans.install(plan),
        }
    }

    /// [`run_plan`](Self::run_plan) for a plan that checks a [`CancelToken`]
    /// (its context's, [`Executor::context_cancellable`]): a cancelled or
    /// timed-out run — a checkpoint unwinding in the plan or any of its tasks —
    /// returns [`ExecError::Cancelled`] after every task of it stopped, with
    /// everything it allocated dropped. Other panics go on unwinding.
    pub fn run_plan_cancellable<R: Send>(
        &self,
        plan: impl FnOnce() -> Result<R, ExecError> + Send,
    ) -> Result<R, ExecError> {
        catch_cancelled(|| self.run_plan(plan)).unwrap_or_else(|c| Err(ExecError::Cancelled(c)))
    }

    /// The smallest number of rows worth a task (at least 1).
    pub fn with_min_rows_per_task(mut self, rows: usize) -> Executor {
        self.min_rows_per_task = rows.max(1);
        self
    }

    pub fn scheduler(&self) -> &Arc<Scheduler> {
        &self.scheduler
    }

    pub fn granularity(&self) -> Granularity {
        self.granularity
    }

    pub fn adaptive_state(&self) -> &Arc<AdaptiveState> {
        &self.adaptive
    }

    /// A context for one run of the query `template` (`"Q1"`): operators called
    /// with it follow the policy and report into its profile.
    pub fn context(&self, template: &str) -> ExecContext {
        self.context_cancellable(template, CancelToken::new())
    }

    /// [`context`](Self::context) whose operators stop at their next morsel
    /// once `cancel` is cancelled or its deadline passed (run the plan with
    /// [`run_plan_cancellable`](Self::run_plan_cancellable)).
    pub fn context_cancellable(&self, template: &str, cancel: CancelToken) -> ExecContext {
        let ticket = match self.granularity {
            Granularity::Adaptive => Some(self.adaptive.plan_for(template)),
            _ => None,
        };
        ExecContext {
            inner: Arc::new(Inner {
                scheduler: self.scheduler.clone(),
                operators: match &self.backend {
                    Backend::Maestro => None,
                    Backend::Pools { operators, .. } => Some(operators.clone()),
                },
                granularity: self.granularity,
                template: template.to_string(),
                adaptive: self.adaptive.clone(),
                ticket: Mutex::new(ticket.clone()),
                plan: ticket,
                min_rows_per_task: self.min_rows_per_task,
                started: Instant::now(),
                recorder: Mutex::new(Recorder::default()),
                cancel,
                charged: AtomicU64::new(0),
            }),
        }
    }
}

/// One query run: what operators ask for their task counts and report to.
/// Cheap to clone (clones share the run), `Send + Sync` for plan graphs.
#[derive(Clone)]
pub struct ExecContext {
    inner: Arc<Inner>,
}

struct Inner {
    scheduler: Arc<Scheduler>,
    /// `Some` under [`Backend::Pools`]: the pool operators' tasks run on.
    operators: Option<Arc<ThreadPool>>,
    granularity: Granularity,
    template: String,
    adaptive: Arc<AdaptiveState>,
    /// The adaptive plan this run uses (fixed at creation).
    plan: Option<PlanTicket>,
    /// Taken by the first `finish`, which hands the feedback back.
    ticket: Mutex<Option<PlanTicket>>,
    min_rows_per_task: usize,
    started: Instant,
    recorder: Mutex<Recorder>,
    cancel: CancelToken,
    /// Bytes operators charged (`charge`), with or without a limit.
    charged: AtomicU64,
}

impl ExecContext {
    pub fn scheduler(&self) -> &Scheduler {
        &self.inner.scheduler
    }

    /// The granularity as operators apply it: `hint` is `static` on a thread
    /// pool backend (a pool has no hint).
    pub fn granularity(&self) -> Granularity {
        match (self.inner.granularity, &self.inner.operators) {
            (Granularity::Hint, Some(_)) => Granularity::Static,
            (g, _) => g,
        }
    }

    /// The thread pool operators' tasks run on, under [`Backend::Pools`].
    pub(crate) fn operator_pool(&self) -> Option<&ThreadPool> {
        self.inner.operators.as_deref()
    }

    /// Contexts a `static` operator divides its work among.
    pub fn contexts(&self) -> usize {
        match &self.inner.operators {
            Some(pool) => pool.current_num_threads(),
            None => self.inner.scheduler.contexts(),
        }
    }

    pub fn template(&self) -> &str {
        &self.inner.template
    }

    /// The token this run stops on.
    pub fn cancel_token(&self) -> &CancelToken {
        &self.inner.cancel
    }

    /// Charges `bytes` an operator allocated for this run (hash tables,
    /// intermediate vectors, sort runs) to the statement's memory account
    /// (`maestro_scheduler::StatementMemory`, carried by the cancel token).
    /// Over the statement's or its class's limit the run stops here: it
    /// unwinds as a cancelled run does, with the memory reason. Charges
    /// accumulate until the run ends (nothing is released early).
    pub fn charge(&self, bytes: usize) {
        let bytes = bytes as u64;
        // Relaxed: a statistic, read once the run is over.
        self.inner.charged.fetch_add(bytes, Ordering::Relaxed);
        if let Err(stopped) = self.inner.cancel.charge(bytes) {
            std::panic::resume_unwind(Box::new(stopped));
        }
    }

    /// Bytes charged so far.
    pub fn memory_charged(&self) -> u64 {
        self.inner.charged.load(Ordering::Relaxed)
    }

    /// Stops the run here (unwinds) if it was cancelled or timed out.
    pub(crate) fn checkpoint(&self) {
        self.inner.cancel.checkpoint();
    }

    pub fn min_rows_per_task(&self) -> usize {
        self.inner.min_rows_per_task
    }

    /// The task count the policy asks for `op`, before capping by size: `n` for
    /// `fixed:n`, the contexts for `static`, the concurrency hint now for
    /// `hint`, the learned degree for `adaptive`.
    pub fn requested_tasks(&self, op: OpId) -> usize {
        match self.granularity() {
            Granularity::Fixed(n) => n,
            Granularity::Static => self.contexts(),
            Granularity::Hint => self.inner.scheduler.concurrency_hint(),
            Granularity::Adaptive => self.inner.plan.as_ref().map_or(1, |t| t.plan.dop(op)),
        }
        .max(1)
    }

    /// The tasks `op` should create for `rows` rows: the policy's count, capped
    /// so that each task gets at least [`Self::min_rows_per_task`] rows.
    pub fn tasks_for(&self, op: OpId, rows: usize) -> usize {
        self.tasks_for_units(op, rows, self.inner.min_rows_per_task)
    }

    /// [`Self::tasks_for`] for `units` items of which a task needs `min_units`.
    pub(crate) fn tasks_for_units(&self, op: OpId, units: usize, min_units: usize) -> usize {
        let cap = units.div_ceil(min_units.max(1)).max(1);
        self.requested_tasks(op).min(cap)
    }

    /// Tasks the operators created so far in this run (a caller takes the
    /// difference around a part of its plan: SQL's EXPLAIN ANALYZE).
    pub fn tasks_created(&self) -> u64 {
        self.inner.recorder.lock().tasks()
    }

    pub(crate) fn record(&self, call: OpCall) {
        self.inner.recorder.lock().add(call);
    }

    /// Ends the run: its profile (operators so far) and, for `adaptive`, the
    /// feedback to the shared state. A second call returns only operators
    /// recorded since the first and gives no feedback.
    pub fn finish(&self) -> QueryProfile {
        let ops = self.inner.recorder.lock().take();
        let profile = QueryProfile {
            template: self.inner.template.clone(),
            granularity: self.inner.granularity.to_string(),
            elapsed: self.inner.started.elapsed(),
            tasks: ops.iter().map(|o| o.tasks).sum(),
            memory_charged: self.memory_charged(),
            ops,
        };
        if let Some(ticket) = self.inner.ticket.lock().take() {
            self.inner.adaptive.feedback(&ticket, &profile);
        }
        profile
    }
}
