//! `INSERT … ON CONFLICT (key) DO UPDATE` over the wire: a prepared upsert
//! whose parameters appear in VALUES and in DO UPDATE (Describe types them
//! all), its tag counting inserted and updated rows, RETURNING, and 21000
//! for two proposed rows with one key.

mod common;

use common::{sqlstate, with_client};
use tokio_postgres::types::Type;

#[test]
fn a_prepared_upsert_inserts_then_updates() {
    with_client(async |c| {
        c.batch_execute("CREATE TABLE hits (page TEXT PRIMARY KEY, n BIGINT NOT NULL, last DATE)")
            .await
            .unwrap();
        let up = c
            .prepare(
                "INSERT INTO hits VALUES ($1, 1, $2) ON CONFLICT (page) \
                 DO UPDATE SET n = hits.n + $3, last = excluded.last RETURNING n",
            )
            .await
            .unwrap();
        assert_eq!(up.params(), [Type::TEXT, Type::DATE, Type::INT8]);
        let day = |d: u32| chrono_free_date(2026, 11, d);
        for (d, want) in [(1, 1i64), (2, 6), (3, 11)] {
            let rows = c.query(&up, &[&"/home", &day(d), &5i64]).await.unwrap();
            assert_eq!(rows.len(), 1);
            assert_eq!(rows[0].get::<_, i64>(0), want);
        }
        let n = c
            .execute(
                "INSERT INTO hits (page, n) VALUES ('/a', 1), ('/home', 1) \
                 ON CONFLICT (page) DO UPDATE SET n = excluded.n",
                &[],
            )
            .await
            .unwrap();
        assert_eq!(n, 2);
        let e = c
            .batch_execute(
                "INSERT INTO hits (page, n) VALUES ('/b', 1), ('/b', 2) \
                 ON CONFLICT (page) DO UPDATE SET n = 0",
            )
            .await
            .unwrap_err();
        assert_eq!(sqlstate(&e).0, "21000");
        let rows = c
            .query("SELECT page, n FROM hits ORDER BY page", &[])
            .await
            .unwrap();
        let got: Vec<(String, i64)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
        assert_eq!(got, [("/a".to_string(), 1), ("/home".to_string(), 1)]);
    });
}

/// A DATE parameter as tokio-postgres sends one without chrono: days
/// since 2000-01-01 in binary.
fn chrono_free_date(y: i32, m: u32, d: u32) -> PgDate {
    let days = maestro_storage::column::Date::from_ymd(y, m, d).unwrap().0 - 10_957;
    PgDate(days)
}

#[derive(Debug)]
struct PgDate(i32);

impl tokio_postgres::types::ToSql for PgDate {
    fn to_sql(
        &self,
        _: &Type,
        out: &mut bytes::BytesMut,
    ) -> Result<tokio_postgres::types::IsNull, Box<dyn std::error::Error + Sync + Send>> {
        out.extend_from_slice(&self.0.to_be_bytes());
        Ok(tokio_postgres::types::IsNull::No)
    }

    fn accepts(t: &Type) -> bool {
        *t == Type::DATE
    }

    tokio_postgres::types::to_sql_checked!();
}
