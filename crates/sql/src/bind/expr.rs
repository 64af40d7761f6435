//! Binding expressions: sqlparser's AST to [`Expr`] over column ids, with
//! types checked, string literals compared with dates read as dates, and
//! `DATE '…' ± INTERVAL '…'` folded to a date. Aggregate calls become columns
//! of the aggregation (when the context allows them).

use sqlparser::ast::{
    self, BinaryOperator, CaseWhen, DateTimeField, DuplicateTreatment, FunctionArg,
    FunctionArgExpr, FunctionArguments, Spanned, UnaryOperator,
};

use super::Binder;
use super::literal::{interval, literal, parse_date, string_value};
use super::scope::Scope;
use crate::error::{ErrorKind, Result, SqlError};
use crate::plan::{AggCall, AggFunc, ArithOp, CmpOp, ColumnId, Expr, TextFn};
use crate::types::{Literal, SqlType};
use maestro_storage::column::{Date, MAX_SCALE};

/// Where an expression is bound.
pub(crate) struct ExprCtx<'s> {
    pub scope: &'s Scope<'s>,
    /// Whether aggregate calls are allowed (SELECT, HAVING, ORDER BY of a
    /// grouped query); `None` names the clause that forbids them.
    pub aggs_forbidden_in: Option<&'static str>,
}

impl Binder<'_> {
    pub(crate) fn bind_expr(&mut self, e: &ast::Expr, ctx: &ExprCtx) -> Result<Expr> {
        self.bind_inner(e, ctx).map_err(|err| err.at(e.span()))
    }

    /// [`bind_expr`](Self::bind_expr), where a parameter `$n` takes the type
    /// `hint` its context expects (a comparison's other side, a CAST's
    /// target, …).
    pub(crate) fn bind_hinted(
        &mut self,
        e: &ast::Expr,
        ctx: &ExprCtx,
        hint: Option<SqlType>,
    ) -> Result<Expr> {
        match placeholder(e) {
            Some(name) => self.params.bind(name, hint).map_err(|err| err.at(e.span())),
            None => self.bind_expr(e, ctx),
        }
    }

    /// [`bind_hinted`](Self::bind_hinted) where the statement needs a
    /// constant (an IN list's value, SUBSTRING's position, round's digits,
    /// generate_series' bounds): arithmetic over a parameter, left unfolded
    /// for the plans ([`Folding::KeepParameter`]), is folded here — the
    /// value ends up in the plan's structure, and a plan cache keeps no plan
    /// for it.
    pub(crate) fn bind_constant(
        &mut self,
        e: &ast::Expr,
        ctx: &ExprCtx,
        hint: Option<SqlType>,
    ) -> Result<Expr> {
        Ok(constant_folded(self.bind_hinted(e, ctx, hint)?))
    }

    /// Two operands, a parameter among them typed by the other one (the
    /// left one first, as PostgreSQL).
    fn bind_pair(
        &mut self,
        left: &ast::Expr,
        right: &ast::Expr,
        ctx: &ExprCtx,
    ) -> Result<(Expr, Expr)> {
        if placeholder(left).is_some() && placeholder(right).is_none() {
            let r = self.bind_expr(right, ctx)?;
            let hint = self.type_of(&r);
            Ok((self.bind_hinted(left, ctx, Some(hint))?, r))
        } else {
            let l = self.bind_expr(left, ctx)?;
            let hint = self.type_of(&l);
            Ok((l, self.bind_hinted(right, ctx, Some(hint))?))
        }
    }

    fn bind_inner(&mut self, e: &ast::Expr, ctx: &ExprCtx) -> Result<Expr> {
        use ast::Expr as A;
        match e {
            A::Identifier(id) => Ok(Expr::Column(ctx.scope.resolve(None, id)?)),
            A::CompoundIdentifier(ids) => match ids.as_slice() {
                [q, n] => Ok(Expr::Column(ctx.scope.resolve(Some(q), n)?)),
                _ => Err(SqlError::unsupported(format!("qualified name {e}"))),
            },
            A::Value(v) if matches!(v.value, ast::Value::Null) => Ok(Expr::null()),
            A::Value(ast::ValueWithSpan {
                value: ast::Value::Placeholder(name),
                ..
            }) => self.params.bind(name, None),
            A::Value(v) => literal(&v.value).map(Expr::Lit),
            A::TypedString(ts) => match ts.data_type {
                ast::DataType::Date => {
                    let s = string_value(&ts.value.value)
                        .ok_or_else(|| SqlError::mismatch(format!("DATE needs a string: {e}")))?;
                    Ok(Expr::Lit(Literal::Date(parse_date(s)?)))
                }
                ast::DataType::Timestamp(
                    None,
                    ast::TimezoneInfo::None | ast::TimezoneInfo::WithoutTimeZone,
                ) => {
                    let s = string_value(&ts.value.value).ok_or_else(|| {
                        SqlError::mismatch(format!("TIMESTAMP needs a string: {e}"))
                    })?;
                    Ok(Expr::Lit(Literal::Timestamp(parse_timestamp_lit(s)?)))
                }
                ref t => Err(SqlError::unsupported(format!("{t} literals"))),
            },
            A::Interval(iv) => interval(iv).map(Expr::Lit),
            A::Nested(inner) => self.bind_expr(inner, ctx),
            A::UnaryOp { op, expr } => {
                let x = self.bind_expr(expr, ctx)?;
                match op {
                    UnaryOperator::Plus => Ok(x),
                    UnaryOperator::Minus => match x {
                        Expr::Lit(Literal::Num { value, scale }) if !is_parameter(expr) => {
                            Ok(Expr::Lit(Literal::Num {
                                value: -value,
                                scale,
                            }))
                        }
                        x => self.arith_of(
                            ArithOp::Sub,
                            Expr::Lit(Literal::int(0)),
                            x,
                            Folding::of(&[expr]),
                        ),
                    },
                    UnaryOperator::Not => {
                        self.expect_bool(&x, "NOT")?;
                        Ok(Expr::Not(Box::new(x)))
                    }
                    op => Err(SqlError::unsupported(format!("unary operator {op}"))),
                }
            }
            A::BinaryOp { left, op, right } => {
                let (l, r) = match op {
                    BinaryOperator::And | BinaryOperator::Or => (
                        self.bind_hinted(left, ctx, Some(SqlType::Bool))?,
                        self.bind_hinted(right, ctx, Some(SqlType::Bool))?,
                    ),
                    _ => self.bind_pair(left, right, ctx)?,
                };
                let folding = Folding::of(&[left, right]);
                match op {
                    BinaryOperator::Plus => self.arith_of(ArithOp::Add, l, r, folding),
                    BinaryOperator::Minus => self.arith_of(ArithOp::Sub, l, r, folding),
                    BinaryOperator::Multiply => self.arith_of(ArithOp::Mul, l, r, folding),
                    BinaryOperator::Divide => self.arith_of(ArithOp::Div, l, r, folding),
                    BinaryOperator::Modulo => self.arith_of(ArithOp::Mod, l, r, folding),
                    BinaryOperator::StringConcat => self.concat(l, r),
                    BinaryOperator::Eq => self.compare(CmpOp::Eq, l, r),
                    BinaryOperator::NotEq => self.compare(CmpOp::Ne, l, r),
                    BinaryOperator::Lt => self.compare(CmpOp::Lt, l, r),
                    BinaryOperator::LtEq => self.compare(CmpOp::Le, l, r),
                    BinaryOperator::Gt => self.compare(CmpOp::Gt, l, r),
                    BinaryOperator::GtEq => self.compare(CmpOp::Ge, l, r),
                    BinaryOperator::And | BinaryOperator::Or => {
                        self.expect_bool(&l, &op.to_string())?;
                        self.expect_bool(&r, &op.to_string())?;
                        Ok(if *op == BinaryOperator::And {
                            Expr::And(vec![l, r])
                        } else {
                            Expr::Or(vec![l, r])
                        })
                    }
                    op => Err(SqlError::unsupported(format!("operator {op}"))),
                }
            }
            A::Between {
                expr,
                negated,
                low,
                high,
            } => {
                let (x, lo) = self.bind_pair(expr, low, ctx)?;
                let hint = Some(self.type_of(&x));
                let hi = self.bind_hinted(high, ctx, hint)?;
                let both = Expr::And(vec![
                    self.compare(CmpOp::Ge, x.clone(), lo)?,
                    self.compare(CmpOp::Le, x, hi)?,
                ]);
                Ok(if *negated {
                    Expr::Not(Box::new(both))
                } else {
                    both
                })
            }
            A::In {
                expr,
                target: ast::InTarget::List(list),
                negated,
                ..
            } => {
                let x = self.bind_expr(expr, ctx)?;
                let xt = self.type_of(&x);
                let mut lits = Vec::new();
                for item in list {
                    let v = self.bind_constant(item, ctx, Some(xt))?;
                    let Expr::Lit(l) = coerce_to(v, xt)? else {
                        return Err(
                            SqlError::unsupported("IN lists of non-constants").at(item.span())
                        );
                    };
                    if !xt.comparable(l.sql_type()) {
                        return Err(SqlError::mismatch(format!(
                            "IN list value {l} ({}) does not compare with {xt}",
                            l.sql_type()
                        ))
                        .at(item.span()));
                    }
                    lits.push(l);
                }
                Ok(Expr::InList {
                    expr: Box::new(x),
                    list: lits,
                    negated: *negated,
                })
            }
            A::In {
                expr,
                target: ast::InTarget::Subquery(q),
                negated,
                ..
            } => {
                let x = self.bind_expr(expr, ctx)?;
                self.semi_subquery(q, Some(x), *negated, ctx)
            }
            A::Exists { subquery, negated } => self.semi_subquery(subquery, None, *negated, ctx),
            A::Subquery(q) => self.scalar_subquery(q, ctx),
            A::In { .. } => Err(SqlError::unsupported(format!("{e}"))),
            A::Substring {
                expr,
                substring_from,
                substring_for,
                ..
            } => {
                let x = self.bind_expr(expr, ctx)?;
                if self.type_of(&x) != SqlType::Str {
                    return Err(SqlError::mismatch(format!(
                        "SUBSTRING needs a string, not {}",
                        self.type_of(&x)
                    )));
                }
                let mut int = |e: &Option<Box<ast::Expr>>| -> Result<Option<i64>> {
                    let Some(e) = e else { return Ok(None) };
                    match self.bind_constant(e, ctx, Some(SqlType::Int))? {
                        Expr::Lit(Literal::Num { value, scale: 0 }) => Ok(Some(value)),
                        _ => Err(SqlError::unsupported(
                            "SUBSTRING with a non-constant or non-integer position or length",
                        )
                        .at(e.span())),
                    }
                };
                let start = int(substring_from)?.unwrap_or(1);
                let len = int(substring_for)?;
                if len.is_some_and(|n| n < 0) {
                    return Err(SqlError::invalid("negative substring length not allowed"));
                }
                Ok(Expr::Substring {
                    expr: Box::new(x),
                    start,
                    len,
                })
            }
            A::Like {
                negated,
                any: false,
                expr,
                pattern,
                escape_char: None,
            } => {
                let x = self.bind_expr(expr, ctx)?;
                if self.type_of(&x) != SqlType::Str {
                    return Err(SqlError::mismatch(format!(
                        "LIKE needs a string operand, not {}",
                        self.type_of(&x)
                    )));
                }
                let Expr::Lit(Literal::Str(p)) =
                    self.bind_hinted(pattern, ctx, Some(SqlType::Str))?
                else {
                    return Err(SqlError::unsupported("LIKE with a non-constant pattern"));
                };
                Ok(Expr::Like {
                    expr: Box::new(x),
                    pattern: p,
                    negated: *negated,
                })
            }
            A::Case {
                operand,
                conditions,
                else_result,
                ..
            } => self.case(operand.as_deref(), conditions, else_result.as_deref(), ctx),
            A::Extract { field, expr, .. } => {
                if !matches!(field, DateTimeField::Year) {
                    return Err(SqlError::unsupported(format!("EXTRACT({field})")));
                }
                let x = self.bind_expr(expr, ctx)?;
                match self.type_of(&x) {
                    SqlType::Date => Ok(Expr::Year(Box::new(x))),
                    // The year of the day it falls on (UTC).
                    SqlType::Timestamp => {
                        Ok(Expr::Year(Box::new(Expr::Cast(Box::new(x), SqlType::Date))))
                    }
                    t => Err(SqlError::mismatch(format!(
                        "EXTRACT(YEAR) needs a date or timestamp, not {t}"
                    ))),
                }
            }
            A::Function(f) => self.function(f, ctx),
            A::IsNull(x) | A::IsNotNull(x) => Ok(Expr::IsNull {
                expr: Box::new(self.bind_expr(x, ctx)?),
                negated: matches!(e, A::IsNotNull(_)),
            }),
            A::Cast {
                kind: ast::CastKind::Cast | ast::CastKind::DoubleColon,
                expr,
                data_type,
                format: None,
            } => {
                let to = cast_target(data_type)?;
                let x = self.bind_hinted(expr, ctx, Some(to))?;
                self.cast(x, to)
            }
            A::Cast { .. } => Err(SqlError::unsupported(format!("{e}"))),
            other => Err(SqlError::unsupported(format!("expression {other}"))),
        }
    }

    /// `CAST(x AS t)`: constants are converted now (a bad one is an
    /// error), other values when the statement runs.
    fn cast(&mut self, x: Expr, to: SqlType) -> Result<Expr> {
        if x.is_null_literal() {
            return Ok(Expr::Cast(Box::new(x), to));
        }
        let from = self.type_of(&x);
        let ok = from == to
            || (from.is_numeric() && to.is_numeric())
            // A timestamp's text would need its type at run time, where it
            // is a number: not supported (CAST to DATE is).
            || to == SqlType::Str && from != SqlType::Interval && from != SqlType::Timestamp
            || from == SqlType::Str
            || matches!((from, to), (SqlType::Int, SqlType::Bool) | (SqlType::Bool, SqlType::Int))
            || from == SqlType::Timestamp && to == SqlType::Date;
        if !ok {
            return Err(SqlError::mismatch(format!("cannot cast {from} to {to}")));
        }
        if from == to {
            return Ok(x);
        }
        if let Expr::Lit(l) = &x {
            // Fold constants, so that a bad one is an error now (with the
            // text, as PostgreSQL's message has it).
            if let (Literal::Str(s), SqlType::Timestamp) = (l, to) {
                return Ok(Expr::Lit(Literal::Timestamp(parse_timestamp_lit(s)?)));
            }
            let folded = crate::lower::cast_literal(l, to).map_err(|e| match l {
                Literal::Str(s) if e.kind == ErrorKind::InvalidText => {
                    SqlError::new(ErrorKind::InvalidText, format!("{}: \"{s}\"", e.message))
                }
                _ => e,
            })?;
            if let Some(folded) = folded {
                return Ok(Expr::Lit(folded));
            }
        }
        Ok(Expr::Cast(Box::new(x), to))
    }

    fn case(
        &mut self,
        operand: Option<&ast::Expr>,
        conditions: &[CaseWhen],
        else_result: Option<&ast::Expr>,
        ctx: &ExprCtx,
    ) -> Result<Expr> {
        let operand = operand.map(|o| self.bind_expr(o, ctx)).transpose()?;
        let mut whens = Vec::new();
        for w in conditions {
            let c = self.bind_expr(&w.condition, ctx)?;
            let c = match &operand {
                Some(o) => self.compare(CmpOp::Eq, o.clone(), c)?,
                None => c,
            };
            self.expect_bool(&c, "CASE WHEN")
                .map_err(|e| e.at(w.condition.span()))?;
            whens.push((c, self.bind_expr(&w.result, ctx)?));
        }
        let otherwise = else_result.map(|e| self.bind_expr(e, ctx)).transpose()?;
        // NULL branches take the type of the others.
        let typed: Vec<&Expr> = whens
            .iter()
            .map(|w| &w.1)
            .chain(otherwise.as_ref())
            .filter(|e| !e.is_null_literal())
            .collect();
        let mut ty = typed.first().map_or(SqlType::Int, |e| self.type_of(e));
        for v in typed {
            ty = unify(ty, self.type_of(v)).ok_or_else(|| {
                SqlError::mismatch(format!(
                    "CASE branches of types {ty} and {} do not match",
                    self.type_of(v)
                ))
            })?;
        }
        Ok(Expr::Case {
            whens,
            otherwise: otherwise.map(Box::new),
        })
    }

    /// The bound arguments of a plain call `name(e1, …)`: no DISTINCT,
    /// FILTER, OVER, ORDER BY or named arguments.
    fn plain_args(&mut self, name: &str, f: &ast::Function, ctx: &ExprCtx) -> Result<Vec<Expr>> {
        let FunctionArguments::List(list) = &f.args else {
            return Err(SqlError::unsupported(format!(
                "{name} without an argument list"
            )));
        };
        if f.filter.is_some()
            || f.over.is_some()
            || !list.clauses.is_empty()
            || list.duplicate_treatment.is_some()
        {
            return Err(SqlError::unsupported(format!(
                "{name}() with DISTINCT, FILTER, OVER or ORDER BY"
            )));
        }
        list.args
            .iter()
            .map(|a| match a {
                FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => self.bind_expr(e, ctx),
                _ => Err(SqlError::unsupported(format!(
                    "{name}() with these arguments"
                ))),
            })
            .collect()
    }

    /// `COALESCE(a, b, …)` as `CASE WHEN a IS NOT NULL THEN a WHEN … ELSE
    /// last END`, `NULLIF(a, b)` as `CASE WHEN a = b THEN NULL ELSE a END`.
    fn null_function(&mut self, name: &str, f: &ast::Function, ctx: &ExprCtx) -> Result<Expr> {
        let mut args = self.plain_args(name, f, ctx)?;
        let typed: Vec<SqlType> = args
            .iter()
            .filter(|e| !e.is_null_literal())
            .map(|e| self.type_of(e))
            .collect();
        let mut ty = typed.first().copied().unwrap_or(SqlType::Int);
        for t in &typed {
            ty = unify(ty, *t).ok_or_else(|| {
                SqlError::mismatch(format!("{name}() of types {ty} and {t} do not match"))
            })?;
        }
        match (name, args.len()) {
            ("coalesce", 0) => Err(SqlError::invalid("COALESCE needs an argument")),
            ("coalesce", _) => {
                let last = args.pop().expect("an argument");
                let whens = args
                    .into_iter()
                    .map(|a| {
                        (
                            Expr::IsNull {
                                expr: Box::new(a.clone()),
                                negated: true,
                            },
                            a,
                        )
                    })
                    .collect();
                Ok(Expr::Case {
                    whens,
                    otherwise: Some(Box::new(last)),
                })
            }
            ("nullif", 2) => {
                let b = args.pop().expect("two arguments");
                let a = args.pop().expect("two arguments");
                let eq = self.compare(CmpOp::Eq, a.clone(), b)?;
                Ok(Expr::Case {
                    whens: vec![(eq, Expr::null())],
                    otherwise: Some(Box::new(a)),
                })
            }
            _ => Err(SqlError::invalid("NULLIF needs two arguments")),
        }
    }

    /// `mod(a, b)` (`a % b`) and `ascii(s)` (the code of the first
    /// character, 0 for an empty string: PostgreSQL's, for UTF-8).
    fn scalar_function(&mut self, name: &str, f: &ast::Function, ctx: &ExprCtx) -> Result<Expr> {
        let mut args = self.plain_args(name, f, ctx)?;
        match (name, args.len()) {
            ("mod", 2) => {
                let b = args.pop().expect("two arguments");
                let a = args.pop().expect("two arguments");
                self.arith(ArithOp::Mod, a, b)
            }
            ("upper" | "lower" | "length" | "char_length" | "character_length", 1) => {
                let x = args.pop().expect("one argument");
                let func = match name {
                    "upper" => TextFn::Upper,
                    "lower" => TextFn::Lower,
                    _ => TextFn::Length,
                };
                match self.type_of(&x) {
                    SqlType::Str => Ok(Expr::Text(func, Box::new(x))),
                    _ if x.is_null_literal() => Ok(Expr::Text(func, Box::new(x))),
                    t => Err(SqlError::mismatch(format!("{name}() of a {t} value"))),
                }
            }
            // |x| as the CASE it is (so the operators evaluate it on numbers).
            ("abs", 1) => {
                let x = args.pop().expect("one argument");
                let t = self.type_of(&x);
                if !t.is_numeric() && !x.is_null_literal() {
                    return Err(SqlError::mismatch(format!("abs() of a {t} value")));
                }
                let negative = self.compare(CmpOp::Lt, x.clone(), Expr::Lit(Literal::int(0)))?;
                let negated = self.arith(ArithOp::Sub, Expr::Lit(Literal::int(0)), x.clone())?;
                Ok(Expr::Case {
                    whens: vec![(negative, negated)],
                    otherwise: Some(Box::new(x)),
                })
            }
            // round(x[, n]) of an exact number: x at scale n, half away
            // from zero (PostgreSQL's numeric round), as a CAST.
            ("round", 1 | 2) => {
                let n = match args.len() {
                    2 => match constant_folded(args.pop().expect("two arguments")) {
                        Expr::Lit(Literal::Num { value, scale: 0 })
                            if (0..=i64::from(MAX_SCALE)).contains(&value) =>
                        {
                            value as u8
                        }
                        _ => {
                            return Err(SqlError::unsupported(format!(
                                "round(x, n) with n other than a constant from 0 to {MAX_SCALE}"
                            )));
                        }
                    },
                    _ => 0,
                };
                let x = args.pop().expect("one argument");
                match self.type_of(&x) {
                    t if t.is_exact() || x.is_null_literal() => self.cast(x, SqlType::exact(n)),
                    t => Err(SqlError::unsupported(format!(
                        "round() of a {t} value (cast it to numeric)"
                    ))),
                }
            }
            ("ascii", 1) => {
                let x = args.pop().expect("one argument");
                match self.type_of(&x) {
                    SqlType::Str => Ok(Expr::Ascii(Box::new(x))),
                    _ if x.is_null_literal() => Ok(Expr::Ascii(Box::new(x))),
                    t => Err(SqlError::mismatch(format!("ascii() of a {t} value"))),
                }
            }
            (_, n) => Err(SqlError::invalid(format!(
                "function {name}() with {n} arguments does not exist"
            ))),
        }
    }

    /// `now()`, `current_timestamp`, `localtimestamp` (a TIMESTAMP) and
    /// `current_date` (a DATE): in UTC, when the statement's transaction
    /// began ([`Catalog::transaction_clock_us`]), so every statement of a
    /// transaction agrees, as in PostgreSQL; without a transaction, the
    /// clock when the statement was bound (one reading per statement).
    /// PostgreSQL gives `now()` a time zone; timestamps here have none.
    fn clock_function(&mut self, name: &str, f: &ast::Function) -> Result<Expr> {
        let no_arguments = match &f.args {
            FunctionArguments::None => true,
            FunctionArguments::List(list) => list.args.is_empty(),
            FunctionArguments::Subquery(_) => false,
        };
        if !no_arguments {
            return Err(SqlError::unsupported(format!(
                "{name} with arguments (a precision)"
            )));
        }
        let catalog = self.catalog;
        let us = *self.clock_us.get_or_insert_with(|| {
            catalog
                .transaction_clock_us()
                .unwrap_or_else(|| crate::types::epoch_us(std::time::SystemTime::now()))
        });
        Ok(Expr::Lit(match name {
            "current_date" => {
                Literal::Date(crate::types::timestamp_date(us).expect("today's date fits a DATE"))
            }
            _ => Literal::Timestamp(us),
        }))
    }

    fn function(&mut self, f: &ast::Function, ctx: &ExprCtx) -> Result<Expr> {
        let name = f.name.to_string().to_lowercase();
        // `bool_and`/`every` and `bool_or` are MIN and MAX of the
        // booleans as 0/1, compared with 1 (NULL over no values, as SUM's).
        let (func, of_booleans) = match name.as_str() {
            "sum" => (AggFunc::Sum, false),
            "count" => (AggFunc::Count, false),
            "avg" => (AggFunc::Avg, false),
            "min" => (AggFunc::Min, false),
            "max" => (AggFunc::Max, false),
            "bool_and" | "every" => (AggFunc::Min, true),
            "bool_or" => (AggFunc::Max, true),
            "coalesce" | "nullif" => return self.null_function(&name, f, ctx),
            "mod" | "ascii" | "upper" | "lower" | "length" | "char_length" | "character_length"
            | "abs" | "round" => {
                return self.scalar_function(&name, f, ctx);
            }
            "now" | "current_timestamp" | "localtimestamp" | "current_date" => {
                return self.clock_function(&name, f);
            }
            _ => return Err(SqlError::unsupported(format!("function {name}()"))),
        };
        if let Some(clause) = ctx.aggs_forbidden_in {
            return Err(SqlError::invalid(format!(
                "aggregate function {name}() is not allowed in {clause}"
            )));
        }
        let FunctionArguments::List(list) = &f.args else {
            return Err(SqlError::unsupported(format!(
                "{name} without an argument list"
            )));
        };
        if f.filter.is_some() || f.over.is_some() || !list.clauses.is_empty() {
            return Err(SqlError::unsupported(format!(
                "{name}() with FILTER, OVER or ORDER BY"
            )));
        }
        let distinct = matches!(list.duplicate_treatment, Some(DuplicateTreatment::Distinct));
        let (func, arg) = match (func, list.args.as_slice(), distinct) {
            (AggFunc::Count, [FunctionArg::Unnamed(FunctionArgExpr::Wildcard)], false) => {
                (AggFunc::CountStar, None)
            }
            (f, [FunctionArg::Unnamed(FunctionArgExpr::Expr(a))], d) => {
                let inner = ExprCtx {
                    scope: ctx.scope,
                    aggs_forbidden_in: Some("the argument of an aggregate"),
                };
                let mut x = self.bind_expr(a, &inner)?;
                if of_booleans {
                    self.expect_bool(&x, &format!("{name}()"))?;
                    x = Expr::Cast(Box::new(x), SqlType::Int);
                }
                let f = match (f, d) {
                    (AggFunc::Count, true) => AggFunc::CountDistinct,
                    (f, false) => f,
                    (_, true) => {
                        return Err(SqlError::unsupported(format!("{name}(DISTINCT …)")));
                    }
                };
                (f, Some(x))
            }
            _ => {
                return Err(SqlError::unsupported(format!(
                    "{name}() with these arguments"
                )));
            }
        };
        if let Some(x) = &arg {
            let t = self.type_of(x);
            let ok = match func {
                AggFunc::Sum | AggFunc::Avg => t.is_numeric(),
                // PostgreSQL has no MIN/MAX of booleans either.
                AggFunc::Min | AggFunc::Max => t != SqlType::Bool,
                _ => true,
            };
            if !ok {
                return Err(SqlError::mismatch(format!("{name}() of a {t} value")));
            }
        }
        let call = AggCall { func, arg };
        let text = format!("{f}");
        let column = Expr::Column(self.aggregate_column(call, text));
        Ok(if of_booleans {
            Expr::cmp(CmpOp::Eq, column, Expr::Lit(Literal::int(1)))
        } else {
            column
        })
    }

    /// The column of aggregate `call`, shared by equal calls.
    fn aggregate_column(&mut self, call: AggCall, text: String) -> ColumnId {
        if let Some((id, _)) = self.aggs.iter().find(|(_, c)| *c == call) {
            return *id;
        }
        let ty = match (&call.func, &call.arg) {
            (AggFunc::Count | AggFunc::CountStar | AggFunc::CountDistinct, _) => SqlType::Int,
            (AggFunc::Avg, _) => SqlType::Double,
            (_, Some(x)) => self.type_of(x),
            (_, None) => SqlType::Int,
        };
        let id = self.new_column(text, ty);
        // SUM, AVG, MIN, MAX of only NULLs are NULL.
        if !matches!(
            call.func,
            AggFunc::Count | AggFunc::CountStar | AggFunc::CountDistinct
        ) && call.arg.as_ref().is_some_and(|x| self.is_nullable(x))
        {
            self.nullable.insert(id);
        }
        self.aggs.push((id, call));
        id
    }

    /// `l || r`: text, each side cast to text unless it is text (or NULL),
    /// as PostgreSQL does for `anynonarray || text`; two non-text sides
    /// have no `||` (42883 there, a type mismatch here).
    fn concat(&mut self, l: Expr, r: Expr) -> Result<Expr> {
        let text = |b: &Self, e: &Expr| e.is_null_literal() || b.type_of(e) == SqlType::Str;
        if !text(self, &l) && !text(self, &r) {
            return Err(SqlError::mismatch(format!(
                "operator does not exist: {} || {}",
                self.type_of(&l),
                self.type_of(&r)
            )));
        }
        let as_text = |b: &mut Self, e: Expr| {
            if text(b, &e) {
                Ok(e)
            } else {
                b.cast(e, SqlType::Str)
            }
        };
        let l = as_text(self, l)?;
        let r = as_text(self, r)?;
        Ok(Expr::Concat(Box::new(l), Box::new(r)))
    }

    fn expect_bool(&self, e: &Expr, what: &str) -> Result<()> {
        match self.type_of(e) {
            SqlType::Bool => Ok(()),
            // An untyped NULL is a boolean NULL here (PostgreSQL resolves the
            // unknown literal to the type its context needs).
            _ if e.is_null_literal() => Ok(()),
            t => Err(SqlError::mismatch(format!(
                "{what} needs a boolean operand, not {t}"
            ))),
        }
    }

    fn arith(&mut self, op: ArithOp, l: Expr, r: Expr) -> Result<Expr> {
        self.arith_of(op, l, r, Folding::Fold)
    }

    fn arith_of(&mut self, op: ArithOp, l: Expr, r: Expr, folding: Folding) -> Result<Expr> {
        let (lt, rt) = (self.type_of(&l), self.type_of(&r));
        if let (Expr::Lit(a), Expr::Lit(b)) = (&l, &r)
            // Numbers computed at run time are the same numbers; dates are
            // not computed at run time (only `DATE ± INTERVAL` constants).
            && (folding == Folding::Fold || !(lt.is_numeric() && rt.is_numeric()))
            && let Some(folded) = fold(op, a, b)
        {
            return Ok(Expr::Lit(folded));
        }
        let ok = match op {
            ArithOp::Mul => {
                lt.is_numeric() && rt.is_numeric() && lt.scale() + rt.scale() <= MAX_SCALE
            }
            // PostgreSQL has no `%` for double precision.
            ArithOp::Mod => lt.is_exact() && rt.is_exact(),
            _ => lt.is_numeric() && rt.is_numeric(),
        };
        if !ok {
            if lt == SqlType::Date || rt == SqlType::Date {
                return Err(SqlError::unsupported(format!(
                    "date arithmetic ({lt} {op:?} {rt}) other than DATE '…' ± INTERVAL '…'"
                )));
            }
            return Err(SqlError::mismatch(format!(
                "cannot apply {op:?} to {lt} and {rt}"
            )));
        }
        Ok(Expr::Arith(op, Box::new(l), Box::new(r)))
    }

    pub(super) fn compare(&mut self, op: CmpOp, l: Expr, r: Expr) -> Result<Expr> {
        if l.is_null_literal() || r.is_null_literal() {
            // Comparing with NULL is NULL, whatever the type.
            return Ok(Expr::cmp(op, l, r));
        }
        let (lt, rt) = (self.type_of(&l), self.type_of(&r));
        let l = coerce_to(l, rt)?;
        let r = coerce_to(r, lt)?;
        let (lt, rt) = (self.type_of(&l), self.type_of(&r));
        if !lt.comparable(rt) || lt == SqlType::Interval {
            return Err(SqlError::mismatch(format!("cannot compare {lt} with {rt}")));
        }
        Ok(Expr::cmp(op, l, r))
    }

    /// The type of a bound expression (bound expressions are checked).
    pub(crate) fn type_of(&self, e: &Expr) -> SqlType {
        type_of(e, &|c| self.columns[c.0].ty)
    }
}

/// The type of `e`, given its columns' types.
pub(crate) fn type_of(e: &Expr, col: &dyn Fn(ColumnId) -> SqlType) -> SqlType {
    match e {
        Expr::Column(c) => col(*c),
        Expr::Lit(l) => l.sql_type(),
        Expr::Arith(op, a, b) => {
            let (ta, tb) = (type_of(a, col), type_of(b, col));
            match op {
                _ if ta == SqlType::Double || tb == SqlType::Double => SqlType::Double,
                ArithOp::Div => SqlType::Double,
                ArithOp::Mul => SqlType::exact(ta.scale() + tb.scale()),
                ArithOp::Add | ArithOp::Sub | ArithOp::Mod => {
                    SqlType::exact(ta.scale().max(tb.scale()))
                }
            }
        }
        Expr::Cmp(..)
        | Expr::And(_)
        | Expr::Or(_)
        | Expr::Not(_)
        | Expr::InList { .. }
        | Expr::Like { .. }
        | Expr::IsNull { .. } => SqlType::Bool,
        Expr::Substring { .. } | Expr::Concat(..) => SqlType::Str,
        Expr::Text(TextFn::Length, _) => SqlType::Int,
        Expr::Text(..) => SqlType::Str,
        Expr::Cast(_, t) => *t,
        Expr::Case { whens, otherwise } => {
            let mut typed = whens
                .iter()
                .map(|w| &w.1)
                .chain(otherwise.as_deref())
                .filter(|e| !e.is_null_literal());
            let first = typed.next().map_or(SqlType::Int, |e| type_of(e, col));
            typed.fold(first, |t, v| unify(t, type_of(v, col)).unwrap_or(t))
        }
        Expr::Year(_) | Expr::Ascii(_) => SqlType::Int,
    }
}

/// The common type of two CASE branches.
fn unify(a: SqlType, b: SqlType) -> Option<SqlType> {
    match (a, b) {
        _ if a == b => Some(a),
        (SqlType::Double, t) | (t, SqlType::Double) if t.is_numeric() => Some(SqlType::Double),
        _ if a.is_exact() && b.is_exact() => Some(SqlType::exact(a.scale().max(b.scale()))),
        _ => None,
    }
}

/// A timestamp literal's text, or 22007 as PostgreSQL reports it.
fn parse_timestamp_lit(s: &str) -> Result<i64> {
    crate::types::parse_timestamp(s).ok_or_else(|| {
        SqlError::mismatch(format!(
            "invalid timestamp '{s}' (expected YYYY-MM-DD[ HH:MM:SS[.ffffff]])"
        ))
    })
}

/// A string literal compared with a date (timestamp) is a date (timestamp),
/// as in PostgreSQL.
fn coerce_to(e: Expr, target: SqlType) -> Result<Expr> {
    match (e, target) {
        (Expr::Lit(Literal::Str(s)), SqlType::Date) => {
            Ok(Expr::Lit(Literal::Date(parse_date(&s)?)))
        }
        (Expr::Lit(Literal::Str(s)), SqlType::Timestamp) => {
            Ok(Expr::Lit(Literal::Timestamp(parse_timestamp_lit(&s)?)))
        }
        (e, _) => Ok(e),
    }
}

/// Whether the binder folds constant arithmetic into one constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Folding {
    /// Both operands are the statement's own constants.
    Fold,
    /// An operand is a parameter (`$1 + 1`): numbers stay an expression,
    /// so a plan cache can put another value in (`plan_cache.rs`), and
    /// [`constant_arithmetic`] folds them once the plan has its values.
    KeepParameter,
}

impl Folding {
    fn of(operands: &[&ast::Expr]) -> Folding {
        if operands.iter().any(|e| is_parameter(e)) {
            Folding::KeepParameter
        } else {
            Folding::Fold
        }
    }
}

/// Whether `e` is a parameter `$n`: in parentheses, negated or cast, too
/// (each of those is folded into a constant).
fn is_parameter(e: &ast::Expr) -> bool {
    match e {
        ast::Expr::Nested(inner)
        | ast::Expr::Cast { expr: inner, .. }
        | ast::Expr::UnaryOp { expr: inner, .. } => is_parameter(inner),
        _ => placeholder(e).is_some(),
    }
}

/// The value of `e` if it is constant arithmetic over numbers (and dates ±
/// intervals) the binder left unfolded ([`Folding::KeepParameter`]).
pub(crate) fn constant_arithmetic(e: &Expr) -> Option<Literal> {
    match e {
        Expr::Lit(l) => Some(l.clone()),
        Expr::Arith(op, a, b) => fold(*op, &constant_arithmetic(a)?, &constant_arithmetic(b)?),
        _ => None,
    }
}

/// `e` as one constant if it is constant arithmetic ([`constant_arithmetic`]).
fn constant_folded(e: Expr) -> Expr {
    match constant_arithmetic(&e) {
        Some(l) => Expr::Lit(l),
        None => e,
    }
}

/// Constant arithmetic: exact numbers (not division), and dates ± intervals.
fn fold(op: ArithOp, a: &Literal, b: &Literal) -> Option<Literal> {
    if let (
        Literal::Num {
            value: x,
            scale: sx,
        },
        Literal::Num {
            value: y,
            scale: sy,
        },
    ) = (a, b)
    {
        let up = |v: i64, by: u8| v.checked_mul(10i64.checked_pow(u32::from(by))?);
        let s = (*sx).max(*sy);
        let (x2, y2) = (up(*x, s - sx)?, up(*y, s - sy)?);
        return match op {
            ArithOp::Add => Some(Literal::Num {
                value: x2.checked_add(y2)?,
                scale: s,
            }),
            ArithOp::Sub => Some(Literal::Num {
                value: x2.checked_sub(y2)?,
                scale: s,
            }),
            ArithOp::Mul if sx + sy <= MAX_SCALE => Some(Literal::Num {
                value: x.checked_mul(*y)?,
                scale: sx + sy,
            }),
            _ => None,
        };
    }
    fold_date(op, a, b)
}

fn fold_date(op: ArithOp, a: &Literal, b: &Literal) -> Option<Literal> {
    let shift = |d: Date, months: i32, days: i32, sign: i32| {
        Literal::Date(d.add_months(sign * months).add_days(sign * days))
    };
    match (op, a, b) {
        (ArithOp::Add, Literal::Date(d), Literal::Interval { months, days })
        | (ArithOp::Add, Literal::Interval { months, days }, Literal::Date(d)) => {
            Some(shift(*d, *months, *days, 1))
        }
        (ArithOp::Sub, Literal::Date(d), Literal::Interval { months, days }) => {
            Some(shift(*d, *months, *days, -1))
        }
        _ => None,
    }
}

/// The type `CAST(… AS t)` converts to.
fn cast_target(t: &ast::DataType) -> Result<SqlType> {
    use ast::DataType as D;
    Ok(match t {
        D::Int(_)
        | D::Integer(_)
        | D::BigInt(_)
        | D::SmallInt(_)
        | D::Int2(_)
        | D::Int4(_)
        | D::Int8(_) => SqlType::Int,
        D::Numeric(info) | D::Decimal(info) | D::Dec(info) => match info {
            ast::ExactNumberInfo::PrecisionAndScale(_, s) => u8::try_from(*s)
                .ok()
                .filter(|&s| s <= MAX_SCALE)
                .map(SqlType::exact)
                .ok_or_else(|| SqlError::unsupported(format!("{t} (scale 0 to {MAX_SCALE})")))?,
            ast::ExactNumberInfo::Precision(_) => SqlType::Int,
            ast::ExactNumberInfo::None => {
                return Err(SqlError::unsupported(format!(
                    "CAST to {t} without a scale (write DECIMAL(p,s))"
                )));
            }
        },
        D::Double(_) | D::DoublePrecision | D::Float(_) | D::Float8 | D::Real | D::Float4 => {
            SqlType::Double
        }
        D::Varchar(_) | D::Text | D::Char(_) | D::CharacterVarying(_) | D::String(_) => {
            SqlType::Str
        }
        D::Date => SqlType::Date,
        D::Timestamp(None, ast::TimezoneInfo::None | ast::TimezoneInfo::WithoutTimeZone) => {
            SqlType::Timestamp
        }
        D::Bool | D::Boolean => SqlType::Bool,
        other => return Err(SqlError::unsupported(format!("CAST to {other}"))),
    })
}

/// The placeholder's name if `e` is a parameter `$n` (in parentheses or not).
fn placeholder(e: &ast::Expr) -> Option<&str> {
    match e {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::Placeholder(name) => Some(name),
            _ => None,
        },
        ast::Expr::Nested(inner) => placeholder(inner),
        _ => None,
    }
}
