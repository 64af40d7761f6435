//! A scheduler-aware condition variable (a futex-style sequence counter).
//!
//! `wait` reads the sequence number while holding the mutex, unlocks, and parks only
//! if the number is unchanged (checked under the bucket lock); `notify_*` bump the
//! number, then unpark. A notification between the read and the park changes the
//! number, so the waiter does not sleep: no lost wake-up.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use super::mutex::MutexGuard;
use super::park::{park_blocked, unpark_all, unpark_one};

pub struct Condvar {
    seq: AtomicU32,
}

/// Whether a timed wait returned because the time ran out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WaitTimeoutResult(bool);

impl WaitTimeoutResult {
    pub fn timed_out(self) -> bool {
        self.0
    }
}

impl Default for Condvar {
    fn default() -> Self {
        Self::new()
    }
}

impl Condvar {
    pub const fn new() -> Self {
        Condvar {
            seq: AtomicU32::new(0),
        }
    }

    fn key(&self) -> usize {
        self as *const Self as usize
    }

    /// Unlocks, sleeps until notified (or spuriously), relocks.
    pub fn wait<T: ?Sized>(&self, guard: &mut MutexGuard<'_, T>) {
        self.wait_until_internal(guard, None);
    }

    /// Waits until `condition` is false.
    pub fn wait_while<T: ?Sized>(
        &self,
        guard: &mut MutexGuard<'_, T>,
        mut condition: impl FnMut(&mut T) -> bool,
    ) {
        while condition(&mut *guard) {
            self.wait(guard);
        }
    }

    pub fn wait_timeout<T: ?Sized>(
        &self,
        guard: &mut MutexGuard<'_, T>,
        timeout: Duration,
    ) -> WaitTimeoutResult {
        self.wait_until_internal(guard, Some(Instant::now() + timeout))
    }

    pub fn wait_until<T: ?Sized>(
        &self,
        guard: &mut MutexGuard<'_, T>,
        deadline: Instant,
    ) -> WaitTimeoutResult {
        self.wait_until_internal(guard, Some(deadline))
    }

    fn wait_until_internal<T: ?Sized>(
        &self,
        guard: &mut MutexGuard<'_, T>,
        deadline: Option<Instant>,
    ) -> WaitTimeoutResult {
        let seq = self.seq.load(Ordering::Relaxed);
        let raw = &guard.mutex.raw;
        // SAFETY: the guard proves we hold the lock; we re-lock before returning, so
        // the guard's invariant holds again when the caller uses it.
        unsafe { raw.unlock() };
        let r = park_blocked(
            self.key(),
            || self.seq.load(Ordering::Relaxed) == seq,
            deadline,
        );
        raw.lock();
        WaitTimeoutResult(r == parking_lot_core::ParkResult::TimedOut)
    }

    pub fn notify_one(&self) {
        // Relaxed is enough: the bucket lock taken by unpark (and by the waiter's
        // validation) orders this increment against the waiter's check.
        self.seq.fetch_add(1, Ordering::Relaxed);
        unpark_one(self.key(), |_| {});
    }

    pub fn notify_all(&self) {
        self.seq.fetch_add(1, Ordering::Relaxed);
        unpark_all(self.key());
    }
}
