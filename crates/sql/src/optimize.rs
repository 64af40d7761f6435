//! The optimizer: three rewrites of the binder's canonical plan.
//!
//! 1. **Predicate pushdown and join planning.** A filter over a tree of
//!    cross products is taken apart into its tables and its conjuncts: a
//!    conjunct on one table goes into that table's scan; an equality between
//!    expressions of two different tables becomes a hash-join key; the rest
//!    is applied as soon as every table it reads has been joined.
//! 2. **Join order by size.** Starting from the smallest table (after its
//!    pushed filters), the next table is the connected one (an equality with
//!    the tables joined so far) whose join is estimated smallest — from the
//!    tables' sizes and the catalog's unique columns, so that a many-to-many
//!    join (TPC-H Q5's `c_nationkey = s_nationkey`) waits until a key join
//!    has made it a filter — then the smaller table. A left-deep tree; the
//!    lowering builds each hash table on the smaller actual input.
//! 3. **Projection pruning.** Scans keep only the columns some operator above
//!    reads.

use std::collections::BTreeSet;

use crate::catalog::Catalog;
use crate::error::{Result, SqlError};
use crate::plan::{CmpOp, ColumnId, Expr, LogicalPlan, Plan};

pub fn optimize(plan: LogicalPlan, catalog: &dyn Catalog) -> Result<LogicalPlan> {
    let mut unique = BTreeSet::new();
    unique_columns(&plan.root, catalog, &mut unique);
    let root = place_joins(plan.root, &unique)?;
    let root = prune(root, &BTreeSet::new());
    Ok(LogicalPlan {
        root,
        columns: plan.columns,
    })
}

/// The scanned columns whose values are unique in their table (the
/// catalog's single-column keys).
fn unique_columns(plan: &Plan, catalog: &dyn Catalog, out: &mut BTreeSet<ColumnId>) {
    match plan {
        Plan::Scan { table, columns, .. } => {
            let Some(def) = catalog.table(table) else {
                return;
            };
            for &(id, i) in columns {
                if def
                    .columns
                    .get(i)
                    .is_some_and(|c| def.unique_columns.contains(&c.name))
                {
                    out.insert(id);
                }
            }
        }
        Plan::Join { left, right, .. } => {
            unique_columns(left, catalog, out);
            unique_columns(right, catalog, out);
        }
        Plan::Filter { input, .. }
        | Plan::Aggregate { input, .. }
        | Plan::Sort { input, .. }
        | Plan::Limit { input, .. }
        | Plan::Project { input, .. } => unique_columns(input, catalog, out),
    }
}

/// Rewrites every filter-over-joins region bottom-up.
fn place_joins(plan: Plan, unique: &BTreeSet<ColumnId>) -> Result<Plan> {
    match plan {
        Plan::Filter { input, predicate } if is_join_tree(&input) => {
            let mut leaves = Vec::new();
            flatten(*input, &mut leaves);
            plan_joins(leaves, predicate, unique)
        }
        p @ (Plan::Join { .. } | Plan::Scan { .. }) => {
            let mut leaves = Vec::new();
            flatten(p, &mut leaves);
            plan_joins(leaves, Vec::new(), unique)
        }
        Plan::Filter { input, predicate } => Ok(Plan::Filter {
            input: Box::new(place_joins(*input, unique)?),
            predicate,
        }),
        Plan::Aggregate {
            input,
            groups,
            aggs,
        } => Ok(Plan::Aggregate {
            input: Box::new(place_joins(*input, unique)?),
            groups,
            aggs,
        }),
        Plan::Sort { input, keys } => Ok(Plan::Sort {
            input: Box::new(place_joins(*input, unique)?),
            keys,
        }),
        Plan::Limit { input, count } => Ok(Plan::Limit {
            input: Box::new(place_joins(*input, unique)?),
            count,
        }),
        Plan::Project { input, outputs } => Ok(Plan::Project {
            input: Box::new(place_joins(*input, unique)?),
            outputs,
        }),
    }
}

fn is_join_tree(p: &Plan) -> bool {
    match p {
        Plan::Scan { .. } => true,
        Plan::Join { left, right, .. } => is_join_tree(left) && is_join_tree(right),
        _ => false,
    }
}

/// The scans of a join tree (its keys, if any, are kept as conjuncts by
/// the caller's rebuild: the binder only makes cross products).
fn flatten(p: Plan, out: &mut Vec<Plan>) {
    match p {
        Plan::Join { left, right, .. } => {
            flatten(*left, out);
            flatten(*right, out);
        }
        p => out.push(p),
    }
}

/// An equality between one expression of leaf `left` and one of leaf `right`.
struct Edge {
    left: usize,
    right: usize,
    left_key: Expr,
    right_key: Expr,
}

fn plan_joins(
    leaves: Vec<Plan>,
    conjuncts: Vec<Expr>,
    unique: &BTreeSet<ColumnId>,
) -> Result<Plan> {
    let cols: Vec<BTreeSet<ColumnId>> = leaves
        .iter()
        .map(|l| l.output_columns().into_iter().collect())
        .collect();
    let leaves_of = |e: &Expr| -> BTreeSet<usize> {
        let c = e.columns();
        (0..cols.len())
            .filter(|&i| c.iter().any(|x| cols[i].contains(x)))
            .collect()
    };
    let mut pushed: Vec<Vec<Expr>> = vec![Vec::new(); leaves.len()];
    let mut edges = Vec::new();
    let mut residuals: Vec<(BTreeSet<usize>, Expr)> = Vec::new();
    for c in conjuncts {
        let touched = leaves_of(&c);
        if touched.len() == 1 {
            let i = *touched.first().expect("one leaf");
            pushed[i].push(c);
            continue;
        }
        if let Expr::Cmp(CmpOp::Eq, a, b) = &c {
            let (la, lb) = (leaves_of(a), leaves_of(b));
            if la.len() == 1 && lb.len() == 1 && la != lb {
                edges.push(Edge {
                    left: *la.first().expect("one leaf"),
                    right: *lb.first().expect("one leaf"),
                    left_key: (**a).clone(),
                    right_key: (**b).clone(),
                });
                continue;
            }
        }
        residuals.push((touched, c));
    }
    let leaves: Vec<Plan> = leaves
        .into_iter()
        .zip(pushed)
        .map(|(l, f)| push_filters(l, f))
        .collect();
    join_greedily(leaves, edges, residuals, unique)
}

/// Rows of `S ⋈ R` on `keys` ((S side, R side) pairs), from key knowledge
/// only: at most `|S|` when an R-side key is unique in its table (each S row
/// meets at most one R row), about `|R|` when an S-side key is (a foreign
/// key into S), else a many-to-many join, `|S| · |R|`.
fn join_estimate(
    s: usize,
    r: usize,
    keys: &[(&Expr, &Expr)],
    unique: &BTreeSet<ColumnId>,
) -> usize {
    let is_unique = |e: &Expr| matches!(e, Expr::Column(c) if unique.contains(c));
    if keys.iter().any(|(_, rk)| is_unique(rk)) {
        s
    } else if keys.iter().any(|(sk, _)| is_unique(sk)) {
        r
    } else {
        s.saturating_mul(r)
    }
}

/// A left-deep join tree: from the smallest leaf, repeatedly the connected
/// leaf whose join gives the fewest estimated rows (then the smallest).
fn join_greedily(
    leaves: Vec<Plan>,
    mut edges: Vec<Edge>,
    mut residuals: Vec<(BTreeSet<usize>, Expr)>,
    unique: &BTreeSet<ColumnId>,
) -> Result<Plan> {
    let sizes: Vec<usize> = leaves.iter().map(Plan::estimated_rows).collect();
    let mut slots: Vec<Option<Plan>> = leaves.into_iter().map(Some).collect();
    let first = (0..slots.len())
        .min_by_key(|&i| (sizes[i], i))
        .expect("FROM has a table");
    let mut joined = BTreeSet::from([first]);
    let mut estimate = sizes[first];
    let mut plan = slots[first].take().expect("unjoined");
    plan = apply_residuals(plan, &joined, &mut residuals);
    // The (joined side, `i` side) keys between the joined leaves and leaf `i`.
    let keys_to = |edges: &[Edge], joined: &BTreeSet<usize>, i: usize| -> Vec<(Expr, Expr)> {
        edges
            .iter()
            .filter_map(|e| {
                if e.right == i && joined.contains(&e.left) {
                    Some((e.left_key.clone(), e.right_key.clone()))
                } else if e.left == i && joined.contains(&e.right) {
                    Some((e.right_key.clone(), e.left_key.clone()))
                } else {
                    None
                }
            })
            .collect()
    };
    while joined.len() < slots.len() {
        let Some((rows, next)) = (0..slots.len())
            .filter(|i| !joined.contains(i))
            .filter_map(|i| {
                let keys = keys_to(&edges, &joined, i);
                let refs: Vec<(&Expr, &Expr)> = keys.iter().map(|(a, b)| (a, b)).collect();
                (!keys.is_empty()).then(|| (join_estimate(estimate, sizes[i], &refs, unique), i))
            })
            .min_by_key(|&(rows, i)| (rows, sizes[i], i))
        else {
            return Err(SqlError::unsupported(
                "a cross join (a table with no equality condition linking it to the others)",
            ));
        };
        let keys = keys_to(&edges, &joined, next);
        // The edges just used are now join keys.
        let used = |e: &Edge| {
            (e.left == next && joined.contains(&e.right))
                || (e.right == next && joined.contains(&e.left))
        };
        edges.retain(|e| !used(e));
        joined.insert(next);
        estimate = rows.max(1);
        plan = Plan::Join {
            left: Box::new(plan),
            right: Box::new(slots[next].take().expect("unjoined")),
            keys,
        };
        plan = apply_residuals(plan, &joined, &mut residuals);
    }
    // Equalities between tables already joined by other keys (cycles).
    let leftover: Vec<Expr> = edges
        .into_iter()
        .map(|e| Expr::cmp(CmpOp::Eq, e.left_key, e.right_key))
        .chain(residuals.into_iter().map(|r| r.1))
        .collect();
    Ok(with_filter(plan, leftover))
}

/// A scan with `conjuncts` pushed into it (any other leaf gets a filter).
fn push_filters(leaf: Plan, conjuncts: Vec<Expr>) -> Plan {
    match leaf {
        Plan::Scan {
            table,
            alias,
            columns,
            mut filter,
            rows,
        } => {
            filter.extend(conjuncts);
            Plan::Scan {
                table,
                alias,
                columns,
                filter,
                rows,
            }
        }
        other => with_filter(other, conjuncts),
    }
}

/// Applies (and removes) the residual conjuncts whose tables are all joined.
fn apply_residuals(
    plan: Plan,
    joined: &BTreeSet<usize>,
    residuals: &mut Vec<(BTreeSet<usize>, Expr)>,
) -> Plan {
    let mut ready = Vec::new();
    residuals.retain(|(t, e)| {
        if t.is_subset(joined) {
            ready.push(e.clone());
            false
        } else {
            true
        }
    });
    with_filter(plan, ready)
}

fn with_filter(plan: Plan, predicate: Vec<Expr>) -> Plan {
    if predicate.is_empty() {
        return plan;
    }
    match plan {
        Plan::Filter {
            input,
            predicate: mut p,
        } => {
            p.extend(predicate);
            Plan::Filter {
                input,
                predicate: p,
            }
        }
        plan => Plan::Filter {
            input: Box::new(plan),
            predicate,
        },
    }
}

/// Drops the scan columns no operator above reads (`needed`: what the
/// parent reads of this node's output).
fn prune(plan: Plan, needed: &BTreeSet<ColumnId>) -> Plan {
    let with = |mut s: BTreeSet<ColumnId>, es: &mut dyn Iterator<Item = &Expr>| {
        for e in es {
            e.collect_columns(&mut s);
        }
        s
    };
    match plan {
        Plan::Scan {
            table,
            alias,
            columns,
            filter,
            rows,
        } => {
            let read = with(needed.clone(), &mut filter.iter());
            Plan::Scan {
                table,
                alias,
                columns: columns
                    .into_iter()
                    .filter(|c| read.contains(&c.0))
                    .collect(),
                filter,
                rows,
            }
        }
        Plan::Filter { input, predicate } => {
            let n = with(needed.clone(), &mut predicate.iter());
            Plan::Filter {
                input: Box::new(prune(*input, &n)),
                predicate,
            }
        }
        Plan::Join { left, right, keys } => {
            let n = with(needed.clone(), &mut keys.iter().flat_map(|(l, r)| [l, r]));
            Plan::Join {
                left: Box::new(prune(*left, &n)),
                right: Box::new(prune(*right, &n)),
                keys,
            }
        }
        Plan::Aggregate {
            input,
            groups,
            aggs,
        } => {
            let n = with(
                BTreeSet::new(),
                &mut groups
                    .iter()
                    .map(|g| &g.1)
                    .chain(aggs.iter().filter_map(|a| a.1.arg.as_ref())),
            );
            Plan::Aggregate {
                input: Box::new(prune(*input, &n)),
                groups,
                aggs,
            }
        }
        Plan::Sort { input, keys } => {
            let n = with(needed.clone(), &mut keys.iter().map(|k| &k.0));
            Plan::Sort {
                input: Box::new(prune(*input, &n)),
                keys,
            }
        }
        Plan::Limit { input, count } => Plan::Limit {
            input: Box::new(prune(*input, needed)),
            count,
        },
        Plan::Project { input, outputs } => {
            let n = with(BTreeSet::new(), &mut outputs.iter().map(|o| &o.1));
            Plan::Project {
                input: Box::new(prune(*input, &n)),
                outputs,
            }
        }
    }
}
