//! Division by zero over the wire: SQLSTATE 22012 from the simple and the
//! extended protocol, on constants and on stored rows; rows that never reach
//! the division (filtered out, a CASE branch not taken) do not raise; the
//! session goes on after the error.

mod common;

use common::{first_column as values, sqlstate, with_client};

#[test]
fn division_by_zero_is_sqlstate_22012() {
    with_client(async |c| {
        c.batch_execute(
            "CREATE TABLE t (a INTEGER, b INTEGER, d DECIMAL(6,2)); \
             INSERT INTO t VALUES (1, 0, 0.00), (4, 2, 0.50)",
        )
        .await
        .unwrap();
        for sql in [
            "select 1 / 0",
            "select 1 % 0",
            "select 1.5 / 0.0",
            "select cast(1 as double) / 0",
            "select a / b from t",
            "select a % d from t",
            "select sum(a % b) from t",
            "select count(*) from t where a / b > 1",
        ] {
            let e = c
                .simple_query(sql)
                .await
                .err()
                .unwrap_or_else(|| panic!("{sql} should fail"));
            let (code, msg) = sqlstate(&e);
            assert_eq!(code, "22012", "{sql}: {msg}");
            assert_eq!(msg, "division by zero", "{sql}");
        }
        // The extended protocol: the zero comes in as a parameter.
        let s = c.prepare("select $1::int / $2::int").await.unwrap();
        let e = c.query(&s, &[&7i64, &0i64]).await.unwrap_err();
        assert_eq!(sqlstate(&e).0, "22012");
        let v: f64 = c.query_one(&s, &[&7i64, &2i64]).await.unwrap().get(0);
        assert_eq!(v, 3.5);
        // Only the rows that reach the division count.
        let rows = c
            .simple_query("select a / b from t where b <> 0")
            .await
            .unwrap();
        assert_eq!(values(rows), ["2"]);
        let rows = c
            .simple_query("select case when b = 0 then null else a / b end from t order by a")
            .await
            .unwrap();
        assert_eq!(values(rows), ["NULL", "2"]);
    });
}
