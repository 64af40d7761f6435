//! Autocommitted writes of one table from several sessions: a statement that
//! meets another transaction's write of its table runs again on a fresh
//! snapshot once that transaction finished, instead of failing with 40001
//! (the table is the unit of versioning). Explicit transaction blocks still
//! get 40001 (`dml.rs`).

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
fn an_autocommitted_write_waits_for_an_open_transaction_of_its_table() {
    let server = Server::start();
    server.rt.block_on(async {
        let a = server.connect().await;
        let c = server.connect().await;
        a.batch_execute("CREATE TABLE t (k INT, v INT); INSERT INTO t VALUES (1, 0)")
            .await
            .unwrap();
        a.batch_execute("BEGIN; UPDATE t SET v = v + 1")
            .await
            .unwrap();
        let retries_before = server.engine.autocommit_retries();
        // C's autocommitted update meets A's uncommitted version.
        let waiting = tokio::spawn(async move { c.batch_execute("UPDATE t SET v = v + 10").await });
        // Generous bound: only a stalled machine takes this long.
        let start = Instant::now();
        while server.engine.autocommit_retries() == retries_before {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "the autocommitted update never met the open transaction"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert!(!waiting.is_finished(), "C finished while A held the table");
        a.batch_execute("COMMIT").await.unwrap();
        waiting
            .await
            .expect("C's task")
            .expect("C's update runs after A's commit");
        let v = first_column(a.simple_query("SELECT v FROM t").await.unwrap());
        assert_eq!(v, ["11"], "C's update applied on top of A's");
    });
}
