//! GROUP BY on `maestro_execution::aggregate`. Keys go in as integers:
//! numbers and dates as themselves, dictionary strings as their codes, other
//! strings interned; more than `MAX_KEYS` keys are interned together into one
//! composite code (sequential passes, a note for later: the operator could
//! take wider keys). Keys the operator evaluates as numbers come back from
//! its key columns; otherwise a hidden `MIN(position)` per group gives a
//! representative input position, at which every key expression is read back
//! — so strings come back as strings, whatever encoded them. A filter right
//! below the aggregate is fused into it when the operator evaluates every
//! key and argument itself ([`Lowering::aggregate_node`]).

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::Arc;

use maestro_execution::{
    Agg, Col, Data, Expr as ExecExpr, Input, MAX_KEYS, Pred, aggregate, project,
};
use maestro_storage::column::FxHasher;

use super::compile::{columnar, eval_vector, to_exec_expr, to_pred};
use super::eval::{Fault, compare, exact_ratio};
use super::vector::{Encoding, Relation, Scalar, Vector};
use super::{Lowering, narrowed, without_nulls};
use crate::error::{Result, SqlError};
use crate::plan::{AggCall, AggFunc, ColumnId, Expr, Plan};
use crate::types::{SqlType, from_ordered_bits, ordered_bits};

impl<'a> Lowering<'a> {
    /// An aggregate node. A filter right below it (a scan's pushed filter,
    /// or a Filter node) is fused into the operator when every key and
    /// argument is one the operator evaluates itself ([`Self::fusable`]):
    /// the predicate then runs per vector inside the aggregation's tasks
    /// and no row-id vector of the selected rows is materialized (TPC-H
    /// Q1's filter keeps ~98 % of lineitem: that vector was a full copy of
    /// the table's ids, and every column was then read through it).
    pub(super) fn aggregate_node(
        &self,
        input: &'a Plan,
        groups: &[(ColumnId, Expr)],
        aggs: &[(ColumnId, AggCall)],
        dependent: &[bool],
    ) -> Result<Relation<'a>> {
        let mark = self.mark();
        // A scan's filter also drops the rows its table's delta deleted.
        let (rel, filter, deleted) = match input {
            Plan::Scan {
                table,
                columns,
                filter,
                index: None,
                ..
            } if !filter.is_empty() => {
                let (rel, deleted) = self.scan_unfiltered(table, columns, true)?;
                (rel, filter.as_slice(), deleted)
            }
            Plan::Filter {
                input: below,
                predicate,
            } => (self.node(below)?, predicate.as_slice(), &[][..]),
            _ => {
                let rel = self.node(input)?;
                return Ok(self.aggregate(&rel, groups, aggs, dependent, &[], &[])?.0);
            }
        };
        if !self.fusable(&rel, groups, aggs, dependent) {
            let rel = self.filter_live(rel, filter, deleted)?;
            self.measured(input, mark, rel.len);
            return Ok(self.aggregate(&rel, groups, aggs, dependent, &[], &[])?.0);
        }
        // The input's stats: its own time (the unfiltered scan), the rows
        // the fused filter selected once the aggregate has counted them.
        self.measured(input, mark, rel.len);
        let (out, selected) = self.aggregate(&rel, groups, aggs, dependent, filter, deleted)?;
        self.recount(input, selected);
        Ok(out)
    }

    /// Whether the aggregate can read `rel` through a fused filter: every
    /// hashed key and every argument is evaluated by the operator itself
    /// (so only at the selected positions: nothing is computed, nor can
    /// fail, at a row the filter drops) — numeric expressions and
    /// dictionary-string columns, at most [`MAX_KEYS`] keys.
    fn fusable(
        &self,
        rel: &Relation<'a>,
        groups: &[(ColumnId, Expr)],
        aggs: &[(ColumnId, AggCall)],
        dependent: &[bool],
    ) -> bool {
        let hashed: Vec<&Expr> = groups
            .iter()
            .zip(dependent)
            .filter(|(_, d)| !**d)
            .map(|((_, g), _)| g)
            .collect();
        let key_ok = |g: &Expr| match g {
            Expr::Column(c) if self.ty(g) == SqlType::Str => {
                rel.get(*c).is_some_and(|v| v.is_dict())
            }
            _ => self.ty(g) != SqlType::Str && to_exec_expr(g, rel).is_some(),
        };
        hashed.len() <= MAX_KEYS
            && hashed.into_iter().all(key_ok)
            && aggs.iter().all(|(_, a)| match &a.arg {
                None => true,
                Some(x) => to_exec_expr(x, rel).is_some(),
            })
    }

    /// GROUP BY over `rel`'s positions, those satisfying `filter` and not
    /// in `deleted` if the filter is not empty (fused: only when
    /// [`Self::fusable`]); also returns the
    /// number of positions aggregated.
    pub(super) fn aggregate(
        &self,
        rel: &Relation<'a>,
        all_groups: &[(ColumnId, Expr)],
        aggs: &[(ColumnId, AggCall)],
        dependent: &[bool],
        filter: &[Expr],
        deleted: &'a [u32],
    ) -> Result<(Relation<'a>, usize)> {
        // Keys functionally dependent on another are not hashed, only read
        // back at the representative rows.
        let groups: Vec<(ColumnId, Expr)> = all_groups
            .iter()
            .zip(dependent)
            .filter(|(_, d)| !**d)
            .map(|(g, _)| g.clone())
            .collect();
        let groups = groups.as_slice();
        // Phase 1: what has to be materialized (owned) before the operator's
        // expressions can borrow it.
        let mut key_owned: Vec<Option<Vector>> = Vec::new();
        for (_, g) in groups {
            key_owned.push(self.key_vector(g, rel)?);
        }
        let mut arg_owned: Vec<Option<Vector>> = Vec::new();
        // For SUM/AVG/MIN/MAX over NULLs: a 0/1 not-NULL indicator, whose
        // sum per group says how many values the aggregate saw (for
        // COUNT(DISTINCT) over NULLs the inverse: a 0/1 NULL indicator,
        // `distinct_codes`).
        let mut seen_owned: Vec<Option<Vector>> = Vec::new();
        // Which aggregates run on doubles' bits (`double_argument`).
        let on_doubles: Vec<bool> = aggs
            .iter()
            .map(|(_, a)| {
                a.arg
                    .as_ref()
                    .is_some_and(|x| is_double_sum_or_extreme(a.func, self.ty(x)))
            })
            .collect();
        for ((_, a), &double) in aggs.iter().zip(&on_doubles) {
            seen_owned.push(None);
            arg_owned.push(match &a.arg {
                // COUNT(x) counts the rows where x is not NULL: the sum of
                // a 0/1 indicator when x has NULLs (outer joins).
                // Operator-evaluated: never NULL, so COUNT(*).
                Some(x) if a.func == AggFunc::Count && to_exec_expr(x, rel).is_some() => None,
                Some(x) if a.func == AggFunc::Count => {
                    let v = eval_vector(self.ctx, x, self.ty(x), rel)?;
                    match &v {
                        _ if v.col().is_some() => None,
                        Vector::Masked { nulls, .. } => {
                            Some(Vector::Int(nulls.iter().map(|&n| i64::from(!n)).collect()))
                        }
                        _ => Some(Vector::Int(
                            (0..rel.len)
                                .map(|p| i64::from(v.value_at(p) != Scalar::Null))
                                .collect(),
                        )),
                    }
                }
                // A stored double column without NULLs is read in place
                // (`stored_double_arg`).
                Some(x) if double && stored_double_arg(a.func, x, rel).is_some() => None,
                // Doubles: SUM and AVG add their bits as doubles, MIN and
                // MAX compare their ordered bits; NULLs are counted out.
                Some(x) if double => {
                    let v = eval_vector(self.ctx, x, SqlType::Double, rel)?;
                    let (bits, seen) = double_argument(a.func, &v, rel.len);
                    let last = seen_owned.len() - 1;
                    seen_owned[last] = Some(Vector::Int(seen));
                    Some(Vector::Int(bits))
                }
                Some(x) if to_exec_expr(x, rel).is_none() => 'arg: {
                    let mut v = eval_vector(self.ctx, x, self.ty(x), rel)?;
                    if v.col().is_none() && (0..rel.len).any(|p| v.value_at(p) == Scalar::Null) {
                        if a.func == AggFunc::CountDistinct {
                            let vals = (0..rel.len).map(|p| v.value_at(p)).collect();
                            let (codes, nulls) = distinct_codes(vals).map_err(|what| {
                                SqlError::unsupported(format!(
                                    "COUNT(DISTINCT {}) of {what}",
                                    self.plan.show(x)
                                ))
                            })?;
                            let last = seen_owned.len() - 1;
                            seen_owned[last] = Some(Vector::Int(nulls));
                            break 'arg Some(Vector::Int(codes));
                        }
                        // NULLs are skipped: replaced by a value that
                        // changes nothing (0 for SUM and AVG, the largest
                        // value for MIN, the smallest for MAX), counted out.
                        let vals: Vec<Scalar> = (0..rel.len).map(|p| v.value_at(p)).collect();
                        let present = vals.iter().filter(|s| **s != Scalar::Null);
                        let pick = |o: std::cmp::Ordering| {
                            present.clone().fold(None::<&Scalar>, |m, s| match m {
                                Some(m) if compare(s, m) != Some(o) => Some(m),
                                _ => Some(s),
                            })
                        };
                        let fill = match a.func {
                            AggFunc::Min => pick(std::cmp::Ordering::Greater).cloned(),
                            AggFunc::Max => pick(std::cmp::Ordering::Less).cloned(),
                            _ => None,
                        }
                        .unwrap_or(Scalar::Num { value: 0, scale: 0 });
                        let last = seen_owned.len() - 1;
                        seen_owned[last] = Some(Vector::Int(
                            vals.iter().map(|s| i64::from(*s != Scalar::Null)).collect(),
                        ));
                        v = Vector::Values(
                            vals.into_iter()
                                .map(|s| if s == Scalar::Null { fill.clone() } else { s })
                                .collect(),
                        );
                        v = columnar(v)?;
                    }
                    if v.col().is_none()
                        && (self.ty(x).is_exact() || a.func == AggFunc::CountDistinct)
                    {
                        // Exact values computed row by row (a CASE whose
                        // condition the operators do not express); the
                        // doubles and booleans COUNT(DISTINCT) counts, as
                        // codes of their order.
                        v = columnar(v)?;
                    }
                    let v = narrowed(v);
                    let numeric = v.col().is_some_and(|c| c.is_narrow_numeric());
                    if !numeric {
                        return Err(SqlError::unsupported(format!(
                            "{:?} of {} (aggregates of free-text strings)",
                            a.func,
                            self.plan.show(x)
                        )));
                    }
                    Some(v)
                }
                _ => None,
            });
        }
        let composite: Vec<i64>;
        let mut keys = Vec::new();
        for ((_, g), o) in groups.iter().zip(&key_owned) {
            keys.push(match o {
                Some(v) => ExecExpr::col(v.col().ok_or_else(|| {
                    SqlError::unsupported(format!("grouping by {}", self.plan.show(g)))
                })?),
                None => to_exec_expr(g, rel).ok_or_else(|| {
                    SqlError::unsupported(format!("grouping by {}", self.plan.show(g)))
                })?,
            });
        }
        if keys.len() > MAX_KEYS {
            composite = self.composite_codes(&keys, rel.len)?;
            keys = vec![ExecExpr::col(Col::i64(&composite))];
        }
        let mut exec_aggs = Vec::new();
        for ((((_, a), o), seen), &double) in aggs
            .iter()
            .zip(&arg_owned)
            .zip(&seen_owned)
            .zip(&on_doubles)
        {
            let arg = match (&a.arg, o) {
                (_, Some(v)) => v.col().map(ExecExpr::col),
                (Some(x), None) if double => stored_double_arg(a.func, x, rel),
                (Some(x), None) => to_exec_expr(x, rel),
                (None, None) => None,
            };
            exec_aggs.push(match (a.func, arg) {
                (AggFunc::Sum | AggFunc::Avg, Some(x)) if double => Agg::sum_double(x),
                (AggFunc::Count, Some(x)) if o.is_some() => Agg::sum(x),
                (AggFunc::CountStar | AggFunc::Count, _) => Agg::count(),
                (AggFunc::Sum, Some(x)) => Agg::sum(x),
                // Over NULLs, AVG is the sum over the values seen.
                (AggFunc::Avg, Some(x)) if seen.is_some() => Agg::sum(x),
                (AggFunc::Avg, Some(x)) => Agg::avg(x),
                (AggFunc::Min, Some(x)) => Agg::min(x),
                (AggFunc::Max, Some(x)) => Agg::max(x),
                (AggFunc::CountDistinct, Some(x)) => Agg::count_distinct(x),
                (f, None) => return Err(SqlError::unsupported(format!("{f:?} of this argument"))),
            });
        }
        // Keys the operator evaluates itself as numbers come back from its
        // key columns as they are; otherwise a hidden MIN(position) per
        // group (one more accumulator and call per row) gives the row to
        // read every key expression back at.
        let keys_as_values = !dependent.contains(&true)
            && groups.len() <= MAX_KEYS
            && groups.iter().zip(&key_owned).all(|((_, g), o)| {
                o.is_none()
                    && matches!(
                        self.ty(g),
                        SqlType::Int | SqlType::Decimal(_) | SqlType::Date
                    )
            });
        let reps_at = (!keys_as_values).then(|| {
            exec_aggs.push(Agg::min(ExecExpr::func(0, i64::from)));
            exec_aggs.len() - 1
        });
        // The indicator sums, after the representative position.
        let mut seen_at = Vec::new();
        for (((_, a), seen), &double) in aggs.iter().zip(&seen_owned).zip(&on_doubles) {
            seen_at.push(match seen.as_ref().and_then(Vector::col) {
                Some(c) => {
                    exec_aggs.push(Agg::sum(ExecExpr::col(c)));
                    Some(exec_aggs.len() - 1)
                }
                // AVG of a stored double column read in place (no NULLs):
                // its values are the group's rows.
                None if double && a.func == AggFunc::Avg => {
                    exec_aggs.push(Agg::count());
                    Some(exec_aggs.len() - 1)
                }
                None => None,
            });
        }
        // Fused, a hidden COUNT(*) says how many rows the filter selected.
        let fault = Fault::default();
        let all = Expr::And(filter.to_vec());
        let (pred, selected_at) = if filter.is_empty() {
            (None, None)
        } else {
            exec_aggs.push(Agg::count());
            let mut pred = to_pred(self.ctx, &all, rel, &fault)?;
            if !deleted.is_empty() {
                pred = Pred::and(vec![pred, Pred::not_in_sorted(deleted)]);
            }
            (Some(pred), Some(exec_aggs.len() - 1))
        };
        let input = match &pred {
            Some(p) => Input::filtered(rel.len, p),
            None => Input::all(rel.len),
        };
        let g = aggregate(self.ctx, "sql_aggregate", input, &keys, &exec_aggs)?;
        fault.check()?;
        let selected = match selected_at {
            Some(j) => g.agg(j).values.iter().sum::<i128>() as usize,
            None => rel.len,
        };
        let mut out = Relation {
            len: g.len(),
            cols: Vec::new(),
        };
        match reps_at {
            _ if groups.is_empty() => {}
            None => {
                for (k, (id, e)) in groups.iter().enumerate() {
                    let values = g.key(k);
                    out.cols.push((
                        *id,
                        match self.ty(e) {
                            SqlType::Date => {
                                Vector::Dates(values.iter().map(|&d| d as i32).collect())
                            }
                            _ => match g.key_col(k).scale() {
                                0 => Vector::Int(values.to_vec()),
                                scale => Vector::Dec {
                                    values: values.to_vec(),
                                    scale,
                                },
                            },
                        },
                    ));
                }
            }
            Some(j) => {
                let reps: Vec<u32> = g.agg(j).values.iter().map(|&v| v as u32).collect();
                let at_reps = rel.take(self.ctx, &reps);
                for (id, e) in all_groups {
                    out.cols
                        .push((*id, eval_vector(self.ctx, e, self.ty(e), &at_reps)?));
                }
            }
        }
        let empty = groups.is_empty() && selected == 0;
        for (i, (id, a)) in aggs.iter().enumerate() {
            let c = g.agg(i);
            let double = on_doubles[i];
            let as_double = |v: i128| f64::from_bits(v as i64 as u64);
            let v = match a.func {
                // Over NULLs: the NULLs' one code counted out where a
                // group had any (`distinct_codes`).
                AggFunc::CountDistinct if seen_at[i].is_some() => {
                    let j = seen_at[i].expect("checked");
                    Vector::Int(
                        c.values
                            .iter()
                            .zip(&g.agg(j).values)
                            .map(|(&n, &nulls)| n as i64 - i64::from(nulls > 0))
                            .collect(),
                    )
                }
                AggFunc::Count | AggFunc::CountStar | AggFunc::CountDistinct => {
                    Vector::Int(c.values.iter().map(|&x| x as i64).collect())
                }
                // SUM, AVG, MIN, MAX of no rows: NULL.
                _ if empty => Vector::Values(vec![Scalar::Null]),
                AggFunc::Sum if double => {
                    Vector::Double(c.values.iter().map(|&v| as_double(v)).collect())
                }
                AggFunc::Avg if double => {
                    let j = seen_at[i].expect("a double argument counts its values");
                    Vector::Double(
                        c.values
                            .iter()
                            .zip(&g.agg(j).values)
                            .map(|(&s, &n)| as_double(s) / (n.max(1) as f64))
                            .collect(),
                    )
                }
                AggFunc::Min | AggFunc::Max if double => Vector::Double(
                    c.values
                        .iter()
                        .map(|&v| from_ordered_bits(v as i64))
                        .collect(),
                ),
                AggFunc::Sum => Vector::Wide {
                    values: c.values.clone(),
                    scale: c.scale,
                },
                AggFunc::Avg => {
                    let unit = 10i128.pow(u32::from(c.scale));
                    let counts: Vec<i128> = match seen_at[i] {
                        Some(j) => g.agg(j).values.clone(),
                        None => c.counts.iter().map(|&n| i128::from(n)).collect(),
                    };
                    Vector::Double(
                        c.values
                            .iter()
                            .zip(&counts)
                            .map(|(&s, &n)| exact_ratio(s, (n * unit).max(1)))
                            .collect(),
                    )
                }
                AggFunc::Min | AggFunc::Max => {
                    let arg = a.arg.as_ref().expect("MIN/MAX have an argument");
                    self.extreme(arg, rel, &c.values, c.scale)?
                }
            };
            // A group where the aggregate saw no value (only NULLs): NULL.
            let v = match seen_at[i] {
                Some(j) if !matches!(a.func, AggFunc::Count | AggFunc::CountStar) => {
                    let nulls: Vec<bool> = g.agg(j).values.iter().map(|&n| n == 0).collect();
                    if nulls.contains(&true) {
                        Vector::Masked {
                            values: Box::new(v),
                            nulls: Arc::new(nulls),
                        }
                    } else {
                        v
                    }
                }
                _ => v,
            };
            out.cols.push((*id, v));
        }
        Ok((out, selected))
    }

    /// A key that must be materialized first: strings (dictionary columns
    /// as they are, others interned) and expressions the operators cannot
    /// evaluate (encoded by [`columnar`]).
    fn key_vector(&self, g: &Expr, rel: &Relation<'a>) -> Result<Option<Vector<'a>>> {
        let ty = self.ty(g);
        Ok(match ty {
            SqlType::Str => {
                let v = eval_vector(self.ctx, g, ty, rel)?;
                if v.is_dict() {
                    Some(v)
                } else {
                    Some(Vector::Int(self.intern(g, rel, &mut HashMap::new())?))
                }
            }
            _ if to_exec_expr(g, rel).is_some() => None,
            _ => {
                let v = eval_vector(self.ctx, g, ty, rel)?;
                if without_nulls(&v, rel.len).is_some() {
                    // NULL is one group: every value interned, NULL too.
                    let mut codes: HashMap<String, i64> = HashMap::new();
                    Some(Vector::Int(
                        (0..rel.len)
                            .map(|p| {
                                let n = codes.len() as i64;
                                *codes.entry(format!("{:?}", v.value_at(p))).or_insert(n)
                            })
                            .collect(),
                    ))
                } else {
                    Some(columnar(v)?)
                }
            }
        })
    }

    /// One code per distinct tuple of key values.
    fn composite_codes(&self, keys: &[ExecExpr], len: usize) -> Result<Vec<i64>> {
        let columns: Vec<Vec<i64>> = keys
            .iter()
            .map(|k| Ok(project(self.ctx, "sql_group_key", Input::all(len), k)?.values))
            .collect::<Result<_>>()?;
        // Row-major tuples in one buffer, interned by slice with the Fx
        // hash (no allocation per row; SipHash over a Vec per row was most
        // of CH Q18's aggregation).
        let width = columns.len();
        let mut tuples = vec![0i64; len * width];
        for (k, column) in columns.iter().enumerate() {
            for (p, &v) in column.iter().enumerate() {
                tuples[p * width + k] = v;
            }
        }
        let mut codes: HashMap<&[i64], i64, BuildHasherDefault<FxHasher>> = HashMap::default();
        Ok(tuples
            .chunks_exact(width.max(1))
            .take(len)
            .map(|tuple| {
                let n = codes.len() as i64;
                *codes.entry(tuple).or_insert(n)
            })
            .collect())
    }

    /// MIN/MAX values back in the argument's type (not doubles': the
    /// caller decodes their ordered bits).
    fn extreme(
        &self,
        arg: &Expr,
        rel: &Relation,
        values: &[i128],
        scale: u8,
    ) -> Result<Vector<'a>> {
        Ok(match self.ty(arg) {
            SqlType::Date => Vector::Dates(values.iter().map(|&d| d as i32).collect()),
            SqlType::Str => {
                let v = eval_vector(self.ctx, arg, SqlType::Str, rel)?;
                let Some(Data::Dict(d)) = v.col().map(|c| c.data()) else {
                    return Err(SqlError::unsupported("MIN/MAX of free-text strings"));
                };
                Vector::Values(
                    values
                        .iter()
                        .map(|&code| Scalar::Str(d.decode(code as u32).to_string()))
                        .collect(),
                )
            }
            _ => narrowed(Vector::Wide {
                values: values.to_vec(),
                scale,
            }),
        })
    }
}

/// Whether aggregate `func` of a `ty` argument runs on doubles' bits
/// ([`double_argument`]).
fn is_double_sum_or_extreme(func: AggFunc, ty: SqlType) -> bool {
    ty == SqlType::Double
        && matches!(
            func,
            AggFunc::Sum | AggFunc::Avg | AggFunc::Min | AggFunc::Max
        )
}

/// Aggregate `func`'s argument `x` read in place when it is a stored double
/// column without NULLs: its ordered bits for MIN and MAX, each one's
/// double's bits for SUM and AVG (converted batch by batch in the
/// operator's tasks, without a copy of the column).
fn stored_double_arg<'r>(func: AggFunc, x: &Expr, rel: &'r Relation) -> Option<ExecExpr<'r>> {
    let Expr::Column(c) = x else {
        return None;
    };
    let (col, Encoding::Double) = rel.get(*c)?.encoded()? else {
        return None;
    };
    Some(match func {
        AggFunc::Min | AggFunc::Max => ExecExpr::col(col),
        _ => ExecExpr::col(col).double_bits_of_ordered(),
    })
}

/// COUNT(DISTINCT x)'s argument over values with NULLs (`vals`): codes of
/// the values' order (`columnar`: equal values, equal codes), every NULL
/// given one code no value has, and the 0/1 NULL indicator — so a group's
/// count is its distinct codes less one if it held a NULL. `Err` names
/// what cannot be coded (128-bit sums; a column spanning every `i64`).
fn distinct_codes(vals: Vec<Scalar>) -> std::result::Result<(Vec<i64>, Vec<i64>), String> {
    let nulls: Vec<i64> = vals.iter().map(|s| i64::from(*s == Scalar::Null)).collect();
    let Some(fill) = vals.iter().find(|s| **s != Scalar::Null).cloned() else {
        return Ok((vec![0; nulls.len()], nulls));
    };
    let filled = vals
        .into_iter()
        .map(|s| if s == Scalar::Null { fill.clone() } else { s })
        .collect();
    let coded = narrowed(columnar(Vector::Values(filled)).map_err(|e| e.to_string())?);
    let col = coded
        .col()
        .filter(|c| c.is_narrow_numeric())
        .ok_or("values past 64 bits")?;
    let mut codes: Vec<i64> = (0..nulls.len() as u32)
        .map(|p| col.i128_at(p).expect("narrow numbers") as i64)
        .collect();
    let (lo, hi) = codes
        .iter()
        .fold((i64::MAX, i64::MIN), |(lo, hi), &c| (lo.min(c), hi.max(c)));
    let null_code = hi
        .checked_add(1)
        .or(lo.checked_sub(1))
        .ok_or("values spanning every BIGINT")?;
    for (c, &null) in codes.iter_mut().zip(&nulls) {
        if null == 1 {
            *c = null_code;
        }
    }
    Ok((codes, nulls))
}

/// A double argument `v` of `len` rows as the operator aggregates it: the
/// bits of each value for SUM/AVG (0.0 at a NULL), its ordered bits for
/// MIN/MAX (the accumulator's start at a NULL, so it changes nothing), and
/// a 0/1 not-NULL indicator whose sum per group counts the values.
fn double_argument(func: AggFunc, v: &Vector, len: usize) -> (Vec<i64>, Vec<i64>) {
    let at_null = match func {
        AggFunc::Min => i64::MAX,
        AggFunc::Max => i64::MIN,
        _ => 0,
    };
    // A stored column: its ordered bits read as integers, not a value per row.
    let (values, nulls) = match v {
        Vector::Masked { values, nulls } => (&**values, Some(nulls)),
        v => (v, None),
    };
    if let Some((col, Encoding::Double)) = values.encoded() {
        return (0..len)
            .map(|p| {
                if nulls.is_some_and(|n| n[p]) {
                    return (at_null, 0);
                }
                let o = col.i128_at(p as u32).expect("stored doubles are integers") as i64;
                let bits = match func {
                    AggFunc::Min | AggFunc::Max => o,
                    _ => from_ordered_bits(o).to_bits() as i64,
                };
                (bits, 1)
            })
            .unzip();
    }
    (0..len)
        .map(|p| {
            let d = match v.value_at(p) {
                Scalar::Double(d) => Some(d),
                Scalar::Null => None,
                other => super::eval::as_f64(&other),
            };
            let bits = match (func, d) {
                (AggFunc::Min | AggFunc::Max, Some(d)) => ordered_bits(d),
                (_, Some(d)) => d.to_bits() as i64,
                (_, None) => at_null,
            };
            (bits, i64::from(d.is_some()))
        })
        .unzip()
}
