//! The `maestro` command end to end: JSON on stdout, progress on stderr, clear
//! errors with exit code 2 for bad input.

mod common;

use common::{json_of, maestro, row, stderr, value};

#[test]
fn bench_scheduler_json_has_the_shared_shape() {
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
        "fork_join,tiny_tasks",
    ]);
    let v = json_of(&out);
    assert_eq!(v["experiment"], "scheduler");
    assert_eq!(v["contexts"], 2);
    let sp = row(
        &v,
        keys!(
            case = "fork_join",
            variant = "single-pool",
            metric = "seconds"
        ),
    );
    assert!(sp["value"].as_f64().unwrap() > 0.0);
    assert!(sp["ratio_vs_rayon"].as_f64().unwrap() > 0.0);
    assert!(
        !String::from_utf8_lossy(&out.stderr).is_empty(),
        "progress goes to stderr"
    );
}

#[test]
fn bad_input_exits_2_with_a_message() {
    for args in [
        &["bench", "scheduler", "--variants", "tbb"][..],
        &["bench", "scheduler", "--cases", "nope"][..],
        &["bench", "scheduler", "--contexts", "0"][..],
        &["bench", "olc", "--threads", "0"][..],
        &["bench", "mixed", "--quick", "--oltp-weight", "0"][..],
    ] {
        let out = maestro(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("error"), "{args:?}: {err}");
    }
    // clap's own usage errors also exit 2.
    assert_eq!(maestro(&["bench", "nosuch"]).status.code(), Some(2));
}

#[test]
fn out_dir_holds_report_and_each_schedulers_timeline() {
    let dir = std::env::temp_dir().join(format!("maestro-cli-out-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = maestro(&[
        "bench",
        "scheduler",
        "--quick",
        "--contexts",
        "2",
        "--variants",
        "rayon,single-hints",
        "--cases",
        "fork_join",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("scheduler.json")).unwrap())
            .unwrap();
    assert_eq!(report["experiment"], "scheduler");
    let timeline: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("scheduler-single-hints-report.json")).unwrap(),
    )
    .unwrap();
    assert!(timeline["stats"]["tasks_executed"].as_u64().unwrap() > 0);
    assert!(timeline["timeline"].is_array());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn tpch_query_prints_the_answer_as_csv() {
    let out = maestro(&["tpch", "query", "1", "--sf", "0.01", "--format", "csv"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let expected = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tpch/answers/sf0.01/q1_validation.csv"
    ))
    .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let (got, want): (Vec<&str>, Vec<&str>) =
        (stdout.lines().collect(), expected.lines().collect());
    assert_eq!(got.len(), want.len());
    // Same header and group columns; the DOUBLE averages may differ from
    // DuckDB's in the last digit (answers/README.md), the exact columns may not.
    for (g, w) in got.iter().zip(&want) {
        let exact = |line: &str| {
            line.split(',')
                .take(6)
                .chain(line.split(',').skip(9))
                .collect::<Vec<_>>()
                .join(",")
        };
        assert_eq!(exact(g), exact(w));
    }
}

#[test]
fn tpch_query_stops_at_its_statement_timeout_and_says_so() {
    // A zero timeout has passed when the first operator starts: the query
    // must stop there, whatever the machine's speed.
    let out = maestro(&["tpch", "query", "9", "--sf", "0.01", "--timeout", "0"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("Q9: query stopped: statement timeout"),
        "{}",
        stderr(&out)
    );
    assert!(out.stdout.is_empty(), "no partial answer is printed");
    let bad = maestro(&["tpch", "query", "9", "--sf", "0.01", "--timeout", "soon"]);
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
}

#[test]
fn tpch_query_stops_at_its_memory_limit_and_says_so() {
    // Q9 at SF 0.01 charges ~0.2 MiB (hash tables, positions): 0.01 MiB
    // stops it whatever the machine; 1024 MiB lets it finish.
    let out = maestro(&[
        "tpch",
        "query",
        "9",
        "--sf",
        "0.01",
        "--memory-limit-mb",
        "0.01",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("Q9: query stopped: statement memory limit exceeded"),
        "{}",
        stderr(&out)
    );
    assert!(out.stdout.is_empty(), "no partial answer is printed");
    let ok = maestro(&[
        "tpch",
        "query",
        "9",
        "--sf",
        "0.01",
        "--memory-limit-mb",
        "1024",
    ]);
    assert!(ok.status.success(), "{}", stderr(&ok));
    assert!(stderr(&ok).contains("MiB charged"), "{}", stderr(&ok));
    let bad = maestro(&["tpch", "query", "9", "--memory-limit-mb", "-1"]);
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
}

#[test]
fn tpch_query_json_and_parameters() {
    let out = maestro(&[
        "tpch",
        "query",
        "6",
        "--sf",
        "0.01",
        "--format",
        "json",
        "--param",
        "QUANTITY=25",
        "--param",
        "DATE=1995-01-01",
    ]);
    let v = json_of(&out);
    assert_eq!(v["columns"][0], "revenue");
    assert_eq!(v["rows"].as_array().unwrap().len(), 1);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("QUANTITY=25") && stderr.contains("DATE=1995-01-01"),
        "{stderr}"
    );
}

#[test]
fn tpch_bad_input_exits_2_with_a_reason() {
    let cases: [(&[&str], &str); 6] = [
        (&["tpch", "query", "23", "--sf", "0.01"], "from 1 to 22"),
        (
            &["tpch", "query", "1", "--sf", "0.01", "--param", "COLOR=red"],
            "no parameter",
        ),
        (
            &["tpch", "query", "1", "--sf", "0.01", "--param", "DELTA=5"],
            "from 60 to 120",
        ),
        (
            &[
                "tpch",
                "query",
                "7",
                "--sf",
                "0.01",
                "--param",
                "NATION2=FRANCE",
            ],
            "must differ",
        ),
        (&["tpch", "query", "1", "--sf", "11"], "scale factor"),
        (
            &["tpch", "throughput", "--sf", "0.01", "--streams", "0"],
            "at least 1",
        ),
    ];
    for (args, reason) in cases {
        let out = maestro(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(reason), "{args:?}: {stderr}");
    }
}

#[test]
fn bench_analytical_quick_has_every_variant_and_sane_values() {
    let dir = std::env::temp_dir().join(format!("maestro-analytical-{}", std::process::id()));
    let out = maestro(&[
        "bench",
        "analytical",
        "--quick",
        "--json",
        "--contexts",
        "2",
        "--sf",
        "0.01",
        "--clients",
        "1,6",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // --out: the JSON, the table, a Markdown report and its chart.
    let md = std::fs::read_to_string(dir.join("analytical.md")).unwrap();
    assert!(md.contains("![analytical.svg](analytical.svg)"), "{md}");
    let svg = std::fs::read_to_string(dir.join("analytical.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("single-hints"));
    assert!(dir.join("analytical.json").exists() && dir.join("analytical.txt").exists());
    std::fs::remove_dir_all(&dir).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(v["experiment"], "analytical");
    for variant in [
        "multiple-pools",
        "single-pool-nosys",
        "single-pool",
        "single-hints",
        "rayon",
    ] {
        for clients in [1, 6] {
            let get = |metric: &str| {
                value(
                    &v,
                    keys!(variant = variant, clients = clients, metric = metric),
                )
            };
            assert!(get("seconds") > 0.0 && get("seconds").is_finite());
            let cpu = get("cpu_user") + get("cpu_system") + get("cpu_idle");
            assert!(cpu.is_finite() && cpu > 0.0);
            // Tasks and workers are the Maestro scheduler's; the pool
            // baselines do not use it.
            if !["multiple-pools", "rayon"].contains(&variant) {
                assert!(
                    get("tasks_created") >= clients as f64,
                    "one task per query at least"
                );
                assert!(get("workers_peak") >= 1.0);
            }
        }
    }
    let bad = maestro(&["bench", "analytical", "--quick", "--variants", "nope"]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn bench_granularity_quick_reports_a_slowdown_per_query_policy_and_background() {
    let out = maestro(&[
        "bench",
        "granularity",
        "--quick",
        "--json",
        "--contexts",
        "2",
        "--sf",
        "0.01",
        "--granularity",
        "static,adaptive",
    ]);
    let v = json_of(&out);
    assert_eq!(v["experiment"], "granularity");
    let rows = v["results"].as_array().unwrap();
    for policy in ["static", "adaptive"] {
        for background in ["tpch", "cpu-hog"] {
            let slowdowns: Vec<f64> = rows
                .iter()
                .filter(|r| {
                    r["variant"] == policy
                        && r["background"] == background
                        && r["metric"] == "slowdown"
                })
                .map(|r| r["value"].as_f64().unwrap())
                .collect();
            assert_eq!(slowdowns.len(), 22, "{policy}/{background}");
            assert!(
                slowdowns.iter().all(|s| s.is_finite() && *s > 0.0),
                "{slowdowns:?}"
            );
        }
    }
    let bad = maestro(&[
        "bench",
        "granularity",
        "--quick",
        "--granularity",
        "sometimes",
    ]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn tpcc_run_json_export_and_check() {
    let dir = std::env::temp_dir().join(format!("maestro-tpcc-export-{}", std::process::id()));
    let out = maestro(&[
        "tpcc",
        "run",
        "--warehouses",
        "1",
        "--terminals",
        "3",
        "--duration",
        "1",
        "--json",
        "--export",
        dir.to_str().unwrap(),
    ]);
    let v = json_of(&out);
    assert_eq!(v["experiment"], "tpcc");
    assert_eq!(
        (v["warehouses"].as_u64(), v["terminals"].as_u64()),
        (Some(1), Some(3))
    );
    let metric = |m: &str| value(&v, keys!(metric = m));
    assert!(metric("tpmC") > 0.0 && metric("transactions_per_second") > 0.0);
    assert!((0.0..1.0).contains(&metric("abort_rate")));
    for table in [
        "warehouse",
        "district",
        "customer",
        "history",
        "new_order",
        "orders",
        "order_line",
        "item",
        "stock",
    ] {
        let text = std::fs::read_to_string(dir.join(format!("{table}.csv")))
            .unwrap_or_else(|e| panic!("{table}.csv: {e}"));
        let header = text.lines().next().unwrap();
        assert!(header.split(',').all(|c| c == c.to_lowercase()), "{header}");
    }
    let w = std::fs::read_to_string(dir.join("warehouse.csv")).unwrap();
    assert!(w.starts_with("w_id,w_name,"), "{w}");
    assert_eq!(w.lines().count(), 2, "header + one warehouse");
    std::fs::remove_dir_all(&dir).unwrap();

    let check = maestro(&[
        "tpcc",
        "check",
        "--warehouses",
        "1",
        "--duration",
        "1",
        "--terminals",
        "4",
    ]);
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
}

#[test]
fn tpcc_mvcc_run_reports_conflict_retries_exports_one_snapshot_and_checks() {
    let dir = std::env::temp_dir().join(format!("maestro-tpcc-mvcc-{}", std::process::id()));
    let out = maestro(&[
        "tpcc",
        "run",
        "--cc",
        "mvcc",
        "--warehouses",
        "1",
        "--terminals",
        "4",
        "--duration",
        "1",
        "--json",
        "--export",
        dir.to_str().unwrap(),
    ]);
    let v = json_of(&out);
    assert_eq!(v["cc"], "mvcc");
    let metric = |m: &str| value(&v, keys!(metric = m));
    assert!(metric("tpmC") > 0.0);
    assert!(metric("conflict_retries") >= 0.0);
    assert!(stderr(&out).contains("consistency conditions 1-4: ok"));
    // The export comes from one snapshot, w_ytd from its counter: condition 1
    // (w_ytd = sum of d_ytd) holds in the files too.
    let column_sum = |table: &str, column: &str| -> f64 {
        let text = std::fs::read_to_string(dir.join(format!("{table}.csv"))).unwrap();
        let mut lines = text.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        let at = header.iter().position(|c| *c == column).unwrap();
        lines
            .map(|l| l.split(',').nth(at).unwrap().parse::<f64>().unwrap())
            .sum()
    };
    let (w_ytd, d_ytd) = (
        column_sum("warehouse", "w_ytd"),
        column_sum("district", "d_ytd"),
    );
    assert!(
        (w_ytd - d_ytd).abs() < 0.005,
        "w_ytd {w_ytd} vs d_ytd {d_ytd}"
    );
    assert!(w_ytd > 300_000.0, "payments were added: {w_ytd}");
    std::fs::remove_dir_all(&dir).unwrap();

    let check = maestro(&[
        "tpcc",
        "check",
        "--cc",
        "mvcc",
        "--warehouses",
        "1",
        "--duration",
        "0.5",
    ]);
    assert!(check.status.success(), "{}", stderr(&check));
    let bad = maestro(&["tpcc", "check", "--cc", "occ", "--warehouses", "1"]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn tpcc_sql_runs_the_transactions_on_the_store_and_checks_by_sql() {
    let out = maestro(&[
        "tpcc",
        "run",
        "--cc",
        "sql",
        "--variant",
        "receivers",
        "--isolation",
        "read-committed",
        "--warehouses",
        "1",
        "--terminals",
        "2",
        "--duration",
        "1",
        "--json",
    ]);
    let v = json_of(&out);
    assert_eq!(v["cc"], "sql");
    let metric = |m: &str| value(&v, keys!(metric = m));
    assert!(metric("tpmC") > 0.0);
    assert!(metric("new_order_committed") > 0.0);
    assert!(
        stderr(&out).contains("consistency conditions 1-4 (by SQL on the store): ok"),
        "{}",
        stderr(&out)
    );
    // The statements' plans come from the plan cache after their second
    // execution. (Whether a statement is kept depends on its plans for the
    // values it meets — a join order from range estimates may differ — so
    // only the hits are asserted.)
    let plans = stderr(&out)
        .lines()
        .find_map(|l| l.split_once("; plans: ").map(|(_, p)| p.to_string()))
        .unwrap_or_else(|| panic!("no plan cache line in {}", stderr(&out)));
    let hits: u64 = plans.split(' ').next().unwrap().parse().unwrap();
    assert!(hits > 100, "{plans}");
    let check = maestro(&[
        "tpcc",
        "check",
        "--cc",
        "sql",
        "--warehouses",
        "1",
        "--terminals",
        "2",
        "--duration",
        "0.5",
    ]);
    assert!(check.status.success(), "{}", stderr(&check));
    for bad in [
        &["--cc", "sql", "--export", "/tmp/never"][..],
        &["--cc", "mvcc", "--isolation", "read-committed"][..],
        &["--cc", "sql", "--data-dir", "/tmp/never"][..],
    ] {
        let mut args = vec![
            "tpcc",
            "run",
            "--warehouses",
            "1",
            "--terminals",
            "1",
            "--duration",
            "1",
        ];
        args.extend_from_slice(bad);
        assert_eq!(maestro(&args).status.code(), Some(2), "{bad:?}");
    }
}

#[test]
fn ch_run_reports_both_sides_and_snapshot_writes_tables_and_answers() {
    let out = maestro(&[
        "ch",
        "run",
        "--warehouses",
        "1",
        "--terminals",
        "2",
        "--olap-clients",
        "1",
        "--duration",
        "1.5",
        "--json",
    ]);
    let v = json_of(&out);
    assert_eq!(v["experiment"], "ch");
    let metric = |m: &str| value(&v, keys!(metric = m));
    assert!(metric("tpmC") > 0.0, "{v}");
    assert!(metric("queries_completed") >= 1.0, "{v}");
    assert!(metric("q1_count") >= 1.0, "{v}");
    assert!(stderr(&out).contains("consistency conditions 1-4: ok"));

    // The SQL engine on the column mirror: the report says how many rows
    // the queries' deltas held and how often the mirror merged; the run
    // checks consistency as before.
    let out = maestro(&[
        "ch",
        "run",
        "--warehouses",
        "1",
        "--terminals",
        "2",
        "--olap-clients",
        "2",
        "--duration",
        "1.5",
        "--olap-engine",
        "sql",
        "--json",
    ]);
    let v = json_of(&out);
    assert_eq!(v["olap_engine"], "sql", "{v}");
    let metric = |m: &str| value(&v, keys!(metric = m));
    assert!(metric("queries_completed") >= 1.0, "{v}");
    assert!(metric("delta_rows_per_query") > 0.0, "{v}");
    assert!(metric("mirror_merges") >= 0.0, "{v}");
    assert!(stderr(&out).contains("consistency conditions 1-4: ok"));

    let dir = std::env::temp_dir().join(format!("maestro-ch-snapshot-{}", std::process::id()));
    let out = maestro(&[
        "ch",
        "snapshot",
        "--warehouses",
        "1",
        "--run-seconds",
        "0.5",
        "--terminals",
        "2",
        "--clock-start",
        "2020-01-01T00:00:00Z",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    for file in ["order_line", "supplier", "nation", "region", "q1", "q6"] {
        let path = dir.join(format!("{file}.csv"));
        assert!(path.exists(), "{} missing", path.display());
    }
    let orders = std::fs::read_to_string(dir.join("orders.csv")).unwrap();
    let entry_d = orders
        .lines()
        .nth(1)
        .unwrap()
        .split(',')
        .nth(4)
        .unwrap()
        .to_string();
    assert_eq!(
        entry_d, "2020-01-01T00:00:00Z",
        "the load runs at --clock-start"
    );
    let nations = std::fs::read_to_string(dir.join("nation.csv")).unwrap();
    assert_eq!(nations.lines().count(), 63, "header + 62 nations");
    std::fs::remove_dir_all(&dir).unwrap();

    for bad in [
        &["ch", "snapshot", "--out", "/tmp/x", "--clock-start", "soon"][..],
        &["ch", "run", "--terminals", "0"],
        &["ch", "run", "--duration", "0"],
        &[
            "ch",
            "run",
            "--olap-engine",
            "sql",
            "--variant",
            "receivers",
        ],
        &["ch", "run", "--olap-engine", "columns"],
        &["ch", "run", "--heap-release", "sometimes"],
        &["ch", "run", "--max-tps", "0"],
    ] {
        assert_eq!(maestro(bad).status.code(), Some(2), "{bad:?}");
    }
}

#[test]
fn tpcc_transactions_past_their_timeout_are_counted_and_leave_the_data_consistent() {
    // A nanosecond has passed before any transaction takes its first lock.
    let out = maestro(&[
        "tpcc",
        "run",
        "--warehouses",
        "1",
        "--terminals",
        "2",
        "--duration",
        "0.3",
        "--txn-timeout-ms",
        "0.000001",
        "--json",
    ]);
    let json = json_of(&out);
    let timed_out = value(&json, keys!(metric = "timed_out"));
    assert!(timed_out > 0.0, "{json}");
    assert!(
        stderr(&out).contains("consistency conditions 1-4: ok"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn tpcc_bad_arguments_exit_2() {
    for args in [
        &[
            "tpcc",
            "run",
            "--warehouses",
            "1",
            "--terminals",
            "2",
            "--duration",
            "1",
            "--txn-timeout-ms",
            "0",
        ][..],
        &[
            "tpcc",
            "run",
            "--warehouses",
            "0",
            "--terminals",
            "2",
            "--duration",
            "1",
        ][..],
        &[
            "tpcc",
            "run",
            "--warehouses",
            "1",
            "--terminals",
            "0",
            "--duration",
            "1",
        ],
        &[
            "tpcc",
            "run",
            "--warehouses",
            "1",
            "--terminals",
            "2",
            "--duration",
            "0",
        ],
        &[
            "tpcc",
            "run",
            "--warehouses",
            "1",
            "--terminals",
            "2",
            "--duration",
            "1",
            "--variant",
            "fifo",
        ],
        &[
            "tpcc",
            "run",
            "--warehouses",
            "1",
            "--terminals",
            "2",
            "--duration",
            "1",
            "--max-tps",
            "0",
        ],
    ] {
        let out = maestro(args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!out.stderr.is_empty());
    }
}

#[test]
fn run_main_job_reports_both_workloads_and_writes_the_report() {
    // The default workload is CH-benCHmark on shared data; `disjoint` is
    // TPC-H beside TPC-C.
    for workload in ["ch", "disjoint"] {
        let dir =
            std::env::temp_dir().join(format!("maestro-run-{workload}-{}", std::process::id()));
        let out = maestro(&[
            "run",
            "--workload",
            workload,
            "--sf",
            "0.01",
            "--warehouses",
            "1",
            "--olap-clients",
            "2",
            "--tpcc-terminals",
            "2",
            "--duration",
            "1.5",
            "--contexts",
            "2",
            "--json",
            "--out",
            dir.to_str().unwrap(),
        ]);
        let v = json_of(&out);
        let o = &v["outcome"];
        assert_eq!(o["workload"], workload, "{o}");
        assert!(o["tpch_queries"].as_u64().unwrap() > 0, "{o}");
        assert!(o["tpmc"].as_f64().unwrap() > 0.0, "{o}");
        assert_eq!(o["consistency_violations"].as_array().unwrap().len(), 0);
        assert!(
            !o["live"].as_array().unwrap().is_empty(),
            "live progress samples"
        );
        for f in ["report.json", "report.md", "throughput.svg", "workers.svg"] {
            assert!(dir.join(f).exists(), "{workload}: {f}");
        }
        let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
        let expected = if workload == "ch" {
            "CH-benCHmark"
        } else {
            "TPC-H SF 0.01"
        };
        assert!(md.contains(expected), "{md}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
    let bad = maestro(&["run", "--variant", "fastest"]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn bench_mixed_and_timeline_quick_have_every_variant() {
    let variants = [
        "multiple-pools",
        "single-pool-nosys",
        "single-pool",
        "single-hints",
        "rayon",
    ];
    let out = maestro(&[
        "bench",
        "mixed",
        "--quick",
        "--json",
        "--contexts",
        "2",
        "--sf",
        "0.01",
        "--duration",
        "0.6",
        "--warehouses",
        "1",
        "--tpch-clients",
        "0,2",
    ]);
    let v = json_of(&out);
    for variant in variants {
        for clients in [0, 2] {
            for metric in ["tpmC", "tpch_queries_per_minute"] {
                let value = value(
                    &v,
                    keys!(variant = variant, tpch_clients = clients, metric = metric),
                );
                assert!(value.is_finite() && value >= 0.0);
                if metric == "tpmC" {
                    assert!(value > 0.0, "{variant} {clients}: no New-Order committed");
                }
            }
        }
    }
    let out = maestro(&[
        "bench",
        "timeline",
        "--quick",
        "--json",
        "--contexts",
        "2",
        "--sf",
        "0.01",
        "--duration",
        "0.6",
        "--warehouses",
        "1",
        "--tpch-clients",
        "2",
    ]);
    let v = json_of(&out);
    let rows = v["results"].as_array().unwrap();
    for variant in ["single-pool-nosys", "single-pool", "single-hints"] {
        assert!(
            rows.iter().any(|r| r["variant"] == variant
                && r["metric"] == "samples"
                && r["value"].as_f64() > Some(0.0)),
            "{variant} has no timeline samples"
        );
    }
}

/// `bench mixed --quick --json` of CH-benCHmark on shared data (W = 1, one
/// analytical client, 0.8 s) with the analytical `engine` and `variants`.
fn bench_mixed_ch(engine: &str, variants: &str) -> std::process::Output {
    maestro(&[
        "bench",
        "mixed",
        "--quick",
        "--json",
        "--workload",
        "ch",
        "--olap-engine",
        engine,
        "--contexts",
        "2",
        "--duration",
        "0.8",
        "--warehouses",
        "1",
        "--tpch-clients",
        "1",
        "--variants",
        variants,
    ])
}

#[test]
fn bench_mixed_runs_on_shared_ch_data_too() {
    let out = bench_mixed_ch("plans", "multiple-pools,single-classes");
    let v = json_of(&out);
    for variant in ["multiple-pools", "single-classes"] {
        for metric in ["tpmC", "tpch_queries_per_minute"] {
            let value = value(&v, keys!(variant = variant, metric = metric));
            assert!(value > 0.0, "{variant} {metric}: {value}");
        }
    }
    assert!(
        stderr(&out).contains("Ch (plans engine) workload"),
        "{}",
        stderr(&out)
    );
    // The SQL engine on the column mirror, its merge loop beside the clients.
    let out = bench_mixed_ch("sql", "single-hints");
    let v = json_of(&out);
    for metric in ["tpmC", "tpch_queries_per_minute"] {
        let value = value(&v, keys!(variant = "single-hints", metric = metric));
        assert!(value > 0.0, "sql engine {metric}: {value}");
    }
    assert!(
        stderr(&out).contains("Ch (sql engine) workload"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn bench_latches_quick_has_every_flavour_and_terminal_count() {
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
        "1,4",
        "--duration",
        "0.4",
    ]);
    let v = json_of(&out);
    for flavour in ["blocking", "spinning", "load-controlled"] {
        for terminals in [1, 4] {
            let tps = value(
                &v,
                keys!(
                    flavour = flavour,
                    terminals = terminals,
                    metric = "transactions_per_second"
                ),
            );
            assert!(tps > 0.0 && tps.is_finite());
        }
    }
}

#[test]
fn bench_omp_overhead_quick_reports_every_construct_against_libgomp() {
    let out = maestro(&[
        "bench",
        "omp",
        "--parts",
        "overhead",
        "--quick",
        "--json",
        "--contexts",
        "2",
        "--reps",
        "2",
    ]);
    let v = json_of(&out);
    for case in maestro_gomp_bench::OVERHEAD_METRICS {
        for runtime in ["libgomp", "maestro-gomp", "maestro-gomp-master-task"] {
            let r = row(&v, keys!(case = case, variant = runtime));
            assert!(r["value"].as_f64().is_some_and(|x| x > 0.0), "{r}");
            assert_eq!(r["reps"], 2, "{r}");
            if runtime != "libgomp" {
                assert!(r["ratio_vs_libgomp"].as_f64().is_some(), "{r}");
            }
        }
    }
}

#[test]
fn bench_omp_interference_quick_measures_both_sides_on_every_runtime() {
    let out = maestro(&[
        "bench",
        "omp",
        "--parts",
        "interference",
        "--quick",
        "--json",
        "--contexts",
        "2",
        "--duration",
        "0.3",
        "--db-priorities",
        "low,high",
    ]);
    let v = json_of(&out);
    assert_eq!(v["experiment"], "omp");
    assert_eq!(v["params"]["interference"]["jobs_in_flight_max"], 100);
    let value = |case: &str, variant: &str, metric: &str| -> f64 {
        let x = value(&v, keys!(case = case, variant = variant, metric = metric));
        assert!(x.is_finite() && x >= 0.0, "{case}/{variant}/{metric}: {x}");
        x
    };
    // Alone, each side makes progress (every execution was checked in the run).
    for p in ["low", "high"] {
        let case = format!("db-alone-{p}");
        assert!(value(&case, "database-only", "db_exec_per_s") > 0.0);
    }
    for runtime in ["libgomp", "maestro-gomp", "maestro-gomp-master-task"] {
        assert!(value("app-alone", runtime, "app_exec_per_s") > 0.0);
        for case in ["db-low", "db-high"] {
            value(case, runtime, "db_exec_per_s");
            value(case, runtime, "app_exec_per_s");
        }
    }
    let rows = v["results"].as_array().unwrap();
    assert!(!rows.iter().any(|r| r["case"] == "db-equal"));
    assert_eq!(
        rows.len(),
        2 + 3 + 3 * 2 * 2,
        "one row per side of every run"
    );

    for bad in [
        &["bench", "omp", "--parts", "speed"][..],
        &[
            "bench",
            "omp",
            "--parts",
            "interference",
            "--runtimes",
            "iomp5",
        ],
        &[
            "bench",
            "omp",
            "--parts",
            "interference",
            "--db-priorities",
            "urgent",
        ],
        &["bench", "omp", "--parts", "interference", "--duration", "0"],
    ] {
        let out = maestro(bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("error:"));
    }
}

#[test]
fn tpch_params_plan_runs_a_fixed_window_and_refuses_bad_plans() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("tpch-params-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plan = dir.join("params.json");
    let plan_s = plan.to_str().unwrap();
    let out = maestro(&[
        "tpch",
        "params",
        "--sf",
        "0.01",
        "--seed",
        "3",
        "--streams",
        "2",
        "--rounds",
        "1",
        "--out",
        plan_s,
    ]);
    assert!(out.status.success(), "{out:?}");
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
    assert_eq!(written["format"], "maestro-tpch-params/1");
    let streams = written["streams"].as_array().unwrap();
    assert_eq!(streams.len(), 2);
    assert_eq!(streams[0].as_array().unwrap().len(), 22);
    // Stream 0 runs the spec's order for stream 1, which starts with Q21.
    assert_eq!(streams[0][0]["query"], 21);

    let out = maestro(&[
        "tpch",
        "throughput",
        "--sf",
        "0.01",
        "--streams",
        "2",
        "--params",
        plan_s,
        "--duration",
        "1",
        "--json",
    ]);
    let json = json_of(&out);
    let run = &json["runs"][0];
    assert_eq!(run["window_s"], 1.0);
    assert!(run["late"].as_u64().is_some(), "{run}");
    let queries = run["queries"].as_f64().unwrap();
    assert!(queries >= 1.0, "{run}");
    let qph = run["queries_per_hour"].as_f64().unwrap();
    assert!((qph - queries * 3600.0).abs() < 1e-6, "{run}");

    // A window too short for any query to complete: a clear error, no panic.
    let out = maestro(&[
        "tpch",
        "throughput",
        "--sf",
        "0.01",
        "--params",
        plan_s,
        "--duration",
        "0.000001",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("no query completed"), "{stderr}");

    let cases: [(&[&str], &str); 4] = [
        (
            &["tpch", "throughput", "--sf", "0.01", "--params", plan_s],
            "--duration",
        ),
        (
            &[
                "tpch",
                "throughput",
                "--sf",
                "0.1",
                "--params",
                plan_s,
                "--duration",
                "1",
            ],
            "SF 0.01",
        ),
        (
            &[
                "tpch",
                "throughput",
                "--sf",
                "0.01",
                "--streams",
                "3",
                "--params",
                plan_s,
                "--duration",
                "1",
            ],
            "2 stream(s)",
        ),
        (&["tpch", "check", "--sf", "0.5"], "committed answers"),
    ];
    for (args, reason) in cases {
        let out = maestro(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(reason), "{args:?}: {stderr}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bench_mixed_single_classes_and_bench_workload_run_with_classes() {
    // Workload classes in the mixed workload: both sides make progress.
    let out = maestro(&[
        "bench",
        "mixed",
        "--quick",
        "--json",
        "--contexts",
        "2",
        "--sf",
        "0.01",
        "--duration",
        "0.6",
        "--warehouses",
        "1",
        "--tpch-clients",
        "2",
        "--variants",
        "single-classes",
        "--oltp-weight",
        "3",
        "--olap-weight",
        "2",
    ]);
    let v = json_of(&out);
    assert_eq!(v["params"]["classes_oltp_weight"], 3, "{}", v["params"]);
    assert_eq!(v["params"]["classes_olap_weight"], 2, "{}", v["params"]);
    for metric in ["tpmC", "tpch_queries_per_minute"] {
        let x = value(&v, keys!(variant = "single-classes", metric = metric));
        assert!(x > 0.0, "single-classes {metric}: {x}");
    }
    // bench workload: with classes the queries pass admission control, and
    // every one is counted as admitted (none rejected at this load); without
    // classes nothing is counted.
    let out = maestro(&[
        "bench",
        "workload",
        "--quick",
        "--json",
        "--contexts",
        "2",
        "--olap-clients",
        "3",
        "--duration",
        "0.6",
    ]);
    let v = json_of(&out);
    let value = |variant: &str, metric: &str| value(&v, keys!(variant = variant, metric = metric));
    assert!(value("classes", "admitted") > 0.0);
    assert!(value("classes", "oltp_p99_ms") > 0.0);
    assert!(value("classes", "tpmC") > 0.0);
    for metric in ["admitted", "queued", "rejected"] {
        assert_eq!(value("no-classes", metric), 0.0, "{metric}");
    }
    let bad = maestro(&["bench", "workload", "--variants", "strict"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("unknown variant"), "{}", stderr(&bad));
}

#[test]
fn bench_omp_interference_shares_runs_both_sides_in_classes() {
    let out = maestro(&[
        "bench",
        "omp",
        "--parts",
        "interference",
        "--quick",
        "--json",
        "--contexts",
        "2",
        "--duration",
        "0.3",
        "--db-priorities",
        "shares",
        "--runtimes",
        "maestro-gomp-master-task",
    ]);
    let v = json_of(&out);
    for metric in ["db_exec_per_s", "app_exec_per_s"] {
        let x = value(&v, keys!(case = "db-shares", metric = metric));
        assert!(x > 0.0, "db-shares {metric}: {x}");
    }
}
