//! Dropping a `Scheduler` is a graceful shutdown: queued work runs, then every
//! worker thread has exited before `drop` returns (PROTOCOL.md, "Shutdown").

use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use maestro_scheduler::sync::blocking;
use maestro_scheduler::{Scheduler, SchedulerConfig, TaskGraph};

thread_local! {
    /// A token each thread that ran a task keeps until the thread exits: the
    /// token's strong count tells how many of those threads are still alive.
    static TOKEN: RefCell<Option<Arc<()>>> = const { RefCell::new(None) };
}

/// Keeps a token on scheduler worker threads (a client thread may run jobs too,
/// as a guest: it is not a worker and outlives the scheduler).
fn keep_token(token: &Arc<()>) {
    let on_worker = std::thread::current()
        .name()
        .is_some_and(|n| n.starts_with("maestro-"));
    if !on_worker {
        return;
    }
    TOKEN.with(|t| {
        t.borrow_mut().get_or_insert_with(|| token.clone());
    });
}

#[test]
fn drop_runs_queued_work_then_joins_every_worker() {
    let token = Arc::new(());
    let ran = Arc::new(AtomicUsize::new(0));
    let mut cfg = SchedulerConfig::single_pool().with_contexts(2);
    cfg.initial_workers = 2;
    let s = Scheduler::new(cfg).unwrap();
    let tasks = 40;
    for i in 0..tasks {
        let (token, ran) = (token.clone(), ran.clone());
        // Independent graphs, not waited for: still queued when the drop begins.
        let mut g = TaskGraph::new();
        g.add(move || {
            keep_token(&token);
            std::thread::sleep(Duration::from_millis(5));
            if i % 8 == 0 {
                // Inactive by user: another worker thread replaces this one.
                blocking(|| std::thread::sleep(Duration::from_millis(5)));
            }
            ran.fetch_add(1, Ordering::SeqCst);
        });
        drop(s.submit(g).unwrap());
    }
    assert!(ran.load(Ordering::SeqCst) < tasks, "work was still queued");
    let created_before_drop = s.stats().workers_created;
    drop(s);
    assert_eq!(
        ran.load(Ordering::SeqCst),
        tasks,
        "queued work ran before drop returned"
    );
    assert_eq!(
        Arc::strong_count(&token),
        1,
        "a worker thread (of at least {created_before_drop} started) was still alive after drop"
    );
}

#[test]
fn idle_scheduler_drop_joins_its_workers() {
    let token = Arc::new(());
    let s = Scheduler::with_preset("single-pool", 2).unwrap();
    // Touch every worker: a join per context keeps them busy at once.
    let t = token.clone();
    s.install(|| {
        maestro_scheduler::join(|| keep_token(&t), || keep_token(&t));
    });
    drop(t);
    drop(s);
    assert_eq!(Arc::strong_count(&token), 1, "worker threads outlived drop");
}

#[test]
fn drop_on_its_own_worker_does_not_wait_for_itself() {
    let s = Arc::new(Scheduler::with_preset("single-pool", 1).unwrap());
    let go = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicBool::new(false));
    {
        let (s2, go, done) = (s.clone(), go.clone(), done.clone());
        drop(s.spawn(move || {
            while !go.load(Ordering::SeqCst) {
                std::thread::yield_now();
            }
            // The last owner: the scheduler is dropped here, on its own worker.
            drop(s2);
            done.store(true, Ordering::SeqCst);
        }));
    }
    drop(s);
    go.store(true, Ordering::SeqCst);
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done.load(Ordering::SeqCst) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(
        done.load(Ordering::SeqCst),
        "drop on a worker waited for itself"
    );
}
