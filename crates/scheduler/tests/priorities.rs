//! Urgent roots (above the default priority) run before a worker's queued
//! partitioned work: a transaction submitted while a query's scope has many
//! tasks queued must not wait for all of them.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use maestro_scheduler::{DEFAULT_PRIORITY, Scheduler};

/// 2 000 tasks of 0.5 ms: a second of queued work, so a client thread that the
/// OS deschedules for a while (a loaded CI machine) still submits its job long
/// before the scope could drain.
const SCOPE_TASKS: usize = 2000;

fn spin(d: Duration) {
    let t = Instant::now();
    while t.elapsed() < d {
        std::hint::spin_loop();
    }
}

/// Scope tasks done when a job of `priority`, submitted once the scope runs,
/// starts (one context, so the order is the worker's choice alone).
fn scope_tasks_done_before(priority: usize) -> usize {
    let s = Arc::new(Scheduler::with_preset("single-pool", 1).unwrap());
    let done = Arc::new(AtomicUsize::new(0));
    let started = Arc::new(AtomicBool::new(false));
    // Set once the job ran: the rest of the scope need not take its time.
    let hurry = Arc::new(AtomicBool::new(false));
    let query = {
        let (s2, done, started, hurry) = (s.clone(), done.clone(), started.clone(), hurry.clone());
        std::thread::spawn(move || {
            s2.install(|| {
                s2.scope(|sc| {
                    for _ in 0..SCOPE_TASKS {
                        let (done, started, hurry) = (&done, &started, &hurry);
                        sc.spawn(move |_| {
                            started.store(true, Ordering::SeqCst);
                            if !hurry.load(Ordering::SeqCst) {
                                spin(Duration::from_micros(500));
                            }
                            done.fetch_add(1, Ordering::SeqCst);
                        });
                    }
                });
            })
        })
    };
    while !started.load(Ordering::SeqCst) {
        std::thread::yield_now();
    }
    let seen = s.install_with_priority(priority, || done.load(Ordering::SeqCst));
    hurry.store(true, Ordering::SeqCst);
    query.join().unwrap();
    seen
}

#[test]
fn an_urgent_job_overtakes_queued_scope_tasks() {
    let urgent = scope_tasks_done_before(DEFAULT_PRIORITY + 1);
    assert!(
        urgent < SCOPE_TASKS / 2,
        "the urgent job waited for {urgent} of {SCOPE_TASKS} scope tasks"
    );
}

#[test]
fn a_default_priority_job_waits_for_queued_work() {
    // The paper's order (own deque and pools before new roots) for everything
    // at the default priority: the job runs after the scope's tasks.
    let normal = scope_tasks_done_before(DEFAULT_PRIORITY);
    assert_eq!(normal, SCOPE_TASKS);
}
