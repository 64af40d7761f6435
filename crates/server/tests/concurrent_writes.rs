//! Autocommitted writes of one table from several sessions: writes are
//! installed at commit, conflicts are per row (`maestro_sql` `rebase.rs`),
//! a write of a row an open block changed waits for that block
//! (`row_locks.rs`), and a statement that meets a concurrent change of its
//! rows runs again on a fresh snapshot instead of failing with 40001.
//! REPEATABLE READ blocks get 40001 for a row another committed first
//! (`dml.rs`); READ COMMITTED blocks in `isolation.rs`.

mod common;

use std::time::{Duration, Instant};

use common::{Server, first_column};

/// Sessions writing at once, and the statements each sends.
const SESSIONS: usize = 4;
const STATEMENTS_PER_SESSION: usize = 60;

#[test]
fn concurrent_autocommitted_writes_of_one_table_all_land() {
    let server = Server::start();
    server.rt.block_on(async {
        let setup = server.connect().await;
        setup
            .batch_execute(
                "CREATE TABLE counter (k INT, n INT); INSERT INTO counter VALUES (1, 0);\
                 CREATE TABLE log (session INT, i INT)",
            )
            .await
            .unwrap();
        let mut tasks = Vec::new();
        for s in 0..SESSIONS {
            let client = server.connect().await;
            tasks.push(tokio::spawn(async move {
                for i in 0..STATEMENTS_PER_SESSION {
                    // Alternating an update of the one counter row (a lost
                    // update would show in its final value) and an insert.
                    let sql = if i % 2 == 0 {
                        "UPDATE counter SET n = n + 1 WHERE k = 1".to_string()
                    } else {
                        format!("INSERT INTO log VALUES ({s}, {i})")
                    };
                    if let Err(e) = client.batch_execute(&sql).await {
                        panic!("session {s}, statement {i} ({sql}): {e:?}");
                    }
                }
            }));
        }
        for t in tasks {
            t.await.expect("a session's task");
        }
        let updates = SESSIONS * STATEMENTS_PER_SESSION.div_ceil(2);
        let inserts = SESSIONS * (STATEMENTS_PER_SESSION / 2);
        let n = first_column(setup.simple_query("SELECT n FROM counter").await.unwrap());
        assert_eq!(n, [updates.to_string()], "no update lost");
        let count = first_column(
            setup
                .simple_query("SELECT count(*) FROM log")
                .await
                .unwrap(),
        );
        assert_eq!(count, [inserts.to_string()], "no insert lost");
    });
}

#[test]
fn an_autocommitted_write_waits_for_an_open_block_holding_its_row_and_applies_after_it() {
    let server = Server::start();
    server.rt.block_on(async {
        let a = server.connect().await;
        let c = server.connect().await;
        a.batch_execute("CREATE TABLE t (k INT, v INT); INSERT INTO t VALUES (1, 0), (2, 0)")
            .await
            .unwrap();
        a.batch_execute("BEGIN; UPDATE t SET v = v + 1 WHERE k = 1")
            .await
            .unwrap();
        // Another row: no wait for A's block.
        c.batch_execute("UPDATE t SET v = v + 5 WHERE k = 2")
            .await
            .unwrap();
        // A's row: C waits for A's block (`row_locks.rs`), then runs again
        // on the row A committed, as under PostgreSQL — no 40001, no lost
        // update.
        let waiting = tokio::spawn(async move {
            c.batch_execute("UPDATE t SET v = v + 10 WHERE k = 1")
                .await
                .map(|()| c)
        });
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(!waiting.is_finished(), "C waits for A's row");
        let start = Instant::now();
        a.batch_execute("COMMIT").await.unwrap();
        let c = waiting.await.unwrap().expect("C's update after A's commit");
        // Generous bound: C must not have waited for its wait's bound.
        assert!(start.elapsed() < Duration::from_secs(5));
        let v = first_column(c.simple_query("SELECT v FROM t ORDER BY k").await.unwrap());
        assert_eq!(v, ["11", "5"], "both updates of row 1 kept");
    });
}
