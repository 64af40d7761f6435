//! Parallel regions (`GOMP_parallel`, the legacy `GOMP_parallel_start`/`_end`
//! pair, combined `parallel sections`), the barrier, and the cancellation entry
//! points (which never cancel).
//!
//! GCC encodes `if(false)` as `num_threads = 1`, and `num_threads` absent as 0.

use std::cell::RefCell;
use std::ffi::{c_int, c_uint, c_void};

use super::{Kind, loop_ws};
use crate::ctx::{Ctx, with_current};
use crate::fork::{self, Master};
use crate::icv::Sched;
use crate::loops::Space;
use crate::runtime;
use crate::team::RegionFn;
use crate::workshare::WorkShare;

thread_local! {
    /// Masters of regions opened by the legacy `*_start` entry points, innermost
    /// last; `GOMP_parallel_end` closes the innermost.
    static LEGACY: RefCell<Vec<Master>> = const { RefCell::new(Vec::new()) };
}

/// Keeps a forked master until `GOMP_parallel_end`.
pub(crate) fn push_legacy(master: Master) {
    LEGACY.with(|l| l.borrow_mut().push(master));
}

/// Forks a team running `f(data)` on every member, runs the master's share here,
/// and joins.
///
/// # Safety
/// `f` is a GCC-outlined region body and `data` its argument block.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GOMP_parallel(
    f: unsafe extern "C" fn(*mut c_void),
    data: *mut c_void,
    num_threads: c_uint,
    _flags: c_uint,
) {
    fork::run_region(RegionFn { f, data }, num_threads as usize, |_, _| None);
}

/// The pre-GCC-4.9 fork: the caller then runs `f(data)` itself and calls
/// [`GOMP_parallel_end`].
///
/// # Safety
/// As for [`GOMP_parallel`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GOMP_parallel_start(
    f: unsafe extern "C" fn(*mut c_void),
    data: *mut c_void,
    num_threads: c_uint,
) {
    let body = RegionFn { f, data };
    push_legacy(with_current(|p| {
        fork::fork(p, body, num_threads as usize, |_| None)
    }));
}

/// Joins the region opened by the innermost legacy `*_start` call.
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_parallel_end() {
    match LEGACY.with(|l| l.borrow_mut().pop()) {
        Some(master) => fork::join(master),
        None => runtime::fatal("GOMP_parallel_end without GOMP_parallel_start"),
    }
}

fn sections_ws(parent: &Ctx, n: usize, count: c_uint) -> Option<WorkShare> {
    let space = Space::indices(u64::from(count));
    Some(loop_ws(
        parent,
        n,
        space,
        Kind::Fixed(Sched::Dynamic),
        1,
        false,
    ))
}

fn sections_team(body: RegionFn, num_threads: c_uint, count: c_uint) -> Master {
    with_current(|p| fork::fork(p, body, num_threads as usize, |n| sections_ws(p, n, count)))
}

/// `parallel sections`: every member starts inside a sections construct of
/// `count` sections and asks for them with `GOMP_sections_next`.
///
/// # Safety
/// As for [`GOMP_parallel`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GOMP_parallel_sections(
    f: unsafe extern "C" fn(*mut c_void),
    data: *mut c_void,
    num_threads: c_uint,
    count: c_uint,
    _flags: c_uint,
) {
    fork::run_region(RegionFn { f, data }, num_threads as usize, |p, n| {
        sections_ws(p, n, count)
    });
}

/// The legacy form of [`GOMP_parallel_sections`].
///
/// # Safety
/// As for [`GOMP_parallel`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GOMP_parallel_sections_start(
    f: unsafe extern "C" fn(*mut c_void),
    data: *mut c_void,
    num_threads: c_uint,
    count: c_uint,
) {
    push_legacy(sections_team(RegionFn { f, data }, num_threads, count));
}

/// `#pragma omp barrier` (also the implicit one GCC emits after constructs).
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_barrier() {
    with_current(|ctx| {
        ctx.team.barrier();
    });
}

/// A barrier in a cancellable region: never cancelled.
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_barrier_cancel() -> bool {
    GOMP_barrier();
    false
}

/// `#pragma omp cancel`: cancellation is disabled, so nothing is cancelled.
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_cancel(_which: c_int, _do_cancel: bool) -> bool {
    false
}

/// `#pragma omp cancellation point`: never cancelled.
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_cancellation_point(_which: c_int) -> bool {
    false
}
