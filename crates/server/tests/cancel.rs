//! Cancel requests: tokio-postgres' `cancel_query` (a CancelRequest with the
//! session's BackendKeyData on a second connection) stops the statement the
//! session runs with 57014, and the session goes on. No timing is assumed:
//! the cancel is repeated until the statement has returned.

mod common;

use common::{LONG, cancel_until_done, sqlstate, with_client};
use tokio_postgres::Client;

/// Runs `select count(*) from nation` until it is not cancelled: a cancel
/// request is asynchronous (as in PostgreSQL), so one still on its way when
/// the cancelled statement returned may stop the next statement too.
async fn session_goes_on(c: &Client) {
    for _ in 0..20 {
        match c.query_one("select count(*) from nation", &[]).await {
            Ok(row) => {
                assert_eq!(row.get::<_, i64>(0), 25);
                return;
            }
            Err(e) => assert_eq!(sqlstate(&e).0, "57014", "{e:?}"),
        }
    }
    panic!("every statement was cancelled");
}

#[test]
fn cancel_request_stops_the_running_statement() {
    with_client(async |c| {
        c.simple_query("CALL maestro.load_tpch(0.01)")
            .await
            .unwrap();
        let token = c.cancel_token();

        for extended in [false, true] {
            let query = async {
                if extended {
                    c.query(LONG, &[]).await.map(|_| ())
                } else {
                    c.simple_query(LONG).await.map(|_| ())
                }
            };
            let result = cancel_until_done(query, &token).await;
            let e = result.expect_err("the statement is cancelled");
            let (code, msg) = sqlstate(&e);
            assert_eq!(code, "57014", "{msg}");
            assert_eq!(msg, "canceling statement due to user request");
            session_goes_on(c).await;
        }
    });
}

/// `SET statement_timeout` stops a statement by itself (57014 with the
/// timeout's message); 0 turns it off again.
#[test]
fn statement_timeout_stops_a_long_statement() {
    with_client(async |c| {
        c.simple_query("CALL maestro.load_tpch(0.01)")
            .await
            .unwrap();
        // 1 ms: LONG joins 36 M pairs, far beyond it.
        c.simple_query("SET statement_timeout = 1").await.unwrap();
        let e = c.query(LONG, &[]).await.unwrap_err();
        let (code, msg) = sqlstate(&e);
        assert_eq!(code, "57014", "{msg}");
        assert_eq!(msg, "canceling statement due to statement timeout");
        c.simple_query("SET statement_timeout = 0").await.unwrap();
        let n: i64 = c
            .query_one("select count(*) from nation", &[])
            .await
            .unwrap()
            .get(0);
        assert_eq!(n, 25);
    });
}
