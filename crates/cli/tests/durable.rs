//! `maestro tpcc run|check --data-dir`: create, recover, check, and the
//! errors for flags that do not fit together.

mod common;

use common::{maestro, stderr};

fn args(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

#[test]
fn data_dir_flags_that_do_not_fit_exit_2() {
    for line in [
        "tpcc run --warehouses 1 --terminals 1 --duration 1 --durability sync",
        "tpcc run --warehouses 1 --terminals 1 --duration 1 --ack-log /tmp/x",
        "tpcc run --terminals 1 --duration 1",
        "tpcc run --terminals 1 --duration 1 --data-dir /tmp/maestro-never --cc 2pl",
        "tpcc run --terminals 1 --duration 1 --data-dir /tmp/maestro-never --checkpoint-interval-s 0",
        "tpcc run --terminals 1 --duration 1 --data-dir /tmp/maestro-never --group-delay-us -1",
        "tpcc run --terminals 1 --duration 1 --data-dir /tmp/maestro-never --inject-log-fault sync@x",
        "tpcc check --data-dir /tmp/maestro-never --duration 1",
        "tpcc check",
    ] {
        let out = maestro(&args(line));
        assert_eq!(out.status.code(), Some(2), "{line}: {}", stderr(&out));
        assert!(stderr(&out).contains("error"), "{line}: {}", stderr(&out));
    }
    assert!(!std::path::Path::new("/tmp/maestro-never").exists());
}

#[test]
fn a_data_dir_is_created_then_recovered_and_checked() {
    let dir = std::env::temp_dir().join(format!("maestro-cli-durable-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let data = dir.join("data");
    let data = data.to_str().unwrap();
    let run = |extra: &str| {
        let line = format!(
            "tpcc run --terminals 2 --duration 0.5 --checkpoint-interval-s 0.2 --data-dir {data} {extra}"
        );
        maestro(&args(&line))
    };
    let missing = maestro(&args(&format!("tpcc check --data-dir {data}")));
    assert_eq!(missing.status.code(), Some(1), "{}", stderr(&missing));
    assert!(
        stderr(&missing).contains("holds no database"),
        "{}",
        stderr(&missing)
    );

    let first = run("--warehouses 1 --durability group");
    assert!(first.status.success(), "{}", stderr(&first));
    let out = String::from_utf8_lossy(&first.stdout);
    assert!(
        stderr(&first).contains("created: loaded W=1"),
        "{}",
        stderr(&first)
    );
    assert!(out.contains("log (group):"), "{out}");
    assert!(out.contains("checkpoints: "), "{out}");

    let second = run("--durability sync");
    assert!(second.status.success(), "{}", stderr(&second));
    assert!(
        stderr(&second).contains("recovered W=1"),
        "{}",
        stderr(&second)
    );
    let wrong = run("--warehouses 2");
    assert!(!wrong.status.success());
    assert!(
        stderr(&wrong).contains("holds W=1, not W=2"),
        "{}",
        stderr(&wrong)
    );

    let off = run("--durability off");
    assert!(off.status.success(), "{}", stderr(&off));
    assert!(
        String::from_utf8_lossy(&off.stdout).contains("log: off"),
        "{}",
        String::from_utf8_lossy(&off.stdout)
    );
    let check = maestro(&args(&format!("tpcc check --data-dir {data}")));
    assert!(check.status.success(), "{}", stderr(&check));
    assert!(String::from_utf8_lossy(&check.stdout).contains("consistency conditions 1-4 hold"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn ch_runs_on_a_data_directory_and_recovers_it() {
    let dir = std::env::temp_dir().join(format!("maestro-cli-ch-durable-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let data = dir.join("data");
    let data = data.to_str().unwrap();
    let line = format!("ch run --duration 0.5 --olap-clients 1 --data-dir {data}");
    let first = maestro(&args(&line));
    assert!(first.status.success(), "{}", stderr(&first));
    assert!(
        stderr(&first).contains("created: loaded W=1"),
        "{}",
        stderr(&first)
    );
    let second = maestro(&args(&format!("{line} --durability group")));
    assert!(second.status.success(), "{}", stderr(&second));
    assert!(
        stderr(&second).contains("recovered W=1"),
        "{}",
        stderr(&second)
    );
    assert!(
        String::from_utf8_lossy(&second.stdout).contains("log (group):"),
        "{}",
        String::from_utf8_lossy(&second.stdout)
    );
    let check = maestro(&args(&format!("tpcc check --data-dir {data}")));
    assert!(check.status.success(), "{}", stderr(&check));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_main_job_keeps_its_data_in_a_data_directory() {
    let dir = std::env::temp_dir().join(format!("maestro-cli-run-durable-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (data, out) = (dir.join("data"), dir.join("out"));
    let line = format!(
        "run --duration 0.5 --warehouses 1 --tpch-clients 1 --tpcc-terminals 2 --data-dir {} --out {}",
        data.display(),
        out.display()
    );
    let first = maestro(&args(&line));
    assert!(first.status.success(), "{}", stderr(&first));
    assert!(
        stderr(&first).contains("created: loaded W=1"),
        "{}",
        stderr(&first)
    );
    let second = maestro(&args(&line));
    assert!(second.status.success(), "{}", stderr(&second));
    assert!(
        stderr(&second).contains("recovered W=1"),
        "{}",
        stderr(&second)
    );
    assert!(
        stderr(&second).contains("log (sync):"),
        "{}",
        stderr(&second)
    );
    let disjoint = maestro(&args(&format!("{line} --workload disjoint")));
    assert_eq!(disjoint.status.code(), Some(2), "{}", stderr(&disjoint));
    std::fs::remove_dir_all(&dir).unwrap();
}
