//! Pieces of `maestro bench omp`: [`interference`] (the paper's §6.3, database
//! and OpenMP application side by side at three database priorities), and the OpenMP overhead of `libmaestro_gomp.so`
//! against stock libgomp (the paper's "same order of magnitude", §6.2), measured
//! by one C microbenchmark (`c/omp_overhead.c`) compiled twice — once with
//! `gcc -fopenmp` (stock libgomp), once compiled with `-fopenmp -c` and linked
//! against our cdylib — and run as separate processes, one after the other.
//!
//! Both variants size their teams the same way (`THREADS` members, explicit
//! `num_threads`); each runs with its own default waiting policy (libgomp spins
//! before sleeping, we never spin on a barrier), which is part of what is compared.

use std::path::{Path, PathBuf};
use std::process::Command;

use maestro_gomp::MasterPlacement;

pub mod interference;

/// The OpenMP runtime a benchmark's C code runs on (both parts of `maestro bench
/// omp`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AppRuntime {
    /// Stock libgomp: its own threads, invisible to the scheduler.
    Libgomp,
    /// Ours, masters on the application threads (libgomp's placement).
    Maestro,
    /// Ours, masters run as scheduler tasks too ([`MasterPlacement::Scheduler`]).
    MaestroMasterTask,
}

impl AppRuntime {
    pub const ALL: [AppRuntime; 3] = [
        AppRuntime::Libgomp,
        AppRuntime::Maestro,
        AppRuntime::MaestroMasterTask,
    ];

    pub fn name(self) -> &'static str {
        match self {
            AppRuntime::Libgomp => "libgomp",
            AppRuntime::Maestro => "maestro-gomp",
            AppRuntime::MaestroMasterTask => "maestro-gomp-master-task",
        }
    }

    /// Where ours runs masters (`MAESTRO_OMP_MASTER`); None for stock libgomp.
    pub fn placement(self) -> Option<MasterPlacement> {
        match self {
            AppRuntime::Libgomp => None,
            AppRuntime::Maestro => Some(MasterPlacement::Caller),
            AppRuntime::MaestroMasterTask => Some(MasterPlacement::Scheduler),
        }
    }

    pub fn parse(s: &str) -> Result<AppRuntime, String> {
        AppRuntime::ALL
            .into_iter()
            .find(|r| r.name() == s.trim())
            .ok_or_else(|| {
                format!(
                    "unknown OpenMP runtime {s:?} (libgomp, maestro-gomp, maestro-gomp-master-task)"
                )
            })
    }
}

/// The microbenchmark's source.
pub const OVERHEAD_C: &str = include_str!("../c/omp_overhead.c");

/// The operations the microbenchmark times, in microseconds per operation:
/// an empty region, a region with one barrier (every member must then really
/// run: in an empty region our master runs the members nobody started yet), a
/// `parallel for` of 1024 trivial iterations (static and dynamic,16), one barrier
/// in a running team, one task from a `single` producer; then, inside a running
/// team, one `critical` and one `single` (with its barrier) per member; per
/// region, a `parallel for reduction(+)` and `parallel for` with
/// `schedule(dynamic,1)`, `(dynamic,2)` and `(guided)` over 1024 iterations; per ordered
/// iteration, `for ordered schedule(static,1)`; per task, a binary tree of
/// 2046 tasks with `taskwait` and tasks that each create one child; per
/// `taskloop` of 4096 iterations, grains 1, 16 and 1024.
pub const OVERHEAD_METRICS: [&str; 18] = [
    "fork_join",
    "fork_join_barrier",
    "parallel_for_static",
    "parallel_for_dynamic",
    "barrier",
    "task",
    "critical",
    "single",
    "reduction",
    "parallel_for_dynamic_1",
    "parallel_for_dynamic_2",
    "parallel_for_guided",
    "ordered",
    "task_tree",
    "nested_task",
    "taskloop_g1",
    "taskloop_g16",
    "taskloop_g1024",
];

/// How to run the comparison.
#[derive(Clone, Debug)]
pub struct OverheadSetup {
    /// The C compiler driver (gcc with OpenMP support).
    pub cc: String,
    /// The directory holding `libmaestro_gomp.so` (see [`find_cdylib_dir`]).
    pub lib_dir: PathBuf,
    /// Where the two binaries are built.
    pub work_dir: PathBuf,
    /// Team size of every measured region.
    pub threads: usize,
    /// Operations per measurement.
    pub reps: usize,
    /// Runs per variant; the median is reported.
    pub runs: usize,
    /// Extra environment for our variant (e.g. `MAESTRO_OMP_CONTEXTS`).
    pub env: Vec<(String, String)>,
    /// The variants, in the order each run measures them.
    pub runtimes: Vec<AppRuntime>,
}

/// One measured value.
#[derive(Clone, Debug, PartialEq)]
pub struct OverheadRow {
    /// An [`AppRuntime::name`].
    pub variant: &'static str,
    /// One of [`OVERHEAD_METRICS`].
    pub metric: String,
    /// Median microseconds per operation.
    pub micros: f64,
}

/// Where `libmaestro_gomp.so` is: `$MAESTRO_GOMP_LIB_DIR`, else beside the running
/// executable or in its `deps/` (cargo's layouts for binaries and tests).
pub fn find_cdylib_dir() -> Option<PathBuf> {
    if let Ok(d) = std::env::var("MAESTRO_GOMP_LIB_DIR") {
        return Some(PathBuf::from(d));
    }
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    [
        dir.to_path_buf(),
        dir.join("deps"),
        dir.parent()?.to_path_buf(),
    ]
    .into_iter()
    .find(|d| d.join("libmaestro_gomp.so").exists())
}

fn run(cmd: &mut Command, what: &str) -> Result<String, String> {
    let out = cmd
        .output()
        .map_err(|e| format!("{what}: cannot run: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{what} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Builds the stock and the Maestro binary; returns their paths.
fn build(setup: &OverheadSetup) -> Result<(PathBuf, PathBuf), String> {
    std::fs::create_dir_all(&setup.work_dir).map_err(|e| e.to_string())?;
    let src = setup.work_dir.join("omp_overhead.c");
    std::fs::write(&src, OVERHEAD_C).map_err(|e| e.to_string())?;
    let stock = setup.work_dir.join("omp_overhead_libgomp");
    let obj = setup.work_dir.join("omp_overhead.o");
    let ours = setup.work_dir.join("omp_overhead_maestro");
    let cc = || Command::new(&setup.cc);
    run(
        cc().args(["-fopenmp", "-O2"])
            .arg(&src)
            .arg("-o")
            .arg(&stock),
        "building against libgomp",
    )?;
    run(
        cc().args(["-fopenmp", "-O2", "-c"])
            .arg(&src)
            .arg("-o")
            .arg(&obj),
        "compiling",
    )?;
    let lib = setup.lib_dir.display();
    run(
        cc().arg(&obj)
            .arg("-o")
            .arg(&ours)
            .arg(format!("-L{lib}"))
            .arg("-lmaestro_gomp")
            .arg(format!("-Wl,-rpath,{lib}")),
        "linking against libmaestro_gomp.so",
    )?;
    Ok((stock, ours))
}

/// Parses `<metric> <micros>` lines.
fn parse(out: &str) -> Result<Vec<(String, f64)>, String> {
    out.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let (m, v) = l.split_once(' ').ok_or_else(|| format!("bad line {l:?}"))?;
            let v = v
                .trim()
                .parse::<f64>()
                .map_err(|e| format!("bad value in {l:?}: {e}"))?;
            Ok((m.to_string(), v))
        })
        .collect()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Builds both binaries and measures each variant `runs` times (alternating, so
/// drifts in machine load hit all alike), in the order of `setup.runtimes`
/// (callers rotate it per repetition so that no variant always goes first):
/// libgomp, ours with masters on the calling thread, ours with masters as
/// scheduler tasks (`MAESTRO_OMP_MASTER`).
pub fn overhead(setup: &OverheadSetup) -> Result<Vec<OverheadRow>, String> {
    let (stock, ours) = build(setup)?;
    let mut samples: Vec<(&'static str, String, Vec<f64>)> = Vec::new();
    for _ in 0..setup.runs.max(1) {
        for &runtime in &setup.runtimes {
            let variant = runtime.name();
            let bin: &Path = if runtime.placement().is_some() {
                &ours
            } else {
                &stock
            };
            let mut cmd = Command::new(bin);
            cmd.arg(setup.threads.to_string())
                .arg(setup.reps.to_string());
            if let Some(placement) = runtime.placement() {
                cmd.envs(setup.env.iter().map(|(k, v)| (k, v)));
                cmd.env("MAESTRO_OMP_MASTER", placement.name());
            }
            for (metric, v) in parse(&run(&mut cmd, variant)?)? {
                match samples
                    .iter_mut()
                    .find(|(var, m, _)| *var == variant && *m == metric)
                {
                    Some((_, _, s)) => s.push(v),
                    None => samples.push((variant, metric, vec![v])),
                }
            }
        }
    }
    Ok(samples
        .into_iter()
        .map(|(variant, metric, s)| OverheadRow {
            variant,
            metric,
            micros: median(s),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lines_and_takes_medians() {
        let p = parse("fork_join 1.5\nbarrier 0.25\n\n").unwrap();
        assert_eq!(p, vec![("fork_join".into(), 1.5), ("barrier".into(), 0.25)]);
        assert!(parse("nonsense").is_err());
        // A metric without a number, or with a bad one, is an error naming the line.
        let e = parse("parallel_for_guided abc").unwrap_err();
        assert!(e.contains("parallel_for_guided abc"), "{e}");
        assert!(parse("parallel_for_guided").is_err());
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        // Every metric is printed by the C program: by its own format string,
        // or (the taskloop grains) by name from a table.
        for m in OVERHEAD_METRICS {
            assert!(
                OVERHEAD_C.contains(&format!("\"{m} %.4f"))
                    || OVERHEAD_C.contains(&format!("\"{m}\"")),
                "{m}"
            );
        }
    }
}
