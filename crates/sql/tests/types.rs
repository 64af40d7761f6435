//! Stored SMALLINT, BOOLEAN, REAL and DOUBLE PRECISION columns: values in
//! (literals, casts, text), checked against the type (22003, 22P02, 42804),
//! read back by scans, filters, index scans, aggregates and sorts, changed
//! by UPDATE, NULL where written so, and kept across a restart.

mod common;

use common::autocommit;
use maestro_sql::{ErrorKind, Store};
use maestro_tpch::queries::Value;

fn rows(store: &Store, sql: &str) -> Vec<Vec<Value>> {
    common::rows_of(store, sql)
}

/// The first column of the query `sql`'s rows, integers.
fn ids_of(store: &Store, sql: &str) -> Vec<i64> {
    rows(store, sql)
        .into_iter()
        .map(|r| match r[0] {
            Value::Int(v) => v,
            ref other => panic!("{sql}: {other:?}"),
        })
        .collect()
}

fn fails(store: &Store, sql: &str) -> ErrorKind {
    common::write_error(store, sql).kind
}

fn b(v: bool) -> Value {
    Value::Str(v.to_string())
}

fn d(v: f64) -> Value {
    Value::Double(v)
}

fn i(v: i64) -> Value {
    Value::Int(v)
}

fn measurements() -> Store {
    let store = Store::new();
    autocommit(
        &store,
        "create table m (id integer primary key, small smallint, ok boolean not null, \
         x double precision, r real, f float(10), g float)",
    );
    autocommit(
        &store,
        "insert into m values \
         (1, -32768, true, 1.5, 0.1, 2.5, 1e3), \
         (2, 32767, false, -0.25, 1e-3, 0, 6.02e23), \
         (3, null, 'yes', null, null, null, 1e-40), \
         (4, 7, 'off', 1e308, 3.4e38, null, null)",
    );
    store
}

#[test]
fn values_of_the_new_types_are_stored_and_read_back() {
    let store = measurements();
    assert_eq!(
        rows(
            &store,
            "select id, small, ok, x, r, f, g from m order by id"
        ),
        vec![
            vec![i(1), i(-32768), b(true), d(1.5), d(0.1), d(2.5), d(1000.0)],
            vec![
                i(2),
                i(32767),
                b(false),
                d(-0.25),
                d(0.001),
                d(0.0),
                d(6.02e23)
            ],
            vec![
                i(3),
                Value::Null,
                b(true),
                Value::Null,
                Value::Null,
                Value::Null,
                d(1e-40)
            ],
            vec![
                i(4),
                i(7),
                b(false),
                d(1e308),
                d(3.4e38),
                Value::Null,
                Value::Null
            ],
        ]
    );
}

#[test]
fn filters_sorts_and_aggregates_read_the_values_not_their_encoding() {
    let store = measurements();
    let ids = |sql: &str| ids_of(&store, sql);
    assert_eq!(ids("select id from m where ok order by id"), vec![1, 3]);
    assert_eq!(ids("select id from m where not ok order by id"), vec![2, 4]);
    assert_eq!(
        ids("select id from m where ok = false order by id"),
        vec![2, 4]
    );
    assert_eq!(ids("select id from m where x > 1 order by id"), vec![1, 4]);
    assert_eq!(ids("select id from m where x < 0.0 order by id"), vec![2]);
    assert_eq!(ids("select id from m where r = 0.1 order by id"), vec![1]);
    assert_eq!(ids("select id from m where small < 0 order by id"), vec![1]);
    assert_eq!(
        ids("select id from m order by x desc nulls last, id"),
        vec![4, 1, 2, 3]
    );
    assert_eq!(ids("select id from m order by ok, id"), vec![2, 4, 1, 3]);
    assert_eq!(
        rows(
            &store,
            "select ok, count(*), sum(x) from m group by ok order by ok"
        ),
        vec![
            vec![b(false), i(2), d(1e308 - 0.25)],
            vec![b(true), i(2), d(1.5)],
        ]
    );
    assert_eq!(
        rows(
            &store,
            "select min(x), max(r), avg(small) from m where id <= 2"
        ),
        vec![vec![d(-0.25), d(0.1), d(-0.5)]]
    );
    // NULLs are counted out; a group of only NULLs is NULL.
    assert_eq!(
        rows(
            &store,
            "select id < 3, avg(x), sum(r), max(f), count(x) from m where id <> 4 \
             group by id < 3 order by 1"
        ),
        vec![
            vec![b(false), Value::Null, Value::Null, Value::Null, i(0)],
            vec![b(true), d(0.625), d(0.101), d(2.5), i(2)],
        ]
    );
    // An index scan on the key reads the other columns decoded too.
    assert_eq!(
        rows(&store, "select ok, x, r from m where id = 2"),
        vec![vec![b(false), d(-0.25), d(0.001)]]
    );
}

#[test]
fn values_that_do_not_fit_the_type_are_refused() {
    let store = measurements();
    let cases = [
        (
            "insert into m (id, ok, small) values (9, true, 32768)",
            ErrorKind::OutOfRange,
        ),
        (
            "insert into m (id, ok, small) values (9, true, -32769)",
            ErrorKind::OutOfRange,
        ),
        (
            "insert into m (id, ok, r) values (9, true, 1e39)",
            ErrorKind::OutOfRange,
        ),
        (
            "insert into m (id, ok) values (9, 'maybe')",
            ErrorKind::InvalidText,
        ),
        (
            "insert into m (id, ok, x) values (9, true, 'abc')",
            ErrorKind::InvalidText,
        ),
        (
            "insert into m (id, ok) values (9, 1)",
            ErrorKind::TypeMismatch,
        ),
        (
            "insert into m (id, ok) values (9, null)",
            ErrorKind::NotNullViolation,
        ),
        (
            "update m set small = small + 1 where id = 2",
            ErrorKind::OutOfRange,
        ),
    ];
    for (sql, kind) in cases {
        assert_eq!(fails(&store, sql), kind, "{sql}");
    }
    // Nothing of the refused statements is left.
    assert_eq!(rows(&store, "select count(*) from m"), vec![vec![i(4)]]);
}

#[test]
fn updates_change_and_null_the_new_types() {
    let store = measurements();
    autocommit(
        &store,
        "update m set ok = not ok, x = x * 2, r = null where id <= 2",
    );
    autocommit(&store, "update m set small = null, ok = 'f' where id = 4");
    autocommit(&store, "delete from m where id = 3");
    assert_eq!(
        rows(&store, "select id, small, ok, x, r from m order by id"),
        vec![
            vec![i(1), i(-32768), b(false), d(3.0), Value::Null],
            vec![i(2), i(32767), b(true), d(-0.5), Value::Null],
            vec![i(4), Value::Null, b(false), d(1e308), d(3.4e38)],
        ]
    );
}

#[test]
fn text_and_casts_become_booleans_and_doubles_as_in_postgresql() {
    let store = Store::new();
    autocommit(
        &store,
        "create table t (k integer, flag boolean, v double precision)",
    );
    autocommit(
        &store,
        "insert into t values (1, 't', 'NaN'), (2, 'FALSE', '-Infinity'), (3, ' on ', '  12.5 '), \
         (4, cast('n' as boolean), cast(3 as double precision)), (5, 1 < 2, 7 / 2.0)",
    );
    // NaN is no value equal to itself: its row is compared as text.
    let got = rows(&store, "select flag, v from t order by k");
    assert_eq!(
        format!("{:?}", got[0]),
        format!("{:?}", [b(true), d(f64::NAN)])
    );
    assert_eq!(
        got[1..],
        vec![
            vec![b(false), d(f64::NEG_INFINITY)],
            vec![b(true), d(12.5)],
            vec![b(false), d(3.0)],
            vec![b(true), d(3.5)],
        ]
    );
}

#[test]
fn keys_and_unique_indexes_on_encoded_columns_are_refused() {
    let store = Store::new();
    for sql in [
        "create table k (x double precision primary key)",
        "create table k (b boolean unique)",
        "create table k (r real, primary key (r))",
    ] {
        assert_eq!(fails(&store, sql), ErrorKind::Unsupported, "{sql}");
    }
    autocommit(&store, "create table k (s smallint primary key, b boolean)");
    // A plain index orders the encoding (index scans encode the constants:
    // tests/index.rs); a UNIQUE one would be a key.
    assert_eq!(
        fails(&store, "create unique index on k (b)"),
        ErrorKind::Unsupported
    );
    autocommit(&store, "create index on k (b)");
    autocommit(&store, "insert into k values (1, true), (2, false)");
    assert_eq!(
        rows(&store, "select b from k where s = 2"),
        vec![vec![b(false)]]
    );
}

#[test]
fn a_smallserial_stops_at_the_largest_smallint() {
    let store = Store::new();
    autocommit(&store, "create table s (id smallserial, v boolean)");
    autocommit(&store, "insert into s (v) values (true)");
    // Each doubling draws as many values as there are rows: 14 of them
    // draw up to 16384, the next would need 32768.
    for _ in 0..14 {
        autocommit(&store, "insert into s (v) select v from s");
    }
    assert_eq!(
        rows(&store, "select max(id), count(*) from s"),
        vec![vec![i(16384), i(16384)]]
    );
    assert_eq!(
        fails(&store, "insert into s (v) select v from s"),
        ErrorKind::SequenceLimit
    );
    assert_eq!(
        fails(&store, "insert into s (id) values (32768)"),
        ErrorKind::OutOfRange
    );
}

#[test]
fn the_new_types_survive_a_restart() {
    let dir = common::fresh_data_dir("types");
    let open = || common::open_durable(&dir);
    let expected = {
        let store = open();
        autocommit(
            &store,
            "create table m (id integer primary key, small smallint, ok boolean not null, \
             x double precision, r real)",
        );
        autocommit(
            &store,
            "insert into m values (1, 5, true, 0.5, 0.1), (2, null, false, null, 2.5)",
        );
        autocommit(&store, "update m set x = -1e-300 where id = 2");
        rows(&store, "select * from m order by id")
    };
    let store = open();
    assert_eq!(rows(&store, "select * from m order by id"), expected);
    assert_eq!(
        fails(
            &store,
            "insert into m (id, ok, small) values (3, true, 40000)"
        ),
        ErrorKind::OutOfRange
    );
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn joins_distinct_and_subqueries_read_booleans_and_doubles() {
    let store = measurements();
    autocommit(
        &store,
        "create table w (x double precision, ok boolean, label text)",
    );
    autocommit(
        &store,
        "insert into w values (1.5, true, 'a'), (-0.25, false, 'b'), (2.0, null, 'c')",
    );
    assert_eq!(
        rows(
            &store,
            "select m.id, w.label from m join w on m.x = w.x order by m.id"
        ),
        vec![
            vec![i(1), Value::Str("a".into())],
            vec![i(2), Value::Str("b".into())]
        ]
    );
    assert_eq!(
        rows(
            &store,
            "select m.id from m, w where m.ok = w.ok and w.label = 'b' order by 1"
        ),
        vec![vec![i(2)], vec![i(4)]]
    );
    assert_eq!(
        rows(&store, "select distinct ok from m order by ok"),
        vec![vec![b(false)], vec![b(true)]]
    );
    assert_eq!(
        rows(
            &store,
            "select count(distinct x), count(distinct ok), count(ok) from m where x is not null"
        ),
        vec![vec![i(3), i(2), i(3)]]
    );
    assert_eq!(
        rows(
            &store,
            "select id from m where x in (select x from w) order by id"
        ),
        vec![vec![i(1)], vec![i(2)]]
    );
    assert_eq!(
        rows(&store, "select label from w where ok is null"),
        vec![vec![Value::Str("c".into())]]
    );
}

#[test]
fn bool_and_bool_or_and_every_aggregate_booleans() {
    let store = measurements();
    assert_eq!(
        rows(
            &store,
            "select bool_and(ok), bool_or(ok), every(x > 0) from m"
        ),
        vec![vec![b(false), b(true), b(false)]]
    );
    assert_eq!(
        rows(
            &store,
            "select id < 3, bool_and(ok or id = 2) from m group by id < 3 order by 1"
        ),
        vec![vec![b(false), b(false)], vec![b(true), b(true)]]
    );
    assert_eq!(
        rows(&store, "select bool_or(ok) from m where id > 10"),
        vec![vec![Value::Null]]
    );
    let mut t = store.begin().unwrap();
    let e = maestro_sql::plan(&store.view(&mut t), "select bool_and(x) from m")
        .expect_err("bool_and of a double");
    assert_eq!(e.kind, ErrorKind::TypeMismatch, "{e}");
    t.abort();
}

/// PostgreSQL's order of doubles: NaN equal to NaN and above every number,
/// -0 equal to +0.
fn pg_cmp(a: f64, b: f64) -> std::cmp::Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => std::cmp::Ordering::Equal,
        (true, false) => std::cmp::Ordering::Greater,
        (false, true) => std::cmp::Ordering::Less,
        (false, false) => a.partial_cmp(&b).unwrap(),
    }
}

/// Filters on stored doubles and booleans compare the stored integers
/// (ordered bits, 0/1) with the constant's encoding; their answers must be
/// PostgreSQL's for the awkward values (±0, ±Infinity, NaN, subnormals,
/// NULL), on the delta and on the merged main, without NULLs and with.
#[test]
fn comparisons_of_stored_doubles_and_booleans_follow_postgresql() {
    let values: [(&str, f64); 11] = [
        ("'-Infinity'", f64::NEG_INFINITY),
        ("-1e308", -1e308),
        ("-2.5", -2.5),
        ("-5e-324", -5e-324),
        ("'-0'", -0.0),
        ("0", 0.0),
        ("5e-324", 5e-324),
        ("2.5", 2.5),
        ("1e308", 1e308),
        ("'Infinity'", f64::INFINITY),
        ("'NaN'", f64::NAN),
    ];
    let constants: [(&str, f64); 9] = [
        ("-2.5", -2.5),
        ("0", 0.0),
        ("0.0", 0.0),
        ("-0.0", -0.0),
        ("5e-324", 5e-324),
        ("2.5", 2.5),
        ("1e308", 1e308),
        ("cast('Infinity' as double precision)", f64::INFINITY),
        ("cast('NaN' as double precision)", f64::NAN),
    ];
    type Holds = fn(std::cmp::Ordering) -> bool;
    let ops: [(&str, Holds); 6] = [
        ("=", |o| o.is_eq()),
        ("<>", |o| o.is_ne()),
        ("<", |o| o.is_lt()),
        ("<=", |o| o.is_le()),
        (">", |o| o.is_gt()),
        (">=", |o| o.is_ge()),
    ];
    for nullable in [false, true] {
        let store = Store::new();
        let not_null = if nullable { "" } else { " not null" };
        autocommit(
            &store,
            &format!(
                "create table v (id integer primary key, x double precision{not_null}, \
                 b boolean{not_null})"
            ),
        );
        let mut rows_in: Vec<String> = values
            .iter()
            .enumerate()
            .map(|(k, (text, _))| format!("({k}, {text}, {})", k % 2 == 0))
            .collect();
        if nullable {
            rows_in.push(format!("({}, null, null)", values.len()));
        }
        autocommit(
            &store,
            &format!("insert into v values {}", rows_in.join(", ")),
        );
        for merged in [false, true] {
            if merged {
                store
                    .merge_deltas(maestro_sql::store::MergeScope::All)
                    .unwrap();
            }
            let ids = |sql: &str| ids_of(&store, sql);
            for (op, holds) in ops {
                for (text, c) in constants {
                    let sql = format!("select id from v where x {op} {text} order by id");
                    let want: Vec<i64> = (0..values.len() as i64)
                        .filter(|&k| holds(pg_cmp(values[k as usize].1, c)))
                        .collect();
                    assert_eq!(
                        ids(&sql),
                        want,
                        "{sql} (nullable {nullable}, merged {merged})"
                    );
                    // The constant first: the operator flips.
                    let sql = format!("select id from v where {text} {op} x order by id");
                    let want: Vec<i64> = (0..values.len() as i64)
                        .filter(|&k| holds(pg_cmp(c, values[k as usize].1)))
                        .collect();
                    assert_eq!(ids(&sql), want, "{sql} (nullable {nullable})");
                }
            }
            let evens: Vec<i64> = (0..values.len() as i64).step_by(2).collect();
            let odds: Vec<i64> = (1..values.len() as i64).step_by(2).collect();
            for (sql, want) in [
                ("select id from v where b order by id", &evens),
                ("select id from v where b = true order by id", &evens),
                ("select id from v where true = b order by id", &evens),
                ("select id from v where b > false order by id", &evens),
                ("select id from v where not b order by id", &odds),
                ("select id from v where b = false order by id", &odds),
                ("select id from v where b < true order by id", &odds),
                ("select id from v where b <> true order by id", &odds),
                (
                    "select id from v where b and x > 0 order by id",
                    &vec![6, 8, 10],
                ),
            ] {
                assert_eq!(
                    &ids(sql),
                    want,
                    "{sql} (nullable {nullable}, merged {merged})"
                );
            }
            // Aggregates read the stored bits: NaN is the largest, -0 the
            // smallest zero, NULLs counted out.
            assert_eq!(
                rows(
                    &store,
                    "select min(x), max(x), count(x), sum(x), avg(x) from v \
                     where x > -3 and x < 3"
                ),
                vec![vec![d(-2.5), d(2.5), i(6), d(0.0), d(0.0)]],
                "nullable {nullable}, merged {merged}"
            );
            assert_eq!(
                rows(
                    &store,
                    "select b, avg(x), sum(x), min(x) from v where x > -3 and x < 3 \
                     group by b order by b"
                ),
                vec![
                    vec![b(false), d(2.5 / 3.0), d(2.5), d(-5e-324)],
                    vec![b(true), d(-2.5 / 3.0), d(-2.5), d(-2.5)],
                ],
                "nullable {nullable}, merged {merged}"
            );
            match &rows(&store, "select max(x) from v")[0][0] {
                Value::Double(m) => assert!(m.is_nan(), "max is NaN, got {m}"),
                other => panic!("max(x): {other:?}"),
            }
        }
    }
}
