//! Urgent roots (above the default priority) run before a worker's queued
//! partitioned work: a transaction submitted while a query's scope has many
//! tasks queued must not wait for all of them.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use maestro_scheduler::{DEFAULT_PRIORITY, Scheduler};

const SCOPE_TASKS: usize = 200;

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
    let query = {
        let (s2, done, started) = (s.clone(), done.clone(), started.clone());
        std::thread::spawn(move || {
            s2.install(|| {
                s2.scope(|sc| {
                    for _ in 0..SCOPE_TASKS {
                        let (done, started) = (&done, &started);
                        sc.spawn(move |_| {
                            started.store(true, Ordering::SeqCst);
                            spin(Duration::from_micros(500));
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
