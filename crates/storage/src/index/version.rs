//! The optimistic lock: one 64-bit word per node holding a lock bit, an obsolete
//! bit and a version counter (paper §3.1, §3.4). See `OLC.md` for the protocol.
//!
//! ```text
//!  63                                   2   1          0
//! +--------------------------------------+----------+--------+
//! |            version counter           | obsolete | locked |
//! +--------------------------------------+----------+--------+
//! ```
//!
//! Orderings, once for the whole file (the seqlock pattern):
//! - a writer's unlock is a `Release` store; it pairs with the `Acquire` load that
//!   starts an optimistic read ([`VersionLock::read_lock_or_restart`]) and with the
//!   `Acquire` CAS of the next writer, so both see everything the writer wrote;
//! - a writer's lock is a CAS followed by a `Release` fence; an optimistic reader's
//!   validation is an `Acquire` fence followed by a load. If a reader's relaxed
//!   load of node data saw a store made after some writer's lock, the two fences
//!   synchronize, the lock happens-before the validating load, and validation
//!   fails. So a validated read saw no write of a later critical section.

use std::sync::atomic::{AtomicU64, Ordering, fence};

use crossbeam_utils::Backoff;

/// Why an optimistic attempt gave up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Restart {
    /// A concurrent writer got in the way (validation or upgrade failed, or the
    /// node was obsolete). Counts towards the pessimistic fallback.
    Conflict,
    /// This attempt changed the tree's structure (a split) and must traverse
    /// again. Progress, not contention: does not count.
    Structural,
}

/// A snapshot of a version word.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Version(u64);

impl Version {
    pub const LOCKED: u64 = 0b01;
    pub const OBSOLETE: u64 = 0b10;
    pub const COUNTER_SHIFT: u32 = 2;
    /// One step of the counter.
    pub const COUNTER_ONE: u64 = 1 << Self::COUNTER_SHIFT;

    pub const fn from_raw(raw: u64) -> Version {
        Version(raw)
    }
    pub const fn raw(self) -> u64 {
        self.0
    }
    pub const fn is_locked(self) -> bool {
        self.0 & Self::LOCKED != 0
    }
    pub const fn is_obsolete(self) -> bool {
        self.0 & Self::OBSOLETE != 0
    }
    /// The modification counter (62 bits: at 10⁹ writes per second per node it
    /// wraps after 146 years).
    pub const fn counter(self) -> u64 {
        self.0 >> Self::COUNTER_SHIFT
    }
    /// The word while a writer holds the lock taken at `self`.
    pub const fn locked(self) -> Version {
        Version(self.0 | Self::LOCKED)
    }
    /// The word after a writer that locked at `self` modified the node: unlocked,
    /// counter + 1.
    pub const fn next(self) -> Version {
        Version((self.0 & !Self::LOCKED) + Self::COUNTER_ONE)
    }
    /// As [`next`](Self::next), and marked obsolete (the node was replaced or
    /// unlinked; it will never be unlocked-and-live again).
    pub const fn next_obsolete(self) -> Version {
        Version(self.next().0 | Self::OBSOLETE)
    }
}

/// The lock word of a node.
#[derive(Debug, Default)]
pub struct VersionLock(AtomicU64);

impl VersionLock {
    pub const fn new() -> Self {
        VersionLock(AtomicU64::new(0))
    }

    /// The current word (for assertions and tests).
    pub fn load(&self) -> Version {
        Version(self.0.load(Ordering::Relaxed))
    }

    /// Starts an optimistic read: waits while a writer holds the lock (writers'
    /// critical sections are a few hundred nanoseconds, as in the paper's
    /// `awaitNodeUnlocked`), restarts if the node is obsolete.
    #[inline]
    pub fn read_lock_or_restart(&self) -> Result<Version, Restart> {
        // Acquire: pairs with the Release unlock of the last writer, so the node's
        // contents as of that unlock are visible to the reads that follow.
        let mut v = Version(self.0.load(Ordering::Acquire));
        if v.is_locked() {
            let backoff = Backoff::new();
            while v.is_locked() {
                backoff.snooze();
                // Acquire: as above.
                v = Version(self.0.load(Ordering::Acquire));
            }
        }
        if v.is_obsolete() {
            return Err(Restart::Conflict);
        }
        Ok(v)
    }

    /// Validates an optimistic read that started at `v` (the paper's
    /// `readUnlockOrRestart` and `checkOrRestart`, which are the same operation).
    #[inline]
    pub fn check_or_restart(&self, v: Version) -> Result<(), Restart> {
        // Acquire fence: orders the relaxed data loads before the load below and
        // pairs with the Release fence after a writer's lock CAS (see module doc).
        fence(Ordering::Acquire);
        if self.0.load(Ordering::Relaxed) == v.0 {
            Ok(())
        } else {
            Err(Restart::Conflict)
        }
    }

    /// Upgrades an optimistic read that started at `v` to the exclusive lock; fails
    /// if anyone wrote (or locked) the node since. On success the reads made since
    /// `v` are valid and the caller owns the node until it unlocks.
    #[inline]
    pub fn upgrade_or_restart(&self, v: Version) -> Result<(), Restart> {
        // Acquire on success: pairs with the previous writer's Release unlock.
        match self
            .0
            .compare_exchange(v.0, v.locked().0, Ordering::Acquire, Ordering::Relaxed)
        {
            Ok(_) => {
                // Release fence: pairs with the Acquire fence in `check_or_restart`;
                // no store of this critical section can be seen by a reader whose
                // validation then succeeds.
                fence(Ordering::Release);
                Ok(())
            }
            Err(_) => Err(Restart::Conflict),
        }
    }

    /// Takes the exclusive lock pessimistically, waiting while someone else holds
    /// it; fails only if the node is (or becomes) obsolete. Returns the version
    /// the lock was taken at.
    pub fn lock_exclusive(&self) -> Result<Version, Restart> {
        let backoff = Backoff::new();
        loop {
            let v = Version(self.0.load(Ordering::Relaxed));
            if v.is_obsolete() {
                return Err(Restart::Conflict);
            }
            if !v.is_locked() {
                // Acquire: pairs with the previous writer's Release unlock.
                if self
                    .0
                    .compare_exchange_weak(v.0, v.locked().0, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
                {
                    // Release fence: as in `upgrade_or_restart`.
                    fence(Ordering::Release);
                    return Ok(v);
                }
                continue;
            }
            backoff.snooze();
        }
    }

    /// Releases a lock taken at `v` without having modified the node: restores `v`,
    /// so optimistic readers that started at `v` still validate (correctly: nothing
    /// changed).
    #[inline]
    pub fn unlock_unchanged(&self, v: Version) {
        debug_assert_eq!(self.load(), v.locked());
        // Release: pairs with readers' Acquire loads and the next writer's CAS.
        self.0.store(v.0, Ordering::Release);
    }

    /// Releases a lock taken at `v` after modifying the node: counter + 1.
    #[inline]
    pub fn unlock_modified(&self, v: Version) {
        debug_assert_eq!(self.load(), v.locked());
        // Release: pairs with readers' Acquire loads and the next writer's CAS.
        self.0.store(v.next().0, Ordering::Release);
    }

    /// Releases a lock taken at `v` and marks the node obsolete.
    #[inline]
    pub fn unlock_obsolete(&self, v: Version) {
        debug_assert_eq!(self.load(), v.locked());
        // Release: pairs with readers' Acquire loads (they then see "obsolete").
        self.0.store(v.next_obsolete().0, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_and_transitions() {
        assert_eq!(Version::LOCKED & Version::OBSOLETE, 0);
        assert_eq!(
            (Version::LOCKED | Version::OBSOLETE) & (u64::MAX << Version::COUNTER_SHIFT),
            0
        );
        let v0 = Version::from_raw(0);
        assert!(!v0.is_locked() && !v0.is_obsolete());
        assert_eq!(v0.counter(), 0);
        let l = v0.locked();
        assert!(l.is_locked() && !l.is_obsolete());
        assert_eq!(l.counter(), 0);
        let n = v0.next();
        assert!(!n.is_locked() && !n.is_obsolete());
        assert_eq!(n.counter(), 1);
        assert_eq!(l.next(), n, "next from the locked word is the same");
        let o = n.next_obsolete();
        assert!(o.is_obsolete() && !o.is_locked());
        assert_eq!(o.counter(), 2);
        let big =
            Version::from_raw(((u64::MAX >> Version::COUNTER_SHIFT) - 1) << Version::COUNTER_SHIFT);
        assert_eq!(big.next().counter(), u64::MAX >> Version::COUNTER_SHIFT);
    }

    #[test]
    fn lock_protocol_single_thread() {
        let l = VersionLock::new();
        let v = l.read_lock_or_restart().unwrap();
        assert!(l.check_or_restart(v).is_ok());
        l.upgrade_or_restart(v).unwrap();
        assert!(l.load().is_locked());
        assert_eq!(l.check_or_restart(v), Err(Restart::Conflict));
        assert_eq!(l.upgrade_or_restart(v), Err(Restart::Conflict));
        l.unlock_modified(v);
        assert_eq!(l.check_or_restart(v), Err(Restart::Conflict));
        let v2 = l.read_lock_or_restart().unwrap();
        assert_eq!(v2.counter(), 1);
        let v3 = l.lock_exclusive().unwrap();
        assert_eq!(v3, v2);
        l.unlock_unchanged(v3);
        assert!(
            l.check_or_restart(v2).is_ok(),
            "unchanged unlock keeps readers valid"
        );
        let v4 = l.lock_exclusive().unwrap();
        l.unlock_obsolete(v4);
        assert_eq!(l.read_lock_or_restart(), Err(Restart::Conflict));
        assert_eq!(l.lock_exclusive(), Err(Restart::Conflict));
    }

    #[test]
    fn readers_wait_for_the_writer() {
        let l = std::sync::Arc::new(VersionLock::new());
        let v = l.lock_exclusive().unwrap();
        let l2 = l.clone();
        let h = std::thread::spawn(move || l2.read_lock_or_restart().unwrap());
        std::thread::sleep(std::time::Duration::from_millis(20));
        l.unlock_modified(v);
        assert_eq!(h.join().unwrap(), v.next());
    }
}
