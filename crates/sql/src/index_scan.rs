//! Choosing index scans (issue 16: indexes cover main and delta), the last
//! step of optimization: a base-table scan whose filter has a conjunct
//! `col op literal` (`=`, `<`, `<=`, `>`, `>=`, a `>`/`<` pair such as
//! BETWEEN's, or `IN (list)`; a parameter is a literal by then) on a column
//! with a declared index ([`Catalog::indexes`]) reads its candidate rows
//! from the main's sorted index plus the delta's appended rows, when the
//! lookup selects few of the main's rows ([`INDEX_SCAN_SHARE_MAX`]).
//!
//! Selectivity is not estimated but counted: the sorted index answers how
//! many main rows a lookup selects in O(log n), and the most selective
//! lookup wins. The scan's filter stays whole and is evaluated on the
//! candidates (`lower`'s index scan), so the plan above is unchanged and
//! the lookup only has to select a superset of the answer.

use std::ops::Bound;

use maestro_storage::column::{Column, DeltaIndex, IndexKey, SortedIndex};

use crate::catalog::Catalog;
use crate::plan::{CmpOp, ColumnId, Expr, IndexLookup, IndexScan, Plan};
use crate::types::{Literal, SqlType, stored_doubles_equal_to};

/// The share of the main's rows a lookup may select, at most, for the scan
/// to take its rows from the index (rows ÷ rows). Guessed, not measured: an
/// index scan reads each candidate through a random access and sorts the
/// candidates' positions, where a scan reads every row sequentially in
/// vectorized kernels, so the index must leave few rows to pay.
pub const INDEX_SCAN_SHARE_MAX: f64 = 0.01;

/// `plan` with an index scan chosen for every scan that pays for one.
pub(crate) fn choose(plan: Plan, catalog: &dyn Catalog) -> Plan {
    match plan {
        Plan::Scan {
            table,
            alias,
            columns,
            filter,
            rows,
            index: None,
        } => {
            let index = pick(catalog, &table, &columns, &filter);
            Plan::Scan {
                table,
                alias,
                columns,
                filter,
                rows,
                index,
            }
        }
        p => p.map_inputs(|c| choose(c, catalog)),
    }
}

/// The most selective index lookup `filter` allows on `table`, if it
/// selects at most [`INDEX_SCAN_SHARE_MAX`] of the main's rows.
fn pick(
    catalog: &dyn Catalog,
    table: &str,
    columns: &[(ColumnId, usize)],
    filter: &[Expr],
) -> Option<IndexScan> {
    if filter.is_empty() {
        return None;
    }
    let indexes = catalog.indexes(table);
    if indexes.is_empty() {
        return None;
    }
    let data = catalog.data(table)?;
    let def = catalog.table(table)?;
    let main = data.num_rows();
    let appended = catalog.delta(table).map_or(0, |d| d.appended().num_rows());
    let most = (main as f64 * INDEX_SCAN_SHARE_MAX) as usize;
    let mut best: Option<(usize, IndexScan)> = None;
    for ix in indexes {
        // A column with NULLs holds some value at its NULL rows: its index
        // would select them (the filter would drop them again, but the
        // count would mislead).
        if def.columns.get(ix.column).is_none_or(|c| c.nullable) {
            continue;
        }
        let Some(&(id, _)) = columns.iter().find(|c| c.1 == ix.column) else {
            continue;
        };
        // The appended rows past the delta index's prefix are scanned
        // whole beside the lookup: the index must cover most of the table
        // to pay.
        let covered = catalog
            .delta_index(table, ix.column)
            .map_or(0, DeltaIndex::covered);
        if main <= appended.saturating_sub(covered) {
            continue;
        }
        let col = data.column_at(ix.column);
        let sorted = data.sorted_index(ix.column);
        let ty = def.columns.get(ix.column).map(|c| c.ty);
        for (lookup, answers) in lookups(filter, id, col, ty) {
            let Some(n) = count(&sorted, col, &lookup) else {
                continue;
            };
            if n <= most && best.as_ref().is_none_or(|(b, _)| n < *b) {
                let scan = IndexScan {
                    name: ix.name.clone(),
                    column: ix.column,
                    lookup,
                    answers,
                };
                best = Some((n, scan));
            }
        }
    }
    best.map(|(_, scan)| scan)
}

/// Rows of the main `lookup` selects (`None`: a key does not fit `col`).
fn count(sorted: &SortedIndex, col: &Column, lookup: &IndexLookup) -> Option<usize> {
    match lookup {
        IndexLookup::Range { lo, hi } => sorted.count(col, lo.as_ref(), hi.as_ref()),
        IndexLookup::AnyOf(keys) => sorted.count_any_of(col, keys),
    }
}

/// The main's positions `lookup` selects, ascending (`None`: a key does
/// not fit `col`).
pub(crate) fn rows(sorted: &SortedIndex, col: &Column, lookup: &IndexLookup) -> Option<Vec<u32>> {
    match lookup {
        IndexLookup::Range { lo, hi } => sorted.range(col, lo.as_ref(), hi.as_ref()),
        IndexLookup::AnyOf(keys) => sorted.any_of(col, keys),
    }
}

/// The appended positions below the delta index's covered prefix that
/// `lookup` selects, ascending (`None`: a key does not fit `appended`, or
/// the index is not of this delta).
pub(crate) fn delta_rows(
    index: &DeltaIndex,
    appended: &Column,
    lookup: &IndexLookup,
) -> Option<Vec<u32>> {
    match lookup {
        IndexLookup::Range { lo, hi } => index.range(appended, lo.as_ref(), hi.as_ref()),
        IndexLookup::AnyOf(keys) => index.any_of(appended, keys),
    }
}

/// Every lookup on column `id` (of SQL type `ty`) that `filter`'s
/// conjuncts allow, with the conjuncts it answers: each equality and IN
/// list, each bound alone, and each pair of a lower and an upper bound.
fn lookups(
    filter: &[Expr],
    id: ColumnId,
    col: &Column,
    ty: Option<SqlType>,
) -> Vec<(IndexLookup, Vec<Expr>)> {
    // A REAL/DOUBLE PRECISION column's index orders the stored ordered bits.
    let doubles = ty == Some(SqlType::Double);
    let mut out = Vec::new();
    let mut lower = Vec::new();
    let mut upper = Vec::new();
    for e in filter {
        match e {
            Expr::Cmp(op, a, b) => {
                let (op, lit) = match (a.as_ref(), b.as_ref()) {
                    (Expr::Column(c), Expr::Lit(l)) if *c == id => (*op, l),
                    (Expr::Lit(l), Expr::Column(c)) if *c == id => (op.flip(), l),
                    _ => continue,
                };
                // The smallest and largest key equal to the literal (one
                // key but for a double's zero: -0 and +0).
                let keys = if doubles {
                    let key = |o: i64| IndexKey::Num {
                        value: i128::from(o),
                        scale: 0,
                    };
                    stored_doubles_equal_to(lit).map(|(lo, hi)| (key(lo), key(hi)))
                } else {
                    key(lit, col).map(|k| (k.clone(), k))
                };
                let Some((lo, hi)) = keys else { continue };
                match op {
                    CmpOp::Eq => out.push((
                        IndexLookup::Range {
                            lo: Bound::Included(lo),
                            hi: Bound::Included(hi),
                        },
                        vec![e.clone()],
                    )),
                    CmpOp::Ne => {}
                    CmpOp::Lt => upper.push((Bound::Excluded(lo), e)),
                    CmpOp::Le => upper.push((Bound::Included(hi), e)),
                    CmpOp::Gt => lower.push((Bound::Excluded(hi), e)),
                    CmpOp::Ge => lower.push((Bound::Included(lo), e)),
                }
            }
            Expr::InList {
                expr,
                list,
                negated: false,
            } if !doubles && matches!(expr.as_ref(), Expr::Column(c) if *c == id) => {
                if let Some(keys) = list.iter().map(|l| key(l, col)).collect() {
                    out.push((IndexLookup::AnyOf(keys), vec![e.clone()]));
                }
            }
            _ => {}
        }
    }
    for (lo, a) in &lower {
        for (hi, b) in &upper {
            let (lo, hi) = (lo.clone(), hi.clone());
            out.push((
                IndexLookup::Range { lo, hi },
                vec![(*a).clone(), (*b).clone()],
            ));
        }
    }
    for (lo, a) in lower {
        let hi = Bound::Unbounded;
        out.push((IndexLookup::Range { lo, hi }, vec![a.clone()]));
    }
    for (hi, b) in upper {
        let lo = Bound::Unbounded;
        out.push((IndexLookup::Range { lo, hi }, vec![b.clone()]));
    }
    out
}

/// `l` as a key of `col`'s index, if the filter compares them the way the
/// index orders them: numbers with numeric columns (exactly, any scale),
/// dates with date columns (days), timestamps with timestamp columns
/// (microseconds in an `Int64`), strings with string columns (bytes).
fn key(l: &Literal, col: &Column) -> Option<IndexKey> {
    let k = match (l, col) {
        (
            Literal::Num { value, scale },
            Column::Int32(_) | Column::Int64(_) | Column::Decimal(_),
        ) => IndexKey::Num {
            value: i128::from(*value),
            scale: *scale,
        },
        (Literal::Timestamp(t), Column::Int64(_)) => IndexKey::Num {
            value: i128::from(*t),
            scale: 0,
        },
        (Literal::Date(d), Column::Date(_)) => IndexKey::Num {
            value: i128::from(d.0),
            scale: 0,
        },
        (Literal::Str(s), Column::Str(_) | Column::StrHeap(_)) => IndexKey::Str(s.clone()),
        _ => return None,
    };
    k.fits(col).then_some(k)
}
