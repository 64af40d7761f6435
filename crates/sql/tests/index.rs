//! CREATE INDEX / DROP INDEX and index scans over main + delta: a query
//! answers the same with and without an index (on a table with inserts,
//! updates and deletes after its main, then after a merge), EXPLAIN shows
//! when the index scan is taken (and when not), and the DDL's errors carry
//! the right SQLSTATE kinds.

mod common;

use common::{autocommit, db, exec, scheduler};
use maestro_execution::{Executor, Granularity};
use maestro_sql::store::MergeScope;
use maestro_sql::{ErrorKind, Output, Store};

fn executor() -> Executor {
    // 64-row tasks: the small tables split into several tasks per operator.
    Executor::new(scheduler(), Granularity::Static).with_min_rows_per_task(64)
}

/// What `sql` outputs on `store`'s current snapshot: its rows as text,
/// sorted, or the plan of an EXPLAIN.
fn run(store: &Store, sql: &str) -> Vec<String> {
    let mut t = store.begin().unwrap();
    let view = store.view(&mut t);
    let out =
        maestro_sql::execute(&executor(), &view, sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    t.abort();
    match out {
        Output::Rows(r) => {
            let mut rows: Vec<String> = r.rows.iter().map(|row| format!("{row:?}")).collect();
            rows.sort();
            rows
        }
        Output::Explain(text) => text.lines().map(str::to_string).collect(),
    }
}

fn explain(store: &Store, sql: &str) -> String {
    run(store, &format!("explain {sql}")).join("\n")
}

fn fails(store: &Store, sql: &str) -> ErrorKind {
    let mut t = store.begin().unwrap();
    let e = exec(store, &mut t, sql).expect_err(sql);
    t.abort();
    e.kind
}

/// Runs `sql` on both twin tables `t` (indexed) and `u` (not).
fn both(store: &Store, sql: &str) {
    autocommit(store, &sql.replace("{t}", "t"));
    autocommit(store, &sql.replace("{t}", "u"));
}

const ROWS: i64 = 3000;

/// Twin tables of `ROWS` rows in a main, `t` with an index on each column.
fn twins() -> Store {
    let store = Store::new();
    both(
        &store,
        "create table {t} (k bigint, g int, d date, s varchar(20), v decimal(10,2))",
    );
    let values: Vec<String> = (0..ROWS)
        .map(|k| {
            format!(
                "({k}, {}, date '2020-01-01' + interval '{}' day, 'name{}', {}.50)",
                k % 600,
                k % 900,
                k % 700,
                k * 3
            )
        })
        .collect();
    both(
        &store,
        &format!("insert into {{t}} values {}", values.join(", ")),
    );
    store.merge_deltas(MergeScope::All).unwrap();
    for c in ["k", "g", "d", "s", "v"] {
        autocommit(&store, &format!("create index t_{c} on t ({c})"));
    }
    store
}

/// Inserts, updates and deletes after the main: the delta holds appended
/// rows, deletions of main rows and of appended rows.
fn write_delta(store: &Store) {
    let values: Vec<String> = (ROWS..ROWS + 40)
        .map(|k| {
            let (g, day, v) = (k % 600, k % 900, k * 3);
            format!("({k}, {g}, date '2020-01-01' + interval '{day}' day, 'name5', {v}.50)")
        })
        .collect();
    both(
        store,
        &format!("insert into {{t}} values {}", values.join(", ")),
    );
    both(store, "update {t} set g = 7, v = v + 1 where k % 397 = 0");
    both(store, "delete from {t} where k % 89 = 0");
    both(store, "delete from {t} where k = 3010");
    both(
        store,
        "update {t} set s = 'name3' where k between 1000 and 1004",
    );
}

/// Selective filters, one per operator and type: each must take the index.
const SELECTIVE: &[&str] = &[
    "k = 42",
    "k = 3020",
    "k = 89",
    "k = 99999",
    "k < 15",
    "k <= 15",
    "k > 3030",
    "k >= 3035",
    "k > 2990 and k <= 3003",
    "k between 100 and 110",
    "k in (1, 5, 89, 3021, 99999, 5)",
    "20 > k",
    "g = 7",
    "g = 7 and v > 100",
    "g in (3, 4) and s <> 'name3'",
    "d = date '2020-01-05'",
    // Day 304: rows 304, 1204, 2104 in the main, 3004 in the delta.
    "d = date '2020-10-31'",
    "d between date '2020-10-30' and date '2020-11-01'",
    "s = 'name3'",
    "s = 'name3' and k > 100",
    "s in ('name1', 'nobody')",
    "v = 300.50",
    "v = 291.5",
    "v between 10 and 20",
    "v < 0",
];

/// Unselective filters: each must scan.
const UNSELECTIVE: &[&str] = &["k > 10", "g < 400", "s > 'name1'", "k <> 5", "k % 600 = 7"];

fn check_answers(store: &Store, when: &str) {
    for f in SELECTIVE.iter().chain(UNSELECTIVE) {
        let q = |t: &str| format!("select k, g, d, s, v from {t} where {f}");
        assert_eq!(run(store, &q("t")), run(store, &q("u")), "{when}: {f}");
        let count = |t: &str| format!("select count(*), sum(v) from {t} where {f}");
        assert_eq!(
            run(store, &count("t")),
            run(store, &count("u")),
            "{when}: {f}"
        );
    }
    for f in SELECTIVE {
        let plan = explain(store, &format!("select k from t where {f}"));
        assert!(
            plan.contains("Index Scan t using t_"),
            "{when}: {f}:\n{plan}"
        );
        let plain = explain(store, &format!("select k from u where {f}"));
        assert!(!plain.contains("Index Scan"), "{when}: {f}:\n{plain}");
    }
    for f in UNSELECTIVE {
        let plan = explain(store, &format!("select k from t where {f}"));
        assert!(!plan.contains("Index Scan"), "{when}: {f}:\n{plan}");
    }
}

#[test]
fn answers_with_and_without_the_index_are_equal_over_main_and_delta() {
    let store = twins();
    check_answers(&store, "main only");
    write_delta(&store);
    check_answers(&store, "main + delta");
    store.merge_deltas(MergeScope::All).unwrap();
    check_answers(&store, "after the merge");
    write_delta(&store);
    check_answers(&store, "main + delta again");
}

#[test]
fn index_scans_feed_joins_aggregates_and_dml() {
    let store = twins();
    write_delta(&store);
    // `{t}`: the indexed table, or its twin without indexes.
    for sql in [
        "select a.k, b.v from {t} a join u b on a.k = b.g where a.k in (3, 7, 3020)",
        "select a.g, count(*) from {t} a join u b on a.g = b.g where a.g = 7 group by a.g",
        "select count(*) from u where u.k in (select k from {t} where g = 7)",
        "select count(*) from u where not exists (select * from {t} x where x.k = u.k and x.g = 7)",
        "select g, sum(v) from {t} where k between 100 and 120 group by g",
        "select k from {t} where k < 25 order by k desc limit 3",
    ] {
        let (with, without) = (sql.replace("{t}", "t"), sql.replace("{t}", "u"));
        assert_eq!(run(&store, &with), run(&store, &without), "{sql}");
        assert!(explain(&store, &with).contains("Index Scan"), "{sql}");
    }
    // UPDATE and DELETE select their rows through the index scan too.
    both(&store, "update {t} set v = 1 where k = 50");
    both(&store, "delete from {t} where g = 8");
    let q = |t: &str| format!("select k, g, v from {t} where k < 30 or g = 8");
    assert_eq!(run(&store, &q("t")), run(&store, &q("u")));
}

#[test]
fn explain_analyze_counts_the_index_scans_rows() {
    let store = twins();
    write_delta(&store);
    let plan = run(&store, "explain analyze select k from t where g = 7").join("\n");
    let line = plan
        .lines()
        .find(|l| l.contains("Index Scan t using t_g (t.g = 7)"))
        .unwrap_or_else(|| panic!("{plan}"));
    let rows = run(&store, "select k from u where g = 7").len();
    assert!(
        line.contains(&format!("actual rows={rows} ")),
        "{rows}: {line}"
    );
}

#[test]
fn parameters_are_literals_to_the_index_scan() {
    use maestro_sql::ParamValue;
    let store = twins();
    let mut t = store.begin().unwrap();
    let view = store.view(&mut t);
    let sql = "select k from t where k = $1";
    let (plan, _) = maestro_sql::plan_with(&view, sql, &[ParamValue::Int(42)]).unwrap();
    assert!(
        plan.explain().contains("Index Scan t using t_k"),
        "{}",
        plan.explain()
    );
    t.abort();
}

#[test]
fn merges_build_the_declared_indexes_eagerly() {
    let store = twins();
    write_delta(&store);
    store.merge_deltas(MergeScope::All).unwrap();
    let mut t = store.begin().unwrap();
    let view = store.view(&mut t);
    let (_, e) = view.entry("t").unwrap();
    for c in 0..5 {
        assert!(e.data.has_sorted_index(c), "column {c} of t");
    }
    let (_, u) = view.entry("u").unwrap();
    assert!(!u.data.has_sorted_index(0), "u declares no index");
    t.abort();
}

#[test]
fn dictionary_columns_are_indexed_by_code() {
    // TPC-H's part at SF 0.01: p_type is a dictionary column, 150 values
    // over 2000 rows. Two stores, one with the index.
    let (indexed, plain) = (Store::new(), Store::new());
    for s in [&indexed, &plain] {
        s.put_tpch(db()).unwrap();
    }
    autocommit(&indexed, "create index part_type on part (p_type)");
    for s in [&indexed, &plain] {
        // Known strings go to the delta (appended rows, one deletion).
        autocommit(
            s,
            "insert into part select p_partkey + 100000, p_name, p_mfgr, p_brand, p_type, \
             p_size, p_container, p_retailprice, p_comment from part \
             where p_type in ('ECONOMY POLISHED TIN', 'SMALL BURNISHED BRASS')",
        );
        autocommit(s, "delete from part where p_partkey = 1");
    }
    for f in [
        "p_type = 'ECONOMY POLISHED TIN'",
        "p_type in ('PROMO BRUSHED COPPER', 'none')",
        "p_type > 'SMALL BURNISHED' and p_type < 'SMALL BURNISHED C'",
        "p_type = 'no such type'",
    ] {
        let sql = format!("select p_partkey, p_type, p_size from part where {f}");
        assert_eq!(run(&indexed, &sql), run(&plain, &sql), "{f}");
        let plan = explain(&indexed, &sql);
        assert!(
            plan.contains("Index Scan part using part_type"),
            "{f}:\n{plan}"
        );
    }
}

#[test]
fn ddl_is_checked_and_transactional() {
    let store = twins();
    use ErrorKind::*;
    // g repeats (k % 600): no key can be made of it.
    assert_eq!(
        fails(&store, "create unique index x on t (g)"),
        UniqueViolation
    );
    assert_eq!(fails(&store, "create index x on t (k, g)"), Unsupported);
    assert_eq!(fails(&store, "create index x on t ((k + 1))"), Unsupported);
    assert_eq!(
        fails(&store, "create index x on t using hash (k)"),
        Unsupported
    );
    assert_eq!(
        fails(&store, "create index x on t (k) where k > 1"),
        Unsupported
    );
    assert_eq!(fails(&store, "create index x on nope (k)"), UnknownTable);
    assert_eq!(fails(&store, "create index x on t (nope)"), UnknownColumn);
    assert_eq!(fails(&store, "create index t_k on u (k)"), DuplicateTable);
    assert_eq!(fails(&store, "create index u on t (k)"), DuplicateTable);
    assert_eq!(fails(&store, "create table t_k (x int)"), DuplicateTable);
    assert_eq!(fails(&store, "drop index nope"), UndefinedObject);
    autocommit(&store, "create index if not exists t_k on t (g)");
    autocommit(&store, "drop index if exists nope");
    // Unnamed: PostgreSQL's name, then a free one.
    autocommit(&store, "create index on u (k)");
    autocommit(&store, "create index on u (k)");
    assert!(explain(&store, "select * from u where k = 1").contains("using u_k_idx "));
    autocommit(&store, "drop index u_k_idx");
    assert!(explain(&store, "select * from u where k = 1").contains("using u_k_idx1 "));
    // A rolled-back CREATE INDEX leaves nothing; a DROP takes effect.
    let mut txn = store.begin().unwrap();
    exec(&store, &mut txn, "drop index u_k_idx1").unwrap();
    exec(&store, &mut txn, "create index later on u (g)").unwrap();
    txn.abort();
    assert!(explain(&store, "select * from u where k = 1").contains("using u_k_idx1 "));
    assert!(!explain(&store, "select * from u where g = 1").contains("Index Scan"));
    autocommit(&store, "drop index u_k_idx1");
    assert!(!explain(&store, "select * from u where k = 1").contains("Index Scan"));
    // DROP TABLE drops its indexes: their names are free again.
    autocommit(&store, "drop table t");
    autocommit(&store, "create index t_k on u (k)");
}

/// An index on a DOUBLE PRECISION column orders its stored ordered bits;
/// an index scan encodes the constants (a zero is -0 and +0), so it answers
/// as the plain scan does — on the main, then with a delta.
#[test]
fn indexes_on_doubles_answer_as_scans_do() {
    let store = Store::new();
    both(
        &store,
        "create table {t} (k bigint not null, x double precision not null, b boolean not null)",
    );
    let value = |k: i64| match k % 500 {
        0 => "'-0'".to_string(),
        1 => "0".to_string(),
        2 => "'-Infinity'".to_string(),
        3 => "'NaN'".to_string(),
        r => format!("{}e-1", r - 250),
    };
    let values: Vec<String> = (0..ROWS)
        .map(|k| format!("({k}, {}, {})", value(k), k % 2 == 0))
        .collect();
    both(
        &store,
        &format!("insert into {{t}} values {}", values.join(", ")),
    );
    store.merge_deltas(MergeScope::All).unwrap();
    autocommit(&store, "create index t_x on t (x)");
    autocommit(&store, "create index t_b on t (b)");
    assert_eq!(
        fails(&store, "create unique index t_xu on t (x)"),
        ErrorKind::Unsupported
    );
    let filters = [
        "x = 0",
        "x = -0.0",
        "x = 12.5",
        "x = -24.9",
        "x < -24.8",
        "x <= -24.8",
        "x > 24.8",
        "x >= 24.8",
        "x between -0.1 and 0.1",
        "x > 0 and x < 0.2",
        "x >= 0 and x <= 0",
        "x < -1e308",
        "x = cast('NaN' as double precision)",
    ];
    for when in ["main", "main + delta"] {
        if when == "main + delta" {
            both(
                &store,
                "insert into {t} values (9001, 0, true), (9002, 24.9, false)",
            );
            both(&store, "delete from {t} where k = 501");
        }
        for f in filters {
            let with = format!("select k from t where {f}");
            let without = format!("select k from u where {f}");
            assert_eq!(run(&store, &with), run(&store, &without), "{when}: {f}");
        }
        let plan = explain(&store, "select k from t where x = 12.5");
        assert!(plan.contains("Index Scan t using t_x"), "{when}:\n{plan}");
    }
}

/// `(covered, appended)` of table `table`'s delta index on column `k` in
/// the current snapshot (`None`: no delta index there).
fn delta_index_of(store: &Store, table: &str) -> Option<(usize, usize)> {
    use maestro_sql::Catalog;
    let mut t = store.begin().unwrap();
    let view = store.view(&mut t);
    let appended = view.delta(table).map(|d| d.appended().num_rows());
    let covered = view.delta_index(table, 0).map(|ix| ix.covered());
    t.abort();
    Some((covered?, appended?))
}

#[test]
fn writes_extend_the_delta_index_and_merges_start_it_again() {
    let store = twins();
    assert_eq!(delta_index_of(&store, "t"), None, "no delta yet");
    write_delta(&store);
    let (covered, appended) = delta_index_of(&store, "t").expect("a delta index on k");
    assert_eq!(covered, appended, "every appended row indexed");
    assert!(appended >= 40, "{appended}");
    assert_eq!(delta_index_of(&store, "u"), None, "u declares no index");
    // A merge folds the delta: no delta, no delta index; the next write
    // indexes the new delta from its start.
    store.merge_deltas(MergeScope::All).unwrap();
    assert_eq!(delta_index_of(&store, "t"), None);
    both(
        &store,
        "insert into {t} values (5000, 1, date '2020-01-01', 'name1', 1.50)",
    );
    assert_eq!(delta_index_of(&store, "t"), Some((1, 1)));
    check_answers(&store, "after a merge and one write");
}
