//! CREATE INDEX / DROP INDEX over the wire: the SQLSTATEs of refused DDL,
//! EXPLAIN naming the index scan, and a prepared point query answering
//! through it.

mod common;

use common::{sqlstate, with_client};
use tokio_postgres::{Client, SimpleQueryMessage};

async fn text(c: &Client, sql: &str) -> Vec<String> {
    c.simple_query(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e:?}"))
        .into_iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::Row(r) => Some(r.get(0).unwrap_or("NULL").to_string()),
            _ => None,
        })
        .collect()
}

async fn fails(c: &Client, sql: &str) -> String {
    let e = c
        .simple_query(sql)
        .await
        .err()
        .unwrap_or_else(|| panic!("{sql} should fail"));
    sqlstate(&e).0
}

#[test]
fn index_ddl_and_index_scans_over_the_wire() {
    with_client(async |c| {
        c.batch_execute("CREATE TABLE t (k BIGINT, s VARCHAR(10))")
            .await
            .unwrap();
        let values: Vec<String> = (0..1000).map(|k| format!("({k}, 's{}')", k % 7)).collect();
        c.batch_execute(&format!("INSERT INTO t VALUES {}", values.join(", ")))
            .await
            .unwrap();
        c.batch_execute("CALL maestro.merge()").await.unwrap();
        c.batch_execute("CREATE INDEX t_k ON t (k)").await.unwrap();
        assert_eq!(fails(c, "CREATE INDEX t_k ON t (s)").await, "42P07");
        assert_eq!(fails(c, "CREATE UNIQUE INDEX u ON t (s)").await, "23505");
        assert_eq!(fails(c, "CREATE INDEX u ON t (k, s)").await, "0A000");
        assert_eq!(fails(c, "CREATE INDEX u ON nope (k)").await, "42P01");
        assert_eq!(fails(c, "CREATE INDEX u ON t (nope)").await, "42703");
        assert_eq!(fails(c, "DROP INDEX nope").await, "42704");
        c.batch_execute("DROP INDEX IF EXISTS nope").await.unwrap();
        let plan = text(c, "EXPLAIN SELECT s FROM t WHERE k = 42")
            .await
            .join("\n");
        assert!(plan.contains("Index Scan t using t_k (t.k = 42)"), "{plan}");
        // A prepared point query: the parameter is the lookup's key.
        c.batch_execute("INSERT INTO t VALUES (5000, 'new')")
            .await
            .unwrap();
        for (k, s) in [(42i64, "s0"), (5000, "new")] {
            let rows = c
                .query("SELECT s FROM t WHERE k = $1", &[&k])
                .await
                .unwrap();
            let got: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
            assert_eq!(got, [s]);
        }
        c.batch_execute("DROP INDEX t_k").await.unwrap();
        let plan = text(c, "EXPLAIN SELECT s FROM t WHERE k = 42")
            .await
            .join("\n");
        assert!(!plan.contains("Index Scan"), "{plan}");
    });
}
