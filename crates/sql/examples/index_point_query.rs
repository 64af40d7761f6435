//! A point query on a table of `--rows` rows (default 1 M) with and without
//! an index on the key (issue 16: indexes over main + delta): twin tables,
//! `t` with `CREATE INDEX t_k ON t (k)`, `u` without; each query runs once
//! untimed, then `--reps` times per table, alternating; the median and the
//! range per variant, over the main alone and again with a delta of
//! `--delta-rows` appended rows and as many deletions.
//!
//!     cargo run --release -p maestro-sql --example index_point_query -- [--rows 1000000] [--reps 21] [--delta-rows 1000]
//!
//! Prints one JSON object (milliseconds). A rough look, not a benchmark:
//! nothing here quiets the machine.

use std::sync::Arc;
use std::time::Instant;

use maestro_execution::{Executor, Granularity};
use maestro_scheduler::{Scheduler, SchedulerConfig};
use maestro_sql::store::MergeScope;
use maestro_sql::{LogicalPlan, Output, Store};
use maestro_storage::column::{Column, Table};
use maestro_tpch::queries::QueryResult;

#[path = "common/args.rs"]
mod args;
use args::arg;

fn write(store: &Store, exec: &Executor, sql: &str) {
    let ctx = exec.context("index_point_query");
    let run = |c: &dyn maestro_sql::Catalog, p: &LogicalPlan| -> Result<QueryResult, _> {
        exec.run_plan(|| maestro_sql::lower::run(&ctx, c, p))
    };
    let stmt = maestro_sql::parse(sql).expect("parses");
    let mut t = store.begin().expect("begins");
    store
        .execute(&mut t, &stmt, &[], &run)
        .expect("a write")
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    store.commit(t).expect("commits");
}

/// The query's rows, and its time in milliseconds.
fn query(store: &Store, exec: &Executor, sql: &str) -> (Vec<String>, f64) {
    let mut t = store.begin().expect("begins");
    let view = store.view(&mut t);
    let start = Instant::now();
    let out = maestro_sql::execute(exec, &view, sql).expect("runs");
    let ms = start.elapsed().as_secs_f64() * 1e3;
    t.abort();
    match out {
        Output::Rows(r) => (r.rows.iter().map(|row| format!("{row:?}")).collect(), ms),
        Output::Explain(_) => unreachable!("a query"),
    }
}

fn median_range(mut v: Vec<f64>) -> String {
    v.sort_by(f64::total_cmp);
    format!(
        "{{\"median_ms\": {:.4}, \"min_ms\": {:.4}, \"max_ms\": {:.4}}}",
        v[v.len() / 2],
        v[0],
        v[v.len() - 1]
    )
}

/// Both tables' timings of `sql` (`{t}` is the table), answers checked equal.
fn compare(store: &Store, exec: &Executor, sql: &str, reps: usize) -> String {
    let (with, without) = (sql.replace("{t}", "t"), sql.replace("{t}", "u"));
    let (a, _) = query(store, exec, &with);
    let (b, _) = query(store, exec, &without);
    assert_eq!(a, b, "{sql}: answers differ");
    let (mut ti, mut tu) = (Vec::new(), Vec::new());
    for r in 0..reps {
        // Alternating order: neither variant always runs warm after the other.
        if r % 2 == 0 {
            ti.push(query(store, exec, &with).1);
            tu.push(query(store, exec, &without).1);
        } else {
            tu.push(query(store, exec, &without).1);
            ti.push(query(store, exec, &with).1);
        }
    }
    format!(
        "{{\"sql\": \"{sql}\", \"rows\": {}, \"index\": {}, \"scan\": {}}}",
        a.len(),
        median_range(ti),
        median_range(tu)
    )
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rows: i64 = arg(&args, "--rows", "1000000").parse().expect("--rows N");
    let reps: usize = arg(&args, "--reps", "21").parse().expect("--reps N");
    let delta: i64 = arg(&args, "--delta-rows", "1000")
        .parse()
        .expect("--delta-rows N");
    let sched = Arc::new(Scheduler::new(SchedulerConfig::single_hints()).expect("scheduler"));
    let exec = Executor::new(sched, Granularity::Static);
    let store = Store::new();
    // Keys in a shuffled order (a multiplicative permutation of 0..rows),
    // so the index's positions are not the keys themselves.
    let keys: Vec<i64> = (0..rows).map(|i| (i * 7919) % rows).collect();
    let tables = ["t", "u"]
        .into_iter()
        .map(|name| {
            let cols = [
                ("k", Column::Int64(keys.clone())),
                ("v", Column::Int64(keys.iter().map(|k| k % 1000).collect())),
            ];
            (
                Arc::new(Table::new(name, cols).expect("a table")),
                Vec::new(),
            )
        })
        .collect();
    let mut txn = store.begin().expect("begins");
    store.put_tables(&mut txn, tables).expect("puts");
    store.commit(txn).expect("commits");
    let start = Instant::now();
    write(&store, &exec, "create index t_k on t (k)");
    let build_ms = start.elapsed().as_secs_f64() * 1e3;
    let point = "select k, v from {t} where k = 424242";
    let range = "select count(*) from {t} where k between 1000 and 1999";
    let main = [
        compare(&store, &exec, point, reps),
        compare(&store, &exec, range, reps),
    ];
    for t in ["t", "u"] {
        let values: Vec<String> = (rows..rows + delta).map(|k| format!("({k}, 1)")).collect();
        write(
            &store,
            &exec,
            &format!("insert into {t} values {}", values.join(", ")),
        );
        write(&store, &exec, &format!("delete from {t} where k < {delta}"));
    }
    let with_delta = [
        compare(&store, &exec, point, reps),
        compare(&store, &exec, range, reps),
    ];
    store.merge_deltas(MergeScope::All).expect("merges");
    println!(
        "{{\"rows\": {rows}, \"reps\": {reps}, \"delta_rows\": {delta}, \
         \"create_index_ms\": {build_ms:.1}, \"main\": [{}], \"main_plus_delta\": [{}]}}",
        main.join(", "),
        with_delta.join(", ")
    );
}
