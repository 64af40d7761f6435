//! `Scheduler::spawn_detached`: root jobs without a graph or a handle run,
//! inherit the submitter's context, and a panic is counted, not lost silently
//! nor fatal to the worker. Event-based: a deadline only turns a hang into a
//! failure.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use maestro_scheduler::{DEFAULT_PRIORITY, Scheduler, TaskContext, current, with_context};

const HANG_DEADLINE: Duration = Duration::from_secs(60);

fn until(what: &str, cond: impl Fn() -> bool) {
    let deadline = Instant::now() + HANG_DEADLINE;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn detached_jobs_run_with_the_submitters_context_and_panics_are_counted() {
    let s = Scheduler::with_preset("single-pool", 2).unwrap();
    let ran = Arc::new(AtomicUsize::new(0));
    let seen = Arc::new(AtomicUsize::new(0));
    with_context(Some(TaskContext::new(7u32)), || {
        for _ in 0..1000 {
            let (ran, seen) = (ran.clone(), seen.clone());
            s.spawn_detached(DEFAULT_PRIORITY, move || {
                if current::<u32>().is_some_and(|v| *v == 7) {
                    seen.fetch_add(1, Ordering::SeqCst);
                }
                ran.fetch_add(1, Ordering::SeqCst);
            });
        }
    });
    until("1000 detached jobs", || ran.load(Ordering::SeqCst) == 1000);
    assert_eq!(
        seen.load(Ordering::SeqCst),
        1000,
        "the context is inherited"
    );
    let panics = s.stats().task_panics;
    s.spawn_detached(DEFAULT_PRIORITY, || panic!("a detached job fails"));
    until("the panic to be counted", || {
        s.stats().task_panics == panics + 1
    });
    // The worker survived: more work still runs.
    let after = Arc::new(AtomicUsize::new(0));
    let a = after.clone();
    s.spawn_detached(DEFAULT_PRIORITY, move || {
        a.fetch_add(1, Ordering::SeqCst);
    });
    until("a job after the panic", || {
        after.load(Ordering::SeqCst) == 1
    });
}
