//! `maestro tpch refresh`, `tpch check --refresh-pairs` and `tpch throughput
//! --refresh`: TPC-H's refresh functions from the command line.

mod common;

use common::{json_of, maestro, stderr};

#[test]
fn refresh_sets_are_written_in_dbgen_file_names() {
    let dir = std::env::temp_dir().join(format!("maestro-refresh-sets-{}", std::process::id()));
    let d = dir.to_str().unwrap();
    let out = maestro(&[
        "tpch",
        "refresh",
        "--sf",
        "0.01",
        "--pairs",
        "2",
        "--export-sets",
        d,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    for n in 1..=2 {
        let read = |name: String| std::fs::read_to_string(dir.join(name)).unwrap();
        let orders = read(format!("orders.tbl.u{n}"));
        let lines = read(format!("lineitem.tbl.u{n}"));
        let deletes = read(format!("delete.{n}"));
        assert_eq!(orders.lines().count(), 15, "{orders}");
        assert_eq!(deletes.lines().count(), 15, "{deletes}");
        // Every line item belongs to one of the set's new orders.
        let keys: Vec<&str> = orders
            .lines()
            .map(|l| l.split('|').next().unwrap())
            .collect();
        assert!(lines.lines().count() >= 15);
        for l in lines.lines() {
            assert!(keys.contains(&l.split('|').next().unwrap()), "{l}");
            assert_eq!(l.matches('|').count(), 16, "{l}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Two RF1/RF2 pairs at SF 0.01, each changing 15 orders.
fn assert_two_pairs(report: &serde_json::Value) {
    let refreshes = report["refreshes"].as_array().unwrap();
    let functions: Vec<&str> = refreshes
        .iter()
        .map(|r| r["function"].as_str().unwrap())
        .collect();
    assert_eq!(functions, ["RF1", "RF2", "RF1", "RF2"]);
    assert!(refreshes.iter().all(|r| r["orders_changed"] == 15));
    assert!(
        refreshes
            .iter()
            .all(|r| r["lineitem_changed"].as_u64() >= Some(15))
    );
}

#[test]
fn refresh_pairs_commit_and_report() {
    let report = json_of(&maestro(&[
        "tpch", "refresh", "--sf", "0.01", "--pairs", "2", "--json",
    ]));
    assert_two_pairs(&report);
    // A pair inserts and deletes as many orders.
    assert_eq!(report["orders_rows"][0], report["orders_rows"][1]);
    assert_eq!(report["catalog_versions_stored"], 8);
}

#[test]
fn refresh_pairs_into_the_sql_stores_deltas_commit_and_report() {
    let report = json_of(&maestro(&[
        "tpch",
        "refresh",
        "--sf",
        "0.01",
        "--pairs",
        "2",
        "--storage",
        "delta",
        "--json",
    ]));
    assert_eq!(report["storage"], "delta");
    assert_two_pairs(&report);
    assert_eq!(report["queries"].as_array().map(Vec::len), Some(0));
}

#[test]
fn compare_queries_on_deltas_times_all_22_statements_against_the_merged_rows() {
    let report = json_of(&maestro(&[
        "tpch",
        "refresh",
        "--sf",
        "0.01",
        "--pairs",
        "1",
        "--storage",
        "delta",
        "--compare-queries",
        "--reps",
        "2",
        "--json",
    ]));
    assert_all_22_timed(&report, ["merged_s", "delta_s", "ratios"], 2);
    let queries = report["queries"].as_array().unwrap();
    assert!(queries.iter().all(|q| q["same_answer"] == true));
}

/// The report's `queries` are Q1..Q22, each with `reps` positive numbers
/// in each of `sides`.
fn assert_all_22_timed(report: &serde_json::Value, sides: [&str; 3], reps: usize) {
    let queries = report["queries"].as_array().unwrap();
    let numbers: Vec<u64> = queries
        .iter()
        .map(|q| q["query"].as_u64().unwrap())
        .collect();
    assert_eq!(numbers, (1..=22).collect::<Vec<u64>>());
    for q in queries {
        for side in sides {
            let times = q[side].as_array().unwrap();
            assert_eq!(times.len(), reps, "{side} of {q}");
            assert!(times.iter().all(|t| t.as_f64().unwrap() > 0.0), "{q}");
        }
    }
}

#[test]
fn compare_queries_times_all_22_on_both_sides_in_every_repetition() {
    let report = json_of(&maestro(&[
        "tpch",
        "refresh",
        "--sf",
        "0.01",
        "--pairs",
        "1",
        "--compare-queries",
        "--reps",
        "2",
        "--json",
    ]));
    assert_all_22_timed(&report, ["loaded_s", "refreshed_s", "ratios"], 2);
}

#[test]
fn bad_refresh_input_is_a_usage_error() {
    for args in [
        &["tpch", "refresh", "--sf", "0.01", "--pairs", "0"][..],
        &["tpch", "refresh", "--sf", "0.01", "--pairs", "1001"],
        &["tpch", "refresh", "--sf", "0"],
    ] {
        let out = maestro(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
    }
    let out = maestro(&["tpch", "check", "--sf", "0.01", "--refresh-pairs", "5"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no committed answers"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn throughput_runs_the_refresh_stream_beside_the_queries() {
    let report = json_of(&maestro(&[
        "tpch",
        "throughput",
        "--sf",
        "0.01",
        "--streams",
        "2",
        "--reps",
        "1",
        "--refresh",
        "--storage",
        "cow",
        "--json",
    ]));
    assert_eq!(report["storage"], "cow");
    let run = &report["runs"][0];
    assert_eq!(run["queries"], 44);
    let refresh = &run["refresh"];
    assert_eq!(refresh["pairs"], 2);
    assert_eq!(refresh["rf1_s"].as_array().unwrap().len(), 2);
    assert_eq!(refresh["rf2_s"].as_array().unwrap().len(), 2);
}
