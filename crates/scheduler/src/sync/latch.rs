//! `Latch`: a lock that decouples load control from contention management
//! (Johnson et al., DaMoN 2009; papers/README.md §4).
//!
//! Contention management is local and fast: a waiter spins on the lock word, for
//! the fastest hand-off. Load control is global and slow: the waiter checks the
//! scheduler's active level every `LOAD_CHECK_SPINS` spins, and as soon as more
//! workers are active than there are hardware contexts — spinning would then steal
//! a core from the lock holder or from useful work — it parks as *blocked*, which
//! also lets the watchdog account for it. A waiter that is not a worker has no load
//! signal and parks after `CLIENT_SPIN_LIMIT` spins. Every waiter parks after
//! `SPIN_LIMIT` spins whatever the load, which bounds the cost of a holder that was
//! itself descheduled or blocked (we cannot observe the holder running).

use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU8, Ordering};

use super::HeldLock;
use super::park::{park_blocked, unpark_one};
use crate::stats::Counters;
use crate::worker::WorkerThread;

const LOCKED: u8 = 1;
const PARKED: u8 = 2;

/// Spins between two reads of the active level. Guessed: the counts word is shared
/// by every worker; reading it on every spin would add coherence traffic.
const LOAD_CHECK_SPINS: u32 = 32;
/// Spins before a non-worker parks. Guessed (~ a few µs).
const CLIENT_SPIN_LIMIT: u32 = 1_000;
/// Spins before any waiter parks. Guessed (~ 100 µs): long TPC-C critical sections
/// are shorter than this; a holder blocked in I/O is far longer.
const SPIN_LIMIT: u32 = 50_000;

pub struct Latch<T: ?Sized> {
    state: AtomicU8,
    data: UnsafeCell<T>,
}

// SAFETY: one holder at a time gets access to `data` (std Mutex bounds).
unsafe impl<T: ?Sized + Send> Send for Latch<T> {}
// SAFETY: as above.
unsafe impl<T: ?Sized + Send> Sync for Latch<T> {}

impl<T> Latch<T> {
    pub const fn new(value: T) -> Self {
        Latch {
            state: AtomicU8::new(0),
            data: UnsafeCell::new(value),
        }
    }
    pub fn into_inner(self) -> T {
        self.data.into_inner()
    }
}

impl<T: Default> Default for Latch<T> {
    fn default() -> Self {
        Latch::new(T::default())
    }
}

/// Whether a waiting worker should keep spinning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LoadVerdict {
    /// Active level at or below the contexts: spinning costs nobody a core.
    Spin,
    /// More active workers than contexts (or no load signal and the client budget
    /// is spent): park.
    Park,
}

fn load_verdict(spins: u32) -> LoadVerdict {
    let client = WorkerThread::current().is_none();
    if (client && spins >= CLIENT_SPIN_LIMIT) || !super::load_allows_spinning() {
        LoadVerdict::Park
    } else {
        LoadVerdict::Spin
    }
}

impl<T: ?Sized> Latch<T> {
    fn key(&self) -> usize {
        &self.state as *const AtomicU8 as usize
    }

    fn try_acquire(&self) -> bool {
        let mut s = self.state.load(Ordering::Relaxed);
        while s & LOCKED == 0 {
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
        false
    }

    pub fn try_lock(&self) -> Option<LatchGuard<'_, T>> {
        self.try_acquire().then(|| LatchGuard {
            latch: self,
            _held: HeldLock::new(),
        })
    }

    pub fn lock(&self) -> LatchGuard<'_, T> {
        if !self.try_acquire() {
            self.lock_slow();
        }
        LatchGuard {
            latch: self,
            _held: HeldLock::new(),
        }
    }

    #[cold]
    fn lock_slow(&self) {
        let mut spins: u32 = 0;
        let mut verdict = LoadVerdict::Spin;
        loop {
            let s = self.state.load(Ordering::Relaxed);
            if s & LOCKED == 0 {
                if self.try_acquire() {
                    if let Some(w) = WorkerThread::current() {
                        Counters::bump(&w.shared.stats.latch_spin_acquires);
                    }
                    return;
                }
                continue;
            }
            if spins.is_multiple_of(LOAD_CHECK_SPINS) {
                verdict = load_verdict(spins);
            }
            if verdict == LoadVerdict::Spin && spins < SPIN_LIMIT {
                spins += 1;
                std::hint::spin_loop();
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
            if let Some(w) = WorkerThread::current() {
                Counters::bump(&w.shared.stats.latch_parks);
            }
            park_blocked(
                self.key(),
                || self.state.load(Ordering::Relaxed) == LOCKED | PARKED,
                None,
            );
            spins = 0;
            verdict = LoadVerdict::Spin;
        }
    }

    fn unlock(&self) {
        // Release: publishes the critical section to the next Acquire.
        if self
            .state
            .compare_exchange(LOCKED, 0, Ordering::Release, Ordering::Relaxed)
            .is_ok()
        {
            return;
        }
        unpark_one(self.key(), |r| {
            let next = if r.have_more_threads { PARKED } else { 0 };
            self.state.store(next, Ordering::Release);
        });
    }
}

pub struct LatchGuard<'a, T: ?Sized> {
    latch: &'a Latch<T>,
    /// Counts this guard for the thread (and keeps the guard `!Send`).
    _held: HeldLock,
}

// SAFETY: shares only `&T`.
unsafe impl<T: ?Sized + Sync> Sync for LatchGuard<'_, T> {}

impl<T: ?Sized> Deref for LatchGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard holds the latch exclusively.
        unsafe { &*self.latch.data.get() }
    }
}

impl<T: ?Sized> DerefMut for LatchGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the guard holds the latch exclusively.
        unsafe { &mut *self.latch.data.get() }
    }
}

impl<T: ?Sized> Drop for LatchGuard<'_, T> {
    fn drop(&mut self) {
        self.latch.unlock();
    }
}
