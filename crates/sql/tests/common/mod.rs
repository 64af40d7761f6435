//! What the SQL tests share: one scheduler and one SF 0.01 TPC-H database per
//! test binary, and running a statement.

#![allow(dead_code)]

use std::sync::{Arc, OnceLock};

use maestro_execution::{Executor, Granularity};
use maestro_scheduler::{Scheduler, SchedulerConfig};
use maestro_sql::{Output, SqlError, TpchCatalog};
use maestro_tpch::Database;
use maestro_tpch::queries::QueryResult;

pub const SCALE_FACTOR: f64 = 0.01;

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
        maestro_tpch::load(&scheduler(), SCALE_FACTOR, &|_| {}).expect("SF 0.01 loads")
    })
}

/// Runs `sql` under `policy` with 1024-row tasks (so SF 0.01 splits into
/// several tasks per operator).
pub fn run_with(sql: &str, policy: &str) -> Result<Output, SqlError> {
    let exec = Executor::new(scheduler(), policy.parse::<Granularity>().expect("policy"))
        .with_min_rows_per_task(1024);
    maestro_sql::execute(&exec, &TpchCatalog::new(db()), sql)
}

pub fn query(sql: &str) -> Result<QueryResult, SqlError> {
    match run_with(sql, "static")? {
        Output::Rows(r) => Ok(r),
        Output::Explain(e) => panic!("expected rows, got a plan:\n{e}"),
    }
}

pub fn explain(sql: &str) -> String {
    match run_with(sql, "static").expect("EXPLAIN runs") {
        Output::Explain(e) => e,
        Output::Rows(r) => panic!("expected a plan, got rows {r:?}"),
    }
}

/// The error of a statement that must fail.
pub fn error(sql: &str) -> SqlError {
    match run_with(sql, "static") {
        Err(e) => e,
        Ok(o) => panic!("{sql:?} should fail, got {o:?}"),
    }
}

/// Runs the write `sql` in `txn` on `store` (a query inside it runs on the
/// shared scheduler); panics if `sql` is not a write.
pub fn exec(
    store: &maestro_sql::Store,
    txn: &mut maestro_txn::Transaction,
    sql: &str,
) -> Result<maestro_sql::Written, SqlError> {
    exec_returning(store, txn, sql).map(|e| e.written)
}

/// [`exec`] of a write with RETURNING: what it did and the rows it gave.
pub fn exec_returning(
    store: &maestro_sql::Store,
    txn: &mut maestro_txn::Transaction,
    sql: &str,
) -> Result<maestro_sql::store::Executed, SqlError> {
    let e = Executor::new(scheduler(), Granularity::Static);
    let ctx = e.context("store");
    let run = |c: &dyn maestro_sql::Catalog,
               p: &maestro_sql::LogicalPlan|
     -> Result<QueryResult, SqlError> {
        e.run_plan(|| maestro_sql::lower::run(&ctx, c, p))
    };
    let stmt = maestro_sql::parse(sql)?;
    store
        .execute_returning(txn, &stmt, &[], &run)
        .expect("a write")
}

/// The rows of the query `sql` as `txn` sees `store`'s tables.
pub fn query_in(
    store: &maestro_sql::Store,
    txn: &mut maestro_txn::Transaction,
    sql: &str,
) -> QueryResult {
    let e = Executor::new(scheduler(), Granularity::Static);
    let view = store.view(txn);
    let (plan, _) = maestro_sql::plan(&view, sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    let ctx = e.context("store");
    e.run_plan(|| maestro_sql::lower::run(&ctx, &view, &plan))
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// The rows of the query `sql` in a transaction of its own (aborted).
pub fn rows_of(store: &maestro_sql::Store, sql: &str) -> Vec<Vec<maestro_tpch::queries::Value>> {
    let mut t = store.begin().unwrap();
    let r = query_in(store, &mut t, sql).rows;
    t.abort();
    r
}

/// The error of the write `sql`, which must fail, in a transaction of its
/// own (aborted).
pub fn write_error(store: &maestro_sql::Store, sql: &str) -> maestro_sql::SqlError {
    let mut t = store.begin().unwrap();
    let e = exec(store, &mut t, sql).expect_err(sql);
    t.abort();
    e
}

/// A data directory of its own for test `name` (emptied first).
pub fn fresh_data_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("maestro-sql-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// A store on data directory `dir` (synchronous durability), recovered.
pub fn open_durable(dir: &std::path::Path) -> maestro_sql::Store {
    let config = maestro_txn::DurabilityConfig::new(maestro_txn::Durability::Sync);
    maestro_sql::Store::open_data_dir(dir, config, &|_| Ok(()))
        .unwrap_or_else(|e| panic!("open {}: {e}", dir.display()))
        .0
}

/// [`exec`] in a transaction of its own, committed.
pub fn autocommit(store: &maestro_sql::Store, sql: &str) -> maestro_sql::Written {
    let mut t = store.begin().unwrap();
    let w = exec(store, &mut t, sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    store.commit(t).unwrap();
    w
}
