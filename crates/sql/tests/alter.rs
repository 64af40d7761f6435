//! ALTER TABLE on the SQL store: columns added (filled with their default,
//! NULL, or refused for NOT NULL on rows), dropped (with their indexes and
//! keys), renamed; the table renamed; defaults and NOT NULL changed — on a
//! table with a delta and merged, inside transactions (rolled back, after
//! the transaction's own writes), against a concurrent writer (40001), and
//! across a restart of a durable store.

mod common;

use common::{autocommit, exec, query_in};
use maestro_sql::store::Written;
use maestro_sql::{ErrorKind, Store};
use maestro_tpch::queries::Value;

fn rows(store: &Store, sql: &str) -> Vec<Vec<Value>> {
    common::rows_of(store, sql)
}

fn fails(store: &Store, sql: &str) -> ErrorKind {
    common::write_error(store, sql).kind
}

/// The error of planning the query `sql`, which must fail.
fn query_fails(store: &Store, sql: &str) -> ErrorKind {
    let mut t = store.begin().unwrap();
    let view = store.view(&mut t);
    let e = maestro_sql::plan(&view, sql).expect_err(sql);
    t.abort();
    e.kind
}

fn i(v: i64) -> Value {
    Value::Int(v)
}

fn s(v: &str) -> Value {
    Value::Str(v.into())
}

/// `items(id, name)` with three rows, two of them in the main and one in
/// the delta.
fn items() -> Store {
    let store = Store::new();
    autocommit(
        &store,
        "create table items (id integer primary key, name text not null)",
    );
    autocommit(&store, "insert into items values (1, 'one'), (2, 'two')");
    store
        .merge_deltas(maestro_sql::store::MergeScope::All)
        .unwrap();
    autocommit(&store, "insert into items values (3, 'three')");
    store
}

#[test]
fn added_columns_take_their_default_or_null() {
    let store = items();
    assert_eq!(
        autocommit(&store, "alter table items add column price numeric(8,2)"),
        Written::AlterTable
    );
    autocommit(
        &store,
        "alter table items add stock integer not null default 7, add column tag text default 'new'",
    );
    assert_eq!(
        rows(
            &store,
            "select id, price, stock, tag from items order by id"
        ),
        vec![
            vec![i(1), Value::Null, i(7), s("new")],
            vec![i(2), Value::Null, i(7), s("new")],
            vec![i(3), Value::Null, i(7), s("new")],
        ]
    );
    // The new columns take writes and their defaults as any column does.
    autocommit(&store, "insert into items (id, name) values (4, 'four')");
    autocommit(&store, "update items set price = 2.5 where id = 1");
    assert_eq!(
        rows(
            &store,
            "select id, price, stock, tag from items where id in (1, 4) order by id"
        ),
        vec![
            vec![
                i(1),
                Value::Decimal {
                    value: 250,
                    scale: 2
                },
                i(7),
                s("new")
            ],
            vec![i(4), Value::Null, i(7), s("new")],
        ]
    );
    // NOT NULL without a default on rows: 23502; on an empty table: fine.
    assert_eq!(
        fails(&store, "alter table items add column qty integer not null"),
        ErrorKind::NotNullViolation
    );
    autocommit(&store, "create table empty (a integer)");
    autocommit(&store, "alter table empty add column b integer not null");
    assert_eq!(
        fails(&store, "insert into empty (a) values (1)"),
        ErrorKind::NotNullViolation
    );
    // An existing name: 42701, or nothing with IF NOT EXISTS.
    assert_eq!(
        fails(&store, "alter table items add column name text"),
        ErrorKind::DuplicateColumn
    );
    autocommit(
        &store,
        "alter table items add column if not exists name text",
    );
    // A default the column cannot hold fails at the ALTER.
    assert_eq!(
        fails(
            &store,
            "alter table items add column n smallint default 70000"
        ),
        ErrorKind::OutOfRange
    );
}

#[test]
fn dropped_columns_take_their_indexes_and_keys_along() {
    let store = items();
    autocommit(&store, "alter table items add column code integer");
    autocommit(&store, "update items set code = id * 10");
    autocommit(&store, "create unique index items_code on items (code)");
    assert_eq!(
        fails(&store, "insert into items values (9, 'nine', 10)"),
        ErrorKind::UniqueViolation
    );
    autocommit(&store, "alter table items drop column code");
    assert_eq!(
        rows(&store, "select * from items order by id"),
        vec![
            vec![i(1), s("one")],
            vec![i(2), s("two")],
            vec![i(3), s("three")],
        ]
    );
    // The index went with the column: its name is free again.
    autocommit(&store, "create index items_code on items (name)");
    // The primary key went with its column too.
    autocommit(&store, "alter table items add column k integer default 0");
    autocommit(&store, "alter table items drop column id");
    autocommit(&store, "insert into items values ('uno', 0)");
    assert_eq!(
        rows(&store, "select count(*) from items where k = 0"),
        vec![vec![i(4)]]
    );
    // Unknown: 42703, or nothing with IF EXISTS; the last column stays.
    assert_eq!(
        fails(&store, "alter table items drop column nope"),
        ErrorKind::UnknownColumn
    );
    autocommit(&store, "alter table items drop column if exists nope");
    autocommit(&store, "alter table items drop column k");
    assert_eq!(
        fails(&store, "alter table items drop column name"),
        ErrorKind::Unsupported
    );
}

#[test]
fn renames_keep_rows_keys_and_indexes() {
    let store = items();
    autocommit(&store, "create index items_name on items (name)");
    autocommit(&store, "alter table items rename column name to label");
    assert_eq!(
        rows(&store, "select id from items where label = 'two'"),
        vec![vec![i(2)]]
    );
    assert_eq!(
        query_fails(&store, "select name from items"),
        ErrorKind::UnknownColumn
    );
    autocommit(&store, "alter table items rename to things");
    assert_eq!(
        query_fails(&store, "select * from items"),
        ErrorKind::UnknownTable
    );
    assert_eq!(
        rows(&store, "select count(*) from things"),
        vec![vec![i(3)]]
    );
    // The key followed the table: a repeated id is still refused.
    assert_eq!(
        fails(&store, "insert into things values (1, 'again')"),
        ErrorKind::UniqueViolation
    );
    autocommit(&store, "create table other (a integer)");
    assert_eq!(
        fails(&store, "alter table things rename to other"),
        ErrorKind::DuplicateTable
    );
    assert_eq!(
        fails(&store, "alter table things rename column label to id"),
        ErrorKind::DuplicateColumn
    );
    assert_eq!(
        fails(&store, "alter table nope rename to x"),
        ErrorKind::UnknownTable
    );
    autocommit(&store, "alter table if exists nope rename to x");
}

#[test]
fn defaults_and_not_null_change() {
    let store = items();
    autocommit(&store, "alter table items add column qty integer");
    autocommit(&store, "alter table items alter column qty set default 5");
    autocommit(&store, "insert into items (id, name) values (4, 'four')");
    autocommit(&store, "alter table items alter qty drop default");
    autocommit(&store, "insert into items (id, name) values (5, 'five')");
    assert_eq!(
        rows(
            &store,
            "select id, qty from items where id >= 3 order by id"
        ),
        vec![
            vec![i(3), Value::Null],
            vec![i(4), i(5)],
            vec![i(5), Value::Null]
        ]
    );
    // SET NOT NULL checks the rows.
    assert_eq!(
        fails(&store, "alter table items alter column qty set not null"),
        ErrorKind::NotNullViolation
    );
    autocommit(&store, "update items set qty = 0 where qty is null");
    autocommit(&store, "alter table items alter column qty set not null");
    assert_eq!(
        fails(&store, "insert into items (id, name) values (6, 'six')"),
        ErrorKind::NotNullViolation
    );
    autocommit(&store, "alter table items alter column name drop not null");
    autocommit(&store, "insert into items (id, qty) values (6, 1)");
    assert_eq!(
        rows(&store, "select name from items where id = 6"),
        vec![vec![Value::Null]]
    );
    // Not here: a type change, constraints.
    assert_eq!(
        fails(&store, "alter table items alter column qty type bigint"),
        ErrorKind::Unsupported
    );
    assert_eq!(
        fails(&store, "alter table items add constraint u unique (qty)"),
        ErrorKind::Unsupported
    );
    assert_eq!(
        fails(&store, "alter table items add column z serial"),
        ErrorKind::Unsupported
    );
}

#[test]
fn an_alter_is_transactional() {
    let store = items();
    // Rolled back: nothing changed.
    let mut t = store.begin().unwrap();
    exec(&store, &mut t, "insert into items values (4, 'four')").unwrap();
    exec(
        &store,
        &mut t,
        "alter table items add column extra integer default 1",
    )
    .unwrap();
    // The transaction sees its own row and the new column.
    assert_eq!(
        query_in(&store, &mut t, "select count(*) from items where extra = 1").rows,
        vec![vec![i(4)]]
    );
    t.abort();
    assert_eq!(
        query_fails(&store, "select extra from items"),
        ErrorKind::UnknownColumn
    );
    assert_eq!(rows(&store, "select count(*) from items"), vec![vec![i(3)]]);
    // A writer whose snapshot predates an ALTER that committed: 40001.
    let mut late = store.begin().unwrap();
    query_in(&store, &mut late, "select count(*) from items");
    autocommit(&store, "alter table items add column extra integer");
    let failed = match exec(
        &store,
        &mut late,
        "insert into items (id, name) values (9, 'nine')",
    ) {
        Err(e) => e,
        Ok(_) => store.commit(late).expect_err("the table changed under it"),
    };
    assert_eq!(failed.kind, ErrorKind::SerializationFailure, "{failed}");
    assert_eq!(rows(&store, "select count(*) from items"), vec![vec![i(3)]]);
}

#[test]
fn altered_tables_survive_a_restart() {
    let dir = common::fresh_data_dir("alter");
    let open = || common::open_durable(&dir);
    let expected = {
        let store = open();
        autocommit(
            &store,
            "create table items (id integer primary key, name text not null, gone integer)",
        );
        autocommit(
            &store,
            "insert into items values (1, 'one', 0), (2, 'two', 0)",
        );
        autocommit(&store, "alter table items add column qty integer default 3");
        autocommit(&store, "insert into items (id, name) values (3, 'three')");
        autocommit(
            &store,
            "alter table items drop column gone, rename column name to label",
        );
        autocommit(&store, "update items set qty = 4 where id = 1");
        autocommit(&store, "alter table items rename to things");
        // A change of defaults only keeps the data, its delta and its log.
        autocommit(&store, "insert into things (id, label) values (5, 'five')");
        autocommit(&store, "alter table things alter column qty set default 9");
        autocommit(&store, "delete from things where id = 5");
        rows(&store, "select * from things order by id")
    };
    assert_eq!(
        expected,
        vec![
            vec![i(1), s("one"), i(4)],
            vec![i(2), s("two"), i(3)],
            vec![i(3), s("three"), i(3)],
        ]
    );
    let store = open();
    assert_eq!(rows(&store, "select * from things order by id"), expected);
    autocommit(&store, "insert into things (id, label) values (4, 'four')");
    assert_eq!(
        rows(&store, "select qty from things where id = 4"),
        vec![vec![i(9)]]
    );
    drop(store);
    let store = open();
    assert_eq!(
        rows(&store, "select count(*) from things"),
        vec![vec![i(4)]]
    );
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
}
