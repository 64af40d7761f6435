//! Task reductions and `scope`: `GOMP_taskgroup_reduction_register` /
//! `_unregister` (`taskgroup task_reduction(…)`), `GOMP_task_reduction_remap`
//! (`task in_reduction(…)`), `GOMP_parallel_reductions` (`parallel
//! reduction(task, …)`), `GOMP_scope_start` and
//! `GOMP_workshare_task_reduction_unregister` (`scope reduction(…)`, and `for` /
//! `sections` with `reduction(task, …)`, whose start entry points take the
//! reductions array too). GCC's array layout and the runtime's share of the work
//! are described in [`crate::taskred`]; when copies are made and freed, in
//! PROTOCOL.md ("Task reductions").

use std::ffi::{c_uint, c_void};
use std::sync::Arc;

use crate::ctx::with_current;
use crate::fork;
use crate::task;
use crate::taskred::{self, Registration};
use crate::team::RegionFn;
use crate::workshare::{self, WorkShare, WsKind};

/// Gives the innermost taskgroup (just opened) private copies of the task
/// reductions described by `data`, one per team member, zeroed; writes their
/// base into `data[2]`.
///
/// # Safety
/// `data` is a reductions array as GCC emits it, alive and untouched by others
/// until `GOMP_taskgroup_reduction_unregister(data)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GOMP_taskgroup_reduction_register(data: *mut usize) {
    // SAFETY: forwarded contract.
    with_current(|ctx| unsafe { taskred::taskgroup_register(ctx, data) });
}

/// Frees the private copies registered for `data` (after the taskgroup ended and
/// the compiler's code combined them).
///
/// # Safety
/// `data` was registered by `GOMP_taskgroup_reduction_register` or
/// `GOMP_parallel_reductions` and not unregistered yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GOMP_taskgroup_reduction_unregister(data: *mut usize) {
    // SAFETY: forwarded contract.
    unsafe { taskred::taskgroup_unregister(data) }
}

/// Maps `ptrs[0..cnt]` (original list items of `in_reduction`, or private copies
/// of them) to the calling member's private copies; stores the original list
/// items of the first `cntorig` in `ptrs[cnt..cnt + cntorig]`.
///
/// # Safety
/// `ptrs` is valid for reads and writes of `cnt + cntorig` pointers.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GOMP_task_reduction_remap(
    cnt: usize,
    cntorig: usize,
    ptrs: *mut *mut c_void,
) {
    // SAFETY: forwarded contract.
    with_current(|ctx| unsafe { taskred::remap(ctx, cnt, cntorig, ptrs) });
}

/// End of a work-sharing construct (or `scope`) with task reductions, after the
/// compiler's code combined the copies: ends the member's taskgroup of the
/// construct, releases its registration (the copies are freed with the last
/// member's), then waits at the team barrier unless `cancelled`.
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_workshare_task_reduction_unregister(cancelled: bool) {
    with_current(|ctx| {
        task::close_group(ctx, true);
        if !cancelled {
            ctx.team.barrier();
        }
    });
}

/// `parallel reduction(task, …)`: `data` starts with a pointer to the
/// reductions array. Sizes the team, gives every member a zeroed private copy,
/// runs the region like `GOMP_parallel`, and returns the team size (the
/// compiler's code then combines that many copies and unregisters the array).
///
/// # Safety
/// As for `GOMP_parallel`; `*data` is a reductions array as GCC emits it, alive
/// until `GOMP_taskgroup_reduction_unregister` of it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GOMP_parallel_reductions(
    f: unsafe extern "C" fn(*mut c_void),
    data: *mut c_void,
    num_threads: c_uint,
    _flags: c_uint,
) -> c_uint {
    // SAFETY: GCC's argument block starts with the reductions array's address.
    let rdata = unsafe { data.cast::<*mut usize>().read() };
    let mut size = 0;
    let red = |n: usize| {
        size = n;
        // SAFETY: forwarded contract on the array.
        let reg = unsafe {
            let chunks = taskred::allocate(rdata, n);
            Arc::new(Registration::new(rdata, &chunks, None))
        };
        // SAFETY: as above; word 5 is ours until unregistered.
        unsafe { taskred::store_handle(rdata, reg.clone()) };
        Some(reg)
    };
    fork::run_region_with(RegionFn { f, data }, num_threads as usize, |_, _| None, red);
    c_uint::try_from(size).unwrap_or(c_uint::MAX)
}

/// `scope` with task reductions (GCC calls it for no other `scope`): the first
/// member to arrive allocates the private copies, every member registers its
/// array on them in a taskgroup of its own; the compiler's code ends it with a
/// barrier, the combination by thread 0 and
/// `GOMP_workshare_task_reduction_unregister`.
///
/// # Safety
/// `reductions` is null or a reductions array as GCC emits it, alive until the
/// member's `GOMP_workshare_task_reduction_unregister`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GOMP_scope_start(reductions: *mut usize) {
    if reductions.is_null() {
        return;
    }
    with_current(|ctx| {
        let (ws, _) = workshare::meet(ctx, || {
            // SAFETY: forwarded contract.
            let chunks = unsafe { taskred::allocate(reductions, ctx.team.n) };
            WorkShare::new(WsKind::Scope).with_task_reductions(chunks)
        });
        // SAFETY: forwarded contract.
        unsafe { taskred::workshare_register(ctx, reductions, ws.task_reductions()) };
    });
}
