//! One lock's state inside its shard: the holders and how many wait, plus the
//! decision a request gets (the wait-die rule itself is applied by the caller,
//! which knows whether it may wait).

use std::hash::{BuildHasherDefault, Hasher};

use super::name::{LockMode, TxnTs};

/// Shared holders kept inline before spilling to the heap. TPC-C's shared
/// locks rarely have more than two holders at once, so a lock table under that
/// load allocates nothing once warm.
const INLINE_SHARED: usize = 4;

/// The timestamps of a lock's shared holders (a small set).
#[derive(Default)]
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

/// What a request would get now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Check {
    /// The requester already holds the lock in this mode or a stronger one.
    Held,
    /// Free for the requester: grant it.
    Grant,
    /// The requester is the only shared holder and wants exclusive.
    Upgrade,
    /// Other holders conflict; `oldest` is the oldest of them.
    Conflict { oldest: TxnTs },
}

/// A lock with holders or waiters. Entries without either are removed, so the
/// table holds only locks in use.
#[derive(Default)]
pub(super) struct Entry {
    exclusive: Option<u64>,
    shared: SharedHolders,
    /// Requests sleeping on the shard's condition variable for this lock
    /// (including backoff waits after a death).
    pub(super) waiting: u32,
}

impl Entry {
    pub(super) fn check(&self, ts: TxnTs, mode: LockMode) -> Check {
        let ts = ts.0;
        match (self.exclusive, mode) {
            (Some(x), _) if x == ts => Check::Held,
            (Some(x), _) => Check::Conflict { oldest: TxnTs(x) },
            (None, LockMode::Shared) if self.shared.contains(ts) => Check::Held,
            (None, LockMode::Shared) => Check::Grant,
            (None, LockMode::Exclusive) => match self.shared.iter().filter(|&t| t != ts).min() {
                Some(oldest) => Check::Conflict {
                    oldest: TxnTs(oldest),
                },
                None if self.shared.is_empty() => Check::Grant,
                None => Check::Upgrade,
            },
        }
    }

    /// Whether a transaction holding nothing here could be granted `mode`.
    pub(super) fn free_for(&self, mode: LockMode) -> bool {
        match mode {
            LockMode::Shared => self.exclusive.is_none(),
            LockMode::Exclusive => self.exclusive.is_none() && self.shared.is_empty(),
        }
    }

    /// Records the grant `check` allowed (`Grant` or `Upgrade`).
    pub(super) fn grant(&mut self, ts: TxnTs, mode: LockMode) {
        match mode {
            LockMode::Shared => self.shared.insert(ts.0),
            LockMode::Exclusive => {
                self.shared.remove(ts.0);
                self.exclusive = Some(ts.0);
            }
        }
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
        self.exclusive.is_none() && self.shared.is_empty() && self.waiting == 0
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
        assert_eq!(
            e.check(young, LockMode::Exclusive),
            Check::Conflict { oldest: old }
        );
        assert!(e.release(old) && !e.release(old));
        e.grant(young, LockMode::Exclusive);
        assert_eq!(e.check(young, LockMode::Shared), Check::Held);
        assert_eq!(
            e.check(old, LockMode::Shared),
            Check::Conflict { oldest: young }
        );
        assert!(!e.free_for(LockMode::Shared));
        assert!(e.release(young) && e.unused());
    }
}
