//! Concurrent runs of the full mix (W = 1 and 2, 8 terminals, every
//! execution mode, both storages), each followed by the consistency conditions of clause
//! 3.3.2 and by invariants that catch lost updates: the database's totals
//! must have moved by exactly what the committed transactions did (the run's
//! audit), and orders must be whole. Seeded (`TPCC_SEED=…` replays the load
//! and the inputs; the interleaving is the OS's). No timing thresholds: the
//! durations only bound how much work is checked.

mod common;

use std::time::Duration;

use common::audit::{check_audit, check_orders, totals};
use common::seed;
use maestro_tpcc::driver::{self, Mode, Preset, RunConfig, RunReport, Storage};
use maestro_tpcc::*;

fn load_and_run(
    warehouses: u16,
    terminals: usize,
    mode: Mode,
    seconds: f64,
    contexts: usize,
) -> (Database, RunReport) {
    let seed = seed();
    let mut load_config = LoadConfig::new(warehouses);
    load_config.seed = seed;
    let (db, load) = load(&load_config, &|_| {}).unwrap();
    let mut config = RunConfig::new(
        terminals,
        Duration::from_secs_f64(seconds),
        mode,
        load.constants,
    );
    config.seed = seed;
    config.contexts = contexts;
    let before = totals(&db);
    let report = driver::run(&db, &config, &|p| eprintln!("  {p}")).unwrap();
    eprint!("{report}");
    assert!(report.completed() > 0, "seed {seed}");
    let violations = check_consistency(&db);
    assert!(violations.is_empty(), "seed {seed}: {violations:?}");
    check_audit(&before, &totals(&db), &report.audit, seed);
    check_orders(&db, seed);
    (db, report)
}

/// The same run on the MVCC storage (`--cc mvcc`); the checks read one
/// snapshot of it copied into row tables.
fn load_and_run_mvcc(warehouses: u16, terminals: usize, mode: Mode, seconds: f64) -> RunReport {
    let seed = seed();
    let mut load_config = LoadConfig::new(warehouses);
    load_config.seed = seed;
    let (db, load) = mvcc::load_mvcc(&load_config, &|_| {}).unwrap();
    let mut config = RunConfig::new(
        terminals,
        Duration::from_secs_f64(seconds),
        mode,
        load.constants,
    );
    config.seed = seed;
    config.contexts = 2;
    let before = totals(&db.snapshot_to_2pl().unwrap());
    let report = driver::run_storage(Storage::Mvcc(&db), &config, &|p| eprintln!("  {p}")).unwrap();
    eprint!("{report}");
    assert!(report.completed() > 0, "seed {seed}");
    let after = db.snapshot_to_2pl().unwrap();
    let violations = check_consistency(&after);
    assert!(violations.is_empty(), "seed {seed}: {violations:?}");
    check_audit(&before, &totals(&after), &report.audit, seed);
    check_orders(&after, seed);
    report
}

#[test]
fn mvcc_one_warehouse_eight_terminals_single_pool() {
    load_and_run_mvcc(1, 8, Mode::Scheduler(Preset::SinglePool), 2.0);
}

#[test]
fn mvcc_two_warehouses_eight_terminals_receivers() {
    load_and_run_mvcc(2, 8, Mode::Receivers, 1.5);
}

#[test]
fn one_warehouse_eight_terminals_single_pool() {
    load_and_run(1, 8, Mode::Scheduler(Preset::SinglePool), 2.0, 2);
}

#[test]
fn two_warehouses_eight_terminals_receivers() {
    load_and_run(2, 8, Mode::Receivers, 2.0, 2);
}

#[test]
fn two_warehouses_eight_terminals_single_hints() {
    load_and_run(2, 8, Mode::Scheduler(Preset::SingleHints), 1.5, 2);
}

#[test]
fn one_warehouse_eight_terminals_single_pool_nosys() {
    load_and_run(1, 8, Mode::Scheduler(Preset::SinglePoolNoSys), 1.5, 2);
}

#[test]
fn lock_waits_show_up_as_blocked_workers() {
    // W = 1 and 16 terminals on more workers than cores: holders get
    // preempted while others want their locks. Waits are near certain in one
    // run; runs repeat (bounded) until both counters moved, so a quiet run
    // on a starved machine cannot fail the test.
    const MAX_RUNS: usize = 30;
    for attempt in 1..=MAX_RUNS {
        let (_, report) = load_and_run(1, 16, Mode::Scheduler(Preset::SinglePool), 1.0, 4);
        let blocked = report.scheduler.as_ref().map_or(0, |s| s.blocked_events);
        if report.locks.waits > 0 && blocked > 0 {
            eprintln!(
                "attempt {attempt}: {} lock waits, {blocked} blocked events",
                report.locks.waits
            );
            return;
        }
    }
    panic!("no lock wait became a blocked worker in {MAX_RUNS} runs");
}

#[test]
fn bad_configurations_are_refused() {
    let (db, load) = load(&LoadConfig::new(1), &|_| {}).unwrap();
    let ok = RunConfig::new(
        1,
        Duration::from_millis(10),
        Mode::Receivers,
        load.constants,
    );
    for bad in [
        RunConfig {
            terminals: 0,
            ..ok.clone()
        },
        RunConfig {
            duration: Duration::ZERO,
            ..ok.clone()
        },
        RunConfig {
            contexts: 0,
            ..ok.clone()
        },
        RunConfig {
            max_tps: Some(0.0),
            ..ok.clone()
        },
        RunConfig {
            txn_timeout: Some(Duration::ZERO),
            ..ok.clone()
        },
    ] {
        assert!(matches!(
            driver::run(&db, &bad, &|_| {}),
            Err(TpccError::InvalidOption { .. })
        ));
    }
    assert!("single-pool-nosys".parse::<Mode>().is_ok() && "fifo".parse::<Mode>().is_err());
}

#[test]
fn a_rate_limit_bounds_the_transactions_started() {
    let (db, load) = load(&LoadConfig::new(1), &|_| {}).unwrap();
    let mut config = RunConfig::new(
        4,
        Duration::from_millis(800),
        Mode::Receivers,
        load.constants,
    );
    config.max_tps = Some(250.0);
    let report = driver::run(&db, &config, &|_| {}).unwrap();
    // Each terminal starts at most one transaction per 4 / 250 s, the first at
    // once: at most 4 + 250 × elapsed in total, whatever the machine's speed.
    let bound = 4.0 + 250.0 * report.elapsed.as_secs_f64();
    assert!(report.completed() > 0);
    assert!(
        report.completed() as f64 <= bound,
        "{} transactions in {:?} exceed the rate limit",
        report.completed(),
        report.elapsed
    );
    assert!(check_consistency(&db).is_empty());
}

#[test]
fn transactions_past_their_timeout_roll_back_and_leave_the_database_consistent() {
    let seed = seed();
    let mut load_config = LoadConfig::new(1);
    load_config.seed = seed;
    let (db, load) = load(&load_config, &|_| {}).unwrap();
    let mut config = RunConfig::new(
        8,
        Duration::from_millis(500),
        Mode::Scheduler(Preset::SinglePool),
        load.constants,
    );
    config.seed = seed;
    config.contexts = 2;
    // Passed before any transaction takes its first lock: every transaction
    // that locks anything stops there and rolls back.
    config.txn_timeout = Some(Duration::from_nanos(1));
    let before = totals(&db);
    let report = driver::run(&db, &config, &|_| {}).unwrap();
    assert!(report.timed_out() > 0, "seed {seed}: {report}");
    assert_eq!(report.locks.deadlock_victims, 0);
    let violations = check_consistency(&db);
    assert!(violations.is_empty(), "seed {seed}: {violations:?}");
    // Totals moved by exactly what committed (nothing a timed-out
    // transaction wrote survived).
    check_audit(&before, &totals(&db), &report.audit, seed);
    check_orders(&db, seed);
}

/// Issue 13 part 3: under a workload class each transaction's undo log is
/// charged to its statement account; over the class's per-statement limit
/// a transaction stops, rolls back and counts as timed out, and the
/// database stays consistent. Read-only transactions log nothing and pass.
#[test]
fn undo_logs_over_the_class_statement_memory_limit_stop_their_transaction() {
    use maestro_scheduler::{ClassSpec, Scheduler, SchedulerConfig};
    let seed = seed();
    let mut load_config = LoadConfig::new(1);
    load_config.seed = seed;
    let (db, load) = load(&load_config, &|_| {}).unwrap();
    let scheduler = Scheduler::new(SchedulerConfig::single_pool().with_contexts(2)).unwrap();
    let oltp = scheduler
        .define_class(&ClassSpec {
            // 128 bytes, two or three undo entries: New-Order (district,
            // stock rows, inserts), Payment (3–4 entries) and Delivery
            // stop; Order-Status and Stock-Level log nothing.
            statement_memory_limit: Some(2 * 64),
            ..ClassSpec::new("oltp", 1)
        })
        .unwrap();
    let mut config = RunConfig::new(
        4,
        Duration::from_millis(400),
        Mode::Scheduler(Preset::SinglePool),
        load.constants,
    );
    config.seed = seed;
    config.contexts = 2;
    config.class = Some(oltp);
    let before = totals(&db);
    let report = driver::run_on(&db, &config, Some(&scheduler), &|_| {}).unwrap();
    assert!(report.timed_out() > 0, "seed {seed}: {report}");
    let committed = |name: &str| {
        report
            .kinds
            .iter()
            .find(|k| k.kind.name() == name)
            .map_or(0, |k| k.committed)
    };
    assert_eq!(committed("new_order"), 0, "seed {seed}: {report}");
    assert!(committed("order_status") > 0, "seed {seed}: {report}");
    let stats = &scheduler.class_stats()[oltp.index()];
    assert!(stats.memory_peak > 0, "seed {seed}: {stats:?}");
    assert_eq!(stats.memory_used, 0, "every account returned its charge");
    let violations = check_consistency(&db);
    assert!(violations.is_empty(), "seed {seed}: {violations:?}");
    check_audit(&before, &totals(&db), &report.audit, seed);
}
