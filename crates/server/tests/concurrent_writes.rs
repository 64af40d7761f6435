//! Autocommitted writes of one table from several sessions: writes are
//! installed at commit, conflicts are per row (`maestro_sql` `rebase.rs`),
//! and a statement whose commit meets a concurrent change of its rows runs
//! again on a fresh snapshot instead of failing with 40001. Explicit
//! transaction blocks get 40001 for a row another committed first
//! (`dml.rs`).

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
fn an_autocommitted_write_does_not_wait_for_an_open_block_and_commits_first() {
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
        // A's block installs its writes at its commit: C does not wait.
        let start = Instant::now();
        c.batch_execute("UPDATE t SET v = v + 10").await.unwrap();
        // Generous bound: waiting would take A's whole block (forever here).
        assert!(start.elapsed() < Duration::from_secs(60));
        // First committer wins: A changed the same row and fails.
        let e = a.batch_execute("COMMIT").await.unwrap_err();
        assert_eq!(e.code().map(|c| c.code()), Some("40001"), "{e}");
        let v = first_column(a.simple_query("SELECT v FROM t").await.unwrap());
        assert_eq!(v, ["10"], "C's update kept, A's rolled back");
    });
}
