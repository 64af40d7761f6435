//! Nested scan filters: two scans of one table where one's filter is the
//! other's plus more conjuncts, and the common part is costly to evaluate
//! (a conjunct that is not a column compared with constants: TPC-H Q22's
//! `SUBSTRING(c_phone FROM 1 FOR 2) IN (…)`, in the outer query and in the
//! uncorrelated average's subquery with `c_acctbal > 0.00` besides). The
//! smaller filter runs once ([`Plan::Shared`]); the other scan becomes its
//! extra conjuncts over that result ([`Plan::SharedRef`]), as the
//! hand-written Q22 computes the country codes once.
//!
//! `share.rs` does not share bare scans (a cheap filter costs about what
//! copying its result would); this pass only takes a costly common filter,
//! which the second scan would otherwise evaluate again on every row. Runs
//! after `share.rs`, numbering its shared plans after that pass's.

use std::collections::HashMap;

use crate::plan::{ColumnId, ColumnInfo, Expr, Plan};
use crate::twins::rename;

/// `root` with each pair of nested scan filters computed once (module doc).
pub(crate) fn share_scans(root: Plan, columns: &mut Vec<ColumnInfo>) -> Plan {
    let mut scans = Vec::new();
    let mut next_id = 1;
    collect(&root, &mut 0, &mut scans, &mut next_id);
    // (preorder number of the narrower scan's node → its replacement).
    let mut replace: HashMap<usize, Plan> = HashMap::new();
    for (k, &(at_a, a)) in scans.iter().enumerate() {
        if replace.contains_key(&at_a) {
            continue;
        }
        for &(at_b, b) in &scans[k + 1..] {
            if replace.contains_key(&at_b) {
                continue;
            }
            // The shared scan comes first in preorder: the lowering
            // computes shared plans children first, left to right, so one
            // that holds the reference (`share.rs`'s) comes after it.
            let Some((shared, narrow, added)) = nested(a, b, columns) else {
                continue;
            };
            let (at_base, at_narrow) = (at_a, at_b);
            columns.extend(added);
            let id = next_id;
            next_id += 1;
            replace.insert(
                at_base,
                Plan::Shared {
                    id,
                    input: Box::new(shared),
                },
            );
            replace.insert(at_narrow, narrow(id));
            break;
        }
    }
    if replace.is_empty() {
        return root;
    }
    rebuild(root, &mut 0, &mut replace)
}

/// The filtered scans of `p` with their preorder numbers; `next_id` ends
/// past the largest shared plan id in `p`.
fn collect<'p>(p: &'p Plan, at: &mut usize, out: &mut Vec<(usize, &'p Plan)>, next_id: &mut usize) {
    match p {
        Plan::Scan { filter, .. } if filter.iter().any(costly) => out.push((*at, p)),
        Plan::Shared { id, .. } | Plan::SharedRef { id, .. } => *next_id = (*next_id).max(id + 1),
        _ => {}
    }
    *at += 1;
    for c in p.children() {
        collect(c, at, out, next_id);
    }
}

/// Whether a conjunct is more than a column compared with constants (the
/// operators' number and dictionary kernels).
fn costly(e: &Expr) -> bool {
    let constant = |x: &Expr| matches!(x, Expr::Lit(_));
    match e {
        Expr::Cmp(_, a, b) => {
            !(matches!(a.as_ref(), Expr::Column(_)) && constant(b)
                || matches!(b.as_ref(), Expr::Column(_)) && constant(a))
        }
        Expr::InList { expr, .. } | Expr::IsNull { expr, .. } => {
            !matches!(expr.as_ref(), Expr::Column(_))
        }
        _ => true,
    }
}

/// A narrower scan's replacement, given the shared plan's id.
type Narrow = Box<dyn FnOnce(usize) -> Plan>;

/// If `base`'s filter is a proper part of `other`'s (same table, up to
/// column ids) and has a costly conjunct: the shared scan (`base` reading
/// `other`'s columns too), `other`'s replacement and the added columns.
fn nested(
    base: &Plan,
    other: &Plan,
    columns: &[ColumnInfo],
) -> Option<(Plan, Narrow, Vec<ColumnInfo>)> {
    let (
        Plan::Scan {
            table,
            alias,
            columns: ac,
            filter: af,
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
    ) = (base, other)
    else {
        return None;
    };
    if table != bt || rows != br || af.len() >= bf.len() || !af.iter().any(costly) {
        return None;
    }
    // `other`'s columns → the shared scan's (fresh ids for those `base`
    // lacks).
    let mut shared_cols = ac.clone();
    let mut map: HashMap<ColumnId, ColumnId> = HashMap::new();
    let mut added = Vec::new();
    for &(id, i) in bc {
        match shared_cols.iter().find(|c| c.1 == i) {
            Some(&(s, _)) => {
                map.insert(id, s);
            }
            None => {
                let s = ColumnId(columns.len() + added.len());
                added.push(columns[id.0].clone());
                shared_cols.push((s, i));
                map.insert(id, s);
            }
        }
    }
    let renamed: Vec<Expr> = bf.iter().map(|e| rename(e, &map)).collect::<Option<_>>()?;
    if !af.iter().all(|x| renamed.contains(x)) {
        return None;
    }
    // The conjuncts `base` lacks, in `other`'s own columns.
    let extra: Vec<Expr> = bf
        .iter()
        .zip(&renamed)
        .filter(|(_, r)| !af.contains(r))
        .map(|(e, _)| e.clone())
        .collect();
    let refs: Vec<(ColumnId, ColumnId)> = bc.iter().map(|&(id, _)| (id, map[&id])).collect();
    let shared = Plan::Scan {
        table: table.clone(),
        alias: alias.clone(),
        columns: shared_cols,
        filter: af.clone(),
        rows: *rows,
        // Sharing runs before index scans are chosen.
        index: None,
    };
    let narrow: Narrow = Box::new(move |id| Plan::Filter {
        input: Box::new(Plan::SharedRef { id, columns: refs }),
        predicate: extra,
    });
    Some((shared, narrow, added))
}

/// The tree with the chosen nodes (by preorder number) replaced.
fn rebuild(p: Plan, at: &mut usize, replace: &mut HashMap<usize, Plan>) -> Plan {
    let me = *at;
    *at += 1;
    if let Some(r) = replace.remove(&me) {
        // A scan: no children to number.
        return r;
    }
    p.map_inputs(|c| rebuild(c, at, replace))
}
