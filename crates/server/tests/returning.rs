//! Defaults, serial columns and RETURNING through a real client, as an ORM
//! uses them: `INSERT … RETURNING id` with parameters (Parse, Describe,
//! Bind, Execute) and in the simple protocol, the write's command tag after
//! the rows, and the SQLSTATEs of identity columns.

mod common;

use common::{sqlstate, with_client};
use tokio_postgres::SimpleQueryMessage;

#[test]
fn insert_returning_hands_back_the_generated_keys() {
    with_client(async |c| {
        c.batch_execute(
            "CREATE TABLE users (id SERIAL PRIMARY KEY, name TEXT NOT NULL, \
             karma INTEGER DEFAULT 10, joined TIMESTAMP DEFAULT now())",
        )
        .await
        .unwrap();
        // Extended protocol: the statement is described (its RETURNING
        // columns and the parameter's type) before it runs.
        let insert = c
            .prepare("INSERT INTO users (name) VALUES ($1) RETURNING id, karma")
            .await
            .unwrap();
        let columns: Vec<(&str, String)> = insert
            .columns()
            .iter()
            .map(|col| (col.name(), col.type_().name().to_string()))
            .collect();
        // Integers travel as int8, as every integer column's values do.
        assert_eq!(
            columns,
            [("id", "int8".to_string()), ("karma", "int8".to_string())]
        );
        assert_eq!(insert.params()[0].name(), "text");
        for (expected, name) in [(1, "ada"), (2, "bob")] {
            let row = c.query_one(&insert, &[&name]).await.unwrap();
            assert_eq!((row.get::<_, i64>(0), row.get::<_, i64>(1)), (expected, 10));
        }
        // `execute` counts the rows the tag reports.
        assert_eq!(c.execute(&insert, &[&"cy"]).await.unwrap(), 1);
        // Simple protocol: rows, then `INSERT 0 n`.
        let out = c
            .simple_query(
                "INSERT INTO users (name, karma) VALUES ('dee', 1), ('eve', DEFAULT) \
                 RETURNING id, name, karma",
            )
            .await
            .unwrap();
        let mut rows = Vec::new();
        let mut tag = None;
        for m in out {
            match m {
                SimpleQueryMessage::Row(r) => rows.push(
                    (0..r.len())
                        .map(|i| r.get(i).unwrap().to_string())
                        .collect::<Vec<_>>()
                        .join(" "),
                ),
                SimpleQueryMessage::CommandComplete(n) => tag = Some(n),
                _ => {}
            }
        }
        assert_eq!(rows, ["4 dee 1", "5 eve 10"]);
        assert_eq!(tag, Some(2));
        // UPDATE and DELETE return rows too.
        let updated = c
            .query(
                "UPDATE users SET karma = karma + $1 WHERE id <= 2 RETURNING id, karma",
                &[&5i64],
            )
            .await
            .unwrap();
        let mut got: Vec<(i64, i64)> = updated.iter().map(|r| (r.get(0), r.get(1))).collect();
        got.sort();
        assert_eq!(got, [(1, 15), (2, 15)]);
        let deleted = c
            .query("DELETE FROM users WHERE name = $1 RETURNING *", &[&"eve"])
            .await
            .unwrap();
        assert_eq!(deleted.len(), 1);
        assert_eq!(deleted[0].columns().len(), 4);
        assert_eq!(deleted[0].get::<_, &str>("name"), "eve");
        // A write without RETURNING still describes as NoData.
        let plain = c
            .prepare("INSERT INTO users (name) VALUES ($1)")
            .await
            .unwrap();
        assert!(plain.columns().is_empty());
        assert_eq!(c.execute(&plain, &[&"fay"]).await.unwrap(), 1);
        let ids: Vec<i64> = c
            .query("SELECT id FROM users ORDER BY id", &[])
            .await
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect();
        assert_eq!(ids, [1, 2, 3, 4, 6]);
    });
}

#[test]
fn identity_columns_answer_with_postgresql_sqlstates() {
    with_client(async |c| {
        c.batch_execute("CREATE TABLE t (id BIGINT GENERATED ALWAYS AS IDENTITY, v INTEGER)")
            .await
            .unwrap();
        let e = c
            .simple_query("INSERT INTO t (id, v) VALUES (7, 1)")
            .await
            .unwrap_err();
        assert_eq!(sqlstate(&e).0, "428C9", "{e:?}");
        let row = c
            .query_one(
                "INSERT INTO t (id, v) OVERRIDING SYSTEM VALUE VALUES (7, 1) RETURNING id",
                &[],
            )
            .await
            .unwrap();
        assert_eq!(row.get::<_, i64>(0), 7);
        let e = c.simple_query("UPDATE t SET id = 8").await.unwrap_err();
        assert_eq!(sqlstate(&e).0, "428C9", "{e:?}");
        let e = c
            .simple_query("CREATE TABLE u (a INTEGER, b INTEGER DEFAULT a)")
            .await
            .unwrap_err();
        assert_eq!(sqlstate(&e).0, "42703", "{e:?}");
        // ON CONFLICT: DO NOTHING skips, its tag counts the rows inserted;
        // a target that names no key is 42P10; DO UPDATE is 0A000.
        c.batch_execute("CREATE TABLE k (id INTEGER PRIMARY KEY, v INTEGER)")
            .await
            .unwrap();
        let n = c
            .execute(
                "INSERT INTO k VALUES (1, 1), (1, 2), (2, 3) ON CONFLICT (id) DO NOTHING",
                &[],
            )
            .await
            .unwrap();
        assert_eq!(n, 2);
        let skipped = c
            .query(
                "INSERT INTO k VALUES ($1, 9) ON CONFLICT DO NOTHING RETURNING id",
                &[&2i64],
            )
            .await
            .unwrap();
        assert!(skipped.is_empty());
        let e = c
            .simple_query("INSERT INTO k VALUES (3, 3) ON CONFLICT (v) DO NOTHING")
            .await
            .unwrap_err();
        assert_eq!(sqlstate(&e).0, "42P10", "{e:?}");
        let e = c
            .simple_query("INSERT INTO k VALUES (1, 3) ON CONFLICT DO UPDATE SET v = 3")
            .await
            .unwrap_err();
        assert_eq!(sqlstate(&e).0, "42601", "{e:?}");
        // The session stays usable.
        let row = c
            .query_one("INSERT INTO t (v) VALUES (2) RETURNING id, v", &[])
            .await
            .unwrap();
        assert_eq!((row.get::<_, i64>(0), row.get::<_, i64>(1)), (1, 2));
    });
}
