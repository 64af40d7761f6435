//! TPC-H Q1 and Q6 at SF 0.01 with the operators, under every granularity
//! policy, against plain single-threaded loops over the same columns.

mod common;

use std::sync::{Arc, OnceLock};

use common::plans::{q1, q1_reference, q6, q6_reference};
use maestro_execution::{Executor, Granularity};
use maestro_scheduler::{Scheduler, SchedulerConfig};
use maestro_tpch::Database;

fn scheduler() -> Arc<Scheduler> {
    static S: OnceLock<Arc<Scheduler>> = OnceLock::new();
    S.get_or_init(|| {
        Arc::new(Scheduler::new(SchedulerConfig::single_hints()).expect("scheduler starts"))
    })
    .clone()
}

fn db() -> &'static Database {
    static DB: OnceLock<Database> = OnceLock::new();
    DB.get_or_init(|| maestro_tpch::load(&scheduler(), 0.01, &|_| {}).expect("SF 0.01 loads"))
}

const POLICIES: [&str; 5] = ["fixed:1", "fixed:4", "static", "hint", "adaptive"];

#[test]
fn q1_matches_a_plain_loop_under_every_policy() {
    let li = &db().lineitem;
    let expected = q1_reference(li);
    assert_eq!(expected.len(), 4, "A/F, N/F, N/O, R/F");
    for policy in POLICIES {
        // Small tasks so SF 0.01 (60k rows) splits as SF 1 would.
        let exec = Executor::new(scheduler(), policy.parse::<Granularity>().unwrap())
            .with_min_rows_per_task(2048);
        for _ in 0..3 {
            let ctx = exec.context("Q1");
            assert_eq!(q1(&ctx, li).unwrap(), expected, "{policy}");
            let profile = ctx.finish();
            assert!(profile.op("q1_agg").unwrap().tasks >= 1);
        }
    }
}

#[test]
fn q6_matches_a_plain_loop_under_every_policy() {
    let li = &db().lineitem;
    let expected = q6_reference(li);
    assert!(expected > 0);
    for policy in POLICIES {
        let exec = Executor::new(scheduler(), policy.parse::<Granularity>().unwrap())
            .with_min_rows_per_task(2048);
        for _ in 0..3 {
            let ctx = exec.context("Q6");
            assert_eq!(q6(&ctx, li).unwrap(), expected, "{policy}");
            let profile = ctx.finish();
            if let Ok(Granularity::Fixed(n)) = policy.parse::<Granularity>() {
                assert_eq!(profile.tasks, n as u64, "{policy}: {}", profile.summary());
            }
        }
    }
}
