//! DDL, DML, transactions and COPY through a real client: tables created,
//! filled, changed and dropped over the wire, with exact answers; BEGIN …
//! ROLLBACK; two sessions' snapshots and (row-level) write conflicts; COPY FROM STDIN
//! and from a server file. Every error leaves the session usable.

mod common;

use common::{Server, sqlstate, with_client};
use futures::SinkExt;
use tokio_postgres::{Client, SimpleQueryMessage};

/// The row count a write statement without parameters reports.
async fn written(c: &Client, sql: &str) -> u64 {
    c.execute(sql, &[])
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// The rows of a simple query, as text (NULL as "NULL").
async fn rows(c: &Client, sql: &str) -> Vec<Vec<String>> {
    common::text_rows(c, sql).await
}

fn table(rows: &[&[&str]]) -> Vec<Vec<String>> {
    rows.iter()
        .map(|r| r.iter().map(|s| s.to_string()).collect())
        .collect()
}

/// The SQLSTATE of a statement that must fail.
async fn fails(c: &Client, sql: &str) -> (String, String) {
    let e = c
        .simple_query(sql)
        .await
        .err()
        .unwrap_or_else(|| panic!("{sql} should fail"));
    sqlstate(&e)
}

#[test]
fn create_insert_select_update_delete_round_trip() {
    with_client(async |c| {
        c.batch_execute(
            "CREATE TABLE items (id INTEGER, qty BIGINT, price DECIMAL(10,2), \
             day DATE, name VARCHAR(20))",
        )
        .await
        .unwrap();
        let n = c
            .execute(
                "INSERT INTO items VALUES (1, 10, 2.5, DATE '2024-01-02', 'apple'), \
                 (2, 20, 1.25, DATE '2024-02-03', 'pear'), (3, 30, 10, '2024-03-04', 'fig')",
                &[],
            )
            .await
            .unwrap();
        assert_eq!(n, 3);
        // Named columns in another order; INSERT … SELECT.
        assert_eq!(written(c, "INSERT INTO items (name, id, qty, price, day) VALUES ('kiwi', 4, 1 + 1, 0.125, '2024-04-05')").await, 1);
        assert_eq!(
            rows(c, "SELECT id, qty, price, day, name FROM items ORDER BY id").await,
            table(&[
                &["1", "10", "2.50", "2024-01-02", "apple"],
                &["2", "20", "1.25", "2024-02-03", "pear"],
                &["3", "30", "10.00", "2024-03-04", "fig"],
                // 0.125 rounds half away from zero to the column's scale.
                &["4", "2", "0.13", "2024-04-05", "kiwi"],
            ])
        );
        assert_eq!(
            written(
                c,
                "UPDATE items SET qty = qty * 2, name = 'big' WHERE id >= 3"
            )
            .await,
            2
        );
        assert_eq!(
            rows(c, "SELECT id, qty FROM items ORDER BY id").await,
            table(&[&["1", "10"], &["2", "20"], &["3", "60"], &["4", "4"]])
        );
        assert_eq!(
            rows(
                c,
                "SELECT name FROM items WHERE qty >= 20 OR id = 4 ORDER BY name"
            )
            .await,
            table(&[&["big"], &["big"], &["pear"]])
        );
        assert_eq!(written(c, "DELETE FROM items WHERE qty < 15").await, 2);
        assert_eq!(
            rows(c, "SELECT id, sum(qty) FROM items GROUP BY id ORDER BY id").await,
            table(&[&["2", "20"], &["3", "60"]])
        );
        assert_eq!(
            written(
                c,
                "INSERT INTO items SELECT id + 10, qty, price, day, name FROM items"
            )
            .await,
            2
        );
        assert_eq!(
            rows(c, "SELECT count(*) FROM items").await,
            table(&[&["4"]])
        );
        assert_eq!(
            written(
                c,
                "CREATE TABLE copy AS SELECT id, price FROM items WHERE id > 10"
            )
            .await,
            2
        );
        assert_eq!(
            rows(c, "SELECT id, price FROM copy ORDER BY id").await,
            table(&[&["12", "1.25"], &["13", "10.00"]])
        );
        assert_eq!(written(c, "DELETE FROM items").await, 4);
        assert_eq!(
            rows(c, "SELECT count(*) FROM items").await,
            table(&[&["0"]])
        );
        c.batch_execute("DROP TABLE items").await.unwrap();
        assert_eq!(fails(c, "SELECT * FROM items").await.0, "42P01");
        assert_eq!(fails(c, "DROP TABLE items").await.0, "42P01");
        c.batch_execute("DROP TABLE IF EXISTS items").await.unwrap();
    });
}

#[test]
fn update_where_null_is_not_true() {
    with_client(async |c| {
        c.batch_execute(
            "CREATE TABLE t (a INT, b INT); INSERT INTO t VALUES (1, 1), (2, 2), (3, 3)",
        )
        .await
        .unwrap();
        // NULL and NOT NULL: neither is true, no row changes.
        assert_eq!(
            written(c, "UPDATE t SET b = 0 WHERE a = NULL OR NOT (a = NULL)").await,
            0
        );
        assert_eq!(
            written(c, "UPDATE t SET b = a + b WHERE a BETWEEN 2 AND 3").await,
            2
        );
        assert_eq!(
            rows(c, "SELECT a, b FROM t ORDER BY a").await,
            table(&[&["1", "1"], &["2", "4"], &["3", "6"]])
        );
    });
}

#[test]
fn errors_name_the_problem_and_leave_the_session_usable() {
    with_client(async |c| {
        c.batch_execute(
            "CREATE TABLE t (a INTEGER NOT NULL, d DECIMAL(4,2), s VARCHAR(3) NOT NULL)",
        )
        .await
        .unwrap();
        assert_eq!(fails(c, "CREATE TABLE t (x INT)").await.0, "42P07");
        let (code, msg) = fails(c, "INSERT INTO t VALUES (NULL, 1, 'a')").await;
        assert_eq!(code, "23502");
        assert!(msg.contains("\"a\""), "{msg}");
        assert_eq!(
            fails(c, "INSERT INTO t (a, d) VALUES (1, 1)").await.0,
            "23502"
        );
        assert_eq!(
            fails(c, "INSERT INTO t VALUES (3000000000, 1, 'a')")
                .await
                .0,
            "22003"
        );
        assert_eq!(
            fails(c, "INSERT INTO t VALUES (1, 100, 'a')").await.0,
            "22003"
        );
        assert_eq!(
            fails(c, "INSERT INTO t VALUES ('x', 1, 'a')").await.0,
            "22P02"
        );
        assert_eq!(
            fails(c, "INSERT INTO t VALUES (1, 1, 'abcd')").await.0,
            "22001"
        );
        assert_eq!(fails(c, "INSERT INTO t VALUES (1, 1)").await.0, "42601");
        assert_eq!(fails(c, "INSERT INTO t (zz) VALUES (1)").await.0, "42703");
        assert_eq!(fails(c, "INSERT INTO nope VALUES (1)").await.0, "42P01");
        assert_eq!(fails(c, "UPDATE t SET zz = 1").await.0, "42703");
        assert_eq!(fails(c, "CREATE TABLE u (x BYTEA)").await.0, "0A000");
        assert_eq!(
            fails(c, "CREATE TABLE u (x DECIMAL(30,20))").await.0,
            "0A000"
        );
        assert_eq!(
            fails(c, "CREATE TABLE u (x INT CHECK (x > 0))").await.0,
            "0A000"
        );
        // Nothing of the failed statements was written.
        assert_eq!(rows(c, "SELECT count(*) FROM t").await, table(&[&["0"]]));
        c.batch_execute("INSERT INTO t VALUES (1, 12.345, 'abc')")
            .await
            .unwrap();
        assert_eq!(
            rows(c, "SELECT a, d, s FROM t").await,
            table(&[&["1", "12.35", "abc"]])
        );
    });
}

#[test]
fn rollback_leaves_nothing_and_commit_keeps_everything() {
    with_client(async |c| {
        c.batch_execute("CREATE TABLE t (a INT)").await.unwrap();
        c.batch_execute("BEGIN; INSERT INTO t VALUES (1); CREATE TABLE u (b INT)")
            .await
            .unwrap();
        // The transaction sees its own writes.
        assert_eq!(rows(c, "SELECT a FROM t").await, table(&[&["1"]]));
        assert_eq!(rows(c, "SELECT count(*) FROM u").await, table(&[&["0"]]));
        c.batch_execute("ROLLBACK").await.unwrap();
        assert_eq!(rows(c, "SELECT count(*) FROM t").await, table(&[&["0"]]));
        assert_eq!(fails(c, "SELECT * FROM u").await.0, "42P01");

        c.batch_execute("START TRANSACTION; INSERT INTO t VALUES (2); DROP TABLE t; CREATE TABLE t (x INT); INSERT INTO t VALUES (7); COMMIT")
            .await
            .unwrap();
        assert_eq!(rows(c, "SELECT x FROM t").await, table(&[&["7"]]));
    });
}

#[test]
fn a_failed_transaction_refuses_statements_until_rollback() {
    with_client(async |c| {
        c.batch_execute("CREATE TABLE t (a INT); BEGIN; INSERT INTO t VALUES (1)")
            .await
            .unwrap();
        assert_eq!(fails(c, "SELECT * FROM nope").await.0, "42P01");
        assert_eq!(fails(c, "SELECT 1").await.0, "25P02");
        assert_eq!(fails(c, "INSERT INTO t VALUES (2)").await.0, "25P02");
        // COMMIT of a failed transaction rolls it back.
        let done = c.simple_query("COMMIT").await.unwrap();
        assert!(matches!(done[0], SimpleQueryMessage::CommandComplete(_)));
        assert_eq!(rows(c, "SELECT count(*) FROM t").await, table(&[&["0"]]));
        // tokio-postgres' transaction API (BEGIN/ROLLBACK on drop).
        {
            let tx = c.transaction().await.unwrap();
            tx.execute("INSERT INTO t VALUES (5)", &[]).await.unwrap();
            let n: i64 = tx
                .query_one("SELECT count(*) FROM t", &[])
                .await
                .unwrap()
                .get(0);
            assert_eq!(n, 1);
        }
        assert_eq!(rows(c, "SELECT count(*) FROM t").await, table(&[&["0"]]));
        let tx = c.transaction().await.unwrap();
        tx.execute("INSERT INTO t VALUES (6)", &[]).await.unwrap();
        tx.commit().await.unwrap();
        assert_eq!(rows(c, "SELECT a FROM t").await, table(&[&["6"]]));
    });
}

#[test]
fn snapshots_and_write_conflicts_between_sessions() {
    let server = Server::start();
    server.rt.block_on(async {
        let a = server.connect().await;
        let b = server.connect().await;
        a.batch_execute("CREATE TABLE t (k INT, v INT); INSERT INTO t VALUES (1, 0)")
            .await
            .unwrap();
        a.batch_execute("BEGIN").await.unwrap();
        assert_eq!(rows(&a, "SELECT v FROM t").await, table(&[&["0"]]));
        // B commits after A's snapshot: A does not see it.
        b.batch_execute("UPDATE t SET v = 1").await.unwrap();
        assert_eq!(rows(&b, "SELECT v FROM t").await, table(&[&["1"]]));
        assert_eq!(rows(&a, "SELECT v FROM t").await, table(&[&["0"]]));
        // A's update of the table B changed since A's snapshot: 40001.
        let (code, msg) = fails(&a, "UPDATE t SET v = 2").await;
        assert_eq!(code, "40001");
        assert!(msg.contains("could not serialize access"), "{msg}");
        assert_eq!(fails(&a, "SELECT v FROM t").await.0, "25P02");
        a.batch_execute("ROLLBACK").await.unwrap();
        assert_eq!(rows(&a, "SELECT v FROM t").await, table(&[&["1"]]));

        // Two open transactions writing one table: neither waits for the
        // other; rows decide (B read first, which fixes its snapshot).
        a.batch_execute("BEGIN; UPDATE t SET v = 10").await.unwrap();
        b.batch_execute("BEGIN").await.unwrap();
        assert_eq!(rows(&b, "SELECT count(*) FROM t").await, table(&[&["1"]]));
        b.batch_execute("INSERT INTO t VALUES (2, 0)")
            .await
            .unwrap();
        a.batch_execute("COMMIT").await.unwrap();
        // B reads its snapshot and its own row, not A's update.
        assert_eq!(
            rows(&b, "SELECT k, v FROM t ORDER BY k").await,
            table(&[&["1", "1"], &["2", "0"]])
        );
        // A's committed change of row 1: B's update of it fails at once.
        assert_eq!(
            fails(&b, "UPDATE t SET v = 20 WHERE k = 1").await.0,
            "40001"
        );
        b.batch_execute("ROLLBACK").await.unwrap();

        // Both change row 1: B's update waits at the row for A's block
        // (`row_locks.rs`); once A committed, B's statement — its block's
        // first, nothing of it seen — runs again on a fresh snapshot.
        a.batch_execute("BEGIN; UPDATE t SET v = 12").await.unwrap();
        let waiting = tokio::spawn(async move {
            b.batch_execute("BEGIN; UPDATE t SET v = v - 2 WHERE k = 1")
                .await
                .map(|()| b)
        });
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        assert!(!waiting.is_finished(), "B waits for A's row");
        a.batch_execute("COMMIT").await.unwrap();
        let b = waiting.await.unwrap().expect("B's update after A's commit");
        b.batch_execute("COMMIT").await.unwrap();
        assert_eq!(rows(&a, "SELECT v FROM t").await, table(&[&["10"]]));
        // A later statement of a REPEATABLE READ block meeting a row
        // another block changed and committed while it waited: 40001.
        a.batch_execute("BEGIN; SELECT 1").await.unwrap();
        b.batch_execute("BEGIN; UPDATE t SET v = 11").await.unwrap();
        let waiting = tokio::spawn(async move {
            let r = fails(&a, "UPDATE t SET v = 12").await;
            (a, r)
        });
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        b.batch_execute("COMMIT").await.unwrap();
        let (a, (code, _)) = waiting.await.unwrap();
        assert_eq!(code, "40001");
        a.batch_execute("ROLLBACK").await.unwrap();
        a.batch_execute("UPDATE t SET v = 10").await.unwrap();

        // Two inserters: both commit.
        a.batch_execute("BEGIN; INSERT INTO t VALUES (3, 0)")
            .await
            .unwrap();
        b.batch_execute("BEGIN; INSERT INTO t VALUES (4, 0)")
            .await
            .unwrap();
        a.batch_execute("COMMIT").await.unwrap();
        b.batch_execute("COMMIT").await.unwrap();
        assert_eq!(
            rows(&b, "SELECT k, v FROM t ORDER BY k").await,
            table(&[&["1", "10"], &["3", "0"], &["4", "0"]])
        );
        a.batch_execute("DELETE FROM t WHERE k >= 3").await.unwrap();

        // Two CREATEs of one name: the second conflicts.
        a.batch_execute("BEGIN; CREATE TABLE n (x INT)")
            .await
            .unwrap();
        b.batch_execute("BEGIN").await.unwrap();
        assert_eq!(fails(&b, "CREATE TABLE n (y INT)").await.0, "40001");
        b.batch_execute("ROLLBACK").await.unwrap();
        a.batch_execute("COMMIT").await.unwrap();
        assert_eq!(fails(&b, "CREATE TABLE n (y INT)").await.0, "42P07");
    });
}

/// As in PostgreSQL's REPEATABLE READ, a block's snapshot is taken at its
/// first statement, not at BEGIN: a commit between the two is seen, one
/// after the first statement is not.
#[test]
fn a_block_takes_its_snapshot_at_its_first_statement() {
    let server = Server::start();
    server.rt.block_on(async {
        let a = server.connect().await;
        let b = server.connect().await;
        a.batch_execute("CREATE TABLE s (v INT); INSERT INTO s VALUES (1)")
            .await
            .unwrap();
        a.batch_execute("BEGIN").await.unwrap();
        b.batch_execute("UPDATE s SET v = 2").await.unwrap();
        assert_eq!(rows(&a, "SELECT v FROM s").await, table(&[&["2"]]));
        b.batch_execute("UPDATE s SET v = 3").await.unwrap();
        assert_eq!(rows(&a, "SELECT v FROM s").await, table(&[&["2"]]));
        a.batch_execute("COMMIT").await.unwrap();
        assert_eq!(rows(&a, "SELECT v FROM s").await, table(&[&["3"]]));
    });
}

#[test]
fn a_disconnect_mid_transaction_rolls_back() {
    let server = Server::start();
    server.rt.block_on(async {
        let a = server.connect().await;
        a.batch_execute("CREATE TABLE t (a INT)").await.unwrap();
        {
            let b = server.connect().await;
            b.batch_execute("BEGIN; INSERT INTO t VALUES (1)")
                .await
                .unwrap();
        }
        // B's write lock goes with its session: A can write the table (a
        // few tries while the server notices the disconnect).
        let mut last = None;
        for _ in 0..200 {
            match a.simple_query("INSERT INTO t VALUES (2)").await {
                Ok(_) => {
                    last = None;
                    break;
                }
                Err(e) => last = Some(sqlstate(&e)),
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        assert_eq!(last, None);
        assert_eq!(rows(&a, "SELECT a FROM t").await, table(&[&["2"]]));
    });
}

#[test]
fn copy_from_stdin_and_from_a_file() {
    let server = Server::start();
    server.rt.block_on(async {
        let c = server.connect().await;
        c.batch_execute("CREATE TABLE t (id INT, name TEXT, amount NUMERIC(8,2), day DATE)")
            .await
            .unwrap();
        let sink = c
            .copy_in("COPY t FROM STDIN WITH (FORMAT csv, HEADER)")
            .await
            .unwrap();
        futures::pin_mut!(sink);
        sink.send(bytes::Bytes::from_static(
            b"id,name,amount,day\n1,\"a, quoted\",1.5,2024-01-01\n2,b,2,2024-01-02\n",
        ))
        .await
        .unwrap();
        let n = sink.finish().await.unwrap();
        assert_eq!(n, 2);
        assert_eq!(
            rows(&c, "SELECT id, name, amount, day FROM t ORDER BY id").await,
            table(&[
                &["1", "a, quoted", "1.50", "2024-01-01"],
                &["2", "b", "2.00", "2024-01-02"]
            ])
        );

        // A bad row: its line and column, nothing inserted.
        let sink = c.copy_in("COPY t FROM STDIN (FORMAT csv)").await.unwrap();
        futures::pin_mut!(sink);
        sink.send(bytes::Bytes::from_static(
            b"3,c,1,2024-01-03\n4,d,x,2024-01-04\n",
        ))
        .await
        .unwrap();
        let e = sink.finish().await.unwrap_err();
        let (code, msg) = sqlstate(&e);
        assert_eq!(code, "22P04");
        assert!(msg.contains("line 2") && msg.contains("amount"), "{msg}");
        assert_eq!(rows(&c, "SELECT count(*) FROM t").await, table(&[&["2"]]));

        // From a file on the server.
        let path = std::env::temp_dir().join(format!("maestro-copy-{}.csv", std::process::id()));
        std::fs::write(&path, "id,name,amount,day\n5,e,3.25,2024-02-01\n").unwrap();
        let n = c
            .execute(
                &format!("COPY t FROM '{}' WITH (FORMAT csv, HEADER)", path.display()),
                &[],
            )
            .await
            .unwrap();
        assert_eq!(n, 1);
        std::fs::write(&path, "6,f,1,2024-02-02\n7,g,1\n").unwrap();
        let (code, msg) = fails(
            &c,
            &format!("COPY t FROM '{}' (FORMAT csv)", path.display()),
        )
        .await;
        assert_eq!(code, "22P04");
        assert!(msg.contains("line 2"), "{msg}");
        std::fs::remove_file(&path).ok();
        assert_eq!(
            rows(&c, "SELECT sum(amount) FROM t").await,
            table(&[&["6.75"]])
        );
        assert_eq!(fails(&c, "COPY nope FROM STDIN").await.0, "42P01");
        assert_eq!(
            fails(&c, "COPY t FROM '/nonexistent/maestro.csv' (FORMAT csv)")
                .await
                .0,
            "58P01"
        );
        assert_eq!(rows(&c, "SELECT count(*) FROM t").await, table(&[&["3"]]));
    });
}

#[test]
fn tpch_tables_live_in_the_same_store() {
    with_client(async |c| {
        c.batch_execute("CALL maestro.load_tpch(0.01)")
            .await
            .unwrap();
        assert_eq!(
            rows(c, "SELECT count(*) FROM region").await,
            table(&[&["5"]])
        );
        assert_eq!(
            written(c, "INSERT INTO region VALUES (5, 'MARS', 'red')").await,
            1
        );
        assert_eq!(
            rows(c, "SELECT r_name FROM region WHERE r_regionkey = 5").await,
            table(&[&["MARS"]])
        );
        c.batch_execute("CREATE TABLE picks (k INT); INSERT INTO picks VALUES (0), (5)")
            .await
            .unwrap();
        assert_eq!(
            rows(
                c,
                "SELECT r_name FROM region, picks WHERE r_regionkey = k ORDER BY k"
            )
            .await,
            table(&[&["AFRICA"], &["MARS"]])
        );
        // Reloading replaces the TPC-H tables, keeps the others.
        c.batch_execute("CALL maestro.load_tpch(0.01)")
            .await
            .unwrap();
        assert_eq!(
            rows(c, "SELECT count(*) FROM region").await,
            table(&[&["5"]])
        );
        assert_eq!(
            rows(c, "SELECT count(*) FROM picks").await,
            table(&[&["2"]])
        );
    });
}

/// Sends the simple query `sql` and reads up to ReadyForQuery: its
/// transaction status byte (`I`, `T` or `E`).
fn ready_status(s: &mut std::net::TcpStream, sql: &str) -> u8 {
    use std::io::Write;
    if !sql.is_empty() {
        let mut m = vec![b'Q'];
        m.extend_from_slice(&(4 + sql.len() as i32 + 1).to_be_bytes());
        m.extend_from_slice(sql.as_bytes());
        m.push(0);
        s.write_all(&m).unwrap();
    }
    loop {
        let (kind, body) = common::read_message(s);
        if kind == b'Z' {
            return body[0];
        }
    }
}

#[test]
fn ready_for_query_carries_the_transaction_status() {
    let server = Server::start();
    let mut s = server.raw_startup();
    assert_eq!(ready_status(&mut s, ""), b'I');
    assert_eq!(
        ready_status(&mut s, "CREATE TABLE t (a INT NOT NULL)"),
        b'I'
    );
    assert_eq!(ready_status(&mut s, "SELECT * FROM nope"), b'I');
    assert_eq!(ready_status(&mut s, "BEGIN"), b'T');
    assert_eq!(ready_status(&mut s, "INSERT INTO t VALUES (1)"), b'T');
    assert_eq!(ready_status(&mut s, "INSERT INTO t VALUES (NULL)"), b'E');
    assert_eq!(ready_status(&mut s, "SELECT 1"), b'E');
    assert_eq!(ready_status(&mut s, "ROLLBACK"), b'I');
    assert_eq!(
        ready_status(&mut s, "BEGIN; INSERT INTO t VALUES (2)"),
        b'T'
    );
    assert_eq!(ready_status(&mut s, "COMMIT"), b'I');
    assert_eq!(
        ready_status(&mut s, "BEGIN; SELECT * FROM nope; SELECT 1"),
        b'E'
    );
    assert_eq!(ready_status(&mut s, "COMMIT"), b'I');
}

#[test]
fn a_failed_prepare_fails_the_transaction_text_copy_and_dml_parameters() {
    let server = Server::start();
    server.rt.block_on(async {
        let mut c = server.connect().await;
        c.batch_execute("CREATE TABLE t (a INT, s TEXT NOT NULL)")
            .await
            .unwrap();
        let tx = c.transaction().await.unwrap();
        let e = tx.prepare("SELECT * FROM nope").await.unwrap_err();
        assert_eq!(sqlstate(&e).0, "42P01");
        let e = tx.query("SELECT 1", &[]).await.unwrap_err();
        assert_eq!(sqlstate(&e).0, "25P02");
        drop(tx);
        // PostgreSQL's text format: tab-separated; \N is NULL (refused by the NOT NULL column).
        let sink = c.copy_in("COPY t FROM STDIN").await.unwrap();
        futures::pin_mut!(sink);
        sink.send(bytes::Bytes::from_static(b"1\tone, two\n2\tthree\n"))
            .await
            .unwrap();
        assert_eq!(sink.finish().await.unwrap(), 2);
        let sink = c.copy_in("COPY t (s, a) FROM STDIN").await.unwrap();
        futures::pin_mut!(sink);
        sink.send(bytes::Bytes::from_static(b"x\t3\n\\N\t4\n"))
            .await
            .unwrap();
        let (code, msg) = sqlstate(&sink.finish().await.unwrap_err());
        assert_eq!(code, "22P04");
        assert!(msg.contains("line 2") && msg.contains("null"), "{msg}");
        assert_eq!(
            rows(&c, "SELECT a, s FROM t ORDER BY a").await,
            table(&[&["1", "one, two"], &["2", "three"]])
        );
        // DML with parameters: typed by the column they are assigned to,
        // or by their context in WHERE.
        let n = c
            .execute(
                "INSERT INTO t VALUES ($1, $2), ($3 + 1, 'y')",
                &[&5i64, &"x", &6i64],
            )
            .await
            .unwrap();
        assert_eq!(n, 2);
        let n = c
            .execute("UPDATE t SET s = $1 WHERE a > $2", &[&"big", &4i64])
            .await
            .unwrap();
        assert_eq!(n, 2);
        let n = c
            .execute("DELETE FROM t WHERE a = $1", &[&7i64])
            .await
            .unwrap();
        assert_eq!(n, 1);
        assert_eq!(
            rows(&c, "SELECT a, s FROM t ORDER BY a").await,
            table(&[&["1", "one, two"], &["2", "three"], &["5", "big"]])
        );
    });
}

#[test]
fn several_statements_in_one_query_are_one_transaction() {
    with_client(async |c| {
        c.batch_execute("CREATE TABLE t (a INT NOT NULL)")
            .await
            .unwrap();
        // The second statement fails: the first's insert is undone too.
        let e = c
            .batch_execute("INSERT INTO t VALUES (1); INSERT INTO t VALUES (NULL)")
            .await
            .unwrap_err();
        assert_eq!(sqlstate(&e).0, "23502");
        assert_eq!(rows(c, "SELECT count(*) FROM t").await, table(&[&["0"]]));
        // The session is idle again: the next statements autocommit.
        c.batch_execute("INSERT INTO t VALUES (1); INSERT INTO t VALUES (2)")
            .await
            .unwrap();
        c.batch_execute("INSERT INTO t VALUES (3)").await.unwrap();
        assert_eq!(rows(c, "SELECT sum(a) FROM t").await, table(&[&["6"]]));
    });
}

#[test]
fn a_syntax_error_in_a_transaction_block_fails_the_block() {
    let server = Server::start();
    server.rt.block_on(async {
        let a = server.connect().await;
        a.batch_execute("CREATE TABLE t (k INT)").await.unwrap();
        a.batch_execute("BEGIN").await.unwrap();
        assert_eq!(fails(&a, "INSERT INTO t VALUE (1)").await.0, "42601");
        assert_eq!(fails(&a, "INSERT INTO t VALUES (1)").await.0, "25P02");
        a.batch_execute("ROLLBACK").await.unwrap();
        assert_eq!(rows(&a, "SELECT count(*) FROM t").await, table(&[&["0"]]));
    });
}

#[test]
fn declared_keys_are_enforced_with_postgres_sqlstates() {
    with_client(async |c| {
        c.batch_execute(
            "CREATE TABLE acct (id INTEGER PRIMARY KEY, email VARCHAR(40) UNIQUE, \
             region INT, n INT, UNIQUE (region, n))",
        )
        .await
        .unwrap();
        c.batch_execute("INSERT INTO acct VALUES (1, 'a@x', 1, 1), (2, 'b@x', 1, 2)")
            .await
            .unwrap();
        for sql in [
            "INSERT INTO acct VALUES (1, 'c@x', 2, 1)",
            "INSERT INTO acct VALUES (3, 'a@x', 2, 1)",
            "UPDATE acct SET n = 1 WHERE id = 2",
        ] {
            let (code, msg) = fails(c, sql).await;
            assert_eq!(code, "23505", "{sql}: {msg}");
        }
        let (code, msg) = fails(
            c,
            "CREATE TABLE two (a INT PRIMARY KEY, b INT, PRIMARY KEY (b))",
        )
        .await;
        assert_eq!(code, "42P16", "{msg}");
        let (code, msg) = fails(c, "CREATE TABLE twice (a INT, UNIQUE (a, a))").await;
        assert_eq!(code, "42701", "{msg}");
        let (code, msg) = fails(c, "CREATE TABLE fk (a INT REFERENCES acct (id))").await;
        assert_eq!(code, "0A000", "{msg}");
        assert_eq!(
            rows(c, "SELECT id, email FROM acct ORDER BY id").await,
            table(&[&["1", "a@x"], &["2", "b@x"]])
        );
    });
}

#[test]
fn copy_stores_nulls_in_nullable_columns() {
    let server = Server::start();
    server.rt.block_on(async {
        let c = server.connect().await;
        c.batch_execute(
            "CREATE TABLE n (id INT NOT NULL, name TEXT, amount NUMERIC(8,2), day DATE)",
        )
        .await
        .unwrap();
        // CSV: an empty field of a number or date column is NULL; of a text
        // column, an empty string. A column COPY leaves out is NULL.
        let sink = c.copy_in("COPY n FROM STDIN (FORMAT csv)").await.unwrap();
        futures::pin_mut!(sink);
        sink.send(bytes::Bytes::from_static(b"1,,,2024-01-01\n2,b,2.5,\n"))
            .await
            .unwrap();
        assert_eq!(sink.finish().await.unwrap(), 2);
        // Text: \N is NULL in any column.
        let sink = c.copy_in("COPY n (id, name) FROM STDIN").await.unwrap();
        futures::pin_mut!(sink);
        sink.send(bytes::Bytes::from_static(b"3\t\\N\n4\tx\n"))
            .await
            .unwrap();
        assert_eq!(sink.finish().await.unwrap(), 2);
        assert_eq!(
            rows(
                &c,
                "SELECT id, name IS NULL, name, amount, day FROM n ORDER BY id"
            )
            .await,
            table(&[
                &["1", "f", "", "NULL", "2024-01-01"],
                &["2", "f", "b", "2.50", "NULL"],
                &["3", "t", "NULL", "NULL", "NULL"],
                &["4", "f", "x", "NULL", "NULL"],
            ])
        );
        // A NULL for the NOT NULL column: the line, nothing inserted.
        let sink = c.copy_in("COPY n FROM STDIN (FORMAT csv)").await.unwrap();
        futures::pin_mut!(sink);
        sink.send(bytes::Bytes::from_static(
            b"5,e,1,2024-01-05\n,f,1,2024-01-06\n",
        ))
        .await
        .unwrap();
        let (code, msg) = sqlstate(&sink.finish().await.unwrap_err());
        assert_eq!(code, "22P04", "{msg}");
        assert!(msg.contains("line 2") && msg.contains("id"), "{msg}");
        assert_eq!(rows(&c, "SELECT count(*) FROM n").await, table(&[&["4"]]));
    });
}

#[test]
fn alter_table_over_the_wire() {
    with_client(async |c| {
        c.batch_execute(
            "CREATE TABLE t (a INT PRIMARY KEY, b TEXT); INSERT INTO t VALUES (1, 'x')",
        )
        .await
        .unwrap();
        // Simple and extended protocol (prepared: Parse, Describe, Bind, Execute).
        c.batch_execute("ALTER TABLE t ADD COLUMN n NUMERIC(6,2) DEFAULT 1.5")
            .await
            .unwrap();
        assert_eq!(
            written(c, "ALTER TABLE t RENAME COLUMN b TO label").await,
            0
        );
        let tagged = c
            .simple_query("ALTER TABLE t ALTER COLUMN n SET NOT NULL")
            .await
            .unwrap();
        assert!(
            tagged
                .iter()
                .any(|m| matches!(m, SimpleQueryMessage::CommandComplete(0))),
            "{tagged:?}"
        );
        assert_eq!(
            rows(c, "SELECT a, label, n FROM t").await,
            table(&[&["1", "x", "1.50"]])
        );
        assert_eq!(fails(c, "ALTER TABLE t ADD COLUMN a INT").await.0, "42701");
        assert_eq!(fails(c, "ALTER TABLE t DROP COLUMN nope").await.0, "42703");
        assert_eq!(
            fails(c, "ALTER TABLE nope ADD COLUMN x INT").await.0,
            "42P01"
        );
        assert_eq!(
            fails(c, "ALTER TABLE t ALTER COLUMN n TYPE TEXT").await.0,
            "0A000"
        );
        // Inside a block, rolled back.
        c.batch_execute("BEGIN; ALTER TABLE t DROP COLUMN label; ROLLBACK")
            .await
            .unwrap();
        assert_eq!(rows(c, "SELECT label FROM t").await, table(&[&["x"]]));
    });
}
