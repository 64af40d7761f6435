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
            "select n_name from nation left join region on n_regionkey = r_regionkey",
            "LEFT [OUTER] JOIN (only inner joins)",
        ),
        (
            "select n_name from nation where n_regionkey in (select r_regionkey from region)",
            "subqueries",
        ),
        (
            "select * from (select * from nation) t",
            "subqueries in FROM",
        ),
        (
            "select n_name from nation where n_name is null",
            "IS [NOT] NULL",
        ),
        ("select distinct n_regionkey from nation", "SELECT DISTINCT"),
        ("select upper(n_name) from nation", "function upper()"),
        ("insert into nation values (1)", "INSERT"),
        ("create table t (a int)", "CREATE TABLE"),
        (
            "select n_name from nation union select r_name from region",
            "UNION",
        ),
        ("with t as (select 1) select * from nation", "WITH"),
        ("select n_name from nation, region", "cross join"),
        ("select n_name from nation limit 1 offset 2", "OFFSET"),
        (
            "select case when n_nationkey = 1 then 1 end from nation",
            "CASE without ELSE",
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
