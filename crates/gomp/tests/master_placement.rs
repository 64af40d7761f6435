//! Master placement through the native API: with `MasterPlacement::Scheduler` a
//! region entered from a plain thread runs member 0 on a scheduler worker too; with
//! `Caller` member 0 is the calling thread. Own test binary: the placement is
//! process-wide.

use std::sync::atomic::{AtomicUsize, Ordering};

use maestro_gomp::{MasterPlacement, Schedule, parallel_region, set_master_placement};
use maestro_scheduler::sync::current_worker_state;

fn members_on_workers(n: usize) -> (usize, bool) {
    let on_workers = AtomicUsize::new(0);
    let master_on_worker = AtomicUsize::new(0);
    let sum = AtomicUsize::new(0);
    parallel_region(n, |team| {
        let here = current_worker_state().is_some();
        on_workers.fetch_add(usize::from(here), Ordering::Relaxed);
        if team.thread_num() == 0 {
            master_on_worker.store(usize::from(here), Ordering::Relaxed);
        }
        team.barrier();
        team.for_each(0..1000, Schedule::Dynamic(3), |i| {
            sum.fetch_add(i, Ordering::Relaxed);
        });
    });
    assert_eq!(sum.into_inner(), 999 * 1000 / 2);
    (on_workers.into_inner(), master_on_worker.into_inner() == 1)
}

#[test]
fn placement_moves_the_master_and_nothing_else() {
    set_master_placement(MasterPlacement::Scheduler);
    assert_eq!(maestro_gomp::master_placement(), MasterPlacement::Scheduler);
    for n in [1, 2, 5] {
        assert_eq!(members_on_workers(n), (n, true), "team of {n}");
    }
    set_master_placement(MasterPlacement::Caller);
    for n in [1, 2, 5] {
        assert_eq!(members_on_workers(n), (n - 1, false), "team of {n}");
    }
}

#[test]
fn placement_names_parse() {
    for p in [MasterPlacement::Caller, MasterPlacement::Scheduler] {
        assert_eq!(MasterPlacement::parse(p.name()), Ok(p));
    }
    let e = MasterPlacement::parse("workers").unwrap_err();
    assert!(e.contains("workers"), "{e}");
}
