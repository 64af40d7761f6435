//! The binder: one parsed statement to a [`LogicalPlan`]. It resolves names
//! against the [`Catalog`] (aliases, qualified and unqualified columns),
//! checks types, collects aggregates, and builds the canonical plan the
//! optimizer starts from: the FROM tables as cross products in FROM order,
//! one filter with every WHERE and ON conjunct, then aggregate, HAVING,
//! sort, limit and the projection.

mod expr;
mod from;
mod literal;
pub(crate) mod scope;
mod series;
mod subquery;

pub use series::SERIES_ROWS_MAX;

use sqlparser::ast::{
    self, GroupByExpr, LimitClause, OrderByKind, SelectItem, SelectItemQualifiedWildcardKind,
    SetExpr, Spanned, Statement,
};

use crate::catalog::Catalog;
use crate::error::{Result, SqlError};
use crate::params::{ParamValue, Params};
use crate::types::SqlType;
use std::collections::BTreeSet;

use crate::plan::{
    AggCall, AggFunc, CmpOp, ColumnId, ColumnInfo, Direction, Expr, JoinKind, LogicalPlan, Plan,
};
use expr::ExprCtx;
pub(crate) use expr::{constant_arithmetic, type_of};
use scope::{Scope, normalize};

/// A bound statement.
pub struct BoundStatement {
    pub plan: LogicalPlan,
    /// `EXPLAIN [ANALYZE]`: print the plan instead of the rows.
    pub explain: crate::Explain,
    /// The types of its parameters `$1`, `$2`, … (declared or inferred).
    pub param_types: Vec<SqlType>,
    /// Whether a clock function (`now()`, …) was read into the plan as a
    /// constant: such a plan holds for this statement's execution only
    /// (`plan_cache.rs` does not keep it).
    pub reads_clock: bool,
}

pub(crate) struct Binder<'c> {
    catalog: &'c dyn Catalog,
    columns: Vec<ColumnInfo>,
    /// The aggregate calls met so far, each under its output column.
    aggs: Vec<(ColumnId, AggCall)>,
    /// The subqueries met while binding the current clause.
    pending: Vec<Pending>,
    /// The WITH queries in scope (name, column aliases, body), innermost last.
    ctes: Vec<(String, Vec<String>, ast::Query)>,
    /// Columns that may hold NULL: the padded side of a LEFT JOIN, SUM,
    /// AVG, MIN and MAX without GROUP BY, casts that may fail.
    nullable: BTreeSet<ColumnId>,
    /// Derived tables without an alias, for their generated names.
    unnamed: usize,
    /// The statement's parameters: their types, and their values if given.
    params: Params,
    /// The clock as the statement's first `now()` read it (µs since the
    /// epoch, UTC), so every clock function of one statement agrees.
    clock_us: Option<i64>,
}

/// A subquery of an expression, joined to the query it appears in.
pub(crate) enum Pending {
    /// A scalar subquery: `plan` (an aggregate; grouped by the inner sides
    /// of `conds` when correlated) joined as one more FROM item, with
    /// `conds` (`outer = group column`) added to WHERE; `values` are the
    /// columns its value reads.
    Scalar {
        plan: Plan,
        conds: Vec<Expr>,
        values: BTreeSet<ColumnId>,
        correlated: bool,
        /// A correlated COUNT: rows without a group must be kept.
        count: bool,
    },
    /// `[NOT] EXISTS` / `[NOT] IN (SELECT …)`: a semi (anti) join on
    /// `keys` and `residual`, standing in the condition as the boolean
    /// column `marker`.
    Semi {
        marker: ColumnId,
        anti: bool,
        /// `IN (SELECT …)` rather than `EXISTS`: negated, a NULL key makes
        /// the test NULL ([`JoinKind::AntiIn`]).
        in_list: bool,
        plan: Plan,
        keys: Vec<(Expr, Expr)>,
        residual: Vec<Expr>,
    },
}

/// A bound query: its plan (ending with the projection) and, for a
/// subquery, the WHERE conjuncts that read the enclosing queries' columns.
pub(crate) struct BoundQuery {
    pub plan: Plan,
    pub correlated: Vec<Expr>,
}

/// Binds one statement without parameters (a `$n` in it is an error).
pub fn bind(catalog: &dyn Catalog, stmt: &Statement) -> Result<BoundStatement> {
    bind_with(catalog, stmt, &[], Some(Vec::new()))
}

/// Binds one statement with parameters: `declared` are the types the client
/// gave (`None`: infer from the context); `values` the values of an
/// execution, or `None` to only infer the types (each `$n` then stands for
/// some value of its type: the plan is for describing, not for running).
pub fn bind_with(
    catalog: &dyn Catalog,
    stmt: &Statement,
    declared: &[Option<SqlType>],
    values: Option<Vec<ParamValue>>,
) -> Result<BoundStatement> {
    let (query, explain) = match stmt {
        Statement::Query(q) => (q, crate::Explain::No),
        Statement::Explain {
            statement, analyze, ..
        } => match statement.as_ref() {
            Statement::Query(q) if *analyze => (q, crate::Explain::Analyze),
            Statement::Query(q) => (q, crate::Explain::Plan),
            other => return Err(SqlError::unsupported(format!("EXPLAIN of {}", kind(other)))),
        },
        other => return Err(SqlError::unsupported(kind(other))),
    };
    let mut b = Binder {
        catalog,
        columns: Vec::new(),
        aggs: Vec::new(),
        pending: Vec::new(),
        ctes: Vec::new(),
        nullable: BTreeSet::new(),
        unnamed: 0,
        params: Params {
            types: declared.to_vec(),
            values,
        },
        clock_us: None,
    };
    let root = b.query(query, None)?.plan;
    Ok(BoundStatement {
        reads_clock: b.clock_us.is_some(),
        param_types: b.params.final_types(),
        plan: LogicalPlan {
            root,
            columns: b.columns,
            estimates: Vec::new(),
        },
        explain,
    })
}

/// A short name for a statement this slice does not run.
fn kind(stmt: &Statement) -> String {
    let text = stmt.to_string();
    let words: Vec<&str> = text.split_whitespace().take(2).collect();
    format!(
        "{} statements (only SELECT and EXPLAIN SELECT)",
        words.join(" ")
    )
}

impl Binder<'_> {
    fn new_column(&mut self, name: String, ty: crate::types::SqlType) -> ColumnId {
        self.columns.push(ColumnInfo { name, ty });
        ColumnId(self.columns.len() - 1)
    }

    /// Binds a query (a subquery when `parent` is the enclosing scope); the
    /// aggregates and subqueries of the enclosing query are kept aside.
    pub(crate) fn query(&mut self, q: &ast::Query, parent: Option<&Scope>) -> Result<BoundQuery> {
        let aggs = std::mem::take(&mut self.aggs);
        let pending = std::mem::take(&mut self.pending);
        let ctes = self.ctes.len();
        let r = self.query_inner(q, parent);
        self.ctes.truncate(ctes);
        self.aggs = aggs;
        self.pending = pending;
        r
    }

    fn query_inner(&mut self, q: &ast::Query, parent: Option<&Scope>) -> Result<BoundQuery> {
        if let Some(with) = &q.with {
            if with.recursive {
                return Err(SqlError::unsupported("WITH RECURSIVE"));
            }
            for cte in &with.cte_tables {
                let cols = cte
                    .alias
                    .columns
                    .iter()
                    .map(|c| normalize(&c.name))
                    .collect();
                self.ctes
                    .push((normalize(&cte.alias.name), cols, (*cte.query).clone()));
            }
        }
        if q.fetch.is_some() || !q.locks.is_empty() {
            return Err(SqlError::unsupported("FETCH / FOR UPDATE"));
        }
        let select = match q.body.as_ref() {
            SetExpr::Select(s) => s,
            SetExpr::Query(_) => return Err(SqlError::unsupported("a parenthesized query")),
            SetExpr::SetOperation { op, .. } => {
                return Err(SqlError::unsupported(format!("{op} (set operations)")));
            }
            SetExpr::Values(_) => return Err(SqlError::unsupported("VALUES")),
            _ => return Err(SqlError::unsupported("this kind of query body")),
        };
        let distinct = match &select.distinct {
            None | Some(ast::Distinct::All) => false,
            Some(ast::Distinct::Distinct) => true,
            Some(_) => {
                return Err(SqlError::unsupported("SELECT DISTINCT ON").at(select.span()));
            }
        };
        if select.top.is_some() || select.into.is_some() || select.qualify.is_some() {
            return Err(SqlError::unsupported("TOP, INTO or QUALIFY"));
        }
        let mut scope = Scope {
            tables: Vec::new(),
            parent,
        };
        let (from, mut conjuncts) = self.from(&select.from, &mut scope)?;
        self.no_subqueries("JOIN … ON")?;
        let where_ctx = ExprCtx {
            scope: &scope,
            aggs_forbidden_in: Some("WHERE"),
        };
        if let Some(w) = &select.selection {
            let p = self.bind_hinted(w, &where_ctx, Some(SqlType::Bool))?;
            self.bool_clause(&p, "WHERE", w)?;
            conjuncts.extend(p.conjuncts());
        }
        let mut plan = from;
        // Subqueries of WHERE: scalar ones are FROM items, EXISTS/IN are
        // semi (anti) joins above the FROM items and the other conditions.
        let mut semis = Vec::new();
        // Correlated scalar subqueries whose missing group matters (COUNT,
        // or a condition that does not reject NULL): LEFT JOINed on their
        // correlation keys after the other conditions, the conditions
        // reading them after that.
        let mut outer_leaves: Vec<(Plan, Vec<(Expr, Expr)>)> = Vec::new();
        let mut outer_values: BTreeSet<ColumnId> = BTreeSet::new();
        let enclosing = scope.outer_columns();
        for sub in std::mem::take(&mut self.pending) {
            match sub {
                Pending::Scalar {
                    plan: leaf,
                    conds,
                    values,
                    correlated,
                    count,
                } => {
                    if correlated
                        && (count
                            || conjuncts.iter().any(|c| {
                                c.columns().iter().any(|x| values.contains(x))
                                    && !rejects_null(c, &values)
                            }))
                    {
                        let mut keys = Vec::new();
                        for c in conds {
                            let Expr::Cmp(CmpOp::Eq, outer, group) = c else {
                                return Err(SqlError::invalid(
                                    "a correlation condition is an equality",
                                ));
                            };
                            if outer.columns().iter().any(|x| enclosing.contains(x)) {
                                return Err(SqlError::unsupported(
                                    "a correlated COUNT (or NULL-tested) scalar subquery correlated with a query two levels up",
                                ));
                            }
                            keys.push((*outer, *group));
                        }
                        self.nullable.extend(leaf.output_columns());
                        outer_values.extend(values);
                        outer_leaves.push((leaf, keys));
                        continue;
                    }
                    plan = Plan::Join {
                        left: Box::new(plan),
                        right: Box::new(leaf),
                        kind: JoinKind::Inner,
                        keys: Vec::new(),
                        residual: Vec::new(),
                    };
                    conjuncts.extend(conds);
                }
                Pending::Semi {
                    marker,
                    anti,
                    in_list,
                    plan: sub,
                    keys,
                    residual,
                } => {
                    let pos = conjuncts.iter().position(|c| match c {
                        Expr::Column(m) => *m == marker,
                        Expr::Not(x) => **x == Expr::Column(marker),
                        _ => false,
                    });
                    let Some(pos) = pos else {
                        return Err(SqlError::unsupported(
                            "EXISTS / IN (SELECT …) other than as a condition joined by AND in WHERE",
                        ));
                    };
                    let negated = matches!(conjuncts.remove(pos), Expr::Not(_));
                    if conjuncts.iter().any(|c| c.columns().contains(&marker)) {
                        return Err(SqlError::unsupported(
                            "EXISTS / IN (SELECT …) other than as a condition joined by AND in WHERE",
                        ));
                    }
                    let kind = match (anti != negated, in_list) {
                        (false, _) => JoinKind::Semi,
                        (true, false) => JoinKind::Anti,
                        (true, true) => JoinKind::AntiIn,
                    };
                    semis.push((kind, sub, keys, residual));
                }
            }
        }
        let outer = enclosing;
        let (correlated, local): (Vec<Expr>, Vec<Expr>) = conjuncts
            .into_iter()
            .partition(|c| c.columns().iter().any(|x| outer.contains(x)));
        let (after, local): (Vec<Expr>, Vec<Expr>) = local
            .into_iter()
            .partition(|c| c.columns().iter().any(|x| outer_values.contains(x)));
        if !local.is_empty() {
            plan = Plan::Filter {
                input: Box::new(plan),
                predicate: local,
            };
        }
        for (leaf, keys) in outer_leaves {
            plan = Plan::Join {
                left: Box::new(plan),
                right: Box::new(leaf),
                kind: JoinKind::LeftOuter,
                keys,
                residual: Vec::new(),
            };
        }
        if !after.is_empty() {
            plan = Plan::Filter {
                input: Box::new(plan),
                predicate: after,
            };
        }
        for (kind, sub, keys, residual) in semis {
            plan = Plan::Join {
                left: Box::new(plan),
                right: Box::new(sub),
                kind,
                keys,
                residual,
            };
        }
        // SELECT items (aggregates become columns of the aggregation).
        let item_ctx = ExprCtx {
            scope: &scope,
            aggs_forbidden_in: None,
        };
        let mut outputs: Vec<(String, Expr, Option<ast::Expr>)> = Vec::new();
        for item in &select.projection {
            self.select_item(item, &scope, &item_ctx, &mut outputs)?;
        }
        // Uncorrelated scalar subqueries of the SELECT list: one-row cross
        // products, after the aggregation if there is one.
        let mut select_leaves = Vec::new();
        for sub in std::mem::take(&mut self.pending) {
            match sub {
                Pending::Scalar {
                    plan,
                    correlated: false,
                    ..
                } => select_leaves.push(plan),
                _ => {
                    return Err(SqlError::unsupported(
                        "subqueries in the SELECT list other than uncorrelated scalar ones",
                    ));
                }
            }
        }
        let group_exprs = match &select.group_by {
            GroupByExpr::Expressions(es, mods) if mods.is_empty() => es.as_slice(),
            _ => return Err(SqlError::unsupported("GROUP BY ALL / ROLLUP / CUBE")),
        };
        let mut groups = Vec::new();
        let group_ctx = ExprCtx {
            scope: &scope,
            aggs_forbidden_in: Some("GROUP BY"),
        };
        for g in group_exprs {
            let g = self.group_key(g, &group_ctx, &outputs)?;
            groups.push(g);
        }
        self.no_subqueries("GROUP BY")?;
        let having = match &select.having {
            Some(h) => {
                let p = self.bind_hinted(h, &item_ctx, Some(SqlType::Bool))?;
                self.bool_clause(&p, "HAVING", h)?;
                Some((p, h))
            }
            None => None,
        };
        let mut having_leaves = Vec::new();
        for sub in std::mem::take(&mut self.pending) {
            match sub {
                Pending::Scalar {
                    plan,
                    correlated: false,
                    ..
                } => having_leaves.push(plan),
                _ => {
                    return Err(SqlError::unsupported(
                        "subqueries in HAVING other than uncorrelated scalar ones",
                    ));
                }
            }
        }
        let mut sort_keys = Vec::new();
        let mut nulls_first = Vec::new();
        if let Some(ob) = &q.order_by {
            let OrderByKind::Expressions(keys) = &ob.kind else {
                return Err(SqlError::unsupported("ORDER BY ALL"));
            };
            for k in keys {
                let e = self.order_key(&k.expr, &item_ctx, &outputs)?;
                let dir = match &k.options.sort {
                    Some(ast::OrderBySort::Desc) => Direction::Desc,
                    Some(ast::OrderBySort::Asc) | None => Direction::Asc,
                    Some(_) => {
                        return Err(SqlError::unsupported("ORDER BY … USING").at(k.expr.span()));
                    }
                };
                // PostgreSQL's default: NULLs sort as if larger than any value.
                nulls_first.push(k.options.nulls_first.unwrap_or(dir == Direction::Desc));
                sort_keys.push((e, dir, k.expr.clone()));
            }
        }
        self.no_subqueries("ORDER BY")?;
        if groups.is_empty() && self.aggs.is_empty() {
            for leaf in select_leaves {
                plan = Plan::Join {
                    left: Box::new(plan),
                    right: Box::new(leaf),
                    kind: JoinKind::Inner,
                    keys: Vec::new(),
                    residual: Vec::new(),
                };
            }
        } else {
            having_leaves.extend(select_leaves);
        }
        plan = self.grouping(
            plan,
            groups,
            having,
            having_leaves,
            &mut outputs,
            &mut sort_keys,
        )?;
        if distinct {
            plan = self.distinct(plan, &mut outputs, &mut sort_keys)?;
        }
        if !sort_keys.is_empty() {
            plan = Plan::Sort {
                input: Box::new(plan),
                keys: sort_keys
                    .into_iter()
                    .zip(nulls_first)
                    .map(|((e, d, _), n)| (e, d, n))
                    .collect(),
            };
        }
        let (count, offset) = self.limit(q.limit_clause.as_ref())?;
        if count.is_some() || offset > 0 {
            plan = Plan::Limit {
                input: Box::new(plan),
                count: count.unwrap_or(usize::MAX),
                offset,
            };
        }
        let plan = Plan::Project {
            input: Box::new(plan),
            outputs: outputs.into_iter().map(|(n, e, _)| (n, e)).collect(),
        };
        // Outer columns may only be read by the correlated WHERE conjuncts.
        let mut read = BTreeSet::new();
        plan.read_columns(&mut read);
        if read.iter().any(|c| outer.contains(c)) {
            return Err(SqlError::unsupported(
                "a correlated reference outside the subquery's WHERE conditions joined by AND",
            ));
        }
        Ok(BoundQuery { plan, correlated })
    }

    /// An error if the clause just bound had subqueries.
    fn no_subqueries(&mut self, clause: &str) -> Result<()> {
        if self.pending.is_empty() {
            Ok(())
        } else {
            self.pending.clear();
            Err(SqlError::unsupported(format!("subqueries in {clause}")))
        }
    }

    /// SELECT DISTINCT: an aggregation grouping by every output.
    fn distinct(
        &mut self,
        plan: Plan,
        outputs: &mut [(String, Expr, Option<ast::Expr>)],
        sort_keys: &mut [(Expr, Direction, ast::Expr)],
    ) -> Result<Plan> {
        let mut groups: Vec<(ColumnId, Expr)> = Vec::new();
        for (name, e, _) in outputs.iter() {
            if groups.iter().any(|g| g.1 == *e) {
                continue;
            }
            let id = match e {
                Expr::Column(c) if !groups.iter().any(|g| g.0 == *c) => *c,
                _ => {
                    let ty = self.type_of(e);
                    self.new_column(name.clone(), ty)
                }
            };
            groups.push((id, e.clone()));
        }
        let allowed: Vec<ColumnId> = groups.iter().map(|g| g.0).collect();
        for (_, e, _) in outputs.iter_mut() {
            *e = regroup(e, &groups);
        }
        for (e, _, ast) in sort_keys.iter_mut() {
            *e = regroup(e, &groups);
            if e.columns().iter().any(|c| !allowed.contains(c)) {
                return Err(SqlError::invalid(
                    "for SELECT DISTINCT, ORDER BY expressions must appear in the select list",
                )
                .at(ast.span()));
            }
        }
        Ok(Plan::Aggregate {
            input: Box::new(plan),
            groups,
            aggs: Vec::new(),
        })
    }

    /// The aggregation, if the query groups or aggregates: SELECT, HAVING
    /// and ORDER BY expressions rewritten onto the group and aggregate
    /// columns, and checked to read nothing else.
    fn grouping(
        &mut self,
        plan: Plan,
        groups: Vec<(ColumnId, Expr)>,
        having: Option<(Expr, &ast::Expr)>,
        having_leaves: Vec<Plan>,
        outputs: &mut [(String, Expr, Option<ast::Expr>)],
        sort_keys: &mut [(Expr, Direction, ast::Expr)],
    ) -> Result<Plan> {
        if groups.is_empty() && self.aggs.is_empty() {
            if having.is_some() {
                return Err(SqlError::invalid("HAVING without GROUP BY or aggregates"));
            }
            return Ok(plan);
        }
        if groups.is_empty() {
            // SUM, AVG, MIN, MAX of no rows are NULL.
            for (id, a) in &self.aggs {
                if !matches!(
                    a.func,
                    AggFunc::Count | AggFunc::CountStar | AggFunc::CountDistinct
                ) {
                    self.nullable.insert(*id);
                }
            }
        }
        let mut allowed: Vec<ColumnId> = groups
            .iter()
            .map(|g| g.0)
            .chain(self.aggs.iter().map(|a| a.0))
            .collect();
        for leaf in &having_leaves {
            allowed.extend(leaf.output_columns());
        }
        for (name, e, ast) in outputs.iter_mut() {
            *e = regroup(e, &groups);
            check_grouped(e, &allowed, self, ast.as_ref(), name)?;
        }
        for (e, _, ast) in sort_keys.iter_mut() {
            *e = regroup(e, &groups);
            check_grouped(e, &allowed, self, Some(&*ast), "ORDER BY")?;
        }
        let mut plan = Plan::Aggregate {
            input: Box::new(plan),
            groups: groups.clone(),
            aggs: std::mem::take(&mut self.aggs),
        };
        for leaf in having_leaves {
            plan = Plan::Join {
                left: Box::new(plan),
                right: Box::new(leaf),
                kind: JoinKind::Inner,
                keys: Vec::new(),
                residual: Vec::new(),
            };
        }
        if let Some((p, ast)) = having {
            let p = regroup(&p, &groups);
            check_grouped(&p, &allowed, self, Some(ast), "HAVING")?;
            plan = Plan::Filter {
                input: Box::new(plan),
                predicate: p.conjuncts(),
            };
        }
        Ok(plan)
    }

    fn bool_clause(&self, p: &Expr, clause: &str, ast: &ast::Expr) -> Result<()> {
        let t = self.type_of(p);
        // An untyped NULL is a boolean NULL (as in PostgreSQL): no row qualifies.
        if t != crate::types::SqlType::Bool && !p.is_null_literal() {
            return Err(
                SqlError::mismatch(format!("{clause} needs a boolean condition, not {t}"))
                    .at(ast.span()),
            );
        }
        Ok(())
    }

    fn select_item(
        &mut self,
        item: &SelectItem,
        scope: &Scope,
        ctx: &ExprCtx,
        out: &mut Vec<(String, Expr, Option<ast::Expr>)>,
    ) -> Result<()> {
        match item {
            SelectItem::UnnamedExpr(e) => {
                let name = match e {
                    ast::Expr::Identifier(id) => normalize(id),
                    ast::Expr::CompoundIdentifier(ids) => {
                        ids.last().map(normalize).unwrap_or_default()
                    }
                    e => e.to_string(),
                };
                out.push((name, self.bind_expr(e, ctx)?, Some(e.clone())));
            }
            SelectItem::ExprWithAlias { expr, alias } => {
                out.push((
                    normalize(alias),
                    self.bind_expr(expr, ctx)?,
                    Some(expr.clone()),
                ));
            }
            SelectItem::Wildcard(_) => {
                for t in &scope.tables {
                    for (n, id) in &t.columns {
                        out.push((n.clone(), Expr::Column(*id), None));
                    }
                }
            }
            SelectItem::QualifiedWildcard(SelectItemQualifiedWildcardKind::ObjectName(n), _) => {
                let q = match n.0.as_slice() {
                    [ast::ObjectNamePart::Identifier(id)] => id,
                    _ => return Err(SqlError::unsupported(format!("{n}.*"))),
                };
                for (n, id) in &scope.table(q)?.columns {
                    out.push((n.clone(), Expr::Column(*id), None));
                }
            }
            other => return Err(SqlError::unsupported(format!("SELECT item {other}"))),
        }
        Ok(())
    }

    /// A GROUP BY key: an expression, an output alias or an output ordinal.
    fn group_key(
        &mut self,
        g: &ast::Expr,
        ctx: &ExprCtx,
        outputs: &[(String, Expr, Option<ast::Expr>)],
    ) -> Result<(ColumnId, Expr)> {
        let e = match self.output_ref(g, outputs)? {
            Some(e) => e,
            None => self.bind_expr(g, ctx)?,
        };
        Ok(match e {
            Expr::Column(c) => (c, e),
            e => {
                let ty = self.type_of(&e);
                (self.new_column(g.to_string(), ty), e)
            }
        })
    }

    /// An ORDER BY key: an output alias or ordinal, else an expression.
    fn order_key(
        &mut self,
        k: &ast::Expr,
        ctx: &ExprCtx,
        outputs: &[(String, Expr, Option<ast::Expr>)],
    ) -> Result<Expr> {
        match self.output_ref(k, outputs)? {
            Some(e) => Ok(e),
            None => self.bind_expr(k, ctx),
        }
    }

    /// `k` as a reference to a SELECT output: an integer ordinal, or a bare
    /// name that is an output's name but not a column (PostgreSQL prefers the
    /// output name in ORDER BY; so do we, also in GROUP BY).
    fn output_ref(
        &self,
        k: &ast::Expr,
        outputs: &[(String, Expr, Option<ast::Expr>)],
    ) -> Result<Option<Expr>> {
        match k {
            ast::Expr::Value(v) => match &v.value {
                ast::Value::Number(n, _) => {
                    let i: usize = n.parse().unwrap_or(0);
                    match outputs.get(i.wrapping_sub(1)) {
                        Some(o) => Ok(Some(o.1.clone())),
                        None => Err(SqlError::invalid(format!(
                            "position {n} is not in the select list (1 to {})",
                            outputs.len()
                        ))
                        .at(k.span())),
                    }
                }
                _ => Ok(None),
            },
            ast::Expr::Identifier(id) => {
                let n = normalize(id);
                Ok(outputs.iter().find(|o| o.0 == n).map(|o| o.1.clone()))
            }
            _ => Ok(None),
        }
    }
}

/// Whether `c` is a comparison that is NULL (so rejected by WHERE)
/// whenever a column of `values` is: the columns reach it only through
/// arithmetic, CAST, EXTRACT and SUBSTRING, which keep a NULL a NULL — not
/// through CASE, IS NULL, AND/OR/NOT, which may turn it into a value.
fn rejects_null(c: &Expr, values: &BTreeSet<ColumnId>) -> bool {
    fn strict(e: &Expr, values: &BTreeSet<ColumnId>) -> bool {
        match e {
            Expr::Column(_) | Expr::Lit(_) => true,
            Expr::Arith(_, a, b) | Expr::Concat(a, b) => strict(a, values) && strict(b, values),
            Expr::Text(_, x) => strict(x, values),
            Expr::Cast(x, _) | Expr::Year(x) | Expr::Ascii(x) | Expr::Substring { expr: x, .. } => {
                strict(x, values)
            }
            other => other.columns().iter().all(|x| !values.contains(x)),
        }
    }
    matches!(c, Expr::Cmp(_, a, b) if strict(a, values) && strict(b, values))
}

/// `e` with every grouped expression replaced by its group column.
fn regroup(e: &Expr, groups: &[(ColumnId, Expr)]) -> Expr {
    e.rewrite(&mut |x| {
        groups
            .iter()
            .find(|(_, g)| g == x)
            .map(|(id, _)| Expr::Column(*id))
    })
}

/// An error if `e` reads a column that is neither grouped nor aggregated.
fn check_grouped(
    e: &Expr,
    allowed: &[ColumnId],
    b: &Binder,
    ast: Option<&ast::Expr>,
    what: &str,
) -> Result<()> {
    if let Some(c) = e.columns().into_iter().find(|c| !allowed.contains(c)) {
        let err = SqlError::invalid(format!(
            "column \"{}\" must appear in the GROUP BY clause or be used in an aggregate function ({what})",
            b.columns[c.0].name
        ));
        return Err(match ast {
            Some(a) => err.at(a.span()),
            None => err,
        });
    }
    Ok(())
}

impl Binder<'_> {
    /// `LIMIT n` and `OFFSET m` (constants or parameters): (the count, if
    /// limited; the offset).
    fn limit(&mut self, l: Option<&LimitClause>) -> Result<(Option<usize>, usize)> {
        let Some(l) = l else { return Ok((None, 0)) };
        let mut whole = |e: &ast::Expr, what: &str| -> Result<usize> {
            match e {
                ast::Expr::Value(v) => match &v.value {
                    ast::Value::Number(n, _) => n.parse().map_err(|_| {
                        SqlError::invalid(format!("{what} {n}: expected a whole number")).at(v.span)
                    }),
                    ast::Value::Placeholder(p) => {
                        match self
                            .params
                            .bind(p, Some(SqlType::Int))
                            .map_err(|e| e.at(v.span))?
                        {
                            crate::plan::Expr::Lit(crate::types::Literal::Num {
                                value,
                                scale: 0,
                            }) => usize::try_from(value).map_err(|_| {
                                SqlError::invalid(format!("{what} must not be negative")).at(v.span)
                            }),
                            _ => Err(SqlError::invalid(format!("{what} needs a whole number"))
                                .at(v.span)),
                        }
                    }
                    _ => Err(SqlError::invalid(format!("{what} needs a whole number")).at(v.span)),
                },
                e => Err(SqlError::unsupported(format!("{what} of an expression")).at(e.span())),
            }
        };
        match l {
            LimitClause::LimitOffset {
                limit,
                offset,
                limit_by,
            } if limit_by.is_empty() => {
                let count = limit.as_ref().map(|e| whole(e, "LIMIT")).transpose()?;
                let offset = match offset {
                    Some(o) => whole(&o.value, "OFFSET")?,
                    None => 0,
                };
                Ok((count, offset))
            }
            _ => Err(SqlError::unsupported("LIMIT … BY / MySQL's LIMIT m, n")),
        }
    }
}
