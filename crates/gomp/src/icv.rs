//! Internal control variables (OpenMP §2.4) and the `OMP_*` environment variables
//! that set their initial values. Parsing is pure (it takes the variables' values)
//! so it is unit-tested without touching the process environment.

/// A loop schedule kind (`omp_sched_t` values 1 to 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sched {
    Static,
    Dynamic,
    Guided,
    /// Left to the runtime: we use `Static`.
    Auto,
}

impl Sched {
    /// From an `omp_sched_t` / GCC `GFS_*` value, ignoring the monotonic bit.
    pub fn from_raw(raw: u32) -> Option<Sched> {
        match raw & !0x8000_0000 {
            1 => Some(Sched::Static),
            2 => Some(Sched::Dynamic),
            3 => Some(Sched::Guided),
            4 => Some(Sched::Auto),
            _ => None,
        }
    }

    pub fn to_raw(self) -> u32 {
        match self {
            Sched::Static => 1,
            Sched::Dynamic => 2,
            Sched::Guided => 3,
            Sched::Auto => 4,
        }
    }
}

/// The ICVs of one task's data environment. Copied into every task a task creates
/// (OpenMP's inheritance rules), so a `Cell<Icv>` per task is enough.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Icv {
    /// nthreads-var: team size of the next parallel region without `num_threads`.
    pub nthreads: usize,
    /// dyn-var: may the runtime shrink teams (we then size them by the hint).
    pub dynamic: bool,
    /// max-active-levels-var (1 = nested parallelism disabled).
    pub max_active_levels: usize,
    /// run-sched-var: what `schedule(runtime)` means.
    pub run_sched: Sched,
    /// run-sched-var's chunk (0 = unspecified).
    pub run_chunk: u64,
    /// thread-limit-var: at most this many members in the contention group
    /// (`OMP_THREAD_LIMIT`, or a `teams` construct's `thread_limit` for its
    /// teams), never above the scheduler's `workers_max`.
    pub thread_limit: usize,
    /// def-allocator-var: the allocator of `omp_alloc(…, omp_null_allocator)`
    /// (`omp_set_default_allocator`, else `OMP_ALLOCATOR`).
    pub default_allocator: crate::alloc::Handle,
}

/// What we report as the supported number of active levels (libgomp's value).
pub(crate) const SUPPORTED_ACTIVE_LEVELS: usize = 255;

/// Everything read from the environment once, at first use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct EnvSettings {
    /// `OMP_NUM_THREADS` as a list (one entry per nesting level); empty if unset.
    pub nthreads_list: Vec<usize>,
    pub dynamic: bool,
    pub max_active_levels: Option<usize>,
    pub nested: Option<bool>,
    pub run_sched: (Sched, u64),
    pub thread_limit: Option<usize>,
    /// `OMP_NUM_TEAMS` (nteams-var; 0 = unset).
    pub num_teams: usize,
    /// `OMP_TEAMS_THREAD_LIMIT` (teams-thread-limit-var; 0 = unset).
    pub teams_thread_limit: usize,
    /// `OMP_ALLOCATOR` (a predefined allocator), else `omp_default_mem_alloc`.
    pub default_allocator: crate::alloc::Handle,
    /// `OMP_DISPLAY_ENV`: `Some(verbose)` to display the environment once the
    /// runtime starts.
    pub display_env: Option<bool>,
    /// `OMP_DISPLAY_AFFINITY` (display-affinity-var): show a member's
    /// affinity line when it starts and the line changed for its thread.
    pub display_affinity: bool,
    /// `OMP_CANCELLATION` (cancel-var): whether `cancel` constructs take effect.
    pub cancellation: bool,
    /// Set variables we cannot honour, with why (the runtime refuses to start).
    pub unsupported: Vec<String>,
    /// Values we could not parse (reported once, then ignored like libgomp does).
    pub warnings: Vec<String>,
}

/// Parses the OpenMP environment; `get` returns a variable's value.
pub(crate) fn parse_env(get: impl Fn(&str) -> Option<String>) -> EnvSettings {
    let mut s = EnvSettings {
        nthreads_list: Vec::new(),
        dynamic: false,
        max_active_levels: None,
        nested: None,
        run_sched: (Sched::Dynamic, 1),
        thread_limit: None,
        num_teams: 0,
        teams_thread_limit: 0,
        default_allocator: crate::alloc::DEFAULT_MEM_ALLOC,
        display_env: None,
        display_affinity: false,
        cancellation: false,
        unsupported: Vec::new(),
        warnings: Vec::new(),
    };
    if let Some(v) = get("OMP_NUM_THREADS") {
        match parse_list(&v) {
            Some(l) => s.nthreads_list = l,
            None => s.warnings.push(format!("ignoring OMP_NUM_THREADS={v}")),
        }
    }
    let flag = |name: &str, s: &mut EnvSettings| -> Option<bool> {
        let v = get(name)?;
        let b = parse_bool(&v);
        if b.is_none() {
            s.warnings.push(format!("ignoring {name}={v}"));
        }
        b
    };
    s.dynamic = flag("OMP_DYNAMIC", &mut s).unwrap_or(false);
    s.nested = flag("OMP_NESTED", &mut s);
    s.cancellation = flag("OMP_CANCELLATION", &mut s).unwrap_or(false);
    s.display_affinity = flag("OMP_DISPLAY_AFFINITY", &mut s).unwrap_or(false);
    if let Some(v) = get("OMP_MAX_ACTIVE_LEVELS") {
        match v.trim().parse::<usize>() {
            Ok(n) => s.max_active_levels = Some(n.min(SUPPORTED_ACTIVE_LEVELS)),
            Err(_) => s
                .warnings
                .push(format!("ignoring OMP_MAX_ACTIVE_LEVELS={v}")),
        }
    }
    if let Some(v) = get("OMP_SCHEDULE") {
        match parse_schedule(&v) {
            Some(x) => s.run_sched = x,
            None => s.warnings.push(format!("ignoring OMP_SCHEDULE={v}")),
        }
    }
    if let Some(v) = get("OMP_THREAD_LIMIT") {
        match v.trim().parse::<usize>() {
            Ok(n) if n > 0 => s.thread_limit = Some(n),
            _ => s.warnings.push(format!("ignoring OMP_THREAD_LIMIT={v}")),
        }
    }
    for (name, var) in [
        ("OMP_NUM_TEAMS", &mut s.num_teams),
        ("OMP_TEAMS_THREAD_LIMIT", &mut s.teams_thread_limit),
    ] {
        if let Some(v) = get(name) {
            match v.trim().parse::<usize>() {
                Ok(n) => *var = n,
                Err(_) => s.warnings.push(format!("ignoring {name}={v}")),
            }
        }
    }
    if let Some(v) = get("OMP_DISPLAY_ENV") {
        match v.trim().to_ascii_lowercase().as_str() {
            "true" => s.display_env = Some(false),
            "verbose" => s.display_env = Some(true),
            "false" => {}
            _ => s.warnings.push(format!("ignoring OMP_DISPLAY_ENV={v}")),
        }
    }
    if let Some(v) = get("OMP_ALLOCATOR") {
        match crate::alloc::parse_allocator_env(&v) {
            Some(h) => s.default_allocator = h,
            None => s.warnings.push(format!(
                "ignoring OMP_ALLOCATOR={v} (only the predefined allocators are understood)"
            )),
        }
    }
    for name in ["OMP_STACKSIZE", "GOMP_STACKSIZE"] {
        if get(name).is_some() {
            s.unsupported.push(format!(
                "{name} is not supported: team members run on the scheduler's workers, \
                 whose stacks the scheduler sizes"
            ));
        }
    }
    s
}

impl EnvSettings {
    /// The initial ICVs of the initial task; `contexts` is the default team
    /// size, `workers_max` the scheduler's cap on thread-limit-var.
    pub fn initial_icv(&self, contexts: usize, workers_max: usize) -> Icv {
        let max_active_levels = match (self.max_active_levels, self.nested) {
            (Some(n), _) => n,
            (None, Some(true)) => SUPPORTED_ACTIVE_LEVELS,
            (None, Some(false)) => 1,
            // libgomp ≥ 11: a list in OMP_NUM_THREADS enables that many levels.
            (None, None) => self.nthreads_list.len().max(1),
        };
        Icv {
            nthreads: self
                .nthreads_list
                .first()
                .copied()
                .unwrap_or(contexts)
                .max(1),
            dynamic: self.dynamic,
            max_active_levels,
            run_sched: self.run_sched.0,
            run_chunk: self.run_sched.1,
            thread_limit: self.thread_limit_under(workers_max),
            default_allocator: self.default_allocator,
        }
    }

    /// thread-limit-var of an initial task: `OMP_THREAD_LIMIT`, at most `cap`.
    pub fn thread_limit_under(&self, cap: usize) -> usize {
        self.thread_limit.map_or(cap, |l| l.min(cap)).max(1)
    }

    /// nthreads-var of the members of a team at nesting `level` (1 = outermost),
    /// if `OMP_NUM_THREADS` lists one for the next level.
    pub fn nthreads_for_level(&self, level: usize) -> Option<usize> {
        self.nthreads_list.get(level).copied()
    }
}

fn parse_list(v: &str) -> Option<Vec<usize>> {
    let l: Option<Vec<usize>> = v
        .split(',')
        .map(|x| x.trim().parse::<usize>().ok().filter(|&n| n > 0))
        .collect();
    l.filter(|l| !l.is_empty())
}

fn parse_bool(v: &str) -> Option<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Some(true),
        "false" | "0" | "no" | "off" => Some(false),
        _ => None,
    }
}

/// `[monotonic:|nonmonotonic:]kind[,chunk]`.
pub(crate) fn parse_schedule(v: &str) -> Option<(Sched, u64)> {
    let v = v.trim().to_ascii_lowercase();
    let v = v
        .strip_prefix("monotonic:")
        .or_else(|| v.strip_prefix("nonmonotonic:"))
        .unwrap_or(&v);
    let (kind, chunk) = match v.split_once(',') {
        Some((k, c)) => (k.trim(), Some(c.trim().parse::<u64>().ok()?)),
        None => (v.trim(), None),
    };
    let kind = match kind {
        "static" => Sched::Static,
        "dynamic" => Sched::Dynamic,
        "guided" => Sched::Guided,
        "auto" => Sched::Auto,
        _ => return None,
    };
    let chunk = match (kind, chunk) {
        (Sched::Static | Sched::Auto, c) => c.unwrap_or(0),
        (_, c) => c.unwrap_or(1).max(1),
    };
    Some((kind, chunk))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> EnvSettings {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        parse_env(|name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
    }

    #[test]
    fn defaults_follow_the_contexts() {
        let s = env(&[]);
        let icv = s.initial_icv(6, 64);
        assert_eq!(icv.nthreads, 6);
        assert_eq!(icv.max_active_levels, 1);
        assert!(!icv.dynamic);
        assert_eq!((icv.run_sched, icv.run_chunk), (Sched::Dynamic, 1));
        assert!(s.unsupported.is_empty() && s.warnings.is_empty());
    }

    #[test]
    fn num_threads_list_nested_and_schedule() {
        let s = env(&[
            ("OMP_NUM_THREADS", "4, 2"),
            ("OMP_SCHEDULE", "nonmonotonic:guided,7"),
            ("OMP_DYNAMIC", "TRUE"),
        ]);
        let icv = s.initial_icv(8, 64);
        assert_eq!(icv.nthreads, 4);
        assert_eq!(s.nthreads_for_level(1), Some(2));
        assert_eq!(icv.max_active_levels, 2);
        assert!(icv.dynamic);
        assert_eq!((icv.run_sched, icv.run_chunk), (Sched::Guided, 7));
        let s = env(&[("OMP_NESTED", "false"), ("OMP_NUM_THREADS", "3,3")]);
        assert_eq!(s.initial_icv(2, 64).max_active_levels, 1);
        let s = env(&[("OMP_NESTED", "true")]);
        assert_eq!(
            s.initial_icv(2, 64).max_active_levels,
            SUPPORTED_ACTIVE_LEVELS
        );
        let s = env(&[("OMP_MAX_ACTIVE_LEVELS", "3"), ("OMP_NESTED", "false")]);
        assert_eq!(s.initial_icv(2, 64).max_active_levels, 3);
    }

    #[test]
    fn bad_values_warn_and_unsupported_ones_are_reported() {
        let s = env(&[
            ("OMP_NUM_THREADS", "0"),
            ("OMP_SCHEDULE", "fastest"),
            ("OMP_STACKSIZE", "16M"),
            ("OMP_CANCELLATION", "true"),
        ]);
        assert_eq!(s.warnings.len(), 2);
        assert_eq!(s.unsupported.len(), 1);
        assert!(s.cancellation);
        assert!(!env(&[("OMP_CANCELLATION", "false")]).cancellation);
        assert!(!env(&[]).cancellation);
        assert_eq!(s.initial_icv(3, 64).nthreads, 3);
        assert_eq!(s.initial_icv(3, 64).thread_limit, 64);
        let limited = env(&[("OMP_THREAD_LIMIT", "5")]);
        assert_eq!(limited.initial_icv(3, 64).thread_limit, 5);
        assert_eq!(limited.initial_icv(3, 4).thread_limit, 4, "capped");
    }

    #[test]
    fn display_env_and_allocator_variables() {
        assert_eq!(env(&[("OMP_DISPLAY_ENV", "TRUE")]).display_env, Some(false));
        assert_eq!(
            env(&[("OMP_DISPLAY_ENV", "verbose")]).display_env,
            Some(true)
        );
        assert_eq!(env(&[("OMP_DISPLAY_ENV", "false")]).display_env, None);
        assert!(env(&[("OMP_DISPLAY_AFFINITY", "true")]).display_affinity);
        assert!(!env(&[]).display_affinity);
        assert_eq!(env(&[("OMP_DISPLAY_ENV", "loud")]).warnings.len(), 1);
        assert_eq!(
            env(&[("OMP_ALLOCATOR", "omp_high_bw_mem_alloc")]).default_allocator,
            4
        );
        let bad = env(&[("OMP_ALLOCATOR", "my_alloc")]);
        assert_eq!(bad.default_allocator, crate::alloc::DEFAULT_MEM_ALLOC);
        assert_eq!(bad.warnings.len(), 1);
    }

    #[test]
    fn schedules_parse() {
        assert_eq!(parse_schedule("static"), Some((Sched::Static, 0)));
        assert_eq!(parse_schedule("static, 4"), Some((Sched::Static, 4)));
        assert_eq!(parse_schedule("dynamic"), Some((Sched::Dynamic, 1)));
        assert_eq!(
            parse_schedule("monotonic:dynamic,3"),
            Some((Sched::Dynamic, 3))
        );
        assert_eq!(parse_schedule("auto"), Some((Sched::Auto, 0)));
        assert_eq!(parse_schedule("guided,x"), None);
        assert_eq!(Sched::from_raw(0x8000_0002), Some(Sched::Dynamic));
        assert_eq!(Sched::from_raw(0), None);
    }
}
