//! `SELECT … FOR UPDATE [OF t] [NOWAIT | SKIP LOCKED]`: the rows a query
//! returns, locked for its transaction as an UPDATE locks them
//! (`row_locks.rs`), so another writer of them waits until it ends.
//!
//! The query runs with the table's hidden row-id column appended to its
//! select list (`*` spelled out first, so the column does not show); the
//! rows' ids are locked in ascending order; then, as for an UPDATE, the
//! newest committed version is read and a locked row another transaction
//! changed since the snapshot is 40001 — which READ COMMITTED answers by
//! running the statement again on a fresh snapshot
//! ([`crate::Rerun::OnFreshSnapshot`]), REPEATABLE READ by failing, as
//! PostgreSQL does. `SKIP LOCKED` leaves out the rows others hold, and a
//! LIMIT/OFFSET then counts only the rows kept (a work queue's `… ORDER BY
//! id LIMIT 1 FOR UPDATE SKIP LOCKED` gives each worker another row).
//!
//! Limits (0A000): one table, no join, no GROUP BY, DISTINCT, HAVING or
//! set operation (PostgreSQL refuses those too, joins aside), at most
//! [`super::ROW_LOCKS_PER_STATEMENT_MAX`] rows, and with SKIP LOCKED a
//! LIMIT/OFFSET of a constant or a parameter. `FOR SHARE` / `FOR KEY SHARE`
//! lock exclusively here (there are no shared row locks), which is stronger
//! than asked: two sharers wait for each other.

use std::sync::Arc;

use sqlparser::ast::{
    Expr, LimitClause, LockClause, NonBlock, Offset, Query, SelectItem, SetExpr, Statement,
    Value as Lit,
};

use maestro_tpch::queries::Value;
use maestro_txn::Transaction;

use super::ddl::table_name;
use super::dml::{QueryRunner, ROW_COLUMN, WithRowIds, query_described, row_position, target};
use super::generated::column;
use super::returning::{Returned, expanded};
use super::row_locks::OnHeld;
use super::{Entry, Store, View, rebase};
use crate::error::{ErrorKind, Result, SqlError};
use crate::params::ParamValue;

impl Store {
    /// Runs `q`, a query with a locking clause, in `txn`; the rows, locked.
    pub(super) fn select_for_update(
        &self,
        txn: &mut Transaction,
        view: &View,
        q: &Query,
        params: &[ParamValue],
        run: QueryRunner,
    ) -> Result<(u64, Returned)> {
        let lock = the_lock(q)?;
        let (name, alias) = locked_table(q, lock)?;
        let (row, entry) = view.entry(&name)?;
        let on_held = match lock.nonblock {
            None => OnHeld::Wait,
            Some(NonBlock::Nowait) => OnHeld::Fail,
            Some(NonBlock::SkipLocked) => OnHeld::Skip,
        };
        let mut plain = q.clone();
        plain.locks.clear();
        let window = match on_held {
            OnHeld::Skip => Window::taken_from(&mut plain, params)?,
            OnHeld::Wait | OnHeld::Fail => Window::default(),
        };
        let SetExpr::Select(select) = plain.body.as_mut() else {
            unreachable!("checked by locked_table");
        };
        let mut items = expanded(&select.projection, entry, alias.as_deref())?;
        items.push(SelectItem::UnnamedExpr(column(ROW_COLUMN)));
        select.projection = items;
        let stmt = Statement::Query(Box::new(plain));
        let catalog = WithRowIds { view, entry };
        let (mut columns, result) = query_described(&catalog, &stmt, params, run)?;
        columns.pop();
        let ids: Vec<u32> = result
            .rows
            .iter()
            .map(|r| row_position(r.last().expect("the row column")))
            .collect::<Result<_>>()?;
        let give_up = || view.gives_up();
        let wanted = window.rows();
        // A statement that fails gives back the locks it took (a rerun must
        // not hold rows while it waits for others: `row_locks.rs`).
        let mark = self.row_locks.mark(txn);
        let kept = self
            .lock_selected(txn, (row, entry), &ids, on_held, wanted, &give_up)
            .inspect_err(|_| self.row_locks.release_since(txn, mark))?;
        let rows: Vec<Vec<Value>> = result
            .rows
            .into_iter()
            .zip(kept)
            .filter_map(|(mut r, kept)| {
                r.pop();
                kept.then_some(r)
            })
            .collect();
        let rows = window.apply(rows);
        Ok((rows.len() as u64, Returned { columns, rows }))
    }

    /// Locks the rows `ids` (in the query's order; of `entry`, as `txn`
    /// reads the table at catalog row `row`: `table`) and checks them against the
    /// newest committed version, as a write does (`rebase.rs`); per row
    /// whether it is returned. [`OnHeld::Skip`] goes in the query's order
    /// and stops once `wanted` rows are kept (`None`: all).
    fn lock_selected(
        &self,
        txn: &mut Transaction,
        (row, entry): (maestro_txn::RowId, &Arc<Entry>),
        ids: &[u32],
        on_held: OnHeld,
        wanted: Option<usize>,
        give_up: &dyn Fn() -> bool,
    ) -> Result<Vec<bool>> {
        let too_many = || {
            SqlError::unsupported(format!(
                "FOR UPDATE of more than {} rows",
                super::ROW_LOCKS_PER_STATEMENT_MAX
            ))
        };
        let Some(base) = self.locking_base(txn, row, entry) else {
            // A table this transaction holds: nobody else writes it.
            return Ok(vec![true; ids.len()]);
        };
        // The transaction's own appended rows follow the base's; they are
        // its own already.
        let space = rebase::id_space(&base);
        let mut kept = vec![false; ids.len()];
        match on_held {
            OnHeld::Skip => {
                let mut n = 0;
                for (k, &id) in ids.iter().enumerate() {
                    if wanted.is_some_and(|w| n == w) {
                        break;
                    }
                    if n == super::ROW_LOCKS_PER_STATEMENT_MAX {
                        return Err(too_many());
                    }
                    kept[k] = id >= space
                        || self
                            .row_locks
                            .lock_or(txn, row, &base.data, &[id], on_held, give_up)?
                            .is_empty();
                    n += usize::from(kept[k]);
                }
            }
            OnHeld::Wait | OnHeld::Fail => {
                let mut sorted: Vec<u32> = ids.iter().copied().filter(|&id| id < space).collect();
                sorted.sort_unstable();
                sorted.dedup();
                if sorted.len() > super::ROW_LOCKS_PER_STATEMENT_MAX {
                    return Err(too_many());
                }
                self.row_locks
                    .lock_or(txn, row, &base.data, &sorted, on_held, give_up)?;
                kept.fill(true);
            }
        }
        let mut locked: Vec<u32> = ids
            .iter()
            .zip(&kept)
            .filter(|&(_, &k)| k)
            .map(|(&id, _)| id)
            .collect();
        locked.sort_unstable();
        locked.dedup();
        self.check_locked_rows(txn, row, entry, &locked)?;
        Ok(kept)
    }
}

/// The one locking clause of `q`.
fn the_lock(q: &Query) -> Result<&LockClause> {
    match q.locks.as_slice() {
        [lock] => Ok(lock),
        _ => Err(SqlError::unsupported("several locking clauses")),
    }
}

/// The table a locking query reads and locks, and its alias.
fn locked_table(q: &Query, lock: &LockClause) -> Result<(String, Option<String>)> {
    let SetExpr::Select(select) = q.body.as_ref() else {
        return Err(SqlError::unsupported(format!(
            "FOR UPDATE of {}",
            q.body.to_string().split_whitespace().next().unwrap_or("")
        )));
    };
    let no_groups = match &select.group_by {
        sqlparser::ast::GroupByExpr::Expressions(e, _) => e.is_empty(),
        sqlparser::ast::GroupByExpr::All(_) => false,
    };
    if !no_groups || select.having.is_some() || select.distinct.is_some() {
        return Err(SqlError::unsupported(
            "FOR UPDATE with GROUP BY, HAVING or DISTINCT",
        ));
    }
    let [from] = select.from.as_slice() else {
        return Err(SqlError::unsupported("FOR UPDATE of several tables"));
    };
    if !from.joins.is_empty() {
        return Err(SqlError::unsupported("FOR UPDATE of a join"));
    }
    let (name, alias) = target(from)?;
    if let Some(of) = &lock.of {
        let named = table_name(of)?;
        if named != alias.clone().unwrap_or_else(|| name.clone()) {
            return Err(SqlError::new(
                ErrorKind::UnknownTable,
                format!("relation \"{of}\" in FOR UPDATE clause not found in FROM clause"),
            ));
        }
    }
    Ok((name, alias))
}

/// A LIMIT/OFFSET applied after SKIP LOCKED left rows out.
#[derive(Default)]
struct Window {
    offset: usize,
    limit: Option<usize>,
}

impl Window {
    /// `q`'s LIMIT/OFFSET, removed from it.
    fn taken_from(q: &mut Query, params: &[ParamValue]) -> Result<Window> {
        let Some(clause) = q.limit_clause.take() else {
            return Ok(Window::default());
        };
        let (limit, offset) = match clause {
            LimitClause::LimitOffset {
                limit,
                offset,
                limit_by,
            } if limit_by.is_empty() => (limit, offset.map(|Offset { value, .. }| value)),
            LimitClause::OffsetCommaLimit { offset, limit } => (Some(limit), Some(offset)),
            LimitClause::LimitOffset { .. } => {
                return Err(SqlError::unsupported("LIMIT … BY"));
            }
        };
        Ok(Window {
            offset: offset.map_or(Ok(0), |e| count(&e, params))?,
            limit: limit.map(|e| count(&e, params)).transpose()?,
        })
    }

    /// Rows to keep before the window cuts: OFFSET + LIMIT (`None`: all).
    fn rows(&self) -> Option<usize> {
        self.limit.map(|l| l.saturating_add(self.offset))
    }

    fn apply<T>(&self, rows: Vec<T>) -> Vec<T> {
        let rows = rows.into_iter().skip(self.offset);
        match self.limit {
            Some(n) => rows.take(n).collect(),
            None => rows.collect(),
        }
    }
}

/// A LIMIT or OFFSET of a constant or a parameter.
fn count(e: &Expr, params: &[ParamValue]) -> Result<usize> {
    let unsupported = || {
        SqlError::unsupported(format!(
            "a LIMIT/OFFSET of {e} with SKIP LOCKED (a constant or a parameter)"
        ))
    };
    let n = match e {
        Expr::Value(v) => match &v.value {
            Lit::Number(n, false) => n.parse::<i64>().map_err(|_| unsupported())?,
            Lit::Placeholder(p) => {
                let k: usize = p
                    .strip_prefix('$')
                    .and_then(|k| k.parse().ok())
                    .ok_or_else(unsupported)?;
                match params.get(k.wrapping_sub(1)) {
                    Some(ParamValue::Int(n)) => *n,
                    _ => return Err(unsupported()),
                }
            }
            _ => return Err(unsupported()),
        },
        _ => return Err(unsupported()),
    };
    usize::try_from(n).map_err(|_| {
        SqlError::new(
            ErrorKind::InvalidParameterValue,
            format!("LIMIT/OFFSET must not be negative: {n}"),
        )
    })
}
