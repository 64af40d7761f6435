//! Parallel regions (`GOMP_parallel`, the legacy `GOMP_parallel_start`/`_end`
//! pair, combined `parallel sections`), the barrier, and cancellation
//! (`GOMP_cancel`, `GOMP_cancellation_point`, `GOMP_barrier_cancel`; the ends
//! of cancellable loops and sections are with those constructs).
//!
//! Cancellation takes effect only with `OMP_CANCELLATION=true` (cancel-var);
//! otherwise every entry point reports "not cancelled", as libgomp does. GCC
//! lowers `cancel X` to `if (GOMP_cancel(X, cond)) goto end-of-X` and
//! `cancellation point X` to the same with `GOMP_cancellation_point(X)`, and
//! uses the `*_cancel` barriers in regions that contain a `cancel`: they return
//! true when the region is cancelled, and the member then jumps to the end of
//! its region. What each kind cancels:
//! - `parallel`: the team (`TeamShared::cancel`): cancellable barriers let
//!   every member go, queued tasks of the team never start, new ones are not
//!   created; members still meet at the join.
//! - `for` / `sections`: the team's current construct (`cancel_workshare`),
//!   which members see at their next cancellation point; the construct's
//!   end barrier clears it.
//! - `taskgroup`: the innermost taskgroup of the encountering task: its tasks
//!   that have not started never do, and no new ones are created in it.
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
use crate::task;
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

/// A barrier in a cancellable region: true if the region is cancelled (then
/// the member leaves without waiting for the others).
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_barrier_cancel() -> bool {
    with_current(|ctx| ctx.team.barrier_cancellable())
}

/// `which` of `GOMP_cancel` and `GOMP_cancellation_point` (GCC's
/// `GOMP_CANCEL_*`).
const CANCEL_PARALLEL: c_int = 1;
const CANCEL_LOOP: c_int = 2;
const CANCEL_SECTIONS: c_int = 4;
const CANCEL_TASKGROUP: c_int = 8;

/// `#pragma omp cancel which if(do_cancel)`: true if the construct is now
/// cancelled (the caller jumps to its end). With cancellation disabled,
/// false; with `do_cancel` false, a cancellation point.
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_cancel(which: c_int, do_cancel: bool) -> bool {
    if !runtime::cancellation() {
        return false;
    }
    if !do_cancel {
        return GOMP_cancellation_point(which);
    }
    with_current(|ctx| {
        if which & (CANCEL_LOOP | CANCEL_SECTIONS) != 0 {
            ctx.team.cancel_workshare();
        } else if which & CANCEL_TASKGROUP != 0 {
            task::cancel_taskgroup(ctx);
        } else if which & CANCEL_PARALLEL != 0 {
            ctx.team.cancel();
        } else {
            runtime::fatal(&format!("GOMP_cancel: unknown construct {which:#x}"));
        }
    });
    true
}

/// `#pragma omp cancellation point which`: true if the construct has been
/// cancelled (the caller jumps to its end). A task's taskgroup also counts as
/// cancelled when its region is (`cancel parallel` cancels its tasks too).
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_cancellation_point(which: c_int) -> bool {
    if !runtime::cancellation() {
        return false;
    }
    with_current(|ctx| {
        if which & (CANCEL_LOOP | CANCEL_SECTIONS) != 0 {
            return ctx.team.workshare_cancelled();
        }
        if which & CANCEL_TASKGROUP != 0 && task::taskgroup_cancelled(ctx) {
            return true;
        }
        ctx.team.is_cancelled()
    })
}
