//! The native Rust API: `parallel_region`, `Team::{thread_num, num_threads,
//! barrier, for_each, single}`, panics, nesting, hint-sized teams, and regions
//! started from inside scheduler tasks.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Once};
use std::time::{Duration, Instant};

use maestro_gomp::{Schedule, parallel_region};
use maestro_scheduler::Scheduler;

/// Every test runs on one installed scheduler of 2 contexts (first caller wins).
fn setup() -> &'static Arc<Scheduler> {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let s = Scheduler::with_preset("single-pool", 2).expect("scheduler");
        let _ = maestro_gomp::install_scheduler(Arc::new(s));
    });
    maestro_gomp::scheduler()
}

#[test]
fn members_have_distinct_numbers() {
    setup();
    for n in [1, 2, 3, 8] {
        let seen: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
        parallel_region(n, |team| {
            assert_eq!(team.num_threads(), n);
            assert_eq!(team.level(), 1);
            seen[team.thread_num()].fetch_add(1, Ordering::Relaxed);
        });
        assert!(seen.iter().all(|s| s.load(Ordering::Relaxed) == 1));
    }
}

#[test]
fn barrier_separates_phases_even_with_more_members_than_workers() {
    let sched = setup();
    let n = 4 * sched.contexts();
    let arrived: Vec<AtomicUsize> = (0..50).map(|_| AtomicUsize::new(0)).collect();
    parallel_region(n, |team| {
        for a in &arrived {
            a.fetch_add(1, Ordering::SeqCst);
            team.barrier();
            assert_eq!(a.load(Ordering::SeqCst), n);
            team.barrier();
        }
    });
}

#[test]
fn for_each_covers_every_index_once_under_every_schedule() {
    setup();
    let schedules = [
        Schedule::Static,
        Schedule::StaticChunked(3),
        Schedule::Dynamic(1),
        Schedule::Dynamic(7),
        Schedule::Guided(5),
        Schedule::Dynamic(10_000),
    ];
    for schedule in schedules {
        let hits: Vec<AtomicUsize> = (0..1001).map(|_| AtomicUsize::new(0)).collect();
        parallel_region(3, |team| {
            team.for_each(10..1001, schedule, |i| {
                hits[i].fetch_add(1, Ordering::Relaxed);
            });
            // The closing barrier: everything is done here.
            assert_eq!(hits[1000].load(Ordering::Relaxed), 1);
            team.for_each_nowait(0..10, schedule, |i| {
                hits[i].fetch_add(1, Ordering::Relaxed);
            });
            team.for_each_nowait(0..0, schedule, |_| unreachable!());
        });
        for (i, h) in hits.iter().enumerate() {
            assert_eq!(h.load(Ordering::Relaxed), 1, "{schedule:?} index {i}");
        }
    }
}

#[test]
fn static_schedule_gives_contiguous_blocks_in_member_order() {
    setup();
    let owner: Vec<AtomicUsize> = (0..100).map(|_| AtomicUsize::new(usize::MAX)).collect();
    parallel_region(4, |team| {
        team.for_each(0..100, Schedule::Static, |i| {
            owner[i].store(team.thread_num(), Ordering::Relaxed);
        });
    });
    let owner: Vec<usize> = owner.iter().map(|o| o.load(Ordering::Relaxed)).collect();
    assert!(owner.windows(2).all(|w| w[0] <= w[1]));
    assert_eq!((owner[0], owner[99]), (0, 3));
}

#[test]
fn single_runs_once() {
    setup();
    let runs = AtomicUsize::new(0);
    let winners = AtomicUsize::new(0);
    parallel_region(5, |team| {
        for _ in 0..10 {
            if team.single(|| {
                runs.fetch_add(1, Ordering::Relaxed);
            }) {
                winners.fetch_add(1, Ordering::Relaxed);
            }
        }
    });
    assert_eq!(runs.into_inner(), 10);
    assert_eq!(winners.into_inner(), 10);
}

#[test]
fn nested_regions_are_serialized_by_default() {
    setup();
    let inner_sizes = AtomicUsize::new(0);
    parallel_region(3, |_| {
        parallel_region(4, |inner| {
            assert_eq!(inner.level(), 2);
            inner_sizes.fetch_add(inner.num_threads(), Ordering::Relaxed);
        });
    });
    assert_eq!(inner_sizes.into_inner(), 3);
}

#[test]
fn a_panic_reaches_the_caller_and_releases_the_barrier() {
    setup();
    let started = Instant::now();
    let r = std::panic::catch_unwind(|| {
        parallel_region(4, |team| {
            if team.thread_num() == 2 {
                panic!("member two fails");
            }
            team.barrier();
        });
    });
    let msg = r.expect_err("the region must panic");
    assert_eq!(msg.downcast_ref::<&str>(), Some(&"member two fails"));
    assert!(started.elapsed() < Duration::from_secs(10));
    // The runtime is still usable.
    let n = AtomicUsize::new(0);
    parallel_region(2, |_| {
        n.fetch_add(1, Ordering::Relaxed);
    });
    assert_eq!(n.into_inner(), 2);
}

#[test]
fn regions_run_inside_scheduler_tasks() {
    let sched = setup();
    let handles: Vec<_> = (0..6)
        .map(|k| {
            sched.spawn(move || {
                let sum = AtomicUsize::new(0);
                parallel_region(3, |team| {
                    team.barrier();
                    team.for_each(0..100, Schedule::Dynamic(3), |i| {
                        sum.fetch_add(i * k, Ordering::Relaxed);
                    });
                });
                sum.into_inner()
            })
        })
        .collect();
    for (k, h) in handles.into_iter().enumerate() {
        assert_eq!(h.join().unwrap(), 4950 * k);
    }
}

#[test]
fn default_size_follows_the_hint_in_hint_mode() {
    let sched = setup();
    maestro_gomp::set_hint_teams(true);
    let size = AtomicUsize::new(0);
    parallel_region(0, |team| {
        size.store(team.num_threads(), Ordering::Relaxed);
    });
    maestro_gomp::set_hint_teams(false);
    let size = size.into_inner();
    assert!(size >= 1 && size <= sched.contexts(), "{size}");
    assert!(!maestro_gomp::hint_teams());
}

#[test]
fn low_priority_regions_finish_while_the_workers_are_busy() {
    let sched = setup();
    maestro_gomp::set_priority(0);
    assert_eq!(maestro_gomp::priority(), 0);
    // Occupy every worker with higher-priority CPU work; the region's members
    // queue behind it, and the master runs the ones nobody started at the join.
    let busy: Vec<_> = (0..sched.contexts())
        .map(|_| {
            sched.spawn_with_priority(3, || {
                let until = Instant::now() + Duration::from_millis(300);
                while Instant::now() < until {
                    std::hint::spin_loop();
                }
            })
        })
        .collect();
    let sum = AtomicUsize::new(0);
    parallel_region(4, |team| {
        team.for_each(0..1000, Schedule::Dynamic(16), |i| {
            sum.fetch_add(i, Ordering::Relaxed);
        });
    });
    assert_eq!(sum.into_inner(), 999 * 1000 / 2);
    for b in busy {
        b.join().unwrap();
    }
    maestro_gomp::set_priority(maestro_scheduler::DEFAULT_PRIORITY);
}
