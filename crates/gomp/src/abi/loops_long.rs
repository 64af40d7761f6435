//! `GOMP_loop_*` for `long` iteration variables and the loop ends (the combined
//! `GOMP_parallel_loop_*` are in `parallel_loops`). A `*_start` enters the
//! construct and returns the first chunk in `[*istart, *iend)`; `*_next` returns
//! the following ones; every member then calls `GOMP_loop_end` (with barrier) or
//! `GOMP_loop_end_nowait`. Which `*_next` GCC calls does not matter: the
//! construct remembers its schedule.

use std::ffi::{c_long, c_void};
use std::ptr;

use super::{Kind, begin_loop, next_chunk};
use crate::ctx::with_current;
use crate::icv::Sched;
use crate::loops::Space;
use crate::workshare;

/// Stores a chunk for GCC.
///
/// # Safety
/// `istart` and `iend` are valid for writes.
unsafe fn store(chunk: Option<(u64, u64)>, istart: *mut c_long, iend: *mut c_long) -> bool {
    match chunk {
        Some((a, b)) => {
            // SAFETY: guaranteed by the caller (GCC passes its locals).
            unsafe {
                *istart = a as c_long;
                *iend = b as c_long;
            }
            true
        }
        None => false,
    }
}

fn start(kind: Kind, s: c_long, e: c_long, incr: c_long, chunk: c_long, ordered: bool) {
    with_current(|ctx| {
        // SAFETY: a null scratch pointer is allowed.
        unsafe {
            begin_loop(
                ctx,
                Space::long(s, e, incr),
                kind,
                chunk as u64,
                ordered,
                ptr::null_mut(),
                ptr::null_mut(),
            )
        };
    });
}

fn next(istart: *mut c_long, iend: *mut c_long) -> bool {
    let chunk = with_current(next_chunk);
    // SAFETY: the exported callers pass GCC's pointers through unchanged.
    unsafe { store(chunk, istart, iend) }
}

macro_rules! loop_start {
    ($($name:ident => $kind:expr, $ordered:expr;)*) => {$(
        /// Enters a loop construct and returns the first chunk.
        ///
        /// # Safety
        /// `istart` and `iend` are valid for writes.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            start_: c_long, end: c_long, incr: c_long, chunk: c_long,
            istart: *mut c_long, iend: *mut c_long,
        ) -> bool {
            start($kind, start_, end, incr, chunk, $ordered);
            next(istart, iend)
        }
    )*};
}

macro_rules! loop_runtime_start {
    ($($name:ident => $ordered:expr;)*) => {$(
        /// Enters a `schedule(runtime)` loop construct and returns the first chunk.
        ///
        /// # Safety
        /// `istart` and `iend` are valid for writes.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            start_: c_long, end: c_long, incr: c_long,
            istart: *mut c_long, iend: *mut c_long,
        ) -> bool {
            start(Kind::Runtime, start_, end, incr, 0, $ordered);
            next(istart, iend)
        }
    )*};
}

macro_rules! loop_next {
    ($($name:ident)*) => {$(
        /// The calling member's next chunk of its current loop.
        ///
        /// # Safety
        /// `istart` and `iend` are valid for writes.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(istart: *mut c_long, iend: *mut c_long) -> bool {
            next(istart, iend)
        }
    )*};
}

const STATIC: Kind = Kind::Fixed(Sched::Static);
const DYNAMIC: Kind = Kind::Fixed(Sched::Dynamic);
const GUIDED: Kind = Kind::Fixed(Sched::Guided);

loop_start! {
    GOMP_loop_static_start => STATIC, false;
    GOMP_loop_dynamic_start => DYNAMIC, false;
    GOMP_loop_guided_start => GUIDED, false;
    GOMP_loop_nonmonotonic_dynamic_start => DYNAMIC, false;
    GOMP_loop_nonmonotonic_guided_start => GUIDED, false;
    GOMP_loop_ordered_static_start => STATIC, true;
    GOMP_loop_ordered_dynamic_start => DYNAMIC, true;
    GOMP_loop_ordered_guided_start => GUIDED, true;
}

loop_runtime_start! {
    GOMP_loop_runtime_start => false;
    GOMP_loop_nonmonotonic_runtime_start => false;
    GOMP_loop_maybe_nonmonotonic_runtime_start => false;
    GOMP_loop_ordered_runtime_start => true;
}

loop_next! {
    GOMP_loop_static_next GOMP_loop_dynamic_next GOMP_loop_guided_next
    GOMP_loop_runtime_next GOMP_loop_nonmonotonic_dynamic_next
    GOMP_loop_nonmonotonic_guided_next GOMP_loop_nonmonotonic_runtime_next
    GOMP_loop_maybe_nonmonotonic_runtime_next GOMP_loop_ordered_static_next
    GOMP_loop_ordered_dynamic_next GOMP_loop_ordered_guided_next
    GOMP_loop_ordered_runtime_next
}

/// The generic loop start of GCC ≥ 9 (`sched` is a `GFS_*` value). With a null
/// `istart` it only enters the construct; `mem` asks for zeroed shared memory.
///
/// # Safety
/// `istart`/`iend` are null or valid for writes; `mem` is null or valid for a
/// read and a write; `reductions` is null or GCC's array of the loop's task
/// reductions (see `begin_loop`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GOMP_loop_start(
    start_: c_long,
    end: c_long,
    incr: c_long,
    sched: c_long,
    chunk: c_long,
    istart: *mut c_long,
    iend: *mut c_long,
    reductions: *mut usize,
    mem: *mut *mut c_void,
) -> bool {
    generic_start(
        start_, end, incr, sched, chunk, istart, iend, reductions, mem, false,
    )
}

/// [`GOMP_loop_start`] for `ordered` loops.
///
/// # Safety
/// As for [`GOMP_loop_start`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GOMP_loop_ordered_start(
    start_: c_long,
    end: c_long,
    incr: c_long,
    sched: c_long,
    chunk: c_long,
    istart: *mut c_long,
    iend: *mut c_long,
    reductions: *mut usize,
    mem: *mut *mut c_void,
) -> bool {
    generic_start(
        start_, end, incr, sched, chunk, istart, iend, reductions, mem, true,
    )
}

#[allow(clippy::too_many_arguments)]
fn generic_start(
    start_: c_long,
    end: c_long,
    incr: c_long,
    sched: c_long,
    chunk: c_long,
    istart: *mut c_long,
    iend: *mut c_long,
    reductions: *mut usize,
    mem: *mut *mut c_void,
    ordered: bool,
) -> bool {
    let space = Space::long(start_, end, incr);
    with_current(|ctx| {
        // SAFETY: `mem` and `reductions` come from GCC (null or valid).
        unsafe {
            begin_loop(
                ctx,
                space,
                Kind::from_gfs(sched),
                chunk as u64,
                ordered,
                mem,
                reductions,
            )
        };
    });
    if istart.is_null() {
        return true;
    }
    next(istart, iend)
}

/// Leaves the loop construct and waits at the team barrier.
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_loop_end() {
    with_current(|ctx| {
        workshare::end(ctx);
        ctx.team.barrier();
    });
}

/// Leaves the loop construct without waiting (`nowait`).
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_loop_end_nowait() {
    with_current(workshare::end);
}

/// [`GOMP_loop_end`] of a loop in a cancellable region: leaves the construct
/// and waits at a cancellable barrier (whose release also ends a `cancel for`
/// of this loop); true if the region is cancelled.
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_loop_end_cancel() -> bool {
    with_current(|ctx| {
        workshare::end(ctx);
        ctx.team.barrier_cancellable()
    })
}
