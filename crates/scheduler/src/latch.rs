//! One-shot latches that a waiter can sleep on.
//!
//! Protocol of [`CoreLatch`] (states `UNSET → SLEEPY → SET`, or `UNSET → SET`):
//! - `set()` swaps in `SET`; if the previous state was `SLEEPY` some waiter may be
//!   parked on the latch's address, so it unparks all threads parked there.
//! - A waiter moves `UNSET → SLEEPY` and parks with the validation "state is still
//!   `SLEEPY`". `parking_lot_core` runs that validation under the same bucket lock
//!   `unpark_all` takes, so either the waiter sees `SET` and does not sleep, or it is
//!   queued before `set()`'s unpark and is woken by it: no lost wake-up.
//! - `set()` touches the latch's memory only in the swap; the unpark uses the address
//!   as a number. The owner may free the latch as soon as it observes `SET`. A stale
//!   unpark can at worst wake an unrelated waiter parked at a reused address, which
//!   re-checks its own state and parks again (every waiter loops).

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::time::Instant;

const UNSET: u8 = 0;
const SLEEPY: u8 = 1;
const SET: u8 = 2;

pub(crate) struct CoreLatch {
    state: AtomicU8,
}

impl CoreLatch {
    pub(crate) const fn new() -> Self {
        CoreLatch {
            state: AtomicU8::new(UNSET),
        }
    }

    fn key(&self) -> usize {
        self as *const Self as usize
    }

    /// True once `set()` ran. `Acquire` pairs with the `AcqRel` swap in `set()`, so
    /// everything the setter wrote before (a job's result) is visible.
    pub(crate) fn probe(&self) -> bool {
        self.state.load(Ordering::Acquire) == SET
    }

    pub(crate) fn set(&self) {
        let key = self.key();
        // AcqRel: Release publishes the setter's writes to `probe()`'s Acquire.
        let prev = self.state.swap(SET, Ordering::AcqRel);
        if prev == SLEEPY {
            // SAFETY: `unpark_all` only hashes `key`; it never dereferences it, so it is
            // sound even if the latch was freed right after the swap above.
            unsafe {
                parking_lot_core::unpark_all(key, parking_lot_core::DEFAULT_UNPARK_TOKEN);
            }
        }
    }

    /// Sleeps until set or until `deadline`; returns whether the latch is set.
    pub(crate) fn wait(&self, deadline: Option<Instant>) -> bool {
        loop {
            if self.probe() {
                return true;
            }
            if let Some(d) = deadline
                && Instant::now() >= d
            {
                return self.probe();
            }
            // Acquire on failure pairs with `set()`'s swap when we observe SET.
            let _ =
                self.state
                    .compare_exchange(UNSET, SLEEPY, Ordering::Acquire, Ordering::Acquire);
            // SAFETY: the validate and timed_out callbacks do not panic and do not call
            // into parking_lot_core; the key is this latch's address, which is live for
            // the whole call because `self` is borrowed.
            unsafe {
                parking_lot_core::park(
                    self.key(),
                    || self.state.load(Ordering::Acquire) == SLEEPY,
                    || {},
                    |_, _| {},
                    parking_lot_core::DEFAULT_PARK_TOKEN,
                    deadline,
                );
            }
        }
    }
}

/// A latch set when a counter of outstanding jobs falls to zero (scopes, graphs).
pub(crate) struct CountLatch {
    pending: AtomicUsize,
    latch: CoreLatch,
}

impl CountLatch {
    pub(crate) const fn with_count(n: usize) -> Self {
        CountLatch {
            pending: AtomicUsize::new(n),
            latch: CoreLatch::new(),
        }
    }
    pub(crate) fn increment(&self) {
        // Relaxed suffices: the incrementer holds a pending unit already, so the count
        // cannot reach zero concurrently.
        self.pending.fetch_add(1, Ordering::Relaxed);
    }
    /// Returns true if this call released the latch.
    pub(crate) fn decrement(&self) -> bool {
        // AcqRel: Release publishes this job's writes; Acquire (on the last decrement)
        // makes every other job's writes visible before the latch is set.
        if self.pending.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.latch.set();
            true
        } else {
            false
        }
    }
    pub(crate) fn probe(&self) -> bool {
        self.latch.probe()
    }
    pub(crate) fn wait(&self, deadline: Option<Instant>) -> bool {
        self.latch.wait(deadline)
    }
    pub(crate) fn core(&self) -> &CoreLatch {
        &self.latch
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn set_before_wait_returns_at_once() {
        let l = CoreLatch::new();
        l.set();
        assert!(l.wait(None));
    }

    #[test]
    fn wait_times_out_unset() {
        let l = CoreLatch::new();
        assert!(!l.wait(Some(Instant::now() + Duration::from_millis(5))));
    }

    #[test]
    fn cross_thread_wakeups_are_not_lost() {
        for _ in 0..2000 {
            let l = Arc::new(CountLatch::with_count(2));
            let a = l.clone();
            let b = l.clone();
            let t1 = std::thread::spawn(move || {
                a.decrement();
            });
            let t2 = std::thread::spawn(move || {
                b.decrement();
            });
            assert!(l.wait(Some(Instant::now() + Duration::from_secs(30))));
            t1.join().unwrap();
            t2.join().unwrap();
        }
    }
}
