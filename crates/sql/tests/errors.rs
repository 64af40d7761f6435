//! Bad and unsupported SQL: every failure is an `SqlError` value of the right
//! kind, naming the offending thing, with the position sqlparser gives.

mod common;

use common::error;
use maestro_sql::{ErrorKind, Position};

fn at(line: u64, column: u64) -> Option<Position> {
    Some(Position { line, column })
}

#[track_caller]
fn expect(sql: &str, kind: ErrorKind, needle: &str) -> maestro_sql::SqlError {
    let e = error(sql);
    assert_eq!(e.kind, kind, "{sql}: {e}");
    assert!(
        e.message.contains(needle),
        "{sql}: message {:?} should name {needle:?}",
        e.message
    );
    e
}

#[test]
fn syntax_errors_carry_the_parsers_position() {
    let e = expect("select * fromm nation", ErrorKind::Parse, "syntax error");
    assert_eq!(e.position.map(|p| p.line), Some(1));
    expect(
        "select n_name from nation where",
        ErrorKind::Parse,
        "found: EOF",
    );
    expect("", ErrorKind::Parse, "empty");
}

#[test]
fn unknown_tables_and_columns() {
    let e = expect(
        "select * from lineitems",
        ErrorKind::UnknownTable,
        "\"lineitems\"",
    );
    assert_eq!(e.position, at(1, 15));
    assert!(
        e.message.contains("orders, lineitem"),
        "lists the tables: {e}"
    );
    let e = expect(
        "select l_foo from lineitem",
        ErrorKind::UnknownColumn,
        "\"l_foo\"",
    );
    assert_eq!(e.position, at(1, 8));
    let e = expect(
        "select n_name\nfrom nation\nwhere n_regionkey = 1 and n_colour = 'red'",
        ErrorKind::UnknownColumn,
        "\"n_colour\"",
    );
    assert_eq!(e.position, at(3, 27));
    expect(
        "select x.n_name from nation n",
        ErrorKind::UnknownTable,
        "\"x\"",
    );
    // An alias hides the table's own name.
    expect(
        "select nation.n_name from nation n",
        ErrorKind::UnknownTable,
        "\"nation\"",
    );
    expect(
        "select n.r_name from nation n, region r where n.n_regionkey = r.r_regionkey",
        ErrorKind::UnknownColumn,
        "\"r_name\" in table \"n\"",
    );
}

#[test]
fn ambiguous_columns_and_duplicate_aliases() {
    let e = expect(
        "select n_name from nation n1, nation n2 where n1.n_nationkey = n2.n_nationkey",
        ErrorKind::AmbiguousColumn,
        "\"n_name\" is ambiguous (in n1, n2)",
    );
    assert_eq!(e.position, at(1, 8));
    expect(
        "select 1 from nation, nation",
        ErrorKind::Invalid,
        "more than once",
    );
}

#[test]
fn type_mismatches() {
    let e = expect(
        "select n_name from nation where n_name = 5",
        ErrorKind::TypeMismatch,
        "cannot compare varchar with integer",
    );
    assert_eq!(e.position, at(1, 33));
    expect(
        "select sum(n_name) from nation",
        ErrorKind::TypeMismatch,
        "sum() of a varchar",
    );
    expect(
        "select count(*) from lineitem where l_quantity like '1%'",
        ErrorKind::TypeMismatch,
        "LIKE needs a string",
    );
    expect(
        "select n_name + 1 from nation",
        ErrorKind::TypeMismatch,
        "cannot apply Add to varchar and integer",
    );
    expect(
        "select count(*) from orders where o_orderdate < date '1995-13-45'",
        ErrorKind::TypeMismatch,
        "invalid date '1995-13-45'",
    );
    expect(
        "select count(*) from orders where o_orderdate",
        ErrorKind::TypeMismatch,
        "WHERE needs a boolean condition, not date",
    );
    expect(
        "select count(*) from orders where o_orderkey in (1, 'x')",
        ErrorKind::TypeMismatch,
        "IN list value 'x'",
    );
}

#[test]
fn invalid_grouping_and_aggregates() {
    expect(
        "select n_name, count(*) from nation",
        ErrorKind::Invalid,
        "\"nation.n_name\" must appear in the GROUP BY clause",
    );
    expect(
        "select n_regionkey, n_name from nation group by n_regionkey",
        ErrorKind::Invalid,
        "\"nation.n_name\" must appear in the GROUP BY clause",
    );
    expect(
        "select n_name from nation where count(*) > 1",
        ErrorKind::Invalid,
        "not allowed in WHERE",
    );
    expect(
        "select sum(count(*)) from nation",
        ErrorKind::Invalid,
        "not allowed in the argument of an aggregate",
    );
    expect(
        "select n_name from nation order by 3",
        ErrorKind::Invalid,
        "position 3 is not in the select list",
    );
}

#[test]
fn unsupported_constructs_are_named() {
    for (sql, needle) in [
        (
            "select n_name from nation right join region on n_regionkey = r_regionkey",
            "RIGHT [OUTER] JOIN (only inner and left outer joins)",
        ),
        (
            "select n_name from nation full outer join region on n_regionkey = r_regionkey",
            "FULL OUTER JOIN",
        ),
        (
            "select n_name from nation left join region on n_regionkey < r_regionkey",
            "LEFT JOIN without an equality",
        ),
        (
            "select n_name, (select min(r_name) from region where r_regionkey = n_regionkey) from nation",
            "subqueries in the SELECT list other than uncorrelated scalar ones",
        ),
        (
            "select n_name from nation where n_regionkey = 1 or exists (select * from region where r_regionkey = n_regionkey)",
            "EXISTS / IN (SELECT …) other than as a condition joined by AND in WHERE",
        ),
        (
            "select n_name from nation where n_regionkey = (select r_regionkey from region where r_name = 'ASIA')",
            "a scalar subquery other than an aggregate without GROUP BY",
        ),
        (
            "select n_name from nation where n_nationkey > (select min(s_suppkey) from supplier where s_nationkey < n_nationkey)",
            "correlation is not equalities",
        ),
        (
            "select n_name from nation where exists (select count(*) from supplier where s_nationkey = n_nationkey group by s_suppkey)",
            "a correlated EXISTS / IN subquery with GROUP BY",
        ),
        (
            "select n_name from nation where exists (select n_name from supplier where s_nationkey = n_nationkey)",
            "a correlated reference outside the subquery's WHERE",
        ),
        (
            "select c_custkey from customer left join orders on c_custkey = o_custkey where o_orderkey not in (select l_orderkey from lineitem where l_suppkey = c_nationkey)",
            "a correlated NOT IN (SELECT …) over values that may be NULL",
        ),
        (
            "select n_name from nation where n_nationkey in (select r_regionkey from region) group by n_name having count(*) > (select min(r_regionkey) from region where r_regionkey = n_regionkey)",
            "subqueries in HAVING other than uncorrelated scalar ones",
        ),
        (
            "select cast(n_nationkey as decimal) from nation",
            "without a scale",
        ),
        (
            "select distinct on (n_regionkey) n_name from nation",
            "DISTINCT ON",
        ),
        ("select initcap(n_name) from nation", "function initcap()"),
        (
            "select * from generate_series(1, 1000000000000)",
            "a series of 1000000000000 rows (at most 100000000 here)",
        ),
        (
            "select * from generate_series(1)",
            "generate_series with 1 arguments",
        ),
        ("select * from json_each(1)", "table function json_each"),
        ("insert into nation values (1)", "INSERT"),
        ("create table t (a int)", "CREATE TABLE"),
        (
            "select n_name from nation union select r_name from region",
            "UNION",
        ),
        (
            "with recursive t as (select n_name from nation) select * from t",
            "WITH RECURSIVE",
        ),
        (
            "select * from lateral (select n_name from nation) t",
            "LATERAL",
        ),
        ("select n_name from nation, region", "cross join"),
        (
            "select n_name from nation limit n_nationkey",
            "LIMIT of an expression",
        ),
        ("select 1; select 2", "several statements"),
    ] {
        let e = error(sql);
        assert!(e.is_unsupported(), "{sql}: {e}");
        assert!(
            e.message.contains(needle),
            "{sql}: {:?} should name {needle:?}",
            e.message
        );
    }
}

#[test]
fn outer_join_conditions_name_only_their_two_tables() {
    let e = expect(
        "select count(*) from region, nation left join supplier on s_nationkey = n_nationkey and r_regionkey = 1",
        ErrorKind::Invalid,
        "may only name the two tables it joins",
    );
    assert_eq!(e.position.map(|p| p.line), Some(1));
    expect(
        "select count(*) from nation left join supplier on n_nationkey = s_nationkey + 'x'",
        ErrorKind::TypeMismatch,
        "cannot apply",
    );
    expect(
        "select n_name from nation where n_nationkey in (select r_regionkey, r_name from region)",
        ErrorKind::TypeMismatch,
        "needs one column",
    );
    expect(
        "select n_name from nation where n_nationkey = (select min(r_regionkey), max(r_regionkey) from region)",
        ErrorKind::TypeMismatch,
        "one column",
    );
    expect(
        "select n_name from nation where n_name in (select r_regionkey from region)",
        ErrorKind::TypeMismatch,
        "cannot compare",
    );
    expect(
        "select cast('x' as integer) from nation",
        ErrorKind::InvalidText,
        "invalid input syntax for type integer: \"x\"",
    );
    expect(
        "select cast(' 1e3 ' as double precision) + cast('x' as double precision) from nation",
        ErrorKind::InvalidText,
        "invalid input syntax for type double precision",
    );
    expect(
        "select cast('1995-13-45' as date) from nation",
        ErrorKind::InvalidText,
        "invalid input syntax for type date",
    );
    expect(
        "select cast(date '2020-01-01' as integer) from nation",
        ErrorKind::TypeMismatch,
        "cannot cast date to integer",
    );
    expect(
        "select distinct n_name from nation order by n_nationkey",
        ErrorKind::Invalid,
        "ORDER BY expressions must appear in the select list",
    );
    expect(
        "select * from (select n_name from nation) as t (a, b)",
        ErrorKind::Invalid,
        "has 1 columns available but 2 columns specified",
    );
}
