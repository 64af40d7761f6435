//! Workload classes: named shares of the scheduler's worker time (issue 13;
//! HANA's workload classes, Db2's service classes with CPU shares).
//!
//! A class has a *weight*, a *priority* for its roots, an optional cap on how
//! many tasks one of its statements splits into (`max_parallelism`, applied
//! to the concurrency hint) and an optional statement timeout for whoever runs
//! statements under it. Work is submitted under the class of the submitting
//! thread ([`with_class`], [`set_thread_class`], [`Scheduler::install_in`]):
//! jobs, joins, scope spawns and graphs capture the class at creation like
//! they capture the [`TaskContext`](crate::TaskContext), so every task a
//! statement spawns runs under its class.
//!
//! # Shares
//!
//! Each class accumulates its *service*: the thread time of the workers
//! (pool workers and counted guests) counted for it and of its uncounted
//! callers, in ns (`ClassSlot::served_ns`). A thread adds its time when it
//! leaves the class and, while it stays, at its task starts once at least
//! [`SERVICE_CHECKPOINT_NS`] has passed since it last added. A thread running
//! now is estimated at the time since its class was last charged or entered
//! from nothing (at least [`SERVICE_CHECKPOINT_NS`]): a class whose threads
//! charge often (short transactions) is estimated at little, one whose
//! threads sit in long tasks (a CH query is one job of hundreds of ms) at
//! about the time they have run. A class's *pass* is its service divided by
//! its weight — a stride scheduler's pass value. A class is *demanding*
//! when it has roots queued or work running; among the demanding classes,
//! class `c` is *below its share* when no other has a smaller pass. So over
//! any stretch in which both have work, two classes receive thread time in
//! the ratio of their weights, fractions included (a share compared with
//! whole running counts on 2 contexts could only be 0, 1 or 2 of them: issue
//! 12's 4-client split). A class that had no demand does not bank it: its
//! pass is raised to at most [`SHARE_LAG_MAX_NS`] behind the largest
//! demanding pass when it is looked at.
//!
//! A worker looking for work first takes a queued root of the class below
//! its share, before its own deque and the pools; only then does it follow
//! the ordinary order (deque, pools, other deques, roots), where roots are
//! taken from the class with the smallest pass that has some. An urgent
//! caller of a class runs beside busy workers (an *extra*) only while its
//! class is below its share (`caller.rs`), else it waits for its turn. No
//! preemption: a long task of a class ahead of its share runs to its end.
//! Priority orders roots within a class only.
//!
//! Thread time is not CPU time when extras oversubscribe the contexts (the
//! OS divides the cores between everything that runs). Extras run only while
//! the contexts are full, when a thread-second buys a fraction of a core, so
//! a class of extras gets less CPU per unit of weight than a class of
//! workers (on CH, equal weights gave the transactions 0.59x of separate
//! pools' tpmC, 3 : 1 about parity: README, `bench mixed`).
//!
//! A thread inside one long task that starts no nested task is charged when
//! the task ends; until then its class's pass counts it by the estimate.
//!
//! A worker's class is counted lazily: it moves from one class to another
//! when it starts a task of another class, and leaves its class when it finds
//! nothing to do, so the common case (the next task is of the same class)
//! costs one comparison and no shared write. Nothing of this runs while no
//! class is defined (one relaxed load per decision).
//!
//! # Memory
//!
//! A class may limit what one statement charges (`statement_memory_limit`)
//! and what its running statements charge together (`memory_limit`);
//! [`Scheduler::statement_token`](crate::Scheduler::statement_token) gives a
//! statement a token carrying both (`memory.rs`), and [`ClassStats`] reports
//! the class's usage and peak.
//!
//! # Decay within a class
//!
//! A worker that has run `DECAY_TASKS` tasks since it last took a root
//! starts a queued root of its own class before its deque and the pools
//! (`worker.rs`): the pieces of a statement that has run long yield to a
//! statement of the same class that has just arrived (Umbra's decaying
//! priority, approximated per worker with no shared write).
//!
//! Not modelled: a worker blocked in a lock wait keeps counting for its class.

use std::cell::Cell;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;
use parking_lot::Mutex;

use std::sync::Arc;

use crate::admission::{AdmissionCounts, AdmissionLimits, AdmissionQueue};
use crate::memory::MemoryPool;
use crate::queues::RootQueues;
use crate::turn::TurnGate;

/// Classes a scheduler can hold, the default class included (guessed: HANA
/// installations define a handful; the scan per decision is linear in it).
pub const CLASSES_MAX: usize = 16;

/// Least time between two charges of a thread staying in its class
/// (guessed: a few operator tasks; a charge is one shared write, so one per
/// task would cost a contended cache line on many cores), and the least a
/// running thread's uncharged time is estimated at in a class's pass.
pub const SERVICE_CHECKPOINT_NS: u64 = 100_000;

/// Most a demanding class's pass may lag behind the largest demanding pass,
/// in ns of service per unit of weight (guessed: a class that returns after
/// idling runs ahead of the others for about this long, not for as long as
/// it idled).
pub const SHARE_LAG_MAX_NS: u64 = 5_000_000;

/// Bounds of a class's weight (the ratio between two classes' shares is at
/// most `CLASS_WEIGHT_MAX`).
pub const CLASS_WEIGHT_MAX: u32 = 10_000;

/// A workload class of one scheduler (an index into its class table).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ClassId(u16);

impl ClassId {
    /// The class of work submitted without one: today's behaviour (its roots
    /// keep the priority levels and the urgent share).
    pub const DEFAULT: ClassId = ClassId(0);
    /// A worker thread between tasks: no class.
    pub(crate) const NONE: ClassId = ClassId(u16::MAX);

    pub fn index(self) -> usize {
        usize::from(self.0)
    }

    pub(crate) fn from_index(i: usize) -> ClassId {
        assert!(i < CLASSES_MAX, "class index {i} out of range");
        ClassId(i as u16)
    }
}

/// A class's configuration (all of it can be changed at run time with
/// [`Scheduler::update_class`](crate::Scheduler::update_class)).
#[derive(Clone, Debug, PartialEq)]
pub struct ClassSpec {
    /// Unique within the scheduler; `[A-Za-z0-9_.-]`, 1–64 characters.
    pub name: String,
    /// Share of the contexts relative to the other demanding classes,
    /// 1..=[`CLASS_WEIGHT_MAX`].
    pub weight: u32,
    /// Priority of the class's roots (ordering within the class; above
    /// [`DEFAULT_PRIORITY`](crate::DEFAULT_PRIORITY) its callers may also run
    /// uncounted within the class's share, as urgent callers do).
    pub priority: usize,
    /// At most this many tasks per partitionable operation of a statement of
    /// this class (a cap on the concurrency hint); `None`: no cap.
    pub max_parallelism: Option<usize>,
    /// Statement timeout for whoever runs statements of this class (see
    /// [`Scheduler::class_timeout`](crate::Scheduler::class_timeout)).
    pub timeout: Option<Duration>,
    /// Admission control for the class's statements
    /// ([`Scheduler::admit`](crate::Scheduler::admit)); `None`: every
    /// statement is admitted at once (small transactional classes).
    pub admission: Option<AdmissionLimits>,
    /// Most bytes one statement of the class may charge (`memory.rs`;
    /// applied through [`Scheduler::statement_token`](crate::Scheduler::statement_token)).
    pub statement_memory_limit: Option<u64>,
    /// Most bytes the class's running statements may charge together.
    pub memory_limit: Option<u64>,
}

impl ClassSpec {
    /// A class of `weight` with the default priority, no cap, no timeout.
    pub fn new(name: &str, weight: u32) -> ClassSpec {
        ClassSpec {
            name: name.to_string(),
            weight,
            priority: crate::DEFAULT_PRIORITY,
            max_parallelism: None,
            timeout: None,
            admission: None,
            statement_memory_limit: None,
            memory_limit: None,
        }
    }
}

/// Why a class definition or change was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClassError {
    /// The spec is invalid: which field and why.
    Invalid { field: &'static str, why: String },
    /// Another class has this name.
    DuplicateName(String),
    /// [`CLASSES_MAX`] classes exist already.
    TooMany,
    /// No class with this id or name.
    Unknown(String),
}

impl std::fmt::Display for ClassError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClassError::Invalid { field, why } => write!(f, "invalid class {field}: {why}"),
            ClassError::DuplicateName(n) => write!(f, "a workload class named {n:?} exists"),
            ClassError::TooMany => write!(f, "at most {CLASSES_MAX} workload classes"),
            ClassError::Unknown(n) => write!(f, "no workload class {n}"),
        }
    }
}

impl std::error::Error for ClassError {}

/// One class's counters, as [`Scheduler::class_stats`](crate::Scheduler::class_stats) reports them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassStats {
    pub id: ClassId,
    pub name: String,
    pub weight: u32,
    /// Workers (and callers) counted for the class right now.
    pub running: usize,
    /// Thread time the class's work has run, in ns (what was charged to its
    /// service, module docs).
    pub thread_ns: u64,
    /// What the lag bound added to the class's service beyond its thread
    /// time, in ns (a class that could not use its share, or was idle).
    pub raised_ns: u64,
    /// Roots of the class waiting in its queue now (0 for the default
    /// class, whose roots share the scheduler's root queues).
    pub queued_roots: usize,
    /// Times a worker moved to this class to run one of its tasks.
    pub entered: u64,
    /// Roots of the class a worker started before the class's older pieces
    /// (the decay within a class: `worker.rs`, `DECAY_TASKS`).
    pub decayed: u64,
    /// Admission control's counters (all 0 without limits).
    pub admission: AdmissionCounts,
    /// Bytes the class's running statements have charged, and the peak.
    pub memory_used: u64,
    pub memory_peak: u64,
}

pub(crate) struct ClassSlot {
    /// Workers and callers counted for the class (module docs). Relaxed: a
    /// share, not a synchronization.
    pub(crate) running: CachePadded<AtomicUsize>,
    /// The class's service (module docs), ns of thread time. SeqCst RMWs:
    /// pair with a turn waiter's RMW and fence (`TurnGate`), as `running`.
    served_ns: CachePadded<AtomicU64>,
    /// When the class was last charged, or entered while nothing ran in it
    /// (`Classes::now_ns`): where the estimate of its running threads'
    /// uncharged time starts. Relaxed: an estimate.
    marked_ns: AtomicU64,
    /// How much the lag bound raised `served_ns` (statistics).
    raised_ns: AtomicU64,
    weight: AtomicU32,
    priority: AtomicUsize,
    /// 0: no cap.
    max_parallelism: AtomicUsize,
    /// 0: no timeout.
    timeout_ms: AtomicU64,
    entered: AtomicU64,
    decayed: AtomicU64,
    /// The class's roots (unused for the default class).
    pub(crate) roots: RootQueues,
    admission_limits: Mutex<Option<AdmissionLimits>>,
    pub(crate) admission: AdmissionQueue,
    /// 0: no per-statement limit.
    statement_memory_limit: AtomicU64,
    /// The class's memory (its limit is the class's `memory_limit`).
    memory: Arc<MemoryPool>,
    /// Where the class's urgent callers beyond its share wait for their turn
    /// (`Shared::wait_turn`); `Classes::move_count` ends turns.
    turn: TurnGate,
}

pub(crate) struct Classes {
    slots: Box<[ClassSlot]>,
    /// Classes defined, the default included once any other exists (0 while
    /// only the default class exists: then nothing here runs).
    defined: AtomicUsize,
    /// Names, by id; taken only to define, update and report.
    names: Mutex<Vec<String>>,
    /// Where the service clock starts (`now_ns`).
    origin: Instant,
}

impl Classes {
    pub(crate) fn new(priority_levels: usize) -> Self {
        let slots = (0..CLASSES_MAX)
            .map(|_| ClassSlot {
                running: CachePadded::new(AtomicUsize::new(0)),
                served_ns: CachePadded::new(AtomicU64::new(0)),
                marked_ns: AtomicU64::new(0),
                raised_ns: AtomicU64::new(0),
                weight: AtomicU32::new(1),
                priority: AtomicUsize::new(crate::DEFAULT_PRIORITY),
                max_parallelism: AtomicUsize::new(0),
                timeout_ms: AtomicU64::new(0),
                entered: AtomicU64::new(0),
                decayed: AtomicU64::new(0),
                roots: RootQueues::new(priority_levels),
                admission_limits: Mutex::new(None),
                admission: AdmissionQueue::default(),
                turn: TurnGate::default(),
                statement_memory_limit: AtomicU64::new(0),
                memory: MemoryPool::new(None),
            })
            .collect();
        Classes {
            slots,
            defined: AtomicUsize::new(0),
            names: Mutex::new(vec!["default".to_string()]),
            origin: Instant::now(),
        }
    }

    /// Classes in use (0 while only the default class exists).
    pub(crate) fn defined(&self) -> usize {
        // Acquire: pairs with the Release in `define`, so a worker that sees
        // the count sees the new class's weight.
        self.defined.load(Ordering::Acquire)
    }

    pub(crate) fn slot(&self, c: ClassId) -> &ClassSlot {
        &self.slots[c.index()]
    }

    pub(crate) fn weight(&self, c: ClassId) -> u32 {
        self.slot(c).weight.load(Ordering::Relaxed)
    }

    pub(crate) fn priority(&self, c: ClassId) -> usize {
        self.slot(c).priority.load(Ordering::Relaxed)
    }

    pub(crate) fn max_parallelism(&self, c: ClassId) -> Option<usize> {
        match self.slot(c).max_parallelism.load(Ordering::Relaxed) {
            0 => None,
            n => Some(n),
        }
    }

    pub(crate) fn timeout(&self, c: ClassId) -> Option<Duration> {
        match self.slot(c).timeout_ms.load(Ordering::Relaxed) {
            0 => None,
            ms => Some(Duration::from_millis(ms)),
        }
    }

    /// The per-statement memory limit of class `c`.
    pub(crate) fn statement_memory_limit(&self, c: ClassId) -> Option<u64> {
        match self.slot(c).statement_memory_limit.load(Ordering::Relaxed) {
            0 => None,
            bytes => Some(bytes),
        }
    }

    /// Class `c`'s memory pool (shared with its statements' accounts).
    pub(crate) fn memory_pool(&self, c: ClassId) -> Arc<MemoryPool> {
        Arc::clone(&self.slot(c).memory)
    }

    fn validate(spec: &ClassSpec, priority_levels: usize) -> Result<(), ClassError> {
        let bad = |field, why: String| Err(ClassError::Invalid { field, why });
        let name_ok = !spec.name.is_empty()
            && spec.name.len() <= 64
            && spec
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c));
        if !name_ok {
            return bad(
                "name",
                format!("{:?}: 1-64 characters of [A-Za-z0-9_.-]", spec.name),
            );
        }
        if !(1..=CLASS_WEIGHT_MAX).contains(&spec.weight) {
            return bad(
                "weight",
                format!("{} not in 1..={CLASS_WEIGHT_MAX}", spec.weight),
            );
        }
        if spec.priority >= priority_levels {
            return bad(
                "priority",
                format!("{} not below {priority_levels} levels", spec.priority),
            );
        }
        if spec.max_parallelism == Some(0) {
            return bad("max_parallelism", "0 (use None for no cap)".into());
        }
        if spec.timeout.is_some_and(|t| t.as_millis() == 0) {
            return bad("timeout", "below 1 ms (use None for no timeout)".into());
        }
        if let Some(Err(why)) = spec.admission.as_ref().map(AdmissionLimits::validate) {
            return bad("admission", why);
        }
        if spec.statement_memory_limit == Some(0) {
            return bad(
                "statement_memory_limit",
                "0 bytes (use None for no limit)".into(),
            );
        }
        if spec.memory_limit == Some(0) {
            return bad("memory_limit", "0 bytes (use None for no limit)".into());
        }
        Ok(())
    }

    fn store(&self, c: ClassId, spec: &ClassSpec) {
        let s = self.slot(c);
        s.weight.store(spec.weight, Ordering::Relaxed);
        s.priority.store(spec.priority, Ordering::Relaxed);
        s.max_parallelism
            .store(spec.max_parallelism.unwrap_or(0), Ordering::Relaxed);
        let ms = spec
            .timeout
            .map_or(0, |t| t.as_millis().min(u64::MAX as u128) as u64);
        s.timeout_ms.store(ms, Ordering::Relaxed);
        *s.admission_limits.lock() = spec.admission.clone();
        s.statement_memory_limit
            .store(spec.statement_memory_limit.unwrap_or(0), Ordering::Relaxed);
        s.memory.set_limit(spec.memory_limit);
    }

    /// The class's admission limits now (`None`: admitted at once).
    pub(crate) fn admission_limits(&self, c: ClassId) -> Option<AdmissionLimits> {
        self.slot(c).admission_limits.lock().clone()
    }

    pub(crate) fn define(
        &self,
        spec: &ClassSpec,
        priority_levels: usize,
    ) -> Result<ClassId, ClassError> {
        Self::validate(spec, priority_levels)?;
        let mut names = self.names.lock();
        if names.contains(&spec.name) {
            return Err(ClassError::DuplicateName(spec.name.clone()));
        }
        if names.len() == CLASSES_MAX {
            return Err(ClassError::TooMany);
        }
        let id = ClassId(names.len() as u16);
        self.store(id, spec);
        names.push(spec.name.clone());
        // Release: pairs with the Acquire in `defined` (the spec is stored).
        self.defined.store(names.len(), Ordering::Release);
        Ok(id)
    }

    /// Changes class `c` (the default class too: its weight, cap, timeout;
    /// its name stays "default" and its priority is per root).
    pub(crate) fn update(
        &self,
        c: ClassId,
        spec: &ClassSpec,
        priority_levels: usize,
    ) -> Result<(), ClassError> {
        Self::validate(spec, priority_levels)?;
        let mut names = self.names.lock();
        let Some(current) = names.get(c.index()).cloned() else {
            return Err(ClassError::Unknown(format!("{c:?}")));
        };
        if c == ClassId::DEFAULT && spec.name != current {
            return Err(ClassError::Invalid {
                field: "name",
                why: "the default class cannot be renamed".into(),
            });
        }
        if names
            .iter()
            .enumerate()
            .any(|(i, n)| i != c.index() && *n == spec.name)
        {
            return Err(ClassError::DuplicateName(spec.name.clone()));
        }
        self.store(c, spec);
        names[c.index()] = spec.name.clone();
        Ok(())
    }

    /// Class `c`'s name (its id's debug form if it has none).
    pub(crate) fn name(&self, c: ClassId) -> String {
        self.names
            .lock()
            .get(c.index())
            .cloned()
            .unwrap_or_else(|| format!("{c:?}"))
    }

    pub(crate) fn by_name(&self, name: &str) -> Option<ClassId> {
        let names = self.names.lock();
        names
            .iter()
            .position(|n| n == name)
            .map(|i| ClassId(i as u16))
    }

    pub(crate) fn stats(&self) -> Vec<ClassStats> {
        let names = self.names.lock();
        names
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let id = ClassId(i as u16);
                let s = self.slot(id);
                let raised = s.raised_ns.load(Ordering::Relaxed);
                ClassStats {
                    id,
                    name: name.clone(),
                    weight: s.weight.load(Ordering::Relaxed),
                    running: s.running.load(Ordering::Relaxed),
                    thread_ns: s.served_ns.load(Ordering::Relaxed).saturating_sub(raised),
                    raised_ns: raised,
                    queued_roots: if id == ClassId::DEFAULT {
                        0
                    } else {
                        s.roots.len()
                    },
                    entered: s.entered.load(Ordering::Relaxed),
                    decayed: s.decayed.load(Ordering::Relaxed),
                    admission: s.admission.counts(),
                    memory_used: s.memory.used_bytes(),
                    memory_peak: s.memory.peak_bytes(),
                }
            })
            .collect()
    }

    /// Whether `id` names a class of this table.
    pub(crate) fn exists(&self, id: ClassId) -> bool {
        id.index() < self.defined().max(1)
    }

    /// Counts a root of `c` started by the decay within a class.
    pub(crate) fn count_decayed(&self, c: ClassId) {
        // Relaxed: a statistic.
        self.slot(c).decayed.fetch_add(1, Ordering::Relaxed);
    }

    /// The turn gate of class `c`.
    pub(crate) fn turn(&self, c: ClassId) -> &TurnGate {
        &self.slot(c).turn
    }

    /// The service clock (module docs, "Shares"): ns since the table was made.
    pub(crate) fn now_ns(&self) -> u64 {
        u64::try_from(self.origin.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    /// Moves one count from class `from` (if any) to class `to` (if any).
    /// `since` is when the mover's time in `from` was last added to `from`'s
    /// service (`now_ns`); the time since is added now, and `since` restarts.
    ///
    /// Leaving `from` is a charge: it wakes one turn waiter of every class
    /// (`turns_may_go`).
    pub(crate) fn move_count(&self, from: ClassId, to: ClassId, since: &Cell<u64>) {
        if from == to {
            return;
        }
        let now = self.now_ns();
        if from != ClassId::NONE {
            let s = self.slot(from);
            // SeqCst RMWs: pair with the waiter's RMW and fence in
            // `TurnGate::wait` (through the fence in `TurnGate::ended`).
            s.served_ns
                .fetch_add(now.saturating_sub(since.get()), Ordering::SeqCst);
            s.marked_ns.store(now, Ordering::Relaxed);
            s.running.fetch_sub(1, Ordering::SeqCst);
            self.turns_may_go();
        }
        since.set(now);
        if to != ClassId::NONE {
            let s = self.slot(to);
            if s.running.fetch_add(1, Ordering::Relaxed) == 0 {
                s.marked_ns.store(now, Ordering::Relaxed);
            }
            s.entered.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// A thread staying in `class` (a worker starting another task of it)
    /// adds its time since `since` to the class's service once that is at
    /// least [`SERVICE_CHECKPOINT_NS`], so a long run of one class's tasks is
    /// charged while it runs, not only when it ends.
    pub(crate) fn checkpoint(&self, class: ClassId, since: &Cell<u64>) {
        let now = self.now_ns();
        let elapsed = now.saturating_sub(since.get());
        if elapsed < SERVICE_CHECKPOINT_NS {
            return;
        }
        since.set(now);
        let s = self.slot(class);
        s.marked_ns.store(now, Ordering::Relaxed);
        // SeqCst RMW: pairs with a turn waiter's RMW and fence (`move_count`).
        s.served_ns.fetch_add(elapsed, Ordering::SeqCst);
        self.turns_may_go();
    }

    /// After a charge, wakes one turn waiter of every class (`turn.rs`): the
    /// service added raises the charged class's pass, which may put another
    /// class below its share; the estimate it replaces (`marked_ns` restarts)
    /// or a leave that ends the class's demand may put the charged class's
    /// own waiters below theirs. A waiter still beyond its share sleeps again.
    fn turns_may_go(&self) {
        for slot in &self.slots[..self.defined()] {
            slot.turn.ended();
        }
    }

    /// Among the classes `c` for which `has_roots(c)` holds, the one to take
    /// a root from: the smallest pass (module docs, "Shares"); with
    /// `below_share`, only if no demanding class has a smaller pass.
    /// `allowed` filters classes (e.g. urgent ones only while waiting in a
    /// join). `leaving`: the class the chooser itself counts for and is about
    /// to leave (a worker that finished a task), not counted as running.
    ///
    /// Raises the pass of a demanding class lagging more than
    /// [`SHARE_LAG_MAX_NS`] behind the largest (module docs).
    pub(crate) fn choose(
        &self,
        below_share: bool,
        leaving: ClassId,
        has_roots: impl Fn(ClassId) -> bool,
        allowed: impl Fn(ClassId, usize) -> bool,
    ) -> Option<ClassId> {
        self.choose_at(self.now_ns(), below_share, leaving, has_roots, allowed)
    }

    /// [`Classes::choose`] at service-clock time `now` (tests fix it).
    fn choose_at(
        &self,
        now: u64,
        below_share: bool,
        leaving: ClassId,
        has_roots: impl Fn(ClassId) -> bool,
        allowed: impl Fn(ClassId, usize) -> bool,
    ) -> Option<ClassId> {
        let n = self.defined();
        if n == 0 {
            return None;
        }
        let mut demand = [Demand::NONE; CLASSES_MAX];
        let mut k = 0;
        let mut largest = 0.0f64;
        for i in 0..n {
            let id = ClassId(i as u16);
            let s = self.slot(id);
            let mut running = s.running.load(Ordering::Relaxed) as u64;
            if id == leaving {
                running = running.saturating_sub(1);
            }
            let roots = has_roots(id);
            if running == 0 && !roots {
                continue;
            }
            let weight = f64::from(self.weight(id));
            let uncharged = now
                .saturating_sub(s.marked_ns.load(Ordering::Relaxed))
                .max(SERVICE_CHECKPOINT_NS);
            let estimate = running.saturating_mul(uncharged);
            let served = s.served_ns.load(Ordering::Relaxed);
            let pass = served.saturating_add(estimate) as f64 / weight;
            largest = largest.max(pass);
            demand[k] = Demand {
                id,
                pass,
                weight,
                estimate,
                roots,
            };
            k += 1;
        }
        let floor = largest - SHARE_LAG_MAX_NS as f64;
        let mut smallest = f64::INFINITY;
        for d in &mut demand[..k] {
            if d.pass < floor {
                // Relaxed: a share, not a synchronization (a raise signals no
                // waiter; the next service added does).
                let slot = self.slot(d.id);
                let target = ((floor * d.weight) as u64).saturating_sub(d.estimate);
                let before = slot.served_ns.fetch_max(target, Ordering::Relaxed);
                slot.raised_ns
                    .fetch_add(target.saturating_sub(before), Ordering::Relaxed);
                d.pass = floor;
            }
            smallest = smallest.min(d.pass);
        }
        demand[..k]
            .iter()
            .filter(|d| d.roots && allowed(d.id, self.priority(d.id)))
            .filter(|d| !below_share || d.pass <= smallest)
            .min_by(|a, b| a.pass.total_cmp(&b.pass))
            .map(|d| d.id)
    }
}

/// A demanding class as `Classes::choose` sees it.
#[derive(Clone, Copy)]
struct Demand {
    id: ClassId,
    /// Service (with running threads estimated) per unit of weight, ns.
    pass: f64,
    weight: f64,
    /// The running threads' estimated unadded service, ns.
    estimate: u64,
    /// Whether the class has roots queued (it may be chosen).
    roots: bool,
}

impl Demand {
    const NONE: Demand = Demand {
        id: ClassId::NONE,
        pass: 0.0,
        weight: 1.0,
        estimate: 0,
        roots: false,
    };
}

thread_local! {
    /// The class of the code running on this thread: what new work captures.
    /// Client threads start in the default class; worker threads run with
    /// `NONE` between tasks.
    static CURRENT: Cell<ClassId> = const { Cell::new(ClassId::DEFAULT) };
}

/// The class new work submitted from this thread is in.
pub fn current_class() -> ClassId {
    let c = CURRENT.with(Cell::get);
    if c == ClassId::NONE {
        ClassId::DEFAULT
    } else {
        c
    }
}

/// Puts this (client) thread's later submissions in `class` — a session's
/// `SET workload_class`. The class is of whichever scheduler the work goes
/// to; an id a scheduler does not have runs there in its default class.
pub fn set_thread_class(class: ClassId) {
    CURRENT.with(|c| c.set(class));
}

/// Runs `f` with `class` as this thread's class (restored after, also on
/// unwinding); on a worker of a scheduler with classes, the worker counts
/// for `class` while `f` runs.
pub fn with_class<R>(class: ClassId, f: impl FnOnce() -> R) -> R {
    let _guard = ClassGuard::enter(class);
    f()
}

/// Marks a worker thread as between tasks (no class).
pub(crate) fn enter_worker_loop() {
    CURRENT.with(|c| c.set(ClassId::NONE));
}

/// Switches the thread's class and, on a worker, its count; restores on drop.
pub(crate) struct ClassGuard {
    previous: ClassId,
    class: ClassId,
}

impl ClassGuard {
    pub(crate) fn enter(class: ClassId) -> ClassGuard {
        let previous = CURRENT.with(|c| c.replace(class));
        // Also within a class: a worker (or guest) running one statement's
        // nested tasks charges its class at checkpoints while it runs, not
        // only when it leaves (`Classes::checkpoint`). Not within the default
        // class: a scheduler without classes runs nothing else, and a join
        // there must not pay for it (rayon parity); the default class's
        // nested work is charged when it leaves and estimated meanwhile.
        if previous != class || class != ClassId::DEFAULT {
            crate::worker::count_class(class);
        }
        ClassGuard { previous, class }
    }
}

impl Drop for ClassGuard {
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(self.previous));
        // Back in an enclosing task of another class (a join that ran a
        // stolen task): count for it again. Between tasks (`NONE`) the count
        // stays, lazily, until the worker runs another class or idles.
        if self.previous != self.class && self.previous != ClassId::NONE {
            crate::worker::count_class(self.previous);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classes(weights: &[u32]) -> Classes {
        let c = Classes::new(3);
        c.update(ClassId::DEFAULT, &ClassSpec::new("default", weights[0]), 3)
            .unwrap();
        for (i, &w) in weights.iter().enumerate().skip(1) {
            c.define(&ClassSpec::new(&format!("c{i}"), w), 3).unwrap();
        }
        c
    }

    /// Sets each class's running count and service (ns), charged at `NOW`.
    fn set(c: &Classes, state: &[(usize, u64)]) {
        for (i, &(running, served)) in state.iter().enumerate() {
            let s = c.slot(ClassId(i as u16));
            s.running.store(running, Ordering::Relaxed);
            s.served_ns.store(served, Ordering::Relaxed);
            s.marked_ns.store(NOW, Ordering::Relaxed);
        }
    }

    /// The service clock in the tests' `choose_at`.
    const NOW: u64 = 3_600_000 * MS;

    const MS: u64 = 1_000_000;
    const Q: u64 = SERVICE_CHECKPOINT_NS;

    #[test]
    fn the_class_with_the_smallest_pass_is_below_its_share() {
        // default:1, c1:3 → c1 is due until it has three times the service.
        let c = classes(&[1, 3]);
        let all = |_| true;
        let any = |_, _| true;
        set(&c, &[(1, 10 * MS), (1, 20 * MS)]);
        assert_eq!(
            c.choose_at(NOW, true, ClassId::NONE, all, any),
            Some(ClassId(1))
        );
        set(&c, &[(1, 10 * MS), (1, 31 * MS)]);
        assert_eq!(
            c.choose_at(NOW, true, ClassId::NONE, all, any),
            Some(ClassId::DEFAULT)
        );
        // Running threads count SERVICE_CHECKPOINT_NS each: 3 running in c1
        // put its pass beyond the default's.
        set(&c, &[(0, 10 * MS), (3, 30 * MS - Q)]);
        assert_eq!(
            c.choose_at(NOW, true, ClassId::NONE, all, any),
            Some(ClassId::DEFAULT)
        );
        // ... unless the chooser is one of them, about to leave.
        set(&c, &[(1, 10 * MS), (1, 30 * MS - 3 * Q)]);
        assert_eq!(
            c.choose_at(NOW, true, ClassId(1), all, any),
            Some(ClassId(1))
        );
        // Only classes with roots can be taken; below the share only the
        // smallest pass qualifies, the work-conserving order takes the
        // smallest pass among those with roots.
        set(&c, &[(1, 10 * MS), (1, 40 * MS)]);
        let only_c1 = |id: ClassId| id == ClassId(1);
        assert_eq!(c.choose_at(NOW, true, ClassId::NONE, only_c1, any), None);
        assert_eq!(
            c.choose_at(NOW, false, ClassId::NONE, only_c1, any),
            Some(ClassId(1))
        );
        // A class without demand does not count: c1 alone is due.
        set(&c, &[(0, 0), (1, 40 * MS)]);
        assert_eq!(
            c.choose_at(NOW, true, ClassId::NONE, only_c1, any),
            Some(ClassId(1))
        );
    }

    #[test]
    fn a_thread_in_a_long_task_counts_the_time_since_its_class_was_charged() {
        let c = classes(&[1, 1]);
        let all = |_| true;
        let any = |_, _| true;
        // The default class charged 30 ms; c1 has one thread that has run for
        // 50 ms without a charge (one long job): c1 is the one ahead.
        set(&c, &[(0, 30 * MS), (1, 0)]);
        c.slot(ClassId(1))
            .marked_ns
            .store(NOW - 50 * MS, Ordering::Relaxed);
        assert_eq!(
            c.choose_at(NOW, true, ClassId::NONE, all, any),
            Some(ClassId::DEFAULT)
        );
        // Entering a class where nothing ran starts the estimate afresh.
        let since = Cell::new(0);
        c.slot(ClassId(1)).running.store(0, Ordering::Relaxed);
        c.move_count(ClassId::NONE, ClassId(1), &since);
        let marked = c.slot(ClassId(1)).marked_ns.load(Ordering::Relaxed);
        assert_eq!(marked, since.get());
    }

    #[test]
    fn a_class_returning_from_idle_lags_at_most_the_bound() {
        let c = classes(&[1, 1]);
        let all = |_| true;
        let any = |_, _| true;
        // The default class idled while c1 ran for a second.
        set(&c, &[(0, 0), (1, 1000 * MS)]);
        assert_eq!(
            c.choose_at(NOW, true, ClassId::NONE, all, any),
            Some(ClassId::DEFAULT)
        );
        let raised = c.slot(ClassId::DEFAULT).served_ns.load(Ordering::Relaxed);
        assert_eq!(raised, 1000 * MS + Q - SHARE_LAG_MAX_NS);
        let stats = c.stats();
        assert_eq!((stats[0].raised_ns, stats[0].thread_ns), (raised, 0));
        // Once it has run the lag, c1 is due again.
        c.slot(ClassId::DEFAULT)
            .served_ns
            .fetch_add(SHARE_LAG_MAX_NS + 1, Ordering::Relaxed);
        assert_eq!(
            c.choose_at(NOW, true, ClassId::NONE, all, any),
            Some(ClassId(1))
        );
    }

    #[test]
    fn definitions_are_validated_and_unique() {
        let c = Classes::new(3);
        assert_eq!(c.defined(), 0);
        let oltp = c.define(&ClassSpec::new("oltp", 4), 3).unwrap();
        assert_eq!(
            c.defined(),
            2,
            "the default class counts once another exists"
        );
        assert_eq!(c.by_name("oltp"), Some(oltp));
        assert_eq!(
            c.define(&ClassSpec::new("oltp", 1), 3),
            Err(ClassError::DuplicateName("oltp".into()))
        );
        for (spec, field) in [
            (ClassSpec::new("", 1), "name"),
            (ClassSpec::new("a b", 1), "name"),
            (ClassSpec::new("w", 0), "weight"),
            (ClassSpec::new("w", CLASS_WEIGHT_MAX + 1), "weight"),
            (
                ClassSpec {
                    priority: 3,
                    ..ClassSpec::new("p", 1)
                },
                "priority",
            ),
            (
                ClassSpec {
                    max_parallelism: Some(0),
                    ..ClassSpec::new("m", 1)
                },
                "max_parallelism",
            ),
        ] {
            match c.define(&spec, 3) {
                Err(ClassError::Invalid { field: f, .. }) => assert_eq!(f, field),
                other => panic!("{spec:?}: {other:?}"),
            }
        }
        for i in 2..CLASSES_MAX {
            c.define(&ClassSpec::new(&format!("x{i}"), 1), 3).unwrap();
        }
        assert_eq!(
            c.define(&ClassSpec::new("last", 1), 3),
            Err(ClassError::TooMany)
        );
        let spec = ClassSpec {
            max_parallelism: Some(2),
            timeout: Some(Duration::from_millis(1500)),
            ..ClassSpec::new("oltp", 7)
        };
        c.update(oltp, &spec, 3).unwrap();
        assert_eq!(
            (c.weight(oltp), c.max_parallelism(oltp), c.timeout(oltp)),
            (7, Some(2), Some(Duration::from_millis(1500)))
        );
        assert!(
            c.update(ClassId::DEFAULT, &ClassSpec::new("other", 1), 3)
                .is_err()
        );
    }

    #[test]
    fn counts_move_between_classes_and_charge_their_time() {
        let c = classes(&[1, 1]);
        let since = Cell::new(0);
        c.move_count(ClassId::NONE, ClassId(1), &since);
        let entered = since.get();
        c.move_count(ClassId(1), ClassId(1), &since);
        assert_eq!(c.slot(ClassId(1)).running.load(Ordering::Relaxed), 1);
        std::thread::sleep(Duration::from_millis(1));
        c.move_count(ClassId(1), ClassId::DEFAULT, &since);
        assert_eq!(c.slot(ClassId(1)).running.load(Ordering::Relaxed), 0);
        let served = c.stats()[1].thread_ns;
        assert_eq!(served, since.get() - entered);
        assert!(served >= MS, "a 1 ms stay charged {served} ns");
        // A checkpoint charges a stay only once it is long enough.
        let before = since.get();
        c.checkpoint(ClassId::DEFAULT, &since);
        assert!(since.get() == before || since.get() - before >= Q);
        std::thread::sleep(Duration::from_millis(1));
        c.checkpoint(ClassId::DEFAULT, &since);
        assert_eq!(c.stats()[0].thread_ns, since.get() - before);
        c.move_count(ClassId::DEFAULT, ClassId::NONE, &since);
        assert_eq!(c.slot(ClassId::DEFAULT).running.load(Ordering::Relaxed), 0);
        assert_eq!(c.stats()[1].entered, 1);
    }
}
