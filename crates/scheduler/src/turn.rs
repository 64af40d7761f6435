//! A turn gate: where an urgent caller beyond its share sleeps until a piece
//! of the work that fills the share ends (`caller::Admission::WaitTurn`,
//! PROTOCOL.md "Callers run, counted").
//!
//! One gate guards the urgent share of the default class
//! (`Shared::urgent_turn`, counted in `Shared::urgent_running`), and one per
//! workload class guards that class's share (`ClassSlot::turn`, counted in
//! `ClassSlot::running`). The gate does not own the count: whoever lowers it
//! calls [`TurnGate::ended`] right after, and the waiter's `ready` reads it.
//!
//! No lost wake-up (loom model: `tests/loom_turn.rs`): the waiter counts
//! itself in `waiters` (SeqCst RMW, then a SeqCst fence) before it evaluates
//! `ready` under the mutex; an ender lowers the count with a SeqCst RMW, then
//! `ended` fences (SeqCst) and reads `waiters`, and notifies under the same
//! mutex. Either the waiter's `ready` sees the lower count, or the ender sees
//! the waiter — and then its notification cannot fall between the waiter's
//! check and its sleep, because the waiter holds the mutex in between.

use std::sync::atomic::{AtomicUsize, Ordering, fence};
use std::time::Instant;

use crossbeam_utils::CachePadded;
use parking_lot::{Condvar, Mutex};

/// How a wait for a turn ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Turn {
    /// `ready` held: ask for admission again.
    Ready,
    /// The deadline passed first: hand the job to a worker.
    TimedOut,
}

/// Waiters for a turn and the condition they sleep on.
#[derive(Default)]
pub(crate) struct TurnGate {
    /// Callers inside [`TurnGate::wait`] now.
    waiters: CachePadded<AtomicUsize>,
    mutex: Mutex<()>,
    condvar: Condvar,
}

impl TurnGate {
    /// Sleeps until `ready()` holds or `deadline` passes. `ready` is evaluated
    /// under the gate's mutex, after this waiter is counted.
    pub(crate) fn wait(&self, deadline: Instant, ready: impl Fn() -> bool) -> Turn {
        // SeqCst (RMW and fence): pairs with the RMW and fence in `ended`.
        self.waiters.fetch_add(1, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        let mut guard = self.mutex.lock();
        let outcome = loop {
            if ready() {
                break Turn::Ready;
            }
            if self.condvar.wait_until(&mut guard, deadline).timed_out() {
                break Turn::TimedOut;
            }
        };
        drop(guard);
        self.waiters.fetch_sub(1, Ordering::Relaxed);
        outcome
    }

    /// A piece of the guarded work ended: its count was just lowered with a
    /// SeqCst RMW. Wakes one waiter, if any.
    ///
    /// Every ending wakes one, also an ending that leaves the share full: the
    /// waiter may go anyway if no other work waits by then (otherwise it
    /// sleeps again, and a later ending wakes one again). Waking only on
    /// endings that leave room made waiters sit out their bound behind extras
    /// beyond the share and hand off (measured on the urgent share: tpmC
    /// 0.89x -> 0.3x of multiple-pools at 4 TPC-H clients).
    pub(crate) fn ended(&self) {
        // SeqCst fence: pairs with the RMW and fence in `wait` (module docs).
        fence(Ordering::SeqCst);
        if self.waiters.load(Ordering::Relaxed) > 0 {
            let _held = self.mutex.lock();
            self.condvar.notify_one();
        }
    }

    /// Callers waiting now (tests).
    #[cfg(test)]
    pub(crate) fn waiters(&self) -> usize {
        self.waiters.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;
    use std::time::Duration;

    #[test]
    fn a_ready_condition_returns_at_once_and_a_false_one_times_out() {
        let gate = TurnGate::default();
        let far = Instant::now() + Duration::from_secs(3600);
        assert_eq!(gate.wait(far, || true), Turn::Ready);
        assert_eq!(gate.wait(Instant::now(), || false), Turn::TimedOut);
        assert_eq!(gate.waiters(), 0);
    }

    #[test]
    fn an_ending_wakes_a_waiter_whose_condition_now_holds() {
        let gate = Arc::new(TurnGate::default());
        let room = Arc::new(AtomicBool::new(false));
        let (g, r) = (gate.clone(), room.clone());
        let waiter = std::thread::spawn(move || {
            let far = Instant::now() + Duration::from_secs(3600);
            g.wait(far, || r.load(Ordering::SeqCst))
        });
        while gate.waiters() == 0 {
            std::thread::yield_now();
        }
        room.store(true, Ordering::SeqCst);
        gate.ended();
        assert_eq!(waiter.join().unwrap(), Turn::Ready);
    }
}
