//! Twin reductions: one table read once for a grouped subquery and for
//! the query around it.
//!
//! The magic-set rule (`optimize.rs`, `reduce_aggregates`) semi-joins a
//! grouped leaf's input with the filtered table the leaf is joined to:
//! TPC-H Q17 averages the quantities of the lineitems of the selected
//! parts only (`lineitem ⋉ part'`). When the region around the aggregate
//! also reads that scan — the same table with the same filter, up to
//! column ids — and joins it to that same filtered table on the same keys
//! (Q17's outer `lineitem` joined to `part'` on `l_partkey = p_partkey`),
//! the region's scan gets the same semi join. For the region it is
//! redundant (its own join keeps only the rows with a match anyway), and it
//! costs a probe of a small table per row; but the two are then one subtree
//! equal up to column ids, which `share.rs` computes once: the large table
//! is scanned and reduced once and both consumers read the few rows left,
//! as the hand-written Q17 does. The same holds for Q2's `partsupp ⋉ part'`.
//!
//! Only a semi join directly on a scan is copied, and only when the region
//! already has every key as an equality between the two leaves: the copy
//! then removes no row the region keeps.

use std::collections::HashMap;

use crate::optimize::Edge;
use crate::plan::{ColumnId, Expr, JoinKind, Plan};

/// Gives every leaf of a region that is a twin of a scan semi-joined with
/// `leaves[other]` inside the grouped leaf `leaves[grouped]` the same semi
/// join (see the module doc). `edges` are the region's equalities.
pub(crate) fn reduce_twins(leaves: &mut [Plan], grouped: usize, other: usize, edges: &[Edge]) {
    let Plan::Aggregate { input, .. } = &leaves[grouped] else {
        return;
    };
    let mut semis = Vec::new();
    semi_joins_on_scans(input, &leaves[other], &mut semis);
    let semis: Vec<(Plan, Vec<(Expr, Expr)>)> = semis
        .into_iter()
        .map(|(s, k)| (s.clone(), k.to_vec()))
        .collect();
    for i in 0..leaves.len() {
        if i == grouped || i == other {
            continue;
        }
        let twin = semis.iter().find_map(|(scan, keys)| {
            let map = same_scan(scan, &leaves[i])?;
            let keys: Vec<(Expr, Expr)> = keys
                .iter()
                .map(|(l, r)| Some((rename(l, &map)?, r.clone())))
                .collect::<Option<_>>()?;
            keys.iter()
                .all(|(l, r)| has_edge(edges, i, l, other, r))
                .then_some(keys)
        });
        if let Some(keys) = twin {
            let scan = std::mem::replace(&mut leaves[i], Plan::OneRow);
            leaves[i] = Plan::Join {
                left: Box::new(scan),
                right: Box::new(leaves[other].clone()),
                kind: JoinKind::Semi,
                keys,
                residual: Vec::new(),
            };
        }
    }
}

/// The semi joins without residual in `plan` whose left side is a scan and
/// whose right side is `other`: (the scan, the keys).
fn semi_joins_on_scans<'p>(
    plan: &'p Plan,
    other: &Plan,
    out: &mut Vec<(&'p Plan, &'p [(Expr, Expr)])>,
) {
    if let Plan::Join {
        left,
        right,
        kind: JoinKind::Semi,
        keys,
        residual,
    } = plan
        && residual.is_empty()
        && matches!(left.as_ref(), Plan::Scan { .. })
        && right.as_ref() == other
    {
        out.push((left, keys));
    }
    for c in plan.children() {
        semi_joins_on_scans(c, other, out);
    }
}

/// `a`'s columns → `b`'s if both scan the same table with the same filter
/// (`b` may lack some of `a`'s columns: an expression reading one of them
/// does not rename).
fn same_scan(a: &Plan, b: &Plan) -> Option<HashMap<ColumnId, ColumnId>> {
    let (
        Plan::Scan {
            table,
            columns,
            filter,
            rows,
            ..
        },
        Plan::Scan {
            table: bt,
            columns: bc,
            filter: bf,
            rows: br,
            ..
        },
    ) = (a, b)
    else {
        return None;
    };
    if table != bt || rows != br || filter.len() != bf.len() {
        return None;
    }
    let map: HashMap<ColumnId, ColumnId> = columns
        .iter()
        .filter_map(|&(id, i)| bc.iter().find(|c| c.1 == i).map(|c| (id, c.0)))
        .collect();
    let same = filter
        .iter()
        .zip(bf)
        .all(|(x, y)| rename(x, &map).is_some_and(|r| r == *y));
    same.then_some(map)
}

/// `e` in the columns `map` gives; `None` if it reads one it lacks.
pub(crate) fn rename(e: &Expr, map: &HashMap<ColumnId, ColumnId>) -> Option<Expr> {
    let mut ok = true;
    let r = e.rewrite(&mut |x| match x {
        Expr::Column(c) => Some(Expr::Column(map.get(c).copied().unwrap_or_else(|| {
            ok = false;
            *c
        }))),
        _ => None,
    });
    ok.then_some(r)
}

/// Whether the region has the equality `i_key = other_key` between leaves
/// `i` and `other` (either way round).
fn has_edge(edges: &[Edge], i: usize, i_key: &Expr, other: usize, other_key: &Expr) -> bool {
    edges.iter().any(|e| {
        (e.left == i && e.right == other && e.left_key == *i_key && e.right_key == *other_key)
            || (e.right == i
                && e.left == other
                && e.right_key == *i_key
                && e.left_key == *other_key)
    })
}
