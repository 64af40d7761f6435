//! `--class SPEC` (one grammar: `maestro_scheduler::ClassSpec`'s `FromStr`)
//! on `serve`, `tpch query`/`throughput` and `tpcc run`: a bad spec exits 2
//! naming its key before anything loads; a good one runs the work in the
//! class, with its limits and admission counted in the report.

mod common;

use common::{json_of, maestro, stderr};

#[test]
fn a_bad_class_spec_exits_2_naming_its_key() {
    let commands: [&[&str]; 4] = [
        &["serve", "--port", "0"],
        &["tpch", "query", "6", "--sf", "0.01"],
        &["tpch", "throughput", "--sf", "0.01"],
        &["tpcc", "run", "--warehouses", "1", "--duration", "0.1"],
    ];
    for command in commands {
        for (spec, key) in [
            ("olap:weight=0", "bad weight"),
            ("olap:colour=red", "bad colour"),
            ("olap:priority=9", "bad priority"),
            ("olap:queue-load=2", "bad queue-load"),
            ("no space:weight=1", "bad name"),
        ] {
            let mut args = command.to_vec();
            args.extend(["--class", spec]);
            let out = maestro(&args);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
            assert!(stderr(&out).contains(key), "{args:?}: {}", stderr(&out));
        }
    }
    let receivers = maestro(&[
        "tpcc",
        "run",
        "--warehouses",
        "1",
        "--duration",
        "0.1",
        "--variant",
        "receivers",
        "--class",
        "oltp",
    ]);
    assert_eq!(receivers.status.code(), Some(2), "{}", stderr(&receivers));
}

#[test]
fn tpch_query_runs_under_its_class_limits() {
    // Q9 at SF 0.01 charges ~0.2 MiB: 0.01 MiB stops it whatever the machine.
    let args = ["tpch", "query", "9", "--sf", "0.01", "--class"];
    let tight = maestro(&[&args[..], &["olap:statement-memory-mb=0.01"]].concat());
    assert_eq!(tight.status.code(), Some(1), "{}", stderr(&tight));
    assert!(
        stderr(&tight).contains("statement memory limit exceeded")
            && stderr(&tight).contains("workload class olap"),
        "{}",
        stderr(&tight)
    );
    let roomy = maestro(&[&args[..], &["olap:statement-memory-mb=1024,admission=1"]].concat());
    assert!(roomy.status.success(), "{}", stderr(&roomy));
}

#[test]
fn tpch_throughput_and_tpcc_count_their_class_admission() {
    // One stream, one statement at a time, loads that never queue: every
    // query is admitted, none rejected.
    let out = maestro(&[
        "tpch",
        "throughput",
        "--sf",
        "0.01",
        "--reps",
        "1",
        "--json",
        "--class",
        "olap:max-parallelism=1,admission=1,queue-load=1000,reject-load=1000",
    ]);
    let run = &json_of(&out)["runs"][0];
    assert_eq!(run["queries"], 22, "{run}");
    assert_eq!(run["rejected"], 0, "{run}");
    assert_eq!(run["stopped"], 0, "{run}");

    let out = maestro(&[
        "tpcc",
        "run",
        "--warehouses",
        "1",
        "--terminals",
        "2",
        "--duration",
        "0.5",
        "--json",
        "--class",
        "oltp:priority=high,admission=2,queue-load=1000,reject-load=1000",
    ]);
    let v = json_of(&out);
    let metric = |name: &str| {
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["metric"] == name)
            .unwrap_or_else(|| panic!("no {name} in {v}"))["value"]
            .as_f64()
            .unwrap()
    };
    assert!(metric("committed") > 0.0, "{v}");
    assert_eq!(metric("rejected"), 0.0, "two terminals, two slots: {v}");
}
