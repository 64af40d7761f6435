//! The lock manager: strict two-phase locking on named resources with shared
//! and exclusive modes, upgrades, and wait-die deadlock prevention. Waiting
//! goes through `maestro_scheduler::sync`, so a transaction that waits for a
//! lock inside a scheduler task shows up as a *blocked* worker (paper §5) and
//! the scheduler can run other work meanwhile.
//!
//! # Protocol
//!
//! **Table.** [`LOCK_SHARDS`] shards, chosen by the top bits of a hash of the
//! name; each is a *latch* over a map name → `Entry` (exclusive holder, shared
//! holders, number of waiters), plus a *waiting room* for 2PL waits (below).
//! Every state change of an entry happens under its shard's latch. Entries
//! with neither holders nor waiters are removed, so memory follows the locks
//! in use, not the names ever locked.
//!
//! **Latches and lock waits are separate.** The latch guards only the short
//! critical sections on the table (a hash lookup and a few stores); how a
//! thread waits for a latch someone else holds is the manager's
//! [`LatchFlavour`] (blocking, pure spinning or the scheduler's load-controlled
//! `Latch`; the DaMoN 2009 question). Waiting for a *lock* — a conflicting
//! holder that may keep it for a whole transaction — always blocks, through
//! scheduler-aware primitives, whatever the flavour. The scheduler's `Condvar`
//! only works with its own `Mutex`, so the lock wait does not use the latch:
//! each shard has a waiting room (a scheduler-aware `Mutex<()>` and `Condvar`)
//! and an *epoch* counter. A waiter reads the epoch under the latch, releases
//! the latch, and sleeps in the room until the epoch moved; a change that may
//! matter to waiters bumps the epoch after the latch is released, passes
//! through the room's mutex, and notifies the room's condvar. All flavours
//! use this same path, so they differ in the latch alone. The room's mutex is
//! held only to check the epoch and to enter the condvar, and is taken only
//! when some entry of the shard has waiters.
//!
//! **Acquire** (`ts`, name, mode), under the shard mutex, in a loop:
//! 1. already held in this mode or stronger → `AlreadyHeld`;
//! 2. compatible (no other holder conflicts) → record, `Acquired`/`Upgraded`;
//! 3. conflicting holders, all younger than `ts` → wait in the shard's room
//!    (entry `waiting += 1` first), then re-check from 1;
//! 4. some conflicting holder older than `ts` → *die*: return a
//!    [`Conflict`] naming it; nothing was recorded.
//!
//! **Release** removes the holder; if anyone waits on the entry it notifies
//! the shard's room (all waiters re-check; different names in one shard
//! share it, which costs spurious wake-ups, never missed ones). A grant on an
//! entry with waiters notifies too: the new holder may be older than a waiter,
//! which must then die rather than wait (see below).
//!
//! **Strictness** is the caller's part: a transaction releases only after it
//! committed or rolled back (`Txn::commit`/`Txn::rollback` in `txn`).
//!
//! **No deadlock.** A request sleeps only in step 3, i.e. while every
//! conflicting holder is younger. Holders change only under the shard latch,
//! and every change on an entry with waiters is followed by a notification,
//! after which each waiter re-applies the rule before sleeping again. So a
//! *sleeping* transaction always waits for younger ones, and a cycle of
//! sleepers would need a transaction younger than itself. A death releases
//! everything (the caller rolls back), so victims never hold up others.
//!
//! **No starvation.** A restarted transaction keeps its timestamp; new ones
//! get larger ones, so it eventually is the oldest and is never chosen to die.
//!
//! **No lost wake-up.** A waiter raises the entry's `waiting` count and reads
//! the shard's epoch `e`, both under the latch. Every later change of the
//! entry happens under the same latch, so it sees `waiting > 0` and is
//! followed (after unlocking) by a bump of the epoch, which therefore comes
//! after the waiter's read and makes it `≠ e`. The notifier then locks and
//! unlocks the room's mutex and notifies the room's condvar. The waiter checks
//! `epoch == e` under the room's mutex and, while it holds, enters the condvar
//! wait, which reads the condvar's sequence number before it releases that
//! mutex. The room's mutex orders the two: if the notifier passed through it
//! first, the waiter's check sees the bump and it does not sleep; otherwise
//! the notify comes after the waiter read the sequence number, so its park
//! sees a new number or it is unparked. A waiter that wakes re-checks the
//! epoch, and re-takes the latch only once the epoch moved.
//!
//! **Backoff after a death** ([`LockManager::wait_for_change`]): the victim,
//! holding nothing, sleeps once on the conflicting lock until it is free or
//! something changes, then restarts. It holds no locks, so no one waits for
//! it, and it cannot deadlock; it avoids a busy restart loop against the same
//! older holder.

mod entry;
mod latch;
mod name;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use maestro_scheduler::sync::{Condvar, Mutex};

use entry::{BuildNameHasher, Check, Entry, mix};
pub use latch::{LatchFlavour, RawSpinLock, SpinLock, SpinLockGuard};
use latch::{ShardGuard, ShardLatch};
pub use name::{LOCK_KEY_BITS, LockMode, LockName, LockSpace, TxnTs};

/// Shards of the lock table (a power of two). With ~one lock in flight per
/// row a transaction touches and a handful of concurrent transactions, 256
/// makes two requests meeting on one shard mutex rare; each shard costs a
/// cache line or two.
pub const LOCK_SHARDS: usize = 256;

/// What a successful request got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grant {
    /// A new lock: the caller must release it at the end of the transaction.
    Acquired,
    /// Already held in this mode or a stronger one: nothing new to release.
    AlreadyHeld,
    /// A shared lock the caller held became exclusive (released as one lock).
    Upgraded,
}

/// Why a request was refused: wait-die chose the requester to die because
/// `holder`, older than it, holds `name` in a conflicting mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Conflict {
    pub name: LockName,
    pub mode: LockMode,
    pub holder: TxnTs,
}

/// Counters summed over the shards.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LockStats {
    /// Locks granted (new and upgrades).
    pub acquired: u64,
    /// Requests that slept at least once before their grant or death.
    pub waits: u64,
    /// Requests refused by wait-die.
    pub deaths: u64,
    /// Shard-latch acquisitions (by requests, releases and backoffs) that
    /// found the latch held and had to wait for it in the flavour's way.
    pub latch_contended: u64,
}

#[derive(Default)]
struct ShardState {
    entries: HashMap<u64, Entry, BuildNameHasher>,
    stats: LockStats,
}

/// Padded so that neighbouring shards' latches do not share a cache line.
#[repr(align(128))]
struct Shard {
    state: ShardLatch<ShardState>,
    /// Bumped after every change an entry's waiters may care about.
    epoch: AtomicU64,
    /// The waiting room for 2PL waits (see the module docs).
    room: Mutex<()>,
    changed: Condvar,
}

impl Shard {
    fn new(flavour: LatchFlavour) -> Self {
        Shard {
            state: ShardLatch::new(flavour, ShardState::default()),
            epoch: AtomicU64::new(0),
            room: Mutex::new(()),
            changed: Condvar::new(),
        }
    }

    /// Locks the latch, counting a contended acquisition in the shard's stats.
    fn lock(&self) -> ShardGuard<'_, ShardState> {
        let (mut guard, contended) = self.state.lock_counted();
        if contended {
            guard.stats.latch_contended += 1;
        }
        guard
    }

    /// A 2PL wait: releases the latch, sleeps (as *blocked* on a worker) until
    /// the epoch moved past the one read under the latch, relocks the latch.
    fn wait<'a>(&'a self, guard: ShardGuard<'a, ShardState>) -> ShardGuard<'a, ShardState> {
        // Relaxed: the latch and the room's mutex order this read against the
        // bump (see "No lost wake-up" in the module docs).
        let seen = self.epoch.load(Ordering::Relaxed);
        drop(guard);
        let mut room = self.room.lock();
        while self.epoch.load(Ordering::Relaxed) == seen {
            self.changed.wait(&mut room);
        }
        drop(room);
        self.lock()
    }

    /// After a change under the latch, with the latch released: wakes the
    /// shard's waiters.
    fn notify(&self) {
        self.epoch.fetch_add(1, Ordering::Relaxed);
        drop(self.room.lock());
        self.changed.notify_all();
    }
}

/// The lock table. `Sync`: share it by reference between terminals.
pub struct LockManager {
    shards: Box<[Shard]>,
    next_ts: AtomicU64,
}

impl Default for LockManager {
    fn default() -> Self {
        Self::new()
    }
}

impl LockManager {
    /// A lock table with the default latch flavour ([`LatchFlavour::Blocking`]).
    pub fn new() -> Self {
        Self::with_flavour(LatchFlavour::default())
    }

    /// A lock table whose shard latches are of `flavour`.
    pub fn with_flavour(flavour: LatchFlavour) -> Self {
        LockManager {
            shards: (0..LOCK_SHARDS).map(|_| Shard::new(flavour)).collect(),
            next_ts: AtomicU64::new(1),
        }
    }

    /// The flavour of the shard latches.
    pub fn flavour(&self) -> LatchFlavour {
        self.shards[0].state.flavour()
    }

    /// A timestamp for a new transaction, younger than every earlier one.
    /// A restarted transaction keeps its first timestamp.
    pub fn begin(&self) -> TxnTs {
        // Relaxed: uniqueness and order come from the RMW itself.
        TxnTs(self.next_ts.fetch_add(1, Ordering::Relaxed))
    }

    fn shard(&self, name: LockName) -> &Shard {
        let bits = LOCK_SHARDS.trailing_zeros();
        // `checked_shr`: a shift by 64 (one shard) would overflow.
        let top = mix(name.word()).checked_shr(64 - bits).unwrap_or(0);
        &self.shards[top as usize]
    }

    /// Requests `name` in `mode` for transaction `ts`, waiting while every
    /// conflicting holder is younger, dying (`Err`) as soon as one is older.
    pub fn acquire(&self, ts: TxnTs, name: LockName, mode: LockMode) -> Result<Grant, Conflict> {
        let shard = self.shard(name);
        let mut state = shard.lock();
        let mut waited = false;
        loop {
            let st = &mut *state;
            let entry = st.entries.entry(name.word()).or_default();
            let check = entry.check(ts, mode);
            match check {
                Check::Held => return Ok(Grant::AlreadyHeld),
                Check::Grant | Check::Upgrade => {
                    entry.grant(ts, mode);
                    let notify = entry.waiting > 0;
                    st.stats.acquired += 1;
                    drop(state);
                    if notify {
                        shard.notify();
                    }
                    return Ok(if check == Check::Grant {
                        Grant::Acquired
                    } else {
                        Grant::Upgraded
                    });
                }
                Check::Conflict { oldest } if ts < oldest => {
                    entry.waiting += 1;
                    if !waited {
                        st.stats.waits += 1;
                        waited = true;
                    }
                    state = shard.wait(state);
                    Self::stop_waiting(&mut state, name);
                }
                Check::Conflict { oldest } => {
                    state.stats.deaths += 1;
                    return Err(Conflict {
                        name,
                        mode,
                        holder: oldest,
                    });
                }
            }
        }
    }

    /// Releases `ts`'s lock on `name`; false if it held none (a caller bug).
    pub fn release(&self, ts: TxnTs, name: LockName) -> bool {
        let shard = self.shard(name);
        let mut state = shard.lock();
        let Some(entry) = state.entries.get_mut(&name.word()) else {
            return false;
        };
        let released = entry.release(ts);
        let notify = entry.waiting > 0;
        if entry.unused() {
            state.entries.remove(&name.word());
        }
        drop(state);
        if notify {
            shard.notify();
        }
        released
    }

    /// Backoff after a death: sleeps (as *blocked* on a worker) until `name`
    /// could be granted in `mode` to a transaction holding nothing, or until
    /// the shard changes once, whichever comes first. The caller must hold no
    /// locks (see the module docs).
    pub fn wait_for_change(&self, name: LockName, mode: LockMode) {
        let shard = self.shard(name);
        let mut state = shard.lock();
        let Some(entry) = state.entries.get_mut(&name.word()) else {
            return;
        };
        if entry.free_for(mode) {
            return;
        }
        entry.waiting += 1;
        let mut state = shard.wait(state);
        Self::stop_waiting(&mut state, name);
    }

    /// After a 2PL wait: this request no longer waits on `name`'s entry;
    /// drop the entry if that made it unused.
    fn stop_waiting(state: &mut ShardState, name: LockName) {
        let entry = state
            .entries
            .get_mut(&name.word())
            .expect("an entry with waiters is never removed");
        entry.waiting -= 1;
        if entry.unused() {
            state.entries.remove(&name.word());
        }
    }

    /// Counters summed over the shards (each read under its latch).
    pub fn stats(&self) -> LockStats {
        self.shards
            .iter()
            .fold(LockStats::default(), |mut sum, shard| {
                let s = shard.state.lock().stats;
                sum.acquired += s.acquired;
                sum.waits += s.waits;
                sum.deaths += s.deaths;
                sum.latch_contended += s.latch_contended;
                sum
            })
    }

    /// Locks held or waited for right now (0 when every transaction ended).
    pub fn locks_in_use(&self) -> usize {
        self.shards
            .iter()
            .map(|shard| shard.state.lock().entries.len())
            .sum()
    }
}

#[cfg(test)]
mod tests;
