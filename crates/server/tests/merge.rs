//! Main + delta over the wire: writes land in a table's delta, a commit
//! that leaves a large delta queues a background merge (a scheduler job),
//! `CALL maestro.merge()` merges at once, and clients see the same rows
//! before and after.

mod common;

use std::time::{Duration, Instant};

use common::{Server, sqlstate};
use maestro_server::Engine;
use tokio_postgres::SimpleQueryMessage;

/// The table's delta rows (appended + deletion marks) as the store holds it.
fn delta_rows(engine: &Engine, table: &str) -> usize {
    let store = engine.store();
    let mut t = store.begin().unwrap();
    let view = store.view(&mut t);
    let n = view
        .entry(table)
        .unwrap()
        .1
        .live_delta()
        .map_or(0, |d| d.size());
    t.abort();
    n
}

async fn first_cell(c: &tokio_postgres::Client, sql: &str) -> String {
    c.simple_query(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e:?}"))
        .into_iter()
        .find_map(|m| match m {
            SimpleQueryMessage::Row(r) => r.get(0).map(str::to_string),
            _ => None,
        })
        .expect("a row")
}

#[test]
fn writes_fill_the_delta_and_merges_fold_it_without_changing_answers() {
    let server = Server::start();
    server.rt.block_on(async {
        let c = server.connect().await;
        c.batch_execute("CREATE TABLE m (k BIGINT, v DECIMAL(10,2))")
            .await
            .unwrap();
        // Below the background bound (1024 rows): stays in the delta.
        let values: Vec<String> = (0..500).map(|k| format!("({k}, {k}.50)")).collect();
        c.batch_execute(&format!("INSERT INTO m VALUES {}", values.join(", ")))
            .await
            .unwrap();
        c.batch_execute("DELETE FROM m WHERE k < 100")
            .await
            .unwrap();
        assert_eq!(delta_rows(&server.engine, "m"), 600);
        let sum = "SELECT count(*), sum(v) FROM m";
        let before = first_cell(&c, sum).await;
        assert_eq!(before, "400");

        c.batch_execute("CALL maestro.merge()").await.unwrap();
        assert_eq!(delta_rows(&server.engine, "m"), 0);
        assert_eq!(first_cell(&c, sum).await, before);
        let e = c.simple_query("CALL maestro.merge(1)").await.unwrap_err();
        assert_eq!(sqlstate(&e).0, "22023");

        // Past the bound: the commit queues a background merge, which
        // folds the delta while the session goes on. Generous bound: the
        // merge of 2 400 rows takes milliseconds.
        let values: Vec<String> = (1000..3000).map(|k| format!("({k}, 1.00)")).collect();
        c.batch_execute(&format!("INSERT INTO m VALUES {}", values.join(", ")))
            .await
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        while delta_rows(&server.engine, "m") != 0 {
            assert!(
                Instant::now() < deadline,
                "no background merge within 60 s (delta {} rows)",
                delta_rows(&server.engine, "m")
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(first_cell(&c, "SELECT count(*) FROM m").await, "2400");
        assert_eq!(
            first_cell(&c, "SELECT sum(v) FROM m WHERE k >= 1000").await,
            "2000.00"
        );
    });
}

/// TPC-H's refresh functions as procedures: RF1 adds a set's orders and
/// line items to the deltas, RF2 deletes as many loaded ones; a set applied
/// twice, a set out of range, and a refresh before a load are errors that
/// leave the session usable.
#[test]
fn tpch_refresh_procedures_write_the_deltas() {
    let server = Server::start();
    server.rt.block_on(async {
        let c = server.connect().await;
        let e = c
            .batch_execute("CALL maestro.tpch_rf1(1)")
            .await
            .unwrap_err();
        let (code, msg) = sqlstate(&e);
        assert_eq!(code, "22023", "{msg}");
        assert!(msg.contains("load_tpch"), "{msg}");
        c.batch_execute("CALL maestro.load_tpch(0.01)")
            .await
            .unwrap();
        let count = "SELECT count(*) FROM orders";
        assert_eq!(first_cell(&c, count).await, "15000");
        c.batch_execute("CALL maestro.tpch_rf1(1)").await.unwrap();
        assert_eq!(first_cell(&c, count).await, "15015");
        let orders_delta = delta_rows(&server.engine, "orders");
        assert_eq!(orders_delta, 15);
        assert!(delta_rows(&server.engine, "lineitem") > 15);
        c.batch_execute("CALL maestro.tpch_rf2(1)").await.unwrap();
        assert_eq!(first_cell(&c, count).await, "15000");
        assert_eq!(delta_rows(&server.engine, "orders"), 30);
        // Every line item of a deleted order went with it.
        let orphans = "SELECT count(*) FROM lineitem WHERE l_orderkey NOT IN \
                       (SELECT o_orderkey FROM orders)";
        assert_eq!(first_cell(&c, orphans).await, "0");
        // Sets generated ahead are the sets generated in the call.
        c.batch_execute("CALL maestro.tpch_refresh_sets(2, 3)")
            .await
            .unwrap();
        let key_sum = "SELECT sum(o_orderkey) FROM orders";
        let before: i64 = first_cell(&c, key_sum).await.parse().unwrap();
        c.batch_execute("CALL maestro.tpch_rf1(2)").await.unwrap();
        assert_eq!(first_cell(&c, count).await, "15015");
        let after: i64 = first_cell(&c, key_sum).await.parse().unwrap();
        let set = maestro_tpch::rf1_rows(0.01, 2).unwrap();
        let keys: i64 = set.orders.i64("o_orderkey").unwrap().iter().sum();
        assert_eq!(after - before, keys);
        c.batch_execute("CALL maestro.tpch_rf2(2)").await.unwrap();
        for bad in [
            "CALL maestro.tpch_refresh_sets(3, 2)",
            "CALL maestro.tpch_refresh_sets(0, 1)",
            "CALL maestro.tpch_refresh_sets(1)",
            "CALL maestro.tpch_rf1(1)",
            "CALL maestro.tpch_rf1(0)",
            "CALL maestro.tpch_rf2(100000)",
            "CALL maestro.tpch_rf2('x')",
            "CALL maestro.tpch_rf1()",
        ] {
            let e = c.batch_execute(bad).await.unwrap_err();
            let (code, msg) = sqlstate(&e);
            assert_eq!(code, "22023", "{bad}: {msg}");
        }
        assert_eq!(first_cell(&c, count).await, "15000");
    });
}
