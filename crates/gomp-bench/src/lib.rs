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
/// executable, in its `deps/` or its parent (cargo's layouts for binaries and
/// tests) — the newest of those that exist. Not the first: `cargo build -p
/// maestro-cli` rebuilds the library only in `deps/` (a dependency's cdylib is
/// not copied up), so `target/release/libmaestro_gomp.so` from an earlier
/// `cargo build -p maestro-gomp` stayed first and stale (issue 12).
pub fn find_cdylib_dir() -> Option<PathBuf> {
    if let Ok(d) = std::env::var("MAESTRO_GOMP_LIB_DIR") {
        return Some(PathBuf::from(d));
    }
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    newest_cdylib_dir(&[
        dir.to_path_buf(),
        dir.join("deps"),
        dir.parent()?.to_path_buf(),
    ])
}

/// The directory among `candidates` whose `libmaestro_gomp.so` was modified
/// last (the first such on a tie).
fn newest_cdylib_dir(candidates: &[PathBuf]) -> Option<PathBuf> {
    let mut best: Option<(std::time::SystemTime, &PathBuf)> = None;
    for d in candidates {
        let Ok(t) = std::fs::metadata(d.join("libmaestro_gomp.so")).and_then(|m| m.modified())
        else {
            continue;
        };
        if best.is_none_or(|(b, _)| t > b) {
            best = Some((t, d));
        }
    }
    best.map(|(_, d)| d.clone())
}

/// How a `libmaestro_gomp.so` compares with what it should have been built
/// from (see [`cdylib_freshness`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LibFreshness {
    /// Newer than every source of the gomp crate (or, without the sources,
    /// than the running binary).
    Fresh,
    /// Older than this source file of the gomp crate: built before the last
    /// change, so it measures old code. `cargo build -p maestro-cli` does not
    /// rebuild the cdylib.
    OlderThanSource(PathBuf),
    /// The gomp sources are not where this binary was built from, and the
    /// library is older than the running binary (maybe stale, maybe not).
    OlderThanBinary,
    /// A modification time could not be read.
    Unknown,
}

/// The gomp crate's directory, as this crate was built (`crates/gomp`).
fn gomp_source_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../gomp")
}

/// Whether `lib_dir/libmaestro_gomp.so` is older than the gomp crate's
/// sources (`src/**`, `Cargo.toml`, `build.rs` if any) when they exist where
/// this binary was built from, else than the running binary.
pub fn cdylib_freshness(lib_dir: &Path) -> LibFreshness {
    freshness_against(&lib_dir.join("libmaestro_gomp.so"), &gomp_source_dir())
}

fn freshness_against(lib: &Path, gomp_dir: &Path) -> LibFreshness {
    let mtime = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let Some(built) = mtime(lib) else {
        return LibFreshness::Unknown;
    };
    if gomp_dir.join("src").is_dir() {
        let mut newest: Option<(std::time::SystemTime, PathBuf)> = None;
        let mut dirs = vec![gomp_dir.join("src")];
        let mut files = vec![gomp_dir.join("Cargo.toml"), gomp_dir.join("build.rs")];
        while let Some(d) = dirs.pop() {
            let Ok(entries) = std::fs::read_dir(&d) else {
                return LibFreshness::Unknown;
            };
            for e in entries.flatten() {
                let p = e.path();
                if p.is_dir() {
                    dirs.push(p);
                } else {
                    files.push(p);
                }
            }
        }
        for f in files {
            if let Some(t) = mtime(&f)
                && newest.as_ref().is_none_or(|(n, _)| t > *n)
            {
                newest = Some((t, f));
            }
        }
        return match newest {
            Some((t, f)) if t > built => LibFreshness::OlderThanSource(f),
            _ => LibFreshness::Fresh,
        };
    }
    match std::env::current_exe().ok().and_then(|e| mtime(&e)) {
        Some(exe) if exe > built => LibFreshness::OlderThanBinary,
        Some(_) => LibFreshness::Fresh,
        None => LibFreshness::Unknown,
    }
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

    fn touch(p: &Path, secs_after_epoch: u64) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        let f = std::fs::File::create(p).unwrap();
        f.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs_after_epoch))
            .unwrap();
    }

    #[test]
    fn the_newest_library_is_chosen_not_the_first() {
        let dir = std::env::temp_dir().join(format!("gomp-newest-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (up, deps, none) = (dir.join("release"), dir.join("release/deps"), dir.join("x"));
        touch(&up.join("libmaestro_gomp.so"), 1_000);
        touch(&deps.join("libmaestro_gomp.so"), 2_000);
        let all = [up.clone(), deps.clone(), none.clone()];
        assert_eq!(newest_cdylib_dir(&all), Some(deps.clone()));
        touch(&up.join("libmaestro_gomp.so"), 3_000);
        assert_eq!(newest_cdylib_dir(&all), Some(up));
        assert_eq!(newest_cdylib_dir(&[none]), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_library_older_than_a_gomp_source_is_stale() {
        let dir = std::env::temp_dir().join(format!("gomp-fresh-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let gomp = dir.join("gomp");
        let lib = dir.join("lib/libmaestro_gomp.so");
        touch(&gomp.join("Cargo.toml"), 1_000);
        touch(&gomp.join("src/lib.rs"), 1_000);
        touch(&gomp.join("src/abi/tasks.rs"), 3_000);
        touch(&lib, 2_000);
        assert_eq!(
            freshness_against(&lib, &gomp),
            LibFreshness::OlderThanSource(gomp.join("src/abi/tasks.rs")),
            "a nested source file newer than the library"
        );
        touch(&lib, 4_000);
        assert_eq!(freshness_against(&lib, &gomp), LibFreshness::Fresh);
        assert_eq!(
            freshness_against(&dir.join("lib/missing.so"), &gomp),
            LibFreshness::Unknown
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

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
