//! Scheduler configuration and the paper's variants as named presets.
//!
//! A preset is a value of [`SchedulerConfig`], never a fork of the code: one process
//! can run `single_pool_nosys`, `single_pool` and `single_hints` side by side.

use std::fmt;
use std::time::Duration;

use crate::counts::WORKERS_MAX_LIMIT;

/// How the concurrency hint is produced (paper §6).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum HintPolicy {
    /// The hint is always the number of contexts (Single-Pool-NoSys, Single-Pool).
    PinnedToContexts,
    /// Exponential moving average of free contexts, sampled by the watchdog.
    Ema {
        /// Weight of the newest sample (paper: 0.5).
        alpha: f64,
        /// Sampling period (paper: 50 ms).
        period: Duration,
        /// Reset the hint to `contexts` once it exceeds this fraction of it (paper: 0.9).
        reset_fraction: f64,
    },
}

impl HintPolicy {
    /// The paper's parameters: a = 0.5, every 50 ms, reset above 90 %.
    pub const PAPER: HintPolicy = HintPolicy::Ema {
        alpha: 0.5,
        period: Duration::from_millis(50),
        reset_fraction: 0.9,
    };
}

/// What happens when a worker blocks in a scheduler-aware primitive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockActivation {
    /// Nothing at once; the watchdog wakes or creates workers at its next tick
    /// (the paper's behaviour).
    WatchdogOnly,
    /// Wake one parked worker at once if work is queued (never create a thread).
    WakeParked,
}

/// How a thread outside the pool runs work it submits and then waits for
/// (`install`, `join`, `scope`, `parallel_for` called from a client thread).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallerRuns {
    /// Always hand the job to a worker and sleep until it is done (the paper's
    /// dispatch: about two context switches per job).
    Never,
    /// Run it on the calling thread when admission allows, counted as an active
    /// worker for as long as it runs (PROTOCOL.md, "Callers run, counted").
    Counted,
}

/// Every knob of the scheduler. Build one with a preset and adjust fields.
#[derive(Clone, Debug)]
pub struct SchedulerConfig {
    /// Name reported in stats and benchmark output.
    pub name: String,
    /// Hardware contexts the active level aims at. Detected by default; tests and
    /// experiments override it.
    pub contexts: usize,
    /// Workers started eagerly (default: `contexts`).
    pub initial_workers: usize,
    /// Hard cap on worker threads alive at once. Guessed default: `max(64, 16 × contexts)`,
    /// enough for the paper's blocking-heavy TPC-C mix on small machines; at most 4095.
    pub workers_max: usize,
    /// Whether the active level may grow past `initial_workers` at all. False only for
    /// `single_pool_nosys`-style fixed pools.
    pub flexible_concurrency: bool,
    /// Whether blocked and inactive-by-user workers leave the active level. False is the
    /// paper's Single-Pool-NoSys: they still count as active. Waiting-for-graph always
    /// leaves it, or nested graph waits could deadlock (PROTOCOL.md).
    pub count_sys_inactive: bool,
    /// What a worker does just before it sleeps as *blocked* while work is queued.
    /// The paper leaves blocked workers to the watchdog (`WatchdogOnly`); we wake a
    /// parked worker at once (`WakeParked`, the default), which matters when waits
    /// are far shorter than the watchdog period (see README, blocking mix).
    pub block_activation: BlockActivation,
    /// Number of task pools for non-root nodes (paper: one per socket). Worker *i* owns
    /// pool *i mod pools* and steals from the others round-robin.
    pub pools: usize,
    /// Priority levels of root queues (0 = lowest).
    pub priority_levels: usize,
    /// Probability that a free worker looks in the task pools before the root queues
    /// (paper default 1.0: finish started graphs before starting new ones).
    pub pools_first_probability: f64,
    /// Probability of taking a root from the highest non-empty priority queue instead
    /// of trying the next lower one; below 1.0 it prevents starvation.
    pub priority_bias: f64,
    /// Watchdog period (paper: 20 ms).
    pub watchdog_period: Duration,
    /// The stall rescue (PROTOCOL.md, "Stall rescue"): when work has been queued
    /// with the active level at the contexts and no queued task was taken for this
    /// long, the watchdog activates one worker beyond the contexts (it runs a task
    /// and parks again as surplus), and one more for each watchdog period without
    /// a task taken until no work waits with the level full. A backstop for work that waits, unknown to the
    /// scheduler, for queued work: without it such a wait is a hang. Zero: off.
    /// 200 ms, guessed: ten watchdog periods, far longer than a task is meant to
    /// run (morsels take about a millisecond), far shorter than the 10-s bound of
    /// the store's lock waits that first showed such a hang.
    pub stall_rescue_after: Duration,
    /// The concurrency hint's policy.
    pub hint: HintPolicy,
    /// Rounds a worker that found no task keeps looking before it parks. Guessed: long
    /// enough to cover a submitter's next push (a few µs), short enough to give the core
    /// back quickly.
    pub idle_spin_rounds: u32,
    /// A parked worker beyond `contexts` exits after this long without work. Guessed.
    pub idle_worker_exit: Duration,
    /// Timeline samples kept (a ring buffer; at 20 ms, 100 000 samples ≈ 33 minutes).
    pub timeline_capacity_samples: usize,
    /// Whether callers outside the pool run their own jobs ([`CallerRuns`]).
    pub caller_runs: CallerRuns,
    /// The fraction of the contexts that urgent work (roots and callers above the
    /// default priority) is sure of while other work waits; beyond it urgent work
    /// waits its turn behind started partitioned work instead of taking every free
    /// context. At least one context. Guessed: half, the split Multiple-Pools gets
    /// from the OS with as many terminals as pool threads.
    pub urgent_share: f64,
    /// How long an urgent caller outside the pool waits for its turn when
    /// urgent work holds its share while other work waits
    /// (`Admission::WaitTurn`, PROTOCOL.md "Callers run, counted"); past it
    /// the job is handed to a worker as before, so no wait is endless (e.g.
    /// when the urgent work it waits for waits on a lock the caller holds).
    /// Zero: hand off at once. 50 ms, guessed, then measured against 1 ms: a
    /// turn normally comes within a transaction (~20 µs), but on a loaded
    /// machine the urgent work waited for can lose its core for a CFS time
    /// slice of a few ms; with 1 ms such waits timed out, and one hand-off
    /// makes every later urgent caller hand off too (they never overtake a
    /// queued urgent root) — tpmC 0.33× instead of 0.89× of multiple-pools
    /// at 4 TPC-H clients. A wait that cannot end costs one slow
    /// transaction, not a hang.
    pub urgent_turn_wait_max: Duration,
    /// Period over which admission control's load samples are averaged
    /// before they enter its moving average (DEBull 2019: every second).
    pub admission_sample: Duration,
    /// Weight of the newest period in admission control's moving average
    /// (DEBull 2019: λ = 0.7), in (0, 1].
    pub admission_lambda: f64,
    /// The memory statements may charge together (`memory.rs`) before
    /// admission control's memory thresholds apply (a fraction of it is the
    /// memory load); `None`: no memory signal.
    pub memory_budget_bytes: Option<u64>,
    /// Seed for the workers' random choices (dispatch, priorities); None = from entropy.
    pub seed: Option<u64>,
}

/// The number of hardware contexts of this machine (1 if it cannot be read).
pub fn detected_contexts() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

impl SchedulerConfig {
    /// Single-Pool (paper §5): one scheduler, a flexible concurrency level, no hint.
    pub fn single_pool() -> Self {
        Self::base("single-pool", detected_contexts())
    }

    /// Single-Hints (paper §6): Single-Pool plus the EMA concurrency hint.
    pub fn single_hints() -> Self {
        SchedulerConfig {
            name: "single-hints".into(),
            hint: HintPolicy::PAPER,
            ..Self::single_pool()
        }
    }

    /// Single-Pool-NoSys: blocked workers count as active, the pool never grows past
    /// its initial `contexts` workers except to cover graph waits, hint pinned.
    pub fn single_pool_nosys() -> Self {
        SchedulerConfig {
            name: "single-pool-nosys".into(),
            count_sys_inactive: false,
            flexible_concurrency: false,
            ..Self::single_pool()
        }
    }

    /// Single-Pool exactly as the paper describes it: blocked workers are left to
    /// the watchdog ([`BlockActivation::WatchdogOnly`]).
    pub fn single_pool_paper() -> Self {
        SchedulerConfig {
            name: "single-pool-paper".into(),
            block_activation: BlockActivation::WatchdogOnly,
            ..Self::single_pool()
        }
    }

    /// Looks a preset up by the name benchmarks and the CLI use.
    pub fn preset(name: &str) -> Result<Self, ConfigError> {
        match name {
            "single-pool" | "single_pool" => Ok(Self::single_pool()),
            "single-hints" | "single_hints" => Ok(Self::single_hints()),
            "single-pool-nosys" | "single_pool_nosys" => Ok(Self::single_pool_nosys()),
            "single-pool-paper" | "single_pool_paper" => Ok(Self::single_pool_paper()),
            other => Err(ConfigError::UnknownPreset(other.to_string())),
        }
    }

    fn base(name: &str, contexts: usize) -> Self {
        SchedulerConfig {
            name: name.into(),
            contexts,
            initial_workers: contexts,
            workers_max: (16 * contexts).clamp(64, WORKERS_MAX_LIMIT),
            flexible_concurrency: true,
            count_sys_inactive: true,
            block_activation: BlockActivation::WakeParked,
            pools: contexts.div_ceil(16).max(1),
            priority_levels: 4,
            pools_first_probability: 1.0,
            priority_bias: 0.9,
            watchdog_period: Duration::from_millis(20),
            stall_rescue_after: Duration::from_millis(200),
            hint: HintPolicy::PinnedToContexts,
            idle_spin_rounds: 64,
            idle_worker_exit: Duration::from_secs(10),
            timeline_capacity_samples: 100_000,
            caller_runs: CallerRuns::Counted,
            urgent_share: 0.5,
            urgent_turn_wait_max: Duration::from_millis(50),
            admission_sample: Duration::from_secs(1),
            admission_lambda: 0.7,
            memory_budget_bytes: None,
            seed: None,
        }
    }

    /// Sets `contexts` and everything derived from it (initial workers, cap, pools).
    pub fn with_contexts(mut self, contexts: usize) -> Self {
        self.contexts = contexts;
        self.initial_workers = contexts;
        self.workers_max = (16 * contexts).clamp(64, WORKERS_MAX_LIMIT);
        self.pools = contexts.div_ceil(16).max(1);
        self
    }

    /// Contexts urgent work is sure of while other work waits (at least 1).
    pub fn urgent_contexts(&self) -> usize {
        ((self.contexts as f64 * self.urgent_share).ceil() as usize).clamp(1, self.contexts)
    }

    /// Checks every field; the scheduler refuses to start on an invalid config.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |field: &'static str, why: String| Err(ConfigError::Invalid { field, why });
        if self.contexts == 0 {
            return bad("contexts", "must be at least 1".into());
        }
        if self.workers_max > WORKERS_MAX_LIMIT {
            return bad(
                "workers_max",
                format!(
                    "{} exceeds the limit of {WORKERS_MAX_LIMIT}",
                    self.workers_max
                ),
            );
        }
        if self.workers_max < self.contexts {
            return bad(
                "workers_max",
                format!("{} is below contexts ({})", self.workers_max, self.contexts),
            );
        }
        if self.initial_workers == 0 || self.initial_workers > self.workers_max {
            return bad(
                "initial_workers",
                format!("{} must be in 1..=workers_max", self.initial_workers),
            );
        }
        if self.pools == 0 || self.pools > 1024 {
            return bad("pools", format!("{} must be in 1..=1024", self.pools));
        }
        if self.priority_levels == 0 || self.priority_levels > 64 {
            return bad(
                "priority_levels",
                format!("{} must be in 1..=64", self.priority_levels),
            );
        }
        for (field, p) in [
            ("pools_first_probability", self.pools_first_probability),
            ("priority_bias", self.priority_bias),
        ] {
            if !(0.0..=1.0).contains(&p) {
                return bad(field, format!("{p} is not a probability"));
            }
        }
        if self.watchdog_period.is_zero() {
            return bad("watchdog_period", "must be positive".into());
        }
        if let HintPolicy::Ema {
            alpha,
            period,
            reset_fraction,
        } = self.hint
        {
            if !(alpha > 0.0 && alpha <= 1.0) {
                return bad("hint.alpha", format!("{alpha} must be in (0, 1]"));
            }
            if period.is_zero() {
                return bad("hint.period", "must be positive".into());
            }
            if !(0.0..=1.0).contains(&reset_fraction) {
                return bad(
                    "hint.reset_fraction",
                    format!("{reset_fraction} not in [0, 1]"),
                );
            }
        }
        if !(self.urgent_share > 0.0 && self.urgent_share <= 1.0) {
            return bad(
                "urgent_share",
                format!("{} must be in (0, 1]", self.urgent_share),
            );
        }
        if self.admission_sample.is_zero() {
            return bad("admission_sample", "must be positive".into());
        }
        if !(self.admission_lambda > 0.0 && self.admission_lambda <= 1.0) {
            return bad(
                "admission_lambda",
                format!("{} must be in (0, 1]", self.admission_lambda),
            );
        }
        if self.timeline_capacity_samples == 0 {
            return bad("timeline_capacity_samples", "must be at least 1".into());
        }
        if self.memory_budget_bytes == Some(0) {
            return bad("memory_budget_bytes", "must be positive".into());
        }
        Ok(())
    }
}

/// Why a configuration was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigError {
    /// No preset has this name.
    UnknownPreset(String),
    /// A field is out of range.
    Invalid { field: &'static str, why: String },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::UnknownPreset(name) => write!(
                f,
                "unknown scheduler preset '{name}' (expected single-pool, single-pool-paper, single-pool-nosys or single-hints)"
            ),
            ConfigError::Invalid { field, why } => {
                write!(f, "invalid scheduler config: {field} {why}")
            }
        }
    }
}

impl std::error::Error for ConfigError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_validate() {
        for name in [
            "single-pool",
            "single-hints",
            "single-pool-nosys",
            "single-pool-paper",
        ] {
            let c = SchedulerConfig::preset(name).unwrap().with_contexts(3);
            c.validate().unwrap();
            assert_eq!(c.name, name);
        }
        assert!(SchedulerConfig::preset("nope").is_err());
    }

    #[test]
    fn bad_values_are_refused() {
        let mut c = SchedulerConfig::single_pool().with_contexts(2);
        c.pools_first_probability = 1.5;
        assert!(matches!(
            c.validate(),
            Err(ConfigError::Invalid {
                field: "pools_first_probability",
                ..
            })
        ));
        let c = SchedulerConfig::single_pool().with_contexts(0);
        assert!(c.validate().is_err());
        let mut c = SchedulerConfig::single_pool().with_contexts(2);
        c.workers_max = 10_000;
        assert!(c.validate().is_err());
    }
}
