//! Consistency conditions 1–4 on the MVCC database: one snapshot's rows are
//! copied into a 2PL [`Database`] (with `w_ytd`/`d_ytd` taken from their
//! counters in the same snapshot) and checked by [`check_consistency`], so
//! both paths share one checker.

use maestro_txn::{Isolation, Transaction};

use super::db::{MvccDatabase, MvccRow};
use crate::check::{Violation, check_consistency};
use crate::db::Database;
use crate::error::TpccError;
use crate::schema::*;

impl MvccDatabase {
    /// The rows visible to one snapshot, as a 2PL database.
    pub fn snapshot_to_2pl(&self) -> Result<Database, TpccError> {
        let target = Database::new(self.warehouses())?;
        let mut txn = self.txn.begin(Isolation::Snapshot)?;
        copy::<Warehouse>(self, &mut txn, &target, |db, txn, w| {
            w.w_ytd = db.warehouse_ytd(txn, w.w_id)?;
            Ok(())
        })?;
        copy::<District>(self, &mut txn, &target, |db, txn, d| {
            d.d_ytd = db.district_ytd(txn, d.d_w_id, d.d_id)?;
            Ok(())
        })?;
        copy::<Customer>(self, &mut txn, &target, as_is)?;
        copy::<History>(self, &mut txn, &target, as_is)?;
        copy::<NewOrder>(self, &mut txn, &target, as_is)?;
        copy::<Order>(self, &mut txn, &target, as_is)?;
        copy::<OrderLine>(self, &mut txn, &target, as_is)?;
        copy::<Item>(self, &mut txn, &target, as_is)?;
        copy::<Stock>(self, &mut txn, &target, as_is)?;
        txn.abort();
        Ok(target)
    }

    /// Consistency conditions 1–4 in one snapshot.
    pub fn check_consistency(&self) -> Result<Vec<Violation>, TpccError> {
        Ok(check_consistency(&self.snapshot_to_2pl()?))
    }
}

type Fix<R> = fn(&MvccDatabase, &mut Transaction, &mut R) -> Result<(), TpccError>;

fn as_is<R>(_: &MvccDatabase, _: &mut Transaction, _: &mut R) -> Result<(), TpccError> {
    Ok(())
}

/// Copies every row `txn` sees into `target`, each passed through `fix`.
fn copy<R: MvccRow>(
    db: &MvccDatabase,
    txn: &mut Transaction,
    target: &Database,
    fix: Fix<R>,
) -> Result<(), TpccError> {
    let mut rows = Vec::new();
    txn.scan(R::mvcc_table(db), |_, r| rows.push(r.clone()));
    for mut row in rows {
        fix(db, txn, &mut row)?;
        target.insert(row)?;
    }
    Ok(())
}
