//! The flexible concurrency level (paper §5) and the concurrency hint (§6), observed
//! from outside. Bounds are generous: these tests check directions and eventual
//! states, never speed.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use maestro_scheduler::sync::{Barrier, Mutex, blocking};
use maestro_scheduler::{Scheduler, SchedulerConfig, Step, TaskGraph};

/// A root followed by one level of `n` nodes that all wait on one barrier.
fn barrier_level(
    n: usize,
    wait: impl Fn(&Barrier) -> bool + Send + Sync + 'static,
) -> (TaskGraph, Arc<AtomicUsize>) {
    let barrier = Arc::new(Barrier::new(n));
    let passed = Arc::new(AtomicUsize::new(0));
    let wait = Arc::new(wait);
    let mut g = TaskGraph::new();
    let root = g.add(|| {});
    for _ in 0..n {
        let (b, p, w) = (barrier.clone(), passed.clone(), wait.clone());
        let node = g.add(move || {
            if w(&b) {
                p.fetch_add(1, Ordering::SeqCst);
            }
        });
        g.edge(root, node);
    }
    (g, passed)
}

#[test]
fn barrier_level_of_four_times_contexts_completes_under_single_pool() {
    let contexts = 2;
    let n = 4 * contexts;
    let s = Scheduler::with_preset("single-pool", contexts).unwrap();
    let (g, passed) = barrier_level(n, |b| b.wait_timeout(Duration::from_secs(60)).is_some());
    let h = s.submit(g).unwrap();
    match h.wait_timeout(Duration::from_secs(120)) {
        Ok(r) => r.unwrap(),
        Err(_) => panic!("barrier level did not complete: {:?}", s.stats()),
    }
    assert_eq!(
        passed.load(Ordering::SeqCst),
        n,
        "every node passed the barrier"
    );
    let st = s.stats();
    assert!(
        st.workers_peak >= n,
        "needed {n} workers at once, peak was {}",
        st.workers_peak
    );
    assert!(st.workers_peak <= s.config().workers_max);
}

/// The same level under a fixed pool of `contexts` workers (Single-Pool-NoSys, where
/// blocked workers count as active) cannot finish: only `contexts` nodes ever run, and
/// they wait forever for the others. The nodes use a timed barrier so the test ends:
/// every node gives up, none passes.
#[test]
fn fixed_pool_of_contexts_workers_cannot_finish_the_barrier_level() {
    let contexts = 2;
    let n = 4 * contexts;
    let s = Scheduler::with_preset("single-pool-nosys", contexts).unwrap();
    let (g, passed) = barrier_level(n, |b| b.wait_timeout(Duration::from_millis(300)).is_some());
    s.submit(g).unwrap().wait().unwrap();
    assert_eq!(
        passed.load(Ordering::SeqCst),
        0,
        "no node can pass with only {contexts} workers"
    );
    let st = s.stats();
    assert_eq!(
        st.workers_peak, contexts,
        "nosys never adds workers for blocked ones: {st:?}"
    );
}

/// Blocking-heavy load: many tasks hold a contended scheduler-aware mutex while
/// sleeping. The timeline must show the watchdog bringing the active level back to
/// `contexts` (more workers than contexts in total) and never exceeding the cap.
#[test]
fn active_level_returns_to_contexts_under_blocking_load() {
    let contexts = 2;
    let mut cfg = SchedulerConfig::single_pool().with_contexts(contexts);
    cfg.workers_max = 24;
    let s = Scheduler::new(cfg).unwrap();
    let lock = Arc::new(Mutex::new(0u64));
    let mut handles = vec![];
    for _ in 0..200 {
        let lock = lock.clone();
        handles.push(s.spawn(move || {
            let mut g = lock.lock();
            std::thread::sleep(Duration::from_millis(2));
            *g += 1;
            drop(g);
            // A little CPU work outside the lock.
            let mut x = 0u64;
            for i in 0..20_000 {
                x = x.wrapping_mul(31).wrapping_add(i);
            }
            std::hint::black_box(x);
        }));
    }
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(*lock.lock(), 200);
    let tl = s.timeline();
    assert!(!tl.is_empty(), "the watchdog records samples");
    let max_total = tl.iter().map(|x| x.total).max().unwrap();
    let max_blocked = tl.iter().map(|x| x.blocked).max().unwrap();
    assert!(
        max_blocked >= contexts,
        "the load blocks workers: {max_blocked}"
    );
    assert!(
        max_total > contexts,
        "workers were added for blocked ones (max total {max_total})"
    );
    assert!(tl.iter().all(|x| x.total <= 24), "cap respected");
    // After a sample with blocked workers and queued work, one of the next few
    // samples (generous: 25 watchdog rounds; counted in rounds, not in
    // milliseconds, so a descheduled watchdog cannot fail the test) shows the
    // active level back at contexts.
    let dips: Vec<_> = tl
        .iter()
        .enumerate()
        .filter(|(_, x)| x.active < contexts && x.blocked > 0 && x.queued_roots > 0)
        .collect();
    for (i, dip) in &dips {
        let recovered = tl[*i..]
            .iter()
            .take(1 + 25)
            .any(|y| y.active >= contexts || y.queued_roots == 0);
        assert!(
            recovered,
            "no recovery after dip at {:.0} ms: {tl:?}",
            dip.t_ms
        );
    }
    let st = s.stats();
    assert!(
        st.blocked_events > 0 && st.watchdog_activations > 0,
        "{st:?}"
    );
}

#[test]
fn blocking_regions_activate_another_worker_at_once() {
    let s = Scheduler::with_preset("single-pool", 1).unwrap();
    // With one context, a task inside `blocking` must not stop another task from running.
    let gate = Arc::new(maestro_scheduler::sync::Event::new());
    let g2 = gate.clone();
    let waiter = s.spawn(move || blocking(|| g2.wait_timeout(Duration::from_secs(60))));
    // The setter starts only once the waiter is inside its region (an event,
    // not a sleep: a late waiter would find the gate set and prove nothing).
    let deadline = Instant::now() + Duration::from_secs(60);
    while s.worker_counts().inactive_by_user() == 0 && Instant::now() < deadline {
        std::thread::yield_now();
    }
    assert_eq!(
        s.worker_counts().inactive_by_user(),
        1,
        "the waiter entered its region"
    );
    let g3 = gate.clone();
    let setter = s.spawn(move || g3.set());
    setter.join().unwrap();
    assert!(
        waiter.join().unwrap(),
        "the blocked region was released by a task started after it"
    );
    assert!(s.stats().inactive_by_user_events >= 1);
}

#[test]
fn graph_waiting_on_graphs_never_deadlocks() {
    // Every node of the outer graph submits and waits for an inner graph; with one
    // context and fewer initial workers than outer nodes, only waiting-for-graph
    // accounting lets the inner graphs run.
    for preset in ["single-pool", "single-pool-nosys"] {
        let s = Arc::new(Scheduler::with_preset(preset, 1).unwrap());
        let done = Arc::new(AtomicUsize::new(0));
        let mut g = TaskGraph::new();
        let root = g.add(|| {});
        for _ in 0..6 {
            let (s2, d) = (s.clone(), done.clone());
            let n = g.add(move || {
                let mut inner = TaskGraph::new();
                let d2 = d.clone();
                inner.add(move || {
                    d2.fetch_add(1, Ordering::SeqCst);
                });
                s2.submit(inner).unwrap().wait().unwrap();
            });
            g.edge(root, n);
        }
        match s.submit(g).unwrap().wait_timeout(Duration::from_secs(60)) {
            Ok(r) => r.unwrap(),
            Err(_) => panic!("{preset}: nested graph waits deadlocked"),
        }
        assert_eq!(done.load(Ordering::SeqCst), 6);
    }
}

#[test]
fn hint_falls_under_saturation_and_recovers_when_idle() {
    let contexts = 2;
    let s = Scheduler::with_preset("single-hints", contexts).unwrap();
    assert_eq!(s.concurrency_hint(), contexts);
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    // Saturate: 2 × contexts CPU-bound tasks.
    let hogs: Vec<_> = (0..2 * contexts)
        .map(|_| {
            let stop = stop.clone();
            s.spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            })
        })
        .collect();
    // The sampled EMA (the timeline's `hint`) falls to 1 under saturation; the
    // hint operators read is then 1 too (no context is free right now).
    let ema_at = |v: usize| s.timeline().last().is_some_and(|x| x.hint == v);
    let deadline = Instant::now() + Duration::from_secs(30);
    while !ema_at(1) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let (ema_fell, low) = (ema_at(1), s.concurrency_hint());
    stop.store(true, Ordering::Relaxed);
    for h in hogs {
        h.join().unwrap();
    }
    assert!(ema_fell, "the EMA did not fall under saturation");
    assert_eq!(low, 1, "hint did not fall under saturation");
    // The hint also counts contexts free right now, so it recovers as soon as
    // the workers park, before the EMA does; the EMA follows within a few
    // periods.
    let deadline = Instant::now() + Duration::from_secs(30);
    while s.concurrency_hint() < contexts && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(
        s.concurrency_hint(),
        contexts,
        "hint did not return to contexts when idle"
    );
    while !ema_at(contexts) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(ema_at(contexts), "the EMA did not recover when idle");
}

#[test]
fn parallel_for_splits_when_the_hint_rises() {
    let contexts = 2;
    let mut cfg = SchedulerConfig::single_hints().with_contexts(contexts);
    // Hogs re-issue themselves into the pools; a coin flip lets the loop's root in.
    cfg.pools_first_probability = 0.5;
    let s = Scheduler::new(cfg).unwrap();
    // Saturate with hogs that run in slices until the loop itself stops them.
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut g = TaskGraph::new();
    let root = g.add(|| {});
    for _ in 0..contexts {
        let stop = stop.clone();
        let hog = g.add_reissuing(move || {
            let until = Instant::now() + Duration::from_millis(2);
            while Instant::now() < until && !stop.load(Ordering::Relaxed) {
                std::hint::spin_loop();
            }
            if stop.load(Ordering::Relaxed) {
                Step::Done
            } else {
                Step::Reissue
            }
        });
        g.edge(root, hog);
    }
    let hogs = s.submit(g).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while s.concurrency_hint() > 1 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(s.concurrency_hint(), 1);
    let covered = AtomicUsize::new(0);
    let stop2 = stop.clone();
    let stats = s.parallel_for(0..4000, 1, |r| {
        if r.start == 0 {
            // The machine frees up once the loop has started coarse: the hogs
            // end and their workers park, so a context is free right now (an
            // event the loop waits for, instead of hoping its items outlast
            // the hogs).
            stop2.store(true, Ordering::Relaxed);
            let deadline = Instant::now() + Duration::from_secs(60);
            while !(hogs.is_finished() && s.stats().workers_active < contexts)
                && Instant::now() < deadline
            {
                std::thread::yield_now();
            }
        }
        std::thread::sleep(Duration::from_micros(100));
        covered.fetch_add(r.len(), Ordering::Relaxed);
    });
    hogs.wait().unwrap();
    assert_eq!(covered.load(Ordering::Relaxed), 4000);
    assert_eq!(stats.initial_tasks, 1, "started coarse under saturation");
    assert!(stats.splits >= 1, "split once the hint rose: {stats:?}");
    assert!(s.stats().parallel_for_splits >= 1);
}

/// A worker that finishes a task while the active level exceeds the contexts
/// parks as surplus (`park_if_surplus`). One context: task 1 enters a
/// `blocking` region, so another worker is activated for task 2; task 1 comes
/// back while task 2 still runs, so two workers are active; when they finish,
/// one parks as surplus. Checked with event counters and flags, not time.
#[test]
fn a_worker_finishing_above_the_contexts_parks_as_surplus() {
    use std::sync::atomic::AtomicBool;
    let contexts = 1;
    let s = Arc::new(Scheduler::with_preset("single-pool", contexts).unwrap());
    let deadline = Instant::now() + Duration::from_secs(60);
    let wait = move |f: &AtomicBool| {
        while !f.load(Ordering::SeqCst) && Instant::now() < deadline {
            std::thread::yield_now();
        }
        assert!(f.load(Ordering::SeqCst), "hang");
    };
    let flag = || Arc::new(AtomicBool::new(false));
    let (t1_started, t2_queued, t2_started, t1_back, t2_sampled) =
        (flag(), flag(), flag(), flag(), flag());
    let before = s.stats().surplus_parks;
    let t1 = {
        let (t1_started, t2_queued, t2_started, t1_back, t2_sampled) = (
            t1_started.clone(),
            t2_queued.clone(),
            t2_started.clone(),
            t1_back.clone(),
            t2_sampled.clone(),
        );
        s.spawn(move || {
            t1_started.store(true, Ordering::SeqCst);
            wait(&t2_queued);
            // Inactive by user with work queued: another worker takes task 2.
            blocking(|| wait(&t2_started));
            t1_back.store(true, Ordering::SeqCst);
            wait(&t2_sampled);
        })
    };
    wait(&t1_started);
    let level = Arc::new(AtomicUsize::new(0));
    let t2 = {
        let (s2, t2_started, t1_back, t2_sampled, level) = (
            s.clone(),
            t2_started.clone(),
            t1_back.clone(),
            t2_sampled.clone(),
            level.clone(),
        );
        s.spawn(move || {
            t2_started.store(true, Ordering::SeqCst);
            wait(&t1_back);
            level.store(s2.stats().workers_active, Ordering::SeqCst);
            t2_sampled.store(true, Ordering::SeqCst);
        })
    };
    t2_queued.store(true, Ordering::SeqCst);
    t1.join().unwrap();
    t2.join().unwrap();
    assert_eq!(
        level.load(Ordering::SeqCst),
        contexts + 1,
        "both tasks ran on active workers at once"
    );
    // The first worker to finish parks as surplus; then the level is back at
    // (or, once the other one idles, below) the contexts.
    while s.stats().surplus_parks == before && Instant::now() < deadline {
        std::thread::yield_now();
    }
    let st = s.stats();
    assert!(st.surplus_parks > before, "no surplus park: {st:?}");
    while s.stats().workers_active > contexts && Instant::now() < deadline {
        std::thread::yield_now();
    }
    assert!(s.stats().workers_active <= contexts, "{:?}", s.stats());
}
