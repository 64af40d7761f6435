//! Urgent roots (above the default priority) run before a worker's queued
//! partitioned work: a transaction submitted while a query's scope has many
//! tasks queued must not wait for all of them. Every check here is on counts
//! and order (one context, so the order is the scheduler's choice alone), never
//! on elapsed time; deadlines only turn a hang into a failure.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use maestro_scheduler::{DEFAULT_PRIORITY, JoinHandle, Scheduler};

const SCOPE_TASKS: usize = 2000;

/// Generous: only turns a hang into a failure.
const HANG_DEADLINE: Duration = Duration::from_secs(60);

/// Scope tasks done when a job of `priority` starts, the job being spawned as a
/// root by the first scope task to run, on the scope's own worker (one
/// context). The urgent job must run right after that task; a default one
/// after the whole scope (the paper's order: own deque before new roots).
fn scope_tasks_done_before_a_root_spawned_inside(priority: usize) -> usize {
    let s = Arc::new(Scheduler::with_preset("single-pool", 1).unwrap());
    let done = Arc::new(AtomicUsize::new(0));
    let spawned = AtomicBool::new(false);
    let job: std::sync::Mutex<Option<JoinHandle<usize>>> = std::sync::Mutex::new(None);
    s.install(|| {
        s.scope(|sc| {
            for _ in 0..SCOPE_TASKS {
                let (s, done, spawned, job) = (&s, &done, &spawned, &job);
                sc.spawn(move |_| {
                    if !spawned.swap(true, Ordering::SeqCst) {
                        let done = done.clone();
                        let h =
                            s.spawn_with_priority(priority, move || done.load(Ordering::SeqCst));
                        *job.lock().unwrap() = Some(h);
                    }
                    done.fetch_add(1, Ordering::SeqCst);
                });
            }
        });
    });
    let h = job
        .lock()
        .unwrap()
        .take()
        .expect("the first task spawned the job");
    h.join().unwrap()
}

#[test]
fn an_urgent_root_overtakes_queued_scope_tasks() {
    let seen = scope_tasks_done_before_a_root_spawned_inside(DEFAULT_PRIORITY + 1);
    assert_eq!(
        seen, 1,
        "the urgent job must start right after the task that spawned it"
    );
}

#[test]
fn a_default_priority_root_waits_for_queued_scope_tasks() {
    let seen = scope_tasks_done_before_a_root_spawned_inside(DEFAULT_PRIORITY);
    assert_eq!(seen, SCOPE_TASKS);
}

/// Scope tasks done when a job of `priority`, submitted by a client thread once
/// the scope runs, starts. With `gate`, scope tasks wait until the job ran (or
/// the hang deadline passed): an urgent job must not need any of them.
fn scope_tasks_done_before_a_client_job(priority: usize, gate: bool) -> usize {
    let s = Arc::new(Scheduler::with_preset("single-pool", 1).unwrap());
    let done = Arc::new(AtomicUsize::new(0));
    let started = Arc::new(AtomicBool::new(false));
    // Set once the job ran.
    let job_ran = Arc::new(AtomicBool::new(false));
    let query = {
        let (s2, done, started, job_ran) =
            (s.clone(), done.clone(), started.clone(), job_ran.clone());
        std::thread::spawn(move || {
            s2.install(|| {
                s2.scope(|sc| {
                    for _ in 0..SCOPE_TASKS {
                        let (done, started, job_ran) = (&done, &started, &job_ran);
                        sc.spawn(move |_| {
                            started.store(true, Ordering::SeqCst);
                            let deadline = Instant::now() + HANG_DEADLINE;
                            while gate
                                && !job_ran.load(Ordering::SeqCst)
                                && Instant::now() < deadline
                            {
                                std::thread::yield_now();
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
    job_ran.store(true, Ordering::SeqCst);
    query.join().unwrap();
    seen
}

#[test]
fn an_urgent_client_job_does_not_wait_for_queued_scope_tasks() {
    // The scope's tasks cannot finish before the job ran: it must not need them.
    let seen = scope_tasks_done_before_a_client_job(DEFAULT_PRIORITY + 1, true);
    assert_eq!(seen, 0, "the urgent job waited for {seen} scope tasks");
}

#[test]
fn a_default_priority_client_job_waits_for_queued_work() {
    // The paper's order (own deque and pools before new roots) for everything
    // at the default priority: the job runs after the scope's tasks.
    let seen = scope_tasks_done_before_a_client_job(DEFAULT_PRIORITY, false);
    assert_eq!(seen, SCOPE_TASKS);
}

/// Scope tasks done when an urgent root, spawned by the first task of a scope
/// on one worker, starts — while the other worker runs an urgent job, i.e.
/// urgent work already holds its share (`urgent_share` ½ of 2 contexts = 1).
/// The first urgent job waits (spinning, so it keeps its context) until the
/// second one started or the hang deadline passed.
fn scope_tasks_done_before_an_urgent_root_beyond_the_share() -> usize {
    let s = Arc::new(Scheduler::with_preset("single-pool", 2).unwrap());
    assert_eq!(s.config().urgent_contexts(), 1);
    let first_running = Arc::new(AtomicBool::new(false));
    let second_started = Arc::new(AtomicBool::new(false));
    let first = {
        let (first_running, second_started) = (first_running.clone(), second_started.clone());
        s.spawn_with_priority(DEFAULT_PRIORITY + 1, move || {
            first_running.store(true, Ordering::SeqCst);
            let deadline = Instant::now() + HANG_DEADLINE;
            while !second_started.load(Ordering::SeqCst) && Instant::now() < deadline {
                std::hint::spin_loop();
            }
        })
    };
    while !first_running.load(Ordering::SeqCst) {
        std::thread::yield_now();
    }
    let done = Arc::new(AtomicUsize::new(0));
    let query = {
        let (s2, done, second_started) = (s.clone(), done.clone(), second_started.clone());
        s.spawn(move || {
            let spawned = AtomicBool::new(false);
            let second: std::sync::Mutex<Option<JoinHandle<usize>>> = std::sync::Mutex::new(None);
            s2.scope(|sc| {
                for _ in 0..SCOPE_TASKS {
                    let (s2, done, spawned, second, second_started) =
                        (&s2, &done, &spawned, &second, &second_started);
                    sc.spawn(move |_| {
                        if !spawned.swap(true, Ordering::SeqCst) {
                            let (done, second_started) = (done.clone(), second_started.clone());
                            let h = s2.spawn_with_priority(DEFAULT_PRIORITY + 1, move || {
                                second_started.store(true, Ordering::SeqCst);
                                done.load(Ordering::SeqCst)
                            });
                            *second.lock().unwrap() = Some(h);
                        }
                        done.fetch_add(1, Ordering::SeqCst);
                    });
                }
            });
            second
                .into_inner()
                .unwrap()
                .expect("the first task spawned it")
        })
    };
    let second = query.join().unwrap();
    let seen = second.join().unwrap();
    first.join().unwrap();
    seen
}

#[test]
fn at_the_urgent_share_the_next_urgent_root_waits_behind_started_work() {
    let seen = scope_tasks_done_before_an_urgent_root_beyond_the_share();
    assert_eq!(
        seen, SCOPE_TASKS,
        "beyond its share an urgent root must not overtake the scope's queued tasks"
    );
}
