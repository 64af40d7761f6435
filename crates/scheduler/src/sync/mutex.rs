//! A scheduler-aware mutex (two bits: locked, parked — the parking_lot design).

use std::cell::UnsafeCell;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Instant;

use super::HeldLock;
use super::park::{LOCK_SPIN_ROUNDS, park_blocked, spin, unpark_one};

const LOCKED: u8 = 1;
const PARKED: u8 = 2;

/// The lock word without data; also used by [`super::Condvar`].
pub(crate) struct RawMutex {
    state: AtomicU8,
}

impl RawMutex {
    pub(crate) const fn new() -> Self {
        RawMutex {
            state: AtomicU8::new(0),
        }
    }

    fn key(&self) -> usize {
        self as *const Self as usize
    }

    pub(crate) fn try_lock(&self) -> bool {
        let mut s = self.state.load(Ordering::Relaxed);
        loop {
            if s & LOCKED != 0 {
                return false;
            }
            // Acquire: pairs with the Release in `unlock`.
            match self.state.compare_exchange_weak(
                s,
                s | LOCKED,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(x) => s = x,
            }
        }
    }

    pub(crate) fn lock(&self) {
        // Acquire: pairs with the Release in `unlock`.
        if self
            .state
            .compare_exchange_weak(0, LOCKED, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            self.lock_slow(None);
        }
    }

    /// Returns false if `deadline` passed first.
    pub(crate) fn lock_until(&self, deadline: Instant) -> bool {
        self.try_lock() || self.lock_slow(Some(deadline))
    }

    #[cold]
    fn lock_slow(&self, deadline: Option<Instant>) -> bool {
        let mut round = 0;
        loop {
            let s = self.state.load(Ordering::Relaxed);
            if s & LOCKED == 0 {
                if self
                    .state
                    .compare_exchange_weak(s, s | LOCKED, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
                {
                    return true;
                }
                continue;
            }
            if s & PARKED == 0 && round < LOCK_SPIN_ROUNDS {
                spin(round);
                round += 1;
                continue;
            }
            if s & PARKED == 0
                && self
                    .state
                    .compare_exchange_weak(s, s | PARKED, Ordering::Relaxed, Ordering::Relaxed)
                    .is_err()
            {
                continue;
            }
            let r = park_blocked(
                self.key(),
                || self.state.load(Ordering::Relaxed) == LOCKED | PARKED,
                deadline,
            );
            if r == parking_lot_core::ParkResult::TimedOut {
                return self.try_lock();
            }
            round = 0;
        }
    }

    /// # Safety
    /// The caller holds the lock.
    pub(crate) unsafe fn unlock(&self) {
        // Release: publishes the critical section to the next `lock`'s Acquire.
        if self
            .state
            .compare_exchange(LOCKED, 0, Ordering::Release, Ordering::Relaxed)
            .is_err()
        {
            self.unlock_slow();
        }
    }

    #[cold]
    fn unlock_slow(&self) {
        // Under the bucket lock: hand the lock word back, keeping PARKED if more
        // threads sleep on it (they re-set it otherwise before sleeping).
        unpark_one(self.key(), |r| {
            let next = if r.have_more_threads { PARKED } else { 0 };
            self.state.store(next, Ordering::Release);
        });
    }

    pub(crate) fn is_locked(&self) -> bool {
        self.state.load(Ordering::Relaxed) & LOCKED != 0
    }
}

/// A mutual-exclusion lock whose waiters count as *blocked* workers.
pub struct Mutex<T: ?Sized> {
    pub(crate) raw: RawMutex,
    data: UnsafeCell<T>,
}

// SAFETY: the lock hands out access to `data` to one thread at a time, so sending or
// sharing the Mutex is sound whenever T can be sent (the std Mutex bounds).
unsafe impl<T: ?Sized + Send> Send for Mutex<T> {}
// SAFETY: as above.
unsafe impl<T: ?Sized + Send> Sync for Mutex<T> {}

impl<T> Mutex<T> {
    pub const fn new(value: T) -> Self {
        Mutex {
            raw: RawMutex::new(),
            data: UnsafeCell::new(value),
        }
    }
    pub fn into_inner(self) -> T {
        self.data.into_inner()
    }
}

impl<T: ?Sized> Mutex<T> {
    pub fn lock(&self) -> MutexGuard<'_, T> {
        self.raw.lock();
        MutexGuard {
            mutex: self,
            _held: Some(HeldLock::new()),
        }
    }

    /// Locks for a *leaf* critical section: one that makes no call into the
    /// scheduler (no `join`, scope or `install`, nothing that runs other
    /// jobs) while the guard is alive, except [`super::Condvar`] waits, which
    /// release the lock. Such a guard is not counted in the thread's held
    /// locks: the count only keeps a waiting `join` from starting unrelated
    /// roots while this thread holds a lock, and a leaf section never waits in
    /// a `join`. It saves two thread-local accesses per lock — in a shared
    /// library two `__tls_get_addr` calls, ~25 instructions, which the OpenMP
    /// runtime's task queues paid several times per task (callgrind,
    /// 2026-11-26).
    pub fn lock_leaf(&self) -> MutexGuard<'_, T> {
        self.raw.lock();
        MutexGuard {
            mutex: self,
            _held: None,
        }
    }

    pub fn try_lock(&self) -> Option<MutexGuard<'_, T>> {
        self.raw.try_lock().then(|| MutexGuard {
            mutex: self,
            _held: Some(HeldLock::new()),
        })
    }

    /// Locks, giving up at `deadline`.
    pub fn lock_until(&self, deadline: Instant) -> Option<MutexGuard<'_, T>> {
        self.raw.lock_until(deadline).then(|| MutexGuard {
            mutex: self,
            _held: Some(HeldLock::new()),
        })
    }

    pub fn get_mut(&mut self) -> &mut T {
        self.data.get_mut()
    }

    pub fn is_locked(&self) -> bool {
        self.raw.is_locked()
    }
}

impl<T: Default> Default for Mutex<T> {
    fn default() -> Self {
        Mutex::new(T::default())
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for Mutex<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.try_lock() {
            Some(g) => f.debug_struct("Mutex").field("data", &&*g).finish(),
            None => f.write_str("Mutex { <locked> }"),
        }
    }
}

/// Holds the lock; unlocks on drop.
pub struct MutexGuard<'a, T: ?Sized> {
    pub(crate) mutex: &'a Mutex<T>,
    /// Counts this guard for the thread; None for a leaf guard
    /// ([`Mutex::lock_leaf`]). Keeps the guard `!Send` either way (an
    /// `Option` of a `!Send` type is `!Send`).
    _held: Option<HeldLock>,
}

// SAFETY: a shared guard only gives `&T`, which is sound to share when T is Sync.
unsafe impl<T: ?Sized + Sync> Sync for MutexGuard<'_, T> {}

impl<T: ?Sized> Deref for MutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard proves the lock is held, so no `&mut T` exists elsewhere.
        unsafe { &*self.mutex.data.get() }
    }
}

impl<T: ?Sized> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the guard proves exclusive ownership of the lock.
        unsafe { &mut *self.mutex.data.get() }
    }
}

impl<T: ?Sized> Drop for MutexGuard<'_, T> {
    fn drop(&mut self) {
        // SAFETY: this guard holds the lock.
        unsafe { self.mutex.raw.unlock() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sync::locks_held;

    #[test]
    fn a_leaf_guard_is_not_counted_and_a_plain_one_is() {
        let m = Mutex::new(1);
        let before = locks_held();
        {
            let mut g = m.lock_leaf();
            *g += 1;
            assert_eq!(locks_held(), before, "a leaf guard counted");
        }
        {
            let g = m.lock();
            assert_eq!(*g, 2, "the leaf guard's write is there");
            assert_eq!(locks_held(), before + 1);
        }
        assert_eq!(locks_held(), before);
        assert!(!m.is_locked(), "the leaf guard unlocked on drop");
    }
}
