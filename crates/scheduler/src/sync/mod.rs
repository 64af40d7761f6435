//! Scheduler-aware synchronization (paper §5): just before a primitive would put its
//! thread to sleep it tells the scheduler the worker is *blocked*, and *active* again
//! after waking, so the watchdog can keep the active level at the number of contexts.
//! On threads that are not workers they behave as ordinary primitives.
//!
//! All primitives sleep through `parking_lot_core::park`, whose `before_sleep`
//! callback runs after the thread is queued and before it sleeps: that is where the
//! *blocked* transition happens, so a lock that is taken while spinning never
//! counts as blocking.

mod barrier;
mod condvar;
mod event;
mod latch;
mod mutex;
mod park;
mod rwlock;
mod semaphore;

pub use barrier::{Barrier, BarrierWaitResult};
pub use condvar::{Condvar, WaitTimeoutResult};
pub use event::Event;
pub use latch::{Latch, LatchGuard};
pub use mutex::{Mutex, MutexGuard};
pub use rwlock::{RwLock, RwLockReadGuard, RwLockWriteGuard};
pub use semaphore::{Semaphore, SemaphorePermit};

use std::cell::Cell;
use std::marker::PhantomData;

use crate::counts::WorkerState;

thread_local! {
    /// Scheduler-aware lock guards (Mutex, RwLock read and write, Latch) alive on
    /// this thread.
    static LOCKS_HELD: Cell<usize> = const { Cell::new(0) };
}

/// How many scheduler-aware lock guards the calling thread holds. While it is
/// non-zero a worker waiting in a `join` or scope starts no new roots, not even
/// urgent ones: an unrelated root could try to take a lock this very thread
/// holds and deadlock on itself (PROTOCOL.md, "Locks held while waiting").
pub(crate) fn locks_held() -> usize {
    LOCKS_HELD.with(Cell::get)
}

/// One held lock guard, counted in [`locks_held`] from construction to drop.
/// Lock guards are `!Send` (this keeps them so), so the count is decremented
/// on the thread that incremented it.
pub(crate) struct HeldLock(PhantomData<*const ()>);

impl HeldLock {
    pub(crate) fn new() -> Self {
        LOCKS_HELD.with(|n| n.set(n.get() + 1));
        HeldLock(PhantomData)
    }
}

impl Drop for HeldLock {
    fn drop(&mut self) {
        LOCKS_HELD.with(|n| n.set(n.get() - 1));
    }
}

/// Runs `f` as an *inactive-by-user* region (I/O, a commit's log flush): the worker
/// leaves the active level and another worker is activated at once if work is
/// queued (paper §5). Outside worker threads it just runs `f`.
pub fn blocking<R>(f: impl FnOnce() -> R) -> R {
    crate::worker::wait_as_inactive(WorkerState::InactiveByUser, f)
}

/// Whether a waiter on the calling thread may spin without taking a core from
/// other work (the load-control half of `Latch`, papers/README.md §4): on a
/// worker, while the scheduler's active level is at most its contexts; on a
/// client thread always — there is no load signal, so callers must bound their
/// spin themselves.
pub fn load_allows_spinning() -> bool {
    match crate::worker::WorkerThread::current() {
        Some(w) => w.shared.active_level(w.shared.counts.load()) <= w.shared.config.contexts,
        None => true,
    }
}

/// The state of the calling thread's worker, or None on a client thread.
pub fn current_worker_state() -> Option<WorkerState> {
    crate::worker::WorkerThread::current().map(|w| w.state())
}
