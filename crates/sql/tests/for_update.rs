//! `SELECT … FOR UPDATE [NOWAIT | SKIP LOCKED]` (`store/for_update.rs`):
//! the rows returned are locked for the transaction, so a writer of them
//! waits until it ends; NOWAIT fails at once, SKIP LOCKED leaves them out
//! (a work queue), a row changed by a commit since the snapshot is 40001
//! (rerunnable under READ COMMITTED), and the shapes PostgreSQL refuses
//! are refused.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{autocommit, exec, exec_returning, rows_of};
use maestro_sql::{ErrorKind, Rerun, Store, Written};
use maestro_tpch::queries::Value;
use maestro_txn::Transaction;

fn jobs() -> Arc<Store> {
    let store = Store::new();
    autocommit(
        &store,
        "create table jobs (id bigint primary key, state text)",
    );
    autocommit(
        &store,
        "insert into jobs values (1, 'new'), (2, 'new'), (3, 'new'), (4, 'done')",
    );
    Arc::new(store)
}

/// The rows `sql` (a locking query) returned in `txn`, every value printed.
fn locked(store: &Store, txn: &mut Transaction, sql: &str) -> Vec<String> {
    let executed = exec_returning(store, txn, sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    let returned = executed.returned.expect("rows");
    assert_eq!(
        executed.written,
        Written::Select(returned.rows.len() as u64)
    );
    returned
        .rows
        .iter()
        .map(|r| {
            r.iter()
                .map(|v| match v {
                    Value::Int(i) => i.to_string(),
                    Value::Str(s) => s.clone(),
                    other => format!("{other:?}"),
                })
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect()
}

#[test]
fn locked_rows_make_their_writers_wait_until_the_locker_ends() {
    let store = jobs();
    let mut locker = store.begin().unwrap();
    assert_eq!(
        locked(
            &store,
            &mut locker,
            "select * from jobs where state = 'new' and id <= 2 for update"
        ),
        ["1,new", "2,new"]
    );
    assert_eq!(store.rows_locked(), 2);
    // Another row: no wait.
    autocommit(&store, "update jobs set state = 'taken' where id = 3");
    let mut writer = store.begin().unwrap();
    let writer = std::thread::scope(|s| {
        let w = s.spawn(|| {
            exec(
                &store,
                &mut writer,
                "update jobs set state = 'x' where id = 2",
            )
            .unwrap();
            writer
        });
        std::thread::sleep(Duration::from_millis(100));
        assert!(!w.is_finished(), "the writer of a locked row waits");
        // The locker changes nothing and ends: the writer goes on.
        store.commit(locker).unwrap();
        w.join().unwrap()
    });
    store.commit(writer).unwrap();
    assert_eq!(
        rows_of(&store, "select state from jobs order by id")
            .into_iter()
            .map(|r| format!("{:?}", r[0]))
            .collect::<Vec<_>>(),
        [
            "Str(\"new\")",
            "Str(\"x\")",
            "Str(\"taken\")",
            "Str(\"done\")"
        ]
    );
}

#[test]
fn nowait_fails_at_once_and_skip_locked_hands_each_worker_another_row() {
    let store = jobs();
    let mut first = store.begin().unwrap();
    let take = "select id from jobs where state = 'new' order by id limit 1 for update skip locked";
    assert_eq!(locked(&store, &mut first, take), ["1"]);
    let mut second = store.begin().unwrap();
    // The first row is held: SKIP LOCKED counts the LIMIT after leaving it
    // out, so the second worker gets the next one.
    assert_eq!(locked(&store, &mut second, take), ["2"]);
    let mut third = store.begin().unwrap();
    let e = exec(
        &store,
        &mut third,
        "select id from jobs where id = 1 for update nowait",
    )
    .unwrap_err();
    assert_eq!(e.kind, ErrorKind::LockNotAvailable, "{e}");
    third.abort();
    let mut fourth = store.begin().unwrap();
    assert_eq!(
        locked(
            &store,
            &mut fourth,
            "select id from jobs order by id for update skip locked"
        ),
        ["3", "4"]
    );
    assert_eq!(
        locked(
            &store,
            &mut fourth,
            "select id from jobs order by id limit 1 offset 1 for update skip locked"
        ),
        ["4"]
    );
    // A transaction's own locks are no obstacle to it.
    assert_eq!(
        locked(
            &store,
            &mut first,
            "select id from jobs where id <= 2 for update skip locked"
        ),
        ["1"]
    );
    for t in [first, second, fourth] {
        t.abort();
    }
    // Aborted owners' locks are free at once and forgotten at the next
    // BEGIN.
    let t = store.begin().unwrap();
    assert_eq!(store.rows_locked(), 0);
    t.abort();
}

#[test]
fn a_row_committed_since_the_snapshot_is_a_rerunnable_serialization_failure() {
    let store = jobs();
    let mut old = store.begin().unwrap();
    assert_eq!(
        locked(
            &store,
            &mut old,
            "select id from jobs where id = 4 for update"
        ),
        ["4"]
    );
    autocommit(&store, "update jobs set state = 'again' where id = 1");
    let e = exec(
        &store,
        &mut old,
        "select * from jobs where id = 1 for update",
    )
    .unwrap_err();
    assert_eq!(e.kind, ErrorKind::SerializationFailure, "{e}");
    assert_eq!(e.rerun, Rerun::OnFreshSnapshot);
    // On a fresh snapshot (READ COMMITTED's next run) it locks the new row.
    store.refresh_snapshot(&mut old).unwrap();
    assert_eq!(
        locked(
            &store,
            &mut old,
            "select * from jobs where id = 1 for update"
        ),
        ["1,again"]
    );
    old.abort();
}

#[test]
fn shapes_postgres_refuses_are_refused() {
    let store = jobs();
    let mut t = store.begin().unwrap();
    let refused = |t: &mut Transaction, sql: &str| exec(&store, t, sql).unwrap_err().kind;
    assert_eq!(
        refused(
            &mut t,
            "select state, count(*) from jobs group by state for update"
        ),
        ErrorKind::Unsupported
    );
    assert_eq!(
        refused(&mut t, "select distinct state from jobs for update"),
        ErrorKind::Unsupported
    );
    assert_eq!(
        refused(&mut t, "select * from jobs a, jobs b for update"),
        ErrorKind::Unsupported
    );
    assert_eq!(
        refused(&mut t, "select * from jobs j for update of other"),
        ErrorKind::UnknownTable
    );
    // OF names the table by its alias.
    assert_eq!(
        locked(
            &store,
            &mut t,
            "select id from jobs j where id = 4 for update of j"
        ),
        ["4"]
    );
    t.abort();
}
