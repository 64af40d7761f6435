//! The `Catalog` trait over tables other than TPC-H's (as a later MVCC
//! snapshot's tables would be): binding, running, and the edge cases of
//! tiny inputs — SUM/MIN/MAX/AVG of no rows are NULL, COUNT is 0.

mod common;

use maestro_execution::{Executor, Granularity};
use maestro_sql::{Catalog, Output, TableDef, catalog::table_def};
use maestro_storage::column::{Column, DecimalColumn, DictColumn, StrHeap, Table};
use maestro_tpch::queries::Value;

struct Shop {
    tables: Vec<Table>,
}

impl Catalog for Shop {
    fn table(&self, name: &str) -> Option<TableDef> {
        self.data(name).map(table_def)
    }
    fn data(&self, name: &str) -> Option<&Table> {
        self.tables.iter().find(|t| t.name() == name)
    }
    fn table_names(&self) -> Vec<String> {
        self.tables.iter().map(|t| t.name().to_string()).collect()
    }
}

fn shop() -> Shop {
    let items = Table::new(
        "items",
        [
            ("id", Column::Int64(vec![1, 2, 3, 4])),
            (
                "kind",
                Column::Str(DictColumn::from_strs(["tea", "cup", "tea", "pot"])),
            ),
            (
                "price",
                Column::Decimal(DecimalColumn::new(2, vec![450, 1299, 375, 2500]).unwrap()),
            ),
            (
                "note",
                Column::StrHeap(StrHeap::from_strs(["green", "blue", "black", "iron"])),
            ),
        ],
    )
    .unwrap();
    let sales = Table::new(
        "sales",
        [
            ("item", Column::Int64(vec![1, 1, 3, 4, 4, 4])),
            ("qty", Column::Int32(vec![2, 1, 5, 1, 1, 2])),
        ],
    )
    .unwrap();
    Shop {
        tables: vec![items, sales],
    }
}

fn rows(sql: &str) -> Vec<Vec<Value>> {
    let exec = Executor::new(common::scheduler(), Granularity::Fixed(2)).with_min_rows_per_task(1);
    match maestro_sql::execute(&exec, &shop(), sql) {
        Ok(Output::Rows(r)) => r.rows,
        other => panic!("{sql}: {other:?}"),
    }
}

fn dec(value: i128, scale: u8) -> Value {
    Value::Decimal { value, scale }
}

#[test]
fn a_catalog_of_other_tables_binds_and_runs() {
    assert_eq!(
        rows(
            "select kind, sum(qty * price) as revenue, count(*) as n \
             from items i join sales s on s.item = i.id group by kind order by revenue desc"
        ),
        vec![
            vec![Value::Str("pot".into()), dec(10000, 2), Value::Int(3)],
            vec![Value::Str("tea".into()), dec(3225, 2), Value::Int(3)],
        ]
    );
    assert_eq!(
        rows("select note from items where note like 'b%' order by note"),
        vec![
            vec![Value::Str("black".into())],
            vec![Value::Str("blue".into())]
        ]
    );
}

#[test]
fn aggregates_of_no_rows() {
    assert_eq!(
        rows(
            "select count(*) as n, sum(price) as s, min(id) as lo, avg(price) as a from items where id > 9"
        ),
        vec![vec![Value::Int(0), Value::Null, Value::Null, Value::Null]]
    );
    assert!(rows("select kind, count(*) as n from items where id > 9 group by kind").is_empty());
}

#[test]
fn unknown_table_names_this_catalogs_tables() {
    let exec = Executor::new(common::scheduler(), Granularity::Static);
    let e = maestro_sql::execute(&exec, &shop(), "select * from lineitem").unwrap_err();
    assert!(e.message.contains("(tables: items, sales)"), "{e}");
}
