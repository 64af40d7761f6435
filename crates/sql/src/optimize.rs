//! The optimizer: three rewrites of the binder's canonical plan.
//!
//! 1. **Predicate pushdown and join planning.** A filter over a tree of
//!    cross products is taken apart into its tables and its conjuncts: a
//!    conjunct on one table goes into that table's scan; an equality between
//!    expressions of two different tables becomes a hash-join key; the rest
//!    is applied as soon as every table it reads has been joined.
//! 2. **Join order by size.** Starting from the smallest table (after its
//!    pushed filters), the next table is the smallest one connected to the
//!    tables joined so far by an equality: a left-deep tree whose small,
//!    early side is the hash table's build side (the lowering builds on the
//!    smaller estimate).
//! 3. **Projection pruning.** Scans keep only the columns some operator above
//!    reads.

use std::collections::BTreeSet;

use crate::error::{Result, SqlError};
use crate::plan::{CmpOp, ColumnId, Expr, LogicalPlan, Plan};

pub fn optimize(plan: LogicalPlan) -> Result<LogicalPlan> {
    let root = place_joins(plan.root)?;
    let root = prune(root, &BTreeSet::new());
    Ok(LogicalPlan {
        root,
        columns: plan.columns,
    })
}

/// Rewrites every filter-over-joins region bottom-up.
fn place_joins(plan: Plan) -> Result<Plan> {
    match plan {
        Plan::Filter { input, predicate } if is_join_tree(&input) => {
            let mut leaves = Vec::new();
            flatten(*input, &mut leaves);
            plan_joins(leaves, predicate)
        }
        p @ (Plan::Join { .. } | Plan::Scan { .. }) => {
            let mut leaves = Vec::new();
            flatten(p, &mut leaves);
            plan_joins(leaves, Vec::new())
        }
        Plan::Filter { input, predicate } => Ok(Plan::Filter {
            input: Box::new(place_joins(*input)?),
            predicate,
        }),
        Plan::Aggregate {
            input,
            groups,
            aggs,
        } => Ok(Plan::Aggregate {
            input: Box::new(place_joins(*input)?),
            groups,
            aggs,
        }),
        Plan::Sort { input, keys } => Ok(Plan::Sort {
            input: Box::new(place_joins(*input)?),
            keys,
        }),
        Plan::Limit { input, count } => Ok(Plan::Limit {
            input: Box::new(place_joins(*input)?),
            count,
        }),
        Plan::Project { input, outputs } => Ok(Plan::Project {
            input: Box::new(place_joins(*input)?),
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

fn plan_joins(leaves: Vec<Plan>, conjuncts: Vec<Expr>) -> Result<Plan> {
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
    let sizes: Vec<usize> = leaves.iter().map(Plan::estimated_rows).collect();
    let mut slots: Vec<Option<Plan>> = leaves.into_iter().map(Some).collect();
    let first = (0..slots.len())
        .min_by_key(|&i| (sizes[i], i))
        .expect("FROM has a table");
    let mut joined = BTreeSet::from([first]);
    let mut plan = slots[first].take().expect("unjoined");
    plan = apply_residuals(plan, &joined, &mut residuals);
    while joined.len() < slots.len() {
        let connected = |i: usize| {
            edges.iter().any(|e| {
                (e.left == i && joined.contains(&e.right))
                    || (e.right == i && joined.contains(&e.left))
            })
        };
        let Some(next) = (0..slots.len())
            .filter(|&i| !joined.contains(&i) && connected(i))
            .min_by_key(|&i| (sizes[i], i))
        else {
            return Err(SqlError::unsupported(
                "a cross join (a table with no equality condition linking it to the others)",
            ));
        };
        let mut keys = Vec::new();
        edges.retain(|e| {
            if e.right == next && joined.contains(&e.left) {
                keys.push((e.left_key.clone(), e.right_key.clone()));
                false
            } else if e.left == next && joined.contains(&e.right) {
                keys.push((e.right_key.clone(), e.left_key.clone()));
                false
            } else {
                true
            }
        });
        joined.insert(next);
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
