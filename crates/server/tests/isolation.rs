//! Isolation levels over the wire: READ COMMITTED and REPEATABLE READ
//! blocks (`txn.rs` `Isolation`), how a session chooses them, what each
//! reads, and READ COMMITTED's hot row: increments of one row from several
//! sessions' blocks wait for each other at the row and none is lost or
//! refused (`maestro_sql` `row_locks.rs`).

mod common;

use std::time::Duration;

use common::{Server, first_column, sqlstate, text_rows};
use tokio_postgres::Client;

async fn one(c: &Client, sql: &str) -> String {
    let rows = first_column(
        c.simple_query(sql)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e:?}")),
    );
    assert_eq!(rows.len(), 1, "{sql}: {rows:?}");
    rows[0].clone()
}

/// Two sessions of `server`, and a table `t (k, v)` holding `(1, 0)`.
async fn two_sessions_and_t(server: &Server) -> (Client, Client) {
    let a = server.connect().await;
    let b = server.connect().await;
    a.batch_execute("CREATE TABLE t (k INT, v INT); INSERT INTO t VALUES (1, 0)")
        .await
        .unwrap();
    (a, b)
}

async fn fails(c: &Client, sql: &str) -> String {
    let e = c
        .simple_query(sql)
        .await
        .expect_err("the statement must fail");
    sqlstate(&e).0
}

#[test]
fn a_session_chooses_its_blocks_level() {
    let server = Server::start();
    server.rt.block_on(async {
        let c = server.connect().await;
        let default = one(&c, "SHOW transaction_isolation").await;
        assert_eq!(one(&c, "SHOW default_transaction_isolation").await, default);
        c.batch_execute("BEGIN ISOLATION LEVEL READ COMMITTED")
            .await
            .unwrap();
        assert_eq!(
            one(&c, "SHOW transaction_isolation").await,
            "read committed"
        );
        assert_eq!(
            one(&c, "SELECT current_setting('transaction_isolation')").await,
            "read committed"
        );
        c.batch_execute("COMMIT").await.unwrap();
        assert_eq!(one(&c, "SHOW transaction_isolation").await, default);

        // The level of a begun block can change until its first query.
        c.batch_execute("BEGIN; SET transaction_isolation = 'read committed'")
            .await
            .unwrap();
        assert_eq!(
            one(&c, "SHOW transaction_isolation").await,
            "read committed"
        );
        c.batch_execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            .await
            .unwrap();
        assert_eq!(
            one(&c, "SHOW transaction_isolation").await,
            "repeatable read"
        );
        c.batch_execute("SELECT 1").await.unwrap();
        assert_eq!(
            fails(&c, "SET TRANSACTION ISOLATION LEVEL READ COMMITTED").await,
            "25001"
        );
        c.batch_execute("ROLLBACK").await.unwrap();

        // The session's default.
        c.batch_execute("SET default_transaction_isolation = 'read committed'")
            .await
            .unwrap();
        c.batch_execute("BEGIN").await.unwrap();
        assert_eq!(
            one(&c, "SHOW transaction_isolation").await,
            "read committed"
        );
        c.batch_execute("COMMIT").await.unwrap();
        c.batch_execute(
            "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL REPEATABLE READ",
        )
        .await
        .unwrap();
        assert_eq!(
            one(&c, "SHOW default_transaction_isolation").await,
            "repeatable read"
        );

        // SERIALIZABLE is refused, not silently weakened; nonsense is 22023.
        assert_eq!(
            fails(&c, "BEGIN ISOLATION LEVEL SERIALIZABLE").await,
            "0A000"
        );
        assert_eq!(
            fails(&c, "SET default_transaction_isolation = 'serializable'").await,
            "0A000"
        );
        assert_eq!(
            fails(&c, "SET default_transaction_isolation = 'sometimes'").await,
            "22023"
        );
        // The refused BEGIN began nothing.
        assert_eq!(
            one(&c, "SHOW transaction_isolation").await,
            "repeatable read"
        );
    });
}

#[test]
fn read_committed_statements_see_commits_repeatable_read_ones_do_not() {
    let server = Server::start();
    server.rt.block_on(async {
        let (a, b) = two_sessions_and_t(&server).await;
        a.batch_execute("BEGIN ISOLATION LEVEL READ COMMITTED; INSERT INTO t VALUES (2, 0)")
            .await
            .unwrap();
        b.batch_execute("UPDATE t SET v = 5 WHERE k = 1; INSERT INTO t VALUES (3, 0)")
            .await
            .unwrap();
        // The next statement sees B's commit, with A's own row on top.
        assert_eq!(
            text_rows(&a, "SELECT k, v FROM t ORDER BY k").await,
            [["1", "5"], ["2", "0"], ["3", "0"]]
        );
        // An update computed from B's committed value.
        a.batch_execute("UPDATE t SET v = v + 1 WHERE k = 1")
            .await
            .unwrap();
        a.batch_execute("COMMIT").await.unwrap();
        assert_eq!(one(&b, "SELECT v FROM t WHERE k = 1").await, "6");

        // REPEATABLE READ keeps its first statement's snapshot.
        a.batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT 1")
            .await
            .unwrap();
        b.batch_execute("UPDATE t SET v = 7 WHERE k = 1")
            .await
            .unwrap();
        assert_eq!(one(&a, "SELECT v FROM t WHERE k = 1").await, "6");
        assert_eq!(
            fails(&a, "UPDATE t SET v = v + 1 WHERE k = 1").await,
            "40001"
        );
        a.batch_execute("ROLLBACK").await.unwrap();
    });
}

/// Sessions incrementing one row, and the blocks each runs.
const HOT_SESSIONS: usize = 4;
const HOT_BLOCKS_PER_SESSION: usize = 25;

/// `block` run [`HOT_BLOCKS_PER_SESSION`] times from each of
/// [`HOT_SESSIONS`] sessions at once; any error fails the test.
async fn blocks_from_sessions(server: &Server, block: &'static str) {
    let mut sessions = Vec::new();
    for s in 0..HOT_SESSIONS {
        let c = server.connect().await;
        sessions.push(tokio::spawn(async move {
            for i in 0..HOT_BLOCKS_PER_SESSION {
                if let Err(e) = c.batch_execute(block).await {
                    panic!("session {s}, block {i}: {e:?}");
                }
            }
        }));
    }
    for s in sessions {
        s.await.expect("a session's task");
    }
}

#[test]
fn read_committed_increments_of_one_row_wait_for_each_other_and_none_is_lost() {
    let server = Server::start();
    server.rt.block_on(async {
        let setup = server.connect().await;
        setup
            .batch_execute(
                "CREATE TABLE counter (k INT, n INT); INSERT INTO counter VALUES (1, 0), (2, 0)",
            )
            .await
            .unwrap();
        // Two statements per block: the second writes the row others wait
        // for while this block is open (pgbench's tpcb-like branch row).
        blocks_from_sessions(
            &server,
            "BEGIN ISOLATION LEVEL READ COMMITTED; \
             UPDATE counter SET n = n + 1 WHERE k = 2; \
             UPDATE counter SET n = n + 1 WHERE k = 1; \
             COMMIT",
        )
        .await;
        let total = (HOT_SESSIONS * HOT_BLOCKS_PER_SESSION).to_string();
        assert_eq!(
            text_rows(&setup, "SELECT n FROM counter ORDER BY k").await,
            [[total.clone()], [total]],
            "no increment lost or refused"
        );
    });
}

#[test]
fn a_read_committed_update_waits_for_an_open_block_and_applies_to_its_result() {
    let server = Server::start();
    server.rt.block_on(async {
        let (a, b) = two_sessions_and_t(&server).await;
        a.batch_execute("BEGIN; UPDATE t SET v = v + 1")
            .await
            .unwrap();
        b.batch_execute("BEGIN ISOLATION LEVEL READ COMMITTED; SELECT 1")
            .await
            .unwrap();
        let waiting =
            tokio::spawn(
                async move { b.batch_execute("UPDATE t SET v = v * 10").await.map(|()| b) },
            );
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(!waiting.is_finished(), "B waits for A's row");
        a.batch_execute("COMMIT").await.unwrap();
        let b = waiting.await.unwrap().expect("B's update after A's commit");
        b.batch_execute("COMMIT").await.unwrap();
        assert_eq!(one(&a, "SELECT v FROM t").await, "10");
    });
}

#[test]
fn workers_take_jobs_with_for_update_skip_locked_over_the_extended_protocol() {
    let server = Server::start();
    server.rt.block_on(async {
        let setup = server.connect().await;
        setup
            .batch_execute(
                "CREATE TABLE jobs (id BIGINT PRIMARY KEY, state TEXT); \
                 INSERT INTO jobs VALUES (1, 'new'), (2, 'new'), (3, 'new')",
            )
            .await
            .unwrap();
        let take = "SELECT id FROM jobs WHERE state = $1 ORDER BY id LIMIT $2 \
                    FOR UPDATE SKIP LOCKED";
        let a = server.connect().await;
        let b = server.connect().await;
        let mut taken = Vec::new();
        for worker in [&a, &b] {
            worker
                .batch_execute("BEGIN ISOLATION LEVEL READ COMMITTED")
                .await
                .unwrap();
            // Parse, Describe, Bind, Execute: the columns come from the
            // query without its locking clause.
            let rows = worker.query(take, &[&"new", &1i64]).await.unwrap();
            assert_eq!(rows.len(), 1);
            taken.push(rows[0].get::<_, i64>(0));
        }
        assert_eq!(taken, [1, 2], "each worker gets another job");
        // NOWAIT on a held job: 55P03.
        let e = setup
            .query("SELECT id FROM jobs WHERE id = 1 FOR UPDATE NOWAIT", &[])
            .await
            .unwrap_err();
        assert_eq!(sqlstate(&e).0, "55P03");
        for (worker, id) in [(&a, 1i64), (&b, 2)] {
            worker
                .execute("UPDATE jobs SET state = 'done' WHERE id = $1", &[&id])
                .await
                .unwrap();
            worker.batch_execute("COMMIT").await.unwrap();
        }
        assert_eq!(
            text_rows(&setup, "SELECT id, state FROM jobs ORDER BY id").await,
            [["1", "done"], ["2", "done"], ["3", "new"]]
        );
    });
}

#[test]
fn a_statement_timeout_ends_a_wait_for_a_held_row() {
    let server = Server::start();
    server.rt.block_on(async {
        let (a, b) = two_sessions_and_t(&server).await;
        a.batch_execute("BEGIN; UPDATE t SET v = 1").await.unwrap();
        b.batch_execute("SET statement_timeout = '300ms'")
            .await
            .unwrap();
        // 57014 from the timeout, not 55P03 from the wait's own 10-s bound.
        assert_eq!(fails(&b, "UPDATE t SET v = 2").await, "57014");
        assert_eq!(fails(&b, "SELECT * FROM t FOR UPDATE").await, "57014");
        a.batch_execute("COMMIT").await.unwrap();
        b.batch_execute("UPDATE t SET v = v + 10").await.unwrap();
        assert_eq!(one(&b, "SELECT v FROM t").await, "11");
    });
}

#[test]
fn read_committed_upserts_of_one_new_key_from_several_sessions_all_land() {
    let server = Server::start();
    server.rt.block_on(async {
        let setup = server.connect().await;
        setup
            .batch_execute("CREATE TABLE tally (name TEXT PRIMARY KEY, n INT NOT NULL)")
            .await
            .unwrap();
        // The key does not exist when the first blocks start: they insert
        // it at once, and each waits for the others' uncommitted insert,
        // then updates.
        blocks_from_sessions(
            &server,
            "BEGIN ISOLATION LEVEL READ COMMITTED; SELECT 1; \
             INSERT INTO tally VALUES ('x', 1) \
             ON CONFLICT (name) DO UPDATE SET n = tally.n + 1; \
             COMMIT",
        )
        .await;
        let total = (HOT_SESSIONS * HOT_BLOCKS_PER_SESSION).to_string();
        assert_eq!(
            text_rows(&setup, "SELECT name, n FROM tally").await,
            [["x".to_string(), total]],
            "one row, no upsert lost or refused"
        );
    });
}
