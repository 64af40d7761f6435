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
        for w in self.warehouses_at(snapshot)? {
            target.insert(w)?;
        }
        for d in self.districts_at(snapshot)? {
            target.insert(d)?;
        }
        copy::<Customer>(self, snapshot, &target)?;
        copy::<History>(self, snapshot, &target)?;
        copy::<NewOrder>(self, snapshot, &target)?;
        copy::<Order>(self, snapshot, &target)?;
        copy::<OrderLine>(self, snapshot, &target)?;
        copy::<Item>(self, snapshot, &target)?;
        copy::<Stock>(self, snapshot, &target)?;
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

/// Copies every row `snapshot` sees into `target`.
fn copy<R: MvccRow>(
    db: &MvccDatabase,
    snapshot: &Snapshot,
    target: &Database,
) -> Result<(), TpccError> {
    let mut rows = Vec::new();
    R::mvcc_table(db).scan(snapshot, |_, r| rows.push(r.clone()));
    for row in rows {
        target.insert(row)?;
    }
    Ok(())
}
