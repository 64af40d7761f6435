//! A worker that waits in a `join` while it holds a scheduler-aware lock must
//! not start an urgent root: the root may want the same lock, and the thread
//! would wait for itself (PROTOCOL.md, "Locks held while waiting").

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use maestro_scheduler::sync::{Mutex, RwLock, blocking};
use maestro_scheduler::{DEFAULT_PRIORITY, Scheduler, join};

/// Generous: turns a deadlock into a failure instead of a hung CI job.
const DEADLOCK_DEADLINE: Duration = Duration::from_secs(60);

/// A held lock guard of any kind.
trait Held {}
impl<T> Held for T {}

fn wait_for(flag: &AtomicBool, deadline: Instant) {
    while !flag.load(Ordering::SeqCst) && Instant::now() < deadline {
        std::thread::yield_now();
    }
}

/// On one context: a job takes `lock` (through `take`), forks a join whose
/// second half is stolen by another worker and queues an urgent root that
/// wants `lock` in a conflicting way (`want`); the first half returns while the root is queued, so the
/// job's worker waits in the join with the lock held. Returns whether
/// everything completed before the deadline.
fn waiter_with_lock_and_urgent_root<L: Send + Sync + 'static>(
    lock: Arc<L>,
    take: fn(&L) -> Box<dyn Held + '_>,
    want: fn(&L),
) -> bool {
    let s = Arc::new(Scheduler::with_preset("single-pool", 1).unwrap());
    let done = Arc::new(AtomicBool::new(false));
    let client = {
        let (s, done, lock) = (s.clone(), done.clone(), lock.clone());
        std::thread::spawn(move || {
            let deadline = Instant::now() + DEADLOCK_DEADLINE;
            let queued = AtomicBool::new(false);
            let root = s.install(|| {
                let held = take(&lock);
                let mut root = None;
                join(
                    || {
                        // Inactive by user: another worker is activated and
                        // steals the second half.
                        blocking(|| wait_for(&queued, deadline));
                    },
                    || {
                        let lock = lock.clone();
                        root = Some(s.spawn_with_priority(DEFAULT_PRIORITY + 1, move || {
                            want(&lock);
                        }));
                        queued.store(true, Ordering::SeqCst);
                        // Stay until the lock holder waits for us (it then
                        // had its chance to take the urgent root).
                        while s.worker_counts().waiting_for_graph() == 0
                            && Instant::now() < deadline
                        {
                            std::thread::yield_now();
                        }
                    },
                );
                drop(held);
                root.unwrap()
            });
            root.join().unwrap();
            done.store(true, Ordering::SeqCst);
        })
    };
    let deadline = Instant::now() + DEADLOCK_DEADLINE;
    wait_for(&done, deadline);
    let ok = done.load(Ordering::SeqCst);
    if ok {
        client.join().unwrap();
    }
    // On failure the threads stay deadlocked; the test fails without waiting.
    ok
}

#[test]
fn waiter_holding_a_mutex_does_not_run_an_urgent_root_that_locks_it() {
    let ok = waiter_with_lock_and_urgent_root(
        Arc::new(Mutex::new(0u32)),
        |m| Box::new(m.lock()),
        |m| drop(m.lock()),
    );
    assert!(
        ok,
        "deadlocked: the lock holder ran an urgent root wanting its mutex"
    );
}

#[test]
fn waiter_holding_a_read_lock_does_not_run_an_urgent_root_that_writes() {
    let ok = waiter_with_lock_and_urgent_root(
        Arc::new(RwLock::new(0u32)),
        |l| Box::new(l.read()),
        |l| drop(l.write()),
    );
    assert!(
        ok,
        "deadlocked: the reader ran an urgent root wanting to write"
    );
}
