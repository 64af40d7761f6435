//! What the answer tests share: one scheduler and one SF 0.01 database per test
//! binary, and running one committed parameter set under one granularity
//! policy against DuckDB's answer.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use maestro_execution::{Executor, Granularity};
use maestro_scheduler::{Scheduler, SchedulerConfig};
use maestro_tpch::Database;
use maestro_tpch::queries::answers::{ANSWERS_SCALE_FACTOR, AnswerSet};
use maestro_tpch::queries::{check, run_profiled};

pub fn scheduler() -> Arc<Scheduler> {
    static S: OnceLock<Arc<Scheduler>> = OnceLock::new();
    S.get_or_init(|| {
        Arc::new(Scheduler::new(SchedulerConfig::single_hints()).expect("scheduler starts"))
    })
    .clone()
}

pub fn db() -> &'static Database {
    static DB: OnceLock<Database> = OnceLock::new();
    DB.get_or_init(|| {
        maestro_tpch::load(&scheduler(), ANSWERS_SCALE_FACTOR, &|_| {}).expect("SF 0.01 loads")
    })
}

/// Runs `set` under `policy` (with 1024-row tasks, so SF 0.01 splits as SF 1
/// would) and compares with DuckDB's answer in `dir`; the error says which
/// query, set, parameters and policy differ, and how.
#[allow(dead_code)] // not every test binary checks the loaded tables
pub fn check_set(set: &AnswerSet, policy: &str, dir: &Path) -> Result<(), String> {
    check_set_on(db(), set, policy, dir)
}

/// [`check_set`] on the tables of `db` (a refreshed snapshot, say).
#[allow(dead_code)] // not every test binary checks other tables
pub fn check_set_on(
    db: &Database,
    set: &AnswerSet,
    policy: &str,
    dir: &Path,
) -> Result<(), String> {
    let q = set.query;
    let params = set
        .query_params(ANSWERS_SCALE_FACTOR)
        .map_err(|e| format!("Q{q} {}: {e}", set.set))?;
    let expected = set.answer(dir).expect("answer reads");
    let exec = Executor::new(scheduler(), policy.parse::<Granularity>().unwrap())
        .with_min_rows_per_task(1024);
    match run_profiled(&exec, db, &params) {
        Ok((result, _)) => check::compare(&result, &expected)
            .map_err(|m| format!("Q{q} {} ({params}) under {policy}: {m}", set.set)),
        Err(e) => Err(format!("Q{q} {} under {policy}: error {e}", set.set)),
    }
}
