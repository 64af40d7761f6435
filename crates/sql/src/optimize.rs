//! The optimizer: three rewrites of the binder's canonical plan.
//!
//! 1. **Predicate pushdown and join planning.** A filter over a tree of
//!    cross products is taken apart into its tables and its conjuncts: a
//!    conjunct on one table goes into that table's scan; an equality between
//!    expressions of two different tables becomes a hash-join key; the rest
//!    is applied as soon as every table it reads has been joined.
//! 2. **Join order from estimates.** From a start table, the next table is
//!    the connected one (an equality with the tables joined so far) whose
//!    join is estimated smallest — from column statistics (`estimate.rs`:
//!    filter selectivities, `|S|·|R| / max(ndv)` per key, the catalog's
//!    unique columns), so that a many-to-many join (TPC-H Q5's
//!    `c_nationkey = s_nationkey`) waits until a key join has made it a
//!    filter — then the smaller table. Every table is tried as the start
//!    and the order whose joins output the fewest rows in all (the `C_out`
//!    cost) wins: TPC-H Q2 starts from its few filtered parts, not from the
//!    one-row region. A left-deep tree; the lowering builds each hash table
//!    on the smaller actual input.
//! 3. **Projection pruning.** Scans keep only the columns some operator above
//!    reads.
//!
//! Besides, a filter over a derived table's computed columns (`Map`) puts
//! the conjuncts that do not read them below the map (so a division there
//! only sees the rows that pass, see [`filter_below_map`]).
//!
//! Last, `outer_agg.rs` groups the right side of a left join grouped by the
//! left key first, `share.rs` computes repeated subtrees once, and
//! `share_scans.rs` one scan's costly filter that another's includes.

use std::collections::BTreeSet;

use crate::catalog::Catalog;
use crate::error::{Result, SqlError};
use crate::estimate::{Estimator, Shape};
use crate::plan::{CmpOp, ColumnId, Expr, JoinKind, LogicalPlan, Plan};

pub fn optimize(plan: LogicalPlan, catalog: &dyn Catalog) -> Result<LogicalPlan> {
    Ok(finish(optimize_generic(plan, catalog)?, catalog))
}

/// The rewrites whose result does not depend on the values a lookup
/// selects: everything but the index choice (which counts the rows each
/// candidate lookup selects) and the estimates. A plan cache keeps this
/// part for a statement's later executions (`plan_cache.rs`).
pub(crate) fn optimize_generic(plan: LogicalPlan, catalog: &dyn Catalog) -> Result<LogicalPlan> {
    let est = Estimator::new(&plan.root, catalog);
    let root = place_joins(plan.root, &est)?;
    let root = prune(root, &BTreeSet::new());
    let mut columns = plan.columns;
    let root = crate::outer_agg::push_groups(root, catalog, &mut columns);
    let root = crate::share::share(root, &mut columns);
    let root = crate::share_scans::share_scans(root, &mut columns);
    Ok(LogicalPlan {
        root,
        columns,
        estimates: Vec::new(),
    })
}

/// [`optimize_generic`]'s plan with its index scans chosen and each node's
/// estimate.
pub(crate) fn finish(plan: LogicalPlan, catalog: &dyn Catalog) -> LogicalPlan {
    let root = crate::index_scan::choose(fold_parameter_arithmetic(plan.root), catalog);
    let mut estimates = Vec::new();
    estimate_nodes(&root, &Estimator::new(&root, catalog), &mut estimates);
    LogicalPlan {
        root,
        columns: plan.columns,
        estimates,
    }
}

/// `plan` with the arithmetic over constants the binder left unfolded (an
/// operand was a parameter: `bind/expr.rs` `Folding`) folded, now that the
/// parameters have their values: an index lookup needs `k = 8`, not
/// `k = 7 + 1`. Runs on every plan before its index choice, cached or not.
pub(crate) fn fold_parameter_arithmetic(mut root: Plan) -> Plan {
    root.exprs_mut(&mut |e: &mut Expr| {
        let mut foldable = false;
        e.visit(&mut |x| {
            foldable |= matches!(x, Expr::Arith(_, a, b)
                if matches!(**a, Expr::Lit(_)) && matches!(**b, Expr::Lit(_)));
        });
        if foldable {
            *e = e.rewrite(&mut |x| match x {
                Expr::Arith(..) => crate::bind::constant_arithmetic(x).map(Expr::Lit),
                _ => None,
            });
        }
    });
    root
}

/// Each node's estimated rows, in preorder (EXPLAIN prints them).
fn estimate_nodes(p: &Plan, est: &Estimator, out: &mut Vec<usize>) {
    out.push(est.rows(p).round() as usize);
    for c in p.children() {
        estimate_nodes(c, est, out);
    }
}

/// The scanned columns whose values are unique in their table (the
/// catalog's single-column keys), and the key of a one-key aggregation.
pub(crate) fn unique_columns(plan: &Plan, catalog: &dyn Catalog, out: &mut BTreeSet<ColumnId>) {
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
        Plan::Aggregate { groups, .. } if groups.len() == 1 => {
            out.insert(groups[0].0);
        }
        _ => {}
    }
    for c in plan.children() {
        unique_columns(c, catalog, out);
    }
}

/// Rewrites every filter-over-inner-joins region bottom-up; anything else
/// (aggregates, semi/anti/outer joins, derived tables) is a leaf of the
/// region above it, optimized on its own.
fn place_joins(plan: Plan, est: &Estimator) -> Result<Plan> {
    let go = |p: Box<Plan>| -> Result<Box<Plan>> { Ok(Box::new(place_joins(*p, est)?)) };
    match plan {
        // Sharing runs after this: nothing to place.
        p @ (Plan::OneRow | Plan::Series { .. } | Plan::Shared { .. } | Plan::SharedRef { .. }) => {
            Ok(p)
        }
        Plan::Filter { input, predicate } if is_region(&input) => {
            let mut leaves = Vec::new();
            let mut conjuncts = predicate;
            flatten(*input, &mut leaves, &mut conjuncts);
            let leaves = leaves
                .into_iter()
                .map(|l| place_joins(l, est))
                .collect::<Result<_>>()?;
            plan_joins(leaves, conjuncts, est)
        }
        p @ (Plan::Join {
            kind: JoinKind::Inner,
            ..
        }
        | Plan::Scan { .. }) => {
            let mut leaves = Vec::new();
            let mut conjuncts = Vec::new();
            flatten(p, &mut leaves, &mut conjuncts);
            if leaves.len() == 1 && matches!(leaves[0], Plan::Scan { .. }) {
                let leaf = leaves.pop().expect("one leaf");
                return Ok(push_filters(leaf, conjuncts));
            }
            let leaves = leaves
                .into_iter()
                .map(|l| place_joins(l, est))
                .collect::<Result<_>>()?;
            plan_joins(leaves, conjuncts, est)
        }
        Plan::Join {
            left,
            right,
            kind,
            keys,
            residual,
        } => {
            if kind == JoinKind::Semi && residual.is_empty() {
                match push_semi(*left, right, keys, est) {
                    Ok(region) => return place_joins(region, est),
                    Err((l, r, k)) => {
                        return Ok(Plan::Join {
                            left: go(l)?,
                            right: go(r)?,
                            kind,
                            keys: k,
                            residual,
                        });
                    }
                }
            }
            Ok(Plan::Join {
                left: go(left)?,
                right: go(right)?,
                kind,
                keys,
                residual,
            })
        }
        Plan::Filter { input, predicate } if matches!(*input, Plan::Map { .. }) => {
            let Plan::Map { input, exprs } = *input else {
                unreachable!("matched above")
            };
            let (below, map, above) = filter_below_map(input, exprs, predicate);
            let map = Plan::Map {
                input: Box::new(place_joins(below, est)?),
                exprs: map,
            };
            Ok(if above.is_empty() {
                map
            } else {
                Plan::Filter {
                    input: Box::new(map),
                    predicate: above,
                }
            })
        }
        Plan::Filter { input, predicate } => Ok(Plan::Filter {
            input: go(input)?,
            predicate,
        }),
        Plan::Map { input, exprs } => Ok(Plan::Map {
            input: go(input)?,
            exprs,
        }),
        Plan::Aggregate {
            input,
            groups,
            aggs,
        } => Ok(Plan::Aggregate {
            input: go(input)?,
            groups,
            aggs,
        }),
        Plan::Sort { input, keys } => Ok(Plan::Sort {
            input: go(input)?,
            keys,
        }),
        Plan::Limit {
            input,
            count,
            offset,
        } => Ok(Plan::Limit {
            input: go(input)?,
            count,
            offset,
        }),
        Plan::Project { input, outputs } => Ok(Plan::Project {
            input: go(input)?,
            outputs,
        }),
    }
}

/// A filter over a derived table's computed columns (`Map`): the conjuncts
/// that do not read them go below it, so the computed expressions are
/// evaluated only on the rows that pass — PostgreSQL's semantics for
/// `SELECT q FROM (SELECT a / b AS q, b FROM t) s WHERE b <> 0`, where a
/// division computed first would fail on the rows the filter removes (and
/// less work besides). The rest stays above the map. Returns the input
/// (filtered), the map's expressions and the conjuncts left above.
#[allow(clippy::type_complexity)]
fn filter_below_map(
    input: Box<Plan>,
    exprs: Vec<(ColumnId, Expr)>,
    predicate: Vec<Expr>,
) -> (Plan, Vec<(ColumnId, Expr)>, Vec<Expr>) {
    let computed: BTreeSet<ColumnId> = exprs.iter().map(|e| e.0).collect();
    let (above, below): (Vec<Expr>, Vec<Expr>) = predicate
        .into_iter()
        .partition(|c| c.columns().iter().any(|id| computed.contains(id)));
    let input = if below.is_empty() {
        *input
    } else {
        Plan::Filter {
            input,
            predicate: below,
        }
    };
    (input, exprs, above)
}

/// A semi join over a region of several tables whose keys read one table
/// alone, and whose subquery is estimated at most half that table: the
/// semi join moves onto that table, to shrink it before the joins (TPC-H
/// Q20's parts named `forest%`, which then reduce the aggregate joined with
/// partsupp, see [`reduce_aggregates`]; Q18's large orders). Not Q21's
/// EXISTS over all of lineitem, which the region's joins shrink more.
/// Otherwise the parts back.
#[allow(clippy::type_complexity)]
fn push_semi(
    left: Plan,
    right: Box<Plan>,
    keys: Vec<(Expr, Expr)>,
    est: &Estimator,
) -> Result<Plan, (Box<Plan>, Box<Plan>, Vec<(Expr, Expr)>)> {
    let (input, predicate) = match left {
        Plan::Filter { input, predicate } if is_region(&input) => (*input, predicate),
        p if is_region(&p) => (p, Vec::new()),
        p => return Err((Box::new(p), right, keys)),
    };
    let mut leaves = Vec::new();
    let mut conjuncts = predicate;
    flatten(input, &mut leaves, &mut conjuncts);
    let mut key_cols = BTreeSet::new();
    for (k, _) in &keys {
        k.collect_columns(&mut key_cols);
    }
    let target = leaves.iter().position(|l| {
        let cols: BTreeSet<ColumnId> = l.output_columns().into_iter().collect();
        !key_cols.is_empty() && key_cols.is_subset(&cols)
    });
    let fits = |i: usize| leaves.len() > 1 && 2.0 * est.rows(&right) <= est.rows(&leaves[i]);
    match target {
        Some(i) if fits(i) => {
            let leaf = leaves.remove(i);
            leaves.insert(
                i,
                Plan::Join {
                    left: Box::new(leaf),
                    right,
                    kind: JoinKind::Semi,
                    keys,
                    residual: Vec::new(),
                },
            );
            let mut region = None;
            for l in leaves {
                region = Some(match region {
                    None => l,
                    Some(r) => Plan::Join {
                        left: Box::new(r),
                        right: Box::new(l),
                        kind: JoinKind::Inner,
                        keys: Vec::new(),
                        residual: Vec::new(),
                    },
                });
            }
            let region = region.expect("a region has leaves");
            Ok(if conjuncts.is_empty() {
                region
            } else {
                Plan::Filter {
                    input: Box::new(region),
                    predicate: conjuncts,
                }
            })
        }
        _ => {
            // Rebuild what was taken apart.
            let mut region = None;
            for l in leaves {
                region = Some(match region {
                    None => l,
                    Some(r) => Plan::Join {
                        left: Box::new(r),
                        right: Box::new(l),
                        kind: JoinKind::Inner,
                        keys: Vec::new(),
                        residual: Vec::new(),
                    },
                });
            }
            let region = region.expect("a region has leaves");
            let left = if conjuncts.is_empty() {
                region
            } else {
                Plan::Filter {
                    input: Box::new(region),
                    predicate: conjuncts,
                }
            };
            Err((Box::new(left), right, keys))
        }
    }
}

/// An inner join or a scan: the start of a join region.
fn is_region(p: &Plan) -> bool {
    matches!(
        p,
        Plan::Scan { .. }
            | Plan::Join {
                kind: JoinKind::Inner,
                ..
            }
    )
}

/// The leaves of an inner-join tree, and its keys and residuals as
/// conjuncts (the optimizer places them again).
fn flatten(p: Plan, out: &mut Vec<Plan>, conjuncts: &mut Vec<Expr>) {
    match p {
        Plan::Join {
            left,
            right,
            kind: JoinKind::Inner,
            keys,
            residual,
        } => {
            flatten(*left, out, conjuncts);
            flatten(*right, out, conjuncts);
            conjuncts.extend(keys.into_iter().map(|(l, r)| Expr::cmp(CmpOp::Eq, l, r)));
            conjuncts.extend(residual);
        }
        p => out.push(p),
    }
}

/// An equality between one expression of leaf `left` and one of leaf `right`.
#[derive(Clone)]
pub(crate) struct Edge {
    pub(crate) left: usize,
    pub(crate) right: usize,
    pub(crate) left_key: Expr,
    pub(crate) right_key: Expr,
}

fn plan_joins(leaves: Vec<Plan>, conjuncts: Vec<Expr>, est: &Estimator) -> Result<Plan> {
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
    let mut expanded = Vec::new();
    for c in conjuncts {
        factor_or(c, &mut expanded);
    }
    // A disjunction over several tables implies, for a table each of whose
    // disjuncts has conditions on it alone, the disjunction of those: a
    // filter for its scan (TPC-H Q19), the whole one staying a residual.
    for c in &expanded {
        let Expr::Or(ds) = c else { continue };
        if leaves_of(c).len() < 2 {
            continue;
        }
        for (i, p) in pushed.iter_mut().enumerate() {
            let implied: Option<Vec<Expr>> = ds
                .iter()
                .map(|d| {
                    let own: Vec<Expr> = d
                        .clone()
                        .conjuncts()
                        .into_iter()
                        .filter(|x| leaves_of(x) == BTreeSet::from([i]))
                        .collect();
                    (!own.is_empty()).then(|| Expr::and_all(own))
                })
                .collect();
            if let Some(implied) = implied {
                p.push(Expr::Or(implied));
            }
        }
    }
    for c in expanded {
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
    close_equalities(&mut edges);
    let leaves = reduce_aggregates(leaves, &edges, est)?;
    join_greedily(leaves, edges, residuals, est)
}

/// Adds the equalities that the join keys imply by transitivity: columns
/// equal through a chain of keys form a class, and every two of its columns
/// on different leaves get an edge of their own. TPC-H Q5 says
/// `c_nationkey = s_nationkey` and `s_nationkey = n_nationkey`; with the
/// implied `c_nationkey = n_nationkey` the region's nations can reduce the
/// customers (and so the year's orders) before lineitem is probed, rather
/// than only through the suppliers. Sound in an inner-join region: a row
/// failing the implied equality fails one of the equalities implying it
/// (NULLs included). Only plain columns: an expression key stays as written.
fn close_equalities(edges: &mut Vec<Edge>) {
    let mut classes: Vec<Vec<(usize, Expr)>> = Vec::new();
    for e in edges.iter() {
        if !matches!(e.left_key, Expr::Column(_)) || !matches!(e.right_key, Expr::Column(_)) {
            continue;
        }
        let (a, b) = ((e.left, e.left_key.clone()), (e.right, e.right_key.clone()));
        let ia = classes.iter().position(|c| c.contains(&a));
        let ib = classes.iter().position(|c| c.contains(&b));
        match (ia, ib) {
            (None, None) => classes.push(vec![a, b]),
            (Some(i), None) => classes[i].push(b),
            (None, Some(j)) => classes[j].push(a),
            (Some(i), Some(j)) if i != j => {
                let merged = classes.remove(i.max(j));
                classes[i.min(j)].extend(merged);
            }
            _ => {}
        }
    }
    for class in classes {
        for (x, (li, lk)) in class.iter().enumerate() {
            for (ri, rk) in &class[x + 1..] {
                // Two columns of one leaf: a filter, left as it is.
                let known = edges.iter().any(|e| {
                    (e.left_key == *lk && e.right_key == *rk)
                        || (e.left_key == *rk && e.right_key == *lk)
                });
                if li != ri && !known {
                    edges.push(Edge {
                        left: *li,
                        right: *ri,
                        left_key: lk.clone(),
                        right_key: rk.clone(),
                    });
                }
            }
        }
    }
}

/// Semi-join reduction ("magic sets") of a grouped leaf — a decorrelated
/// scalar subquery's aggregate, a grouped derived table — joined on one of
/// its group keys to a filtered table: only the input rows whose key that
/// table has can make a group that survives the join, so the aggregate's
/// input is first semi-joined with (a copy of) that filtered scan. TPC-H
/// Q17 then averages the quantities of a few hundred parts, not of all.
/// The semi join is then placed as any other (see [`push_semi`]): over an
/// input of several tables, onto the table its keys read, so that table is
/// reduced before the input's joins — TPC-H Q2's minimum cost per part
/// joins the suppliers of the region with the partsupp rows of the few
/// selected parts, not with all of partsupp. An input already semi-joined
/// with that very table is left as it is (a region planned twice). A scan
/// of the region that twins the reduced input's scan gets the same semi
/// join, so both are computed once (`twins.rs`: Q17 reads lineitem once).
fn reduce_aggregates(mut leaves: Vec<Plan>, edges: &[Edge], est: &Estimator) -> Result<Vec<Plan>> {
    // (aggregate leaf, other leaf, keys (aggregate input side, other side)).
    type Reduction = (usize, usize, Vec<(Expr, Expr)>);
    let mut reductions: Vec<Reduction> = Vec::new();
    for e in edges {
        for (a, o, a_key, o_key) in [
            (e.left, e.right, &e.left_key, &e.right_key),
            (e.right, e.left, &e.right_key, &e.left_key),
        ] {
            let Plan::Aggregate { groups, .. } = &leaves[a] else {
                continue;
            };
            let Expr::Column(g) = a_key else { continue };
            let Some((_, inner)) = groups.iter().find(|(id, _)| id == g) else {
                continue;
            };
            let reduced = match &leaves[o] {
                Plan::Scan { filter, .. } => !filter.is_empty(),
                Plan::Join {
                    kind: JoinKind::Semi,
                    ..
                } => true,
                _ => false,
            };
            let Plan::Aggregate { input, .. } = &leaves[a] else {
                continue;
            };
            if reduced && !semi_joined_with(input, &leaves[o]) {
                let key = (inner.clone(), o_key.clone());
                match reductions.iter_mut().find(|r| r.0 == a && r.1 == o) {
                    Some(r) => r.2.push(key),
                    None => reductions.push((a, o, vec![key])),
                }
            }
        }
    }
    for (a, o, keys) in reductions {
        let scan = leaves[o].clone();
        if let Plan::Aggregate {
            input,
            groups,
            aggs,
        } = std::mem::replace(
            &mut leaves[a],
            Plan::Limit {
                input: Box::new(scan.clone()),
                count: 0,
                offset: 0,
            },
        ) {
            let reduced = place_joins(
                Plan::Join {
                    left: input,
                    right: Box::new(scan),
                    kind: JoinKind::Semi,
                    keys,
                    residual: Vec::new(),
                },
                est,
            )?;
            leaves[a] = Plan::Aggregate {
                input: Box::new(reduced),
                groups,
                aggs,
            };
            crate::twins::reduce_twins(&mut leaves, a, o, edges);
        }
    }
    Ok(leaves)
}

/// Whether `plan` has a semi join whose right side is `other`.
fn semi_joined_with(plan: &Plan, other: &Plan) -> bool {
    match plan {
        Plan::Join {
            kind: JoinKind::Semi,
            right,
            ..
        } if right.as_ref() == other => true,
        p => p.children().into_iter().any(|c| semi_joined_with(c, other)),
    }
}

/// `(A AND B) OR (A AND C)` as `A` and `B OR C` (into `out`): conditions
/// common to every disjunct hold whichever does — TPC-H Q19's join
/// equality inside each of its three disjuncts.
fn factor_or(c: Expr, out: &mut Vec<Expr>) {
    let Expr::Or(ds) = c else {
        out.push(c);
        return;
    };
    fn disjuncts(e: Expr, out: &mut Vec<Expr>) {
        match e {
            Expr::Or(ds) => ds.into_iter().for_each(|d| disjuncts(d, out)),
            e => out.push(e),
        }
    }
    let mut flat = Vec::new();
    ds.into_iter().for_each(|d| disjuncts(d, &mut flat));
    let lists: Vec<Vec<Expr>> = flat.into_iter().map(Expr::conjuncts).collect();
    let common: Vec<Expr> = lists[0]
        .iter()
        .filter(|x| lists[1..].iter().all(|l| l.contains(x)))
        .cloned()
        .collect();
    let rest: Vec<Vec<Expr>> = lists
        .into_iter()
        .map(|l| l.into_iter().filter(|x| !common.contains(x)).collect())
        .collect();
    out.extend(common);
    // A disjunct left empty is true, and so is the disjunction.
    if rest.iter().all(|l| !l.is_empty()) {
        out.push(Expr::Or(rest.into_iter().map(Expr::and_all).collect()));
    }
}

/// The (joined side, `i` side) keys between the `joined` leaves and leaf `i`.
fn keys_to(edges: &[Edge], joined: &BTreeSet<usize>, i: usize) -> Vec<(Expr, Expr)> {
    edges_to(edges, joined, i)
        .map(|(_, x, r)| (x.clone(), r.clone()))
        .collect()
}

/// The edges between the `joined` leaves and leaf `i`, each as (the joined
/// leaf, its key, `i`'s key).
fn edges_to<'e>(
    edges: &'e [Edge],
    joined: &'e BTreeSet<usize>,
    i: usize,
) -> impl Iterator<Item = (usize, &'e Expr, &'e Expr)> {
    edges.iter().filter_map(move |e| {
        if e.right == i && joined.contains(&e.left) {
            Some((e.left, &e.left_key, &e.right_key))
        } else if e.left == i && joined.contains(&e.right) {
            Some((e.right, &e.right_key, &e.left_key))
        } else {
            None
        }
    })
}

/// The keys between the `joined` leaves and leaf `next`, as
/// [`keys_to`] gives them, without those the others imply: of two keys
/// `x = r` and `y = r` on one column `r` of `next`, where `x` and `y` are
/// plain columns of two different joined leaves, the second goes — `y = r`
/// follows from `x = r` and `x = y`, and the region enforces `x = y`:
/// [`close_equalities`] made it an edge (every two columns of a class on
/// different leaves get one), and every edge ends up a join key, a
/// residual or the region's last filter, or was itself dropped at an
/// earlier join as implied by the keys kept there (by induction over the
/// join order, the class's columns on joined leaves are equal). TPC-H Q9
/// joins partsupp on `l_suppkey`, `s_suppkey`, `l_partkey` and `p_partkey`:
/// two keys are hashed instead of four.
fn essential_keys(
    edges: &[Edge],
    all: &[Edge],
    joined: &BTreeSet<usize>,
    next: usize,
) -> Vec<(Expr, Expr)> {
    let mut kept: Vec<(usize, Expr, Expr)> = Vec::new();
    for (leaf, x, r) in edges_to(edges, joined, next) {
        let linked = |a: usize, ak: &Expr, b: usize, bk: &Expr| {
            all.iter().any(|f| {
                (f.left == a && f.left_key == *ak && f.right == b && f.right_key == *bk)
                    || (f.left == b && f.left_key == *bk && f.right == a && f.right_key == *ak)
            })
        };
        let implied = matches!(x, Expr::Column(_))
            && kept.iter().any(|(kl, kx, kr)| {
                kr == r && *kl != leaf && matches!(kx, Expr::Column(_)) && linked(*kl, kx, leaf, x)
            });
        if !implied {
            kept.push((leaf, x.clone(), r.clone()));
        }
    }
    kept.into_iter().map(|(_, x, r)| (x, r)).collect()
}

/// The greedy order from leaf `first` (the one-row leaves right after it):
/// each step the connected leaf whose join is estimated smallest, then the
/// smallest leaf. Returns the order and its cost, the rows all its joins
/// output; `None` if some leaf is not connected.
fn greedy_order(
    first: usize,
    sizes: &[f64],
    single: &[bool],
    edges: &[Edge],
    residuals: &[(BTreeSet<usize>, Expr)],
    est: &Estimator,
) -> Option<(Vec<usize>, f64)> {
    let mut order = vec![first];
    order.extend((0..sizes.len()).filter(|&i| single[i] && i != first));
    let mut joined: BTreeSet<usize> = order.iter().copied().collect();
    let mut rows = sizes[first];
    let mut cost = 0.0;
    let mut applied = vec![false; residuals.len()];
    while joined.len() < sizes.len() {
        let (next_rows, next) = (0..sizes.len())
            .filter(|i| !joined.contains(i))
            .filter_map(|i| {
                let keys = keys_to(edges, &joined, i);
                let refs: Vec<(&Expr, &Expr)> = keys.iter().map(|(a, b)| (a, b)).collect();
                // The one-row leaves joined first keep the start's keys.
                let shape = if joined.iter().filter(|&&j| !single[j]).count() <= 1 {
                    Shape::Leaf
                } else {
                    Shape::Joined
                };
                (!keys.is_empty()).then(|| (est.join_rows(rows, sizes[i], &refs, shape), i))
            })
            .min_by(|a, b| {
                (a.0, sizes[a.1], a.1)
                    .partial_cmp(&(b.0, sizes[b.1], b.1))
                    .unwrap_or(std::cmp::Ordering::Equal)
            })?;
        joined.insert(next);
        order.push(next);
        rows = next_rows;
        // Residuals (Q19's OR, Q7's nation pair) shrink what follows.
        for (k, (t, e)) in residuals.iter().enumerate() {
            if !applied[k] && t.is_subset(&joined) {
                applied[k] = true;
                rows *= est.selectivity(e);
            }
        }
        rows = rows.max(1.0);
        cost += rows;
    }
    Some((order, cost))
}

/// A left-deep join tree: the greedy order (see [`greedy_order`]) from the
/// start leaf whose order costs least (ties: the smaller start).
fn join_greedily(
    leaves: Vec<Plan>,
    mut edges: Vec<Edge>,
    mut residuals: Vec<(BTreeSet<usize>, Expr)>,
    est: &Estimator,
) -> Result<Plan> {
    let sizes: Vec<f64> = leaves.iter().map(|l| est.rows(l)).collect();
    // One-row leaves (uncorrelated scalar subqueries) join the first leaf
    // as cross products; they need no equality.
    let single: Vec<bool> = leaves.iter().map(Plan::is_single_row).collect();
    let starts = (0..leaves.len()).filter(|&i| !single[i] || !single.contains(&false));
    let Some((order, _)) = starts
        .filter_map(|i| greedy_order(i, &sizes, &single, &edges, &residuals, est))
        .min_by(|a, b| {
            (a.1, sizes[a.0[0]], a.0[0])
                .partial_cmp(&(b.1, sizes[b.0[0]], b.0[0]))
                .unwrap_or(std::cmp::Ordering::Equal)
        })
    else {
        return Err(SqlError::unsupported(
            "a cross join (a table with no equality condition linking it to the others)",
        ));
    };
    let all_edges = edges.clone();
    let mut slots: Vec<Option<Plan>> = leaves.into_iter().map(Some).collect();
    let first = order[0];
    let mut joined = BTreeSet::from([first]);
    let mut plan = slots[first].take().expect("unjoined");
    for &i in &order[1..] {
        if single[i] {
            joined.insert(i);
            plan = Plan::Join {
                left: Box::new(plan),
                right: Box::new(slots[i].take().expect("unjoined")),
                kind: JoinKind::Inner,
                keys: Vec::new(),
                residual: Vec::new(),
            };
        }
    }
    // Equalities with a one-row leaf are filters once it is joined.
    edges.retain(|e| {
        let done = joined.contains(&e.left) && joined.contains(&e.right);
        if done {
            residuals.push((
                BTreeSet::from([e.left, e.right]),
                Expr::cmp(CmpOp::Eq, e.left_key.clone(), e.right_key.clone()),
            ));
        }
        !done
    });
    plan = apply_residuals(plan, &joined, &mut residuals);
    for &next in order
        .iter()
        .filter(|&&i| !joined.contains(&i))
        .collect::<Vec<_>>()
    {
        let keys = essential_keys(&edges, &all_edges, &joined, next);
        // The edges just used are now join keys (or implied by them).
        let used = |e: &Edge| {
            (e.left == next && joined.contains(&e.right))
                || (e.right == next && joined.contains(&e.left))
        };
        edges.retain(|e| !used(e));
        joined.insert(next);
        plan = Plan::Join {
            left: Box::new(plan),
            right: Box::new(slots[next].take().expect("unjoined")),
            kind: JoinKind::Inner,
            keys,
            residual: Vec::new(),
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
            index,
        } => {
            filter.extend(conjuncts);
            Plan::Scan {
                table,
                alias,
                columns,
                filter,
                rows,
                index,
            }
        }
        // A semi or anti join keeps rows of its left side: filter that first.
        Plan::Join {
            left,
            right,
            kind: kind @ (JoinKind::Semi | JoinKind::Anti | JoinKind::AntiIn),
            keys,
            residual,
        } => Plan::Join {
            left: Box::new(push_filters(*left, conjuncts)),
            right,
            kind,
            keys,
            residual,
        },
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
    let mut n = needed.clone();
    for e in plan.exprs() {
        e.collect_columns(&mut n);
    }
    let n = &n;
    let go = |p: Box<Plan>, n: &BTreeSet<ColumnId>| Box::new(prune(*p, n));
    match plan {
        // Sharing runs after pruning (and widens a shared plan to what all
        // its references read): nothing to prune.
        p @ (Plan::OneRow | Plan::Series { .. } | Plan::Shared { .. } | Plan::SharedRef { .. }) => {
            p
        }
        Plan::Scan {
            table,
            alias,
            columns,
            filter,
            rows,
            index,
        } => Plan::Scan {
            table,
            alias,
            columns: columns.into_iter().filter(|c| n.contains(&c.0)).collect(),
            filter,
            rows,
            index,
        },
        Plan::Filter { input, predicate } => Plan::Filter {
            input: go(input, n),
            predicate,
        },
        Plan::Join {
            left,
            right,
            kind,
            keys,
            residual,
        } => Plan::Join {
            left: go(left, n),
            right: go(right, n),
            kind,
            keys,
            residual,
        },
        Plan::Map { input, exprs } => {
            // Computed columns nobody reads are dropped.
            let exprs: Vec<(ColumnId, Expr)> = exprs
                .into_iter()
                .filter(|e| needed.contains(&e.0))
                .collect();
            let mut m = needed.clone();
            for (_, e) in &exprs {
                e.collect_columns(&mut m);
            }
            Plan::Map {
                input: go(input, &m),
                exprs,
            }
        }
        Plan::Aggregate {
            input,
            groups,
            aggs,
        } => {
            let mut m = BTreeSet::new();
            for g in &groups {
                g.1.collect_columns(&mut m);
            }
            for a in &aggs {
                if let Some(x) = &a.1.arg {
                    x.collect_columns(&mut m);
                }
            }
            Plan::Aggregate {
                input: go(input, &m),
                groups,
                aggs,
            }
        }
        Plan::Sort { input, keys } => Plan::Sort {
            input: go(input, n),
            keys,
        },
        Plan::Limit {
            input,
            count,
            offset,
        } => Plan::Limit {
            input: go(input, n),
            count,
            offset,
        },
        Plan::Project { input, outputs } => Plan::Project {
            input: go(input, n),
            outputs,
        },
    }
}
