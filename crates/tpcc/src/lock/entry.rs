//! One lock's state inside its shard: the holders and the queue of waiting
//! requests, the grant rule (see `mod.rs`: a shared request never passes a
//! queued exclusive one; an exclusive one may take a free lock past waiters
//! at most [`MAX_PASSES`] times in a row) and whom a waiting request waits
//! for (its edges in the wait-for graph).

use std::collections::VecDeque;
use std::hash::{BuildHasherDefault, Hasher};

use super::name::{LockMode, TxnTs};

/// Shared holders kept inline before spilling to the heap. TPC-C's shared
/// locks rarely have more than two holders at once, so a lock table under that
/// load allocates nothing once warm.
const INLINE_SHARED: usize = 4;

/// The timestamps of a lock's shared holders (a small set).
#[derive(Default, Debug)]
struct SharedHolders {
    inline: [u64; INLINE_SHARED],
    len: usize,
    spill: Vec<u64>,
}

impl SharedHolders {
    fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.inline[..self.len.min(INLINE_SHARED)]
            .iter()
            .chain(&self.spill)
            .copied()
    }

    fn contains(&self, ts: u64) -> bool {
        self.iter().any(|t| t == ts)
    }

    fn insert(&mut self, ts: u64) {
        if self.len < INLINE_SHARED {
            self.inline[self.len] = ts;
        } else {
            self.spill.push(ts);
        }
        self.len += 1;
    }

    fn remove(&mut self, ts: u64) -> bool {
        let inline = self.len.min(INLINE_SHARED);
        if let Some(i) = self.inline[..inline].iter().position(|&t| t == ts) {
            // Refill the hole from the spill, else from the last inline slot.
            self.inline[i] = match self.spill.pop() {
                Some(t) => t,
                None => self.inline[inline - 1],
            };
        } else if let Some(i) = self.spill.iter().position(|&t| t == ts) {
            self.spill.swap_remove(i);
        } else {
            return false;
        }
        self.len -= 1;
        true
    }

    fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Grants that may pass a lock's waiting requests before it turns strictly
/// FIFO until the request at the head of its queue gets it (guessed: enough
/// that a running transaction takes a just-freed hot lock instead of waiting
/// for a sleeping waiter to be scheduled — the convoy a strict hand-off makes
/// with more terminals than cores —, small enough that a waiter is passed a
/// bounded number of times).
pub(super) const MAX_PASSES: u32 = 16;

/// What a request would get now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Check {
    /// The requester already holds the lock in this mode or a stronger one.
    Held,
    /// Free for the requester: grant it.
    Grant,
    /// The requester is the only shared holder and wants exclusive.
    Upgrade,
    /// It must wait (queued; [`Entry::check_queued`] names for whom).
    Wait,
}

/// Where a waiting request stands in the queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Queued {
    /// A shared holder asking for exclusive: queued before every plain
    /// request (they wait for its shared lock anyway; behind them it would
    /// wait for them and deadlock for sure).
    Upgrade,
    /// Any other request: queued at the tail.
    Plain,
}

/// A request waiting for the lock.
#[derive(Debug, Clone, Copy)]
struct Waiter {
    ts: u64,
    mode: LockMode,
    queued: Queued,
}

/// A lock with holders or waiters. Entries without either are removed, so the
/// table holds only locks in use.
#[derive(Default, Debug)]
pub(super) struct Entry {
    exclusive: Option<u64>,
    shared: SharedHolders,
    /// Waiting requests, upgrades first, then in arrival order. A
    /// transaction waits for one lock at a time, so a timestamp appears at
    /// most once. Empty (and unallocated) while nobody waits.
    queue: VecDeque<Waiter>,
    /// Exclusive grants that passed a waiting request since the head of the
    /// queue last got the lock (or the queue was empty); at [`MAX_PASSES`]
    /// the lock is granted in queue order only.
    passes: u32,
}

impl Entry {
    /// Whether exclusive requests may still pass waiting ones.
    fn barging(&self) -> bool {
        self.passes < MAX_PASSES
    }

    /// A request not queued yet (the grant rule of `mod.rs`).
    pub(super) fn check(&self, ts: TxnTs, mode: LockMode) -> Check {
        let ts = ts.0;
        match (self.exclusive, mode) {
            (Some(x), _) if x == ts => Check::Held,
            (Some(_), _) => Check::Wait,
            (None, LockMode::Shared) if self.shared.contains(ts) => Check::Held,
            (None, LockMode::Shared) => {
                // A queued writer (or upgrade) goes first: writers do not starve.
                if self.queue.iter().any(|w| w.mode == LockMode::Exclusive) {
                    Check::Wait
                } else {
                    Check::Grant
                }
            }
            (None, LockMode::Exclusive) if self.shared.contains(ts) => {
                // Queued requests all wait for this holder: an upgrade needs
                // only to be the sole holder.
                if self.shared.len == 1 {
                    Check::Upgrade
                } else {
                    Check::Wait
                }
            }
            (None, LockMode::Exclusive) => {
                if self.shared.is_empty() && (self.queue.is_empty() || self.barging()) {
                    Check::Grant
                } else {
                    Check::Wait
                }
            }
        }
    }

    /// Queues a request [`Entry::check`] told to wait. True if it went
    /// before other waiters (an upgrade), whose wait-for edges then changed.
    pub(super) fn enqueue(&mut self, ts: TxnTs, mode: LockMode) -> bool {
        debug_assert!(self.position(ts).is_none(), "{ts:?} queued twice");
        let queued = if mode == LockMode::Exclusive && self.shared.contains(ts.0) {
            Queued::Upgrade
        } else {
            Queued::Plain
        };
        let waiter = Waiter {
            ts: ts.0,
            mode,
            queued,
        };
        match queued {
            Queued::Plain => {
                self.queue.push_back(waiter);
                false
            }
            Queued::Upgrade => {
                let at = self
                    .queue
                    .iter()
                    .position(|w| w.queued == Queued::Plain)
                    .unwrap_or(self.queue.len());
                self.queue.insert(at, waiter);
                at + 1 < self.queue.len()
            }
        }
    }

    fn position(&self, ts: TxnTs) -> Option<usize> {
        self.queue.iter().position(|w| w.ts == ts.0)
    }

    /// A queued request: `Grant`/`Upgrade` if it may take the lock now, else
    /// `Wait` with `blockers` set to whom it waits for — the conflicting
    /// holders; for a shared request the exclusive ones queued before it;
    /// for an exclusive one, once the lock stopped admitting passes, every
    /// request queued before it — sorted, without duplicates.
    pub(super) fn check_queued(&self, ts: TxnTs, blockers: &mut Vec<u64>) -> Check {
        let i = self.position(ts).expect("a waiting request is queued");
        let me = self.queue[i];
        blockers.clear();
        blockers.extend(self.exclusive);
        let ahead = self.queue.iter().take(i);
        match me.mode {
            LockMode::Shared => {
                blockers.extend(
                    ahead
                        .filter(|w| w.mode == LockMode::Exclusive)
                        .map(|w| w.ts),
                );
            }
            LockMode::Exclusive => {
                blockers.extend(self.shared.iter().filter(|&s| s != ts.0));
                if me.queued == Queued::Plain && !self.barging() {
                    blockers.extend(ahead.map(|w| w.ts));
                }
            }
        }
        debug_assert!(!blockers.contains(&ts.0), "{ts:?} waits for itself");
        if !blockers.is_empty() {
            blockers.sort_unstable();
            blockers.dedup();
            return Check::Wait;
        }
        match me.queued {
            Queued::Upgrade => Check::Upgrade,
            Queued::Plain => Check::Grant,
        }
    }

    /// Takes a queued request out of the queue: it is a deadlock victim, or
    /// it was granted (then `granted` is true and the caller records the
    /// grant with [`Entry::grant`]).
    pub(super) fn dequeue(&mut self, ts: TxnTs, granted: bool) {
        let i = self.position(ts).expect("a waiting request is queued");
        let me = self.queue.remove(i).expect("position is in the queue");
        if i == 0 || self.queue.is_empty() {
            // The head moved on: passes count afresh.
            self.passes = 0;
        } else if granted && me.mode == LockMode::Exclusive && me.queued == Queued::Plain {
            self.passes += 1;
        }
    }

    /// Requests waiting for this lock.
    pub(super) fn waiting(&self) -> usize {
        self.queue.len()
    }

    /// Records a grant `check` or `check_queued` allowed (after `dequeue`
    /// for a queued request).
    pub(super) fn grant(&mut self, ts: TxnTs, mode: LockMode) {
        debug_assert!(self.exclusive.is_none(), "grant beside an exclusive holder");
        match mode {
            LockMode::Shared => self.shared.insert(ts.0),
            LockMode::Exclusive => {
                self.shared.remove(ts.0);
                debug_assert!(self.shared.is_empty(), "exclusive beside shared holders");
                self.exclusive = Some(ts.0);
            }
        }
    }

    /// Records a grant to a request that never queued: a plain exclusive
    /// one granted while others wait passed them.
    pub(super) fn grant_new(&mut self, ts: TxnTs, mode: LockMode, check: Check) {
        if check == Check::Grant && mode == LockMode::Exclusive && !self.queue.is_empty() {
            self.passes += 1;
        }
        self.grant(ts, mode);
    }

    /// Removes `ts` from the holders; false if it held nothing.
    pub(super) fn release(&mut self, ts: TxnTs) -> bool {
        if self.exclusive == Some(ts.0) {
            self.exclusive = None;
            true
        } else {
            self.shared.remove(ts.0)
        }
    }

    /// No holders and no waiters: the entry can leave the table.
    pub(super) fn unused(&self) -> bool {
        self.exclusive.is_none() && self.shared.is_empty() && self.queue.is_empty()
    }
}

/// splitmix64's finalizer: every input bit affects every output bit.
pub(super) fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The shard tables' hasher. Shards are chosen by the top bits of
/// `mix(name)`; hashing `name` offset by a constant gives bits independent of
/// those, so entries of one shard still spread over its buckets and tags.
#[derive(Default)]
pub(super) struct NameHasher(u64);

const HASH_OFFSET: u64 = 0x9e37_79b9_7f4a_7c15;

impl Hasher for NameHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = mix(self.0 ^ u64::from(b) ^ HASH_OFFSET);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = mix(n ^ HASH_OFFSET);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

pub(super) type BuildNameHasher = BuildHasherDefault<NameHasher>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_holders_spill_and_shrink() {
        let mut s = SharedHolders::default();
        for t in 1..=9 {
            s.insert(t);
        }
        assert!((1..=9).all(|t| s.contains(t)) && !s.contains(10));
        for t in [2, 9, 1, 5] {
            assert!(s.remove(t) && !s.remove(t));
        }
        let mut left: Vec<u64> = s.iter().collect();
        left.sort_unstable();
        assert_eq!(left, [3, 4, 6, 7, 8]);
    }

    #[test]
    fn checks_follow_the_compatibility_matrix() {
        let (old, young) = (TxnTs(1), TxnTs(2));
        let mut e = Entry::default();
        assert_eq!(e.check(young, LockMode::Exclusive), Check::Grant);
        e.grant(young, LockMode::Shared);
        assert_eq!(e.check(young, LockMode::Shared), Check::Held);
        assert_eq!(e.check(old, LockMode::Shared), Check::Grant);
        assert_eq!(e.check(young, LockMode::Exclusive), Check::Upgrade);
        e.grant(old, LockMode::Shared);
        assert_eq!(e.check(young, LockMode::Exclusive), Check::Wait);
        assert!(e.release(old) && !e.release(old));
        e.grant(young, LockMode::Exclusive);
        assert_eq!(e.check(young, LockMode::Shared), Check::Held);
        assert_eq!(e.check(old, LockMode::Shared), Check::Wait);
        assert!(e.release(young) && e.unused());
    }

    #[test]
    fn the_queue_keeps_writers_ahead_of_later_readers() {
        let (reader, writer, late) = (TxnTs(1), TxnTs(2), TxnTs(3));
        let mut blockers = Vec::new();
        let mut e = Entry::default();
        e.grant(reader, LockMode::Shared);
        assert_eq!(e.check(writer, LockMode::Exclusive), Check::Wait);
        assert!(!e.enqueue(writer, LockMode::Exclusive));
        assert_eq!(e.check_queued(writer, &mut blockers), Check::Wait);
        assert_eq!(blockers, [reader.0]);
        // Compatible with the holder, but not with the queued writer.
        assert_eq!(e.check(late, LockMode::Shared), Check::Wait);
        assert!(!e.enqueue(late, LockMode::Shared));
        assert_eq!(e.check_queued(late, &mut blockers), Check::Wait);
        assert_eq!(blockers, [writer.0]);
        // A holder's shared re-request is held, not queued.
        assert_eq!(e.check(reader, LockMode::Shared), Check::Held);
        assert!(e.release(reader));
        assert_eq!(e.check_queued(writer, &mut blockers), Check::Grant);
        e.dequeue(writer, true);
        e.grant(writer, LockMode::Exclusive);
        assert_eq!(e.check_queued(late, &mut blockers), Check::Wait);
        assert_eq!(blockers, [writer.0]);
        assert!(e.release(writer));
        assert_eq!(e.check_queued(late, &mut blockers), Check::Grant);
        e.dequeue(late, true);
        assert!(e.unused());
    }

    #[test]
    fn upgrades_queue_before_plain_requests() {
        let (a, b, c) = (TxnTs(1), TxnTs(2), TxnTs(3));
        let mut blockers = Vec::new();
        let mut e = Entry::default();
        e.grant(a, LockMode::Shared);
        e.grant(b, LockMode::Shared);
        assert!(!e.enqueue(c, LockMode::Exclusive));
        // a's upgrade goes before c, which must re-check its edges.
        assert!(e.enqueue(a, LockMode::Exclusive));
        assert_eq!(e.check_queued(a, &mut blockers), Check::Wait);
        assert_eq!(blockers, [b.0]);
        assert_eq!(e.check_queued(c, &mut blockers), Check::Wait);
        assert_eq!(blockers, [a.0, b.0]);
        // b upgrading too: it waits for a (holder and queued upgrade), and a
        // for b — the cycle the wait-for graph must catch.
        assert!(e.enqueue(b, LockMode::Exclusive));
        assert_eq!(e.check_queued(b, &mut blockers), Check::Wait);
        assert_eq!(blockers, [a.0]);
        e.dequeue(b, false);
        assert!(e.release(b));
        assert_eq!(e.check_queued(a, &mut blockers), Check::Upgrade);
        e.dequeue(a, true);
        e.grant(a, LockMode::Exclusive);
        assert_eq!(e.waiting(), 1);
    }

    #[test]
    fn exclusive_requests_pass_a_waiter_a_bounded_number_of_times() {
        let waiter = TxnTs(1);
        let mut blockers = Vec::new();
        let mut e = Entry::default();
        e.grant(TxnTs(2), LockMode::Exclusive);
        assert!(!e.enqueue(waiter, LockMode::Exclusive));
        assert!(e.release(TxnTs(2)));
        // Free, the waiter not yet running: newcomers take it past it.
        for t in 0..u64::from(MAX_PASSES) {
            let barger = TxnTs(100 + t);
            assert_eq!(e.check(barger, LockMode::Exclusive), Check::Grant);
            e.grant_new(barger, LockMode::Exclusive, Check::Grant);
            assert_eq!(e.check_queued(waiter, &mut blockers), Check::Wait);
            assert_eq!(blockers, [barger.0]);
            assert!(e.release(barger));
        }
        // Passes used up: a newcomer queues behind the waiter, and waits
        // for it even once it is the only one left waiting.
        let late = TxnTs(99);
        assert_eq!(e.check(late, LockMode::Exclusive), Check::Wait);
        assert!(!e.enqueue(late, LockMode::Exclusive));
        assert_eq!(e.check_queued(late, &mut blockers), Check::Wait);
        assert_eq!(blockers, [waiter.0]);
        assert_eq!(e.check_queued(waiter, &mut blockers), Check::Grant);
        e.dequeue(waiter, true);
        e.grant(waiter, LockMode::Exclusive);
        // The head got it: passes count afresh.
        assert_eq!(e.check_queued(late, &mut blockers), Check::Wait);
        assert_eq!(blockers, [waiter.0]);
        assert!(e.release(waiter));
        assert_eq!(e.check(TxnTs(200), LockMode::Exclusive), Check::Grant);
    }
}
