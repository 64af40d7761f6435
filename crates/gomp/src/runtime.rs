//! Process-wide state: the scheduler every team runs on, the OpenMP environment
//! read once, and the two controls the database uses (priority, team sizing).
//!
//! Environment of our own:
//! - `MAESTRO_OMP_PRIORITY`: scheduler priority of OpenMP work (default
//!   [`DEFAULT_PRIORITY`], or `MAESTRO_OMP_CLASS`'s priority; 0 = lowest;
//!   clamped to the scheduler's levels).
//! - `MAESTRO_OMP_CLASS=SPEC`: the workload class parallel regions run in
//!   ([`region_class`]; the `--class` grammar of the CLI,
//!   `maestro_scheduler::ClassSpec`'s `FromStr`); a bad spec is fatal.
//! - `MAESTRO_OMP_TEAMS=hint`: regions without `num_threads` get
//!   `min(nthreads-var, concurrency hint)` members.
//! - `MAESTRO_OMP_MASTER=caller|scheduler`: where the master's share of a region
//!   entered from outside the scheduler runs ([`MasterPlacement`]).
//! - `MAESTRO_OMP_THREADS=auto|dedicated|scheduler`: whether team members run
//!   on dedicated threads (what `threadprivate` needs; `crate::home`).
//! - `MAESTRO_OMP_PRESET` / `MAESTRO_OMP_CONTEXTS`: the scheduler created when the
//!   host did not [`install_scheduler`] one (default `single-pool`, detected contexts).
//! - `MAESTRO_OMP_SPIN_ROUNDS`: that scheduler's `idle_spin_rounds` (how long an
//!   idle worker searches, as a *searching* worker a caller may displace, before
//!   it parks; default the preset's).
//! - `MAESTRO_OMP_IGNORE_UNSUPPORTED=1`: warn instead of aborting on unsupported
//!   variables (`OMP_STACKSIZE`).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use maestro_scheduler::{
    ClassId, ClassSpec, DEFAULT_PRIORITY, Scheduler, SchedulerConfig, detected_contexts,
};

use crate::icv::{EnvSettings, Icv, parse_env};

static SCHEDULER: OnceLock<Arc<Scheduler>> = OnceLock::new();
static ENV: OnceLock<EnvSettings> = OnceLock::new();

/// Makes OpenMP work run on `scheduler` (the database's own). Must happen before
/// the first parallel region; gives the scheduler back if one is already in use.
pub fn install_scheduler(scheduler: Arc<Scheduler>) -> Result<(), Arc<Scheduler>> {
    SCHEDULER.set(scheduler)
}

/// The scheduler OpenMP work runs on; created from the environment on first use
/// unless the host installed one.
pub fn scheduler() -> &'static Arc<Scheduler> {
    let s = scheduler_inner();
    // `OMP_DISPLAY_ENV`: once, when the runtime first needs its scheduler
    // (outside the initializer, which the display itself reads). A flag, not
    // a `Once`: the display calls back into here and must not wait for itself.
    static DISPLAYED: AtomicBool = AtomicBool::new(false);
    // Relaxed: only who displays is decided here; nothing is published.
    if !DISPLAYED.load(Ordering::Relaxed)
        && !DISPLAYED.swap(true, Ordering::Relaxed)
        && let Some(verbose) = env().display_env
    {
        crate::abi::display::omp_display_env(i32::from(verbose));
    }
    s
}

/// The scheduler if the runtime has one yet (never creates it).
pub(crate) fn scheduler_if_started() -> Option<&'static Arc<Scheduler>> {
    SCHEDULER.get()
}

fn scheduler_inner() -> &'static Arc<Scheduler> {
    SCHEDULER.get_or_init(|| {
        let preset = std::env::var("MAESTRO_OMP_PRESET").unwrap_or_else(|_| "single-pool".into());
        let contexts = match std::env::var("MAESTRO_OMP_CONTEXTS") {
            Ok(v) => match v.trim().parse::<usize>() {
                Ok(n) if n > 0 => n,
                _ => fatal(&format!(
                    "MAESTRO_OMP_CONTEXTS={v} is not a positive number"
                )),
            },
            Err(_) => detected_contexts(),
        };
        let mut config = match SchedulerConfig::preset(&preset) {
            Ok(c) => c.with_contexts(contexts),
            Err(e) => fatal(&format!("cannot start the scheduler: {e}")),
        };
        if let Ok(v) = std::env::var("MAESTRO_OMP_SPIN_ROUNDS") {
            match v.trim().parse::<u32>() {
                Ok(n) => config.idle_spin_rounds = n,
                Err(_) => fatal(&format!(
                    "MAESTRO_OMP_SPIN_ROUNDS={v} is not a number of rounds"
                )),
            }
        }
        match Scheduler::new(config) {
            Ok(s) => Arc::new(s),
            Err(e) => fatal(&format!("cannot start the scheduler: {e}")),
        }
    })
}

/// Warns once if the scheduler keeps blocked workers in the active level
/// (`single-pool-nosys`): then a team needing more workers than are free hangs at
/// its first barrier (PROTOCOL.md).
pub(crate) fn warn_if_fixed_pool() {
    static WARNED: std::sync::Once = std::sync::Once::new();
    if !scheduler().config().count_sys_inactive {
        WARNED.call_once(|| {
            eprintln!(
                "maestro-gomp: scheduler '{}' counts blocked workers as active; teams \
                 with barriers larger than its free workers will hang",
                scheduler().config().name
            );
        });
    }
}

/// Reports a condition the runtime cannot continue from and aborts (we are called
/// from C, so unwinding is not an option).
/// Set by the first `cancel parallel` or `cancel taskgroup` that takes effect.
/// Every task's creation and start check it before they look for a cancelled
/// region or taskgroup, so a program that never cancels pays one load of a
/// flag that never changes. Relaxed: set before the cancellation's own flag,
/// and a task that sees it late is created or started, which OpenMP allows;
/// the cancellation's flags decide.
static CANCELLED_ANY: AtomicBool = AtomicBool::new(false);

/// Notes that something was cancelled (see [`CANCELLED_ANY`]).
pub(crate) fn note_cancellation() {
    CANCELLED_ANY.store(true, Ordering::Relaxed);
}

/// Whether anything was ever cancelled (see [`CANCELLED_ANY`]).
pub(crate) fn anything_cancelled() -> bool {
    CANCELLED_ANY.load(Ordering::Relaxed)
}

/// cancel-var (`OMP_CANCELLATION`): whether `cancel` constructs take effect.
pub(crate) fn cancellation() -> bool {
    env().cancellation
}

pub(crate) fn fatal(msg: &str) -> ! {
    eprintln!("maestro-gomp: {msg}");
    std::process::abort()
}

/// The OpenMP environment, parsed once. Unsupported variables abort here.
pub(crate) fn env() -> &'static EnvSettings {
    ENV.get_or_init(|| {
        let s = parse_env(|k| std::env::var(k).ok());
        for w in &s.warnings {
            eprintln!("maestro-gomp: {w}");
        }
        if !s.unsupported.is_empty() {
            let ignore = std::env::var("MAESTRO_OMP_IGNORE_UNSUPPORTED").is_ok_and(|v| v == "1");
            for u in &s.unsupported {
                eprintln!("maestro-gomp: {u}");
            }
            if !ignore {
                fatal("refusing to run (set MAESTRO_OMP_IGNORE_UNSUPPORTED=1 to go on)");
            }
        }
        s
    })
}

/// The ICVs of an initial task (a thread outside any region).
pub(crate) fn initial_icv() -> Icv {
    let sched = scheduler();
    env().initial_icv(sched.contexts(), sched.config().workers_max)
}

/// thread-limit-var: `OMP_THREAD_LIMIT`, at most the scheduler's worker cap (a team
/// needs one worker per non-master member at once to pass a barrier).
/// A task's own thread-limit-var is in its ICVs (`Icv::thread_limit`): a
/// `teams` construct's `thread_limit` lowers it for its teams.
pub(crate) fn thread_limit() -> usize {
    env().thread_limit_under(scheduler().config().workers_max)
}

/// nteams-var (`omp_set_num_teams`, else `OMP_NUM_TEAMS`; 0 = unset) and
/// teams-thread-limit-var (`omp_set_teams_thread_limit`, else
/// `OMP_TEAMS_THREAD_LIMIT`; 0 = unset): one per device, so process-wide.
static NUM_TEAMS: Control = Control::new();
static TEAMS_THREAD_LIMIT: Control = Control::new();

pub(crate) fn num_teams_var() -> usize {
    NUM_TEAMS.get(|| env().num_teams)
}

pub(crate) fn set_num_teams_var(n: usize) {
    NUM_TEAMS.set(n);
}

pub(crate) fn teams_thread_limit_var() -> usize {
    TEAMS_THREAD_LIMIT.get(|| env().teams_thread_limit)
}

pub(crate) fn set_teams_thread_limit_var(n: usize) {
    TEAMS_THREAD_LIMIT.set(n);
}

/// A process-wide control: set by an API call, or read from the environment by the
/// first reader that finds it unset (a racing `set` wins over the environment).
/// Values are small codes; `UNSET` is reserved.
struct Control(AtomicUsize);

impl Control {
    const UNSET: usize = usize::MAX;

    const fn new() -> Control {
        Control(AtomicUsize::new(Self::UNSET))
    }

    fn get(&self, from_env: impl FnOnce() -> usize) -> usize {
        let v = self.0.load(Ordering::Relaxed);
        if v != Self::UNSET {
            return v;
        }
        let _ = self.0.compare_exchange(
            Self::UNSET,
            from_env().min(Self::UNSET - 1),
            Ordering::Relaxed,
            Ordering::Relaxed,
        );
        self.0.load(Ordering::Relaxed)
    }

    fn set(&self, v: usize) {
        self.0.store(v.min(Self::UNSET - 1), Ordering::Relaxed);
    }
}

static PRIORITY: Control = Control::new();
static HINT_TEAMS: Control = Control::new();
static PLACEMENT: Control = Control::new();

/// The scheduler priority team members and tasks are submitted with.
pub fn priority() -> usize {
    PRIORITY.get(|| {
        std::env::var("MAESTRO_OMP_PRIORITY")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .or_else(|| class_env().map(|(_, spec)| spec.priority))
            .unwrap_or(DEFAULT_PRIORITY)
    })
}

/// `MAESTRO_OMP_CLASS`, parsed and defined on the scheduler (or, if the
/// host defined a class of its name, that class, unchanged) on first use.
fn class_env() -> Option<&'static (ClassId, ClassSpec)> {
    static CLASS: OnceLock<Option<(ClassId, ClassSpec)>> = OnceLock::new();
    CLASS
        .get_or_init(|| {
            let v = std::env::var("MAESTRO_OMP_CLASS").ok()?;
            let spec: ClassSpec = v
                .parse()
                .unwrap_or_else(|e| fatal(&format!("MAESTRO_OMP_CLASS={v}: {e}")));
            // Not `scheduler()`: its `OMP_DISPLAY_ENV` output reads the
            // priority, which reads this.
            let s = scheduler_inner();
            let id = match s.class_by_name(&spec.name) {
                Some(id) => id,
                None => s
                    .define_class(&spec)
                    .unwrap_or_else(|e| fatal(&format!("MAESTRO_OMP_CLASS={v}: {e}"))),
            };
            Some((id, spec))
        })
        .as_ref()
}

/// The workload class parallel regions run in (`MAESTRO_OMP_CLASS`): a
/// region forked by a thread in the default class runs in it — its members,
/// an offloaded master, the explicit tasks its members create — and shares
/// the contexts with the database's classes by weight. A thread already in
/// another class (the host's `with_class`) keeps its own. `None`: unset.
pub fn region_class() -> Option<ClassId> {
    class_env().map(|&(id, _)| id)
}

/// Sets the priority of OpenMP work submitted from now on (0 = lowest; values above
/// the scheduler's highest level are clamped by the scheduler).
pub fn set_priority(priority: usize) {
    PRIORITY.set(priority);
}

/// Whether regions without `num_threads` are sized by the concurrency hint.
pub fn hint_teams() -> bool {
    HINT_TEAMS
        .get(|| usize::from(std::env::var("MAESTRO_OMP_TEAMS").is_ok_and(|v| v.trim() == "hint")))
        == 1
}

/// Turns hint-sized teams on or off.
pub fn set_hint_teams(on: bool) {
    HINT_TEAMS.set(usize::from(on));
}

/// Where the master's share of a parallel region runs when the region is entered
/// by a thread outside the scheduler (an application thread) outside any region.
/// Regions entered on scheduler workers, nested regions and the legacy
/// `GOMP_parallel_start` pair (where the compiler calls the body itself) always
/// run the master on the calling thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MasterPlacement {
    /// On the calling thread, as libgomp does: the fastest fork/join, but the
    /// master's share (half of a team of two) runs on a thread the scheduler
    /// neither counts nor prioritizes. The default.
    Caller,
    /// As one more scheduler task at the OpenMP priority while the calling thread
    /// sleeps: every cycle of the region is given out by the scheduler, so the
    /// database's priorities govern all of it.
    Scheduler,
}

impl MasterPlacement {
    /// Parses `caller` or `scheduler`.
    pub fn parse(s: &str) -> Result<MasterPlacement, String> {
        match s.trim() {
            "caller" => Ok(MasterPlacement::Caller),
            "scheduler" => Ok(MasterPlacement::Scheduler),
            other => Err(format!(
                "master placement {other:?} is neither `caller` nor `scheduler`"
            )),
        }
    }

    /// The name [`MasterPlacement::parse`] accepts.
    pub fn name(self) -> &'static str {
        match self {
            MasterPlacement::Caller => "caller",
            MasterPlacement::Scheduler => "scheduler",
        }
    }
}

/// Where masters entered from outside the scheduler run (`MAESTRO_OMP_MASTER`,
/// default [`MasterPlacement::Caller`]; an unparsable value is fatal).
pub fn master_placement() -> MasterPlacement {
    let code = PLACEMENT.get(|| match std::env::var("MAESTRO_OMP_MASTER") {
        Ok(s) => match MasterPlacement::parse(&s) {
            Ok(p) => p as usize,
            Err(e) => fatal(&format!("MAESTRO_OMP_MASTER: {e}")),
        },
        Err(_) => MasterPlacement::Caller as usize,
    });
    match code {
        c if c == MasterPlacement::Caller as usize => MasterPlacement::Caller,
        c if c == MasterPlacement::Scheduler as usize => MasterPlacement::Scheduler,
        other => panic!("master placement code {other} names no placement"),
    }
}

/// Sets where masters entered from outside the scheduler run, for regions forked
/// from now on.
pub fn set_master_placement(p: MasterPlacement) {
    PLACEMENT.set(p as usize);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_control_reads_the_environment_once_and_a_set_wins() {
        let c = Control::new();
        assert_eq!(c.get(|| 7), 7);
        assert_eq!(c.get(|| unreachable!("read once")), 7);
        c.set(2);
        assert_eq!(c.get(|| unreachable!("set")), 2);
        c.set(usize::MAX);
        assert_ne!(c.get(|| 0), Control::UNSET, "UNSET stays reserved");
        let fresh = Control::new();
        fresh.set(3);
        assert_eq!(fresh.get(|| unreachable!("set before the first read")), 3);
    }
}
