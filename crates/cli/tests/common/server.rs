//! A running `maestro serve` for the tests that talk to it over TCP: it picks
//! a free port itself (`--port 0`) and announces it on stdout; its stderr is
//! kept line by line for `wait_for`.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use tokio_postgres::{Client, NoTls};

/// Generous: loading TPC-H in a debug build on a machine shared with other
/// builds. Only turns a hang into a failure.
pub const WAIT: Duration = Duration::from_secs(600);

/// A running `maestro serve`, killed (SIGKILL) when dropped.
pub struct Server {
    child: Child,
    pub port: u16,
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
    /// `maestro serve --port 0 --contexts 2` with `args` appended.
    pub fn start(args: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_maestro"))
            .args(["serve", "--port", "0", "--contexts", "2"])
            .args(args)
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
    pub fn wait_for(&self, what: &str) -> String {
        let mut seen = Vec::new();
        loop {
            match self.stderr.recv_timeout(WAIT) {
                Ok(line) if line.contains(what) => return line,
                Ok(line) => seen.push(line),
                Err(e) => panic!("no {what:?} on stderr ({e}): {seen:#?}"),
            }
        }
    }

    /// A tokio-postgres client of database `dbname` (the server accepts any).
    pub async fn connect_to(&self, dbname: &str) -> Client {
        let (client, connection) = tokio_postgres::connect(
            &format!(
                "host=127.0.0.1 port={} user=maestro dbname={dbname}",
                self.port
            ),
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
