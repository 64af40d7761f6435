//! Paths of the lowering that read columns in a form of their own, each
//! checked for its answer and for being taken (the operator it runs shows
//! in the statement's profile): ORDER BY over row ids (a join's or a
//! filter's output) gathers its sort keys into contiguous values first
//! (`sql_sort_key`), still ordering strings by their text, numbers by value,
//! in the directions written; an exact value compared with a double (an
//! average from a one-row subquery) projects the exact side once
//! (`sql_compare`).

mod common;

use common::{db, scheduler};
use maestro_execution::{Executor, Granularity};
use maestro_sql::{Output, TpchCatalog};
use maestro_tpch::queries::{QueryResult, Value};

/// `sql`'s rows and whether a sort key was gathered.
fn run(sql: &str) -> (QueryResult, bool) {
    run_op(sql, "sql_sort_key")
}

/// `sql`'s rows and whether operator `op` ran.
fn run_op(sql: &str, op: &str) -> (QueryResult, bool) {
    let exec = Executor::new(scheduler(), Granularity::Static).with_min_rows_per_task(1024);
    let (out, profile) = maestro_sql::execute_profiled(&exec, &TpchCatalog::new(db()), sql)
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    let Output::Rows(rows) = out else {
        panic!("{sql}: expected rows")
    };
    let ran = profile.is_some_and(|p| p.ops.iter().any(|o| o.op == op));
    (rows, ran)
}

fn text(v: &Value) -> &str {
    match v {
        Value::Str(s) => s,
        v => panic!("expected a string, got {v:?}"),
    }
}

fn int(v: &Value) -> i64 {
    match v {
        Value::Int(n) => *n,
        v => panic!("expected an integer, got {v:?}"),
    }
}

#[test]
fn sort_keys_read_through_row_ids_are_gathered_and_order_as_their_values() {
    // Dictionary strings (brand, type), an integer and a join's row ids.
    let (r, gathered) = run("select p_brand, p_type, p_size, ps_suppkey \
         from part, partsupp where p_partkey = ps_partkey and p_size < 10 \
         order by p_brand desc, p_type, p_size desc, ps_suppkey");
    assert!(gathered, "no sort key was gathered");
    assert!(r.rows.len() > 1000, "{} rows", r.rows.len());
    for w in r.rows.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        let key = |x: &Vec<Value>| {
            (
                std::cmp::Reverse(text(&x[0]).to_string()),
                text(&x[1]).to_string(),
                std::cmp::Reverse(int(&x[2])),
                int(&x[3]),
            )
        };
        assert!(key(a) <= key(b), "{a:?} sorts before {b:?}");
    }
    // The same rows as without ORDER BY.
    let (unsorted, _) = run("select p_brand, p_type, p_size, ps_suppkey \
         from part, partsupp where p_partkey = ps_partkey and p_size < 10");
    let mut x: Vec<String> = r.rows.iter().map(|row| format!("{row:?}")).collect();
    let mut y: Vec<String> = unsorted.rows.iter().map(|row| format!("{row:?}")).collect();
    x.sort();
    y.sort();
    assert_eq!(x, y);
}

#[test]
fn keys_without_row_ids_and_top_k_are_not_gathered() {
    // A whole table's column has no row ids to read through.
    let (r, gathered) = run("select n_name from nation order by n_name desc");
    assert!(!gathered);
    assert_eq!(text(&r.rows[0][0]), "VIETNAM");
    // A top-k compares only a few candidates' secondary keys.
    let (r, gathered) = run(
        "select s_name, s_acctbal from supplier where s_acctbal > 0 \
         order by s_acctbal desc, s_name limit 5",
    );
    assert!(!gathered);
    assert_eq!(r.rows.len(), 5);
}

#[test]
fn an_exact_column_compared_with_an_average_projects_the_column_once() {
    let (r, projected) = run_op(
        "select count(*) from customer where c_acctbal > \
         (select avg(c_acctbal) from customer where c_acctbal > 0.00)",
        "sql_compare",
    );
    assert!(projected, "compared row by row");
    // The same count from the balances themselves.
    let (all, _) = run_op("select c_acctbal from customer", "");
    let cents: Vec<i128> = all
        .rows
        .iter()
        .map(|row| match row[0] {
            Value::Decimal { value, scale: 2 } => value,
            ref v => panic!("{v:?}"),
        })
        .collect();
    let positive: Vec<i128> = cents.iter().copied().filter(|&c| c > 0).collect();
    let avg = positive.iter().sum::<i128>() as f64 / positive.len() as f64 / 100.0;
    let above = cents.iter().filter(|&&c| c as f64 / 100.0 > avg).count();
    assert_eq!(r.rows[0][0], Value::Int(above as i64));
    // The flipped comparison keeps the others.
    let (r, projected) = run_op(
        "select count(*) from customer where \
         (select avg(c_acctbal) from customer where c_acctbal > 0.00) >= c_acctbal",
        "sql_compare",
    );
    assert!(projected);
    assert_eq!(r.rows[0][0], Value::Int((cents.len() - above) as i64));
}
