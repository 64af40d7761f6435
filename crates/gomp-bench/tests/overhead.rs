//! The overhead comparison builds and runs every variant (tiny repetition counts:
//! this checks the pieces work, it measures nothing).

use std::path::Path;

use maestro_gomp_bench::{AppRuntime, OVERHEAD_METRICS, OverheadSetup, find_cdylib_dir, overhead};

#[test]
fn overhead_comparison_runs_every_variant() {
    let lib_dir = find_cdylib_dir().expect("libmaestro_gomp.so beside the test binary");
    let setup = OverheadSetup {
        cc: std::env::var("MAESTRO_OMP_CC").unwrap_or_else(|_| "gcc".into()),
        lib_dir,
        work_dir: Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("omp_overhead-{}", std::process::id())),
        threads: 2,
        reps: 20,
        runs: 1,
        env: vec![("MAESTRO_OMP_CONTEXTS".into(), "2".into())],
        // Not libgomp first: the order is the caller's.
        runtimes: AppRuntime::ALL.iter().rev().copied().collect(),
    };
    let rows = overhead(&setup).unwrap_or_else(|e| panic!("{e}"));
    let _ = std::fs::remove_dir_all(&setup.work_dir);
    for variant in ["libgomp", "maestro-gomp", "maestro-gomp-master-task"] {
        for metric in OVERHEAD_METRICS {
            let row = rows
                .iter()
                .find(|r| r.variant == variant && r.metric == metric)
                .unwrap_or_else(|| panic!("{variant} {metric} missing"));
            assert!(row.micros > 0.0 && row.micros.is_finite(), "{row:?}");
        }
    }
}
