//! The shard latches: the short critical sections over a shard's lock table,
//! in one of three flavours (Johnson et al., DaMoN 2009; papers/README.md §4).
//! The flavour only decides how a thread waits for a *latch* held by another
//! for a few hundred nanoseconds; waiting for a *lock* (2PL) is the shard's
//! waiting room in `mod.rs` and always blocks, whatever the flavour.

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};

use maestro_scheduler::sync::{Latch, LatchGuard, Mutex, MutexGuard};
use parking_lot::lock_api::{self, GuardNoSend};

use crate::error::TpccError;

/// How a thread waits for a shard latch another thread holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum LatchFlavour {
    /// `maestro_scheduler::sync::Mutex`, the lock manager's latch before the
    /// flavours existed (the default): a few rounds of back-off (1–8 pause
    /// instructions, then `yield_now`, 10 rounds in all) and then it parks,
    /// as a *blocked* worker, so the scheduler may activate another. It never
    /// burns a core for long, but every hand-off to a parked waiter costs a
    /// futex wake and a context switch.
    #[default]
    Blocking,
    /// A pure test-and-test-and-set spin lock: waiters spin on the lock word
    /// with `spin_loop` hints and never park or yield. The fastest hand-off
    /// while every waiter and the holder have a core; under oversubscription
    /// (more runnable threads than contexts — e.g. workers the scheduler
    /// activated while others were blocked, once those wake) a waiter may spin
    /// for a whole time slice while the holder is descheduled, and the
    /// scheduler never learns that it is waiting.
    Spinning,
    /// `maestro_scheduler::sync::Latch`: spins while the scheduler's active
    /// level is at most the contexts, parks (as *blocked*) as soon as it is
    /// above, or after a spin budget (a non-worker thread, which has no load
    /// signal, after a short one). Load control global, contention
    /// management local.
    LoadControlled,
}

impl LatchFlavour {
    /// Every flavour, by the names [`LatchFlavour::from_str`] accepts.
    pub const ALL: [LatchFlavour; 3] = [
        LatchFlavour::Blocking,
        LatchFlavour::Spinning,
        LatchFlavour::LoadControlled,
    ];

    pub fn name(self) -> &'static str {
        match self {
            LatchFlavour::Blocking => "blocking",
            LatchFlavour::Spinning => "spinning",
            LatchFlavour::LoadControlled => "load-controlled",
        }
    }
}

impl fmt::Display for LatchFlavour {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for LatchFlavour {
    type Err = TpccError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        LatchFlavour::ALL
            .into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| TpccError::InvalidOption {
                option: "latch",
                reason: format!(
                    "unknown latch flavour {s:?}; expected one of {}",
                    LatchFlavour::ALL.map(LatchFlavour::name).join(", ")
                ),
            })
    }
}

/// The lock word of [`SpinLock`]: test-and-test-and-set.
pub struct RawSpinLock(AtomicBool);

// SAFETY: `lock`/`try_lock` return only after this thread changed the word
// from false to true with an Acquire RMW, so at most one holder exists at a
// time; `unlock` (called only by the holder, per the trait's contract) stores
// false with Release, which publishes the critical section to the next
// holder's Acquire.
unsafe impl lock_api::RawMutex for RawSpinLock {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: RawSpinLock = RawSpinLock(AtomicBool::new(false));

    type Guard = GuardNoSend;

    fn lock(&self) -> GuardNoSend {
        loop {
            if let Some(g) = self.try_lock() {
                return g;
            }
            // Test before test-and-set: spin on a shared copy of the line.
            while self.0.load(Ordering::Relaxed) {
                std::hint::spin_loop();
            }
        }
    }

    fn try_lock(&self) -> Option<GuardNoSend> {
        // Acquire: pairs with the Release in `unlock`.
        self.0
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .ok()
            .map(|_| GuardNoSend::new())
    }

    unsafe fn unlock(&self, _guard: GuardNoSend) {
        self.0.store(false, Ordering::Release);
    }

    fn is_locked(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// A spin lock that never parks (see [`LatchFlavour::Spinning`]).
pub type SpinLock<T> = lock_api::Mutex<RawSpinLock, T>;
pub type SpinLockGuard<'a, T> = lock_api::MutexGuard<'a, RawSpinLock, T>;

/// A latch of the flavour chosen for its lock manager.
pub(super) enum ShardLatch<T> {
    Blocking(Mutex<T>),
    Spinning(SpinLock<T>),
    LoadControlled(Latch<T>),
}

/// Holds a [`ShardLatch`]; releases it on drop.
pub(super) enum ShardGuard<'a, T> {
    Blocking(MutexGuard<'a, T>),
    Spinning(SpinLockGuard<'a, T>),
    LoadControlled(LatchGuard<'a, T>),
}

impl<T> ShardLatch<T> {
    pub(super) fn new(flavour: LatchFlavour, value: T) -> Self {
        match flavour {
            LatchFlavour::Blocking => ShardLatch::Blocking(Mutex::new(value)),
            LatchFlavour::Spinning => ShardLatch::Spinning(SpinLock::new(value)),
            LatchFlavour::LoadControlled => ShardLatch::LoadControlled(Latch::new(value)),
        }
    }

    pub(super) fn flavour(&self) -> LatchFlavour {
        match self {
            ShardLatch::Blocking(_) => LatchFlavour::Blocking,
            ShardLatch::Spinning(_) => LatchFlavour::Spinning,
            ShardLatch::LoadControlled(_) => LatchFlavour::LoadControlled,
        }
    }

    fn try_lock(&self) -> Option<ShardGuard<'_, T>> {
        match self {
            ShardLatch::Blocking(m) => m.try_lock().map(ShardGuard::Blocking),
            ShardLatch::Spinning(m) => m.try_lock().map(ShardGuard::Spinning),
            ShardLatch::LoadControlled(m) => m.try_lock().map(ShardGuard::LoadControlled),
        }
    }

    pub(super) fn lock(&self) -> ShardGuard<'_, T> {
        self.lock_counted().0
    }

    /// Locks; the flag says whether the latch was held by someone else at
    /// the first attempt (the caller waited in the flavour's way).
    pub(super) fn lock_counted(&self) -> (ShardGuard<'_, T>, bool) {
        if let Some(g) = self.try_lock() {
            return (g, false);
        }
        let g = match self {
            ShardLatch::Blocking(m) => ShardGuard::Blocking(m.lock()),
            ShardLatch::Spinning(m) => ShardGuard::Spinning(m.lock()),
            ShardLatch::LoadControlled(m) => ShardGuard::LoadControlled(m.lock()),
        };
        (g, true)
    }
}

impl<T> Deref for ShardGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        match self {
            ShardGuard::Blocking(g) => g,
            ShardGuard::Spinning(g) => g,
            ShardGuard::LoadControlled(g) => g,
        }
    }
}

impl<T> DerefMut for ShardGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        match self {
            ShardGuard::Blocking(g) => g,
            ShardGuard::Spinning(g) => g,
            ShardGuard::LoadControlled(g) => g,
        }
    }
}
