//! One name per idea across the CLI: `--variant(s)`, `--granularity`, `--reps`.
//! Old spellings still work for one release and warn; `--help` lists the
//! accepted values; bad values exit 2 with a message. And the repetition
//! harness end to end: median, min, max, reps, samples, rotated order.

mod common;

use std::process::Output;

use common::{json_of, maestro, stderr};

fn warns(out: &Output, old: &str, new: &str) {
    let err = stderr(out);
    let expected = format!("warning: {old} is deprecated; use {new}");
    assert!(err.contains(&expected), "expected {expected:?} in {err}");
}

#[test]
fn tpcc_scheduler_still_works_and_warns() {
    let out = maestro(&[
        "tpcc",
        "run",
        "--warehouses",
        "1",
        "--terminals",
        "1",
        "--duration",
        "0.2",
        "--scheduler",
        "receivers",
        "--json",
    ]);
    let v = json_of(&out);
    warns(&out, "--scheduler", "--variant");
    assert_eq!(v["results"][0]["variant"], "receivers");
    // Both spellings at once is a usage error.
    let both = maestro(&[
        "tpcc",
        "run",
        "--warehouses",
        "1",
        "--terminals",
        "1",
        "--duration",
        "0.2",
        "--scheduler",
        "receivers",
        "--variant",
        "single-pool",
    ]);
    assert_eq!(both.status.code(), Some(2), "{}", stderr(&both));
}

#[test]
fn bench_scheduler_repetitions_still_works_and_reports_the_spread_in_rotated_order() {
    let out = maestro(&[
        "bench",
        "scheduler",
        "--quick",
        "--json",
        "--contexts",
        "2",
        "--variants",
        "rayon,single-pool",
        "--cases",
        "fork_join",
        "--repetitions",
        "2",
    ]);
    let v = json_of(&out);
    warns(&out, "--repetitions", "--reps");
    assert_eq!(v["params"]["reps"], 2);
    let row = common::row(&v, keys!(variant = "single-pool", metric = "seconds"));
    let (value, min, max) = (
        row["value"].as_f64().unwrap(),
        row["min"].as_f64().unwrap(),
        row["max"].as_f64().unwrap(),
    );
    assert_eq!(row["reps"], 2);
    assert_eq!(row["samples"].as_array().unwrap().len(), 2);
    assert!(min <= value && value <= max, "{row}");
    // The median of two is their mean.
    assert!(
        (value - (min + max) / 2.0).abs() <= 1e-12 * max.max(1.0),
        "{row}"
    );
    // Repetition 1 starts with rayon, repetition 2 with single-pool.
    let err = stderr(&out);
    let order: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("fork_join") && l.contains(" rep "))
        .map(|l| {
            if l.contains("rayon") {
                "rayon"
            } else {
                "single-pool"
            }
        })
        .collect();
    assert_eq!(
        order,
        ["rayon", "single-pool", "single-pool", "rayon"],
        "{err}"
    );
}

#[test]
fn bench_tpch_single_sql_runs_the_sql_text_beside_the_plans() {
    let out = maestro(&[
        "bench",
        "tpch-single",
        "--sf",
        "0.01",
        "--queries",
        "6,9",
        "--sql",
        "--reps",
        "2",
        "--json",
    ]);
    let v = json_of(&out);
    let results = v["results"].as_array().unwrap();
    for q in [6, 9] {
        for variant in ["single-hints", "sql"] {
            let r = results
                .iter()
                .find(|r| r["query"] == q && r["variant"] == variant)
                .unwrap_or_else(|| panic!("no Q{q} {variant}: {v}"));
            assert_eq!(r["samples"].as_array().unwrap().len(), 2, "{r}");
            assert!(r["value"].as_f64().unwrap() > 0.0, "{r}");
        }
    }
    assert!(v["geomean_seconds"]["sql"].as_f64().unwrap() > 0.0, "{v}");
}

#[test]
fn tpch_preset_and_repetitions_still_work_and_warn() {
    let single = maestro(&[
        "bench",
        "tpch-single",
        "--sf",
        "0.01",
        "--queries",
        "6",
        "--preset",
        "single-pool",
        "--repetitions",
        "2",
        "--json",
    ]);
    let v = json_of(&single);
    warns(&single, "--preset", "--variant");
    warns(&single, "--repetitions", "--reps");
    assert_eq!(v["reps"], 2);
    assert_eq!(v["results"][0]["variant"], "single-pool");
    assert_eq!(v["results"][0]["samples"].as_array().unwrap().len(), 2);

    let throughput = maestro(&[
        "tpch",
        "throughput",
        "--sf",
        "0.01",
        "--streams",
        "1",
        "--granularity",
        "static,hint",
        "--reps",
        "2",
        "--preset",
        "single-pool",
        "--json",
    ]);
    let v = json_of(&throughput);
    warns(&throughput, "--preset", "--variant");
    assert_eq!(v["preset"], "single-pool");
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "one run per granularity, whatever the reps");
    for r in runs {
        assert_eq!(r["reps"], 2, "{r}");
        let (q, lo, hi) = (
            r["queries_per_hour"].as_f64().unwrap(),
            r["min"].as_f64().unwrap(),
            r["max"].as_f64().unwrap(),
        );
        assert!(lo <= q && q <= hi, "{r}");
    }
}

#[test]
fn latches_mode_still_works_and_warns() {
    let out = maestro(&[
        "bench",
        "latches",
        "--quick",
        "--json",
        "--contexts",
        "2",
        "--warehouses",
        "1",
        "--terminals",
        "1",
        "--flavours",
        "blocking",
        "--duration",
        "0.2",
        "--mode",
        "receivers",
    ]);
    let v = json_of(&out);
    warns(&out, "--mode", "--variant");
    assert_eq!(v["params"]["mode"], "receivers");
}

#[test]
fn granularity_policies_and_omp_runs_warn() {
    // Each warns before a later argument stops it, so they stay cheap.
    let out = maestro(&["bench", "granularity", "--policies", "static", "--sf", "11"]);
    warns(&out, "--policies", "--granularity");
    assert_eq!(out.status.code(), Some(2));
    let out = maestro(&["bench", "omp", "--runs", "0"]);
    warns(&out, "--runs", "--reps");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn help_lists_the_accepted_values_and_hides_the_old_names() {
    for (args, values, old) in [
        (
            &["bench", "mixed", "--help"][..],
            "multiple-pools, single-pool-nosys, single-pool, single-hints, rayon",
            "",
        ),
        (
            &["bench", "scheduler", "--help"][..],
            "rayon, single-pool, single-pool-paper, single-pool-nosys, single-hints",
            "--repetitions",
        ),
        (
            &["tpcc", "run", "--help"][..],
            "single-pool, single-pool-nosys, single-hints, receivers",
            "--scheduler",
        ),
        (
            &["tpch", "throughput", "--help"][..],
            "single-pool, single-pool-paper, single-pool-nosys, single-hints",
            "--preset",
        ),
        (
            &["bench", "granularity", "--help"][..],
            "static, hint, adaptive, fixed:N",
            "--policies",
        ),
        (
            &["bench", "latches", "--help"][..],
            "single-pool, single-pool-nosys, single-hints, receivers",
            "--mode",
        ),
        (&["bench", "omp", "--help"][..], "--reps", "--runs"),
    ] {
        let out = maestro(args);
        assert!(out.status.success(), "{args:?}");
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(
            help.contains(values),
            "{args:?} should list {values}: {help}"
        );
        // Every experiment repeats; `tpcc run` runs one variant, so it has no --reps.
        if args[0] != "tpcc" {
            assert!(help.contains("--reps"), "{args:?}: {help}");
        }
        if !old.is_empty() {
            assert!(!help.contains(old), "{args:?} should hide {old}: {help}");
        }
    }
}

#[test]
fn bad_values_exit_2_with_a_message() {
    for (args, says) in [
        (
            &["bench", "mixed", "--variants", "nope"][..],
            "possible values",
        ),
        (
            &["tpch", "throughput", "--variant", "nope"][..],
            "possible values",
        ),
        (&["run", "--variant", "fastest"][..], "possible values"),
        (
            &["bench", "granularity", "--granularity", "sometimes"][..],
            "fixed:N",
        ),
        (
            &["bench", "scheduler", "--reps", "0"][..],
            "--reps must be in 1..=100",
        ),
        (
            &["bench", "olc", "--reps", "0"][..],
            "--reps must be in 1..=100",
        ),
        (&["bench", "omp", "--reps", "2000"][..], "--ops"),
        (&["bench", "tpch-single", "--reps", "0"][..], "--reps"),
    ] {
        let out = maestro(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains("error") && err.contains(says),
            "{args:?}: {err}"
        );
    }
}
