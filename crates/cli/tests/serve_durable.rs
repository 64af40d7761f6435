//! `maestro serve --data-dir`: rows written over the wire survive a SIGKILL
//! (checkpoints running meanwhile), and the flags that do not fit exit 2.

mod common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use common::{maestro, stderr};
use tokio_postgres::{Client, NoTls, SimpleQueryMessage};

/// Generous: a debug build on a machine shared with other builds.
const WAIT: Duration = Duration::from_secs(600);

/// A running `maestro serve`, killed (SIGKILL) when dropped.
struct Server {
    child: Child,
    port: u16,
    stderr: mpsc::Receiver<String>,
}

fn lines(from: impl std::io::Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(from).lines() {
            let Ok(line) = line else { break };
            let _ = tx.send(line);
        }
    });
    rx
}

impl Server {
    fn start(dir: &Path) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_maestro"))
            .args(["serve", "--port", "0", "--contexts", "2", "--data-dir"])
            .arg(dir)
            .args(["--checkpoint-interval-s", "0.2"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("maestro serve starts");
        let stdout = lines(child.stdout.take().expect("stdout"));
        let stderr = lines(child.stderr.take().expect("stderr"));
        let line = stdout
            .recv_timeout(WAIT)
            .expect("the server announces its address");
        let port = line
            .rsplit(':')
            .next()
            .and_then(|p| p.trim().parse().ok())
            .unwrap_or_else(|| panic!("no port in {line:?}"));
        Server {
            child,
            port,
            stderr,
        }
    }

    /// The first stderr line containing `what` (every line read is kept in
    /// `seen` for the failure message).
    fn wait_for(&self, what: &str) -> String {
        let mut seen = Vec::new();
        loop {
            match self.stderr.recv_timeout(WAIT) {
                Ok(line) if line.contains(what) => return line,
                Ok(line) => seen.push(line),
                Err(e) => panic!("no {what:?} on stderr ({e}): {seen:#?}"),
            }
        }
    }

    async fn connect(&self) -> Client {
        let (client, connection) = tokio_postgres::connect(
            &format!("host=127.0.0.1 port={} user=maestro", self.port),
            NoTls,
        )
        .await
        .expect("connects");
        tokio::spawn(connection);
        client
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
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

    let server = Server::start(&dir);
    server.wait_for("created: first checkpoint");
    let before = rt.block_on(async {
        let c = server.connect().await;
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

    let server = Server::start(&dir);
    let line = server.wait_for("recovered");
    assert!(line.contains("recovered 1 tables (17 rows)"), "{line}");
    let after = rt.block_on(async {
        let c = server.connect().await;
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
