//! The lock manager: strict two-phase locking on named resources with shared
//! and exclusive modes and upgrades. A conflicting request *waits* in a
//! queue on the lock (readers never pass a queued writer); deadlocks are detected on a wait-for graph when a
//! request is about to wait, and broken by failing the youngest transaction
//! of the cycle. Waiting goes through `maestro_scheduler::sync`, so a
//! transaction that waits for a lock inside a scheduler task shows up as a
//! *blocked* worker (paper §5) and the scheduler can run other work meanwhile.
//!
//! # Protocol
//!
//! **Table.** [`LOCK_SHARDS`] shards, chosen by the top bits of a hash of the
//! name; each is a *latch* over a map name → `Entry` (exclusive holder, shared
//! holders, and the queue of waiting requests), plus a *waiting room* for
//! lock waits (below). Every state change of an entry happens under its
//! shard's latch. Entries with neither holders nor queued requests are
//! removed, so memory follows the locks in use, not the names ever locked.
//! Beside the shards, one *wait-for graph* (`graph.rs`, behind its own
//! mutex) has a node per queued request with edges to whom it waits for.
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
//! and an *epoch* counter. All flavours use this same path, so they differ in
//! the latch alone.
//!
//! **States of a request** (for transaction attempt `ts`, a [`TxnTs`]):
//! *checked* → *granted* | *queued*; *queued* → *granted* | *victim*. A
//! queued request is either *asleep* in its shard's room or *checking*
//! (holding the latch). In the graph it is a node from its first check as
//! queued until it leaves the queue; a node is *waiting* or *doomed* (chosen
//! as a victim by someone else; its edges are gone).
//!
//! **Grant rule.** Shared–shared is the only compatible pair. A *shared*
//! request is granted iff no exclusive holder and no exclusive request (plain
//! or upgrade) queued before it — for a new request, anywhere in the queue:
//! a reader never passes a queued writer. A *plain exclusive* request is
//! granted iff the lock has no holders and either nobody queues, or the lock
//! still admits *passes*: a grant of an exclusive request past a waiting one
//! counts one pass, and after `entry::MAX_PASSES` the lock is granted in
//! queue order only (an exclusive request then waits for everyone queued
//! before it) until the request at the head of the queue gets it. Passing
//! keeps a just-freed hot lock busy with a running transaction instead of
//! idle until a sleeping waiter is scheduled (with more terminals than cores
//! a strict hand-off convoys); the bound keeps waiters from starving. An
//! *upgrade* (a shared holder asking for exclusive) queues before every plain
//! request (they wait for its shared lock anyway) and is granted iff it is
//! the sole holder. A request for a lock held in that mode or a stronger one
//! is `AlreadyHeld` and never queues. A queued request's *blockers* (its
//! edges) are exactly what the rule makes it wait for: the conflicting
//! holders, plus the exclusive requests before it (shared), or everyone
//! before it once passes are used up (exclusive).
//!
//! **Acquire** (`ts`, name, mode):
//! 1. under the latch: held → `AlreadyHeld`; grantable → record (a pass if
//!    others queue), `Acquired` or `Upgraded` (notify if others queue: their
//!    edges grew, or a shared grant may let the next shared waiters in);
//!    else push on the queue;
//! 2. loop, under the latch: compute the blockers; read the shard's epoch `e`;
//!    take the graph mutex for one *step*: doomed → leave the graph, be a
//!    victim; no blockers → leave the graph, dequeue and take the lock; else
//!    set its edges to the blockers and, if that added an edge, search for a
//!    cycle through itself and break each one found by choosing its youngest
//!    member (largest `ts`): itself → leave the graph, be a victim; another →
//!    mark it doomed, clear its edges, remember its shard;
//! 3. release the graph mutex and the latch, notify the shards of the doomed
//!    (and its own, if an upgrade was queued before others) — on *every*
//!    verdict: a step can doom another request and then find itself the
//!    youngest of a further cycle, and the doomed one sleeps until told —,
//!    then, if it waits, sleep in the room until the epoch moved past `e`,
//!    and go to 2.
//!
//! A victim leaves the queue (notifying the shard if others queue) and
//! returns [`Deadlock`]; the caller rolls back, releasing its locks, and may
//! retry as [`TxnTs::retry`] (same age, new identity in the graph).
//!
//! **Cancellation** ([`LockManager::acquire_cancellable`]): a queued request
//! whose [`CancelToken`] was cancelled (or timed out) finds so at its next
//! check, under the latch, instead of its graph step: it leaves the graph
//! (doomed or not), leaves the queue as a victim does, and returns
//! [`WaitError::Cancelled`]; the caller rolls back. A cancel does not notify
//! the room, so a cancellable sleeper waits at most [`CANCEL_POLL`] before it
//! checks again (a bounded stop time without a registry of sleepers). Leaving
//! the graph keeps it acyclic and detection complete: the request is a running
//! transaction again, and edges to a running transaction close no cycle.
//!
//! **Release** removes the holder; if anyone queues on the entry it notifies
//! the shard's room (all its sleepers re-check; different names in one shard
//! share it, which costs spurious wake-ups, never missed ones).
//!
//! **Strictness** is the caller's part: a transaction releases only after it
//! committed or rolled back (`Txn::commit`/`Txn::rollback` in `txn`); a
//! [`LockSet`] releases whatever it still holds when dropped, so a
//! transaction that panics frees its locks.
//!
//! **Lock order.** shard latch → graph mutex, and nothing else nests:
//! nothing is taken while holding the graph mutex; a room's mutex is taken
//! only with nothing held (notifications happen after the latch is
//! released; a sleeper holds its room's mutex only to check the epoch and
//! enter the condvar, and re-takes the latch after leaving it). No thread
//! holds two shard latches: a request touches one entry, a release one at a
//! time. So the manager's own mutexes cannot deadlock, and detection never
//! waits for a lock: nothing sleeps holding the graph mutex or a latch.
//!
//! **No lost wake-up.** A sleeper reads its shard's epoch `e` under the latch
//! before its graph step and sleeps only while the epoch is `e`. (a) Entry
//! changes: every later change of its entry that can matter to it (a grant,
//! a release, a request leaving the queue, an upgrade queued before it; not
//! a request queued behind it, which changes nobody's blockers) happens
//! under the same latch, sees the queue non-empty, and is followed (after
//! unlocking) by a bump of the epoch, which therefore comes after the read. (b) Being doomed: the
//! doom is a graph step after the sleeper's own step (which made it a node),
//! so after its epoch read; the doomer bumps the epoch after its step. In both
//! cases the notifier then locks and unlocks the room's mutex and notifies
//! the condvar. The sleeper checks `epoch == e` under the room's mutex and,
//! while it holds, enters the condvar wait, which reads the condvar's
//! sequence number before it releases that mutex. The room's mutex orders
//! the two: if the notifier passed through it first, the sleeper's check sees
//! the bump and it does not sleep; otherwise the notify comes after the
//! sleeper read the sequence number, so its park sees a new number or it is
//! unparked. (Relaxed epoch accesses suffice: the latch, the graph mutex and
//! the room's mutex order each read against the bump it must see.)
//!
//! **Every deadlock is detected.** A deadlock is a cycle of queued requests
//! each waiting for the next. The graph has the edges each request computed
//! at its last check, and every change of an entry with a queue wakes its
//! requests to check again, so a cycle of requests that all sleep for good
//! is in the graph once each has checked after the last change. A cycle
//! appears in the graph only when some step adds an edge, and that step
//! searches from the request that added it, through which every new cycle
//! runs, and breaks them all (the graph is acyclic between steps; debug
//! builds assert it). Victims leave the graph, so a cycle has exactly one
//! victim, and the others keep waiting until it has rolled back.
//!
//! **No phantom deadlocks.** An edge can be stale only towards an attempt
//! that released its locks, which is not queued anywhere (a node leaves the
//! graph before its request returns), so the edge leads to no node and
//! closes no cycle; a victim's retry is a new [`TxnTs`] attempt.
//!
//! **Writers do not starve.** A shared request never passes a queued
//! exclusive one (grant rule), so once a writer queues, no new reader gets
//! in before it. Nor does any waiter starve behind other writers: at most
//! `MAX_PASSES` grants pass the head of the queue before the lock goes in
//! queue order, holders are finite (strict 2PL: each ends by commit or
//! rollback), and a request waiting in a cycle is either the victim or
//! waits for one. A transaction does not starve as a victim either: victims
//! are the youngest of their cycle, and a retry keeps its age, so it
//! eventually is older than every transaction it can meet.

mod entry;
mod graph;
mod latch;
mod name;
mod set;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use std::time::Duration;

use maestro_scheduler::sync::{Condvar, Mutex};
use maestro_scheduler::{CancelToken, Cancelled};

use entry::{BuildNameHasher, Check, Entry, mix};
pub use graph::VictimCause;
use graph::{Verdict, WaitForGraph};
pub use latch::{LatchFlavour, RawSpinLock, SpinLock, SpinLockGuard};
use latch::{ShardGuard, ShardLatch};
pub use name::{LOCK_KEY_BITS, LockMode, LockName, LockSpace, TxnTs};
pub use set::LockSet;

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

/// Why a request was refused: waiting for `name` in `mode` would have closed
/// a cycle in the wait-for graph, and this transaction was the cycle's
/// youngest. Nothing was recorded; the caller must roll back, releasing
/// everything it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadlock {
    pub name: LockName,
    pub mode: LockMode,
    pub cause: VictimCause,
}

/// How long a cancellable lock wait sleeps before it looks at its token
/// again: the bound on how late a cancel or a timeout stops a waiting
/// transaction. Guessed: far above a lock's usual hold time (µs), far below
/// a statement timeout anyone sets; a wake-up per 5 ms of waiting costs
/// nothing measurable.
pub const CANCEL_POLL: Duration = Duration::from_millis(5);

/// Why a cancellable request was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitError {
    /// A deadlock victim (see [`Deadlock`]).
    Deadlock(Deadlock),
    /// The request's token was cancelled or timed out while it waited (or
    /// before it asked); nothing was recorded. The caller must roll back.
    Cancelled(Cancelled),
}

/// Counters summed over the shards.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LockStats {
    /// Locks granted (new and upgrades).
    pub acquired: u64,
    /// Requests that queued (waited at least once) before their grant or
    /// their end as a deadlock victim.
    pub waits: u64,
    /// Requests refused as deadlock victims.
    pub deadlock_victims: u64,
    /// Shard-latch acquisitions (by requests, releases and stats) that
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
    /// The waiting room for lock waits (see the module docs).
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

    /// The epoch a sleeper compares against (read under the latch, before
    /// the graph step).
    fn epoch(&self) -> u64 {
        // Relaxed: the latch and the graph mutex order this read before every
        // bump it must not miss (see "No lost wake-up" in the module docs).
        self.epoch.load(Ordering::Relaxed)
    }

    /// A lock wait, with the latch released: sleeps (as *blocked* on a
    /// worker) until the epoch moved past `seen` — or, for a cancellable
    /// request, at most [`CANCEL_POLL`], after which it checks again.
    fn sleep(&self, seen: u64, cancellable: bool) {
        let mut room = self.room.lock();
        // Relaxed: the room's mutex orders this read against the bump.
        while self.epoch.load(Ordering::Relaxed) == seen {
            if cancellable {
                self.changed.wait_timeout(&mut room, CANCEL_POLL);
                return;
            }
            self.changed.wait(&mut room);
        }
    }

    /// After a change (with no room mutex held): wakes the shard's sleepers.
    fn notify(&self) {
        // Relaxed: paired through the room's mutex (see `sleep`).
        self.epoch.fetch_add(1, Ordering::Relaxed);
        drop(self.room.lock());
        self.changed.notify_all();
    }
}

/// The lock table. `Sync`: share it by reference between terminals.
pub struct LockManager {
    shards: Box<[Shard]>,
    graph: Mutex<WaitForGraph>,
    next_age: AtomicU64,
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
            graph: Mutex::new(WaitForGraph::default()),
            next_age: AtomicU64::new(1),
        }
    }

    /// The flavour of the shard latches.
    pub fn flavour(&self) -> LatchFlavour {
        self.shards[0].state.flavour()
    }

    /// The first attempt of a new transaction, younger than every earlier
    /// one. A victim's retry is [`TxnTs::retry`] of it.
    pub fn begin(&self) -> TxnTs {
        // Relaxed: uniqueness and order come from the RMW itself.
        TxnTs::first(self.next_age.fetch_add(1, Ordering::Relaxed))
    }

    /// A lock set for transaction attempt `ts`, remembering its locks in
    /// `held` (empty; a buffer the caller reuses).
    pub fn lock_set<'a>(&'a self, ts: TxnTs, held: &'a mut Vec<LockName>) -> LockSet<'a> {
        LockSet::new(self, ts, held)
    }

    fn shard_index(&self, name: LockName) -> usize {
        let bits = LOCK_SHARDS.trailing_zeros();
        // `checked_shr`: a shift by 64 (one shard) would overflow.
        mix(name.word()).checked_shr(64 - bits).unwrap_or(0) as usize
    }

    fn shard(&self, name: LockName) -> &Shard {
        &self.shards[self.shard_index(name)]
    }

    /// Requests `name` in `mode` for transaction attempt `ts`, waiting while
    /// it conflicts; fails only if it is chosen as a deadlock victim (see
    /// the module docs).
    pub fn acquire(&self, ts: TxnTs, name: LockName, mode: LockMode) -> Result<Grant, Deadlock> {
        self.acquire_inner(ts, name, mode, None)
            .map_err(|e| match e {
                WaitError::Deadlock(d) => d,
                WaitError::Cancelled(c) => {
                    unreachable!("a request without a token was cancelled: {c:?}")
                }
            })
    }

    /// [`acquire`](Self::acquire) that gives up once `cancel` is cancelled or
    /// times out — before asking, or while it waits (within
    /// [`CANCEL_POLL`]); see "Cancellation" in the module docs.
    pub fn acquire_cancellable(
        &self,
        ts: TxnTs,
        name: LockName,
        mode: LockMode,
        cancel: &CancelToken,
    ) -> Result<Grant, WaitError> {
        if let Some(reason) = cancel.reason() {
            return Err(WaitError::Cancelled(Cancelled { reason }));
        }
        self.acquire_inner(ts, name, mode, Some(cancel))
    }

    fn acquire_inner(
        &self,
        ts: TxnTs,
        name: LockName,
        mode: LockMode,
        cancel: Option<&CancelToken>,
    ) -> Result<Grant, WaitError> {
        let index = self.shard_index(name);
        let shard = &self.shards[index];
        let mut state = shard.lock();
        let st = &mut *state;
        let entry = st.entries.entry(name.word()).or_default();
        let check = entry.check(ts, mode);
        let grant = match check {
            Check::Held => return Ok(Grant::AlreadyHeld),
            Check::Grant => Grant::Acquired,
            Check::Upgrade => Grant::Upgraded,
            Check::Wait => {
                let reordered = entry.enqueue(ts, mode);
                st.stats.waits += 1;
                return self.wait_in_queue(index, state, reordered, ts, name, mode, cancel);
            }
        };
        entry.grant_new(ts, mode, check);
        let notify = entry.waiting() > 0;
        st.stats.acquired += 1;
        drop(state);
        if notify {
            shard.notify();
        }
        Ok(grant)
    }

    /// Steps 2–3 of Acquire for a request just queued (`reordered`: queued
    /// before others, whose edges changed).
    #[allow(clippy::too_many_arguments)]
    fn wait_in_queue<'a>(
        &'a self,
        index: usize,
        mut state: ShardGuard<'a, ShardState>,
        reordered: bool,
        ts: TxnTs,
        name: LockName,
        mode: LockMode,
        cancel: Option<&CancelToken>,
    ) -> Result<Grant, WaitError> {
        let shard = &self.shards[index];
        let mut blockers = Vec::new();
        // Shards to notify once the latch is released.
        let mut wake = Vec::new();
        if reordered {
            wake.push(index);
        }
        loop {
            let st = &mut *state;
            let entry = st
                .entries
                .get_mut(&name.word())
                .expect("an entry with a queue is never removed");
            let check = entry.check_queued(ts, &mut blockers);
            let seen = shard.epoch();
            let blocked = (check == Check::Wait).then_some(blockers.as_slice());
            let cancelled = match cancel.and_then(CancelToken::reason) {
                Some(reason) if blocked.is_some() => Some(Cancelled { reason }),
                _ => None,
            };
            if let Some(c) = cancelled {
                self.graph.lock().leave(ts);
                entry.dequeue(ts, false);
                let notify = entry.waiting() > 0;
                if entry.unused() {
                    st.entries.remove(&name.word());
                }
                drop(state);
                wake.extend(notify.then_some(index));
                self.notify_shards(&mut wake);
                return Err(WaitError::Cancelled(c));
            }
            let verdict = self.graph.lock().step(ts, index, blocked, &mut wake);
            match verdict {
                Verdict::Wait => {
                    drop(state);
                    self.notify_shards(&mut wake);
                    shard.sleep(seen, cancel.is_some());
                    state = shard.lock();
                }
                Verdict::Proceed => {
                    entry.dequeue(ts, true);
                    entry.grant(ts, mode);
                    st.stats.acquired += 1;
                    let notify = entry.waiting() > 0;
                    drop(state);
                    wake.extend(notify.then_some(index));
                    self.notify_shards(&mut wake);
                    return Ok(match check {
                        Check::Upgrade => Grant::Upgraded,
                        _ => Grant::Acquired,
                    });
                }
                Verdict::Victim(cause) => {
                    entry.dequeue(ts, false);
                    st.stats.deadlock_victims += 1;
                    let notify = entry.waiting() > 0;
                    if entry.unused() {
                        st.entries.remove(&name.word());
                    }
                    drop(state);
                    // `wake` may name requests this step doomed before it
                    // found itself the youngest of a further cycle: they
                    // sleep until told (the stall CI caught on 2026-11-25).
                    wake.extend(notify.then_some(index));
                    self.notify_shards(&mut wake);
                    return Err(WaitError::Deadlock(Deadlock { name, mode, cause }));
                }
            }
        }
    }

    /// Notifies each shard in `wake` once (with no latch held), leaving it
    /// empty. Every exit of a wait goes through here, so a request doomed
    /// or reordered by a step is woken whatever that step's own verdict.
    fn notify_shards(&self, wake: &mut Vec<usize>) {
        wake.sort_unstable();
        wake.dedup();
        for i in wake.drain(..) {
            self.shards[i].notify();
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
        let notify = entry.waiting() > 0;
        if entry.unused() {
            state.entries.remove(&name.word());
        }
        drop(state);
        if notify {
            shard.notify();
        }
        released
    }

    /// Counters summed over the shards (each read under its latch).
    pub fn stats(&self) -> LockStats {
        self.shards
            .iter()
            .fold(LockStats::default(), |mut sum, shard| {
                let s = shard.state.lock().stats;
                sum.acquired += s.acquired;
                sum.waits += s.waits;
                sum.deadlock_victims += s.deadlock_victims;
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

    /// Every lock in use (holders, queue, passes) and every wait-for graph
    /// node, as text: what a stall watchdog prints before it aborts.
    pub fn debug_dump(&self) -> String {
        let mut out = String::new();
        for (i, shard) in self.shards.iter().enumerate() {
            let state = shard.state.lock();
            for (name, entry) in &state.entries {
                out += &format!(
                    "shard {i} epoch {} name {name:#x}: {entry:?}\n",
                    shard.epoch()
                );
            }
        }
        out += &format!("graph: {:?}", *self.graph.lock());
        out
    }

    /// Requests in the wait-for graph right now (0 when nobody waits).
    pub fn waiting_requests(&self) -> usize {
        self.graph.lock().len()
    }
}

#[cfg(test)]
mod tests;
