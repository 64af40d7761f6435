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
//! A write also locks the **key values** it inserts (`LockKey::Key`, a
//! hash of the key and its value, `unique::key_hashes`), after its rows: a
//! second inserter of a value waits for the first, then meets the committed
//! row at its check (23505; 40001 for `ON CONFLICT`, so READ COMMITTED runs
//! an upsert again and it updates that row, as PostgreSQL's does). Key locks
//! do not depend on the main, so they span merges.
//!
//! A statement that fails at its check gives back the locks it took
//! (`release_since`): run again, it would otherwise hold a key while waiting
//! for a row, the reverse of the order everyone else takes them in — a
//! cycle. Its waiters' records go with them, and a waiter also stops
//! waiting as soon as its key changes owner (not only when the owner ends).
//!
//! ## What is not locked
//! Statements deleting (or inserting) more than
//! [`ROW_LOCKS_PER_STATEMENT_MAX`] rows and rows of a table the transaction
//! holds (installed, `rebase.rs` "Holding a table") take no locks: their
//! conflicts are found at commit, as before (40001, 23505).
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

/// What a lock names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum LockKey {
    /// A row: its table's catalog row, the address of the main its id
    /// counts in, and its combined id there.
    Row {
        table: RowId,
        main_at: usize,
        id: u32,
    },
    /// A key value a write inserts: its table's catalog row and a hash of
    /// (which key, its value) (`unique::key_hashes`; two values with one
    /// hash only make one writer wait for another needlessly).
    Key { table: RowId, hash: u64 },
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
    /// Transaction → the transaction it waits for now, and the key.
    waits_for: HashMap<u64, (u64, LockKey)>,
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
                Some(&(next, _)) => at = next,
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
        let main_at = Arc::as_ptr(main) as usize;
        let keys = ids.iter().map(|&id| LockKey::Row { table, main_at, id });
        let skipped = self.take_all(txn, keys, Some(main), on_held, give_up)?;
        Ok(skipped
            .into_iter()
            .map(|key| match key {
                LockKey::Row { id, .. } => id,
                LockKey::Key { .. } => unreachable!("only rows were asked for: {key:?}"),
            })
            .collect())
    }

    /// Takes `txn`'s locks of the key values `hashes` (`unique::key_hashes`)
    /// of the table at catalog row `table`, waiting for their owners: a
    /// write inserting a key value another running transaction inserted
    /// waits for it (module doc). At most [`ROW_LOCKS_PER_STATEMENT_MAX`]
    /// values: a statement over the bound takes none.
    pub(super) fn lock_keys(
        &self,
        txn: &Transaction,
        table: RowId,
        hashes: &[u64],
        give_up: &dyn Fn() -> bool,
    ) -> Result<()> {
        if hashes.len() > ROW_LOCKS_PER_STATEMENT_MAX {
            return Ok(());
        }
        let keys = hashes.iter().map(|&hash| LockKey::Key { table, hash });
        self.take_all(txn, keys, None, OnHeld::Wait, give_up)
            .map(|skipped| debug_assert!(skipped.is_empty(), "waiting skips nothing"))
    }

    /// Takes `keys` in order, doing `on_held` about one another running
    /// transaction holds; the keys left out ([`OnHeld::Skip`]). `main`: the
    /// main row keys count in, kept alive while they are held.
    fn take_all(
        &self,
        txn: &Transaction,
        keys: impl Iterator<Item = LockKey>,
        main: Option<&Arc<Table>>,
        on_held: OnHeld,
        give_up: &dyn Fn() -> bool,
    ) -> Result<Vec<LockKey>> {
        let me = txn.id();
        let mut skipped = Vec::new();
        for key in keys {
            let deadline = Instant::now() + ROW_WAIT_MAX;
            while let Some((holder_id, holder)) =
                self.take_or_find_holder(txn, key, main, on_held)?
            {
                match on_held {
                    OnHeld::Wait => {}
                    OnHeld::Skip => {
                        skipped.push(key);
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
                // Also stop when the holder gave the key back without
                // ending (`release_since`).
                let released = || self.table().owner.get(&key) != Some(&holder_id);
                let finished =
                    wait_inactive(&holder, left.min(ROW_WAIT_STEP), || give_up() || released());
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
    /// else the running owner (its id and handle) — which `txn` now waits
    /// for (recorded) when `on_held` is [`OnHeld::Wait`].
    fn take_or_find_holder(
        &self,
        txn: &Transaction,
        key: LockKey,
        main: Option<&Arc<Table>>,
        on_held: OnHeld,
    ) -> Result<Option<(u64, Blocker)>> {
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
                    return Ok(Some((owner, handle)));
                }
                if t.closes_cycle(me, owner) {
                    return Err(SqlError::new(
                        ErrorKind::Deadlock,
                        "deadlock detected: this transaction and others wait for rows each \
                         other holds",
                    ));
                }
                t.waits_for.insert(me, (owner, key));
                return Ok(Some((owner, handle)));
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
        if let Some(main) = main
            && !owned.mains.iter().any(|m| Arc::ptr_eq(m, main))
        {
            owned.mains.push(Arc::clone(main));
        }
        Ok(None)
    }

    /// How many locks `txn` holds: a mark to release back to
    /// ([`RowLocks::release_since`]).
    pub(super) fn mark(&self, txn: &Transaction) -> usize {
        self.table()
            .owned
            .get(&txn.id())
            .map_or(0, |o| o.keys.len())
    }

    /// Releases the locks `txn` took after `mark`: a statement that failed
    /// before it kept anything gives back what it locked, so that running it
    /// again (READ COMMITTED) does not hold a key while it waits for a row —
    /// the order every other writer takes them in (rows, then keys), which
    /// made a cycle.
    pub(super) fn release_since(&self, txn: &Transaction, mark: usize) {
        let me = txn.id();
        let mut t = self.table();
        let Some(owned) = t.owned.get_mut(&me) else {
            return;
        };
        let taken: Vec<LockKey> = owned.keys.drain(mark.min(owned.keys.len())..).collect();
        for key in &taken {
            if t.owner.get(key) == Some(&me) {
                t.owner.remove(key);
            }
        }
        // Those waiting for these keys wait for `txn` no more (they take the
        // key at their next look): a cycle through them would be false.
        t.waits_for
            .retain(|_, (owner, key)| !(*owner == me && taken.contains(key)));
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

/// Waits for `blocker`'s transaction to end (at most `max`, stopping early
/// once `give_up()` holds), as a scheduler *inactive-by-user* region: a
/// waiting worker or counted caller gives its context back meanwhile, so
/// the scheduler runs other work — the holder's own statements among it.
/// Waiting while counted active deadlocked TPC-C on the SQL store: two
/// transactions admitted as counted callers slept here holding both
/// contexts, and the holders' plans, handed off, never got a worker.
pub(super) fn wait_inactive(
    blocker: &maestro_txn::Blocker,
    max: std::time::Duration,
    give_up: impl Fn() -> bool,
) -> bool {
    maestro_scheduler::sync::blocking(|| blocker.wait(max, give_up))
}

#[cfg(test)]
mod tests {
    use super::LockTable;

    #[test]
    fn a_wait_closes_a_cycle_only_when_the_chain_leads_back() {
        let mut t = LockTable::default();
        // 1 waits for 2, 2 waits for 3.
        let key = super::LockKey::Key { table: 0, hash: 0 };
        t.waits_for.insert(1, (2, key));
        t.waits_for.insert(2, (3, key));
        assert!(t.closes_cycle(3, 1), "3 → 1 → 2 → 3");
        assert!(t.closes_cycle(3, 2), "3 → 2 → 3");
        assert!(!t.closes_cycle(4, 1), "the chain ends at 3, not 4");
        assert!(!t.closes_cycle(1, 4), "4 waits for nobody");
        assert!(t.closes_cycle(5, 5), "waiting for oneself");
        // A stale cycle without the waiter ends the walk.
        t.waits_for.insert(3, (1, key));
        assert!(!t.closes_cycle(9, 1));
    }

    #[test]
    fn a_failed_statement_gives_back_only_its_own_locks_and_frees_their_waiters() {
        let db = maestro_txn::Database::default();
        let txn = db.begin(maestro_txn::Isolation::Snapshot).unwrap();
        let locks = super::RowLocks::default();
        let never = || false;
        locks.lock_keys(&txn, 0, &[1], &never).unwrap();
        let mark = locks.mark(&txn);
        locks.lock_keys(&txn, 0, &[1, 2, 3], &never).unwrap();
        assert_eq!(locks.held(), 3, "key 1 once");
        // Another transaction waiting for key 2 of this one.
        let key2 = super::LockKey::Key { table: 0, hash: 2 };
        let key1 = super::LockKey::Key { table: 0, hash: 1 };
        locks.table().waits_for.insert(99, (txn.id(), key2));
        locks.table().waits_for.insert(98, (txn.id(), key1));
        locks.release_since(&txn, mark);
        assert_eq!(locks.held(), 1, "key 1, taken before the mark, stays");
        let t = locks.table();
        assert!(!t.waits_for.contains_key(&99), "its waiter waits no more");
        assert!(t.waits_for.contains_key(&98), "key 1's waiter still waits");
    }
}
