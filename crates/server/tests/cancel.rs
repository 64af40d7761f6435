//! Cancel requests: tokio-postgres' `cancel_query` (a CancelRequest with the
//! session's BackendKeyData on a second connection) stops the statement the
//! session runs with 57014, and the session goes on. No timing is assumed:
//! the cancel is repeated until the statement has returned.

mod common;

use std::time::Duration;

use common::{Server, sqlstate};
use tokio_postgres::NoTls;

/// A self-join of lineitem on the supplier (36 M pairs at SF 0.01): long
/// enough to be running when a cancel arrives.
const LONG: &str = "select count(*), sum(a.l_quantity) from lineitem a, lineitem b \
                    where a.l_suppkey = b.l_suppkey";

#[test]
fn cancel_request_stops_the_running_statement() {
    let server = Server::start();
    server.rt.block_on(async {
        let c = server.connect().await;
        c.simple_query("CALL maestro.load_tpch(0.01)")
            .await
            .unwrap();
        let token = c.cancel_token();
        // A cancel while nothing runs is ignored.
        token.cancel_query(NoTls).await.unwrap();
        let n: i64 = c
            .query_one("select count(*) from region", &[])
            .await
            .unwrap()
            .get(0);
        assert_eq!(n, 5);

        for extended in [false, true] {
            let query = async {
                if extended {
                    c.query(LONG, &[]).await.map(|_| ())
                } else {
                    c.simple_query(LONG).await.map(|_| ())
                }
            };
            tokio::pin!(query);
            let result = loop {
                tokio::select! {
                    r = &mut query => break r,
                    _ = tokio::time::sleep(Duration::from_millis(50)) => {
                        token.cancel_query(NoTls).await.unwrap();
                    }
                }
            };
            let e = result.expect_err("the statement is cancelled");
            let (code, msg) = sqlstate(&e);
            assert_eq!(code, "57014", "{msg}");
            assert_eq!(msg, "canceling statement due to user request");
            // The session goes on.
            let n: i64 = c
                .query_one("select count(*) from nation", &[])
                .await
                .unwrap()
                .get(0);
            assert_eq!(n, 25, "extended: {extended}");
        }
    });
}
