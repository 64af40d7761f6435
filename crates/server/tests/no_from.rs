//! SELECT without FROM over the wire, as drivers send it on connect: one
//! row of constant expressions, `version()`, `current_setting(…)`, and a
//! parameter with a cast. Needs no tables.

mod common;

use common::{sqlstate, with_client};
use tokio_postgres::SimpleQueryMessage;
use tokio_postgres::types::Type;

#[test]
fn select_without_from_gives_one_row() {
    with_client(async |c| {
        let row = c.query_one("select 1", &[]).await.unwrap();
        assert_eq!(row.get::<_, i64>(0), 1);
        let row = c.query_one("SELECT 1 + 2 AS x, 'a'", &[]).await.unwrap();
        assert_eq!(row.columns()[0].name(), "x");
        assert_eq!(row.get::<_, i64>(0), 3);
        assert_eq!(row.get::<_, String>(1), "a");
        let row = c
            .query_one(
                "select 7 / 2.0 as d, case when 1 < 2 then 'yes' end, null is null",
                &[],
            )
            .await
            .unwrap();
        assert_eq!(row.get::<_, f64>(0), 3.5);
        assert_eq!(row.get::<_, String>(1), "yes");
        let v: String = c.query_one("SELECT version()", &[]).await.unwrap().get(0);
        assert!(v.starts_with("PostgreSQL 16"), "{v}");
        let v: String = c
            .query_one("SELECT current_setting('server_version')", &[])
            .await
            .unwrap()
            .get(0);
        assert_eq!(v, maestro_server::SERVER_VERSION);

        // A parameter typed by its cast.
        let s = c.prepare("SELECT $1::int").await.unwrap();
        assert_eq!(s.params(), [Type::INT8]);
        let v: i64 = c.query_one(&s, &[&42i64]).await.unwrap().get(0);
        assert_eq!(v, 42);
        let s = c.prepare("SELECT $1 AS t, $2::date AS d").await.unwrap();
        assert_eq!(s.params(), [Type::TEXT, Type::DATE]);

        // The simple protocol too; a bad expression is an error, and the
        // session goes on.
        let rows: Vec<String> = c
            .simple_query("select 2 * 21; select 'x'")
            .await
            .unwrap()
            .into_iter()
            .filter_map(|m| match m {
                SimpleQueryMessage::Row(r) => r.get(0).map(str::to_string),
                _ => None,
            })
            .collect();
        assert_eq!(rows, ["42", "x"]);
        let e = c.simple_query("select 1 + 'a'").await.unwrap_err();
        assert_eq!(sqlstate(&e).0, "42804");
        let e = c.simple_query("select nosuch").await.unwrap_err();
        assert_eq!(sqlstate(&e).0, "42703");
        assert_eq!(
            c.query_one("select 1", &[]).await.unwrap().get::<_, i64>(0),
            1
        );
    });
}
