//! What the wire tests share: a server on a free port of this process
//! (its own tokio runtime and scheduler), and clients connected to it.

#![allow(dead_code)]

use std::sync::Arc;

use maestro_scheduler::{Scheduler, SchedulerConfig};
use maestro_server::Engine;
use tokio_postgres::{Client, NoTls, SimpleQueryMessage};

/// A server listening on 127.0.0.1 (its port), running on `rt`.
pub struct Server {
    pub port: u16,
    pub rt: tokio::runtime::Runtime,
    /// The scheduler statements run on (its classes and their counters).
    pub scheduler: Arc<Scheduler>,
    /// The database it serves (to load data without a client).
    pub engine: Arc<Engine>,
}

impl Server {
    /// Starts a server with an empty database.
    pub fn start() -> Server {
        Server::start_with_classes(&[])
    }

    /// Starts a server with an empty database and the workload classes
    /// `specs` (`maestro serve --class` syntax) defined.
    pub fn start_with_classes(specs: &[&str]) -> Server {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("tokio runtime");
        let scheduler =
            Arc::new(Scheduler::new(SchedulerConfig::single_hints()).expect("scheduler starts"));
        for spec in specs {
            let spec: maestro_scheduler::ClassSpec = spec.parse().expect("a valid class spec");
            scheduler.define_class(&spec).expect("class defined");
        }
        let engine = Arc::new(Engine::new(
            Arc::clone(&scheduler),
            "static".parse().expect("policy"),
        ));
        let listener = rt
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .expect("binds a free port");
        let port = listener.local_addr().expect("address").port();
        rt.spawn(maestro_server::serve(listener, Arc::clone(&engine)));
        Server {
            port,
            rt,
            scheduler,
            engine,
        }
    }

    /// A raw socket to the server, its startup message sent (user and
    /// database `maestro`, protocol 3.0); the caller reads the answer.
    pub fn raw_startup(&self) -> std::net::TcpStream {
        use std::io::Write;
        let mut s = std::net::TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.set_nodelay(true).unwrap();
        let params = b"user\0maestro\0database\0maestro\0\0";
        let mut startup = (8 + params.len() as i32).to_be_bytes().to_vec();
        startup.extend_from_slice(&196608i32.to_be_bytes());
        startup.extend_from_slice(params);
        s.write_all(&startup).unwrap();
        s
    }

    pub async fn connect(&self) -> Client {
        self.connect_with("").await
    }

    /// [`connect`](Self::connect) with more connection parameters
    /// (`key=value …`, e.g. `application_name=olap`).
    pub async fn connect_with(&self, params: &str) -> Client {
        let (client, connection) = tokio_postgres::connect(
            &format!(
                "host=127.0.0.1 port={} user=maestro dbname=tpch {params}",
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

/// Runs `body` with one client of a fresh server (empty database).
pub fn with_client(body: impl AsyncFnOnce(&mut Client)) {
    let server = Server::start();
    server.rt.block_on(async {
        let mut client = server.connect().await;
        body(&mut client).await;
    });
}

/// The SQLSTATE code and message of a failed statement.
pub fn sqlstate(e: &tokio_postgres::Error) -> (String, String) {
    let db = e
        .as_db_error()
        .unwrap_or_else(|| panic!("not a server error: {e:?}"));
    (db.code().code().to_string(), db.message().to_string())
}

/// The rows of a simple query, as text (NULL as "NULL").
pub async fn text_rows(c: &Client, sql: &str) -> Vec<Vec<String>> {
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

/// The first column of a simple query's rows, as text (NULL as "NULL").
pub fn first_column(msgs: Vec<SimpleQueryMessage>) -> Vec<String> {
    msgs.into_iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::Row(r) => Some(r.get(0).unwrap_or("NULL").to_string()),
            _ => None,
        })
        .collect()
}

/// A self-join of lineitem on the supplier (36 M pairs at SF 0.01): long
/// enough to be running when a cancel or a timeout arrives.
pub const LONG: &str = "select count(*), sum(a.l_quantity) from lineitem a, lineitem b \
                        where a.l_suppkey = b.l_suppkey";

/// Runs `query` while sending a cancel request with `token` every 50 ms
/// until it returns: no timing is assumed (a cancel that arrives before the
/// statement runs, or after it, changes nothing).
pub async fn cancel_until_done<T>(
    query: impl std::future::Future<Output = Result<T, tokio_postgres::Error>>,
    token: &tokio_postgres::CancelToken,
) -> Result<T, tokio_postgres::Error> {
    tokio::pin!(query);
    loop {
        tokio::select! {
            r = &mut query => return r,
            _ = tokio::time::sleep(std::time::Duration::from_millis(50)) => {
                token.cancel_query(NoTls).await.unwrap();
            }
        }
    }
}

/// One backend message read from a raw socket: its type byte and body.
pub fn read_message(s: &mut std::net::TcpStream) -> (u8, Vec<u8>) {
    use std::io::Read;
    let mut head = [0u8; 5];
    s.read_exact(&mut head).unwrap();
    let len = i32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
    let mut body = vec![0u8; len - 4];
    s.read_exact(&mut body).unwrap();
    (head[0], body)
}
