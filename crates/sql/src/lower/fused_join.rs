//! An inner join probed by a filtered scan through its filter: the scan's
//! predicate runs per vector inside the join's probe tasks
//! (`Input::filtered`), so no row-id vector of the rows it keeps is
//! materialized and the keys are read from the table's columns directly,
//! not through such a vector. TPC-H Q7's two years of lineitem (1.8 M row
//! ids at SF 1) probe the two nations' suppliers this way, Q21's late
//! lineitems (3.8 M) the nation's suppliers — as the hand-written plans do.
//!
//! The join builds on its other side, so the rule applies only where that
//! side is the build side anyway: estimated at most a [`FUSE_RATIO`]th of
//! the scan's filtered rows (before the run, so the two sides still run
//! concurrently otherwise), and, once computed, at most that estimate.
//! Keys must be numeric columns the operators read as they are (no string
//! interning, which would read every row of the table). A scan without a
//! filter of a table whose delta deletes rows counts as filtered (by the
//! deletions): its probe drops them by position instead of reading the
//! table through a vector of its live row ids. Under EXPLAIN
//! ANALYZE the scan's line counts the rows its filter kept (a counting
//! conjunct, last) and the join's time includes the filter's.

use std::sync::atomic::{AtomicUsize, Ordering};

use maestro_execution::{Input, JoinTable, Pred};

use super::compile::{to_exec_expr, to_pred};
use super::eval::Fault;
use super::vector::Relation;
use super::{Lowering, NumericKey, key_expr, scaled_up};
use crate::error::Result;
use crate::plan::{Expr, Plan};
use crate::types::SqlType;

/// How many times the other side's estimated rows the scan's filtered
/// rows must be estimated for the fused probe (rows ÷ rows; a guess that
/// leaves room for estimation errors before building on the larger side).
const FUSE_RATIO: f64 = 2.0;

impl<'a> Lowering<'a> {
    /// The estimated output rows of `node` (the optimizer's, by preorder
    /// position); `None` without estimates.
    fn estimate(&self, node: &Plan) -> Option<usize> {
        fn find(p: &Plan, node: &Plan, at: &mut usize) -> Option<usize> {
            if std::ptr::eq(p, node) {
                return Some(*at);
            }
            *at += 1;
            p.children().into_iter().find_map(|c| find(c, node, at))
        }
        let at = find(&self.plan.root, node, &mut 0)?;
        self.plan.estimates.get(at).copied()
    }

    /// Whether the inner join of `left` and `right` on `keys` probes with a
    /// filtered scan through its filter (see the module doc): `Some(true)`
    /// if the scan is `left`, `Some(false)` if `right`.
    pub(super) fn fused_scan_side(
        &self,
        left: &Plan,
        right: &Plan,
        keys: &[(Expr, Expr)],
    ) -> Option<bool> {
        // A scan of a table with deleted rows has a filter too: dropping
        // them by position inside the probe spares the vector of live row
        // ids the scan would otherwise read every column through.
        let filtered = |p: &Plan| match p {
            // An index scan reads its rows itself (`index.rs`).
            Plan::Scan {
                table,
                filter,
                index: None,
                ..
            } => {
                !filter.is_empty()
                    || self
                        .catalog
                        .delta(table)
                        .is_some_and(|d| !d.deleted().is_empty())
            }
            _ => false,
        };
        let scan_is_left = match (filtered(left), filtered(right)) {
            (true, false) => true,
            (false, true) => false,
            (true, true) => self.estimate(left)? >= self.estimate(right)?,
            (false, false) => return None,
        };
        let (scan, other) = if scan_is_left {
            (left, right)
        } else {
            (right, left)
        };
        let numeric_column = |e: &Expr| matches!(e, Expr::Column(_)) && self.ty(e) != SqlType::Str;
        let keys_ok = keys.iter().all(|(l, r)| {
            let (s, o) = if scan_is_left { (l, r) } else { (r, l) };
            numeric_column(s) && self.ty(o) != SqlType::Str
        });
        let fits = self.estimate(other)? as f64 * FUSE_RATIO <= self.estimate(scan)? as f64;
        (keys_ok && fits).then_some(scan_is_left)
    }

    /// The inner join of `left` and `right` on `keys` (at most `MAX_KEYS`)
    /// with the filtered scan on side `scan_is_left` probing through its
    /// filter; an ordinary hash join when the other side turns out larger
    /// than the scan's estimate, or a key is not a column the operators
    /// read directly.
    pub(super) fn fused_join(
        &self,
        left: &'a Plan,
        right: &'a Plan,
        keys: &[(Expr, Expr)],
        scan_is_left: bool,
    ) -> Result<Relation<'a>> {
        let (scan, other_plan) = if scan_is_left {
            (left, right)
        } else {
            (right, left)
        };
        let Plan::Scan {
            table,
            columns,
            filter,
            ..
        } = scan
        else {
            return Err(crate::error::SqlError::invalid("fused_join takes a scan"));
        };
        let other = self.node(other_plan)?;
        let mark = self.mark();
        let (rel, deleted) = self.scan_unfiltered(table, columns, true)?;
        let (s_keys, o_keys): (Vec<&Expr>, Vec<&Expr>) = keys
            .iter()
            .map(|(l, r)| if scan_is_left { (l, r) } else { (r, l) })
            .unzip();
        let direct = s_keys.iter().all(|k| to_exec_expr(k, &rel).is_some());
        let mut o_owned = Vec::new();
        for k in &o_keys {
            match self.numeric_key(k, &other)? {
                NumericKey::Ready(v) => o_owned.push(v),
                // A NULL key: the ordinary join codes it.
                NumericKey::HoldsNulls => break,
            }
        }
        if !direct || o_owned.len() < o_keys.len() || other.len > self.estimate(scan).unwrap_or(0) {
            let rel = self.filter_live(rel, filter, deleted)?;
            self.measured(scan, mark, rel.len);
            return if scan_is_left {
                self.join(rel, other, keys)
            } else {
                self.join(other, rel, keys)
            };
        }
        self.measured(scan, mark, rel.len);
        let mut sx = Vec::new();
        let mut ox = Vec::new();
        for i in 0..keys.len() {
            let a = key_expr(s_keys[i], &rel, None)?;
            let b = key_expr(o_keys[i], &other, o_owned[i].as_ref())?;
            let (sa, sb) = (a.scale()?, b.scale()?);
            sx.push(scaled_up(a, sb.saturating_sub(sa)));
            ox.push(scaled_up(b, sa.saturating_sub(sb)));
        }
        let fault = Fault::default();
        let all = Expr::And(filter.to_vec());
        // A plain counter, read after the probe has returned (its tasks
        // joined): no ordering needed beyond that join.
        let kept = AtomicUsize::new(0);
        let pairs = {
            let mut conjuncts = Vec::new();
            if !filter.is_empty() {
                conjuncts.push(to_pred(self.ctx, &all, &rel, &fault)?);
            }
            if !deleted.is_empty() {
                conjuncts.push(Pred::not_in_sorted(deleted));
            }
            if self.analysis.is_some() {
                conjuncts.push(Pred::func(|_| {
                    kept.fetch_add(1, Ordering::Relaxed);
                    true
                }));
            }
            let pred = Pred::and(conjuncts);
            let table = JoinTable::build(self.ctx, "sql_join_build", Input::all(other.len), &ox)?;
            table.inner(
                self.ctx,
                "sql_join_probe",
                Input::filtered(rel.len, &pred),
                &sx,
            )?
        };
        fault.check()?;
        self.recount(scan, kept.load(Ordering::Relaxed));
        let (s_out, o_out) = (
            rel.take(self.ctx, &pairs.probe),
            other.take(self.ctx, &pairs.build),
        );
        let (mut out, second) = if scan_is_left {
            (s_out, o_out)
        } else {
            (o_out, s_out)
        };
        out.cols.extend(second.cols);
        Ok(out)
    }
}
