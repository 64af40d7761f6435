//! `maestro serve --data-dir`: rows written over the wire survive a SIGKILL
//! (checkpoints running meanwhile), and the flags that do not fit exit 2.

mod common;

use std::path::Path;

use common::server::Server;
use common::{maestro, stderr};
use tokio_postgres::{Client, SimpleQueryMessage};

/// `maestro serve --data-dir dir`, checkpointing every 0.2 s.
fn start(dir: &Path) -> Server {
    let dir = dir.to_str().expect("a UTF-8 temporary directory");
    Server::start(&["--data-dir", dir, "--checkpoint-interval-s", "0.2"])
}

async fn rows(c: &Client, sql: &str) -> Vec<Vec<String>> {
    c.simple_query(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e:?}"))
        .into_iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::Row(r) => Some(
                (0..r.len())
                    .map(|i| r.get(i).unwrap_or("NULL").to_string())
                    .collect(),
            ),
            _ => None,
        })
        .collect()
}

async fn run(c: &Client, sql: &str) {
    c.batch_execute(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e:?}"));
}

const DUMP: &str = "select id, name, amount, day from item order by id";

#[test]
fn rows_survive_a_kill_and_a_restart() {
    let dir = std::env::temp_dir().join(format!("maestro-serve-durable-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();

    let server = start(&dir);
    server.wait_for("created: first checkpoint");
    let before = rt.block_on(async {
        let c = server.connect_to("maestro").await;
        run(
            &c,
            "create table item (id integer, name text, amount decimal(10,2), day date)",
        )
        .await;
        for i in 0..20 {
            run(
                &c,
                &format!(
                    "insert into item values ({i}, 'n{i}', {i}.25, '2026-01-{:02}')",
                    i + 1
                ),
            )
            .await;
        }
        // Writes go on while checkpoints run (every 0.2 s).
        server.wait_for("checkpoint:");
        run(
            &c,
            "update item set name = 'updated' where id in (0, 3, 6, 9, 12, 15)",
        )
        .await;
        run(&c, "delete from item where id > 15").await;
        run(
            &c,
            "begin; insert into item values (99, 'rolled back', 0, '2026-01-01'); rollback",
        )
        .await;
        run(
            &c,
            "create table scratch (a integer); insert into scratch values (1); drop table scratch",
        )
        .await;
        run(
            &c,
            "begin; insert into item values (100, 'in a txn', 1.5, '2026-11-26'); commit",
        )
        .await;
        rows(&c, DUMP).await
    });
    assert_eq!(before.len(), 17, "{before:?}");
    assert!(before.iter().any(|r| r[1] == "updated"));
    drop(server); // SIGKILL: no shutdown path runs.

    let server = start(&dir);
    let line = server.wait_for("recovered");
    assert!(line.contains("recovered 1 tables (17 rows)"), "{line}");
    let after = rt.block_on(async {
        let c = server.connect_to("maestro").await;
        let after = rows(&c, DUMP).await;
        let scratch = c.simple_query("select a from scratch").await;
        assert!(scratch.is_err(), "the dropped table came back");
        after
    });
    assert_eq!(after, before);
    drop(server);

    // --sf with a directory that holds a database is a usage error.
    let out = maestro(&[
        "serve",
        "--port",
        "0",
        "--sf",
        "0.01",
        "--data-dir",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("already holds a database"),
        "{}",
        stderr(&out)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn serve_durability_flags_that_do_not_fit_exit_2() {
    for line in [
        "serve --port 0 --durability sync",
        "serve --port 0 --data-dir /tmp/maestro-serve-never --checkpoint-interval-s 0",
        "serve --port 0 --data-dir /tmp/maestro-serve-never --group-delay-us -1",
    ] {
        let args: Vec<&str> = line.split_whitespace().collect();
        let out = maestro(&args);
        assert_eq!(out.status.code(), Some(2), "{line}: {}", stderr(&out));
        assert!(stderr(&out).contains("error"), "{line}: {}", stderr(&out));
    }
    assert!(!Path::new("/tmp/maestro-serve-never").exists());
}
