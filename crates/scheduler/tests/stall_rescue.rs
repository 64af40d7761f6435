//! The stall rescue (PROTOCOL.md, "Stall rescue"): two callers run as counted
//! guests and wait, unknown to the scheduler (a std channel), for a job a third
//! caller hands off. Every context is held by a waiting guest, so no worker is
//! woken for the handed-off job: without the rescue this is a hang (the first
//! test shows it), with it the watchdog activates a worker beyond the contexts.
//!
//! No test depends on timing for its verdict: waits are on flags and channels,
//! bounded by a generous deadline that only turns a hang into a failure. The
//! "still stuck after a second" check can only fail if the scheduler runs the
//! handed-off job, which is exactly what the rescue-less scheduler must not do.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

mod common;

use common::{DEADLINE, idle, wait_for};
use maestro_scheduler::{Scheduler, SchedulerConfig};

const CONTEXTS: usize = 2;

fn scheduler(stall_rescue_after: Duration) -> Arc<Scheduler> {
    let mut c = SchedulerConfig::single_pool().with_contexts(CONTEXTS);
    c.name = "stall-rescue".into();
    c.watchdog_period = Duration::from_millis(5);
    c.stall_rescue_after = stall_rescue_after;
    idle(Scheduler::new(c).unwrap())
}

/// The stuck shape: `CONTEXTS` guests each blocked in a channel receive, and
/// a handed-off job that would release them.
struct Stall {
    guests: Vec<JoinHandle<()>>,
    releaser: JoinHandle<()>,
    released: mpsc::Receiver<()>,
    /// Senders to the guests, for unsticking them by hand.
    wakers: Vec<mpsc::Sender<()>>,
}

fn stall(s: &Arc<Scheduler>) -> Stall {
    let entered = Arc::new(AtomicUsize::new(0));
    let mut guests = Vec::new();
    let mut wakers = Vec::new();
    for _ in 0..CONTEXTS {
        let (tx, rx) = mpsc::channel::<()>();
        wakers.push(tx);
        let (s, in_job) = (s.clone(), entered.clone());
        guests.push(std::thread::spawn(move || {
            s.install(move || {
                in_job.fetch_add(1, Ordering::SeqCst);
                // A wait the scheduler does not know about: the guest stays
                // counted active.
                rx.recv()
                    .expect("a waker stays alive until the guest is released");
            })
        }));
        // One at a time, so each finds a free context.
        let n = guests.len();
        wait_for("a guest to enter its job", || {
            entered.load(Ordering::SeqCst) == n
        });
    }
    let st = s.stats();
    assert_eq!(
        st.callers_counted, CONTEXTS as u64,
        "the scenario needs every context held by a counted guest: {st:?}"
    );
    let (done_tx, released) = mpsc::channel();
    let senders = wakers.clone();
    let s2 = s.clone();
    let releaser = std::thread::spawn(move || {
        s2.install(move || {
            for tx in &senders {
                // A guest already released by hand has dropped its receiver.
                let _ = tx.send(());
            }
        });
        done_tx.send(()).unwrap();
    });
    wait_for("the releasing job to be handed off", || {
        s.stats().callers_handed_off == 1
    });
    Stall {
        guests,
        releaser,
        released,
        wakers,
    }
}

impl Stall {
    fn join(self) {
        self.releaser.join().unwrap();
        for g in self.guests {
            g.join().unwrap();
        }
    }
}

#[test]
fn without_the_rescue_guests_waiting_for_handed_off_work_hang() {
    let s = scheduler(Duration::ZERO);
    let stuck = stall(&s);
    // Deterministic: nothing in the scheduler may run the handed-off job while
    // both guests hold the contexts (the level is full, so neither a submit nor
    // the watchdog activates a worker).
    assert_eq!(
        stuck.released.recv_timeout(Duration::from_secs(1)),
        Err(mpsc::RecvTimeoutError::Timeout),
        "the handed-off job ran although every context was held: {:?}",
        s.stats()
    );
    assert_eq!(s.stats().stall_rescues, 0);
    // Unstick by hand: the guests return and free their contexts, which
    // activates a worker for the queued job (which may release the second
    // guest before this loop does: its receiver is then gone).
    for tx in &stuck.wakers {
        let _ = tx.send(());
    }
    stuck
        .released
        .recv_timeout(DEADLINE)
        .expect("the handed-off job runs once the guests return");
    stuck.join();
}

#[test]
fn the_watchdog_rescues_guests_waiting_for_handed_off_work() {
    let s = scheduler(Duration::from_millis(50));
    let stuck = stall(&s);
    stuck
        .released
        .recv_timeout(DEADLINE)
        .unwrap_or_else(|e| panic!("no rescue within {DEADLINE:?} ({e}): {:?}", s.stats()));
    let st = s.stats();
    assert!(st.stall_rescues >= 1, "released without a rescue: {st:?}");
    stuck.join();
    // The rescued worker parks again as surplus: the level returns to the
    // contexts with nothing to run.
    wait_for("every worker to park again", || {
        let c = s.worker_counts();
        c.parked() == c.total()
    });
}
