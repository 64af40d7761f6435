//! EXPLAIN ANALYZE over the wire: text rows in a `QUERY PLAN` column, as
//! EXPLAIN's, each operator with its actual rows (extended and simple
//! protocol).

mod common;

use common::with_client;
use tokio_postgres::SimpleQueryMessage;

#[test]
fn explain_analyze_answers_the_plan_with_actual_rows() {
    with_client(async |c| {
        c.batch_execute("CREATE TABLE t (a INTEGER); INSERT INTO t VALUES (1), (2), (3)")
            .await
            .unwrap();
        let sql = "explain analyze select count(*) from t where a > 1";
        let rows = c.query(sql, &[]).await.unwrap();
        assert_eq!(rows[0].columns()[0].name(), "QUERY PLAN");
        let lines: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
        assert!(
            lines[0].starts_with("Project") && lines[0].contains("(actual rows=1 "),
            "{lines:#?}"
        );
        assert!(
            lines
                .iter()
                .any(|l| l.trim_start().starts_with("Scan t") && l.contains("(actual rows=2 ")),
            "{lines:#?}"
        );
        assert!(
            lines.last().unwrap().starts_with("Execution: "),
            "{lines:#?}"
        );
        let simple: Vec<String> = c
            .simple_query(sql)
            .await
            .unwrap()
            .into_iter()
            .filter_map(|m| match m {
                SimpleQueryMessage::Row(r) => r.get(0).map(str::to_string),
                _ => None,
            })
            .collect();
        assert_eq!(simple.len(), lines.len());
    });
}
