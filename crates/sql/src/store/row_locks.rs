//! Row locks on write: an UPDATE or DELETE waits at a row another running
//! transaction changed, instead of both going on and the second committer
//! failing at COMMIT (`rebase.rs`).
//!
//! ## The lock
//! A row is named by its table's catalog row, the main its version builds
//! on and its combined id there ([`LockKey`]): versions of one main name a
//! row by one id (deltas of one main only grow, `rebase.rs` `IdMap`), so
//! every transaction whose snapshot shares that main names it alike. Each
//! key has at most one owner, a transaction, which holds it until it ends;
//! the table keeps a reference to the main, so its address is not reused
//! while a key names it.
//!
//! ## Taking a statement's locks (`RowLocks::lock`)
//! A write statement computes the rows it deletes (an UPDATE deletes the
//! old version) from its snapshot, then, before it records its change,
//! takes their locks in ascending id order:
//! 1. A free key, or one whose owner has finished (committed or aborted:
//!    its handle says so; nobody released it yet), becomes the caller's.
//! 2. A key the caller owns is kept.
//! 3. A key another running transaction `H` owns: the caller records that
//!    it waits for `H` (`waits_for`), unless following `H`'s own waits leads
//!    back to the caller — a cycle, refused with 40P01 at once — then waits
//!    for `H` to finish (`Blocker::wait`, in steps), removes its record and
//!    tries the key again. After [`ROW_WAIT_MAX`] it gives up with 55P03;
//!    a cancelled or timed-out statement (its view's `give_up`) stops
//!    within a step with 57014.
//!
//! Then the statement reads the table's newest committed version again and
//! checks its rows against it (`fail_early`): a row `H` (or any owner
//! before it) changed and committed is 40001, which READ
//! COMMITTED answers by running the statement again on a fresh snapshot
//! ([`crate::Rerun::OnFreshSnapshot`]); an aborted `H` changed nothing.
//!
//! ## Why no wait is lost and no deadlock hangs
//! An owner's end is a store into its transaction state, which the waiter
//! polls (`Blocker::wait`); no wake-up is needed, so none can be lost. The
//! wait-for records change only under the table's mutex. A waiter waits in
//! steps of [`ROW_WAIT_STEP`]: before each it checks the chain and records
//! its wait, after each it removes the record (no early return between).
//! A cycle needs every member waiting; whichever member checks last after
//! the others recorded theirs finds it — at the latest one step later — and
//! refuses, which ends the cycle. A wait on something
//! else than a row lock (a commit waiting for an install, `rebase.rs`) is
//! bounded by its own timeout, and every row wait by `ROW_WAIT_MAX`.
//!
//! `SELECT … FOR UPDATE` takes the same locks for the rows it returns
//! (`for_update.rs`), with [`OnHeld::Fail`] (NOWAIT) or [`OnHeld::Skip`]
//! (SKIP LOCKED) instead of a wait when asked.
//!
//! ## What is not locked
//! Statements deleting more than [`ROW_LOCKS_PER_STATEMENT_MAX`] rows, rows
//! of a table the transaction holds (installed, `rebase.rs` "Holding a
//! table") and inserted rows (their keys are checked at commit) take no
//! locks: their conflicts are found at commit, as before, with 40001.
//! Nor do two transactions whose snapshots read different mains of one
//! table (a background merge between them) exclude each other: the later
//! commit's rebase finds the conflict.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use maestro_storage::column::Table;
use maestro_txn::{Blocker, RowId, Transaction};

use crate::error::{ErrorKind, Result, SqlError};

/// The longest a write waits for one row another transaction holds before
/// it fails with 55P03. Guessed: PostgreSQL waits without bound by default
/// (`lock_timeout` 0); a bound keeps a forgotten open block from hanging
/// every writer of its rows.
pub const ROW_WAIT_MAX: Duration = Duration::from_secs(10);

/// One step of a wait: how often a waiter looks at the clock. Guessed.
const ROW_WAIT_STEP: Duration = Duration::from_millis(50);

/// Rows one statement locks at most; a statement deleting more takes no
/// row locks (module doc). Guessed: keeps bulk statements from filling the
/// table (an entry per row).
pub const ROW_LOCKS_PER_STATEMENT_MAX: usize = 4096;

/// A row: its table's catalog row, the address of the main its id counts
/// in, and its combined id there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct LockKey {
    table: RowId,
    main_at: usize,
    id: u32,
}

/// A transaction's locks.
struct Owned {
    handle: Blocker,
    keys: Vec<LockKey>,
    /// The mains its keys name, kept alive so their addresses stay theirs.
    mains: Vec<Arc<Table>>,
}

#[derive(Default)]
struct LockTable {
    owner: HashMap<LockKey, u64>,
    owned: HashMap<u64, Owned>,
    /// Transaction → the transaction it waits for now.
    waits_for: HashMap<u64, u64>,
}

impl LockTable {
    fn release(&mut self, txn: u64) {
        if let Some(owned) = self.owned.remove(&txn) {
            for key in owned.keys {
                if self.owner.get(&key) == Some(&txn) {
                    self.owner.remove(&key);
                }
            }
        }
    }

    /// Whether `waiter` waiting for `holder` closes a cycle of waits.
    fn closes_cycle(&self, waiter: u64, holder: u64) -> bool {
        let mut at = holder;
        // Each step follows one recorded wait; more steps than records
        // means a cycle without `waiter` (impossible: it would have been
        // refused when it closed), so the walk ends anyway.
        for _ in 0..=self.waits_for.len() {
            if at == waiter {
                return true;
            }
            match self.waits_for.get(&at) {
                Some(&next) => at = next,
                None => return false,
            }
        }
        false
    }
}

/// What a lock request does about a row another running transaction holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum OnHeld {
    /// Waits for the holder to end (UPDATE, DELETE, `FOR UPDATE`).
    Wait,
    /// Fails at once with 55P03 (`FOR UPDATE NOWAIT`).
    Fail,
    /// Leaves the row out (`FOR UPDATE SKIP LOCKED`).
    Skip,
}

/// Every transaction's row locks.
#[derive(Default)]
pub(super) struct RowLocks {
    table: Mutex<LockTable>,
}

impl RowLocks {
    fn table(&self) -> MutexGuard<'_, LockTable> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes `txn`'s locks of the rows `ids` (ascending combined ids of the
    /// table at catalog row `table`, counted in `main`), waiting for their
    /// owners (module doc). A statement over the bound takes none.
    pub(super) fn lock(
        &self,
        txn: &Transaction,
        table: RowId,
        main: &Arc<Table>,
        ids: &[u32],
        give_up: &dyn Fn() -> bool,
    ) -> Result<()> {
        if ids.len() > ROW_LOCKS_PER_STATEMENT_MAX {
            return Ok(());
        }
        self.lock_or(txn, table, main, ids, OnHeld::Wait, give_up)
            .map(|skipped| debug_assert!(skipped.is_empty(), "waiting skips nothing"))
    }

    /// [`RowLocks::lock`] without the bound, doing `on_held` about a row
    /// another running transaction holds; the ids left out
    /// ([`OnHeld::Skip`]), ascending. A wait ends with 57014 once
    /// `give_up()` holds (checked at least every [`ROW_WAIT_STEP`]).
    pub(super) fn lock_or(
        &self,
        txn: &Transaction,
        table: RowId,
        main: &Arc<Table>,
        ids: &[u32],
        on_held: OnHeld,
        give_up: &dyn Fn() -> bool,
    ) -> Result<Vec<u32>> {
        let me = txn.id();
        let main_at = Arc::as_ptr(main) as usize;
        let mut skipped = Vec::new();
        for &id in ids {
            let key = LockKey { table, main_at, id };
            let deadline = Instant::now() + ROW_WAIT_MAX;
            while let Some(holder) = self.take_or_find_holder(txn, key, main, on_held)? {
                match on_held {
                    OnHeld::Wait => {}
                    OnHeld::Skip => {
                        skipped.push(id);
                        break;
                    }
                    OnHeld::Fail => {
                        return Err(SqlError::new(
                            ErrorKind::LockNotAvailable,
                            "could not obtain lock on row: another transaction holds it (NOWAIT)",
                        ));
                    }
                }
                let left = deadline.saturating_duration_since(Instant::now());
                let finished = holder.wait(left.min(ROW_WAIT_STEP), give_up);
                self.table().waits_for.remove(&me);
                if !finished && give_up() {
                    return Err(SqlError::new(
                        ErrorKind::Cancelled,
                        "canceling statement: it was cancelled or timed out while it waited \
                         for a row another transaction holds",
                    ));
                }
                if !finished && Instant::now() >= deadline {
                    return Err(SqlError::new(
                        ErrorKind::LockNotAvailable,
                        format!(
                            "could not obtain a row lock within {} s: another transaction \
                             holds the row",
                            ROW_WAIT_MAX.as_secs()
                        ),
                    ));
                }
            }
        }
        Ok(skipped)
    }

    /// Step 1–3 of the module doc for one key: `None` once `txn` owns it,
    /// else the running owner — which `txn` now waits for (recorded) when
    /// `on_held` is [`OnHeld::Wait`].
    fn take_or_find_holder(
        &self,
        txn: &Transaction,
        key: LockKey,
        main: &Arc<Table>,
        on_held: OnHeld,
    ) -> Result<Option<Blocker>> {
        let me = txn.id();
        let mut t = self.table();
        if let Some(&owner) = t.owner.get(&key) {
            if owner == me {
                return Ok(None);
            }
            let handle = t
                .owned
                .get(&owner)
                .map(|o| o.handle.clone())
                .unwrap_or_else(|| panic!("lock {key:?}: owner {owner} without its locks"));
            if !handle.is_finished() {
                if on_held != OnHeld::Wait {
                    return Ok(Some(handle));
                }
                if t.closes_cycle(me, owner) {
                    return Err(SqlError::new(
                        ErrorKind::Deadlock,
                        "deadlock detected: this transaction and others wait for rows each \
                         other holds",
                    ));
                }
                t.waits_for.insert(me, owner);
                return Ok(Some(handle));
            }
            // Finished without releasing (aborted, dropped): free.
            t.release(owner);
        }
        t.owner.insert(key, me);
        let owned = t.owned.entry(me).or_insert_with(|| Owned {
            handle: txn.handle(),
            keys: Vec::new(),
            mains: Vec::new(),
        });
        owned.keys.push(key);
        if !owned.mains.iter().any(|m| Arc::ptr_eq(m, main)) {
            owned.mains.push(Arc::clone(main));
        }
        Ok(None)
    }

    /// Releases the locks of transaction `txn` (by id; it ended).
    pub(super) fn release(&self, txn: u64) {
        self.table().release(txn);
    }

    /// Releases the locks of transactions that ended without
    /// [`RowLocks::release`] (aborted, dropped).
    pub(super) fn purge_finished(&self) {
        let mut t = self.table();
        let finished: Vec<u64> = t
            .owned
            .iter()
            .filter(|(_, o)| o.handle.is_finished())
            .map(|(&id, _)| id)
            .collect();
        for id in finished {
            t.release(id);
        }
    }

    /// Rows locked now (tests).
    pub(super) fn held(&self) -> usize {
        self.table().owner.len()
    }
}

#[cfg(test)]
mod tests {
    use super::LockTable;

    #[test]
    fn a_wait_closes_a_cycle_only_when_the_chain_leads_back() {
        let mut t = LockTable::default();
        // 1 waits for 2, 2 waits for 3.
        t.waits_for.insert(1, 2);
        t.waits_for.insert(2, 3);
        assert!(t.closes_cycle(3, 1), "3 → 1 → 2 → 3");
        assert!(t.closes_cycle(3, 2), "3 → 2 → 3");
        assert!(!t.closes_cycle(4, 1), "the chain ends at 3, not 4");
        assert!(!t.closes_cycle(1, 4), "4 waits for nobody");
        assert!(t.closes_cycle(5, 5), "waiting for oneself");
        // A stale cycle without the waiter ends the walk.
        t.waits_for.insert(3, 1);
        assert!(!t.closes_cycle(9, 1));
    }
}
