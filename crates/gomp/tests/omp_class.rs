//! `MAESTRO_OMP_CLASS`: a program's parallel regions run in the workload
//! class the variable names (defined on the runtime's scheduler at first
//! use): every member, the master on the calling thread included, runs under
//! it, and the class's counters see the work. Own test binary: the variable
//! is read once per process.

use std::sync::Mutex;

use maestro_gomp::{Schedule, parallel_region, region_class, scheduler};

#[test]
fn regions_run_in_the_class_the_environment_names() {
    // SAFETY: the only test of this binary sets the variable before the
    // runtime (or any other thread of this process that reads the
    // environment) starts.
    unsafe { std::env::set_var("MAESTRO_OMP_CLASS", "omp:weight=3,max-parallelism=2") };
    let class = region_class().expect("the class is defined");
    let stats = |name: &str| {
        scheduler()
            .class_stats()
            .into_iter()
            .find(|s| s.name == name)
            .expect("class exists")
    };
    assert_eq!(stats("omp").weight, 3);
    let seen = Mutex::new(Vec::new());
    for _ in 0..20 {
        parallel_region(3, |team| {
            seen.lock()
                .unwrap()
                .push(maestro_scheduler::current_class());
            team.for_each(0..100, Schedule::Static, |_| {});
        });
    }
    let seen = seen.into_inner().unwrap();
    assert_eq!(seen.len(), 60);
    assert!(seen.iter().all(|&c| c == class), "{seen:?}");
    assert!(stats("omp").entered > 0, "workers ran the class's tasks");
    // Outside a region the calling thread is back in the default class.
    assert_eq!(
        maestro_scheduler::current_class(),
        maestro_scheduler::ClassId::DEFAULT
    );
}
