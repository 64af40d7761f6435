//! The paper's §6.3 experiment (Wolf et al., SSDBM 2015, figures 1, 2 and 10):
//! a database workload and a multi-threaded OpenMP application in one process,
//! executions per second of each, with the database's work at three scheduler
//! priorities — once with the application on stock libgomp (its own threads,
//! which the scheduler cannot see), once on our runtime sharing the database's
//! scheduler.
//!
//! - **Database**: hash SUM aggregations (100 keys, values put through a chain of
//!   square roots so the work is CPU-bound, one local hash map per partition,
//!   merged serially — the paper's design), each a scheduler job at the database
//!   priority that splits into one task per context. One submitting thread keeps
//!   at most `jobs_in_flight_max` (the paper's 100) incomplete and sleeps 1 ms
//!   when that many are.
//! - **Application**: `app_threads` (the paper's two) threads calling a matrix-vector
//!   product with `#pragma omp parallel for` in a loop (`c/omp_matvec.c`).
//!   The C code is built twice as a shared object and loaded into this process:
//!   against stock libgomp (loaded with `RTLD_DEEPBIND` so it binds to libgomp and
//!   not to the GOMP_* symbols this binary exports), and with its GOMP_*
//!   references left undefined, so the dynamic linker binds them to this
//!   executable's own runtime (the `maestro` binary exports them, see
//!   `crates/cli/build.rs`) — the runtime whose scheduler we install.
//!
//! OpenMP work runs at [`DEFAULT_PRIORITY`]; the database at one level below
//! (`low`), the same (`equal`) and one above (`high`, which the scheduler treats
//! as urgent: taken before queued partitioned work).
//!
//! Every execution is checked: each aggregation against a serial reference, each
//! product's sum against a serial run of the same C code; a probe checks that the
//! runtime measured is the one named (no member on a scheduler thread under
//! libgomp; the expected count under ours). Loaded objects are never unloaded
//! (libgomp's threads outlive the runs).

use std::collections::HashMap;
use std::ffi::{CStr, CString, c_int, c_uint, c_void};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use maestro_scheduler::{ClassId, ClassSpec, DEFAULT_PRIORITY, Scheduler, set_thread_class};

use crate::{AppRuntime, run};
use maestro_gomp::{self as runtime, MasterPlacement};

/// The application's source.
pub const MATVEC_C: &str = include_str!("../c/omp_matvec.c");

/// Distinct grouping keys of the aggregation (the paper's [0, 99]).
pub const AGG_KEYS: usize = 100;

/// Longest the database side may take to finish its in-flight jobs after a run,
/// in seconds (guessed: 100 jobs of tens of milliseconds each on 2 contexts take
/// a few seconds).
const DRAIN_TIMEOUT_S: u64 = 300;

/// The database's scheduler priority relative to the OpenMP work's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DbPriority {
    /// One level below OpenMP.
    Low,
    /// The same level.
    Equal,
    /// One level above (urgent in our scheduler).
    High,
    /// The same level, but the database and the application each in its own
    /// workload class of equal weight (issue 13's shares; stock libgomp's
    /// threads are not the scheduler's, so only its database side is in a
    /// class). Not in the default list.
    Shares,
}

impl DbPriority {
    /// The default list.
    pub const ALL: [DbPriority; 3] = [DbPriority::Low, DbPriority::Equal, DbPriority::High];
    /// Every value `parse` accepts.
    pub const SELECTABLE: [DbPriority; 4] = [
        DbPriority::Low,
        DbPriority::Equal,
        DbPriority::High,
        DbPriority::Shares,
    ];

    pub fn name(self) -> &'static str {
        match self {
            DbPriority::Low => "low",
            DbPriority::Equal => "equal",
            DbPriority::High => "high",
            DbPriority::Shares => "shares",
        }
    }

    pub fn parse(s: &str) -> Result<DbPriority, String> {
        DbPriority::SELECTABLE
            .into_iter()
            .find(|p| p.name() == s.trim())
            .ok_or_else(|| format!("unknown database priority {s:?} (low, equal, high, shares)"))
    }

    /// The scheduler level of database jobs (OpenMP runs at [`DEFAULT_PRIORITY`]).
    pub fn level(self) -> usize {
        match self {
            DbPriority::Low => DEFAULT_PRIORITY - 1,
            DbPriority::Equal | DbPriority::Shares => DEFAULT_PRIORITY,
            DbPriority::High => DEFAULT_PRIORITY + 1,
        }
    }
}

/// Sizes and choices of one experiment.
#[derive(Clone, Debug)]
pub struct InterferenceSetup {
    /// The C compiler driver (gcc with OpenMP support).
    pub cc: String,
    /// Where the two shared objects are built.
    pub work_dir: PathBuf,
    /// Length of every measured run.
    pub duration: Duration,
    /// Incomplete aggregation jobs at most (the paper's 100).
    pub jobs_in_flight_max: usize,
    /// Tuples per aggregation, in `agg_blocks` blocks.
    pub agg_tuples: usize,
    pub agg_blocks: usize,
    /// Square roots per aggregated value.
    pub agg_sqrts: u32,
    /// Matrix rows and columns, square roots per element.
    pub matvec_rows: usize,
    pub matvec_cols: usize,
    pub matvec_sqrts: u32,
    /// Application threads calling the product in a loop (the paper's 2).
    pub app_threads: usize,
    pub runtimes: Vec<AppRuntime>,
    pub db_priorities: Vec<DbPriority>,
    /// This process's CPU time (user + system) so far, for the utilization of
    /// each run (the caller's clock, e.g. `maestro_bench::cpu`).
    pub cpu_time: fn() -> Duration,
}

/// One measured run: the database alone (no `runtime`), the application alone (no
/// `db_priority`), or both.
#[derive(Clone, Debug, PartialEq)]
pub struct InterferenceRow {
    /// The application's runtime (None when the database ran alone).
    pub runtime: Option<AppRuntime>,
    /// The database priority (None when the application ran alone).
    pub db_priority: Option<DbPriority>,
    /// Aggregations completed per second (None without a database side).
    pub db_per_s: Option<f64>,
    /// Products completed per second (None without an application side).
    pub app_per_s: Option<f64>,
    /// Process CPU time ÷ (wall time × contexts) over the run.
    pub cpu_utilization: f64,
}

impl InterferenceRow {
    /// Whether one side ran alone.
    pub fn alone(&self) -> bool {
        self.runtime.is_none() || self.db_priority.is_none()
    }

    /// `db-alone-<priority>`, `app-alone`, or `db-<priority>` (the database beside
    /// the application).
    pub fn case(&self) -> String {
        match (self.runtime, self.db_priority) {
            (None, p) => format!("db-alone-{}", p.map_or("none", DbPriority::name)),
            (Some(_), None) => "app-alone".into(),
            (Some(_), Some(p)) => format!("db-{}", p.name()),
        }
    }
}

type NewFn = unsafe extern "C" fn(c_int, c_int, c_int, c_uint) -> *mut c_void;
type FreeFn = unsafe extern "C" fn(*mut c_void);
type RunFn = unsafe extern "C" fn(*mut c_void) -> f64;
type ProbeFn = unsafe extern "C" fn(*mut c_int, *mut c_int);

/// The application's entry points in one loaded shared object.
struct MatvecLib {
    new: NewFn,
    free: FreeFn,
    run: RunFn,
    reference: RunFn,
    probe: ProbeFn,
}

fn dlerror() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated string owned by libc, valid
    // until the next dl* call on this thread; we copy it at once.
    unsafe {
        let e = libc::dlerror();
        if e.is_null() {
            "unknown error".into()
        } else {
            CStr::from_ptr(e).to_string_lossy().into_owned()
        }
    }
}

impl MatvecLib {
    /// Loads `path` (never unloaded) and looks up the five entry points.
    fn load(path: &Path, deep_bind: bool) -> Result<MatvecLib, String> {
        let c_path = CString::new(path.as_os_str().as_encoded_bytes())
            .map_err(|_| format!("{} has a NUL byte", path.display()))?;
        let mut flags = libc::RTLD_NOW | libc::RTLD_LOCAL;
        if deep_bind {
            flags |= libc::RTLD_DEEPBIND;
        }
        // SAFETY: a valid C string; loading runs the object's constructors (none
        // in ours; libgomp's initializes its own state).
        let handle = unsafe { libc::dlopen(c_path.as_ptr(), flags) };
        if handle.is_null() {
            return Err(format!("cannot load {}: {}", path.display(), dlerror()));
        }
        let sym = |name: &str| -> Result<*mut c_void, String> {
            let c_name = CString::new(name).expect("symbol names have no NUL");
            // SAFETY: `handle` is a live handle from dlopen; `c_name` a C string.
            let p = unsafe { libc::dlsym(handle, c_name.as_ptr()) };
            if p.is_null() {
                Err(format!(
                    "{}: no symbol {name}: {}",
                    path.display(),
                    dlerror()
                ))
            } else {
                Ok(p)
            }
        };
        // SAFETY: (each transmute) the symbols are the functions of
        // `c/omp_matvec.c` with exactly these C signatures; the object is never
        // unloaded, so the pointers stay valid.
        unsafe {
            Ok(MatvecLib {
                new: std::mem::transmute::<*mut c_void, NewFn>(sym("matvec_new")?),
                free: std::mem::transmute::<*mut c_void, FreeFn>(sym("matvec_free")?),
                run: std::mem::transmute::<*mut c_void, RunFn>(sym("matvec_run")?),
                reference: std::mem::transmute::<*mut c_void, RunFn>(sym("matvec_reference")?),
                probe: std::mem::transmute::<*mut c_void, ProbeFn>(sym("matvec_probe")?),
            })
        }
    }

    /// (default team size, members that ran on scheduler threads).
    fn probe(&self) -> (usize, usize) {
        let (mut n, mut on) = (0, 0);
        // SAFETY: matvec_probe writes two ints through valid pointers.
        unsafe { (self.probe)(&mut n, &mut on) };
        (n.max(0) as usize, on.max(0) as usize)
    }
}

/// One application thread's matrix (owned, freed on drop).
struct Matrix<'a> {
    lib: &'a MatvecLib,
    handle: *mut c_void,
}

// SAFETY: a handle is used by one thread at a time (each application thread owns
// its own); the C code keeps no thread-affine state.
unsafe impl Send for Matrix<'_> {}

impl<'a> Matrix<'a> {
    fn new(lib: &'a MatvecLib, s: &InterferenceSetup) -> Result<Matrix<'a>, String> {
        let dim = |v: usize, what: &str| {
            c_int::try_from(v).map_err(|_| format!("{what} {v} does not fit a C int"))
        };
        // SAFETY: plain sizes; NULL is handled below.
        let handle = unsafe {
            (lib.new)(
                dim(s.matvec_rows, "matrix rows")?,
                dim(s.matvec_cols, "matrix columns")?,
                dim(s.matvec_sqrts as usize, "square roots")?,
                12345,
            )
        };
        if handle.is_null() {
            return Err("matvec_new failed (sizes or memory)".into());
        }
        Ok(Matrix { lib, handle })
    }

    fn run(&mut self) -> f64 {
        // SAFETY: our live handle, used by this thread only.
        unsafe { (self.lib.run)(self.handle) }
    }

    fn reference(&mut self) -> f64 {
        // SAFETY: as above.
        unsafe { (self.lib.reference)(self.handle) }
    }
}

impl Drop for Matrix<'_> {
    fn drop(&mut self) {
        // SAFETY: the handle came from matvec_new and is freed once.
        unsafe { (self.lib.free)(self.handle) }
    }
}

/// The aggregation's input and its serial answer.
struct AggData {
    blocks: Vec<Vec<(u32, u32)>>,
    sqrts: u32,
    expected: Vec<u64>,
}

/// What one value adds to its group: the value through `sqrts` square roots, in
/// millionths (an integer, so partial sums merge exactly in any order).
fn weight(value: u32, sqrts: u32) -> u64 {
    let mut x = f64::from(value);
    for _ in 0..sqrts {
        x = (x + 1.0).sqrt();
    }
    (x * 1e6) as u64
}

impl AggData {
    fn new(tuples: usize, blocks: usize, sqrts: u32) -> AggData {
        let mut rng = fastrand::Rng::with_seed(0x9E37_79B9_7F4A_7C15);
        let per = tuples.div_ceil(blocks.max(1));
        let mut out: Vec<Vec<(u32, u32)>> = Vec::new();
        let mut left = tuples;
        while left > 0 {
            let n = per.min(left);
            out.push(
                (0..n)
                    .map(|_| (rng.u32(0..AGG_KEYS as u32), rng.u32(0..20)))
                    .collect(),
            );
            left -= n;
        }
        let mut expected = vec![0u64; AGG_KEYS];
        for &(k, v) in out.iter().flatten() {
            expected[k as usize] += weight(v, sqrts);
        }
        AggData {
            blocks: out,
            sqrts,
            expected,
        }
    }
}

/// One aggregation on `sched`, called on one of its workers: one task (with a
/// local hash map) per context over the blocks, then a serial merge.
fn aggregate(sched: &Scheduler, data: &AggData) -> Vec<u64> {
    let parts = sched.contexts().max(1);
    let per = data.blocks.len().div_ceil(parts).max(1);
    let partials: Mutex<Vec<HashMap<u32, u64>>> = Mutex::new(Vec::with_capacity(parts));
    sched.scope(|s| {
        for chunk in data.blocks.chunks(per) {
            let partials = &partials;
            s.spawn(move |_| {
                let mut local: HashMap<u32, u64> = HashMap::with_capacity(AGG_KEYS);
                for &(k, v) in chunk.iter().flatten() {
                    *local.entry(k).or_insert(0) += weight(v, data.sqrts);
                }
                partials
                    .lock()
                    .expect("no task panics holding it")
                    .push(local);
            });
        }
    });
    let mut sums = vec![0u64; AGG_KEYS];
    for local in partials.into_inner().expect("no task panicked holding it") {
        for (k, v) in local {
            sums[k as usize] += v;
        }
    }
    sums
}

/// Counters of the database side of one run.
#[derive(Default)]
struct DbCounters {
    in_flight: AtomicUsize,
    completed: AtomicU64,
    wrong: AtomicU64,
}

/// Submits aggregation jobs until `deadline`, then waits for the in-flight ones.
fn drive_db(
    sched: &Arc<Scheduler>,
    data: &Arc<AggData>,
    priority: usize,
    in_flight_max: usize,
    deadline: Instant,
) -> Result<u64, String> {
    let counters = Arc::new(DbCounters::default());
    while Instant::now() < deadline {
        // Acquire: pairs with the job's Release decrement, so a slot seen free is
        // a job that finished.
        if counters.in_flight.load(Ordering::Acquire) >= in_flight_max {
            std::thread::sleep(Duration::from_millis(1));
            continue;
        }
        counters.in_flight.fetch_add(1, Ordering::Relaxed);
        let (s, d, c) = (sched.clone(), data.clone(), counters.clone());
        drop(sched.spawn_with_priority(priority, move || {
            let sums = aggregate(&s, &d);
            if sums != d.expected {
                c.wrong.fetch_add(1, Ordering::Relaxed);
            }
            if Instant::now() <= deadline {
                c.completed.fetch_add(1, Ordering::Relaxed);
            }
            // Release: pairs with the submitter's and the drain's Acquire loads.
            c.in_flight.fetch_sub(1, Ordering::Release);
        }));
    }
    let drain_end = Instant::now() + Duration::from_secs(DRAIN_TIMEOUT_S);
    while counters.in_flight.load(Ordering::Acquire) > 0 {
        if Instant::now() > drain_end {
            return Err(format!(
                "{} aggregation jobs still unfinished {DRAIN_TIMEOUT_S} s after the run",
                counters.in_flight.load(Ordering::Relaxed)
            ));
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let wrong = counters.wrong.load(Ordering::Relaxed);
    if wrong > 0 {
        return Err(format!("{wrong} aggregations gave a wrong answer"));
    }
    Ok(counters.completed.load(Ordering::Relaxed))
}

/// Calls the product in a loop until `deadline`; counts those finished by then.
fn drive_app(mut m: Matrix<'_>, expected: f64, deadline: Instant) -> Result<u64, String> {
    let mut done = 0;
    while Instant::now() < deadline {
        let got = m.run();
        if got.to_bits() != expected.to_bits() {
            return Err(format!(
                "matrix-vector product summed to {got}, expected {expected}"
            ));
        }
        if Instant::now() <= deadline {
            done += 1;
        }
    }
    Ok(done)
}

/// The two loaded variants of the application.
struct Apps {
    stock: MatvecLib,
    ours: MatvecLib,
}

fn build_apps(s: &InterferenceSetup) -> Result<Apps, String> {
    std::fs::create_dir_all(&s.work_dir).map_err(|e| e.to_string())?;
    let src = s.work_dir.join("omp_matvec.c");
    std::fs::write(&src, MATVEC_C).map_err(|e| e.to_string())?;
    let stock = s.work_dir.join("libomp_matvec_libgomp.so");
    let obj = s.work_dir.join("omp_matvec.o");
    let ours = s.work_dir.join("libomp_matvec_maestro.so");
    let flags = ["-fopenmp", "-O2", "-fPIC"];
    let cc = || Command::new(&s.cc);
    run(
        cc().args(flags)
            .arg("-shared")
            .arg(&src)
            .arg("-o")
            .arg(&stock)
            .arg("-lm"),
        "building the application against libgomp",
    )?;
    run(
        cc().args(flags).arg("-c").arg(&src).arg("-o").arg(&obj),
        "compiling the application",
    )?;
    // No -fopenmp when linking: no -lgomp; GOMP_* stay undefined for the loader.
    run(
        cc().arg("-shared")
            .arg(&obj)
            .arg("-o")
            .arg(&ours)
            .arg("-lm"),
        "linking the application for libmaestro_gomp",
    )?;
    Ok(Apps {
        stock: MatvecLib::load(&stock, true)?,
        ours: MatvecLib::load(&ours, false).map_err(|e| {
            format!(
                "{e} (the process must export the GOMP_* runtime: run it from the \
                 `maestro` binary)"
            )
        })?,
    })
}

/// Runs the whole experiment on `sched`, which becomes the OpenMP runtime's
/// scheduler (so this must be the process's first use of OpenMP). `progress`
/// gets one line per run.
pub fn interference(
    setup: &InterferenceSetup,
    sched: &Arc<Scheduler>,
    progress: &dyn Fn(&str),
) -> Result<Vec<InterferenceRow>, String> {
    if setup.app_threads == 0 || setup.jobs_in_flight_max == 0 || setup.agg_blocks == 0 {
        return Err("application threads, jobs in flight and blocks must be at least 1".into());
    }
    if runtime::install_scheduler(sched.clone()).is_err()
        && !Arc::ptr_eq(runtime::scheduler(), sched)
    {
        return Err("the OpenMP runtime already runs on another scheduler".into());
    }
    runtime::set_priority(DEFAULT_PRIORITY);
    let apps = build_apps(setup)?;
    let data = Arc::new(AggData::new(
        setup.agg_tuples,
        setup.agg_blocks,
        setup.agg_sqrts,
    ));
    let expected_product = Matrix::new(&apps.ours, setup)?.reference();

    let lib_of = |r: AppRuntime| match r {
        AppRuntime::Libgomp => &apps.stock,
        AppRuntime::Maestro | AppRuntime::MaestroMasterTask => &apps.ours,
    };
    let place = |r: AppRuntime| {
        runtime::set_master_placement(r.placement().unwrap_or(MasterPlacement::Caller))
    };
    // Guard against measuring the wrong runtime.
    for &r in &setup.runtimes {
        place(r);
        let (n, on) = lib_of(r).probe();
        let want = match r {
            AppRuntime::Libgomp => 0,
            AppRuntime::Maestro => n.saturating_sub(1),
            AppRuntime::MaestroMasterTask => n,
        };
        if n == 0 || on != want {
            return Err(format!(
                "{}: a team of {n} ran {on} members on scheduler threads, expected {want}: \
                 the application is not running on the runtime it should",
                r.name()
            ));
        }
    }

    // The `shares` mode's classes, defined on first use (classes live as long
    // as the scheduler; other modes keep everything in the default class).
    let classes = std::sync::OnceLock::new();
    let classes_for = |db: Option<DbPriority>| -> Result<Option<(ClassId, ClassId)>, String> {
        if db != Some(DbPriority::Shares) {
            return Ok(None);
        }
        if let Some(&c) = classes.get() {
            return Ok(Some(c));
        }
        let define = |name: &str| {
            sched
                .class_by_name(name)
                .map_or_else(|| sched.define_class(&ClassSpec::new(name, 1)), Ok)
                .map_err(|e| e.to_string())
        };
        let c = (define("db")?, define("omp-app")?);
        Ok(Some(*classes.get_or_init(|| c)))
    };
    let one =
        |runtime: Option<AppRuntime>, db: Option<DbPriority>| -> Result<InterferenceRow, String> {
            let classes = classes_for(db)?;
            if let Some(r) = runtime {
                place(r);
            }
            let matrices = match runtime {
                Some(r) => (0..setup.app_threads)
                    .map(|_| Matrix::new(lib_of(r), setup))
                    .collect::<Result<Vec<_>, _>>()?,
                None => Vec::new(),
            };
            let cpu0 = (setup.cpu_time)();
            let start = Instant::now();
            let deadline = start + setup.duration;
            let (db_done, app_done) = std::thread::scope(|sc| {
                let db_thread = db.map(|p| {
                    let data = &data;
                    std::thread::Builder::new()
                        .name("db-submitter".into())
                        .spawn_scoped(sc, move || {
                            if let Some((db_class, _)) = classes {
                                set_thread_class(db_class);
                            }
                            drive_db(sched, data, p.level(), setup.jobs_in_flight_max, deadline)
                        })
                        .expect("spawning the submitter")
                });
                let app_threads: Vec<_> = matrices
                    .into_iter()
                    .enumerate()
                    .map(|(i, m)| {
                        std::thread::Builder::new()
                            .name(format!("omp-app-{i}"))
                            .spawn_scoped(sc, move || {
                                if let Some((_, app_class)) = classes {
                                    set_thread_class(app_class);
                                }
                                drive_app(m, expected_product, deadline)
                            })
                            .expect("spawning an application thread")
                    })
                    .collect();
                let db_done = db_thread
                    .map(|t| t.join().map_err(|_| "the submitter panicked".to_string())?)
                    .transpose();
                let mut app_done: Result<Option<u64>, String> = Ok(None);
                for t in app_threads {
                    let n = t
                        .join()
                        .map_err(|_| "an application thread panicked".to_string())
                        .and_then(|r| r);
                    app_done = match (app_done, n) {
                        (Ok(acc), Ok(n)) => Ok(Some(acc.unwrap_or(0) + n)),
                        (Err(e), _) | (_, Err(e)) => Err(e),
                    };
                }
                (db_done, app_done)
            });
            let wall = start.elapsed();
            let cpu = (setup.cpu_time)().saturating_sub(cpu0);
            let secs = setup.duration.as_secs_f64();
            let row = InterferenceRow {
                runtime,
                db_priority: db,
                db_per_s: db_done?.map(|n| n as f64 / secs),
                app_per_s: app_done?.map(|n| n as f64 / secs),
                cpu_utilization: cpu.as_secs_f64() / (wall.as_secs_f64() * sched.contexts() as f64),
            };
            progress(&format!(
                "{:<26} {:<10} {:<6} db {:>8} /s   app {:>8} /s   cpu {:>4.0} %",
                runtime.map_or("-", AppRuntime::name),
                row.case(),
                db.map_or("-", DbPriority::name),
                row.db_per_s.map_or("-".into(), |v| format!("{v:.1}")),
                row.app_per_s.map_or("-".into(), |v| format!("{v:.2}")),
                row.cpu_utilization * 100.0
            ));
            Ok(row)
        };

    // The database alone at each of its priorities: alone, the level still decides
    // whether a worker waiting inside a job may start another (urgent) one.
    let mut rows = Vec::new();
    for &p in &setup.db_priorities {
        rows.push(one(None, Some(p))?);
    }
    for &r in &setup.runtimes {
        rows.push(one(Some(r), None)?);
    }
    // Priorities outer, runtimes inner: a drift in machine load hits every runtime alike.
    for &p in &setup.db_priorities {
        for &r in &setup.runtimes {
            rows.push(one(Some(r), Some(p))?);
        }
    }
    runtime::set_master_placement(MasterPlacement::Caller);
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_and_levels_straddle_the_openmp_priority() {
        for r in AppRuntime::ALL {
            assert_eq!(AppRuntime::parse(r.name()), Ok(r));
        }
        for p in DbPriority::SELECTABLE {
            assert_eq!(DbPriority::parse(p.name()), Ok(p));
        }
        assert!(AppRuntime::parse("iomp5").is_err());
        assert!(DbPriority::parse("urgent").is_err());
        assert!(DbPriority::Low.level() < DEFAULT_PRIORITY);
        assert_eq!(DbPriority::Equal.level(), DEFAULT_PRIORITY);
        assert!(DbPriority::High.level() > DEFAULT_PRIORITY);
    }

    #[test]
    fn aggregation_matches_its_serial_reference() {
        let data = AggData::new(10_001, 7, 3);
        assert_eq!(data.blocks.iter().map(Vec::len).sum::<usize>(), 10_001);
        assert!(data.expected.iter().all(|&s| s > 0), "every key drawn");
        for contexts in [1, 2, 3] {
            let sched = Scheduler::with_preset("single-pool", contexts).unwrap();
            let got = sched.install(|| aggregate(&sched, &data));
            assert_eq!(got, data.expected, "{contexts} contexts");
        }
    }

    #[test]
    fn weights_are_the_square_root_chain() {
        assert_eq!(weight(3, 0), 3_000_000);
        assert_eq!(weight(3, 1), 2_000_000);
        assert_eq!(weight(0, 2), ((2f64).sqrt() * 1e6) as u64);
    }
}
