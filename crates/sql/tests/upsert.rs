//! `INSERT … ON CONFLICT (key) DO UPDATE` (upsert): a proposed row whose key
//! a live row holds updates that row — by the table's values and
//! `excluded`'s — in the delta or merged, with WHERE, RETURNING, DEFAULT
//! and aliases; the errors PostgreSQL gives (21000, 42601, 42P10, 23505);
//! a concurrent commit of the key is 40001.

mod common;

use common::{autocommit, exec, exec_returning, query_in};
use maestro_sql::store::MergeScope;
use maestro_sql::{ErrorKind, Store, Written};
use maestro_tpch::queries::Value;

fn rows(store: &Store, sql: &str) -> Vec<Vec<Value>> {
    common::rows_of(store, sql)
}

fn fails(store: &Store, sql: &str) -> ErrorKind {
    common::write_error(store, sql).kind
}

fn ints(rows: &[&[i64]]) -> Vec<Vec<Value>> {
    rows.iter()
        .map(|r| r.iter().map(|&v| Value::Int(v)).collect())
        .collect()
}

fn counter_store() -> Store {
    let store = Store::new();
    autocommit(
        &store,
        "create table kv (k integer primary key, v integer not null, n integer default 0, \
         note text)",
    );
    autocommit(&store, "insert into kv (k, v) values (1, 10), (2, 20)");
    store
}

#[test]
fn a_conflicting_row_updates_the_row_holding_its_key() {
    let store = counter_store();
    let written = autocommit(
        &store,
        "insert into kv (k, v) values (2, 25), (3, 30) \
         on conflict (k) do update set v = excluded.v, n = kv.n + 1",
    );
    assert_eq!(written, Written::Insert(2));
    assert_eq!(
        rows(&store, "select k, v, n from kv order by k"),
        ints(&[&[1, 10, 0], &[2, 25, 1], &[3, 30, 0]])
    );
    // Unqualified columns are the table's; an alias names it too.
    autocommit(
        &store,
        "insert into kv as t (k, v) values (1, 5) \
         on conflict (k) do update set v = v + excluded.v, n = t.n + 1, note = 'merged'",
    );
    assert_eq!(
        rows(&store, "select v, n, note from kv where k = 1"),
        vec![vec![
            Value::Int(15),
            Value::Int(1),
            Value::Str("merged".into())
        ]]
    );
    // By the key's index name, and from a SELECT.
    autocommit(
        &store,
        "insert into kv (k, v) select k + 1, v from kv where k = 2 \
         on conflict on constraint kv_pkey do update set v = excluded.v + 1000",
    );
    assert_eq!(
        rows(&store, "select k, v from kv where k = 3"),
        ints(&[&[3, 1025]])
    );
    autocommit(&store, "update kv set v = 30 where k = 3");
    // The same once the rows are merged into the main.
    store.merge_deltas(MergeScope::All).unwrap();
    autocommit(
        &store,
        "insert into kv (k, v) values (3, 1), (1, 1) on conflict (k) do update set n = kv.n + 10",
    );
    assert_eq!(
        rows(&store, "select k, v, n from kv order by k"),
        ints(&[&[1, 15, 11], &[2, 25, 1], &[3, 30, 10]])
    );
}

#[test]
fn where_default_and_returning_shape_what_is_written() {
    let store = counter_store();
    // WHERE false: the row is neither inserted nor updated.
    let written = autocommit(
        &store,
        "insert into kv (k, v) values (1, 5) \
         on conflict (k) do update set v = excluded.v where kv.v < excluded.v",
    );
    assert_eq!(written, Written::Insert(0));
    assert_eq!(rows(&store, "select v from kv where k = 1"), ints(&[&[10]]));
    // SET … = DEFAULT takes the column's default.
    autocommit(&store, "update kv set n = 7 where k = 2");
    autocommit(
        &store,
        "insert into kv (k, v) values (2, 0) on conflict (k) do update set n = default",
    );
    assert_eq!(rows(&store, "select n from kv where k = 2"), ints(&[&[0]]));
    // RETURNING gives the rows in the order proposed, inserted or updated
    // (a row the WHERE rejects is left out).
    let mut t = store.begin().unwrap();
    let out = exec_returning(
        &store,
        &mut t,
        "insert into kv (k, v) values (5, 50), (1, 11), (4, 40), (2, -1), (3, 1) \
         on conflict (k) do update set v = kv.v + excluded.v where excluded.v > 0 \
         returning k, v",
    )
    .unwrap();
    store.commit(t).unwrap();
    assert_eq!(out.written, Written::Insert(4));
    assert_eq!(
        out.returned.unwrap().rows,
        ints(&[&[5, 50], &[1, 21], &[4, 40], &[3, 1]])
    );
}

#[test]
fn upserts_fail_as_postgresql_does() {
    let store = counter_store();
    autocommit(&store, "create unique index kv_v on kv (v)");
    let cases = [
        // Two proposed rows with one key value.
        (
            "insert into kv (k, v) values (5, 1), (5, 2) on conflict (k) do update set v = 0",
            ErrorKind::CardinalityViolation,
        ),
        (
            "insert into kv (k, v) values (1, 1), (1, 2) on conflict (k) do update set v = 3",
            ErrorKind::CardinalityViolation,
        ),
        // No target, or one naming no key.
        (
            "insert into kv (k, v) values (1, 1) on conflict do update set v = 0",
            ErrorKind::Parse,
        ),
        (
            "insert into kv (k, v) values (1, 1) on conflict (n) do update set v = 0",
            ErrorKind::InvalidColumnReference,
        ),
        // The update collides with another key.
        (
            "insert into kv (k, v) values (1, 0) on conflict (k) do update set v = 20",
            ErrorKind::UniqueViolation,
        ),
        // An insert colliding with a key the target does not name.
        (
            "insert into kv (k, v) values (9, 20) on conflict (k) do update set v = 0",
            ErrorKind::UniqueViolation,
        ),
        (
            "insert into kv (k, v) values (1, 0) on conflict (k) do update set nope = 1",
            ErrorKind::UnknownColumn,
        ),
        (
            "insert into kv (k, v) values (1, 0) on conflict (k) do update set v = excluded.nope",
            ErrorKind::UnknownColumn,
        ),
    ];
    for (sql, kind) in cases {
        assert_eq!(fails(&store, sql), kind, "{sql}");
    }
    assert_eq!(
        rows(&store, "select k, v, n from kv order by k"),
        ints(&[&[1, 10, 0], &[2, 20, 0]])
    );
}

#[test]
fn a_key_committed_after_the_snapshot_is_a_serialization_failure() {
    let store = counter_store();
    let mut old = store.begin().unwrap();
    query_in(&store, &mut old, "select count(*) from kv");
    autocommit(&store, "insert into kv (k, v) values (3, 0)");
    let e = exec(
        &store,
        &mut old,
        "insert into kv (k, v) values (3, 1) on conflict (k) do update set v = 9",
    )
    .expect_err("a key the snapshot does not show");
    assert_eq!(e.kind, ErrorKind::SerializationFailure, "{e}");
    old.abort();
    // Two upserts of one row: the second waits at the row for the first
    // (`store/row_locks.rs`) and, once that committed, fails.
    let mut a = store.begin().unwrap();
    let mut b = store.begin().unwrap();
    let up = "insert into kv (k, v) values (1, 1) on conflict (k) do update set n = kv.n + 1";
    exec(&store, &mut a, up).unwrap();
    let e = std::thread::scope(|s| {
        let waiter = s.spawn(|| exec(&store, &mut b, up).expect_err("the row changed under it"));
        std::thread::sleep(std::time::Duration::from_millis(50));
        store.commit(a).unwrap();
        waiter.join().unwrap()
    });
    assert_eq!(e.kind, ErrorKind::SerializationFailure, "{e}");
    b.abort();
    assert_eq!(rows(&store, "select n from kv where k = 1"), ints(&[&[1]]));
}

#[test]
fn upserts_survive_a_restart() {
    let dir = common::fresh_data_dir("upsert");
    let open = || common::open_durable(&dir);
    {
        let store = open();
        autocommit(
            &store,
            "create table kv (k integer primary key, v integer not null, n integer default 0)",
        );
        autocommit(&store, "insert into kv (k, v) values (1, 10), (2, 20)");
        autocommit(
            &store,
            "insert into kv (k, v) values (2, 21), (3, 30) \
             on conflict (k) do update set v = excluded.v, n = kv.n + 1",
        );
    }
    let store = open();
    assert_eq!(
        rows(&store, "select k, v, n from kv order by k"),
        ints(&[&[1, 10, 0], &[2, 21, 1], &[3, 30, 0]])
    );
    // And the key still holds after the replay.
    autocommit(
        &store,
        "insert into kv (k, v) values (3, 31) on conflict (k) do update set n = kv.n + 1",
    );
    assert_eq!(
        rows(&store, "select k, v, n from kv where k = 3"),
        ints(&[&[3, 30, 1]])
    );
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_insert_of_a_key_a_running_transaction_inserted_waits_for_it() {
    let store = counter_store();
    let up = "insert into kv (k, v) values (7, 1) on conflict (k) do update set n = kv.n + 1";
    let mut a = store.begin().unwrap();
    let mut b = store.begin().unwrap();
    exec(&store, &mut a, up).unwrap();
    // B's upsert of the same new key waits for A's; A commits, so the key
    // is taken: 40001 that READ COMMITTED runs again, and on a fresh
    // snapshot the upsert updates A's row.
    let e = std::thread::scope(|s| {
        let waiter = s.spawn(|| exec(&store, &mut b, up).expect_err("the key A inserted"));
        std::thread::sleep(std::time::Duration::from_millis(100));
        assert!(!waiter.is_finished(), "B waits for A's key");
        store.commit(a).unwrap();
        waiter.join().unwrap()
    });
    assert_eq!(e.kind, ErrorKind::SerializationFailure, "{e}");
    assert_eq!(e.rerun, maestro_sql::Rerun::OnFreshSnapshot);
    store.refresh_snapshot(&mut b).unwrap();
    exec(&store, &mut b, up).unwrap();
    store.commit(b).unwrap();
    assert_eq!(
        rows(&store, "select v, n from kv where k = 7"),
        ints(&[&[1, 1]])
    );

    // A plain INSERT of a key another block inserted: it waits, then 23505
    // once that block committed, or goes on when it aborted.
    let mut a = store.begin().unwrap();
    let mut b = store.begin().unwrap();
    exec(&store, &mut a, "insert into kv (k, v) values (8, 1)").unwrap();
    let e = std::thread::scope(|s| {
        let waiter = s.spawn(|| {
            exec(&store, &mut b, "insert into kv (k, v) values (8, 2)").expect_err("taken")
        });
        std::thread::sleep(std::time::Duration::from_millis(100));
        store.commit(a).unwrap();
        waiter.join().unwrap()
    });
    assert_eq!(e.kind, ErrorKind::UniqueViolation, "{e}");
    b.abort();
    let mut a = store.begin().unwrap();
    let mut b = store.begin().unwrap();
    exec(&store, &mut a, "insert into kv (k, v) values (9, 1)").unwrap();
    std::thread::scope(|s| {
        let waiter = s.spawn(|| exec(&store, &mut b, "insert into kv (k, v) values (9, 2)"));
        std::thread::sleep(std::time::Duration::from_millis(100));
        a.abort();
        waiter.join().unwrap().unwrap();
    });
    store.commit(b).unwrap();
    assert_eq!(rows(&store, "select v from kv where k = 9"), ints(&[&[2]]));
}
