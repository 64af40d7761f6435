//! Consistency conditions 1–4 on the MVCC database: one snapshot's rows are
//! copied into a 2PL [`Database`] (with `w_ytd`/`d_ytd` taken from their
//! counters in the same snapshot) and checked by [`check_consistency`], so
//! both paths share one checker. The copy is also what exports go through.

use maestro_txn::Snapshot;

use super::db::{MvccDatabase, MvccRow};
use crate::check::{Violation, check_consistency};
use crate::db::Database;
use crate::error::TpccError;
use crate::schema::*;

impl MvccDatabase {
    /// The rows visible to a fresh snapshot, as a 2PL database.
    pub fn snapshot_to_2pl(&self) -> Result<Database, TpccError> {
        self.rows_at(&self.txn.snapshot()?)
    }

    /// The rows visible to `snapshot`, as a 2PL database.
    pub fn rows_at(&self, snapshot: &Snapshot) -> Result<Database, TpccError> {
        let target = Database::new(self.warehouses())?;
        copy::<Warehouse>(self, snapshot, &target, |db, s, w| {
            w.w_ytd = counter(
                db.warehouse_ytd
                    .read(s, MvccDatabase::warehouse_ytd_row(w.w_id)),
                "warehouse_ytd",
                w.w_id,
            )?;
            Ok(())
        })?;
        copy::<District>(self, snapshot, &target, |db, s, d| {
            let row = MvccDatabase::district_ytd_row(d.d_w_id, d.d_id);
            d.d_ytd = counter(db.district_ytd.read(s, row), "district_ytd", d.d_w_id)?;
            Ok(())
        })?;
        copy::<Customer>(self, snapshot, &target, as_is)?;
        copy::<History>(self, snapshot, &target, as_is)?;
        copy::<NewOrder>(self, snapshot, &target, as_is)?;
        copy::<Order>(self, snapshot, &target, as_is)?;
        copy::<OrderLine>(self, snapshot, &target, as_is)?;
        copy::<Item>(self, snapshot, &target, as_is)?;
        copy::<Stock>(self, snapshot, &target, as_is)?;
        Ok(target)
    }

    /// Consistency conditions 1–4 in one snapshot.
    pub fn check_consistency(&self) -> Result<Vec<Violation>, TpccError> {
        Ok(check_consistency(&self.snapshot_to_2pl()?))
    }

    /// Consistency conditions 1–4 in `snapshot` (e.g. inside an analytical
    /// query's snapshot while terminals run).
    pub fn check_consistency_at(&self, snapshot: &Snapshot) -> Result<Vec<Violation>, TpccError> {
        Ok(check_consistency(&self.rows_at(snapshot)?))
    }
}

fn counter(value: Option<Money>, table: &'static str, w_id: u16) -> Result<Money, TpccError> {
    value.ok_or_else(|| TpccError::NotFound {
        table,
        key: format!("counter of warehouse {w_id}"),
    })
}

type Fix<R> = fn(&MvccDatabase, &Snapshot, &mut R) -> Result<(), TpccError>;

fn as_is<R>(_: &MvccDatabase, _: &Snapshot, _: &mut R) -> Result<(), TpccError> {
    Ok(())
}

/// Copies every row `snapshot` sees into `target`, each passed through `fix`.
fn copy<R: MvccRow>(
    db: &MvccDatabase,
    snapshot: &Snapshot,
    target: &Database,
    fix: Fix<R>,
) -> Result<(), TpccError> {
    let mut rows = Vec::new();
    R::mvcc_table(db).scan(snapshot, |_, r| rows.push(r.clone()));
    for mut row in rows {
        fix(db, snapshot, &mut row)?;
        target.insert(row)?;
    }
    Ok(())
}
