//! `generate_series(start, stop[, step])` in FROM: PostgreSQL's integer
//! series as a table of one BIGINT column, named by the alias's column list,
//! else by the alias, else `generate_series` (as PostgreSQL names it). The
//! arguments are constant integer expressions (parameters included: they
//! are constants when a statement executes); a step of 0 is 22023; the
//! series is empty when `stop` lies behind `start`.

use sqlparser::ast::{self, FunctionArg, FunctionArgExpr, Ident, Spanned, TableFactor};

use super::Binder;
use super::expr::ExprCtx;
use super::scope::{Scope, TableScope, normalize};
use crate::error::{ErrorKind, Result, SqlError};
use crate::plan::{Expr, Plan};
use crate::types::{Literal, SqlType};

/// The most rows one series may have (guessed: 800 MB of BIGINTs, beyond
/// what one statement here should materialize at once).
pub const SERIES_ROWS_MAX: usize = 100_000_000;

/// The rows of the series from `start` to `stop` by `step` (≠ 0).
fn series_rows(start: i64, stop: i64, step: i64) -> u128 {
    let (start, stop, step) = (i128::from(start), i128::from(stop), i128::from(step));
    let span = if step > 0 { stop - start } else { start - stop };
    if span < 0 {
        0
    } else {
        (span / step.abs()) as u128 + 1
    }
}

impl Binder<'_> {
    /// The plan of `generate_series(args) [AS alias [(column)]]` (module doc).
    pub(super) fn series(
        &mut self,
        t: &TableFactor,
        args: &ast::TableFunctionArgs,
        alias: Option<&ast::TableAlias>,
        scope: &mut Scope,
    ) -> Result<Plan> {
        if args.settings.is_some() {
            return Err(SqlError::unsupported("SETTINGS").at(t.span()));
        }
        let empty = Scope::default();
        let ctx = ExprCtx {
            scope: &empty,
            aggs_forbidden_in: Some("FROM"),
        };
        let mut values = Vec::new();
        for a in &args.args {
            let FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) = a else {
                return Err(
                    SqlError::unsupported(format!("generate_series argument {a}")).at(t.span()),
                );
            };
            let bound = self.bind_constant(e, &ctx, Some(SqlType::Int))?;
            match bound {
                Expr::Lit(Literal::Num { value, scale: 0 }) => values.push(value),
                other => {
                    return Err(SqlError::unsupported(format!(
                        "generate_series over {} (integer constants only)",
                        match self.type_of(&other) {
                            SqlType::Int => "a non-constant integer".to_string(),
                            ty => format!("{ty:?}"),
                        }
                    ))
                    .at(e.span()));
                }
            }
        }
        let (start, stop, step) = match values.as_slice() {
            [start, stop] => (*start, *stop, 1),
            [start, stop, step] => (*start, *stop, *step),
            _ => {
                return Err(SqlError::unsupported(format!(
                    "generate_series with {} arguments (it takes start, stop and an \
                     optional step)",
                    values.len()
                ))
                .at(t.span()));
            }
        };
        if step == 0 {
            return Err(SqlError::new(
                ErrorKind::InvalidParameterValue,
                "step size cannot equal zero",
            )
            .at(t.span()));
        }
        let rows = series_rows(start, stop, step);
        if rows > SERIES_ROWS_MAX as u128 {
            return Err(SqlError::unsupported(format!(
                "a series of {rows} rows (at most {SERIES_ROWS_MAX} here)"
            ))
            .at(t.span()));
        }
        let table = alias.map_or("generate_series".to_string(), |a| normalize(&a.name));
        let column = match alias.map(|a| a.columns.as_slice()) {
            Some([c]) => normalize(&c.name),
            Some([]) | None => table.clone(),
            Some(_) => {
                return Err(SqlError::invalid(format!(
                    "table \"{table}\" has 1 column available but more were specified"
                ))
                .at(t.span()));
            }
        };
        let id = self.new_column(format!("{table}.{column}"), SqlType::Int);
        let at = alias.map_or_else(|| Ident::new("generate_series"), |a| a.name.clone());
        scope.add(
            TableScope {
                alias: table,
                columns: vec![(column, id)],
                qualified_only: false,
            },
            &at,
        )?;
        Ok(Plan::Series {
            column: id,
            start,
            step,
            rows: rows as usize,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::series_rows;

    #[test]
    fn series_count_their_rows_to_the_last_one_reached() {
        assert_eq!(series_rows(1, 10, 1), 10);
        assert_eq!(series_rows(1, 10, 3), 4); // 1 4 7 10
        assert_eq!(series_rows(1, 9, 3), 3); // 1 4 7
        assert_eq!(series_rows(10, 1, -4), 3); // 10 6 2
        assert_eq!(series_rows(5, 1, 1), 0);
        assert_eq!(series_rows(1, 5, -1), 0);
        assert_eq!(series_rows(i64::MIN, i64::MAX, 1), 1u128 << 64);
        assert_eq!(series_rows(i64::MAX, i64::MIN, i64::MIN), 2);
    }
}
