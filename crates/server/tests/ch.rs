//! CH-benCHmark through the wire protocol: the 22 query texts
//! (`crates/ch/sql/`, the ones DuckDB runs in maestro-ch's answer check)
//! sent by tokio-postgres over TCP to a server holding the deterministic
//! fixture (`maestro_ch::fixture`: one warehouse, 3 000 transactions on a
//! frozen clock), compared with the hand-written plans' answers on the same
//! snapshot — which `crates/ch/tests/answers.rs` checks against DuckDB —
//! under that check's rules (numbers within a relative 1e-9). As the DuckDB
//! script does, a query's ORDER BY gets its select-list columns appended, so
//! ties come in one order.

mod common;

use common::{Server, sqlstate};
use maestro_ch::answer::Answer;
use maestro_ch::sql::total_order;
use std::sync::OnceLock;

use maestro_ch::ChDatabase;
use tokio_postgres::SimpleQueryMessage;

/// Queries the SQL front end cannot run yet, and the start of the error
/// each gives (0A000).
const UNSUPPORTED: &[(u8, &str)] = &[];

/// The fixture, loaded once per test binary.
fn fixture() -> &'static ChDatabase {
    static DB: OnceLock<ChDatabase> = OnceLock::new();
    DB.get_or_init(|| maestro_ch::fixture::fixture_database().expect("the fixture loads"))
}

/// A timestamp's text (`YYYY-MM-DD HH:MM:SS`) as the answers write it
/// (ISO 8601 UTC); other fields unchanged.
fn iso(field: &str) -> String {
    let b = field.as_bytes();
    let is_ts = b.len() == 19
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b' '
        && b[13] == b':'
        && b[16] == b':';
    if is_ts {
        format!("{}T{}Z", &field[..10], &field[11..])
    } else {
        field.to_string()
    }
}

fn quote(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The rows of a simple query as the answers' CSV.
fn csv(messages: &[SimpleQueryMessage]) -> String {
    let mut out = String::new();
    for m in messages {
        match m {
            SimpleQueryMessage::RowDescription(cols) => {
                let names: Vec<&str> = cols.iter().map(|c| c.name()).collect();
                out.push_str(&names.join(","));
                out.push('\n');
            }
            SimpleQueryMessage::Row(r) => {
                let fields: Vec<String> = (0..r.len())
                    .map(|i| r.get(i).map_or(String::new(), |f| quote(&iso(f))))
                    .collect();
                out.push_str(&fields.join(","));
                out.push('\n');
            }
            _ => {}
        }
    }
    out
}

#[test]
fn the_22_ch_queries_as_sql_equal_the_hand_written_plans_over_the_wire() {
    let snap = fixture().snapshot().expect("a snapshot");
    let server = Server::start();
    server.engine.put_ch(&snap).expect("the CH tables go in");
    let mut failures = Vec::new();
    server.rt.block_on(async {
        let c = server.connect().await;
        for q in maestro_ch::QUERIES {
            let n = q.number;
            let expected: Answer = (q.run)(&snap);
            let text = total_order(n, expected.columns.len());
            let unsupported = UNSUPPORTED.iter().find(|(u, _)| *u == n);
            match (c.simple_query(&text).await, unsupported) {
                (Ok(rows), None) => {
                    if let Err(e) = expected.compare_csv(&csv(&rows)) {
                        failures.push(format!("Q{n}: {e}"));
                    }
                }
                (Ok(_), Some(_)) => failures.push(format!(
                    "Q{n} runs now: take it off the unsupported list (and check its answer)"
                )),
                (Err(e), None) => failures.push(format!("Q{n}: {:?}", sqlstate(&e))),
                (Err(e), Some((_, why))) => {
                    let (code, msg) = sqlstate(&e);
                    if code != "0A000" || !msg.starts_with(why) {
                        failures.push(format!("Q{n}: {code} {msg}, expected 0A000 {why}"));
                    }
                }
            }
        }
    });
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn load_ch_checks_its_arguments() {
    let server = Server::start();
    server.rt.block_on(async {
        let c = server.connect().await;
        for bad in [
            "CALL maestro.load_ch()",
            "CALL maestro.load_ch(0)",
            "CALL maestro.load_ch(70000)",
            "CALL maestro.load_ch(1.5)",
            "CALL maestro.load_ch(1, -1)",
            "CALL maestro.load_ch(1, 'soon')",
            "CALL maestro.load_ch(1, 2, 3)",
        ] {
            let e = c.simple_query(bad).await.unwrap_err();
            let (code, msg) = sqlstate(&e);
            assert_eq!(code, "22023", "{bad}: {msg}");
            assert!(msg.contains("maestro.load_ch takes"), "{bad}: {msg}");
        }
    });
}

#[test]
fn ch_tables_hold_nulls_and_timestamps_and_take_writes() {
    let snap = fixture().snapshot().expect("a snapshot");
    let server = Server::start();
    server.engine.put_ch(&snap).expect("the CH tables go in");
    server.rt.block_on(async {
        let c = server.connect().await;
        let one = async |sql: &str| -> Option<String> {
            let rows = c.simple_query(sql).await.unwrap();
            rows.iter()
                .find_map(|m| match m {
                    SimpleQueryMessage::Row(r) => Some(r.get(0).map(str::to_string)),
                    _ => None,
                })
                .flatten()
        };
        // Undelivered orders: no carrier, and lines with no delivery date.
        let undelivered = one("SELECT count(*) FROM orders WHERE o_carrier_id IS NULL").await;
        let new_orders = one("SELECT count(*) FROM new_order").await;
        assert_eq!(undelivered, new_orders);
        let lines = one(
            "SELECT count(*) FROM order_line, new_order WHERE ol_o_id = no_o_id \
             AND ol_d_id = no_d_id AND ol_w_id = no_w_id AND ol_delivery_d IS NULL",
        )
        .await;
        let null_lines = one("SELECT count(*) FROM order_line WHERE ol_delivery_d IS NULL").await;
        assert_eq!(lines, null_lines);
        // Timestamps print as PostgreSQL's and compare with literals.
        assert_eq!(
            one("SELECT max(o_entry_d) FROM orders").await.as_deref(),
            Some("2019-12-31 12:00:00")
        );
        assert_eq!(
            one("SELECT count(*) FROM orders WHERE o_entry_d > '2019-12-31 11:59:59'").await,
            one("SELECT count(*) FROM orders WHERE o_entry_d = '2019-12-31 12:00:00.000000'").await
        );
        // A typed timestamp column in the extended protocol (binary).
        let row = c
            .query_one("SELECT min(o_entry_d) FROM oorder", &[])
            .await
            .unwrap();
        assert_eq!(
            row.columns()[0].type_(),
            &tokio_postgres::types::Type::TIMESTAMP
        );
        // The tables take writes, NULLs kept: Delivery's carrier and
        // delivery date set for one district's oldest new order, the other
        // NULLs untouched; a NULL written back.
        let undelivered: i64 = undelivered.unwrap().parse().unwrap();
        let oldest = one(
            "SELECT min(no_o_id) FROM new_order WHERE no_w_id = 1 AND no_d_id = 1",
        )
        .await
        .unwrap();
        let deliver = format!(
            "UPDATE orders SET o_carrier_id = 7 WHERE o_w_id = 1 AND o_d_id = 1 AND o_id = {oldest}; \
             UPDATE order_line SET ol_delivery_d = '2020-01-01 00:00:00' WHERE ol_w_id = 1 \
             AND ol_d_id = 1 AND ol_o_id = {oldest}; \
             DELETE FROM new_order WHERE no_w_id = 1 AND no_d_id = 1 AND no_o_id = {oldest}"
        );
        c.batch_execute(&deliver).await.unwrap();
        let count = async |sql: &str| -> i64 { one(sql).await.unwrap().parse().unwrap() };
        assert_eq!(
            count("SELECT count(*) FROM orders WHERE o_carrier_id IS NULL").await,
            undelivered - 1
        );
        assert_eq!(
            count("SELECT count(*) FROM orders WHERE o_carrier_id IS NULL").await,
            count("SELECT count(*) FROM new_order").await
        );
        assert_eq!(
            count(&format!(
                "SELECT count(*) FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 1 \
                 AND ol_o_id = {oldest} AND ol_delivery_d IS NULL"
            ))
            .await,
            0
        );
        c.batch_execute(&format!(
            "UPDATE orders SET o_carrier_id = NULL WHERE o_w_id = 1 AND o_d_id = 1 AND o_id = {oldest}"
        ))
        .await
        .unwrap();
        assert_eq!(
            count("SELECT count(*) FROM orders WHERE o_carrier_id IS NULL").await,
            undelivered
        );
        // Keys stay keys: a second row of an order is refused.
        let e = c
            .simple_query(&format!(
                "INSERT INTO orders SELECT * FROM orders WHERE o_w_id = 1 AND o_d_id = 1 \
                 AND o_id = {oldest}"
            ))
            .await
            .unwrap_err();
        assert_eq!(sqlstate(&e).0, "23505");
    });
}

#[test]
fn load_ch_loads_runs_transactions_and_replaces_the_tables() {
    let server = Server::start();
    server.rt.block_on(async {
        let c = server.connect().await;
        let count = async |sql: &str| -> i64 { c.query_one(sql, &[]).await.unwrap().get(0) };
        c.simple_query("CALL maestro.load_ch(1, 0.2)")
            .await
            .unwrap();
        assert_eq!(count("SELECT count(*) FROM warehouse").await, 1);
        assert_eq!(count("SELECT count(*) FROM nation").await, 62);
        assert_eq!(count("SELECT count(*) FROM supplier").await, 10_000);
        // The load's 30 000 orders and whatever New-Order added since.
        let orders = count("SELECT count(*) FROM orders").await;
        assert!(orders >= 30_000, "{orders}");
        assert_eq!(count("SELECT count(*) FROM oorder").await, orders);
        // Loading again replaces the tables (same names, no duplicates).
        c.simple_query("CALL maestro.load_ch(1)").await.unwrap();
        assert_eq!(count("SELECT count(*) FROM orders").await, 30_000);
        assert_eq!(count("SELECT count(*) FROM warehouse").await, 1);
    });
}
