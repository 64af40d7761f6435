//! Row-level write conflicts (`store/rebase.rs`): two transactions writing
//! different rows of one table both commit, whichever commits first, and
//! neither waits for the other's block; each keeps reading its snapshot; a
//! row both changed, a key both inserted fail as PostgreSQL's REPEATABLE
//! READ fails them (at the statement when already committed, else at the
//! commit: first committer wins); a background merge in between is
//! crossed, two are not; a writer of a row another running transaction
//! changed waits for it (`store/row_locks.rs`), a cycle of such waits is
//! 40P01; READ COMMITTED statements read later commits and run again on
//! the newest row; a commit waits for a table another transaction
//! holds; an aborted transaction's pending writes are forgotten; writes
//! installed at commit survive a restart.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{autocommit, exec, query_in};
use maestro_sql::{ErrorKind, Store, Written};
use maestro_tpch::queries::Value;
use maestro_txn::{Durability, DurabilityConfig, Transaction};

/// The rows of `sql` as `txn` sees them, every value printed.
fn rows(store: &Store, txn: &mut Transaction, sql: &str) -> Vec<String> {
    query_in(store, txn, sql)
        .rows
        .iter()
        .map(|row| {
            row.iter()
                .map(|v| match v {
                    Value::Int(i) => i.to_string(),
                    Value::Null => "null".into(),
                    v => format!("{v:?}"),
                })
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect()
}

/// `sql` in a transaction of its own, run again on a fresh one after 40001
/// (as the server runs an autocommitted write).
fn autocommit_retrying(store: &Store, sql: &str) {
    for _ in 0..100 {
        let mut t = store.begin().unwrap();
        match exec(store, &mut t, sql).and_then(|_| store.commit(t)) {
            Ok(()) => return,
            Err(e) if e.kind == ErrorKind::SerializationFailure => {}
            Err(e) => panic!("{sql}: {e}"),
        }
    }
    panic!("{sql}: 100 serialization failures");
}

/// The rows of `sql` in a fresh snapshot.
fn committed(store: &Store, sql: &str) -> Vec<String> {
    let mut t = store.begin().unwrap();
    let r = rows(store, &mut t, sql);
    t.abort();
    r
}

fn accounts() -> Store {
    let store = Store::new();
    autocommit(&store, "create table acc (id bigint primary key, v bigint)");
    autocommit(&store, "insert into acc values (1, 10), (2, 20), (3, 30)");
    store
}

fn kind(r: Result<Written, maestro_sql::SqlError>) -> ErrorKind {
    match r {
        Ok(w) => panic!("expected an error, got {w:?}"),
        Err(e) => e.kind,
    }
}

#[test]
fn writers_of_different_rows_both_commit_and_each_reads_its_snapshot() {
    let store = accounts();
    let mut late = store.begin().unwrap();
    let mut early = store.begin().unwrap();
    exec(&store, &mut early, "update acc set v = 11 where id = 1").unwrap();
    exec(&store, &mut early, "insert into acc values (4, 40)").unwrap();
    store.commit(early).unwrap();

    // `late`'s snapshot predates `early`'s commit; its rows differ.
    assert_eq!(
        exec(&store, &mut late, "update acc set v = 22 where id = 2").unwrap(),
        Written::Update(1)
    );
    exec(&store, &mut late, "insert into acc values (5, 50)").unwrap();
    // Its own writes on top of its snapshot, not `early`'s rows.
    assert_eq!(
        rows(&store, &mut late, "select id, v from acc order by id"),
        ["1,10", "2,22", "3,30", "5,50"]
    );
    // Later statements find its own rows (ids mapped past `early`'s).
    exec(&store, &mut late, "update acc set v = 55 where id = 5").unwrap();
    exec(&store, &mut late, "delete from acc where id = 3").unwrap();
    assert_eq!(
        rows(&store, &mut late, "select id, v from acc order by id"),
        ["1,10", "2,22", "5,55"]
    );
    store.commit(late).unwrap();
    assert_eq!(
        committed(&store, "select id, v from acc order by id"),
        ["1,11", "2,22", "4,40", "5,55"]
    );
    // What later writers build on: a plain write goes through.
    autocommit(&store, "update acc set v = v + 1");
    assert_eq!(
        committed(&store, "select sum(v) from acc"),
        [(12 + 23 + 41 + 56).to_string()]
    );
}

#[test]
fn a_row_both_changed_is_a_serialization_failure() {
    let store = accounts();
    let mut late = store.begin().unwrap();
    autocommit(&store, "update acc set v = 12 where id = 1");
    let e = kind(exec(
        &store,
        &mut late,
        "update acc set v = 13 where id = 1",
    ));
    assert_eq!(e, ErrorKind::SerializationFailure);
    late.abort();

    // A row deleted by the other: also a conflict, for DELETE and UPDATE.
    let mut late = store.begin().unwrap();
    autocommit(&store, "delete from acc where id = 2");
    let e = kind(exec(&store, &mut late, "delete from acc where id = 2"));
    assert_eq!(e, ErrorKind::SerializationFailure);
    late.abort();

    // After a rebased write, a later statement meeting a row the other
    // transaction changed: a conflict too.
    let mut late = store.begin().unwrap();
    autocommit(&store, "update acc set v = 31 where id = 3");
    exec(&store, &mut late, "insert into acc values (9, 90)").unwrap();
    let e = kind(exec(&store, &mut late, "update acc set v = 0 where id = 3"));
    assert_eq!(e, ErrorKind::SerializationFailure);
    late.abort();
    assert_eq!(
        committed(&store, "select id, v from acc order by id"),
        ["1,12", "3,31"]
    );
}

#[test]
fn a_key_both_inserted_is_a_unique_violation() {
    let store = accounts();
    let mut late = store.begin().unwrap();
    autocommit(&store, "insert into acc values (7, 70)");
    let e = kind(exec(&store, &mut late, "insert into acc values (7, 71)"));
    assert_eq!(e, ErrorKind::UniqueViolation);
    late.abort();
    // A key freed by the other transaction can be taken.
    let mut late = store.begin().unwrap();
    autocommit(&store, "delete from acc where id = 7");
    exec(&store, &mut late, "insert into acc values (7, 72)").unwrap();
    store.commit(late).unwrap();
    assert_eq!(committed(&store, "select v from acc where id = 7"), ["72"]);
}

fn merge(store: &Store) {
    store
        .merge_deltas(maestro_sql::store::MergeScope::All)
        .unwrap();
}

#[test]
fn a_background_merge_in_between_is_crossed() {
    let store = accounts();
    // `late`'s snapshot predates writes that a merge then folds, and one
    // after the merge.
    let mut late = store.begin().unwrap();
    autocommit(&store, "insert into acc values (4, 40)");
    autocommit(&store, "delete from acc where id = 1");
    merge(&store);
    autocommit(&store, "update acc set v = 21 where id = 2");
    exec(&store, &mut late, "update acc set v = 33 where id = 3").unwrap();
    exec(&store, &mut late, "insert into acc values (5, 50)").unwrap();
    assert_eq!(
        rows(&store, &mut late, "select id, v from acc order by id"),
        ["1,10", "2,20", "3,33", "5,50"]
    );
    exec(&store, &mut late, "update acc set v = 55 where id = 5").unwrap();
    store.commit(late).unwrap();
    assert_eq!(
        committed(&store, "select id, v from acc order by id"),
        ["2,21", "3,33", "4,40", "5,55"]
    );

    // A row the merge's folded writes deleted: a conflict at the statement.
    // A row changed after the merge by another writer: its key value is the
    // first writer's (key locks span merges, `row_locks.rs`), so the second
    // waits and, the first committed, runs again on its result.
    let mut late = store.begin().unwrap();
    let mut later = store.begin().unwrap();
    exec(&store, &mut later, "update acc set v = 0 where id = 2").unwrap();
    autocommit(&store, "delete from acc where id = 4");
    merge(&store);
    std::thread::scope(|s| {
        let second = s.spawn(|| {
            autocommit_retrying(&store, "update acc set v = v + 22 where id = 2");
        });
        std::thread::sleep(Duration::from_millis(100));
        assert!(!second.is_finished(), "the second writer of row 2 waits");
        store.commit(later).unwrap();
        second.join().unwrap();
    });
    let e = kind(exec(&store, &mut late, "delete from acc where id = 4"));
    assert_eq!(e, ErrorKind::SerializationFailure);
    late.abort();

    // Two merges in between: not crossed.
    let mut late = store.begin().unwrap();
    autocommit(&store, "insert into acc values (6, 60)");
    merge(&store);
    autocommit(&store, "insert into acc values (7, 70)");
    merge(&store);
    let e = kind(exec(&store, &mut late, "insert into acc values (8, 80)"));
    assert_eq!(e, ErrorKind::SerializationFailure);
    late.abort();
    assert_eq!(
        committed(&store, "select id, v from acc order by id"),
        ["2,22", "3,33", "5,55", "6,60", "7,70"]
    );
}

#[test]
fn ddl_after_a_write_over_a_concurrent_commit_is_refused() {
    let store = accounts();
    let mut late = store.begin().unwrap();
    autocommit(&store, "insert into acc values (6, 60)");
    exec(&store, &mut late, "insert into acc values (8, 80)").unwrap();
    let e = kind(exec(&store, &mut late, "create index acc_v on acc (v)"));
    assert_eq!(e, ErrorKind::SerializationFailure);
    late.abort();
    // Without a concurrent commit, DDL after writes builds on them.
    let mut t = store.begin().unwrap();
    exec(&store, &mut t, "insert into acc values (9, 90)").unwrap();
    exec(&store, &mut t, "create index acc_v on acc (v)").unwrap();
    exec(&store, &mut t, "insert into acc values (10, 100)").unwrap();
    store.commit(t).unwrap();
    assert_eq!(
        committed(&store, "select count(*) from acc where v >= 60"),
        ["3"]
    );
}

#[test]
fn writers_of_other_rows_do_not_wait_and_a_writer_of_a_held_row_waits() {
    let store = Arc::new(accounts());
    let mut first = store.begin().unwrap();
    let mut second = store.begin().unwrap();
    exec(&store, &mut first, "update acc set v = 100 where id = 1").unwrap();
    // Not waiting for `first`'s open block: another row.
    exec(&store, &mut second, "update acc set v = 200 where id = 2").unwrap();
    // Two rows, and the key values (primary key `id`) their new versions
    // insert.
    assert_eq!(store.rows_locked(), 4);
    // Row 1 is `first`'s until it ends: `second` waits there, and once
    // `first` committed its change, REPEATABLE READ's answer is 40001.
    let (second, e) = std::thread::scope(|s| {
        let waiter = s.spawn(|| {
            let e = kind(exec(
                &store,
                &mut second,
                "update acc set v = 201 where id = 1",
            ));
            (second, e)
        });
        std::thread::sleep(Duration::from_millis(100));
        assert!(!waiter.is_finished(), "the writer of a held row waits");
        store.commit(first).unwrap();
        waiter.join().unwrap()
    });
    assert_eq!(e, ErrorKind::SerializationFailure);
    second.abort();
    assert_eq!(
        committed(&store, "select id, v from acc order by id"),
        ["1,100", "2,20", "3,30"]
    );
    // A holder that aborts changed nothing: the waiter goes on.
    let mut holder = store.begin().unwrap();
    let mut waiter = store.begin().unwrap();
    exec(&store, &mut holder, "update acc set v = 0 where id = 3").unwrap();
    let waiter = std::thread::scope(|s| {
        let w = s.spawn(|| {
            exec(&store, &mut waiter, "update acc set v = v + 1 where id = 3").unwrap();
            waiter
        });
        std::thread::sleep(Duration::from_millis(100));
        holder.abort();
        w.join().unwrap()
    });
    store.commit(waiter).unwrap();
    assert_eq!(committed(&store, "select v from acc where id = 3"), ["31"]);
    // An aborted transaction's pending writes are forgotten.
    let mut aborted = store.begin().unwrap();
    exec(&store, &mut aborted, "insert into acc values (8, 80)").unwrap();
    assert_eq!(store.transactions_pending(), 1);
    aborted.abort();
    let t = store.begin().unwrap();
    assert_eq!(store.transactions_pending(), 0);
    assert_eq!(store.rows_locked(), 0, "every lock released or purged");
    t.abort();
    assert_eq!(committed(&store, "select count(*) from acc"), ["3"]);
}

#[test]
fn two_writers_waiting_for_each_other_end_in_a_deadlock_error() {
    let store = Arc::new(accounts());
    let mut a = store.begin().unwrap();
    let mut b = store.begin().unwrap();
    exec(&store, &mut a, "update acc set v = 1 where id = 1").unwrap();
    exec(&store, &mut b, "update acc set v = 2 where id = 2").unwrap();
    let started = Instant::now();
    // Each now writes the other's row. Whichever closes the cycle of waits
    // (usually the later one; a waiter between two steps of its wait can
    // be the one) is refused with 40P01 and aborts; the other goes on.
    let outcome = |mut txn: Transaction, sql: &'static str| {
        let store = Arc::clone(&store);
        move || match exec(&store, &mut txn, sql) {
            Ok(_) => Some(txn),
            Err(e) => {
                assert_eq!(e.kind, ErrorKind::Deadlock, "{e}");
                txn.abort();
                None
            }
        }
    };
    let first = std::thread::spawn(outcome(b, "update acc set v = 2 where id = 1"));
    std::thread::sleep(Duration::from_millis(100));
    let second = std::thread::spawn(outcome(a, "update acc set v = 1 where id = 2"));
    let (b, a) = (first.join().unwrap(), second.join().unwrap());
    let expected = match (a, b) {
        (Some(a), None) => {
            store.commit(a).unwrap();
            ["1,1", "2,1", "3,30"]
        }
        (None, Some(b)) => {
            store.commit(b).unwrap();
            ["1,2", "2,2", "3,30"]
        }
        (a, b) => panic!(
            "exactly one of the two must be refused: a {}, b {}",
            a.is_some(),
            b.is_some()
        ),
    };
    assert!(
        started.elapsed() < maestro_sql::store::ROW_WAIT_MAX,
        "found as a cycle, not by the wait's bound"
    );
    assert_eq!(
        committed(&store, "select id, v from acc order by id"),
        expected
    );
}

#[test]
fn read_committed_statements_see_later_commits_and_redo_on_the_newest_row() {
    let store = Arc::new(accounts());
    let mut rc = store.begin().unwrap();
    exec(&store, &mut rc, "insert into acc values (4, 40)").unwrap();
    autocommit(&store, "update acc set v = 21 where id = 2");
    autocommit(&store, "insert into acc values (5, 50)");
    // A new statement: a snapshot taken now, the own insert on top.
    store.refresh_snapshot(&mut rc).unwrap();
    assert_eq!(
        rows(&store, &mut rc, "select id, v from acc order by id"),
        ["1,10", "2,21", "3,30", "4,40", "5,50"]
    );
    // An increment of a row another block holds waits for it, then (the
    // other committed) fails with a rerunnable 40001; run again on a newer
    // snapshot it adds to the committed value, as PostgreSQL's READ
    // COMMITTED does.
    let mut other = store.begin().unwrap();
    exec(
        &store,
        &mut other,
        "update acc set v = v + 100 where id = 1",
    )
    .unwrap();
    let rc = std::thread::scope(|s| {
        let w = s.spawn(|| {
            store.refresh_snapshot(&mut rc).unwrap();
            let e = exec(&store, &mut rc, "update acc set v = v + 1 where id = 1").unwrap_err();
            assert_eq!(e.kind, ErrorKind::SerializationFailure);
            assert_eq!(e.rerun, maestro_sql::Rerun::OnFreshSnapshot);
            store.refresh_snapshot(&mut rc).unwrap();
            exec(&store, &mut rc, "update acc set v = v + 1 where id = 1").unwrap();
            rc
        });
        std::thread::sleep(Duration::from_millis(100));
        store.commit(other).unwrap();
        w.join().unwrap()
    });
    store.commit(rc).unwrap();
    assert_eq!(
        committed(&store, "select id, v from acc order by id"),
        ["1,111", "2,21", "3,30", "4,40", "5,50"]
    );
}

#[test]
fn a_commit_waits_for_a_table_another_transaction_holds() {
    let store = Arc::new(accounts());
    // DDL holds the table (its catalog row) until the transaction ends.
    let mut holder = store.begin().unwrap();
    exec(&store, &mut holder, "create index acc_v on acc (v)").unwrap();
    exec(&store, &mut holder, "update acc set v = 100 where id = 1").unwrap();
    let commit_after = Duration::from_millis(50);
    let started = Instant::now();
    let waiter = {
        let store = Arc::clone(&store);
        std::thread::spawn(move || {
            let mut t = store.begin().unwrap();
            exec(&store, &mut t, "update acc set v = 200 where id = 2").unwrap();
            store.commit(t).unwrap();
        })
    };
    std::thread::sleep(commit_after);
    store.commit(holder).unwrap();
    waiter.join().unwrap();
    assert!(started.elapsed() >= commit_after);
    assert_eq!(
        committed(&store, "select id, v from acc order by id"),
        ["1,100", "2,200", "3,30"]
    );

    // One that never finishes within the bound: the write's statement
    // waits for it (what the holder commits over cannot be checked before),
    // then gets 40001.
    let mut holder = store.begin().unwrap();
    exec(&store, &mut holder, "create index acc_id on acc (id)").unwrap();
    let mut other = store.begin().unwrap();
    let started = Instant::now();
    let e = exec(&store, &mut other, "update acc set v = 2 where id = 2").unwrap_err();
    assert_eq!(e.kind, ErrorKind::SerializationFailure, "{e}");
    assert!(started.elapsed() >= maestro_sql::store::WRITE_WAIT_MAX);
    other.abort();
    holder.abort();
}

/// Concurrent writers of one table, each inserting its own rows and
/// updating its own counter row: every transaction commits, none is lost.
#[test]
fn concurrent_writers_of_one_table_lose_nothing() {
    const WRITERS: i64 = 4;
    const ROUNDS: i64 = 150;
    let store = Arc::new(Store::new());
    autocommit(&store, "create table c (w bigint primary key, n bigint)");
    autocommit(&store, "create table log (w bigint, i bigint)");
    for w in 0..WRITERS {
        autocommit(&store, &format!("insert into c values ({w}, 0)"));
    }
    let threads: Vec<_> = (0..WRITERS)
        .map(|w| {
            let store = Arc::clone(&store);
            std::thread::spawn(move || {
                let mut failures = 0;
                for i in 0..ROUNDS {
                    loop {
                        let mut t = store.begin().unwrap();
                        let done = exec(
                            &store,
                            &mut t,
                            &format!("insert into log values ({w}, {i})"),
                        )
                        .and_then(|_| {
                            exec(
                                &store,
                                &mut t,
                                &format!("update c set n = n + 1 where w = {w}"),
                            )
                        })
                        .and_then(|_| store.commit(t));
                        match done {
                            Ok(()) => break,
                            Err(e) if e.kind == ErrorKind::SerializationFailure => failures += 1,
                            Err(e) => panic!("writer {w} round {i}: {e}"),
                        }
                    }
                }
                failures
            })
        })
        .collect();
    let failures: i64 = threads.into_iter().map(|t| t.join().unwrap()).sum();
    let expected: Vec<String> = (0..WRITERS).map(|w| format!("{w},{ROUNDS}")).collect();
    assert_eq!(committed(&store, "select w, n from c order by w"), expected);
    assert_eq!(
        committed(&store, "select w, count(*) from log group by w order by w"),
        expected
    );
    // Only a row both changed, a merge (background ones are not run here)
    // or the wait bound could fail a transaction: none happens.
    assert_eq!(failures, 0);
}

#[test]
fn rebased_writes_survive_a_restart() {
    let d = std::env::temp_dir().join(format!("maestro-sql-rebase-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    let open = || {
        maestro_sql::Store::open_data_dir(&d, DurabilityConfig::new(Durability::Sync), &|_| Ok(()))
            .unwrap()
            .0
    };
    let store = open();
    autocommit(&store, "create table acc (id bigint primary key, v bigint)");
    autocommit(&store, "insert into acc values (1, 10), (2, 20), (3, 30)");
    let mut late = store.begin().unwrap();
    autocommit(&store, "delete from acc where id = 1");
    autocommit(&store, "insert into acc values (4, 40)");
    merge(&store);
    // Positions in the log are those of the version the change applies to
    // (here across a merge).
    exec(&store, &mut late, "update acc set v = 33 where id = 3").unwrap();
    exec(&store, &mut late, "insert into acc values (5, 50)").unwrap();
    exec(&store, &mut late, "delete from acc where id = 5").unwrap();
    exec(&store, &mut late, "insert into acc values (6, 60)").unwrap();
    store.commit(late).unwrap();
    let before = committed(&store, "select id, v from acc order by id");
    assert_eq!(before, ["2,20", "3,33", "4,40", "6,60"]);
    drop(store);
    let store = open();
    assert_eq!(
        committed(&store, "select id, v from acc order by id"),
        before
    );
    drop(store);
    let _ = std::fs::remove_dir_all(&d);
}
