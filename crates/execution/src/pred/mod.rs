//! Predicates over positions: comparisons of a column with a literal (numbers,
//! decimals, dates, dictionary strings as code ranges, heap strings), `IN`
//! lists, `LIKE` (dictionary: code range or per-code mask; heap: substring
//! search), column-to-column comparisons, `AND`/`OR`/`NOT`, and a closure for
//! anything else.
//!
//! Construction converts literals to the column's units once (a decimal literal
//! to the column's scale, rounding the bound the right way when it has more
//! digits; a string to dictionary codes), so evaluation compares plain integers.
//! Evaluation is vector-at-a-time: [`Pred::refine`] keeps the candidate
//! positions that satisfy the predicate, in place and in order.

use std::fmt;
use std::sync::Arc;

use maestro_storage::column::{Date, Decimal};

use crate::col::{Col, Data};
use crate::error::ExecError;
use crate::like::{Like, LikeShape};
use kernels::{
    narrow_bounds, refine_by, refine_in, refine_parts, refine_range, remove_sorted,
    remove_subsequence,
};

mod kernels;
#[cfg(test)]
mod tests;

/// A comparison operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CmpOp {
    fn holds(self, o: std::cmp::Ordering) -> bool {
        use std::cmp::Ordering::*;
        match self {
            CmpOp::Eq => o == Equal,
            CmpOp::Ne => o != Equal,
            CmpOp::Lt => o == Less,
            CmpOp::Le => o != Greater,
            CmpOp::Gt => o == Greater,
            CmpOp::Ge => o != Less,
        }
    }
}

/// A literal to compare a column with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lit<'s> {
    /// An integer (scale 0); compares with integer and decimal columns.
    Int(i64),
    /// A decimal; compares with integer and decimal columns.
    Dec(Decimal),
    /// A date; compares with date columns.
    Date(Date),
    /// A string; compares with dictionary and heap columns.
    Str(&'s str),
}

impl From<i64> for Lit<'_> {
    fn from(v: i64) -> Self {
        Lit::Int(v)
    }
}
impl From<i32> for Lit<'_> {
    fn from(v: i32) -> Self {
        Lit::Int(i64::from(v))
    }
}
impl From<Decimal> for Lit<'_> {
    fn from(v: Decimal) -> Self {
        Lit::Dec(v)
    }
}
impl From<Date> for Lit<'_> {
    fn from(v: Date) -> Self {
        Lit::Date(v)
    }
}
impl<'s> From<&'s str> for Lit<'s> {
    fn from(v: &'s str) -> Self {
        Lit::Str(v)
    }
}

/// A closure predicate on a position.
pub type PosFn<'a> = dyn Fn(u32) -> bool + Send + Sync + 'a;

/// A predicate on the positions of its columns. Build it with the constructors;
/// they check types, so evaluation cannot fail.
#[derive(Clone)]
pub struct Pred<'a>(Node<'a>);

#[derive(Clone)]
enum Node<'a> {
    /// `lo <= value <= hi` in the column's units (codes for dictionaries).
    Range {
        col: Col<'a>,
        lo: i128,
        hi: i128,
    },
    /// Value in a sorted set (column units).
    InSet {
        col: Col<'a>,
        values: Vec<i128>,
    },
    /// Dictionary code whose mask entry is true.
    CodeMask {
        col: Col<'a>,
        mask: Arc<[bool]>,
    },
    HeapLike {
        col: Col<'a>,
        like: Like,
    },
    HeapCmp {
        col: Col<'a>,
        op: CmpOp,
        value: String,
    },
    Cols {
        left: Col<'a>,
        op: CmpOp,
        right: Col<'a>,
    },
    /// Position not in `ids` (ascending): a table's rows minus its deleted
    /// ones, tested on the positions instead of read through live row ids.
    NotIn {
        ids: &'a [u32],
    },
    /// `expr op 0` for an operator expression, evaluated on the candidates.
    ExprSign {
        expr: crate::expr::Expr<'a>,
        op: CmpOp,
    },
    Not(Box<Pred<'a>>),
    And(Vec<Pred<'a>>),
    Or(Vec<Pred<'a>>),
    Func(Arc<PosFn<'a>>),
}

impl fmt::Debug for Pred<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Node::Range { lo, hi, .. } => write!(f, "Range({lo}..={hi})"),
            Node::InSet { values, .. } => write!(f, "In({values:?})"),
            Node::CodeMask { mask, .. } => {
                write!(
                    f,
                    "Codes({} of {})",
                    mask.iter().filter(|&&m| m).count(),
                    mask.len()
                )
            }
            Node::HeapLike { like, .. } => write!(f, "Like({:?})", like.pattern()),
            Node::HeapCmp { op, value, .. } => write!(f, "Str({op:?} {value:?})"),
            Node::Cols { op, .. } => write!(f, "Cols({op:?})"),
            Node::NotIn { ids } => write!(f, "NotIn({} ids)", ids.len()),
            Node::ExprSign { expr, op } => write!(f, "Expr({expr:?} {op:?} 0)"),
            Node::Not(p) => write!(f, "Not({p:?})"),
            Node::And(ps) => write!(f, "And({ps:?})"),
            Node::Or(ps) => write!(f, "Or({ps:?})"),
            Node::Func(_) => write!(f, "Func"),
        }
    }
}

const EMPTY: (i128, i128) = (1, 0);

impl<'a> Pred<'a> {
    /// `col op lit`.
    pub fn cmp<'s>(
        col: Col<'a>,
        op: CmpOp,
        lit: impl Into<Lit<'s>>,
    ) -> Result<Pred<'a>, ExecError> {
        let lit = lit.into();
        let mismatch = |expected| ExecError::Type {
            context: format!("comparison {op:?} {lit:?}"),
            expected,
            found: col.data().type_name(),
        };
        match (col.data(), lit) {
            (Data::Dict(d), Lit::Str(s)) => {
                let max = i128::from(u32::MAX);
                let (lo, hi) = match op {
                    CmpOp::Eq => d.code_of(s).map_or(EMPTY, |c| (c.into(), c.into())),
                    CmpOp::Ne => return Ok(Pred::not(Pred::cmp(col, CmpOp::Eq, lit)?)),
                    CmpOp::Lt => (0, i128::from(d.lower_bound(s)) - 1),
                    CmpOp::Le => (0, i128::from(d.upper_bound(s)) - 1),
                    CmpOp::Gt => (d.upper_bound(s).into(), max),
                    CmpOp::Ge => (d.lower_bound(s).into(), max),
                };
                Ok(Pred(Node::Range { col, lo, hi }))
            }
            (Data::Heap(_), Lit::Str(s)) => Ok(Pred(Node::HeapCmp {
                col,
                op,
                value: s.to_string(),
            })),
            (Data::Dict(_) | Data::Heap(_), _) => Err(mismatch("a string literal")),
            (_, Lit::Str(_)) => Err(mismatch("a string column")),
            (Data::Date(_), Lit::Date(d)) => Ok(numeric_cmp(col, op, i64::from(d.0), 0)),
            (Data::Date(_), _) => Err(mismatch("a date literal")),
            (_, Lit::Date(_)) => Err(mismatch("a date column")),
            (_, Lit::Int(v)) => Ok(numeric_cmp(col, op, v, 0)),
            (_, Lit::Dec(d)) => Ok(numeric_cmp(col, op, d.value, d.scale)),
        }
    }

    /// `lo <= col <= hi` (SQL `BETWEEN`).
    pub fn between<'s>(
        col: Col<'a>,
        lo: impl Into<Lit<'s>>,
        hi: impl Into<Lit<'s>>,
    ) -> Result<Pred<'a>, ExecError> {
        let ge = Pred::cmp(col, CmpOp::Ge, lo)?;
        let le = Pred::cmp(col, CmpOp::Le, hi)?;
        Ok(match (ge.0, le.0) {
            (Node::Range { lo, .. }, Node::Range { hi, .. }) => Pred(Node::Range { col, lo, hi }),
            (a, b) => Pred::and(vec![Pred(a), Pred(b)]),
        })
    }

    /// `col IN (values...)`.
    pub fn is_in<'s, L: Into<Lit<'s>>>(
        col: Col<'a>,
        values: impl IntoIterator<Item = L>,
    ) -> Result<Pred<'a>, ExecError> {
        let lits: Vec<Lit<'s>> = values.into_iter().map(Into::into).collect();
        match col.data() {
            Data::Dict(d) => {
                let mut mask = vec![false; d.cardinality()];
                for l in &lits {
                    let Lit::Str(s) = l else {
                        return Err(ExecError::Type {
                            context: format!("IN list value {l:?}"),
                            expected: "a string literal",
                            found: col.data().type_name(),
                        });
                    };
                    if let Some(c) = d.code_of(s) {
                        mask[c as usize] = true;
                    }
                }
                Ok(Pred(Node::CodeMask {
                    col,
                    mask: mask.into(),
                }))
            }
            Data::Heap(_) => {
                let eqs = lits
                    .into_iter()
                    .map(|l| Pred::cmp(col, CmpOp::Eq, l))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(Pred::or(eqs))
            }
            _ => {
                let mut values = Vec::with_capacity(lits.len());
                for l in lits {
                    match Pred::cmp(col, CmpOp::Eq, l)?.0 {
                        Node::Range { lo, hi, .. } if lo == hi => values.push(lo),
                        _ => {} // not representable at the column's scale: never equal
                    }
                }
                values.sort_unstable();
                values.dedup();
                Ok(Pred(Node::InSet { col, values }))
            }
        }
    }

    /// `col LIKE pattern` (`%` wildcards).
    pub fn like(col: Col<'a>, pattern: &str) -> Result<Pred<'a>, ExecError> {
        let like = Like::new(pattern)?;
        match col.data() {
            Data::Dict(d) => Ok(match like.shape() {
                LikeShape::Exact(s) => Pred::cmp(col, CmpOp::Eq, s)?,
                LikeShape::Prefix(p) => {
                    let r = d.prefix_range(p);
                    Pred(Node::Range {
                        col,
                        lo: r.start.into(),
                        hi: i128::from(r.end) - 1,
                    })
                }
                LikeShape::General => Pred(Node::CodeMask {
                    col,
                    mask: d.matching_codes(|s| like.matches(s)).into(),
                }),
            }),
            Data::Heap(_) => Ok(Pred(Node::HeapLike { col, like })),
            other => Err(ExecError::Type {
                context: format!("LIKE {pattern:?}"),
                expected: "a string column",
                found: other.type_name(),
            }),
        }
    }

    /// `col NOT LIKE pattern`.
    pub fn not_like(col: Col<'a>, pattern: &str) -> Result<Pred<'a>, ExecError> {
        Ok(Pred::not(Pred::like(col, pattern)?))
    }

    /// `left op right` for two numeric columns of the same scale (or two dates).
    pub fn cols(left: Col<'a>, op: CmpOp, right: Col<'a>) -> Result<Pred<'a>, ExecError> {
        left.expect_narrow("column comparison")?;
        right.expect_narrow("column comparison")?;
        let is_date = |c: &Col| matches!(c.data(), Data::Date(_));
        if left.scale() != right.scale() || is_date(&left) != is_date(&right) {
            return Err(ExecError::Type {
                context: format!("column comparison {op:?}"),
                expected: "operands of the same type and scale",
                found: format!(
                    "{} and {}",
                    left.data().type_name(),
                    right.data().type_name()
                ),
            });
        }
        Ok(Pred(Node::Cols { left, op, right }))
    }

    pub fn and(preds: Vec<Pred<'a>>) -> Pred<'a> {
        Pred(Node::And(preds))
    }

    pub fn or(preds: Vec<Pred<'a>>) -> Pred<'a> {
        Pred(Node::Or(preds))
    }

    #[allow(clippy::should_implement_trait)]
    pub fn not(pred: Pred<'a>) -> Pred<'a> {
        Pred(Node::Not(Box::new(pred)))
    }

    /// Positions not in `ids`, which must be ascending (a table's deleted
    /// rows, when the positions are its row ids). Panics otherwise.
    pub fn not_in_sorted(ids: &'a [u32]) -> Pred<'a> {
        assert!(
            ids.is_sorted(),
            "not_in_sorted takes ascending ids, got {:?}…",
            &ids[..ids.len().min(8)]
        );
        Pred(Node::NotIn { ids })
    }

    /// Any condition on a position (e.g. on several columns at once).
    /// `expr op 0`, `expr` an operator expression over numbers (an exact
    /// comparison's difference, `x % 4`; its types checked here):
    /// evaluated on the candidates that reach it, batch by batch, not on
    /// every position up front.
    pub fn expr_vs_zero(expr: crate::expr::Expr<'a>, op: CmpOp) -> Result<Pred<'a>, ExecError> {
        expr.scale()?;
        Ok(Pred(Node::ExprSign { expr, op }))
    }

    pub fn func(f: impl Fn(u32) -> bool + Send + Sync + 'a) -> Pred<'a> {
        Pred(Node::Func(Arc::new(f)))
    }

    /// Keeps the candidate positions that satisfy the predicate, in order.
    /// Candidates must be distinct.
    pub fn refine(&self, cand: &mut Vec<u32>) {
        self.refine_ordered(cand, CandOrder::Unknown);
    }

    /// [`Self::refine`] knowing the candidates' order (every node keeps it).
    fn refine_ordered(&self, cand: &mut Vec<u32>, order: CandOrder) {
        if cand.is_empty() {
            return;
        }
        match &self.0 {
            // Typed parts where the column has them, else one value at a time.
            Node::Range { col, lo, hi } if col.tail().is_some() => {
                let (lo, hi) = (*lo, *hi);
                let in_range = match narrow_bounds(lo, hi) {
                    Some((lo, hi)) => refine_parts(col, cand, order, |x| (x >= lo) & (x <= hi)),
                    None if col.is_narrow_numeric() => {
                        cand.clear();
                        true
                    }
                    None => false,
                };
                if !in_range {
                    cand.retain(|&p| col.i128_at(p).is_some_and(|x| lo <= x && x <= hi));
                }
            }
            Node::InSet { col, values } if col.tail().is_some() => {
                let has = |x: i128| values.binary_search(&x).is_ok();
                if !refine_parts(col, cand, order, |x| has(x.into())) {
                    cand.retain(|&p| col.i128_at(p).is_some_and(has));
                }
            }
            Node::CodeMask { col, mask } if col.tail().is_some() => {
                if !refine_parts(col, cand, order, |c| mask[c as usize]) {
                    unreachable!("code masks are built on dictionary columns");
                }
            }
            Node::Range { col, lo, hi } => refine_range(col, *lo, *hi, cand),
            Node::InSet { col, values } => refine_in(col, values, cand),
            Node::CodeMask { col, mask } => {
                let Data::Dict(d) = col.data() else {
                    unreachable!("code masks are built on dictionary columns")
                };
                refine_by(d.codes(), col.rows(), cand, |c| mask[c as usize]);
            }
            Node::HeapLike { col, like } => {
                let text = |p| {
                    col.str_at(p)
                        .expect("heap predicates are built on heap columns")
                };
                cand.retain(|&p| like.matches(text(p)));
            }
            Node::HeapCmp { col, op, value } => {
                let text = |p| {
                    col.str_at(p)
                        .expect("heap predicates are built on heap columns")
                };
                cand.retain(|&p| op.holds(text(p).cmp(value.as_str())));
            }
            Node::Cols { left, op, right } => {
                let (mut a, mut b) = (
                    Vec::with_capacity(cand.len()),
                    Vec::with_capacity(cand.len()),
                );
                left.gather_i64(cand, &mut a);
                right.gather_i64(cand, &mut b);
                let mut k = 0;
                for j in 0..cand.len() {
                    cand[k] = cand[j];
                    k += usize::from(op.holds(a[j].cmp(&b[j])));
                }
                cand.truncate(k);
            }
            Node::NotIn { ids } => remove_sorted(cand, ids, order),
            Node::ExprSign { expr, op } => {
                let mut values = Vec::with_capacity(cand.len());
                expr.eval(cand, &mut values);
                let mut k = 0;
                for j in 0..cand.len() {
                    cand[k] = cand[j];
                    k += usize::from(op.holds(values[j].cmp(&0)));
                }
                cand.truncate(k);
            }
            Node::Not(p) => {
                let mut matched = cand.clone();
                p.refine_ordered(&mut matched, order);
                remove_subsequence(cand, &matched);
            }
            Node::And(ps) => {
                for p in ps {
                    p.refine_ordered(cand, order);
                    if cand.is_empty() {
                        break;
                    }
                }
            }
            Node::Or(ps) => {
                // Each branch sees only what earlier branches left unmatched;
                // what no branch matched is removed at the end.
                let mut rest = cand.clone();
                for p in ps {
                    let mut matched = rest.clone();
                    p.refine_ordered(&mut matched, order);
                    remove_subsequence(&mut rest, &matched);
                    if rest.is_empty() {
                        break;
                    }
                }
                remove_subsequence(cand, &rest);
            }
            Node::Func(f) => cand.retain(|&p| f(p)),
        }
    }

    /// The positions in `start..end` that satisfy the predicate, into `out`.
    pub fn select_range(&self, start: u32, end: u32, out: &mut Vec<u32>) {
        out.clear();
        out.extend(start..end);
        self.refine_ordered(out, CandOrder::Ascending);
    }
}

/// The order of a refinement's candidates, known where they are made (a
/// range) and kept by every node: kernels that split positions by table
/// part or merge them with a sorted list need them ascending.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CandOrder {
    /// Strictly ascending.
    Ascending,
    /// Not known: a kernel that needs ascending candidates checks.
    Unknown,
}

impl CandOrder {
    /// Whether `cand` is ascending, checking only when not known.
    pub(crate) fn ascending(self, cand: &[u32]) -> bool {
        match self {
            CandOrder::Ascending => true,
            CandOrder::Unknown => cand.is_sorted(),
        }
    }
}

/// `col op v / 10^scale` as a range over the column's units.
fn numeric_cmp<'a>(col: Col<'a>, op: CmpOp, v: i64, scale: u8) -> Pred<'a> {
    let (floor, ceil) = to_units(v, scale, col.scale());
    let (min, max) = (i128::MIN, i128::MAX);
    let (lo, hi) = match op {
        CmpOp::Eq if floor == ceil => (floor, floor),
        CmpOp::Eq => EMPTY,
        CmpOp::Ne if floor == ceil => {
            return Pred::not(Pred(Node::Range {
                col,
                lo: floor,
                hi: floor,
            }));
        }
        CmpOp::Ne => (min, max),
        CmpOp::Lt => (min, ceil - 1),
        CmpOp::Le => (min, floor),
        CmpOp::Gt => (floor + 1, max),
        CmpOp::Ge => (ceil, max),
    };
    Pred(Node::Range { col, lo, hi })
}

/// `v / 10^from` in units of `10^-to`, rounded down and up.
fn to_units(v: i64, from: u8, to: u8) -> (i128, i128) {
    let v = i128::from(v);
    if to >= from {
        let x = v * 10i128.pow(u32::from(to - from));
        (x, x)
    } else {
        let d = 10i128.pow(u32::from(from - to));
        (v.div_euclid(d), -(-v).div_euclid(d))
    }
}
