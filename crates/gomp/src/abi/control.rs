//! Maestro's own controls for C callers (declared in `tests/c/maestro_omp.h`):
//! the scheduler priority of OpenMP work, hint-sized teams, master placement.

use std::ffi::c_int;

use crate::runtime::{self, MasterPlacement};

/// Sets the scheduler priority of OpenMP work submitted from now on (0 = lowest;
/// negative values mean 0).
#[unsafe(no_mangle)]
pub extern "C" fn maestro_omp_set_priority(priority: c_int) {
    runtime::set_priority(usize::try_from(priority).unwrap_or(0));
}

#[unsafe(no_mangle)]
pub extern "C" fn maestro_omp_get_priority() -> c_int {
    c_int::try_from(runtime::priority()).unwrap_or(c_int::MAX)
}

/// Non-zero: regions without `num_threads` get `min(nthreads-var, hint)` members.
#[unsafe(no_mangle)]
pub extern "C" fn maestro_omp_set_hint_teams(on: c_int) {
    runtime::set_hint_teams(on != 0);
}

#[unsafe(no_mangle)]
pub extern "C" fn maestro_omp_get_hint_teams() -> c_int {
    c_int::from(runtime::hint_teams())
}

/// The scheduler's hardware contexts (its target active level).
#[unsafe(no_mangle)]
pub extern "C" fn maestro_omp_contexts() -> c_int {
    c_int::try_from(runtime::scheduler().contexts()).unwrap_or(c_int::MAX)
}

/// The scheduler's current concurrency hint.
#[unsafe(no_mangle)]
pub extern "C" fn maestro_omp_concurrency_hint() -> c_int {
    c_int::try_from(runtime::scheduler().concurrency_hint()).unwrap_or(c_int::MAX)
}

/// Non-zero: a region entered by a thread outside the scheduler runs its master's
/// share as a scheduler task too (`MasterPlacement::Scheduler`); zero: on the
/// calling thread.
#[unsafe(no_mangle)]
pub extern "C" fn maestro_omp_set_master_on_scheduler(on: c_int) {
    runtime::set_master_placement(if on != 0 {
        MasterPlacement::Scheduler
    } else {
        MasterPlacement::Caller
    });
}

#[unsafe(no_mangle)]
pub extern "C" fn maestro_omp_get_master_on_scheduler() -> c_int {
    c_int::from(runtime::master_placement() == MasterPlacement::Scheduler)
}
