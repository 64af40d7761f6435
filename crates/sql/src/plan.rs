//! The logical plan: bound expressions over column ids, and the operator tree
//! (scan, filter, inner equi-join, aggregate, sort, limit, project) that the
//! optimizer rewrites and `lower` runs. `EXPLAIN` prints it.

use std::collections::BTreeSet;

use maestro_storage::column::IndexKey;

use crate::types::{Literal, SqlType};

/// A column of some plan node's output: an index into [`LogicalPlan::columns`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ColumnId(pub usize);

/// What the plan knows about a column: its printable name and type.
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnInfo {
    /// `alias.column` for base columns, the expression text for computed ones.
    pub name: String,
    pub ty: SqlType,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArithOp {
    Add,
    Sub,
    Mul,
    Div,
    /// `%`: the remainder, exact operands only.
    Mod,
}

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
    /// `b op a` for `a op b`.
    pub fn flip(self) -> CmpOp {
        match self {
            CmpOp::Lt => CmpOp::Gt,
            CmpOp::Le => CmpOp::Ge,
            CmpOp::Gt => CmpOp::Lt,
            CmpOp::Ge => CmpOp::Le,
            op => op,
        }
    }

    pub fn holds(self, o: std::cmp::Ordering) -> bool {
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

    pub(crate) fn symbol(self) -> &'static str {
        match self {
            CmpOp::Eq => "=",
            CmpOp::Ne => "<>",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        }
    }
}

/// A bound, type-checked scalar expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Column(ColumnId),
    Lit(Literal),
    Arith(ArithOp, Box<Expr>, Box<Expr>),
    Cmp(CmpOp, Box<Expr>, Box<Expr>),
    And(Vec<Expr>),
    Or(Vec<Expr>),
    Not(Box<Expr>),
    /// `expr [NOT] IN (literals)`.
    InList {
        expr: Box<Expr>,
        list: Vec<Literal>,
        negated: bool,
    },
    /// `expr [NOT] LIKE 'pattern'`.
    Like {
        expr: Box<Expr>,
        pattern: String,
        negated: bool,
    },
    /// `CASE WHEN c THEN v … [ELSE e] END` (no ELSE: NULL).
    Case {
        whens: Vec<(Expr, Expr)>,
        otherwise: Option<Box<Expr>>,
    },
    /// `EXTRACT(YEAR FROM expr)`.
    Year(Box<Expr>),
    /// `ascii(expr)`: the code point of a string's first character (0 for
    /// an empty string).
    Ascii(Box<Expr>),
    /// `SUBSTRING(expr FROM start [FOR len])` on a string (1-based, in
    /// characters, as PostgreSQL).
    Substring {
        expr: Box<Expr>,
        start: i64,
        len: Option<i64>,
    },
    /// `expr IS [NOT] NULL`.
    IsNull {
        expr: Box<Expr>,
        negated: bool,
    },
    /// `CAST(expr AS ty)` between numbers, strings and dates.
    Cast(Box<Expr>, SqlType),
    /// `a || b` of two strings (NULL if either is; the binder casts a
    /// non-text operand to text, as PostgreSQL's `anynonarray || text`).
    Concat(Box<Expr>, Box<Expr>),
    /// A function of one string: `upper`, `lower`, `length` (NULL of NULL).
    Text(TextFn, Box<Expr>),
}

/// The functions of one string ([`Expr::Text`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextFn {
    /// `upper(s)`: Unicode's full upper-case mapping (ß becomes SS, as
    /// PostgreSQL under ICU; DuckDB gives ẞ).
    Upper,
    /// `lower(s)`: Unicode lower case.
    Lower,
    /// `length(s)`, `char_length(s)`: characters (an integer).
    Length,
}

impl TextFn {
    pub fn name(self) -> &'static str {
        match self {
            TextFn::Upper => "upper",
            TextFn::Lower => "lower",
            TextFn::Length => "length",
        }
    }
}

impl Expr {
    /// The NULL literal: a CASE with no branch (its type is that of its
    /// context; alone, an integer).
    pub fn null() -> Expr {
        Expr::Case {
            whens: Vec::new(),
            otherwise: None,
        }
    }

    pub fn is_null_literal(&self) -> bool {
        matches!(self, Expr::Case { whens, otherwise: None } if whens.is_empty())
    }

    pub fn cmp(op: CmpOp, a: Expr, b: Expr) -> Expr {
        Expr::Cmp(op, Box::new(a), Box::new(b))
    }

    /// Every column the expression reads, into `out`.
    pub fn collect_columns(&self, out: &mut BTreeSet<ColumnId>) {
        self.visit(&mut |e| {
            if let Expr::Column(c) = e {
                out.insert(*c);
            }
        });
    }

    pub fn columns(&self) -> BTreeSet<ColumnId> {
        let mut s = BTreeSet::new();
        self.collect_columns(&mut s);
        s
    }

    /// Calls `f` on every literal value of this expression: its `Lit`
    /// nodes, IN lists' values and LIKE patterns (as `Literal::Str`). Every
    /// field is named, so a new kind of expression must say here whether
    /// it holds values (the plan cache replaces parameters' stand-ins
    /// through this: `plan_cache.rs`).
    pub fn literals_mut(&mut self, f: &mut impl FnMut(&mut Literal)) {
        match self {
            Expr::Column(_) => {}
            Expr::Lit(l) => f(l),
            Expr::Arith(_, a, b) | Expr::Cmp(_, a, b) | Expr::Concat(a, b) => {
                a.literals_mut(f);
                b.literals_mut(f);
            }
            Expr::And(es) | Expr::Or(es) => es.iter_mut().for_each(|e| e.literals_mut(f)),
            Expr::Not(e) | Expr::Year(e) | Expr::Ascii(e) | Expr::Cast(e, _) | Expr::Text(_, e) => {
                e.literals_mut(f)
            }
            Expr::InList {
                expr,
                list,
                negated: _,
            } => {
                expr.literals_mut(f);
                list.iter_mut().for_each(&mut *f);
            }
            Expr::Like {
                expr,
                pattern,
                negated: _,
            } => {
                expr.literals_mut(f);
                let mut l = Literal::Str(std::mem::take(pattern));
                f(&mut l);
                *pattern = match l {
                    Literal::Str(p) => p,
                    other => panic!("a LIKE pattern replaced by {other:?}, not a string"),
                };
            }
            // Start and length are the statement's integers (a parameter
            // there is not kept: the plans with other values differ).
            Expr::Substring {
                expr,
                start: _,
                len: _,
            }
            | Expr::IsNull { expr, negated: _ } => expr.literals_mut(f),
            Expr::Case { whens, otherwise } => {
                for (c, v) in whens {
                    c.literals_mut(f);
                    v.literals_mut(f);
                }
                if let Some(o) = otherwise {
                    o.literals_mut(f);
                }
            }
        }
    }

    /// Calls `f` on this expression and every subexpression.
    pub fn visit(&self, f: &mut impl FnMut(&Expr)) {
        f(self);
        match self {
            Expr::Column(_) | Expr::Lit(_) => {}
            Expr::Arith(_, a, b) | Expr::Cmp(_, a, b) | Expr::Concat(a, b) => {
                a.visit(f);
                b.visit(f);
            }
            Expr::And(es) | Expr::Or(es) => es.iter().for_each(|e| e.visit(f)),
            Expr::Not(e) | Expr::Year(e) | Expr::Ascii(e) | Expr::Cast(e, _) | Expr::Text(_, e) => {
                e.visit(f)
            }
            Expr::InList { expr, .. }
            | Expr::Like { expr, .. }
            | Expr::Substring { expr, .. }
            | Expr::IsNull { expr, .. } => expr.visit(f),
            Expr::Case { whens, otherwise } => {
                for (c, v) in whens {
                    c.visit(f);
                    v.visit(f);
                }
                if let Some(o) = otherwise {
                    o.visit(f);
                }
            }
        }
    }

    /// The expression with every subexpression `f` maps replaced (top-down:
    /// a replaced node is not descended into).
    pub fn rewrite(&self, f: &mut impl FnMut(&Expr) -> Option<Expr>) -> Expr {
        if let Some(e) = f(self) {
            return e;
        }
        match self {
            Expr::Column(_) | Expr::Lit(_) => self.clone(),
            Expr::Arith(op, a, b) => {
                Expr::Arith(*op, Box::new(a.rewrite(f)), Box::new(b.rewrite(f)))
            }
            Expr::Cmp(op, a, b) => Expr::Cmp(*op, Box::new(a.rewrite(f)), Box::new(b.rewrite(f))),
            Expr::Concat(a, b) => Expr::Concat(Box::new(a.rewrite(f)), Box::new(b.rewrite(f))),
            Expr::And(es) => Expr::And(es.iter().map(|e| e.rewrite(f)).collect()),
            Expr::Or(es) => Expr::Or(es.iter().map(|e| e.rewrite(f)).collect()),
            Expr::Not(e) => Expr::Not(Box::new(e.rewrite(f))),
            Expr::Year(e) => Expr::Year(Box::new(e.rewrite(f))),
            Expr::Ascii(e) => Expr::Ascii(Box::new(e.rewrite(f))),
            Expr::Text(t, e) => Expr::Text(*t, Box::new(e.rewrite(f))),
            Expr::Cast(e, t) => Expr::Cast(Box::new(e.rewrite(f)), *t),
            Expr::Substring { expr, start, len } => Expr::Substring {
                expr: Box::new(expr.rewrite(f)),
                start: *start,
                len: *len,
            },
            Expr::IsNull { expr, negated } => Expr::IsNull {
                expr: Box::new(expr.rewrite(f)),
                negated: *negated,
            },
            Expr::InList {
                expr,
                list,
                negated,
            } => Expr::InList {
                expr: Box::new(expr.rewrite(f)),
                list: list.clone(),
                negated: *negated,
            },
            Expr::Like {
                expr,
                pattern,
                negated,
            } => Expr::Like {
                expr: Box::new(expr.rewrite(f)),
                pattern: pattern.clone(),
                negated: *negated,
            },
            Expr::Case { whens, otherwise } => Expr::Case {
                whens: whens
                    .iter()
                    .map(|(c, v)| (c.rewrite(f), v.rewrite(f)))
                    .collect(),
                otherwise: otherwise.as_ref().map(|o| Box::new(o.rewrite(f))),
            },
        }
    }

    /// The conjuncts of an `AND` tree.
    pub fn conjuncts(self) -> Vec<Expr> {
        match self {
            Expr::And(es) => es.into_iter().flat_map(Expr::conjuncts).collect(),
            e => vec![e],
        }
    }

    /// `AND` of `es` (the single one if only one).
    pub fn and_all(mut es: Vec<Expr>) -> Expr {
        if es.len() == 1 {
            es.pop().expect("one conjunct")
        } else {
            Expr::And(es)
        }
    }
}

/// An aggregate function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AggFunc {
    Sum,
    Count,
    CountStar,
    CountDistinct,
    Avg,
    Min,
    Max,
}

/// One aggregate of an [`Plan::Aggregate`].
#[derive(Clone, Debug, PartialEq)]
pub struct AggCall {
    pub func: AggFunc,
    /// `None` for `COUNT(*)`.
    pub arg: Option<Expr>,
}

/// Sort direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Asc,
    Desc,
}

/// How a [`Plan::Join`] combines its sides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JoinKind {
    /// Matching pairs; no keys is a cross product (run only when one side
    /// has a single row: an uncorrelated scalar subquery).
    Inner,
    /// Matching pairs, and every unmatched left row with NULLs on the right.
    LeftOuter,
    /// The left rows with a match (`EXISTS`, `IN (SELECT …)`); left columns only.
    Semi,
    /// The left rows without a match (`NOT EXISTS`): a NULL key matches
    /// nothing, so its row is kept.
    Anti,
    /// `NOT IN (SELECT …)` (and `NOT (x IN (SELECT …))`): the left rows
    /// without a match, except that a NULL key on either side makes the
    /// test NULL, which drops the row — the lowering refuses keys holding
    /// NULLs rather than answer that (the binder refuses nullable
    /// columns here already).
    AntiIn,
}

impl JoinKind {
    /// Semi, anti or NOT IN's anti join: left columns only.
    pub fn is_semi_or_anti(self) -> bool {
        matches!(self, JoinKind::Semi | JoinKind::Anti | JoinKind::AntiIn)
    }
}

/// A scan's rows taken from a sorted index of its table's main plus the
/// delta's appended rows (`index_scan.rs` chooses it, `lower` runs it).
#[derive(Clone, Debug, PartialEq)]
pub struct IndexScan {
    /// The declared index's name (for EXPLAIN).
    pub name: String,
    /// The indexed column's position in the table.
    pub column: usize,
    pub lookup: IndexLookup,
    /// The filter's conjuncts the lookup answers (for EXPLAIN; the filter
    /// still checks them, on the few candidate rows).
    pub answers: Vec<Expr>,
}

/// Which values of the indexed column an index scan looks up.
#[derive(Clone, Debug, PartialEq)]
pub enum IndexLookup {
    /// The values within the bounds (`=`: both included and equal).
    Range {
        lo: std::ops::Bound<IndexKey>,
        hi: std::ops::Bound<IndexKey>,
    },
    /// The values equal to one of the keys (`IN (list)`).
    AnyOf(Vec<IndexKey>),
}

/// A logical operator tree.
#[derive(Clone, Debug, PartialEq)]
pub enum Plan {
    /// A base table; only `columns` are read; `filter` conjuncts pushed down.
    Scan {
        table: String,
        alias: String,
        /// (output column, index of the table's column).
        columns: Vec<(ColumnId, usize)>,
        filter: Vec<Expr>,
        rows: usize,
        /// Read the candidate rows from an index instead of every row
        /// (chosen after optimization: `index_scan.rs`); `filter` is
        /// still evaluated on them.
        index: Option<IndexScan>,
    },
    Filter {
        input: Box<Plan>,
        predicate: Vec<Expr>,
    },
    /// Join on `left[i] = right[i]` for every key, and `residual` (a
    /// condition on a pair of rows; semi, anti and left outer joins only).
    /// An inner join without keys is a cross product (only before the
    /// optimizer has placed the WHERE equalities, or with a one-row side).
    Join {
        left: Box<Plan>,
        right: Box<Plan>,
        kind: JoinKind,
        keys: Vec<(Expr, Expr)>,
        residual: Vec<Expr>,
    },
    /// The input's columns and computed ones (a derived table's expressions).
    Map {
        input: Box<Plan>,
        exprs: Vec<(ColumnId, Expr)>,
    },
    /// Groups by `groups` (each output under its id), computes `aggs`.
    Aggregate {
        input: Box<Plan>,
        groups: Vec<(ColumnId, Expr)>,
        aggs: Vec<(ColumnId, AggCall)>,
    },
    /// Sorts by `keys`: (expression, direction, whether NULLs come first).
    Sort {
        input: Box<Plan>,
        keys: Vec<(Expr, Direction, bool)>,
    },
    /// `LIMIT count OFFSET offset` (no LIMIT: `count` is `usize::MAX`).
    Limit {
        input: Box<Plan>,
        count: usize,
        offset: usize,
    },
    /// One row without columns: the input of `SELECT` without FROM.
    OneRow,
    /// `generate_series(start, stop[, step])` in FROM: `rows` integers
    /// `start`, `start + step`, … as `column`.
    Series {
        column: ColumnId,
        start: i64,
        step: i64,
        rows: usize,
    },
    /// The statement's result columns, named.
    Project {
        input: Box<Plan>,
        outputs: Vec<(String, Expr)>,
    },
    /// A common subexpression: `input` is computed once per statement and
    /// its result handed out here and at every [`Plan::SharedRef`] with
    /// this `id` (a WITH query referenced twice, TPC-H Q15's view; Q11's
    /// join repeated in its HAVING subquery). Placed by `share.rs`.
    Shared { id: usize, input: Box<Plan> },
    /// The result of the [`Plan::Shared`] with this `id`, its columns
    /// renamed: (this node's column, the shared plan's column).
    SharedRef {
        id: usize,
        columns: Vec<(ColumnId, ColumnId)>,
    },
}

impl Plan {
    /// The columns this node outputs.
    pub fn output_columns(&self) -> Vec<ColumnId> {
        match self {
            Plan::Scan { columns, .. } => columns.iter().map(|c| c.0).collect(),
            Plan::Filter { input, .. }
            | Plan::Sort { input, .. }
            | Plan::Limit { input, .. }
            | Plan::Shared { input, .. } => input.output_columns(),
            Plan::SharedRef { columns, .. } => columns.iter().map(|c| c.0).collect(),
            Plan::Join {
                left, right, kind, ..
            } => {
                let mut c = left.output_columns();
                if matches!(kind, JoinKind::Inner | JoinKind::LeftOuter) {
                    c.extend(right.output_columns());
                }
                c
            }
            Plan::Map { input, exprs } => {
                let mut c = input.output_columns();
                c.extend(exprs.iter().map(|e| e.0));
                c
            }
            Plan::Aggregate { groups, aggs, .. } => groups
                .iter()
                .map(|g| g.0)
                .chain(aggs.iter().map(|a| a.0))
                .collect(),
            Plan::Project { .. } | Plan::OneRow => Vec::new(),
            Plan::Series { column, .. } => vec![*column],
        }
    }
}

impl Plan {
    /// This node with each input replaced by `f(input)`, left before right;
    /// leaves are returned as they are.
    pub fn map_inputs(self, mut f: impl FnMut(Plan) -> Plan) -> Plan {
        let mut go = |c: Box<Plan>| Box::new(f(*c));
        match self {
            Plan::Join {
                left,
                right,
                kind,
                keys,
                residual,
            } => {
                let left = go(left);
                let right = go(right);
                Plan::Join {
                    left,
                    right,
                    kind,
                    keys,
                    residual,
                }
            }
            Plan::Filter { input, predicate } => Plan::Filter {
                input: go(input),
                predicate,
            },
            Plan::Map { input, exprs } => Plan::Map {
                input: go(input),
                exprs,
            },
            Plan::Aggregate {
                input,
                groups,
                aggs,
            } => Plan::Aggregate {
                input: go(input),
                groups,
                aggs,
            },
            Plan::Sort { input, keys } => Plan::Sort {
                input: go(input),
                keys,
            },
            Plan::Limit {
                input,
                count,
                offset,
            } => Plan::Limit {
                input: go(input),
                count,
                offset,
            },
            Plan::Project { input, outputs } => Plan::Project {
                input: go(input),
                outputs,
            },
            Plan::Shared { id, input } => Plan::Shared {
                id,
                input: go(input),
            },
            p @ (Plan::Scan { .. }
            | Plan::OneRow
            | Plan::Series { .. }
            | Plan::SharedRef { .. }) => p,
        }
    }

    /// The node's inputs.
    pub fn children(&self) -> Vec<&Plan> {
        match self {
            Plan::Scan { .. } | Plan::OneRow | Plan::Series { .. } | Plan::SharedRef { .. } => {
                Vec::new()
            }
            Plan::Join { left, right, .. } => vec![left, right],
            Plan::Filter { input, .. }
            | Plan::Map { input, .. }
            | Plan::Aggregate { input, .. }
            | Plan::Sort { input, .. }
            | Plan::Limit { input, .. }
            | Plan::Project { input, .. }
            | Plan::Shared { input, .. } => vec![input],
        }
    }

    /// The expressions of this node (not of its inputs).
    pub fn exprs(&self) -> Vec<&Expr> {
        match self {
            Plan::Scan { filter, .. } => filter.iter().collect(),
            Plan::Filter { predicate, .. } => predicate.iter().collect(),
            Plan::Join { keys, residual, .. } => keys
                .iter()
                .flat_map(|(l, r)| [l, r])
                .chain(residual.iter())
                .collect(),
            Plan::Map { exprs, .. } => exprs.iter().map(|e| &e.1).collect(),
            Plan::Aggregate { groups, aggs, .. } => groups
                .iter()
                .map(|g| &g.1)
                .chain(aggs.iter().filter_map(|a| a.1.arg.as_ref()))
                .collect(),
            Plan::Sort { keys, .. } => keys.iter().map(|k| &k.0).collect(),
            Plan::Limit { .. }
            | Plan::OneRow
            | Plan::Series { .. }
            | Plan::Shared { .. }
            | Plan::SharedRef { .. } => Vec::new(),
            Plan::Project { outputs, .. } => outputs.iter().map(|o| &o.1).collect(),
        }
    }

    /// Calls `f` on every literal value of every expression of this tree
    /// ([`Expr::literals_mut`]). A node's other values (LIMIT's counts, a
    /// series' bounds, an index lookup's keys) are not literals: a plan
    /// cache does not keep plans whose parameters end up there.
    pub fn literals_mut(&mut self, f: &mut impl FnMut(&mut Literal)) {
        self.exprs_mut(&mut |e: &mut Expr| e.literals_mut(f));
    }

    /// Calls `f` on every expression of this tree (each node's top-level
    /// ones; [`Plan::exprs`] of every node, mutably). Every field is named,
    /// so a new kind of node must say here whether it holds expressions.
    pub fn exprs_mut(&mut self, f: &mut impl FnMut(&mut Expr)) {
        let exprs: Vec<&mut Expr> = match self {
            Plan::Scan {
                table: _,
                alias: _,
                columns: _,
                filter,
                rows: _,
                index: _,
            } => filter.iter_mut().collect(),
            Plan::Filter {
                input: _,
                predicate,
            } => predicate.iter_mut().collect(),
            Plan::Join {
                left: _,
                right: _,
                kind: _,
                keys,
                residual,
            } => keys
                .iter_mut()
                .flat_map(|(l, r)| [l, r])
                .chain(residual.iter_mut())
                .collect(),
            Plan::Map { input: _, exprs } => exprs.iter_mut().map(|e| &mut e.1).collect(),
            Plan::Aggregate {
                input: _,
                groups,
                aggs,
            } => groups
                .iter_mut()
                .map(|g| &mut g.1)
                .chain(aggs.iter_mut().filter_map(|a| a.1.arg.as_mut()))
                .collect(),
            Plan::Sort { input: _, keys } => keys.iter_mut().map(|k| &mut k.0).collect(),
            Plan::Limit {
                input: _,
                count: _,
                offset: _,
            }
            | Plan::OneRow
            | Plan::Series {
                column: _,
                start: _,
                step: _,
                rows: _,
            }
            | Plan::Shared { id: _, input: _ }
            | Plan::SharedRef { id: _, columns: _ } => Vec::new(),
            Plan::Project { input: _, outputs } => outputs.iter_mut().map(|o| &mut o.1).collect(),
        };
        for e in exprs {
            f(e);
        }
        for c in self.children_mut() {
            c.exprs_mut(f);
        }
    }

    /// The node's inputs, mutably ([`Plan::children`]).
    pub fn children_mut(&mut self) -> Vec<&mut Plan> {
        match self {
            Plan::Scan { .. } | Plan::OneRow | Plan::Series { .. } | Plan::SharedRef { .. } => {
                Vec::new()
            }
            Plan::Join { left, right, .. } => vec![left, right],
            Plan::Filter { input, .. }
            | Plan::Map { input, .. }
            | Plan::Aggregate { input, .. }
            | Plan::Sort { input, .. }
            | Plan::Limit { input, .. }
            | Plan::Project { input, .. }
            | Plan::Shared { input, .. } => vec![input],
        }
    }

    /// Every column any expression of this tree reads.
    pub fn read_columns(&self, out: &mut BTreeSet<ColumnId>) {
        for e in self.exprs() {
            e.collect_columns(out);
        }
        for c in self.children() {
            c.read_columns(out);
        }
    }

    /// Whether the plan gives exactly one row (an aggregate without GROUP BY).
    pub fn is_single_row(&self) -> bool {
        match self {
            Plan::Aggregate { groups, .. } => groups.is_empty(),
            Plan::OneRow => true,
            Plan::Map { input, .. }
            | Plan::Project { input, .. }
            | Plan::Sort { input, .. }
            | Plan::Shared { input, .. } => input.is_single_row(),
            _ => false,
        }
    }
}

/// A plan and the columns its expressions refer to.
#[derive(Clone, Debug, PartialEq)]
pub struct LogicalPlan {
    pub root: Plan,
    pub columns: Vec<ColumnInfo>,
    /// Each node's estimated output rows, in preorder (the optimizer's,
    /// from column statistics: `estimate.rs`); empty before optimization.
    pub estimates: Vec<usize>,
}

impl LogicalPlan {
    pub fn column(&self, id: ColumnId) -> &ColumnInfo {
        &self.columns[id.0]
    }
}
