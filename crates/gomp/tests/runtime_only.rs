//! `libmaestro_gomp.so` carries the runtime only: the benchmarks of `maestro bench
//! omp` (the overhead comparison, the §6.3 dlopen harness) live in the crate
//! `maestro-gomp-bench`, and nothing of them may end up in the library users link.
//! The check reads the cdylib cargo built for this run: its exported symbols must
//! all be the OpenMP ABI (`GOMP_*`, `omp_*`, `maestro_omp_*`), and no symbol name,
//! debug-info path or string may name the benchmark code (a previous layout left
//! `maestro_gomp::bench::interference::…` in the file).

use std::path::PathBuf;
use std::process::Command;

fn cdylib() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let deps = exe.parent().expect("test executable directory");
    [deps, deps.parent().unwrap_or(deps)]
        .iter()
        .map(|d| d.join("libmaestro_gomp.so"))
        .find(|p| p.exists())
        .unwrap_or_else(|| {
            panic!(
                "libmaestro_gomp.so is in neither {} nor its parent",
                deps.display()
            )
        })
}

const BENCH_MARKERS: [&str; 7] = [
    "bench",
    "interference",
    "omp_matvec",
    "omp_overhead",
    "OverheadSetup",
    "AppRuntime",
    "DbPriority",
];

#[test]
fn the_cdylib_holds_no_benchmark_code() {
    let path = cdylib();
    let bytes = std::fs::read(&path).expect("cdylib reads");
    for marker in BENCH_MARKERS {
        let hit = bytes
            .windows(marker.len())
            .position(|w| w.eq_ignore_ascii_case(marker.as_bytes()));
        if let Some(at) = hit {
            let from = at.saturating_sub(60);
            let to = (at + marker.len() + 60).min(bytes.len());
            panic!(
                "{} contains {marker:?} at byte {at}: …{}…",
                path.display(),
                String::from_utf8_lossy(&bytes[from..to])
            );
        }
    }
}

#[test]
fn the_cdylib_exports_only_the_openmp_abi() {
    let path = cdylib();
    let out = match Command::new("nm")
        .args(["-D", "--defined-only", "--format=posix"])
        .arg(&path)
        .output()
    {
        Ok(out) => out,
        Err(e) => {
            eprintln!("nm not available ({e}); skipping the export check");
            return;
        }
    };
    assert!(out.status.success(), "nm failed: {out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    let exported: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(
        exported.contains(&"GOMP_parallel"),
        "GOMP_parallel not exported: {exported:?}"
    );
    let foreign: Vec<&&str> = exported
        .iter()
        .filter(|s| {
            !(s.starts_with("GOMP_") || s.starts_with("omp_") || s.starts_with("maestro_omp_"))
        })
        .collect();
    assert!(
        foreign.is_empty(),
        "{} exports symbols outside the OpenMP ABI: {foreign:?}",
        path.display()
    );
}
