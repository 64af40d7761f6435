//! Plans kept across executions of one statement (a prepared statement's,
//! a write's generated SELECT): the binder and optimizer run once, later
//! executions put their parameter values into the kept plan.
//!
//! ## What is kept
//! Per statement (its parsed text) and *parameter shape* (each parameter's
//! kind; a decimal's scale; the value itself for NULL and booleans, which
//! the binder folds), a **template**: the statement planned with stand-in
//! values, up to but not including the index choice (which counts the rows
//! each lookup selects, so it depends on the values: `index_scan.rs`), and
//! the catalog's **plan token** of every table the plan scans
//! ([`Catalog::plan_token`]: its definition, NULL flags, indexes and the
//! order of magnitude of its rows).
//!
//! ## Why a template is the statement's plan for any values
//! The binder and optimizer see parameters as constants, and a few of
//! their rewrites look at a constant's value (a LIKE without wildcards,
//! rescaling a decimal, a constant a statement needs: an IN list's value,
//! SUBSTRING's position, a date plus an interval). Arithmetic over a
//! parameter (`$1 + 1`) is not folded by the binder: it stays an expression
//! in the template, and `optimize::fold_parameter_arithmetic` folds it once
//! the values are in, before the index choice. A template is kept only when
//! the plan does not depend on the values, checked when it is made: the
//! statement is planned three times — with the execution's own values `x`,
//! with stand-ins `A` and with other stand-ins `B` (other magnitudes,
//! lengths, wildcards) — and the `A` plan with each `A` literal replaced by
//! the `B` value must equal the `B` plan, and with the `x` values the `x`
//! plan. A rewrite that consumed a value (a folded `$1 + INTERVAL '1'
//! DAY`, a rescaled decimal) leaves no `A` literal to replace, one that
//! depends on it gives another plan for another value: either makes the
//! plans differ, and the statement is marked *not kept* (planned per
//! execution, as without the cache). A statement reading the clock
//! (`now()` is folded into the plan) or an `EXPLAIN` is never kept.
//!
//! ## When
//! The first execution of a statement only records that it was seen (one
//! hash): a statement run once pays nothing; the second plans the three
//! times and keeps the template; later ones substitute, choose the index
//! scans and reuse the estimates. A kept template whose tables' tokens
//! changed is made again. At most [`PLAN_CACHE_ENTRIES_MAX`] statements are
//! kept per store; a full cache drops an arbitrary one.
//!
//! The cache is shared by every session of a store behind one mutex held
//! for a lookup or an insertion (a hash and an equality check of the parsed
//! statement), never while planning.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;
use sqlparser::ast::Statement;

use crate::catalog::Catalog;
use crate::error::SqlError;
use crate::params::ParamValue;
use crate::plan::{Expr, LogicalPlan, Plan};
use crate::types::{Literal, SqlType};
use crate::{Explain, optimize};

/// Statements (with their parameter shapes) one cache keeps, at most,
/// templates and seen marks together. Guessed: a TPC-C terminal runs about
/// 40 distinct statements, pgbench 7; templates are a few KiB each.
pub const PLAN_CACHE_ENTRIES_MAX: usize = 4096;

/// Parameters a kept statement may have, at most: each gets stand-ins
/// distinct from the others' (within one magnitude, see [`stand_in`]).
const PARAMS_MAX: usize = 99;

/// What a statement planned through the cache met.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A kept template, its tables unchanged: no binding or optimizing.
    Hit,
    /// First seen: planned, marked as seen.
    Seen,
    /// Seen before: planned three times, the template kept.
    Kept,
    /// Planned per execution: an EXPLAIN, a clock read, a plan that
    /// depends on its values, or a catalog without plan tokens.
    NotKept,
}

/// How many statements met each [`Outcome`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlanCacheStats {
    pub hits: u64,
    pub seen: u64,
    pub kept: u64,
    pub not_kept: u64,
}

/// The plans of a store's statements; see the module documentation.
#[derive(Default)]
pub struct PlanCache {
    entries: Mutex<HashMap<u64, Slot>>,
    hits: AtomicU64,
    seen: AtomicU64,
    kept: AtomicU64,
    not_kept: AtomicU64,
}

impl std::fmt::Debug for PlanCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlanCache")
            .field("stats", &self.stats())
            .finish()
    }
}

/// One hash's entry.
enum Slot {
    /// Planned once: the next execution makes the template.
    Seen,
    /// Its statements (hash collisions share a slot).
    Kept(Vec<Arc<Kept>>),
}

/// A statement's template, or the mark that its plans are not kept.
struct Kept {
    statement: Statement,
    shape: Vec<Shape>,
    tokens: Vec<(String, Option<u64>)>,
    /// `None`: not kept (planned per execution until a token changes).
    template: Option<Template>,
}

struct Template {
    /// The plan with the `A` stand-ins, before the index choice.
    plan: LogicalPlan,
    /// The estimates of the execution that made it (preorder; the index
    /// choice adds no node).
    estimates: Vec<usize>,
    /// The `A` stand-in of each parameter that has one.
    stand_ins: Vec<Option<Literal>>,
}

/// A parameter's kind as the binder sees it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Shape {
    Int,
    Num {
        scale: u8,
    },
    Double,
    Str,
    Date,
    Timestamp,
    /// Folded by the binder: the value is the shape.
    Null(SqlType),
    Bool(bool),
}

impl Shape {
    fn of(v: &ParamValue) -> Shape {
        match v {
            ParamValue::Int(_) => Shape::Int,
            ParamValue::Num { scale, .. } => Shape::Num { scale: *scale },
            ParamValue::Double(_) => Shape::Double,
            ParamValue::Str(_) => Shape::Str,
            ParamValue::Date(_) => Shape::Date,
            ParamValue::Timestamp(_) => Shape::Timestamp,
            ParamValue::Null(ty) => Shape::Null(*ty),
            ParamValue::Bool(b) => Shape::Bool(*b),
        }
    }
}

/// Which set of stand-ins.
#[derive(Clone, Copy)]
enum Set {
    A,
    B,
}

/// Parameter `i`'s stand-in of `set` for `value`'s shape (`value` itself
/// for a NULL or a boolean). `A`: large, with a marker a reader of a plan
/// dump recognizes (`198765430x`); `B`: small, short, a string with LIKE's
/// wildcards — so a rewrite that looks at the value sees two different
/// ones.
fn stand_in(value: &ParamValue, i: usize, set: Set) -> ParamValue {
    let i64_ = i as i64;
    match (value, set) {
        (ParamValue::Int(_), Set::A) => ParamValue::Int(1_987_654_300 + i64_),
        (ParamValue::Int(_), Set::B) => ParamValue::Int(3 + 7 * i64_),
        (ParamValue::Num { scale, .. }, Set::A) => ParamValue::Num {
            value: 1_987_654_300 + i64_,
            scale: *scale,
        },
        (ParamValue::Num { scale, .. }, Set::B) => ParamValue::Num {
            value: 5 + 7 * i64_,
            scale: *scale,
        },
        (ParamValue::Double(_), Set::A) => ParamValue::Double(1_987_654_300.5 + i as f64),
        (ParamValue::Double(_), Set::B) => ParamValue::Double(0.25 + i as f64),
        (ParamValue::Str(_), Set::A) => ParamValue::Str(format!("198765430-param-{i}")),
        (ParamValue::Str(_), Set::B) => ParamValue::Str(format!("%_{i}")),
        // Days: year 9 9xx, and 1970's first months.
        (ParamValue::Date(_), Set::A) => {
            ParamValue::Date(maestro_storage::column::Date(2_912_345 + i as i32))
        }
        (ParamValue::Date(_), Set::B) => {
            ParamValue::Date(maestro_storage::column::Date(40 + 3 * i as i32))
        }
        (ParamValue::Timestamp(_), Set::A) => ParamValue::Timestamp(1_987_654_300_000_000 + i64_),
        (ParamValue::Timestamp(_), Set::B) => ParamValue::Timestamp(1_000 + 7 * i64_),
        (ParamValue::Null(_) | ParamValue::Bool(_), _) => value.clone(),
    }
}

/// Every parameter's stand-in of `set`.
fn stand_ins_for(params: &[ParamValue], set: Set) -> Vec<ParamValue> {
    params
        .iter()
        .enumerate()
        .map(|(i, v)| stand_in(v, i, set))
        .collect()
}

/// The literal a value binds to, for those that stand in (not NULL).
fn literal_of(v: &ParamValue) -> Option<Literal> {
    match v.to_expr() {
        Ok(Expr::Lit(l)) if !matches!(l, Literal::Bool(_)) => Some(l),
        _ => None,
    }
}

/// The statement planned up to the index choice, and whether it read the
/// clock.
fn plan_generic(
    catalog: &dyn Catalog,
    stmt: &Statement,
    params: &[ParamValue],
) -> Result<(LogicalPlan, Explain, bool), SqlError> {
    let bound = crate::bind::bind_with(catalog, stmt, &[], Some(params.to_vec()))?;
    let plan = optimize::optimize_generic(bound.plan, catalog)?;
    Ok((plan, bound.explain, bound.reads_clock))
}

impl PlanCache {
    pub fn new() -> PlanCache {
        PlanCache::default()
    }

    /// How many statements met each outcome so far.
    pub fn stats(&self) -> PlanCacheStats {
        PlanCacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            seen: self.seen.load(Ordering::Relaxed),
            kept: self.kept.load(Ordering::Relaxed),
            not_kept: self.not_kept.load(Ordering::Relaxed),
        }
    }

    /// Templates and seen marks held.
    pub fn len(&self) -> usize {
        self.entries.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `stmt` planned with `params` (as [`crate::plan_parsed`] without a
    /// cache would), through the cache, and what it met.
    pub fn plan(
        &self,
        catalog: &dyn Catalog,
        stmt: &Statement,
        params: &[ParamValue],
    ) -> Result<(LogicalPlan, Explain, Outcome), SqlError> {
        let shape: Vec<Shape> = params.iter().map(Shape::of).collect();
        let hash = key_hash(stmt, &shape);
        let found = self.find(hash, stmt, &shape);
        if let Some(kept) = &found
            && tokens_hold(catalog, &kept.tokens)
        {
            match &kept.template {
                Some(t) => {
                    self.hits.fetch_add(1, Ordering::Relaxed);
                    return Ok((t.instantiate(catalog, params), Explain::No, Outcome::Hit));
                }
                None => {
                    let (plan, explain) = crate::plan_uncached(catalog, stmt, params)?;
                    self.not_kept.fetch_add(1, Ordering::Relaxed);
                    return Ok((plan, explain, Outcome::NotKept));
                }
            }
        }
        if found.is_none() && !self.seen_before(hash) {
            let (plan, explain) = crate::plan_uncached(catalog, stmt, params)?;
            self.seen.fetch_add(1, Ordering::Relaxed);
            return Ok((plan, explain, Outcome::Seen));
        }
        let (generic, explain, reads_clock) = plan_generic(catalog, stmt, params)?;
        let plan = optimize::finish(generic.clone(), catalog);
        let template = if explain == Explain::No && !reads_clock && params.len() <= PARAMS_MAX {
            make_template(catalog, stmt, params, &generic, &plan.estimates)
        } else {
            None
        };
        let tokens = scanned_tables(&generic.root)
            .into_iter()
            .map(|t| {
                let token = catalog.plan_token(&t);
                (t, token)
            })
            .collect::<Vec<_>>();
        // A catalog that cannot say when a table changed keeps nothing.
        let template = template.filter(|_| tokens.iter().all(|(_, t)| t.is_some()));
        let outcome = if template.is_some() {
            Outcome::Kept
        } else {
            Outcome::NotKept
        };
        match outcome {
            Outcome::Kept => self.kept.fetch_add(1, Ordering::Relaxed),
            _ => self.not_kept.fetch_add(1, Ordering::Relaxed),
        };
        self.insert(
            hash,
            Arc::new(Kept {
                statement: stmt.clone(),
                shape,
                tokens,
                template,
            }),
        );
        Ok((plan, explain, outcome))
    }

    fn find(&self, hash: u64, stmt: &Statement, shape: &[Shape]) -> Option<Arc<Kept>> {
        match self.entries.lock().get(&hash)? {
            Slot::Seen => None,
            Slot::Kept(all) => all
                .iter()
                .find(|k| k.shape == shape && k.statement == *stmt)
                .cloned(),
        }
    }

    /// Whether `hash` was seen (marks it seen otherwise).
    fn seen_before(&self, hash: u64) -> bool {
        let mut entries = self.entries.lock();
        if entries.contains_key(&hash) {
            return true;
        }
        make_room(&mut entries);
        entries.insert(hash, Slot::Seen);
        false
    }

    fn insert(&self, hash: u64, kept: Arc<Kept>) {
        let mut entries = self.entries.lock();
        if !entries.contains_key(&hash) {
            make_room(&mut entries);
        }
        let slot = entries.entry(hash).or_insert(Slot::Seen);
        match slot {
            Slot::Seen => *slot = Slot::Kept(vec![kept]),
            Slot::Kept(all) => {
                all.retain(|k| !(k.shape == kept.shape && k.statement == kept.statement));
                all.push(kept);
            }
        }
    }
}

/// Drops an arbitrary entry when the cache is full.
fn make_room(entries: &mut HashMap<u64, Slot>) {
    if entries.len() >= PLAN_CACHE_ENTRIES_MAX
        && let Some(&victim) = entries.keys().next()
    {
        entries.remove(&victim);
    }
}

fn key_hash(stmt: &Statement, shape: &[Shape]) -> u64 {
    // A fast fixed hasher (the parsed statement is a tree of many short
    // strings): the hash only picks a slot, equality decides.
    let mut h = maestro_storage::column::FxHasher::default();
    stmt.hash(&mut h);
    shape.hash(&mut h);
    h.finish()
}

fn tokens_hold(catalog: &dyn Catalog, tokens: &[(String, Option<u64>)]) -> bool {
    tokens
        .iter()
        .all(|(table, token)| catalog.plan_token(table) == *token)
}

/// The template of `stmt` if its plan does not depend on its values (see
/// the module documentation); `generic` is its plan for `params`.
fn make_template(
    catalog: &dyn Catalog,
    stmt: &Statement,
    params: &[ParamValue],
    generic: &LogicalPlan,
    estimates: &[usize],
) -> Option<Template> {
    let values_a = stand_ins_for(params, Set::A);
    let stand_ins: Vec<Option<Literal>> = values_a.iter().map(literal_of).collect();
    let template = Template {
        plan: if params.is_empty() {
            generic.clone()
        } else {
            let (plan_a, _, clock_a) = plan_generic(catalog, stmt, &values_a).ok()?;
            let values_b = stand_ins_for(params, Set::B);
            let (plan_b, _, clock_b) = plan_generic(catalog, stmt, &values_b).ok()?;
            if clock_a || clock_b {
                return None;
            }
            let probe = Template {
                plan: plan_a,
                estimates: Vec::new(),
                stand_ins: stand_ins.clone(),
            };
            let same = |plan: &LogicalPlan, values: &[ParamValue]| {
                let substituted = probe.substituted(values);
                substituted.root == plan.root && substituted.columns == plan.columns
            };
            if !same(&plan_b, &values_b) || !same(generic, params) {
                return None;
            }
            probe.plan
        },
        estimates: estimates.to_vec(),
        stand_ins,
    };
    Some(template)
}

impl Template {
    /// The template with each stand-in replaced by its parameter's value.
    fn substituted(&self, params: &[ParamValue]) -> LogicalPlan {
        let pairs: Vec<(&Literal, Literal)> = self
            .stand_ins
            .iter()
            .zip(params)
            .filter_map(|(a, v)| Some((a.as_ref()?, literal_of(v)?)))
            .collect();
        let mut plan = self.plan.clone();
        if !pairs.is_empty() {
            plan.root.literals_mut(&mut |l: &mut Literal| {
                if let Some((_, x)) = pairs.iter().find(|(a, _)| *a == l) {
                    *l = x.clone();
                }
            });
        }
        plan
    }

    /// The plan of an execution with `params`: substituted, its index
    /// scans chosen on the current catalog, the kept estimates.
    fn instantiate(&self, catalog: &dyn Catalog, params: &[ParamValue]) -> LogicalPlan {
        let plan = self.substituted(params);
        let root = optimize::fold_parameter_arithmetic(plan.root);
        LogicalPlan {
            root: crate::index_scan::choose(root, catalog),
            columns: plan.columns,
            estimates: self.estimates.clone(),
        }
    }
}

/// The tables `plan` scans, each once.
fn scanned_tables(plan: &Plan) -> Vec<String> {
    let mut out = Vec::new();
    collect_tables(plan, &mut out);
    out.sort();
    out.dedup();
    out
}

fn collect_tables(plan: &Plan, out: &mut Vec<String>) {
    if let Plan::Scan { table, .. } = plan {
        out.push(table.clone());
    }
    for c in plan.children() {
        collect_tables(c, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stand_ins_differ_between_sets_and_parameters() {
        let values = [
            ParamValue::Int(1),
            ParamValue::Num { value: 1, scale: 2 },
            ParamValue::Double(1.0),
            ParamValue::Str("x".into()),
            ParamValue::Date(maestro_storage::column::Date(1)),
            ParamValue::Timestamp(1),
        ];
        for v in &values {
            let mut seen = Vec::new();
            for i in 0..PARAMS_MAX {
                for set in [Set::A, Set::B] {
                    let s = stand_in(v, i, set);
                    assert_eq!(Shape::of(&s), Shape::of(v), "{v:?}");
                    let l = literal_of(&s).expect("a literal");
                    assert!(!seen.contains(&l), "{l:?} repeats");
                    seen.push(l);
                }
            }
        }
        // NULL and booleans are their own stand-ins.
        let null = ParamValue::Null(SqlType::Int);
        assert_eq!(stand_in(&null, 0, Set::A), null);
        assert_eq!(literal_of(&ParamValue::Bool(true)), None);
    }
}
