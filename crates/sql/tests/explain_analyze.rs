//! EXPLAIN ANALYZE: the statement runs and each plan node's line carries its
//! actual output rows, which must equal what the same parts of the query
//! return when run on their own (times are printed, not asserted).

mod common;

use common::{explain, query};
use maestro_tpch::queries::Value;

/// `(line without annotation, actual rows)` of every plan line.
fn annotated(plan: &str) -> Vec<(String, usize)> {
    plan.lines()
        .filter(|l| !l.starts_with("Execution:"))
        .map(|l| {
            let (op, ann) = l
                .split_once(" (actual rows=")
                .unwrap_or_else(|| panic!("line without actual rows: {l}\n{plan}"));
            let rows = ann.split(' ').next().unwrap().parse().unwrap();
            assert!(ann.contains(" time="), "{l}");
            assert!(ann.contains(" tasks="), "{l}");
            (op.trim().to_string(), rows)
        })
        .collect()
}

fn count(sql: &str) -> usize {
    match query(sql).unwrap().rows[0][0] {
        Value::Int(n) => n as usize,
        ref v => panic!("count(*) gave {v:?}"),
    }
}

#[test]
fn explain_analyze_counts_the_rows_of_each_operator() {
    let sql = "select n_name, count(*) as suppliers from nation, supplier \
               where s_nationkey = n_nationkey and n_regionkey = 1 \
               group by n_name order by n_name";
    let result = query(sql).unwrap();
    let plan = explain(&format!("explain analyze {sql}"));
    eprintln!("{plan}"); // shown with --nocapture
    let lines = annotated(&plan);
    let rows_of = |prefix: &str| {
        lines
            .iter()
            .find(|(op, _)| op.starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix} in\n{plan}"))
            .1
    };
    let nations = count("select count(*) from nation where n_regionkey = 1");
    let suppliers = count("select count(*) from supplier");
    let joined = count(
        "select count(*) from nation, supplier where s_nationkey = n_nationkey and n_regionkey = 1",
    );
    assert!(
        nations > 0 && joined > 0 && joined < suppliers,
        "{nations} {joined} {suppliers}"
    );
    assert_eq!(rows_of("Scan nation"), nations, "{plan}");
    assert_eq!(rows_of("Scan supplier"), suppliers, "{plan}");
    assert_eq!(rows_of("HashJoin"), joined, "{plan}");
    assert_eq!(rows_of("Aggregate"), result.len(), "{plan}");
    assert_eq!(rows_of("Sort"), result.len(), "{plan}");
    assert_eq!(rows_of("Project"), result.len(), "{plan}");
    // The plan is the EXPLAIN plan, line for line.
    let plain = explain(&format!("explain {sql}"));
    let ops: Vec<&str> = lines.iter().map(|(op, _)| op.as_str()).collect();
    let plain: Vec<&str> = plain.lines().map(str::trim).collect();
    assert_eq!(ops, plain);
    assert!(
        plan.lines().last().unwrap().starts_with("Execution: "),
        "{plan}"
    );
}

#[test]
fn explain_analyze_of_a_top_k_and_an_empty_input() {
    let plan = explain(
        "explain analyze select o_orderkey from orders where o_totalprice < 0 \
         order by o_orderkey limit 3",
    );
    for (op, rows) in annotated(&plan) {
        assert_eq!(rows, 0, "{op}: nothing passes the filter\n{plan}");
    }
    let plan = explain("explain analyze select o_orderkey from orders order by o_orderkey limit 3");
    let lines = annotated(&plan);
    assert_eq!(
        lines.iter().find(|l| l.0.starts_with("Limit")).unwrap().1,
        3
    );
    assert_eq!(lines.iter().find(|l| l.0.starts_with("Sort")).unwrap().1, 3);
    let orders = count("select count(*) from orders");
    assert_eq!(
        lines.iter().find(|l| l.0.starts_with("Scan")).unwrap().1,
        orders
    );
}

#[test]
fn explain_analyze_reports_a_division_by_zero() {
    let e = common::error("explain analyze select 1 / (n_regionkey - n_regionkey) from nation");
    assert_eq!(e.kind, maestro_sql::ErrorKind::DivisionByZero);
}

#[test]
fn a_with_query_referenced_twice_runs_once() {
    let sql = "with r as (select n_regionkey as k, count(*) as c from nation, region \
               where n_regionkey = r_regionkey group by n_regionkey) \
               select a.k, b.c from r a, r b where a.c = b.c order by a.k, b.c";
    let result = query(sql).unwrap();
    // Without the WITH query (two derived tables): the same answer.
    let inline = "(select n_regionkey as k, count(*) as c from nation, region \
                  where n_regionkey = r_regionkey group by n_regionkey)";
    let plain = query(&format!(
        "select a.k, b.c from {inline} a, {inline} b where a.c = b.c order by a.k, b.c"
    ))
    .unwrap();
    assert_eq!(result.rows, plain.rows);
    // Every region has five nations: each region meets all five.
    let want: Vec<Vec<Value>> = (0..5)
        .flat_map(|k| (0..5).map(move |_| vec![Value::Int(k), Value::Int(5)]))
        .collect();
    assert_eq!(result.rows, want);
    let plan = explain(&format!("explain analyze {sql}"));
    eprintln!("{plan}");
    let lines = annotated(&plan);
    // One scan of each table, run once: its line has the table's rows.
    let scans: Vec<&(String, usize)> = lines
        .iter()
        .filter(|l| l.0.starts_with("Scan nation"))
        .collect();
    assert_eq!(scans.len(), 1, "{plan}");
    assert_eq!(scans[0].1, count("select count(*) from nation"), "{plan}");
    let shared = lines
        .iter()
        .find(|l| l.0.starts_with("Shared #1"))
        .expect(&plan);
    assert_eq!(shared.1, 5, "five regions: {plan}");
    let reference = lines
        .iter()
        .find(|l| l.0.starts_with("-> #1"))
        .expect(&plan);
    assert_eq!(reference.1, 5, "{plan}");
}

/// NOT EXISTS over a filtered table, for a few outer rows: the subquery's
/// rows are reduced to the outer keys before the filter runs, so its scan
/// outputs only the filtered rows of those keys, not of the whole table.
#[test]
fn a_filtered_subquery_scan_is_reduced_by_the_outer_keys_first() {
    let sql = "select count(*) from orders where o_custkey < 20 and not exists \
               (select * from lineitem where l_orderkey = o_orderkey \
               and l_receiptdate > l_commitdate)";
    let plan = explain(&format!("explain analyze {sql}"));
    let lines = annotated(&plan);
    let scanned = lines
        .iter()
        .find(|(op, _)| op.starts_with("Scan lineitem"))
        .unwrap_or_else(|| panic!("no lineitem scan in\n{plan}"))
        .1;
    let late_of_those = count(
        "select count(*) from orders, lineitem where l_orderkey = o_orderkey \
         and o_custkey < 20 and l_receiptdate > l_commitdate",
    );
    let late = count("select count(*) from lineitem where l_receiptdate > l_commitdate");
    assert!(
        late_of_those > 0 && late_of_those * 10 < late,
        "{late_of_those} {late}"
    );
    assert_eq!(scanned, late_of_those, "{plan}");
    let without = count(sql);
    let orders = count("select count(*) from orders where o_custkey < 20");
    let with_late = count(
        "select count(*) from orders where o_custkey < 20 and exists \
         (select * from lineitem where l_orderkey = o_orderkey \
         and l_receiptdate > l_commitdate)",
    );
    assert_eq!(without + with_late, orders);
}

/// A filter right below an aggregate whose keys and arguments the operator
/// evaluates itself runs inside the aggregation: the scan's line counts the
/// rows the filter selected but charges no memory (no vector of their row
/// ids is materialized), and the answer is the unfused one.
#[test]
fn a_filter_under_an_aggregate_is_fused_into_it() {
    let sql = "select l_returnflag, count(*) as n, sum(l_extendedprice * (1 - l_discount)) \
               as s from lineitem where l_shipdate <= date '1998-09-02' \
               group by l_returnflag order by l_returnflag";
    let plan = explain(&format!("explain analyze {sql}"));
    eprintln!("{plan}");
    let scan = plan
        .lines()
        .find(|l| l.trim_start().starts_with("Scan lineitem"))
        .unwrap_or_else(|| panic!("no scan in\n{plan}"));
    let selected = query("select l_orderkey from lineitem where l_shipdate <= date '1998-09-02'")
        .unwrap()
        .rows
        .len();
    let all = count("select count(*) from lineitem");
    assert!(selected > 0 && selected < all, "{selected} {all}");
    assert!(scan.contains(&format!("actual rows={selected} ")), "{plan}");
    assert!(scan.contains("memory=0.0 KiB"), "{plan}");
    // The same rows through an unfused aggregate (COUNT of a string column
    // is not an operator expression, so it is not fused): the same counts
    // and sums.
    let fused = query(sql).unwrap();
    let unfused = query(
        "select l_returnflag, count(*) as n, sum(l_extendedprice * (1 - l_discount)) as s, \
         count(l_linestatus) from lineitem where l_shipdate <= date '1998-09-02' \
         group by l_returnflag order by l_returnflag",
    )
    .unwrap();
    assert_eq!(fused.rows.len(), unfused.rows.len());
    for (f, u) in fused.rows.iter().zip(&unfused.rows) {
        assert_eq!(f[..], u[..3]);
    }
    let plan = explain(
        "explain analyze select count(l_linestatus) from lineitem \
         where l_shipdate <= date '1998-09-02'",
    );
    let scan = plan
        .lines()
        .find(|l| l.trim_start().starts_with("Scan lineitem"))
        .unwrap();
    assert!(!scan.contains("memory=0.0 KiB"), "unfused: {plan}");
}

/// A fused filter that selects nothing: the scalar aggregate's one row,
/// COUNT 0 and SUM NULL.
#[test]
fn a_fused_filter_selecting_nothing_gives_the_empty_aggregate() {
    let r = query(
        "select count(*), sum(l_quantity), min(l_shipdate) from lineitem \
         where l_quantity < 0",
    )
    .unwrap();
    assert_eq!(r.rows, vec![vec![Value::Int(0), Value::Null, Value::Null]]);
}

/// A large filtered scan joined to a small side probes it through its
/// filter (`lower/fused_join.rs`): the scan's line counts the rows its
/// filter kept but creates no task and charges no memory of its own (no
/// row-id vector of them), and the answer is the unfused one (a key that is
/// an expression, `+ 0`, is not fused).
#[test]
fn a_filtered_scan_probes_a_small_join_side_through_its_filter() {
    let sql = |key: &str| {
        format!(
            "select s_name, count(*) as n from supplier, lineitem \
             where s_suppkey = {key} and s_nationkey = 3 and l_shipdate >= date '1995-01-01' \
             group by s_name order by s_name"
        )
    };
    let plan = explain(&format!("explain analyze {}", sql("l_suppkey")));
    eprintln!("{plan}");
    let scan = plan
        .lines()
        .find(|l| l.trim_start().starts_with("Scan lineitem"))
        .unwrap_or_else(|| panic!("no scan in\n{plan}"));
    let kept = count("select count(*) from lineitem where l_shipdate >= date '1995-01-01'");
    assert!(
        scan.contains(&format!("(actual rows={kept} ")),
        "{kept}: {plan}"
    );
    assert!(
        scan.contains(" tasks=0 memory=0.0 KiB)"),
        "the filter ran in the probe: {plan}"
    );
    let fused = query(&sql("l_suppkey")).unwrap();
    assert!(!fused.rows.is_empty());
    assert_eq!(fused.rows, query(&sql("l_suppkey + 0")).unwrap().rows);
    let plan = explain(&format!("explain analyze {}", sql("l_suppkey + 0")));
    let scan = plan
        .lines()
        .find(|l| l.trim_start().starts_with("Scan lineitem"))
        .unwrap_or_else(|| panic!("no scan in\n{plan}"));
    assert!(!scan.contains(" tasks=0 memory=0.0 KiB)"), "{plan}");
}
