//! Doacross loops: `for ordered(n)` with `ordered depend(sink: …)` and
//! `ordered depend(source)`.
//!
//! GCC normalizes the loop nest: iteration numbers count from 0, the loops the
//! construct schedules (`collapse`) are flattened into the first one, and the
//! `ordered(n)` loops beyond them follow. `GOMP_loop_doacross_*_start` gets
//! `counts` (the number of iterations of each of those `ncounts` loops) and
//! schedules the first loop's `counts[0]` iterations like an ordinary loop;
//! `depend(source)` posts the current iteration vector
//! (`GOMP_doacross_post`), `depend(sink: v)` waits until vector `v` has been
//! posted (`GOMP_doacross_wait`).
//!
//! The state ([`Doacross`]) keeps, for each iteration of the first loop, the
//! position of the furthest vector posted in it, inner loops flattened
//! row-major, plus one (0: none yet). One member runs all of an outer
//! iteration, in order, so a position at or past `v`'s means `v` was posted.
//!
//! Waiting: a waiter spins briefly (load-aware, as at a barrier), then sleeps
//! on the construct's condvar, which counts as *blocked* for the scheduler (so
//! a member that has yet to run the awaited iteration gets a worker). Why no
//! wake-up is lost: a poster raises the position (SeqCst), then reads
//! `waiters` (SeqCst); a waiter increments `waiters` (SeqCst) under the mutex,
//! then reads the position (SeqCst). Of two SeqCst writes each followed by a
//! SeqCst read of the other's location, at least one read sees the other's
//! write: either the waiter sees the position and does not sleep, or the
//! poster sees the waiter and notifies under the mutex, which the waiter holds
//! from its check until the condvar releases it, so the notification comes
//! after the waiter sleeps. A poster with no waiter takes no lock.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use maestro_scheduler::sync::{Condvar, Mutex, load_allows_spinning};

use crate::runtime;

/// How long a waiter spins before it sleeps (as `team::BARRIER_SPIN`: most
/// sinks are posted within microseconds by a running member).
const SPIN: std::time::Duration = std::time::Duration::from_micros(20);

/// The shared state of one doacross loop construct.
pub(crate) struct Doacross {
    /// Iterations of the loops after the first (`counts[1..]`).
    inner: Box<[u64]>,
    /// Per iteration of the first loop: furthest flattened inner position
    /// posted, plus one. Raised with SeqCst `fetch_max` (see the module docs;
    /// it is also the Release that publishes the iteration's writes to the
    /// waiter's SeqCst load).
    posted: Box<[AtomicU64]>,
    /// Waiters asleep or about to sleep (see the module docs).
    waiters: AtomicUsize,
    lock: Mutex<()>,
    cv: Condvar,
}

impl Doacross {
    /// The state for a loop nest of `counts` iterations per loop.
    pub fn new(counts: &[u64]) -> Doacross {
        let Some((&outer, inner)) = counts.split_first() else {
            runtime::fatal("doacross loop without loops");
        };
        // The flattened inner positions, plus one, must fit in a u64.
        inner
            .iter()
            .try_fold(1u64, |acc, &c| acc.checked_mul(c))
            .and_then(|p| p.checked_add(1))
            .unwrap_or_else(|| runtime::fatal("doacross loop: too many inner iterations"));
        let outer = usize::try_from(outer)
            .unwrap_or_else(|_| runtime::fatal("doacross loop: too many iterations"));
        Doacross {
            inner: inner.into(),
            posted: (0..outer).map(|_| AtomicU64::new(0)).collect(),
            waiters: AtomicUsize::new(0),
            lock: Mutex::new(()),
            cv: Condvar::new(),
        }
    }

    /// Number of loops (`ncounts`).
    pub fn depth(&self) -> usize {
        self.inner.len() + 1
    }

    /// The slot of `v`'s first-loop iteration and its inner position plus
    /// one, or `None` if `v` lies outside the iteration space (no such
    /// iteration: nothing to wait for). `v` has [`Self::depth`] entries.
    fn locate(&self, v: &[u64]) -> Option<(&AtomicU64, u64)> {
        let slot = self.posted.get(usize::try_from(v[0]).ok()?)?;
        let mut pos = 0u64;
        for (&i, &n) in v[1..].iter().zip(self.inner.iter()) {
            if i >= n {
                return None;
            }
            // No overflow: bounded by the product checked in `new`.
            pos = pos * n + i;
        }
        Some((slot, pos + 1))
    }

    /// `depend(source)`: iteration `v` is done.
    pub fn post(&self, v: &[u64]) {
        let Some((slot, pos)) = self.locate(v) else {
            runtime::fatal("GOMP_doacross_post: an iteration outside the loop");
        };
        // SeqCst: see the module docs (pairs with the waiter's SeqCst load).
        slot.fetch_max(pos, Ordering::SeqCst);
        // SeqCst: the other half of the pairing with `wait`'s increment.
        if self.waiters.load(Ordering::SeqCst) > 0 {
            let _g = self.lock.lock();
            self.cv.notify_all();
        }
    }

    /// `depend(sink: v)`: waits until iteration `v` has been posted (at once
    /// if `v` is outside the iteration space).
    pub fn wait(&self, v: &[u64]) {
        let Some((slot, pos)) = self.locate(v) else {
            return;
        };
        // SeqCst: pairs with the poster's `fetch_max` (see the module docs).
        let done = || slot.load(Ordering::SeqCst) >= pos;
        if done() || self.spin(&done) {
            return;
        }
        let mut g = self.lock.lock();
        // SeqCst: see the module docs.
        self.waiters.fetch_add(1, Ordering::SeqCst);
        while !done() {
            self.cv.wait(&mut g);
        }
        // Relaxed: under the mutex; a poster that still sees this waiter
        // only takes the mutex for nothing.
        self.waiters.fetch_sub(1, Ordering::Relaxed);
    }

    /// Spins up to [`SPIN`] for `done`, only while the scheduler's load allows
    /// spinning (see `team::TeamShared::spin_until`).
    fn spin(&self, done: &impl Fn() -> bool) -> bool {
        let start = std::time::Instant::now();
        while load_allows_spinning() && start.elapsed() < SPIN {
            for _ in 0..64 {
                if done() {
                    return true;
                }
                std::hint::spin_loop();
            }
        }
        done()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn positions_flatten_inner_loops_row_major() {
        let d = Doacross::new(&[4, 3, 5]);
        assert_eq!(d.depth(), 3);
        assert_eq!(d.locate(&[0, 0, 0]).map(|(_, p)| p), Some(1));
        assert_eq!(
            d.locate(&[2, 1, 2]).map(|(_, p)| p),
            Some(5 + 2 + 1),
            "row 1 of 5, column 2"
        );
        assert_eq!(d.locate(&[3, 2, 4]).map(|(_, p)| p), Some(15));
        assert!(d.locate(&[4, 0, 0]).is_none());
        assert!(d.locate(&[0, 3, 0]).is_none());
        assert!(d.locate(&[0, 0, 5]).is_none());
    }

    #[test]
    fn a_later_post_in_the_same_outer_iteration_satisfies_earlier_sinks() {
        let d = Doacross::new(&[2, 10]);
        d.post(&[1, 6]);
        d.wait(&[1, 6]);
        d.wait(&[1, 0]);
        // Outside the space: no wait.
        d.wait(&[7, 0]);
        d.wait(&[0, 10]);
    }

    #[test]
    fn a_sleeping_waiter_is_woken_by_the_post() {
        let d = Arc::new(Doacross::new(&[3]));
        let waiter = {
            let d = d.clone();
            std::thread::spawn(move || d.wait(&[2]))
        };
        std::thread::sleep(std::time::Duration::from_millis(30));
        assert!(!waiter.is_finished());
        d.post(&[1]);
        std::thread::sleep(std::time::Duration::from_millis(10));
        assert!(!waiter.is_finished(), "another iteration's post");
        d.post(&[2]);
        waiter.join().unwrap();
    }
}
