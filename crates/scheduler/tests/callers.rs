//! Callers run, counted (PROTOCOL.md): a client thread that installs a job runs
//! it itself when a context is free, counted as an active worker; urgent callers
//! within the urgent share run beside busy workers; everything else is handed
//! off. No test here depends on timing: waits are on flags, bounded by generous
//! deadlines that only turn a hang into a failure.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::ThreadId;
use std::time::Duration;

mod common;

use common::{DEADLINE, idle, wait_for};
use maestro_scheduler::{CallerRuns, DEFAULT_PRIORITY, Scheduler, SchedulerConfig, sync};

/// A scheduler whose workers have all gone idle (parked), so that every
/// context is free when the test begins.
fn scheduler(contexts: usize) -> Arc<Scheduler> {
    idle(Scheduler::new(SchedulerConfig::single_pool().with_contexts(contexts)).unwrap())
}

/// Occupies one context with a job that spins until `release` is set.
fn occupy(s: &Arc<Scheduler>, release: &Arc<AtomicBool>) -> std::thread::JoinHandle<ThreadId> {
    let (s, release) = (s.clone(), release.clone());
    let running = Arc::new(AtomicBool::new(false));
    let r2 = running.clone();
    let h = std::thread::spawn(move || {
        s.install(move || {
            r2.store(true, Ordering::SeqCst);
            while !release.load(Ordering::SeqCst) {
                std::hint::spin_loop();
            }
            std::thread::current().id()
        })
    });
    wait_for("the occupying job to start", || {
        running.load(Ordering::SeqCst)
    });
    h
}

#[test]
fn a_caller_runs_its_job_when_a_context_is_free_counted_as_active() {
    let s = scheduler(2);
    let me = std::thread::current().id();
    let before = s.stats();
    let (ran_on, counts_inside) = s.install(|| (std::thread::current().id(), s.worker_counts()));
    assert_eq!(ran_on, me, "the job ran on the caller");
    // Two base workers (active or parked) plus the caller.
    assert_eq!(counts_inside.total(), 3, "{counts_inside:?}");
    let after = s.stats();
    assert_eq!(after.callers_counted - before.callers_counted, 1);
    assert_eq!(s.worker_counts().total(), 2, "the caller left the counts");
}

#[test]
fn with_caller_runs_off_every_job_is_handed_to_a_worker() {
    let mut cfg = SchedulerConfig::single_pool().with_contexts(2);
    cfg.caller_runs = CallerRuns::Never;
    let s = Scheduler::new(cfg).unwrap();
    let me = std::thread::current().id();
    assert_ne!(s.install(|| std::thread::current().id()), me);
    assert_eq!(s.stats().callers_counted, 0);
}

#[test]
fn a_default_priority_caller_hands_off_when_every_context_is_busy() {
    let s = scheduler(1);
    let release = Arc::new(AtomicBool::new(false));
    let occupier = occupy(&s, &release);
    let me = std::thread::current().id();
    let handed_before = s.stats().callers_handed_off;
    let s2 = s.clone();
    let rel2 = release.clone();
    // Release the occupier once our job is queued, so the queued job can run.
    let releaser = std::thread::spawn(move || {
        wait_for("the hand-off", || {
            s2.stats().callers_handed_off > handed_before
        });
        rel2.store(true, Ordering::SeqCst);
    });
    let ran_on = s.install(|| std::thread::current().id());
    assert_ne!(ran_on, me, "no context was free: a worker ran it");
    releaser.join().unwrap();
    occupier.join().unwrap();
}

#[test]
fn an_urgent_caller_runs_beside_busy_workers_within_its_share() {
    let s = scheduler(1);
    let release = Arc::new(AtomicBool::new(false));
    let occupier = occupy(&s, &release);
    let me = std::thread::current().id();
    let before = s.stats().callers_extra;
    // The only context is busy, yet the urgent job runs here at once (the
    // occupier spins until released, so a hand-off would hang).
    let ran_on = s.install_with_priority(DEFAULT_PRIORITY + 1, || std::thread::current().id());
    assert_eq!(ran_on, me);
    assert_eq!(s.stats().callers_extra - before, 1);
    release.store(true, Ordering::SeqCst);
    occupier.join().unwrap();
}

#[test]
fn a_caller_never_overtakes_queued_work_of_a_higher_priority() {
    let s = scheduler(1);
    let release = Arc::new(AtomicBool::new(false));
    let occupier = occupy(&s, &release);
    // Queue a root above the default priority behind the busy context...
    let ran = Arc::new(AtomicBool::new(false));
    let r2 = ran.clone();
    let queued = s.spawn_with_priority(DEFAULT_PRIORITY + 2, move || {
        r2.store(true, Ordering::SeqCst);
    });
    // ...now a default-priority caller must not jump it, even once the
    // context frees: it hands off and its job runs after the urgent root.
    let s2 = s.clone();
    let rel2 = release.clone();
    let handed_before = s.stats().callers_handed_off;
    let releaser = std::thread::spawn(move || {
        wait_for("the hand-off", || {
            s2.stats().callers_handed_off > handed_before
        });
        rel2.store(true, Ordering::SeqCst);
    });
    let urgent_ran_first = s.install(|| ran.load(Ordering::SeqCst));
    assert!(urgent_ran_first, "the queued urgent root ran first");
    queued.join().unwrap();
    releaser.join().unwrap();
    occupier.join().unwrap();
}

#[test]
fn a_join_inside_a_callers_job_is_stolen_by_a_worker() {
    let s = scheduler(2);
    let me = std::thread::current().id();
    let b_done = AtomicBool::new(false);
    let (a_thread, b_thread) = s.install(|| {
        maestro_scheduler::join(
            || {
                // `a` waits for `b`: only a thief can run `b` meanwhile.
                wait_for("the stolen half", || b_done.load(Ordering::SeqCst));
                std::thread::current().id()
            },
            || {
                b_done.store(true, Ordering::SeqCst);
                std::thread::current().id()
            },
        )
    });
    assert_eq!(a_thread, me);
    assert_ne!(b_thread, me, "a worker stole the other half");
}

#[test]
fn a_panicking_job_gives_its_context_and_slot_back() {
    let s = scheduler(2);
    for _ in 0..200 {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            s.install(|| panic!("boom"));
        }));
        assert!(r.is_err(), "the panic reaches the caller");
    }
    assert_eq!(s.worker_counts().total(), 2, "{:?}", s.worker_counts());
    // Slots were returned: 200 admissions needed more than workers_max (64).
    assert_eq!(s.stats().callers_counted, 200);
    assert_eq!(s.install(|| 7), 7);
}

#[test]
fn a_caller_that_blocks_leaves_the_level_and_a_worker_takes_queued_work() {
    // One context, taken by the caller. It queues a task and then waits on an
    // event only that task sets: only a worker activated because the caller
    // blocked can run the task (the watchdog is pushed out of the picture).
    let mut cfg = SchedulerConfig::single_pool().with_contexts(1);
    cfg.watchdog_period = Duration::from_secs(3600);
    let s = idle(Scheduler::new(cfg).unwrap());
    let event = Arc::new(sync::Event::new());
    let before = s.stats();
    let ran_on_other_thread = s.install(|| {
        let e2 = event.clone();
        let me = std::thread::current().id();
        let handle = s.spawn(move || {
            e2.set();
            std::thread::current().id() != me
        });
        event.wait();
        handle.join().unwrap()
    });
    assert!(ran_on_other_thread);
    let after = s.stats();
    assert_eq!(after.callers_counted - before.callers_counted, 1);
    assert!(after.blocked_events > before.blocked_events);
}

#[test]
fn many_callers_at_once_keep_the_counts_consistent() {
    let seed = std::env::var("MAESTRO_TEST_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| fastrand::u64(..));
    eprintln!("many_callers_at_once_keep_the_counts_consistent: MAESTRO_TEST_SEED={seed}");
    let s = scheduler(2);
    let total = Arc::new(AtomicUsize::new(0));
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let (s, total) = (s.clone(), total.clone());
            std::thread::spawn(move || {
                let mut rng = fastrand::Rng::with_seed(seed.wrapping_add(t));
                for _ in 0..500 {
                    let priority = rng.usize(0..4);
                    let n = rng.usize(1..64);
                    let sum = s.install_with_priority(priority, || {
                        let c = s.worker_counts();
                        assert!(c.total() >= c.parked(), "{c:?}");
                        (0..n)
                            .map(|i| maestro_scheduler::join(|| i, || 0).0)
                            .sum::<usize>()
                    });
                    assert_eq!(sum, n * (n - 1) / 2, "seed {seed}");
                    total.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(total.load(Ordering::Relaxed), 4000);
    let st = s.stats();
    assert_eq!(
        st.callers_counted + st.callers_extra + st.callers_handed_off,
        4000,
        "every install was admitted one way (seed {seed})"
    );
    wait_for("the counts to settle", || {
        let c = s.worker_counts();
        c.total() - c.parked() <= 2 && c.blocked() == 0 && c.waiting_for_graph() == 0
    });
}

/// A 2-context scheduler whose hint EMA was driven down by two busy workers,
/// now idle again before the EMA recovered: a hint asked now shows only the
/// contexts free right now.
fn scheduler_with_a_low_hint_ema() -> Arc<Scheduler> {
    let mut cfg = SchedulerConfig::single_hints().with_contexts(2);
    cfg.hint = maestro_scheduler::HintPolicy::Ema {
        alpha: 0.5,
        period: Duration::from_millis(200),
        reset_fraction: 0.9,
    };
    let s = Arc::new(Scheduler::new(cfg).unwrap());
    let release = Arc::new(AtomicBool::new(false));
    let busy: Vec<_> = (0..2)
        .map(|_| {
            let release = release.clone();
            s.spawn(move || {
                while !release.load(Ordering::SeqCst) {
                    std::hint::spin_loop();
                }
            })
        })
        .collect();
    // Seven samples of "no context free": the EMA is near 0.
    std::thread::sleep(Duration::from_millis(1500));
    release.store(true, Ordering::SeqCst);
    for b in busy {
        b.join().unwrap();
    }
    wait_for("the workers to park", || {
        let c = s.worker_counts();
        c.parked() == c.total()
    });
    s
}

/// Waits until every worker but the calling one is parked: a worker woken
/// with the job (by the push or the watchdog) is active until its search
/// finds nothing, and would take the other context in the hint meanwhile
/// (seen once in CI under load: hint 1).
fn only_this_thread_active(s: &Scheduler) {
    wait_for("the other workers to park", || {
        let c = s.worker_counts();
        c.total() - c.parked() == 1
    });
}

#[test]
fn a_guest_counts_its_own_context_as_free_in_the_hint() {
    // The caller's own context is free to it (it runs one of the tasks), as
    // it was when callers handed their jobs off and slept.
    let s = scheduler_with_a_low_hint_ema();
    let (hint, counted) = s.install(|| {
        only_this_thread_active(&s);
        (s.concurrency_hint(), s.worker_counts().total() == 3)
    });
    assert!(counted, "the caller ran as a counted guest");
    assert_eq!(hint, 2, "both contexts are the caller's to use");
}

#[test]
fn a_pool_worker_counts_its_own_context_as_free_in_the_hint() {
    // A query plan runs as one job, often on a pool worker: an operator it
    // starts there may use the worker's own context too.
    let s = scheduler_with_a_low_hint_ema();
    let (hint, total) = s.install_on_worker(maestro_scheduler::DEFAULT_PRIORITY, || {
        only_this_thread_active(&s);
        (s.concurrency_hint(), s.worker_counts().total())
    });
    assert_eq!(total, 2, "no guest: the job ran on a pool worker");
    assert_eq!(hint, 2, "both contexts are the worker's to use");
}

/// Both contexts busy with default-priority guests, a default-priority root
/// queued behind them (other work waits), and the urgent share (1 of 2
/// contexts) held by an urgent caller spinning until `urgent_release`.
struct ShareFull {
    s: Arc<Scheduler>,
    release: Arc<AtomicBool>,
    urgent_release: Arc<AtomicBool>,
    occupiers: Vec<std::thread::JoinHandle<ThreadId>>,
    urgent: std::thread::JoinHandle<ThreadId>,
    queued: maestro_scheduler::JoinHandle<()>,
}

fn share_full(urgent_turn_wait_max: Duration) -> ShareFull {
    let mut cfg = SchedulerConfig::single_pool().with_contexts(2);
    cfg.urgent_share = 0.5;
    cfg.urgent_turn_wait_max = urgent_turn_wait_max;
    let s = idle(Scheduler::new(cfg).unwrap());
    let release = Arc::new(AtomicBool::new(false));
    let occupiers = vec![occupy(&s, &release), occupy(&s, &release)];
    let queued = s.spawn_with_priority(DEFAULT_PRIORITY, || {});
    let urgent_release = Arc::new(AtomicBool::new(false));
    let running = Arc::new(AtomicBool::new(false));
    let (s2, rel, run) = (s.clone(), urgent_release.clone(), running.clone());
    let urgent = std::thread::spawn(move || {
        s2.install_with_priority(DEFAULT_PRIORITY + 1, move || {
            run.store(true, Ordering::SeqCst);
            while !rel.load(Ordering::SeqCst) {
                std::hint::spin_loop();
            }
            std::thread::current().id()
        })
    });
    wait_for("the urgent share to be taken", || {
        running.load(Ordering::SeqCst)
    });
    ShareFull {
        s,
        release,
        urgent_release,
        occupiers,
        urgent,
        queued,
    }
}

impl ShareFull {
    fn finish(self) {
        self.urgent_release.store(true, Ordering::SeqCst);
        self.release.store(true, Ordering::SeqCst);
        self.urgent.join().unwrap();
        for o in self.occupiers {
            o.join().unwrap();
        }
        self.queued.join().unwrap();
    }
}

#[test]
fn an_urgent_caller_beyond_the_share_waits_its_turn_then_runs_its_own_job() {
    let full = share_full(DEADLINE);
    let s = full.s.clone();
    let before = s.stats();
    let ran = Arc::new(AtomicBool::new(false));
    let (s2, ran2) = (s.clone(), ran.clone());
    let caller = std::thread::spawn(move || {
        let ran_on = s2.install_with_priority(DEFAULT_PRIORITY + 1, move || {
            ran2.store(true, Ordering::SeqCst);
            std::thread::current().id()
        });
        (ran_on, std::thread::current().id())
    });
    wait_for("the caller to wait for its turn", || {
        s.stats().callers_waited_turn > before.callers_waited_turn
    });
    assert!(!ran.load(Ordering::SeqCst), "ran beyond the urgent share");
    assert_eq!(s.stats().callers_handed_off, before.callers_handed_off);
    // The urgent work it waits for ends: its turn comes, and it runs its job
    // on its own thread (as an urgent extra), not on a worker.
    full.urgent_release.store(true, Ordering::SeqCst);
    let (ran_on, caller_thread) = caller.join().unwrap();
    assert_eq!(ran_on, caller_thread);
    let after = s.stats();
    assert_eq!(after.callers_handed_off, before.callers_handed_off);
    assert_eq!(after.callers_extra - before.callers_extra, 1);
    full.finish();
}

#[test]
fn a_turn_wait_past_its_bound_hands_the_job_to_a_worker() {
    let full = share_full(Duration::from_micros(1));
    let s = full.s.clone();
    let before = s.stats();
    let (s2, release) = (s.clone(), full.release.clone());
    // Free the contexts once the job has been handed off, so a worker runs it.
    let releaser = std::thread::spawn(move || {
        wait_for("the hand-off", || {
            s2.stats().callers_handed_off > before.callers_handed_off
        });
        release.store(true, Ordering::SeqCst);
    });
    let me = std::thread::current().id();
    let ran_on = s.install_with_priority(DEFAULT_PRIORITY + 1, || std::thread::current().id());
    assert_ne!(ran_on, me, "handed off after the bound: a worker ran it");
    let after = s.stats();
    assert!(after.callers_waited_turn > before.callers_waited_turn);
    assert_eq!(after.callers_handed_off - before.callers_handed_off, 1);
    releaser.join().unwrap();
    full.finish();
}

#[test]
fn a_classed_urgent_caller_beyond_its_class_share_waits_its_turn_then_runs_its_own_job() {
    use maestro_scheduler::{ClassSpec, with_class};
    let mut cfg = SchedulerConfig::single_pool().with_contexts(2);
    cfg.urgent_turn_wait_max = DEADLINE;
    let s = idle(Scheduler::new(cfg).unwrap());
    let oltp = s
        .define_class(&ClassSpec {
            priority: DEFAULT_PRIORITY + 1,
            ..ClassSpec::new("oltp", 1)
        })
        .unwrap();
    // Weights far apart, so which class is ahead does not depend on timing.
    let olap = s
        .define_class(&ClassSpec::new("olap", maestro_scheduler::CLASS_WEIGHT_MAX))
        .unwrap();
    // Both contexts taken by olap guests, an olap root queued behind them.
    let release = Arc::new(AtomicBool::new(false));
    let spin_in = |class, started: Arc<AtomicUsize>, until: Arc<AtomicBool>| {
        let s = s.clone();
        std::thread::spawn(move || {
            s.install_in(class, move || {
                started.fetch_add(1, Ordering::SeqCst);
                while !until.load(Ordering::SeqCst) {
                    std::hint::spin_loop();
                }
                std::thread::current().id()
            })
        })
    };
    let olap_started = Arc::new(AtomicUsize::new(0));
    let occupiers: Vec<_> = (0..2)
        .map(|_| spin_in(olap, olap_started.clone(), release.clone()))
        .collect();
    wait_for("both olap guests to run", || {
        olap_started.load(Ordering::SeqCst) == 2
    });
    let queued = with_class(olap, || s.spawn(|| {}));
    // Passes (`class.rs`, "Shares"): olap's two guests count their running
    // time ÷ 10 000, oltp's running caller its running time ÷ 1. The first
    // oltp caller finds its class at pass 0, below its share, and runs as an
    // extra beside them; once it has run 50 ms, oltp is ahead unless olap's
    // guests have run 250 s, so a second oltp caller is beyond the share.
    let oltp_release = Arc::new(AtomicBool::new(false));
    let oltp_started = Arc::new(AtomicUsize::new(0));
    let first = spin_in(oltp, oltp_started.clone(), oltp_release.clone());
    wait_for("the first oltp caller to run", || {
        oltp_started.load(Ordering::SeqCst) == 1
    });
    std::thread::sleep(Duration::from_millis(50));
    let before = s.stats();
    let ran = Arc::new(AtomicBool::new(false));
    let (s2, ran2) = (s.clone(), ran.clone());
    let caller = std::thread::spawn(move || {
        let ran_on = s2.install_in(oltp, move || {
            ran2.store(true, Ordering::SeqCst);
            std::thread::current().id()
        });
        (ran_on, std::thread::current().id())
    });
    wait_for("the second oltp caller to wait for its turn", || {
        s.stats().callers_waited_turn > before.callers_waited_turn
    });
    assert!(!ran.load(Ordering::SeqCst), "ran beyond its class share");
    // The olap guests end, a worker runs the queued olap root, and olap stops
    // demanding: the ending that leaves olap wakes the waiter, oltp is alone
    // and below its share, and the waiter runs its job on its own thread,
    // not on a worker.
    release.store(true, Ordering::SeqCst);
    let (ran_on, caller_thread) = caller.join().unwrap();
    assert_eq!(ran_on, caller_thread);
    let after = s.stats();
    assert_eq!(after.callers_handed_off, before.callers_handed_off);
    oltp_release.store(true, Ordering::SeqCst);
    first.join().unwrap();
    for o in occupiers {
        o.join().unwrap();
    }
    queued.join().unwrap();
}
