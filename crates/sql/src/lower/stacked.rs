//! Stacked subquery joins: a semi or anti join over another, both of whose
//! subqueries scan the same table on the same keys, read that table once.
//!
//! TPC-H Q21's EXISTS (`l2`: another supplier on the order) and NOT EXISTS
//! (`l3`: another supplier late on the order) are a semi join and an anti
//! join of the candidate lineitems `X` with lineitem, both on
//! `l_orderkey`, each with a `<>` residual and `l3` with a filter of its
//! own. Run one after the other, each reduces all of lineitem to the keys
//! of its left side (`Lowering::reduce_then_filter`): two probes of the
//! whole table. Stacked, the table is scanned once under both scans'
//! column ids and reduced once, to `X`'s keys; each join then takes its
//! own filter of those few rows. Sound for the upper join too: its left
//! side (what the lower join kept of `X`) has a subset of `X`'s keys, and
//! rows of the table whose keys no left row has meet no left row. This is
//! what the hand-written Q21 does (one table of the candidate orders'
//! lineitems answers both predicates).
//!
//! The rule is on the plan's shape alone (EXPLAIN marks the upper join),
//! so it applies to any two stacked EXISTS / NOT EXISTS / IN / NOT IN over
//! one table correlated by the same outer expressions on the same columns;
//! whether the reduction pays is decided at run time as for one join (the
//! left side at most a `REDUCE_FIRST_RATIO`th of the table).

use std::collections::HashMap;

use crate::error::Result;
use crate::plan::{ColumnId, Expr, JoinKind, Plan};
use crate::twins::rename;

use super::vector::Relation;
use super::{Lowering, NullKeys, REDUCE_FIRST_RATIO, Reduce};

/// The parts of a stacked pair of semi/anti joins (see the module doc):
/// `upper` over `lower`, `lower`'s left side `outer`.
pub(crate) struct Stacked<'p> {
    pub outer: &'p Plan,
    pub lower: &'p Plan,
    pub lower_scan: &'p Plan,
    pub upper_scan: &'p Plan,
}

/// `p` as a stacked pair of semi/anti joins whose right sides scan the
/// same table with keys that match: the same left expressions (they read
/// `outer`'s columns, which the lower join passes up), and right sides the
/// same columns of the table. Each scan's own filter may differ.
pub(crate) fn stacked(p: &Plan) -> Option<Stacked<'_>> {
    let Plan::Join {
        left: lower,
        right: upper_scan,
        kind: JoinKind::Semi | JoinKind::Anti | JoinKind::AntiIn,
        keys: upper_keys,
        ..
    } = p
    else {
        return None;
    };
    let Plan::Join {
        left: outer,
        right: lower_scan,
        kind: JoinKind::Semi | JoinKind::Anti | JoinKind::AntiIn,
        keys: lower_keys,
        ..
    } = lower.as_ref()
    else {
        return None;
    };
    let (
        Plan::Scan {
            table: lt,
            columns: lc,
            index: None,
            ..
        },
        Plan::Scan {
            table: ut,
            columns: uc,
            index: None,
            ..
        },
    ) = (lower_scan.as_ref(), upper_scan.as_ref())
    else {
        return None;
    };
    if lt != ut || upper_keys.is_empty() || upper_keys.len() != lower_keys.len() {
        return None;
    }
    // The upper scan's columns → the lower scan's, by table column.
    let map: HashMap<ColumnId, ColumnId> = uc
        .iter()
        .filter_map(|&(id, i)| lc.iter().find(|c| c.1 == i).map(|c| (id, c.0)))
        .collect();
    let same = upper_keys
        .iter()
        .zip(lower_keys)
        .all(|((ul, ur), (ll, lr))| {
            ul == ll && matches!(ur, Expr::Column(_)) && rename(ur, &map).is_some_and(|r| r == *lr)
        });
    same.then_some(Stacked {
        outer,
        lower,
        lower_scan,
        upper_scan,
    })
}

impl<'a> Lowering<'a> {
    /// Runs the stacked pair `upper` (see [`stacked`]): `outer` first, the
    /// table scanned once and reduced to `outer`'s keys when `outer` is at
    /// most a `REDUCE_FIRST_RATIO`th of it, then each join on its own
    /// filter of those rows. The scans' lines in EXPLAIN ANALYZE count the
    /// rows each join read (after the shared reduction and its filter).
    pub(super) fn stacked_joins(&self, upper: &'a Plan, s: Stacked<'a>) -> Result<Relation<'a>> {
        let (
            Plan::Join {
                kind: upper_kind,
                keys: upper_keys,
                residual: upper_residual,
                ..
            },
            Plan::Join {
                kind: lower_kind,
                keys: lower_keys,
                residual: lower_residual,
                ..
            },
            Plan::Scan {
                table,
                columns: lower_cols,
                filter: lower_filter,
                ..
            },
            Plan::Scan {
                columns: upper_cols,
                filter: upper_filter,
                ..
            },
        ) = (upper, s.lower, s.lower_scan, s.upper_scan)
        else {
            return Err(crate::error::SqlError::invalid(
                "stacked_joins takes two joins over scans",
            ));
        };
        let x = self.node(s.outer)?;
        let mark = self.mark();
        // One scan under both scans' column ids (their ids differ).
        let mut columns = lower_cols.clone();
        columns.extend(upper_cols.iter().copied());
        let all = self.scan(table, &columns, &[])?;
        let (rows, reduce) = if x.len.saturating_mul(REDUCE_FIRST_RATIO) <= all.len {
            // The stack may hold an anti join: NULL keys refused.
            let pos = self.semi_positions(&all, &x, lower_keys, NullKeys::Refuse)?;
            (all.take(self.ctx, &pos), Reduce::Done)
        } else {
            (all, Reduce::IfSmaller)
        };
        let lower_rows = self.filtered(rows.clone(), lower_filter)?;
        self.measured(s.lower_scan, mark, lower_rows.len);
        let mark = self.mark();
        let upper_rows = self.filtered(rows, upper_filter)?;
        self.measured(s.upper_scan, mark, upper_rows.len);
        let mark = self.mark();
        let kept = self.keyed_join(
            x,
            lower_rows,
            *lower_kind,
            lower_keys,
            lower_residual,
            reduce,
        )?;
        self.measured(s.lower, mark, kept.len);
        self.keyed_join(
            kept,
            upper_rows,
            *upper_kind,
            upper_keys,
            upper_residual,
            reduce,
        )
    }

    fn filtered(&self, rel: Relation<'a>, filter: &[Expr]) -> Result<Relation<'a>> {
        if filter.is_empty() {
            Ok(rel)
        } else {
            self.filter(rel, filter)
        }
    }
}
