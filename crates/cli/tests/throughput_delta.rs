//! `maestro tpch throughput [--queries plans|sql] [--refresh]`: the
//! throughput test's streams as the hand-written plans (the default) or as
//! SQL text on the SQL store's main + delta, its refresh stream written into
//! the deltas.

mod common;

use common::{json_of, maestro, stderr};

/// The JSON report of `maestro tpch throughput` at SF 0.01 with 2 streams,
/// one repetition and the refresh stream, plus `extra`.
fn throughput_with_refresh(extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "tpch",
        "throughput",
        "--sf",
        "0.01",
        "--streams",
        "2",
        "--reps",
        "1",
        "--refresh",
        "--json",
    ];
    args.extend(extra);
    json_of(&maestro(&args))
}

#[test]
fn delta_storage_runs_every_streams_queries_and_the_refresh_pairs() {
    let report = throughput_with_refresh(&["--duration", "0.5", "--queries", "sql"]);
    assert_eq!(report["storage"], "delta");
    let run = &report["runs"][0];
    // Each stream runs its 22 queries at least once, whatever the duration.
    assert!(run["queries"].as_u64().unwrap() >= 44, "{run}");
    let per_query = run["per_query"].as_object().unwrap();
    assert_eq!(per_query.len(), 22, "{run}");
    assert!(per_query.values().all(|l| l["count"].as_u64() >= Some(2)));
    let refresh = &run["refresh"];
    assert_eq!(refresh["pairs"], 2);
    assert_eq!(refresh["first_set"], 1);
    assert_eq!(refresh["rf1_s"].as_array().unwrap().len(), 2);
    assert_eq!(refresh["rf2_s"].as_array().unwrap().len(), 2);
}

#[test]
fn delta_storage_refuses_what_it_cannot_do() {
    let base = ["tpch", "throughput", "--sf", "0.01", "--reps", "1"];
    for extra in [
        &["--queries", "sql", "--class", "olap"][..],
        &["--storage", "rows"][..],
        &["--storage", "cow", "--queries", "sql"][..],
    ] {
        let mut args = base.to_vec();
        args.extend(extra);
        let out = maestro(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("storage"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn the_plans_run_on_the_store_beside_its_refresh_stream() {
    let report = throughput_with_refresh(&[]);
    // The default: the plans on the store.
    assert_eq!(report["storage"], "delta-plans");
    let run = &report["runs"][0];
    assert_eq!(run["queries"], 44, "{run}");
    assert_eq!(run["per_query"].as_object().unwrap().len(), 22, "{run}");
    assert_eq!(run["refresh"]["pairs"], 2);
}
