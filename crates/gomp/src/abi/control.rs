//! Maestro's own controls for C callers (declared in `tests/c/maestro_omp.h`):
//! the scheduler priority of OpenMP work and hint-sized teams.

use std::ffi::c_int;

use crate::runtime;

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
