//! Sessions have a thread each, so their number is bounded (`maestro serve
//! --max-connections`, `Engine::set_sessions_max`): a connection beyond the
//! bound is refused with 53300 as PostgreSQL's `max_connections` does, a
//! session that ends gives its place back, and a cancel request — a
//! connection of its own — is served at the bound.

mod common;

use std::time::{Duration, Instant};

use common::{LONG, Server, cancel_until_done, sqlstate};
use tokio_postgres::NoTls;

/// Generous: a session's thread ends once its client's socket closes.
const DEADLINE: Duration = Duration::from_secs(60);

async fn connect(server: &Server) -> Result<tokio_postgres::Client, tokio_postgres::Error> {
    let (client, connection) = tokio_postgres::connect(
        &format!("host=127.0.0.1 port={} user=maestro dbname=x", server.port),
        NoTls,
    )
    .await?;
    tokio::spawn(connection);
    Ok(client)
}

#[test]
fn a_connection_beyond_the_bound_is_refused_until_a_session_ends() {
    let server = Server::start();
    server.engine.set_sessions_max(2);
    server.rt.block_on(async {
        let a = connect(&server).await.expect("first session");
        let b = connect(&server).await.expect("second session");
        let e = connect(&server).await.expect_err("the third is refused");
        let (code, message) = sqlstate(&e);
        assert_eq!(
            (code.as_str(), message.as_str()),
            ("53300", "sorry, too many clients already")
        );
        // The sessions admitted go on.
        for c in [&a, &b] {
            assert_eq!(
                c.query_one("select 1", &[]).await.unwrap().get::<_, i64>(0),
                1
            );
        }
        drop(a);
        let start = Instant::now();
        while server.engine.sessions_live() > 1 {
            assert!(
                start.elapsed() < DEADLINE,
                "the ended session's place came back"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let c = connect(&server).await.expect("a place is free again");
        assert_eq!(
            c.query_one("select 2", &[]).await.unwrap().get::<_, i64>(0),
            2
        );
        assert_eq!(server.engine.sessions_live(), 2);
    });
}

#[test]
fn a_cancel_request_is_served_at_the_bound() {
    let server = Server::start();
    server.engine.set_sessions_max(1);
    server.rt.block_on(async {
        let c = connect(&server).await.expect("the one session");
        c.simple_query("CALL maestro.load_tpch(0.01)")
            .await
            .unwrap();
        let token = c.cancel_token();
        let result = cancel_until_done(c.simple_query(LONG), &token).await;
        let e = result.expect_err("the statement is cancelled");
        assert_eq!(sqlstate(&e).0, "57014");
    });
}
