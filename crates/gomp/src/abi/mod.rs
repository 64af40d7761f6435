//! The C ABI: the `GOMP_*` entry points GCC 12 emits and the `omp_*` user API,
//! with the signatures of GCC's `libgomp_g.h` and `omp.h`, plus `maestro_omp_*`
//! controls. Entry points we do not implement are deliberately *not* exported, so
//! a program that needs them fails at link time with the symbol's name instead of
//! misbehaving: offloading (`GOMP_target*`, and `GOMP_teams`/`GOMP_teams4`,
//! which only target regions use; host `teams` is [`teams`]), and on
//! targets other than x86-64 the two
//! variadic doacross waits (see [`doacross`]).
//! Cancellation takes effect with `OMP_CANCELLATION=true` (see [`parallel`]);
//! without it every cancellation point reports "not cancelled", as in libgomp.
//!
//! Every entry point is `unsafe extern "C"`: GCC guarantees the pointers it passes
//! are valid for the documented use, and calling them any other way is undefined.

pub mod alloc;
pub mod control;
pub mod display;
pub mod doacross;
pub mod error;
pub mod loops_long;
pub mod loops_ull;
pub mod omp;
pub mod omp_lock;
pub mod parallel;
pub mod parallel_loops;
pub mod sync;
pub mod task_reductions;
pub mod taskloop;
pub mod tasks;
pub mod teams;

use std::ffi::c_void;
use std::sync::Arc;

use crate::ctx::Ctx;
use crate::icv::Sched;
use crate::loops::{LoopWs, Space};
use crate::runtime;
use crate::taskred;
use crate::workshare::{self, WorkShare, WsKind};

/// A schedule as GCC names it: fixed, or `runtime` (read run-sched-var).
#[derive(Clone, Copy)]
pub(crate) enum Kind {
    Fixed(Sched),
    Runtime,
}

impl Kind {
    /// From `GOMP_loop_start`'s `sched` argument (`GFS_*`, 0 = runtime).
    fn from_gfs(sched: i64) -> Kind {
        match sched as u32 & !0x8000_0000 {
            0 => Kind::Runtime,
            raw => {
                Kind::Fixed(Sched::from_raw(raw).unwrap_or_else(|| {
                    runtime::fatal(&format!("unknown loop schedule {sched:#x}"))
                }))
            }
        }
    }

    fn resolve(self, ctx: &Ctx, chunk: u64) -> (Sched, u64) {
        match self {
            Kind::Fixed(s) => (s, chunk),
            Kind::Runtime => {
                let icv = ctx.icv.get();
                (icv.run_sched, icv.run_chunk)
            }
        }
    }
}

/// A loop construct for a team of `n`.
pub(crate) fn loop_ws(
    ctx: &Ctx,
    n: usize,
    space: Space,
    kind: Kind,
    chunk: u64,
    ordered: bool,
) -> WorkShare {
    let (sched, chunk) = kind.resolve(ctx, chunk);
    WorkShare::new(WsKind::Loop(LoopWs::new(space, sched, chunk, n, ordered)))
}

/// Enters a loop construct (created by the first member to arrive). `scratch` is
/// GCC's `mem` argument: on entry the bytes wanted, on return the shared block.
/// `reductions` is GCC's array of the loop's task reductions
/// (`reduction(task, …)`), or null: the first member allocates the private
/// copies with the construct, and every member registers its array on them in
/// a taskgroup of its own that `GOMP_workshare_task_reduction_unregister` ends.
///
/// # Safety
/// `scratch` is null or valid for a read and a write of a pointer;
/// `reductions` is null or a reductions array as GCC emits it, alive until the
/// member's `GOMP_workshare_task_reduction_unregister`.
pub(crate) unsafe fn begin_loop(
    ctx: &Ctx,
    space: Space,
    kind: Kind,
    chunk: u64,
    ordered: bool,
    scratch: *mut *mut c_void,
    reductions: *mut usize,
) -> Arc<WorkShare> {
    // SAFETY: forwarded contract.
    unsafe {
        begin_loop_with(
            ctx,
            space,
            kind,
            chunk,
            ordered,
            scratch,
            reductions,
            |ws| ws,
        )
    }
}

/// [`begin_loop`], with `finish` completing the construct when this member
/// creates it (a doacross loop adds its state).
///
/// # Safety
/// As for [`begin_loop`].
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn begin_loop_with(
    ctx: &Ctx,
    space: Space,
    kind: Kind,
    chunk: u64,
    ordered: bool,
    scratch: *mut *mut c_void,
    reductions: *mut usize,
    finish: impl FnOnce(WorkShare) -> WorkShare,
) -> Arc<WorkShare> {
    let (ws, _) = workshare::begin(ctx, || {
        let mut ws = finish(loop_ws(ctx, ctx.team.n, space, kind, chunk, ordered));
        if !scratch.is_null() {
            // SAFETY: the caller guarantees `scratch` is readable.
            ws = ws.with_scratch(unsafe { *scratch } as usize);
        }
        if !reductions.is_null() {
            // SAFETY: the caller's contract on `reductions`.
            ws = ws.with_task_reductions(unsafe { taskred::allocate(reductions, ctx.team.n) });
        }
        ws
    });
    if !scratch.is_null() {
        // SAFETY: as above, and writable.
        unsafe { *scratch = ws.scratch_ptr() };
    }
    if !reductions.is_null() {
        // SAFETY: the caller's contract on `reductions`.
        unsafe { taskred::workshare_register(ctx, reductions, ws.task_reductions()) };
    }
    ws
}

/// The calling member's next chunk of its current loop, as loop values.
pub(crate) fn next_chunk(ctx: &Ctx) -> Option<(u64, u64)> {
    workshare::with_current(ctx, |ws| {
        let l = ws.as_loop()?;
        let c = l.next_chunk(ctx)?;
        Some(l.space.bounds(c))
    })
    .flatten()
}
