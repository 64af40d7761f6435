//! Cardinality estimates from column statistics
//! ([`maestro_storage::column::ColumnStats`], computed once per table
//! version and kept with it): how many rows each plan node outputs, for the
//! join order (`optimize.rs`) and for EXPLAIN.
//!
//! The textbook model (System R; PostgreSQL's `clausesel.c` in spirit):
//! - `col = const`: 1/ndv (0 when a dictionary column has no such value);
//!   `<>` the rest; `col IN (…)` the sum over the list.
//! - Ranges `col < const` …: the fraction of `[min, max]` below the constant,
//!   values uniform; strings by their position among the dictionary's
//!   values, or (free text) by their first 8 bytes as a number.
//! - `LIKE`: on a dictionary column, the fraction of the dictionary's values
//!   that match (exact over distinct values, uniform over rows); elsewhere
//!   no wildcard is `=`, a literal prefix is the range `[prefix, prefix+1)`.
//! - `IS NULL`: NULLs / rows. AND, OR and NOT combine independently.
//! - An inner join on `s = r`: `|S|·|R| / max(ndv(s), ndv(r))`, each ndv
//!   capped by its side's estimated rows (containment); with several keys
//!   the most selective one alone (TPC-H's composite keys are correlated:
//!   multiplying would make `lineitem ⋈ partsupp` tiny). A key that is
//!   unique in its table (the catalog's keys, a one-key aggregate's group)
//!   still caps the join at the other side's rows.
//! - What no statistic covers (computed columns, aggregates' outputs) falls
//!   back to PostgreSQL's defaults: 1/200 for `=`, 1/3 for ranges.

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use maestro_storage::column::{Column, ColumnStats, ValueRange};

use crate::catalog::Catalog;
use crate::lower::like;
use crate::plan::{CmpOp, ColumnId, Expr, JoinKind, Plan};
use crate::types::Literal;

/// PostgreSQL's `DEFAULT_EQ_SEL`: `=` on a value without statistics.
const DEFAULT_EQ: f64 = 0.005;
/// PostgreSQL's `DEFAULT_INEQ_SEL`: a range or an opaque comparison.
const DEFAULT_RANGE: f64 = 1.0 / 3.0;
/// A LIKE with a leading wildcard on a column without a dictionary
/// (guessed, as PostgreSQL's `DEFAULT_MATCH_SEL` is).
const DEFAULT_LIKE: f64 = 0.05;
/// Any other condition (a CASE, a boolean column …).
const DEFAULT_OTHER: f64 = 0.5;
/// The semi join's share of left rows with unknown key statistics.
const DEFAULT_SEMI: f64 = 0.5;

/// What one side of a join is, for [`Estimator::join_rows`]: whether its
/// unique columns are still unique there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    /// One table (scan, aggregate, semi join of one): its keys are keys.
    Leaf,
    /// Several tables joined: a table's key may repeat.
    Joined,
}

impl Shape {
    /// The shape of a plan node's output.
    pub fn of(p: &Plan) -> Shape {
        match p {
            Plan::Join {
                kind: JoinKind::Inner | JoinKind::LeftOuter,
                ..
            } => Shape::Joined,
            Plan::Filter { input, .. } | Plan::Map { input, .. } => Shape::of(input),
            _ => Shape::Leaf,
        }
    }
}

/// Estimates for the nodes of one plan, reading the statistics of the
/// tables it scans.
pub(crate) struct Estimator<'c> {
    catalog: &'c dyn Catalog,
    /// Base columns: (table, column index).
    base: HashMap<ColumnId, (String, usize)>,
    /// Computed columns that stand for an expression of their input (a
    /// group key, a derived table's column): for key statistics.
    alias: HashMap<ColumnId, Expr>,
    unique: BTreeSet<ColumnId>,
    /// Each shared plan's estimated rows, by id (for its references).
    shared: HashMap<usize, f64>,
    /// A LIKE's selectivity on a dictionary column, by (table, column,
    /// pattern): it matches the pattern against every dictionary value,
    /// and join ordering estimates the same scan's filter many times (TPC-H
    /// Q2's `p_type LIKE '%BRASS'`: most of the statement's planning time).
    like_memo: Mutex<HashMap<(String, usize, String), f64>>,
}

impl<'c> Estimator<'c> {
    pub fn new(root: &Plan, catalog: &'c dyn Catalog) -> Estimator<'c> {
        let mut e = Estimator {
            catalog,
            base: HashMap::new(),
            alias: HashMap::new(),
            unique: BTreeSet::new(),
            shared: HashMap::new(),
            like_memo: Mutex::default(),
        };
        crate::optimize::unique_columns(root, catalog, &mut e.unique);
        e.index(root);
        e.index_shared(root);
        e
    }

    fn index(&mut self, p: &Plan) {
        match p {
            Plan::Scan { table, columns, .. } => {
                for &(id, i) in columns {
                    self.base.insert(id, (table.clone(), i));
                }
            }
            Plan::Aggregate { groups, .. } => {
                for (id, g) in groups {
                    self.alias.insert(*id, g.clone());
                }
            }
            Plan::Map { exprs, .. } => {
                for (id, x) in exprs {
                    self.alias.insert(*id, x.clone());
                }
            }
            Plan::SharedRef { columns, .. } => {
                for &(id, shared) in columns {
                    self.alias.insert(id, Expr::Column(shared));
                }
            }
            _ => {}
        }
        for c in p.children() {
            self.index(c);
        }
    }

    /// The rows of each shared plan (after [`Self::index`]: they read its
    /// statistics).
    fn index_shared(&mut self, p: &Plan) {
        if let Plan::Shared { id, input } = p {
            let rows = self.rows(input);
            self.shared.insert(*id, rows);
        }
        for c in p.children() {
            self.index_shared(c);
        }
    }

    /// Whether `e` is a column whose values are unique where it comes from.
    pub fn is_unique(&self, e: &Expr) -> bool {
        matches!(e, Expr::Column(c) if self.unique.contains(c))
    }

    /// The base column `e` reads, through group keys and derived columns.
    fn base_of(&self, e: &Expr) -> Option<(&str, usize)> {
        let mut e = e;
        for _ in 0..16 {
            let Expr::Column(c) = e else { return None };
            if let Some((t, i)) = self.base.get(c) {
                return Some((t, *i));
            }
            e = self.alias.get(c)?;
        }
        None
    }

    fn stats(&self, e: &Expr) -> Option<Arc<ColumnStats>> {
        let (t, i) = self.base_of(e)?;
        let data = self.catalog.data(t)?;
        (i < data.num_columns()).then(|| data.column_stats(i))
    }

    /// The dictionary's values of a dictionary-encoded base column.
    fn dictionary(&self, e: &Expr) -> Option<impl Iterator<Item = &str>> {
        let (t, i) = self.base_of(e)?;
        let data = self.catalog.data(t)?;
        match data.columns().get(i)? {
            Column::Str(d) => Some(d.dictionary().iter()),
            _ => None,
        }
    }

    /// Distinct values of `e` among `rows` rows of its input, if known.
    pub fn ndv(&self, e: &Expr, rows: f64) -> Option<f64> {
        let s = self.stats(e)?;
        Some((s.distinct as f64).min(rows).max(1.0))
    }

    /// The node's output rows (at least 1).
    pub fn rows(&self, p: &Plan) -> f64 {
        let r = match p {
            Plan::Scan { rows, filter, .. } => *rows as f64 * self.all(filter),
            Plan::Filter { input, predicate } => self.rows(input) * self.all(predicate),
            Plan::Join {
                left,
                right,
                kind,
                keys,
                residual,
            } => {
                let (l, r) = (self.rows(left), self.rows(right));
                let refs: Vec<(&Expr, &Expr)> = keys.iter().map(|(a, b)| (a, b)).collect();
                match kind {
                    JoinKind::Inner => {
                        self.join_rows(l, r, &refs, Shape::of(left)) * self.all(residual)
                    }
                    JoinKind::LeftOuter => {
                        (self.join_rows(l, r, &refs, Shape::of(left)) * self.all(residual)).max(l)
                    }
                    JoinKind::Semi => l * self.semi_share(l, r, &refs),
                    JoinKind::Anti | JoinKind::AntiIn => {
                        l * (1.0 - self.semi_share(l, r, &refs)).max(0.1)
                    }
                }
            }
            Plan::Aggregate { groups, .. } if groups.is_empty() => 1.0,
            Plan::Aggregate { input, groups, .. } => {
                let n = self.rows(input);
                groups
                    .iter()
                    .map(|(_, g)| self.ndv(g, n).unwrap_or(n.sqrt()))
                    .product::<f64>()
                    .min(n)
            }
            Plan::Sort { input, .. }
            | Plan::Project { input, .. }
            | Plan::Map { input, .. }
            | Plan::Shared { input, .. } => self.rows(input),
            Plan::SharedRef { id, .. } => self.shared.get(id).copied().unwrap_or(1.0),
            Plan::Limit { input, count, .. } => self.rows(input).min(*count as f64),
            Plan::OneRow => 1.0,
            Plan::Series { rows, .. } => *rows as f64,
        };
        r.max(1.0)
    }

    /// Rows of `S ⋈ R` on `keys` ((S side, R side) pairs) with `s` and `r`
    /// rows (see the module doc). A unique column of R caps the rows at
    /// `s`; one of S at `r` only when S is one table (`s_shape`): joined
    /// with others, its rows repeat (TPC-H Q5's `n_nationkey` after
    /// customer ⋈ nation is no key).
    pub fn join_rows(&self, s: f64, r: f64, keys: &[(&Expr, &Expr)], s_shape: Shape) -> f64 {
        if keys.is_empty() {
            return s * r;
        }
        let mut est = keys
            .iter()
            .map(|(sk, rk)| {
                let ns = self.key_ndv(sk, s);
                let nr = self.key_ndv(rk, r);
                match (ns, nr) {
                    (Some(a), Some(b)) => s * r / a.max(b),
                    // One side known (an expression on the other: CH's
                    // `ascii(substring(c_state …)) = su_nationkey`):
                    // containment — the unknown side's values are among
                    // the known side's. 10 000 suppliers on 62 nations
                    // then make each customer 161 rows, not one.
                    (None, Some(b)) => s * r / b,
                    (Some(a), None) => s * r / a,
                    // Without statistics: a foreign-key join, as large as
                    // its larger side.
                    (None, None) => s.max(r),
                }
            })
            .fold(f64::INFINITY, f64::min);
        if keys.iter().any(|(_, rk)| self.is_unique(rk)) {
            est = est.min(s);
        }
        if s_shape == Shape::Leaf && keys.iter().any(|(sk, _)| self.is_unique(sk)) {
            est = est.min(r);
        }
        est.max(1.0)
    }

    /// A key's distinct values among `rows`: its statistics, or all rows
    /// for a unique one.
    fn key_ndv(&self, k: &Expr, rows: f64) -> Option<f64> {
        self.ndv(k, rows)
            .or_else(|| self.is_unique(k).then_some(rows))
    }

    /// The share of left rows that have a match on the right.
    fn semi_share(&self, l: f64, r: f64, keys: &[(&Expr, &Expr)]) -> f64 {
        let Some((lk, rk)) = keys.first() else {
            return DEFAULT_SEMI;
        };
        match (self.key_ndv(lk, l), self.key_ndv(rk, r)) {
            (Some(a), Some(b)) => (b / a).min(1.0),
            _ => DEFAULT_SEMI,
        }
    }

    /// Selectivity of a conjunction: independent conditions, except a
    /// lower and an upper bound on one column, which make one range
    /// (`L + U − 1`, PostgreSQL's `clauselist_selectivity`): TPC-H's
    /// one-year date ranges are a seventh of the rows, not a third.
    pub fn all(&self, conjuncts: &[Expr]) -> f64 {
        // Per column: the tightest lower and upper bound's selectivity.
        let mut bounds: HashMap<ColumnId, (f64, f64)> = HashMap::new();
        let mut product = 1.0;
        for c in conjuncts {
            let bound = match c {
                Expr::Cmp(op, a, b) => match (&**a, &**b) {
                    (Expr::Column(x), k) if constant(k).is_some() => Some((*x, *op)),
                    (k, Expr::Column(x)) if constant(k).is_some() => Some((*x, op.flip())),
                    _ => None,
                },
                _ => None,
            };
            let s = self.selectivity(c);
            match bound {
                Some((x, CmpOp::Gt | CmpOp::Ge)) => {
                    let b = bounds.entry(x).or_insert((1.0, 1.0));
                    b.0 = b.0.min(s);
                }
                Some((x, CmpOp::Lt | CmpOp::Le)) => {
                    let b = bounds.entry(x).or_insert((1.0, 1.0));
                    b.1 = b.1.min(s);
                }
                _ => product *= s,
            }
        }
        for (lower, upper) in bounds.into_values() {
            let range = if lower < 1.0 && upper < 1.0 {
                (lower + upper - 1.0).max(DEFAULT_EQ * DEFAULT_RANGE)
            } else {
                lower * upper
            };
            product *= range;
        }
        product
    }

    /// The share of rows for which `e` holds, in [0, 1].
    pub fn selectivity(&self, e: &Expr) -> f64 {
        let s = match e {
            Expr::And(es) => self.all(es),
            Expr::Or(es) => {
                1.0 - es
                    .iter()
                    .map(|x| 1.0 - self.selectivity(x))
                    .product::<f64>()
            }
            Expr::Not(x) => 1.0 - self.selectivity(x),
            Expr::Cmp(op, a, b) => match (&**a, &**b) {
                (x, c) if let Some(l) = constant(c) => self.compare(*op, x, &l),
                (c, x) if let Some(l) = constant(c) => self.compare(op.flip(), x, &l),
                (x, y) => match op {
                    CmpOp::Eq => {
                        let (nx, ny) = (self.ndv(x, f64::MAX), self.ndv(y, f64::MAX));
                        match (nx, ny) {
                            (Some(p), Some(q)) => 1.0 / p.max(q),
                            (Some(p), None) | (None, Some(p)) => 1.0 / p,
                            _ => DEFAULT_EQ,
                        }
                    }
                    CmpOp::Ne => 1.0 - DEFAULT_EQ,
                    _ => DEFAULT_RANGE,
                },
            },
            Expr::InList {
                expr,
                list,
                negated,
            } => {
                let s: f64 = list
                    .iter()
                    .map(|l| self.compare(CmpOp::Eq, expr, l))
                    .sum::<f64>()
                    .min(1.0);
                if *negated { 1.0 - s } else { s }
            }
            Expr::Like {
                expr,
                pattern,
                negated,
            } => {
                let s = self.like(expr, pattern);
                if *negated { 1.0 - s } else { s }
            }
            Expr::IsNull { expr, negated } => {
                let s = self
                    .stats(expr)
                    .map_or(DEFAULT_EQ, |s| s.nulls as f64 / s.rows.max(1) as f64);
                if *negated { 1.0 - s } else { s }
            }
            _ => DEFAULT_OTHER,
        };
        s.clamp(0.0, 1.0)
    }

    /// `x op l`.
    fn compare(&self, op: CmpOp, x: &Expr, l: &Literal) -> f64 {
        let Some(s) = self.stats(x) else {
            return match op {
                CmpOp::Eq => DEFAULT_EQ,
                CmpOp::Ne => 1.0 - DEFAULT_EQ,
                _ => DEFAULT_RANGE,
            };
        };
        let eq = || {
            if let Literal::Str(v) = l
                && let Some(mut d) = self.dictionary(x)
                && !d.any(|w| w == v)
            {
                return 0.0;
            }
            if outside(&s.range, l) {
                return 0.0;
            }
            1.0 / s.distinct.max(1) as f64
        };
        match op {
            CmpOp::Eq => eq(),
            CmpOp::Ne => 1.0 - eq(),
            CmpOp::Lt | CmpOp::Le | CmpOp::Gt | CmpOp::Ge => {
                let below =
                    self.fraction_below(x, &s.range, l, matches!(op, CmpOp::Le | CmpOp::Gt));
                match op {
                    CmpOp::Lt | CmpOp::Le => below,
                    _ => 1.0 - below,
                }
            }
        }
    }

    /// The share of values `< l` (`<= l` with `inclusive`), uniform over
    /// `range` (over the dictionary's values for a dictionary column).
    fn fraction_below(&self, x: &Expr, range: &ValueRange, l: &Literal, inclusive: bool) -> f64 {
        if let Literal::Str(v) = l
            && let Some(d) = self.dictionary(x)
        {
            let (mut below, mut all) = (0usize, 0usize);
            for w in d {
                all += 1;
                if w < v.as_str() || inclusive && w == v.as_str() {
                    below += 1;
                }
            }
            return below as f64 / all.max(1) as f64;
        }
        let (lo, hi, v) = match (range, l) {
            (ValueRange::Numeric { min, max }, l) => match number(l) {
                Some(v) => (*min, *max, v),
                None => return DEFAULT_RANGE,
            },
            (ValueRange::Text { min, max }, Literal::Str(v)) => {
                (text_pos(min), text_pos(max), text_pos(v))
            }
            _ => return DEFAULT_RANGE,
        };
        if hi <= lo {
            return if v > lo || inclusive && v >= lo {
                1.0
            } else {
                0.0
            };
        }
        ((v - lo) / (hi - lo)).clamp(0.0, 1.0)
    }

    fn like(&self, x: &Expr, pattern: &str) -> f64 {
        if let Some(d) = self.dictionary(x) {
            let key = self
                .base_of(x)
                .map(|(t, i)| (t.to_string(), i, pattern.to_string()));
            let memo = || self.like_memo.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(sel) = key.as_ref().and_then(|k| memo().get(k).copied()) {
                return sel;
            }
            // The operators' matcher, compiled once (it takes no `_`).
            let compiled = maestro_execution::Like::new(pattern).ok();
            let (mut hit, mut all) = (0usize, 0usize);
            for w in d {
                all += 1;
                hit += usize::from(match &compiled {
                    Some(m) => m.matches(w),
                    None => like(w.as_bytes(), pattern.as_bytes()),
                });
            }
            let sel = hit as f64 / all.max(1) as f64;
            if let Some(k) = key {
                memo().insert(k, sel);
            }
            return sel;
        }
        let prefix: String = pattern
            .chars()
            .take_while(|c| !matches!(c, '%' | '_'))
            .collect();
        if prefix.len() == pattern.len() {
            return self.compare(CmpOp::Eq, x, &Literal::Str(prefix));
        }
        let Some(s) = self.stats(x) else {
            return DEFAULT_LIKE;
        };
        if prefix.is_empty() {
            return DEFAULT_LIKE;
        }
        // [prefix, prefix + 1): everything that starts with it.
        let mut upper = prefix.clone().into_bytes();
        if let Some(b) = upper.last_mut() {
            *b = b.saturating_add(1);
        }
        let upper = String::from_utf8_lossy(&upper).into_owned();
        let lo = self.fraction_below(x, &s.range, &Literal::Str(prefix), false);
        let hi = self.fraction_below(x, &s.range, &Literal::Str(upper), false);
        (hi - lo).max(1.0 / s.distinct.max(1) as f64)
    }
}

/// A literal as a position in a numeric range (dates as days).
fn number(l: &Literal) -> Option<f64> {
    match l {
        Literal::Num { value, scale } => Some(*value as f64 / 10f64.powi(i32::from(*scale))),
        Literal::Date(d) => Some(f64::from(d.0)),
        _ => None,
    }
}

/// A string's first 8 bytes as a number: byte order preserved.
fn text_pos(s: &str) -> f64 {
    let mut b = [0u8; 8];
    for (i, x) in s.bytes().take(8).enumerate() {
        b[i] = x;
    }
    u64::from_be_bytes(b) as f64
}

/// Whether `l` lies outside `range` (no row can equal it).
fn outside(range: &ValueRange, l: &Literal) -> bool {
    match (range, l) {
        (ValueRange::Empty, _) => true,
        (ValueRange::Numeric { min, max }, l) => number(l).is_some_and(|v| v < *min || v > *max),
        (ValueRange::Text { min, max }, Literal::Str(v)) => v < min || v > max,
        _ => false,
    }
}

/// `e`'s value if it is a constant: a literal, or arithmetic over constants
/// the binder left unfolded because a parameter is among them (`$1 + 1`:
/// `bind/expr.rs` `Folding`), estimated as the value it has.
fn constant(e: &Expr) -> Option<Cow<'_, Literal>> {
    match e {
        Expr::Lit(l) => Some(Cow::Borrowed(l)),
        Expr::Arith(..) => crate::bind::constant_arithmetic(e).map(Cow::Owned),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use maestro_storage::column::{DictColumn, Table};

    use crate::catalog::{TableDef, table_def};

    struct One(Table);

    impl Catalog for One {
        fn table(&self, name: &str) -> Option<TableDef> {
            (name == "t").then(|| table_def(&self.0))
        }
        fn data(&self, name: &str) -> Option<&Table> {
            (name == "t").then_some(&self.0)
        }
        fn table_names(&self) -> Vec<String> {
            vec!["t".into()]
        }
    }

    fn catalog() -> One {
        let n = 1000;
        One(Table::new(
            "t",
            [
                ("k", Column::Int64((0..n).collect())),
                (
                    "q",
                    Column::Int32((0..n).map(|i| 1 + (i as i32 % 50)).collect()),
                ),
                (
                    "s",
                    Column::Str(DictColumn::from_strs(
                        (0..n).map(|i| ["AIR", "MAIL", "RAIL", "SHIP", "TRUCK"][i as usize % 5]),
                    )),
                ),
            ],
        )
        .unwrap())
    }

    fn scan(filter: Vec<Expr>) -> Plan {
        Plan::Scan {
            table: "t".into(),
            alias: "t".into(),
            columns: vec![(ColumnId(0), 0), (ColumnId(1), 1), (ColumnId(2), 2)],
            filter,
            rows: 1000,
            index: None,
        }
    }

    fn col(i: usize) -> Box<Expr> {
        Box::new(Expr::Column(ColumnId(i)))
    }

    fn lit(v: i64) -> Box<Expr> {
        Box::new(Expr::Lit(Literal::int(v)))
    }

    fn s(x: &str) -> Literal {
        Literal::Str(x.into())
    }

    #[test]
    fn filters_are_estimated_from_the_statistics() {
        let c = catalog();
        let p = scan(Vec::new());
        let e = Estimator::new(&p, &c);
        let near = |a: f64, b: f64| (a - b).abs() < 0.02 * b.max(1.0);
        let sel = |x: Expr| e.selectivity(&x);
        assert!(near(sel(Expr::Cmp(CmpOp::Eq, col(1), lit(7))), 1.0 / 50.0));
        assert_eq!(
            sel(Expr::Cmp(CmpOp::Eq, col(1), lit(99))),
            0.0,
            "beyond max"
        );
        assert!(near(
            sel(Expr::Cmp(CmpOp::Lt, col(1), lit(25))),
            24.0 / 49.0
        ));
        assert!(near(sel(Expr::Cmp(CmpOp::Gt, lit(250), col(0))), 0.25));
        let shipmode = |list: Vec<Literal>| Expr::InList {
            expr: col(2),
            list,
            negated: false,
        };
        assert_eq!(sel(shipmode(vec![s("AIR"), s("RAIL")])), 0.4);
        assert_eq!(sel(shipmode(vec![s("BOAT")])), 0.0, "not in the dictionary");
        let like = |p: &str| Expr::Like {
            expr: col(2),
            pattern: p.into(),
            negated: false,
        };
        assert_eq!(sel(like("%AIL")), 0.4);
        assert_eq!(sel(like("T%")), 0.2);
        // Each pattern matched against the dictionary once, then memoized;
        // `_` (which the operators' matcher lacks) row by row, also right.
        assert_eq!(sel(like("%AIL")), 0.4);
        assert_eq!(e.like_memo.lock().unwrap().len(), 2);
        assert_eq!(sel(like("_AIL")), 0.4);
        assert_eq!(e.like_memo.lock().unwrap().len(), 3);
        // AND multiplies, OR adds what the first leaves.
        let and = Expr::And(vec![like("%AIL"), Expr::Cmp(CmpOp::Lt, col(0), lit(500))]);
        assert!(near(sel(and.clone()), 0.2));
        let or = Expr::Or(vec![like("%AIL"), like("AIR")]);
        assert!(near(sel(or), 1.0 - 0.6 * 0.8));
        let is_null = Expr::IsNull {
            expr: col(0),
            negated: false,
        };
        assert_eq!(sel(is_null), 0.0, "stored columns have no NULLs");
        assert!(near(e.rows(&scan(vec![and])), 200.0));
        // Two bounds on one column: one range, not two independent halves.
        let range = [
            Expr::Cmp(CmpOp::Ge, col(0), lit(100)),
            Expr::Cmp(CmpOp::Lt, col(0), lit(200)),
        ];
        assert!(near(e.all(&range), 0.1), "{}", e.all(&range));
        // Arithmetic over constants the binder left unfolded (a parameter
        // among them) is estimated as its value.
        let plus =
            |a: i64, b: i64| Box::new(Expr::Arith(crate::plan::ArithOp::Add, lit(a), lit(b)));
        assert!(near(
            sel(Expr::Cmp(CmpOp::Eq, col(1), plus(6, 1))),
            1.0 / 50.0
        ));
        assert_eq!(sel(Expr::Cmp(CmpOp::Eq, plus(98, 1), col(1))), 0.0);
        let range = [
            Expr::Cmp(CmpOp::Ge, col(0), plus(99, 1)),
            Expr::Cmp(CmpOp::Lt, col(0), lit(200)),
        ];
        assert!(near(e.all(&range), 0.1), "{}", e.all(&range));
    }

    #[test]
    fn joins_divide_by_the_larger_distinct_count() {
        let c = catalog();
        let e = Estimator::new(&scan(Vec::new()), &c);
        let (k, q) = (Expr::Column(ColumnId(0)), Expr::Column(ColumnId(1)));
        // 1000 rows with 1000 keys ⋈ 1000 rows with 50 values: 1000.
        assert!((e.join_rows(1000.0, 1000.0, &[(&k, &q)], Shape::Leaf) - 1000.0).abs() < 30.0);
        // A side filtered to 10 rows: at most 10 distinct keys there.
        assert!((e.join_rows(10.0, 1000.0, &[(&q, &q)], Shape::Leaf) - 200.0).abs() < 5.0);
        // Several keys: the most selective one.
        let two = e.join_rows(1000.0, 1000.0, &[(&q, &q), (&k, &k)], Shape::Leaf);
        assert!((two - 1000.0).abs() < 30.0, "{two}");
    }
}
