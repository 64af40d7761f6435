//! `ch snapshot`'s files: every table of one snapshot as `DIR/<table>.csv`
//! and the engine's answers to the queries on that same snapshot as
//! `DIR/q<N>.csv`. TPC-C's tables with the columns `tpcc run --export`
//! writes, timestamps ISO 8601 UTC; `supplier`, `nation`, `region` with
//! `su_*`, `n_*`, `r_*`. RFC 4180 quoting, NULL as an empty field.

use std::fs;
use std::path::Path;

use maestro_tpcc::{TpccError, export_csv_with};

use crate::answer::{Answer, Value};
use crate::db::Snap;
use crate::queries::QUERIES;
use crate::time::iso8601;

/// What [`write_snapshot`] wrote: rows per table, and the queries answered.
#[derive(Debug, Clone)]
pub struct Written {
    pub tables: Vec<(&'static str, u64)>,
    pub queries: Vec<u8>,
}

/// Writes every table `snap` sees and every query's answer on
/// it into `dir` (created if missing).
pub fn write_snapshot(snap: &Snap, dir: &Path) -> Result<Written, TpccError> {
    let rows = snap.tpcc().rows_at(&snap.snapshot)?;
    let mut tables = export_csv_with(&rows, dir, Some(iso8601))?;
    drop(rows);
    for (name, answer) in ch_tables(snap) {
        fs::write(dir.join(format!("{name}.csv")), answer.to_csv())?;
        tables.push((name, answer.rows.len() as u64));
    }
    let mut queries = Vec::new();
    for q in QUERIES {
        let answer = (q.run)(snap);
        fs::write(dir.join(format!("q{}.csv", q.number)), answer.to_csv())?;
        queries.push(q.number);
    }
    Ok(Written { tables, queries })
}

/// SUPPLIER, NATION and REGION as answers (for their CSV form).
fn ch_tables(snap: &Snap) -> [(&'static str, Answer); 3] {
    let t = snap.tables();
    let mut supplier = Answer::new(&[
        "su_suppkey",
        "su_name",
        "su_address",
        "su_nationkey",
        "su_phone",
        "su_acctbal",
        "su_comment",
    ]);
    for s in &t.suppliers {
        supplier.push(vec![
            Value::Int(i64::from(s.su_suppkey)),
            Value::Text(s.su_name.clone()),
            Value::Text(s.su_address.clone()),
            Value::Int(i64::from(s.su_nationkey)),
            Value::Text(s.su_phone.clone()),
            Value::money(i128::from(s.su_acctbal)),
            Value::Text(s.su_comment.clone()),
        ]);
    }
    let mut nation = Answer::new(&["n_nationkey", "n_name", "n_regionkey", "n_comment"]);
    for n in &t.nations {
        nation.push(vec![
            Value::Int(i64::from(n.n_nationkey)),
            Value::Text(n.n_name.to_string()),
            Value::Int(i64::from(n.n_regionkey)),
            Value::Text(n.n_comment.clone()),
        ]);
    }
    let mut region = Answer::new(&["r_regionkey", "r_name", "r_comment"]);
    for r in &t.regions {
        region.push(vec![
            Value::Int(i64::from(r.r_regionkey)),
            Value::Text(r.r_name.to_string()),
            Value::Text(r.r_comment.clone()),
        ]);
    }
    [
        ("supplier", supplier),
        ("nation", nation),
        ("region", region),
    ]
}
