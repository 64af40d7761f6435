//! The `omp_*` user API (OpenMP 3.1 complete, plus the 4.x/5.x queries real code
//! calls, answered for a host-only runtime). Setters change the calling task's
//! ICVs, which the tasks and teams it creates inherit.

use std::ffi::c_int;
use std::sync::OnceLock;
use std::time::Instant;

use crate::ctx::with_current;
use crate::icv::{SUPPORTED_ACTIVE_LEVELS, Sched};
use crate::runtime;

fn to_int(v: usize) -> c_int {
    c_int::try_from(v).unwrap_or(c_int::MAX)
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_set_num_threads(n: c_int) {
    with_current(|c| {
        let mut icv = c.icv.get();
        icv.nthreads = usize::try_from(n).unwrap_or(1).max(1);
        c.icv.set(icv);
    });
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_get_num_threads() -> c_int {
    with_current(|c| to_int(c.team.n))
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_get_max_threads() -> c_int {
    with_current(|c| {
        let icv = c.icv.get();
        to_int(icv.nthreads.min(icv.thread_limit))
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_get_thread_num() -> c_int {
    with_current(|c| to_int(c.num))
}

/// The scheduler's hardware contexts.
#[unsafe(no_mangle)]
pub extern "C" fn omp_get_num_procs() -> c_int {
    to_int(runtime::scheduler().contexts())
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_in_parallel() -> c_int {
    with_current(|c| c_int::from(c.team.active_level > 0))
}

/// dyn-var: when true, regions without `num_threads` are sized by the scheduler's
/// concurrency hint.
#[unsafe(no_mangle)]
pub extern "C" fn omp_set_dynamic(on: c_int) {
    with_current(|c| {
        let mut icv = c.icv.get();
        icv.dynamic = on != 0;
        c.icv.set(icv);
    });
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_get_dynamic() -> c_int {
    with_current(|c| c_int::from(c.icv.get().dynamic))
}

/// Deprecated in OpenMP 5.0: sets max-active-levels-var to all or one.
#[unsafe(no_mangle)]
pub extern "C" fn omp_set_nested(on: c_int) {
    omp_set_max_active_levels(if on != 0 {
        to_int(SUPPORTED_ACTIVE_LEVELS)
    } else {
        1
    });
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_get_nested() -> c_int {
    with_current(|c| c_int::from(c.icv.get().max_active_levels > 1))
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_set_max_active_levels(levels: c_int) {
    let Ok(levels) = usize::try_from(levels) else {
        return; // negative: ignored, as the specification asks
    };
    with_current(|c| {
        let mut icv = c.icv.get();
        icv.max_active_levels = levels.min(SUPPORTED_ACTIVE_LEVELS);
        c.icv.set(icv);
    });
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_get_max_active_levels() -> c_int {
    with_current(|c| to_int(c.icv.get().max_active_levels))
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_get_supported_active_levels() -> c_int {
    to_int(SUPPORTED_ACTIVE_LEVELS)
}

/// run-sched-var, used by `schedule(runtime)` (`kind` is an `omp_sched_t`).
#[unsafe(no_mangle)]
pub extern "C" fn omp_set_schedule(kind: c_int, chunk: c_int) {
    let Some(sched) = Sched::from_raw(kind as u32) else {
        return;
    };
    let chunk = u64::try_from(chunk).unwrap_or(0);
    with_current(|c| {
        let mut icv = c.icv.get();
        icv.run_sched = sched;
        icv.run_chunk = match sched {
            Sched::Static | Sched::Auto => chunk,
            _ => chunk.max(1),
        };
        c.icv.set(icv);
    });
}

/// # Safety
/// `kind` and `chunk` are valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_get_schedule(kind: *mut c_int, chunk: *mut c_int) {
    let icv = with_current(|c| c.icv.get());
    // SAFETY: the caller passes writable locations.
    unsafe {
        *kind = icv.run_sched.to_raw() as c_int;
        *chunk = c_int::try_from(icv.run_chunk).unwrap_or(c_int::MAX);
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_get_thread_limit() -> c_int {
    with_current(|c| to_int(c.icv.get().thread_limit))
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_get_level() -> c_int {
    with_current(|c| to_int(c.team.level))
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_get_active_level() -> c_int {
    with_current(|c| to_int(c.team.active_level))
}

/// (thread number, team size) of the calling task's ancestor at `level`.
fn ancestor(level: c_int) -> Option<(usize, usize)> {
    let level = usize::try_from(level).ok()?;
    with_current(|c| {
        let here = c.team.level;
        if level == 0 {
            Some((0, 1))
        } else if level < here {
            c.team.outer.get(level - 1).copied()
        } else if level == here {
            Some((c.num, c.team.n))
        } else {
            None
        }
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_get_ancestor_thread_num(level: c_int) -> c_int {
    ancestor(level).map_or(-1, |(num, _)| to_int(num))
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_get_team_size(level: c_int) -> c_int {
    ancestor(level).map_or(-1, |(_, size)| to_int(size))
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_in_final() -> c_int {
    with_current(|c| c_int::from(c.in_final))
}

/// Seconds since an arbitrary fixed point (the first call), monotonic.
#[unsafe(no_mangle)]
pub extern "C" fn omp_get_wtime() -> f64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_secs_f64()
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_get_wtick() -> f64 {
    1e-9
}

/// cancel-var: 1 if `OMP_CANCELLATION=true`.
#[unsafe(no_mangle)]
pub extern "C" fn omp_get_cancellation() -> c_int {
    c_int::from(crate::runtime::cancellation())
}

/// Host-only answers for the device, places and priority queries.
macro_rules! constant {
    ($($name:ident -> $v:expr;)*) => {$(
        #[unsafe(no_mangle)]
        pub extern "C" fn $name() -> c_int {
            $v
        }
    )*};
}

constant! {
    omp_get_proc_bind -> 0;
    omp_get_num_places -> 0;
    omp_get_place_num -> -1;
    omp_get_partition_num_places -> 0;
    omp_get_default_device -> 0;
    omp_get_num_devices -> 0;
    omp_get_initial_device -> 0;
    omp_get_device_num -> 0;
    omp_is_initial_device -> 1;
    omp_get_max_task_priority -> 0;
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_set_default_device(_device: c_int) {}
