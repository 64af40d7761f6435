//! `maestro sql`: answers on stdout (table, CSV, JSON), EXPLAIN, and bad or
//! unsupported SQL exiting 2 with the error named.

mod common;

use common::{json_of, maestro, stderr};

#[test]
fn sql_prints_the_answer_and_progress_goes_to_stderr() {
    let out = maestro(&[
        "sql",
        "--sf",
        "0.01",
        "select r_name, count(*) as nations from region join nation on n_regionkey = r_regionkey \
         group by r_name order by r_name",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let table = String::from_utf8(out.stdout.clone()).unwrap();
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines[0], "r_name      | nations", "{table}");
    assert_eq!(lines[2], "AFRICA      |       5", "{table}");
    assert_eq!(lines.last(), Some(&"(5 rows)"), "{table}");
    let err = stderr(&out);
    assert!(err.contains("loading TPC-H SF 0.01"), "{err}");
    assert!(err.contains("5 row(s)"), "{err}");
}

#[test]
fn sql_json_and_csv_match_the_tpch_answer() {
    let q6 = "select sum(l_extendedprice * l_discount) as revenue from lineitem \
              where l_shipdate >= date '1994-01-01' and l_shipdate < date '1994-01-01' + interval '1' year \
              and l_discount between 0.05 and 0.07 and l_quantity < 24";
    let json = json_of(&maestro(&["sql", "--sf", "0.01", "--json", q6]));
    assert_eq!(json["columns"], serde_json::json!(["revenue"]));
    let expected = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tpch/answers/sf0.01/q6_validation.csv"
    ))
    .unwrap();
    let value = expected.lines().nth(1).unwrap();
    assert_eq!(json["rows"][0][0], value, "{json}");
    let out = maestro(&["sql", "--sf", "0.01", "--csv", q6]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(String::from_utf8(out.stdout.clone()).unwrap(), expected);
}

#[test]
fn sql_explain_prints_the_plan() {
    let out = maestro(&[
        "sql",
        "--sf",
        "0.01",
        "explain select o_orderpriority, count(*) as n from orders, lineitem \
         where o_orderkey = l_orderkey and l_shipmode = 'AIR' group by o_orderpriority",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let plan = String::from_utf8(out.stdout.clone()).unwrap();
    assert!(
        plan.starts_with("Project orders.o_orderpriority, count(*) AS n (est="),
        "{plan}"
    );
    assert!(
        // The filtered lineitem is estimated smaller than orders: it comes first.
        plan.contains("HashJoin lineitem.l_orderkey = orders.o_orderkey"),
        "{plan}"
    );
    assert!(
        plan.contains(
            "Scan lineitem [l_orderkey, l_shipmode] filter [lineitem.l_shipmode = 'AIR']"
        ),
        "{plan}"
    );
}

#[test]
fn sql_explain_analyze_prints_actual_rows() {
    let q = "select r_name, count(*) as nations from region join nation on n_regionkey = r_regionkey \
             group by r_name";
    let flag = maestro(&["sql", "--sf", "0.01", "--explain-analyze", q]);
    let text = maestro(&["sql", "--sf", "0.01", &format!("EXPLAIN ANALYZE {q}")]);
    for out in [flag, text] {
        assert!(out.status.success(), "{}", stderr(&out));
        let plan = String::from_utf8(out.stdout.clone()).unwrap();
        let lines: Vec<&str> = plan.lines().collect();
        assert!(
            lines[0].starts_with("Project ") && lines[0].contains("(actual rows=5 "),
            "{plan}"
        );
        assert!(
            lines.iter().any(
                |l| l.trim_start().starts_with("Scan nation") && l.contains("(actual rows=25 ")
            ),
            "{plan}"
        );
        assert!(lines.last().unwrap().starts_with("Execution: "), "{plan}");
    }
    // The flag takes the statement, not an EXPLAIN of it: a usage error.
    let out = maestro(&[
        "sql",
        "--sf",
        "0.01",
        "--explain-analyze",
        &format!("explain {q}"),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn bad_or_unsupported_sql_exits_2_naming_the_problem() {
    for (sql, needle) in [
        ("selec * from nation", "syntax error"),
        ("select * from nations", "unknown table \"nations\""),
        (
            "select n_nme from nation",
            "unknown column \"n_nme\" at line 1, column 8",
        ),
        (
            "select n_name from nation where n_name > 3",
            "cannot compare varchar with integer",
        ),
        (
            "select n_name from nation right join region on n_regionkey = r_regionkey",
            "unsupported: RIGHT [OUTER] JOIN",
        ),
        (
            "select n_name, (select min(r_name) from region where r_regionkey = n_regionkey) from nation",
            "unsupported: subqueries in the SELECT list",
        ),
        ("delete from nation", "unsupported: DELETE"),
    ] {
        let out = maestro(&["sql", "--sf", "0.01", sql]);
        assert_eq!(out.status.code(), Some(2), "{sql}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains(needle),
            "{sql}: {err:?} should contain {needle:?}"
        );
        assert!(out.stdout.is_empty(), "{sql}: nothing on stdout");
    }
    // A syntax error is reported before any data is loaded.
    let out = maestro(&["sql", "--sf", "0.01", "selec 1"]);
    assert!(!stderr(&out).contains("loading"), "{}", stderr(&out));
}
