//! The `maestro` command end to end: JSON on stdout, progress on stderr, clear
//! errors with exit code 2 for bad input.

use std::process::Command;

fn maestro(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_maestro"))
        .args(args)
        .output()
        .expect("maestro runs")
}

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
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("stdout is one JSON object");
    assert_eq!(v["experiment"], "scheduler");
    assert_eq!(v["contexts"], 2);
    let rows = v["results"].as_array().unwrap();
    let sp = rows
        .iter()
        .find(|r| {
            r["case"] == "fork_join" && r["variant"] == "single-pool" && r["metric"] == "seconds"
        })
        .expect("single-pool fork_join row");
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
