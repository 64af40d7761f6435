//! The store without a wire: snapshots read the versions of their start,
//! a transaction sees its own writes, writers of one row conflict, and
//! replaced versions are freed once no snapshot sees them.

mod common;

use common::{autocommit, exec, query_in};
use maestro_sql::{ErrorKind, Store, Written};
use maestro_tpch::queries::Value;
use maestro_txn::Transaction;

fn ints(store: &Store, txn: &mut Transaction, sql: &str) -> Vec<i64> {
    query_in(store, txn, sql)
        .rows
        .iter()
        .map(|row| match row[0] {
            Value::Int(i) => i,
            ref v => panic!("{v:?}"),
        })
        .collect()
}

#[test]
fn snapshots_own_writes_conflicts_and_freed_versions() {
    let store = Store::new();
    autocommit(&store, "create table t (a bigint)");
    assert_eq!(
        autocommit(&store, "insert into t values (1), (2)"),
        Written::Insert(2)
    );
    let mut reader = store.begin().unwrap();
    let mut writer = store.begin().unwrap();
    assert_eq!(
        exec(&store, &mut writer, "delete from t where a = 1").unwrap(),
        Written::Delete(1)
    );
    assert_eq!(ints(&store, &mut writer, "select a from t"), [2]);
    assert_eq!(
        ints(&store, &mut reader, "select a from t order by a"),
        [1, 2]
    );
    // A second writer of t, begun before the first commits: its insert
    // lands on top of the first's delete (different rows:
    // `row_conflicts.rs`); deleting the row the first deleted conflicts.
    let mut other = store.begin().unwrap();
    store.commit(writer).unwrap();
    assert_eq!(
        exec(&store, &mut other, "insert into t values (3)").unwrap(),
        Written::Insert(1)
    );
    let e = exec(&store, &mut other, "delete from t where a = 1").unwrap_err();
    assert_eq!(e.kind, ErrorKind::SerializationFailure);
    other.abort();
    // The reader's snapshot still holds the old version.
    assert_eq!(
        ints(&store, &mut reader, "select a from t order by a"),
        [1, 2]
    );
    assert!(store.versions_stored() >= 2);
    reader.abort();
    autocommit(&store, "update t set a = a * 10");
    let mut now = store.begin().unwrap();
    assert_eq!(ints(&store, &mut now, "select a from t"), [20]);
    now.abort();
    // Only the newest version of t is left once no snapshot needs the others.
    assert_eq!(store.versions_stored(), 1);
}

/// A table with a NULL mask and a TIMESTAMP column, as `load_ch` puts them.
fn loaded(nulls: Vec<bool>) -> maestro_sql::store::LoadedTable {
    use maestro_sql::store::{ColumnSpec, ColumnType, LoadedTable};
    use maestro_storage::column::{Column, Table};
    use std::sync::Arc;
    let data = Table::new(
        "t".to_string(),
        [
            ("a".to_string(), Column::Int32(vec![1, 2, 3])),
            ("at".to_string(), Column::Int64(vec![0, 86_400_000_000, 0])),
        ],
    )
    .unwrap();
    LoadedTable {
        data: Arc::new(data),
        columns: vec![
            ColumnSpec {
                name: "a".into(),
                ty: ColumnType::Int32,
            },
            ColumnSpec {
                name: "at".into(),
                ty: ColumnType::Timestamp,
            },
        ],
        unique_columns: Vec::new(),
        keys: Vec::new(),
        nulls: vec![None, Some(Arc::new(nulls))],
    }
}

#[test]
fn loaded_tables_keep_their_nulls_through_writes_and_restarts() {
    let store = Store::new();
    store
        .put_loaded(vec![loaded(vec![false, false, true])])
        .unwrap();
    let mut txn = store.begin().unwrap();
    assert_eq!(
        ints(&store, &mut txn, "select a from t where at is null"),
        [3]
    );
    assert_eq!(
        ints(
            &store,
            &mut txn,
            "select a from t where at > '1970-01-01' order by a"
        ),
        [2]
    );
    // A comparison on a masked column is false at a NULL, also reversed,
    // under OR, and (three-valued) under NOT.
    for (sql, expected) in [
        (
            "select a from t where at >= '1970-01-01' order by a",
            &[1, 2][..],
        ),
        ("select a from t where '1970-01-01' < at order by a", &[2]),
        (
            "select a from t where at > '1970-01-01' or a = 3 order by a",
            &[2, 3],
        ),
        (
            "select a from t where not (at > '1970-01-01') order by a",
            &[1],
        ),
    ] {
        assert_eq!(ints(&store, &mut txn, sql), expected, "{sql}");
    }
    assert_eq!(ints(&store, &mut txn, "select count(at) from t"), [2]);
    drop(txn);
    // Writes keep the NULLs: a row deleted, one updated to NULL, one
    // inserted with none.
    autocommit(&store, "delete from t where a = 1");
    autocommit(&store, "update t set at = null where a = 2");
    autocommit(&store, "insert into t (a) values (4)");
    let mut txn = store.begin().unwrap();
    assert_eq!(
        ints(
            &store,
            &mut txn,
            "select a from t where at is null order by a"
        ),
        [2, 3, 4]
    );
    drop(txn);
    // A mask of another length than the table is refused, not truncated.
    let e = store.put_loaded(vec![loaded(vec![true])]).unwrap_err();
    assert!(e.message.contains("do not match"), "{e}");
    // A durable store keeps the NULLs across a restart (masks are columns).
    let d = std::env::temp_dir().join(format!("maestro-sql-loaded-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    let config = || maestro_txn::DurabilityConfig::new(maestro_txn::Durability::Sync);
    let (durable, _) = Store::open_data_dir(&d, config(), &|_| Ok(())).unwrap();
    durable
        .put_loaded(vec![loaded(vec![false, false, true])])
        .unwrap();
    autocommit(&durable, "update t set at = null where a = 1");
    drop(durable);
    let (durable, _) = Store::open_data_dir(&d, config(), &|_| Ok(())).unwrap();
    let mut txn = durable.begin().unwrap();
    assert_eq!(
        ints(
            &durable,
            &mut txn,
            "select a from t where at is null order by a"
        ),
        [1, 3]
    );
    drop(txn);
    drop(durable);
    let _ = std::fs::remove_dir_all(&d);
}

/// `now()` and the other clock functions answer when the transaction
/// began, the same for every statement of it — in queries and in the rows a
/// write stores — as PostgreSQL's transaction timestamp; a later
/// transaction reads a later time.
#[test]
fn the_clock_functions_answer_the_transaction_start() {
    let store = Store::new();
    common::autocommit(
        &store,
        "create table t (k bigint not null, at timestamp not null)",
    );
    let now = |t: &mut maestro_txn::Transaction| {
        common::query_in(&store, t, "select now(), current_timestamp, localtimestamp").rows[0]
            .clone()
    };
    let mut t = store.begin().unwrap();
    let first = now(&mut t);
    assert_eq!(first[0], first[1]);
    assert_eq!(first[0], first[2]);
    std::thread::sleep(std::time::Duration::from_millis(20));
    assert_eq!(now(&mut t), first, "a second statement of the transaction");
    common::exec(&store, &mut t, "insert into t values (1, now())").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    common::exec(
        &store,
        &mut t,
        "insert into t values (2, current_timestamp)",
    )
    .unwrap();
    let stored = common::query_in(&store, &mut t, "select at from t order by k").rows;
    assert_eq!(stored, vec![vec![first[0].clone()], vec![first[0].clone()]]);
    store.commit(t).unwrap();

    std::thread::sleep(std::time::Duration::from_millis(20));
    let mut later = store.begin().unwrap();
    let second = now(&mut later);
    let (Value::Timestamp(a), Value::Timestamp(b)) = (&first[0], &second[0]) else {
        panic!("now() is a timestamp: {first:?}, {second:?}")
    };
    assert!(
        b > a,
        "a later transaction reads a later time: {b} after {a}"
    );
    later.abort();
}
