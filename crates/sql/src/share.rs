//! Common subexpressions: a subtree of the optimized plan that occurs twice
//! or more — equal up to the names of the columns it defines — is computed
//! once per statement ([`Plan::Shared`], at its first occurrence in
//! preorder) and its result handed to the other occurrences
//! ([`Plan::SharedRef`], its columns renamed). The binder binds a WITH query
//! again at each reference (TPC-H Q15's view `revenue0`: in FROM and in the
//! scalar subquery), and a subquery may repeat a join of its query (Q11's
//! partsupp ⋈ supplier ⋈ nation in the HAVING subquery): both become one
//! computation. The optimizer makes some twins on purpose: a scan of a
//! region gets the semi join a grouped subquery's copy of it has
//! (`twins.rs`: Q17's `lineitem ⋉ part'`), so one reduced scan serves both.
//!
//! **After the optimizer, not before.** Two occurrences are shared only if
//! their optimized subtrees are the same: the same tables, the same pushed
//! filters, join order, keys, groups and aggregates. A WITH query one of
//! whose references receives a pushed filter (`… FROM v a, v b WHERE
//! a.x = 5`) is then two different plans and runs twice, each with its own
//! filter — sharing before pushdown would keep the shared plan unfiltered
//! and lose the pushdown for the reference that had it, which costs more
//! than the second computation saves whenever the filter is selective.
//! Projection pruning may have given the occurrences different column
//! lists (Q11's subquery reads no `ps_partkey`): the columns are not part of
//! the comparison, the shared plan reads the union (columns only one
//! occurrence reads get fresh ids).
//!
//! Only subtrees with a join or an aggregate are shared: a bare scan with a
//! filter costs about as much as copying its result would.

use std::collections::HashMap;

use crate::plan::{AggCall, ColumnId, ColumnInfo, Expr, Plan};

/// The later occurrences to replace, by preorder number: (shared plan id,
/// (the occurrence's column, the shared plan's column)).
type Refs = HashMap<usize, (usize, Vec<(ColumnId, ColumnId)>)>;

/// `root` with every repeated subtree computed once (see the module doc);
/// `columns` gains the ids of columns a shared plan reads for some
/// occurrence other than its first.
pub(crate) fn share(root: Plan, columns: &mut Vec<ColumnInfo>) -> Plan {
    let mut nodes = Vec::new();
    index(&root, &mut nodes);
    // Largest first: a shared subtree's parts are not shared again.
    let mut order: Vec<usize> = (0..nodes.len())
        .filter(|&i| worth_sharing(nodes[i].plan))
        .collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(nodes[i].size), i));
    let mut covered = vec![false; nodes.len()];
    let mut defs: HashMap<usize, (usize, Plan)> = HashMap::new();
    let mut refs: Refs = HashMap::new();
    let mut next_id = 1;
    for (k, &a) in order.iter().enumerate() {
        if covered[a] {
            continue;
        }
        let mut merged = nodes[a].plan.clone();
        let mut found = Vec::new();
        for &b in &order[k + 1..] {
            if covered[b] || b < a || nodes[b].size != nodes[a].size {
                continue;
            }
            let mut u = Unifier {
                map: HashMap::new(),
                next: columns.len(),
                added: Vec::new(),
                columns: columns.as_slice(),
            };
            if let Some(m) = u.unify(&merged, nodes[b].plan) {
                let renamed = nodes[b]
                    .plan
                    .output_columns()
                    .into_iter()
                    .filter_map(|c| u.map.get(&c).map(|&s| (c, s)))
                    .collect();
                let added = u.added;
                columns.extend(added);
                merged = m;
                found.push((b, renamed));
            }
        }
        if found.is_empty() {
            continue;
        }
        for &i in std::iter::once(&a).chain(found.iter().map(|f| &f.0)) {
            covered[i..i + nodes[i].size].fill(true);
        }
        defs.insert(a, (next_id, merged));
        for (b, renamed) in found {
            refs.insert(b, (next_id, renamed));
        }
        next_id += 1;
    }
    if defs.is_empty() {
        return root;
    }
    rebuild(root, &mut 0, &mut defs, &mut refs)
}

/// A node in preorder with the size of its subtree (so node `i`'s subtree
/// is `i..i + size`).
struct Node<'p> {
    plan: &'p Plan,
    size: usize,
}

fn index<'p>(p: &'p Plan, out: &mut Vec<Node<'p>>) {
    let at = out.len();
    out.push(Node { plan: p, size: 0 });
    for c in p.children() {
        index(c, out);
    }
    out[at].size = out.len() - at;
}

fn worth_sharing(p: &Plan) -> bool {
    match p {
        Plan::Join { .. } | Plan::Aggregate { .. } => true,
        Plan::Project { .. } | Plan::Scan { .. } | Plan::OneRow => false,
        p => p.children().iter().any(|c| worth_sharing(c)),
    }
}

/// The tree with the chosen subtrees (by preorder number) replaced.
fn rebuild(
    p: Plan,
    at: &mut usize,
    defs: &mut HashMap<usize, (usize, Plan)>,
    refs: &mut Refs,
) -> Plan {
    let me = *at;
    if let Some((id, input)) = defs.remove(&me) {
        *at += subtree_size(&p);
        return Plan::Shared {
            id,
            input: Box::new(input),
        };
    }
    if let Some((id, columns)) = refs.remove(&me) {
        *at += subtree_size(&p);
        return Plan::SharedRef { id, columns };
    }
    *at += 1;
    p.map_inputs(|c| rebuild(c, at, defs, refs))
}

fn subtree_size(p: &Plan) -> usize {
    1 + p.children().iter().map(|c| subtree_size(c)).sum::<usize>()
}

/// Matches a second occurrence (`b`) against the shared plan (`a`).
struct Unifier<'c> {
    /// `b`'s columns → the shared plan's.
    map: HashMap<ColumnId, ColumnId>,
    /// The id the next added column gets.
    next: usize,
    /// Columns `b` reads that `a` did not: added to the shared plan.
    added: Vec<ColumnInfo>,
    columns: &'c [ColumnInfo],
}

impl Unifier<'_> {
    /// `b`'s expression in `a`'s columns; `None` if it reads a column
    /// defined outside the subtree (then the two are not the same).
    fn rename(&self, e: &Expr) -> Option<Expr> {
        let mut ok = true;
        let r = e.rewrite(&mut |x| match x {
            Expr::Column(c) => Some(match self.map.get(c) {
                Some(s) => Expr::Column(*s),
                None => {
                    ok = false;
                    x.clone()
                }
            }),
            _ => None,
        });
        ok.then_some(r)
    }

    fn same(&self, a: &Expr, b: &Expr) -> bool {
        self.rename(b).is_some_and(|r| r == *a)
    }

    fn same_all(&self, a: &[Expr], b: &[Expr]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| self.same(x, y))
    }

    /// A column of `b` that `a` lacks: a fresh id for the shared plan.
    fn add(&mut self, b: ColumnId) -> ColumnId {
        let id = ColumnId(self.next);
        self.next += 1;
        // `b` is a subtree of the plan as optimized: its ids index `columns`.
        self.added.push(self.columns[b.0].clone());
        self.map.insert(b, id);
        id
    }

    /// `a` widened to `b`'s columns if the two are the same plan up to
    /// column ids, else `None`.
    fn unify(&mut self, a: &Plan, b: &Plan) -> Option<Plan> {
        Some(match (a, b) {
            (
                Plan::Scan {
                    table,
                    alias,
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
            ) => {
                if table != bt || rows != br {
                    return None;
                }
                let mut columns = columns.clone();
                for &(id, i) in bc {
                    match columns.iter().find(|c| c.1 == i) {
                        Some(&(s, _)) => {
                            self.map.insert(id, s);
                        }
                        None => {
                            let s = self.add(id);
                            columns.push((s, i));
                        }
                    }
                }
                if !self.same_all(filter, bf) {
                    return None;
                }
                Plan::Scan {
                    table: table.clone(),
                    alias: alias.clone(),
                    columns,
                    filter: filter.clone(),
                    rows: *rows,
                    // Sharing runs before index scans are chosen.
                    index: None,
                }
            }
            (Plan::OneRow, Plan::OneRow) => Plan::OneRow,
            (
                Plan::Filter { input, predicate },
                Plan::Filter {
                    input: bi,
                    predicate: bp,
                },
            ) => {
                let input = self.unify(input, bi)?;
                if !self.same_all(predicate, bp) {
                    return None;
                }
                Plan::Filter {
                    input: Box::new(input),
                    predicate: predicate.clone(),
                }
            }
            (
                Plan::Join {
                    left,
                    right,
                    kind,
                    keys,
                    residual,
                },
                Plan::Join {
                    left: bl,
                    right: br,
                    kind: bk,
                    keys: bkeys,
                    residual: bres,
                },
            ) => {
                if kind != bk || keys.len() != bkeys.len() {
                    return None;
                }
                let left = self.unify(left, bl)?;
                let right = self.unify(right, br)?;
                let keys_same = keys
                    .iter()
                    .zip(bkeys)
                    .all(|((x, y), (u, v))| self.same(x, u) && self.same(y, v));
                if !keys_same || !self.same_all(residual, bres) {
                    return None;
                }
                Plan::Join {
                    left: Box::new(left),
                    right: Box::new(right),
                    kind: *kind,
                    keys: keys.clone(),
                    residual: residual.clone(),
                }
            }
            (
                Plan::Map { input, exprs },
                Plan::Map {
                    input: bi,
                    exprs: be,
                },
            ) => {
                let input = self.unify(input, bi)?;
                let mut exprs = exprs.clone();
                for (id, e) in be {
                    let r = self.rename(e)?;
                    match exprs.iter().find(|x| x.1 == r) {
                        Some(&(s, _)) => {
                            self.map.insert(*id, s);
                        }
                        None => {
                            let s = self.add(*id);
                            exprs.push((s, r));
                        }
                    }
                }
                Plan::Map {
                    input: Box::new(input),
                    exprs,
                }
            }
            (
                Plan::Aggregate {
                    input,
                    groups,
                    aggs,
                },
                Plan::Aggregate {
                    input: bi,
                    groups: bg,
                    aggs: ba,
                },
            ) => {
                if groups.len() != bg.len() || aggs.len() != ba.len() {
                    return None;
                }
                let input = self.unify(input, bi)?;
                for ((s, x), (id, y)) in groups.iter().zip(bg) {
                    if !self.same(x, y) {
                        return None;
                    }
                    self.map.insert(*id, *s);
                }
                for ((s, x), (id, y)) in aggs.iter().zip(ba) {
                    if !self.same_call(x, y) {
                        return None;
                    }
                    self.map.insert(*id, *s);
                }
                Plan::Aggregate {
                    input: Box::new(input),
                    groups: groups.clone(),
                    aggs: aggs.clone(),
                }
            }
            (
                Plan::Sort { input, keys },
                Plan::Sort {
                    input: bi,
                    keys: bk,
                },
            ) => {
                let input = self.unify(input, bi)?;
                let same = keys.len() == bk.len()
                    && keys
                        .iter()
                        .zip(bk)
                        .all(|(x, y)| x.1 == y.1 && x.2 == y.2 && self.same(&x.0, &y.0));
                if !same {
                    return None;
                }
                Plan::Sort {
                    input: Box::new(input),
                    keys: keys.clone(),
                }
            }
            (
                Plan::Limit {
                    input,
                    count,
                    offset,
                },
                Plan::Limit {
                    input: bi,
                    count: bc,
                    offset: bo,
                },
            ) => {
                if (count, offset) != (bc, bo) {
                    return None;
                }
                Plan::Limit {
                    input: Box::new(self.unify(input, bi)?),
                    count: *count,
                    offset: *offset,
                }
            }
            _ => return None,
        })
    }

    fn same_call(&self, a: &AggCall, b: &AggCall) -> bool {
        a.func == b.func
            && match (&a.arg, &b.arg) {
                (None, None) => true,
                (Some(x), Some(y)) => self.same(x, y),
                _ => false,
            }
    }
}
