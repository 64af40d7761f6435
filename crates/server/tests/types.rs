//! Stored SMALLINT, BOOLEAN, REAL and DOUBLE PRECISION columns over the
//! wire: the types a client is told (bool, float8), values bound as binary
//! parameters and read back typed, PostgreSQL's text forms (`t`/`f`,
//! `1e+308`, `NaN`), COPY of their text, and errors with their SQLSTATEs.

mod common;

use common::{sqlstate, with_client};
use futures::SinkExt;
use tokio_postgres::types::Type;

/// A row of table `m`: id, small, ok, x, r.
type Measurement = (i64, Option<i64>, bool, Option<f64>, Option<f64>);

#[test]
fn booleans_and_doubles_round_trip_as_their_types() {
    with_client(async |c| {
        c.batch_execute(
            "CREATE TABLE m (id INT PRIMARY KEY, small SMALLINT, ok BOOLEAN NOT NULL, \
             x DOUBLE PRECISION, r REAL)",
        )
        .await
        .unwrap();
        let insert = c
            .prepare("INSERT INTO m VALUES ($1, $2, $3, $4, $5)")
            .await
            .unwrap();
        assert_eq!(
            insert.params()[2..],
            [Type::BOOL, Type::FLOAT8, Type::FLOAT8]
        );
        let rows: [Measurement; 4] = [
            (1, Some(-32768), true, Some(1.5), Some(0.1)),
            (2, Some(32767), false, Some(-1e-300), Some(3.4e38)),
            (3, None, true, None, None),
            (4, Some(0), false, Some(f64::INFINITY), Some(-0.25)),
        ];
        for (id, small, ok, x, r) in &rows {
            c.execute(&insert, &[id, small, ok, x, r]).await.unwrap();
        }
        let select = c
            .prepare("SELECT id, small, ok, x, r FROM m ORDER BY id")
            .await
            .unwrap();
        let types: Vec<Type> = select.columns().iter().map(|c| c.type_().clone()).collect();
        assert_eq!(types[2..], [Type::BOOL, Type::FLOAT8, Type::FLOAT8]);
        let got: Vec<Measurement> = c
            .query(&select, &[])
            .await
            .unwrap()
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4)))
            .collect();
        assert_eq!(got, rows);

        // Parameters in a filter, of each type.
        let ids = |rows: Vec<tokio_postgres::Row>| -> Vec<i64> {
            rows.iter().map(|r| r.get(0)).collect()
        };
        let by_flag = c
            .query("SELECT id FROM m WHERE ok = $1 ORDER BY id", &[&false])
            .await
            .unwrap();
        assert_eq!(ids(by_flag), [2, 4]);
        let above = c
            .query("SELECT id FROM m WHERE x > $1 ORDER BY id", &[&0.0f64])
            .await
            .unwrap();
        assert_eq!(ids(above), [1, 4]);

        // The text forms PostgreSQL prints.
        let text = common::text_rows(c, "SELECT ok, x, r FROM m ORDER BY id").await;
        assert_eq!(
            text,
            [
                ["t", "1.5", "0.1"],
                ["f", "-1e-300", "3.4e+38"],
                ["t", "NULL", "NULL"],
                ["f", "Infinity", "-0.25"],
            ]
        );
    });
}

#[test]
fn copy_reads_boolean_and_double_text() {
    with_client(async |c| {
        c.batch_execute("CREATE TABLE f (flag BOOLEAN, v FLOAT8, s INT2)")
            .await
            .unwrap();
        let sink = c.copy_in("COPY f FROM STDIN (FORMAT csv)").await.unwrap();
        futures::pin_mut!(sink);
        sink.send(bytes::Bytes::from_static(
            b"t,1e-40,1\nFALSE,NaN,-2\nyes,,3\n,-Infinity,\n",
        ))
        .await
        .unwrap();
        assert_eq!(sink.finish().await.unwrap(), 4);
        let rows = c.query("SELECT flag, v, s FROM f", &[]).await.unwrap();
        let got: Vec<(Option<bool>, Option<f64>, Option<i64>)> = rows
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get(2)))
            .collect();
        assert_eq!(got[0], (Some(true), Some(1e-40), Some(1)));
        assert!(got[1].1.is_some_and(f64::is_nan) && got[1].0 == Some(false));
        assert_eq!(got[2], (Some(true), None, Some(3)));
        assert_eq!(got[3], (None, Some(f64::NEG_INFINITY), None));

        // A bad boolean: 22P04 naming the line and column, nothing kept.
        let sink = c.copy_in("COPY f FROM STDIN (FORMAT csv)").await.unwrap();
        futures::pin_mut!(sink);
        sink.send(bytes::Bytes::from_static(b"t,1,1\nmaybe,2,2\n"))
            .await
            .unwrap();
        let (code, msg) = sqlstate(&sink.finish().await.unwrap_err());
        assert_eq!(code, "22P04");
        assert!(msg.contains("line 2") && msg.contains("flag"), "{msg}");
        let n: i64 = c
            .query_one("SELECT count(*) FROM f", &[])
            .await
            .unwrap()
            .get(0);
        assert_eq!(n, 4);
    });
}

#[test]
fn values_outside_the_types_are_errors_with_their_sqlstates() {
    with_client(async |c| {
        c.batch_execute("CREATE TABLE e (s SMALLINT, b BOOLEAN, r REAL)")
            .await
            .unwrap();
        for (sql, code) in [
            ("INSERT INTO e (s) VALUES (40000)", "22003"),
            ("INSERT INTO e (r) VALUES (1e39)", "22003"),
            ("INSERT INTO e (b) VALUES ('maybe')", "22P02"),
            ("INSERT INTO e (b) VALUES (2)", "42804"),
            ("CREATE UNIQUE INDEX ON e (b)", "0A000"),
        ] {
            let e = c.batch_execute(sql).await.expect_err(sql);
            assert_eq!(sqlstate(&e).0, code, "{sql}: {e:?}");
        }
        // The session goes on.
        c.batch_execute("INSERT INTO e VALUES (-1, TRUE, 2.5)")
            .await
            .unwrap();
    });
}
