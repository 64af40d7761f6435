//! Consistency conditions 1–4 on the MVCC database: one snapshot's rows are
//! copied into a 2PL [`Database`] and checked by [`check_consistency`], so
//! both paths share one checker.

use maestro_txn::Isolation;

use super::db::{MvccDatabase, MvccRow};
use crate::check::{Violation, check_consistency};
use crate::db::Database;
use crate::error::TpccError;

impl MvccDatabase {
    /// The rows visible to one snapshot, as a 2PL database.
    pub fn snapshot_to_2pl(&self) -> Result<Database, TpccError> {
        let target = Database::new(self.warehouses())?;
        let mut txn = self.txn.begin(Isolation::Snapshot)?;
        copy::<crate::schema::Warehouse>(self, &mut txn, &target)?;
        copy::<crate::schema::District>(self, &mut txn, &target)?;
        copy::<crate::schema::Customer>(self, &mut txn, &target)?;
        copy::<crate::schema::History>(self, &mut txn, &target)?;
        copy::<crate::schema::NewOrder>(self, &mut txn, &target)?;
        copy::<crate::schema::Order>(self, &mut txn, &target)?;
        copy::<crate::schema::OrderLine>(self, &mut txn, &target)?;
        copy::<crate::schema::Item>(self, &mut txn, &target)?;
        copy::<crate::schema::Stock>(self, &mut txn, &target)?;
        txn.abort();
        Ok(target)
    }

    /// Consistency conditions 1–4 in one snapshot.
    pub fn check_consistency(&self) -> Result<Vec<Violation>, TpccError> {
        Ok(check_consistency(&self.snapshot_to_2pl()?))
    }
}

fn copy<R: MvccRow>(
    db: &MvccDatabase,
    txn: &mut maestro_txn::Transaction,
    target: &Database,
) -> Result<(), TpccError> {
    let mut rows = Vec::new();
    txn.scan(R::mvcc_table(db), |_, r| rows.push(r.clone()));
    for row in rows {
        target.insert(row)?;
    }
    Ok(())
}
