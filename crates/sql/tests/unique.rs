//! Declared unique columns stay unique: a write that would give two live
//! rows one key value is refused (23505), because plans build on the key
//! (GROUP BY reads a grouped column back from one row per key) and would
//! otherwise give wrong answers.

mod common;

use common::{autocommit, exec};
use maestro_execution::{Executor, Granularity};
use maestro_sql::{ErrorKind, Output, Store};

fn rows(store: &Store, sql: &str) -> Vec<String> {
    let mut t = store.begin().unwrap();
    let view = store.view(&mut t);
    let exec = Executor::new(common::scheduler(), Granularity::Static);
    let out = maestro_sql::execute(&exec, &view, sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    t.abort();
    let Output::Rows(r) = out else {
        panic!("{sql}: expected rows")
    };
    let mut v: Vec<String> = r.rows.iter().map(|row| format!("{row:?}")).collect();
    v.sort();
    v
}

/// The write's error kind (it runs in a transaction that is dropped).
fn refused(store: &Store, sql: &str) -> maestro_sql::SqlError {
    let mut t = store.begin().unwrap();
    let e = exec(store, &mut t, sql).expect_err(sql);
    t.abort();
    e
}

fn tpch_store() -> Store {
    let store = Store::new();
    store.put_tpch(common::db()).unwrap();
    store
}

const COPY_ORDER_1: &str = "insert into orders select o_orderkey, o_custkey + 1, o_orderstatus, \
     o_totalprice, o_orderdate, o_orderpriority, o_clerk, o_shippriority, o_comment \
     from orders where o_orderkey = 1";

#[test]
fn a_second_row_with_a_key_is_refused_and_grouping_by_the_key_stays_right() {
    let store = tpch_store();
    let e = refused(&store, COPY_ORDER_1);
    assert_eq!(e.kind, ErrorKind::UniqueViolation, "{e}");
    assert!(
        e.message.contains("o_orderkey") && e.message.contains("(1)"),
        "{e}"
    );
    // Nothing was written: the grouping that reads o_custkey back from the
    // key's row sees one row.
    assert_eq!(
        rows(
            &store,
            "select o_orderkey, o_custkey, count(*) from orders where o_orderkey = 1 \
             group by o_orderkey, o_custkey"
        ),
        vec!["[Int(1), Int(370), Int(1)]".to_string()]
    );
    // With the key column's statistics computed (queries compute them): a key
    // inside the main's range is still looked up, one above it is not.
    let mut t = store.begin().unwrap();
    let view = store.view(&mut t);
    let (_, orders) = view.entry("orders").unwrap();
    let key = orders.data.column_index("o_orderkey").unwrap();
    orders.data.column_stats(key);
    t.abort();
    assert_eq!(
        refused(&store, COPY_ORDER_1).kind,
        ErrorKind::UniqueViolation
    );
    let above = COPY_ORDER_1.replace("select o_orderkey,", "select o_orderkey + 100000000,");
    autocommit(&store, &above);
    assert_eq!(
        refused(&store, &above).kind,
        ErrorKind::UniqueViolation,
        "in the delta"
    );
}

#[test]
fn keys_are_checked_against_main_delta_and_the_write_itself() {
    let store = tpch_store();
    let nation = |k: i64| format!("({k}, 'PERU', 2, 'x')");
    // New keys into the delta.
    autocommit(
        &store,
        &format!("insert into nation values {}, {}", nation(30), nation(31)),
    );
    // A key of the delta, and one repeated within one write.
    for sql in [
        format!("insert into nation values {}", nation(31)),
        format!("insert into nation values {}, {}", nation(40), nation(40)),
        format!("insert into nation values {}", nation(0)),
    ] {
        assert_eq!(
            refused(&store, &sql).kind,
            ErrorKind::UniqueViolation,
            "{sql}"
        );
    }
    // An UPDATE that keeps each row's key deletes and appends the same keys.
    autocommit(
        &store,
        "update nation set n_comment = 'y' where n_nationkey >= 30",
    );
    // An UPDATE onto another row's key is refused; onto a free one it is not.
    let e = refused(
        &store,
        "update nation set n_nationkey = 5 where n_nationkey = 30",
    );
    assert_eq!(e.kind, ErrorKind::UniqueViolation, "{e}");
    autocommit(
        &store,
        "update nation set n_nationkey = 32 where n_nationkey = 30",
    );
    // A deleted row's key is free again, in the main and in the delta.
    autocommit(&store, "delete from nation where n_nationkey in (3, 31)");
    autocommit(
        &store,
        &format!("insert into nation values {}, {}", nation(3), nation(31)),
    );
    assert_eq!(
        rows(
            &store,
            "select n_nationkey, count(*) from nation group by n_nationkey having count(*) > 1"
        ),
        Vec::<String>::new()
    );
    assert_eq!(
        rows(&store, "select count(*) from nation"),
        vec!["[Int(27)]".to_string()]
    );
}

#[test]
fn a_built_index_answers_the_check_as_the_scan_does() {
    let store = tpch_store();
    autocommit(&store, "create index orders_key on orders (o_orderkey)");
    let e = refused(&store, COPY_ORDER_1);
    assert_eq!(e.kind, ErrorKind::UniqueViolation, "{e}");
    // Once order 1 is deleted its key is free: order 2's row under key 1.
    autocommit(&store, "delete from orders where o_orderkey = 1");
    autocommit(
        &store,
        "insert into orders select 1, o_custkey, o_orderstatus, o_totalprice, o_orderdate, \
         o_orderpriority, o_clerk, o_shippriority, o_comment from orders where o_orderkey = 2",
    );
    assert_eq!(
        rows(&store, "select o_custkey from orders where o_orderkey = 1"),
        rows(&store, "select o_custkey from orders where o_orderkey = 2")
    );
    let e = refused(&store, COPY_ORDER_1);
    assert_eq!(e.kind, ErrorKind::UniqueViolation, "{e}");
}

/// A table with the composite key (a, b), as `CALL maestro.load_ch` puts
/// CH's tables.
fn keyed_store() -> Store {
    use maestro_sql::store::{ColumnSpec, ColumnType, LoadedTable};
    use maestro_storage::column::{Column, Table};
    use std::sync::Arc;
    let data = Table::new(
        "t".to_string(),
        [
            ("a".to_string(), Column::Int32(vec![1, 1, 2, 2])),
            ("b".to_string(), Column::Int32(vec![1, 2, 1, 2])),
            ("c".to_string(), Column::Int64(vec![10, 20, 30, 40])),
        ],
    )
    .unwrap();
    let spec = |name: &str, ty| ColumnSpec {
        name: name.into(),
        ty,
    };
    let store = Store::new();
    store
        .put_loaded(vec![LoadedTable {
            data: Arc::new(data),
            columns: vec![
                spec("a", ColumnType::Int32),
                spec("b", ColumnType::Int32),
                spec("c", ColumnType::Int64),
            ],
            unique_columns: Vec::new(),
            keys: vec![vec!["a".into(), "b".into()]],
            nulls: Vec::new(),
        }])
        .unwrap();
    store
}

#[test]
fn a_composite_key_is_enforced_as_a_tuple() {
    let store = keyed_store();
    // (1, 1) exists; (1, 3) and (3, 1) share one column with existing rows only.
    let e = refused(&store, "insert into t values (1, 1, 99)");
    assert_eq!(e.kind, ErrorKind::UniqueViolation, "{e}");
    assert!(e.message.contains("(a, b)=(1, 1)"), "{e}");
    autocommit(&store, "insert into t values (1, 3, 50), (3, 1, 60)");
    for sql in [
        "insert into t values (1, 3, 70)",
        "insert into t values (5, 5, 1), (5, 5, 2)",
        "update t set b = 2 where a = 1 and b = 3",
    ] {
        assert_eq!(
            refused(&store, sql).kind,
            ErrorKind::UniqueViolation,
            "{sql}"
        );
    }
    autocommit(&store, "update t set c = c + 1 where a = 1");
    autocommit(&store, "delete from t where a = 2 and b = 1");
    autocommit(&store, "insert into t values (2, 1, 31)");
    // The grouping that reads c back from one row per (a, b) stays exact.
    assert_eq!(
        rows(&store, "select a, b, c, count(*) from t group by a, b, c"),
        [
            "[Int(1), Int(1), Int(11), Int(1)]",
            "[Int(1), Int(2), Int(21), Int(1)]",
            "[Int(1), Int(3), Int(51), Int(1)]",
            "[Int(2), Int(1), Int(31), Int(1)]",
            "[Int(2), Int(2), Int(40), Int(1)]",
            "[Int(3), Int(1), Int(60), Int(1)]",
        ]
        .map(String::from)
        .to_vec()
    );
}

#[test]
fn a_composite_key_is_probed_by_its_indexed_or_most_distinct_column() {
    // With and without an index on b (the probe then: b has 2 distinct
    // values, a 2 too — either way the whole tuple decides).
    for indexed in [false, true] {
        let store = keyed_store();
        if indexed {
            autocommit(&store, "create index t_b on t (b)");
        }
        // An UPDATE keeping its rows' keys is no repeat, nor one moving
        // keys onto keys the same statement leaves.
        autocommit(&store, "update t set c = c * 2 where b = 1");
        autocommit(&store, "update t set b = b + 1 where a = 2");
        for sql in [
            "update t set b = 2 where a = 1 and b = 1",
            "update t set b = b + 1 where a = 1 and b = 1",
            "insert into t values (2, 3, 0)",
            "insert into t values (1, 1, 0)",
        ] {
            assert_eq!(
                refused(&store, sql).kind,
                ErrorKind::UniqueViolation,
                "{sql} (index: {indexed})"
            );
        }
        autocommit(&store, "insert into t values (2, 1, 7)");
        assert_eq!(
            rows(&store, "select a, b, c from t"),
            [
                "[Int(1), Int(1), Int(20)]",
                "[Int(1), Int(2), Int(20)]",
                "[Int(2), Int(1), Int(7)]",
                "[Int(2), Int(2), Int(60)]",
                "[Int(2), Int(3), Int(40)]",
            ]
            .map(String::from)
            .to_vec(),
            "index: {indexed}"
        );
    }
}

#[test]
fn a_block_updating_one_row_twice_after_another_commit_keeps_its_key() {
    // The second UPDATE checks its key against the newest committed
    // version (another row changed since the snapshot), which still holds
    // the row the block's first UPDATE deleted: that row is the block's,
    // not a repeat (it was refused with 23505).
    let store = keyed_store();
    // The block's two updates of (1, 1) with another's commit between.
    let block = || {
        let mut t = store.begin().unwrap();
        let update = "update t set c = c + 1 where a = 1 and b = 1";
        exec(&store, &mut t, update).unwrap();
        autocommit(&store, "update t set c = c + 1 where a = 2 and b = 2");
        exec(&store, &mut t, update).unwrap();
        t
    };
    let mut t = block();
    let e = exec(&store, &mut t, "insert into t values (2, 1, 0)").unwrap_err();
    assert_eq!(e.kind, ErrorKind::UniqueViolation, "{e}");
    t.abort();
    let t = block();
    store.commit(t).unwrap();
    assert_eq!(
        rows(&store, "select a, b, c from t"),
        [
            "[Int(1), Int(1), Int(12)]",
            "[Int(1), Int(2), Int(20)]",
            "[Int(2), Int(1), Int(30)]",
            "[Int(2), Int(2), Int(42)]",
        ]
        .map(String::from)
        .to_vec()
    );
}

fn explain(store: &Store, sql: &str) -> String {
    let mut t = store.begin().unwrap();
    let view = store.view(&mut t);
    let (plan, _) = maestro_sql::plan(&view, sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    t.abort();
    plan.explain()
}

/// A table you create with PRIMARY KEY and UNIQUE constraints: each is
/// enforced on INSERT, UPDATE and COPY, merged or not, and a one-column
/// key is looked up through its index (PostgreSQL's name for it).
#[test]
fn keys_declared_by_create_table_are_enforced() {
    let store = Store::new();
    autocommit(
        &store,
        "create table item (id int primary key, code varchar(8) unique, \
         a int not null, b int, unique (a, b))",
    );
    autocommit(
        &store,
        "insert into item values (1, 'x1', 1, 1), (2, 'x2', 1, 2), (3, 'x3', 2, 1)",
    );
    // Enough other rows that a point lookup pays for its index once merged.
    let filler: Vec<String> = (100..1100)
        .map(|k| format!("({k}, 'f{k}', {k}, {k})"))
        .collect();
    autocommit(
        &store,
        &format!("insert into item values {}", filler.join(", ")),
    );
    let check = |store: &Store, when: &str| {
        for (sql, shown) in [
            ("insert into item values (1, 'y', 9, 9)", "(id)=(1)"),
            ("insert into item values (9, 'x2', 9, 9)", "(code)=(x2)"),
            ("insert into item values (9, 'y', 1, 2)", "(a, b)=(1, 2)"),
            (
                "insert into item values (8, 'y', 8, 8), (8, 'z', 7, 7)",
                "(id)=(8)",
            ),
            ("update item set id = 1 where id = 3", "(id)=(1)"),
            ("update item set b = 1 where id = 2", "(a, b)=(1, 1)"),
        ] {
            let e = refused(store, sql);
            assert_eq!(e.kind, ErrorKind::UniqueViolation, "{when}: {sql}: {e}");
            assert!(e.message.contains(shown), "{when}: {sql}: {e}");
        }
    };
    check(&store, "in the delta");
    store
        .merge_deltas(maestro_sql::store::MergeScope::All)
        .unwrap();
    check(&store, "merged");
    let plan = explain(&store, "select code from item where id = 2");
    assert!(plan.contains("Index Scan item using item_pkey"), "{plan}");
    let plan = explain(&store, "select id from item where code = 'x3'");
    assert!(plan.contains("using item_code_key"), "{plan}");
    // Writes that keep every key distinct pass: shifting all keys at once,
    // a key freed by the same statement, a pair that differs in one column.
    autocommit(&store, "update item set id = id + 10");
    autocommit(&store, "update item set code = 'x9' where code = 'x1'");
    autocommit(&store, "insert into item values (1, 'x1', 2, 2)");
    assert_eq!(
        rows(&store, "select id, code, a, b from item where id < 100"),
        [
            "[Int(1), Str(\"x1\"), Int(2), Int(2)]",
            "[Int(11), Str(\"x9\"), Int(1), Int(1)]",
            "[Int(12), Str(\"x2\"), Int(1), Int(2)]",
            "[Int(13), Str(\"x3\"), Int(2), Int(1)]",
        ]
        .map(String::from)
        .to_vec()
    );
    // The key's index name is taken; a second table gets a suffix.
    assert_eq!(
        refused(&store, "create table item_pkey (k int)").kind,
        ErrorKind::DuplicateTable
    );
    autocommit(&store, "create index things_k_key on item (a)");
    autocommit(&store, "create table things (k int unique)");
    // The new table's key got the next free name.
    let mut t = store.begin().unwrap();
    let view = store.view(&mut t);
    let names: Vec<String> = maestro_sql::Catalog::indexes(&view, "things")
        .into_iter()
        .map(|i| i.name)
        .collect();
    t.abort();
    assert_eq!(names, ["things_k_key1"]);
}

#[test]
fn bad_key_declarations_are_errors_and_create_nothing() {
    let store = Store::new();
    for (sql, kind) in [
        (
            "create table t (a int primary key, b int primary key)",
            ErrorKind::InvalidTableDefinition,
        ),
        (
            "create table t (a int, primary key (a, z))",
            ErrorKind::UnknownColumn,
        ),
        (
            "create table t (a int, b int, unique (a, b, a))",
            ErrorKind::DuplicateColumn,
        ),
        (
            "create table t (a int, b int, foreign key (b) references u (a))",
            ErrorKind::Unsupported,
        ),
        (
            "create table t (a int, check (a > 0))",
            ErrorKind::Unsupported,
        ),
        (
            "create table t (a int primary key, b int, constraint t_pkey unique (b))",
            ErrorKind::DuplicateTable,
        ),
    ] {
        assert_eq!(refused(&store, sql).kind, kind, "{sql}");
    }
    // Nothing was created: the name is free.
    autocommit(&store, "create table t (a int primary key)");
}

#[test]
fn a_unique_index_makes_a_key_until_it_is_dropped() {
    let store = Store::new();
    autocommit(
        &store,
        "create table t (id integer primary key, email varchar(40), n integer)",
    );
    autocommit(
        &store,
        "insert into t values (1, 'a@x', 1), (2, 'b@x', 1), (3, null, 2), (4, null, 3)",
    );
    // n repeats: no unique index on it.
    let e = refused(&store, "create unique index t_n on t (n)");
    assert_eq!(e.kind, ErrorKind::UniqueViolation, "{e}");
    assert!(
        e.message.contains("could not create unique index \"t_n\""),
        "{e}"
    );
    // NULLs repeat nothing.
    autocommit(&store, "create unique index t_email on t (email)");
    let e = refused(&store, "insert into t values (5, 'a@x', 9)");
    assert_eq!(e.kind, ErrorKind::UniqueViolation, "{e}");
    let e = refused(&store, "update t set email = 'b@x' where id = 1");
    assert_eq!(e.kind, ErrorKind::UniqueViolation, "{e}");
    autocommit(&store, "insert into t values (5, null, 9), (6, 'c@x', 9)");
    // A unique index on a key column is a plain index: dropping it keeps
    // the key.
    autocommit(&store, "create unique index t_id on t (id)");
    autocommit(&store, "drop index t_id");
    let e = refused(&store, "insert into t values (1, 'z@x', 0)");
    assert_eq!(e.kind, ErrorKind::UniqueViolation, "{e}");
    // Dropping the unique index drops its key.
    autocommit(&store, "drop index t_email");
    autocommit(&store, "insert into t values (7, 'a@x', 0)");
    assert_eq!(
        rows(&store, "select id from t where email = 'a@x'").len(),
        2
    );
    // A rolled-back CREATE UNIQUE INDEX leaves no key.
    autocommit(&store, "delete from t where id = 7");
    let mut t = store.begin().unwrap();
    exec(&store, &mut t, "create unique index t_e2 on t (email)").unwrap();
    t.abort();
    autocommit(&store, "insert into t values (8, 'a@x', 0)");
}

#[test]
fn on_conflict_do_nothing_skips_the_rows_whose_keys_are_taken() {
    use maestro_sql::Written;
    let store = Store::new();
    autocommit(
        &store,
        "create table t (id integer primary key, code varchar(8) unique, w int, d int, \
         v int, unique (w, d))",
    );
    autocommit(
        &store,
        "insert into t values (1, 'a', 1, 1, 0), (2, 'b', 1, 2, 0)",
    );
    // Any key: id 1 is taken, code 'b' too, and the statement's own second
    // (3, …) repeats its first.
    let w = autocommit(
        &store,
        "insert into t values (1, 'x', 9, 9, 1), (3, 'b', 9, 8, 1), (4, 'c', 2, 1, 1), \
         (4, 'd', 2, 2, 1) on conflict do nothing",
    );
    assert_eq!(w, Written::Insert(1));
    assert_eq!(rows(&store, "select id, code from t where v = 1").len(), 1);
    // A target names the key (its columns in any order, or its index).
    let w = autocommit(
        &store,
        "insert into t values (5, 'e', 2, 1, 2), (6, 'f', 3, 3, 2) on conflict (d, w) do nothing",
    );
    assert_eq!(w, Written::Insert(1));
    // The target's key only: another key's repeat is still 23505.
    let e = refused(
        &store,
        "insert into t values (7, 'a', 7, 7, 3) on conflict (id) do nothing",
    );
    assert_eq!(e.kind, ErrorKind::UniqueViolation, "{e}");
    let w = autocommit(
        &store,
        "insert into t values (1, 'z', 8, 8, 3) on conflict on constraint t_pkey do nothing",
    );
    assert_eq!(w, Written::Insert(0));
    let e = refused(
        &store,
        "insert into t values (8, 'h', 8, 8, 3) on conflict (v) do nothing",
    );
    assert_eq!(e.kind, ErrorKind::InvalidColumnReference, "{e}");
    // DO UPDATE needs a target (`tests/upsert.rs` runs it).
    let e = refused(
        &store,
        "insert into t values (1, 'a', 1, 1, 0) on conflict do update set v = 9",
    );
    assert_eq!(e.kind, ErrorKind::Parse, "{e}");
    // RETURNING gives the rows inserted, not the skipped ones.
    let mut t = store.begin().unwrap();
    let out = common::exec_returning(
        &store,
        &mut t,
        "insert into t values (2, 'q', 5, 5, 4), (9, 'i', 9, 9, 4) on conflict do nothing \
         returning id",
    )
    .unwrap();
    store.commit(t).unwrap();
    assert_eq!(out.written, Written::Insert(1));
    assert_eq!(format!("{:?}", out.returned.unwrap().rows), "[[Int(9)]]");
}

#[test]
fn on_conflict_do_nothing_meets_a_later_commit_and_a_second_inserter_of_a_key_waits() {
    let store = Store::new();
    autocommit(&store, "create table t (id integer primary key, v integer)");
    // Taken by a commit after the snapshot, seen at the statement.
    let mut old = store.begin().unwrap();
    common::query_in(&store, &mut old, "select count(*) from t");
    autocommit(&store, "insert into t values (10, 0)");
    let e = exec(
        &store,
        &mut old,
        "insert into t values (10, 1) on conflict do nothing",
    )
    .expect_err("a key the snapshot does not show");
    assert_eq!(e.kind, ErrorKind::SerializationFailure, "{e}");
    old.abort();
    // A key a running transaction inserted: the second inserter waits for
    // it (`store/row_locks.rs`, key locks), then meets the committed row
    // (23505 without ON CONFLICT), or goes on when the first aborted.
    let mut first = store.begin().unwrap();
    exec(
        &store,
        &mut first,
        "insert into t values (11, 1) on conflict do nothing",
    )
    .unwrap();
    let second = |sql: &'static str| {
        let store = &store;
        move || {
            let mut t = store.begin().unwrap();
            let r = exec(store, &mut t, sql).and_then(|_| store.commit(t));
            r.map_err(|e| e.kind)
        }
    };
    let waited = std::thread::scope(|s| {
        let w = s.spawn(second("insert into t values (11, 0)"));
        std::thread::sleep(std::time::Duration::from_millis(100));
        assert!(!w.is_finished(), "the second inserter of 11 waits");
        store.commit(first).unwrap();
        w.join().unwrap()
    });
    assert_eq!(waited, Err(ErrorKind::UniqueViolation));
    let mut aborting = store.begin().unwrap();
    exec(&store, &mut aborting, "insert into t values (12, 1)").unwrap();
    let waited = std::thread::scope(|s| {
        let w = s.spawn(second("insert into t values (12, 0)"));
        std::thread::sleep(std::time::Duration::from_millis(100));
        aborting.abort();
        w.join().unwrap()
    });
    assert_eq!(waited, Ok(()));
    assert_eq!(
        rows(&store, "select id, v from t where id >= 10"),
        [
            "[Int(10), Int(0)]",
            "[Int(11), Int(1)]",
            "[Int(12), Int(0)]"
        ]
    );
}
