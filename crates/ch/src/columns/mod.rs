//! The CH database as column tables for the SQL engine: the conversion of
//! rows to SQL columns (`convert`), a one-off copy of a snapshot
//! ([`snapshot_tables`], what `CALL maestro.load_ch` puts into the SQL
//! store), and the column mirror of the live tables — column mains kept
//! current by merges plus per-query deltas from the tables' change
//! journals (`mirror`, `view`), which `ch run --olap-engine sql` queries.

mod convert;
mod delta;
mod mirror;
mod view;

pub use convert::{Cell, ColumnRow, Def, build};
pub use mirror::{
    ColumnMirror, HeapRelease, MERGE_CHANGES_MIN, MERGE_MAIN_FRACTION, MERGE_POLL, MergePolicy,
    MergeReport, MirrorStats,
};
pub use view::{ColumnView, ViewTable};

use maestro_sql::store::LoadedTable;

use crate::db::Snap;

/// The twelve CH tables of `snap`, and `oorder` (BenchBase's name of
/// ORDERS: a second table of the same data, as the view DuckDB gets), as
/// SQL column tables.
pub fn snapshot_tables(snap: &Snap) -> Result<Vec<LoadedTable>, String> {
    let db = snap
        .tpcc()
        .rows_at(&snap.snapshot)
        .map_err(|e| e.to_string())?;
    let orders = rows(&db.orders);
    let t = snap.tables();
    Ok(vec![
        build("warehouse", &rows(&db.warehouse))?,
        build("district", &rows(&db.district))?,
        build("customer", &rows(&db.customer))?,
        build("history", &rows(&db.history))?,
        build("new_order", &rows(&db.new_order))?,
        build("orders", &orders)?,
        build("oorder", &orders)?,
        build("order_line", &rows(&db.order_line))?,
        build("item", &rows(&db.item))?,
        build("stock", &rows(&db.stock))?,
        build("supplier", &t.suppliers)?,
        build("nation", &t.nations)?,
        build("region", &t.regions)?,
    ])
}

/// Every row of one of a snapshot copy's tables, in the order it stores
/// them.
fn rows<R: Clone>(table: &maestro_tpcc::Table<R>) -> Vec<R> {
    let mut out = Vec::new();
    table.scan(|_, r| out.push(r.clone()));
    out
}

/// Runs CH query `number`'s SQL text (`crates/ch/sql/`, its ORDER BY made
/// total for `width` select-list columns when `width > 0`) on `view`.
pub fn run_sql(
    exec: &maestro_execution::Executor,
    view: &ColumnView,
    number: u8,
    width: usize,
) -> Result<maestro_tpch::queries::QueryResult, String> {
    if !(1..=22).contains(&number) {
        return Err(format!("no CH query {number} (1-22)"));
    }
    let text = if width > 0 {
        crate::sql::total_order(number, width)
    } else {
        crate::sql::SQL_TEXTS[usize::from(number) - 1].to_string()
    };
    let output = maestro_sql::execute(exec, view, &text).map_err(|e| {
        // A table that failed to build looks absent to the engine: say why.
        match view.build_failure() {
            Some(why) => format!("Q{number}: {e} ({why})"),
            None => format!("Q{number}: {e}"),
        }
    })?;
    match output {
        maestro_sql::Output::Rows(rows) => Ok(rows),
        maestro_sql::Output::Explain(_) => Err(format!("Q{number}: not a query")),
    }
}

/// A SQL result in the answers' CSV format ([`crate::answer::csv_of`]), to
/// compare with a hand-written plan's [`crate::Answer`].
pub fn result_csv(result: &maestro_tpch::queries::QueryResult) -> String {
    use crate::answer::Value as A;
    use maestro_tpch::queries::Value as V;
    let names: Vec<&str> = result.columns.iter().map(|(n, _)| n.as_str()).collect();
    let rows: Vec<Vec<A>> = result
        .rows
        .iter()
        .map(|row| {
            row.iter()
                .map(|v| match v {
                    V::Int(i) => A::Int(*i),
                    V::Decimal { value, scale } => A::Decimal(*value, u32::from(*scale)),
                    V::Double(d) => A::Float(*d),
                    V::Str(s) => A::Text(s.clone()),
                    V::Date(d) => A::Text(d.to_string()),
                    // Microseconds; TPC-C writes whole seconds.
                    V::Timestamp(us) => A::Time(us.div_euclid(1_000_000) as u64),
                    V::Null => A::Null,
                })
                .collect()
        })
        .collect();
    crate::answer::csv_of(&names, &rows)
}
