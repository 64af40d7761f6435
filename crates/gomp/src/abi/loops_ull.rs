//! `GOMP_loop_ull_*`: loops whose iteration variable is `unsigned long long` (or
//! whose range does not fit a `long`). `up` gives the direction; when false,
//! `incr` is a negative step in two's complement. Ends are the `long` versions'.

use std::ffi::{c_long, c_void};
use std::ptr;

use super::{Kind, begin_loop, next_chunk};
use crate::ctx::with_current;
use crate::icv::Sched;
use crate::loops::Space;

type Ull = u64;

/// # Safety
/// `istart` and `iend` are valid for writes.
unsafe fn store(chunk: Option<(u64, u64)>, istart: *mut Ull, iend: *mut Ull) -> bool {
    match chunk {
        Some((a, b)) => {
            // SAFETY: guaranteed by the caller (GCC passes its locals).
            unsafe {
                *istart = a;
                *iend = b;
            }
            true
        }
        None => false,
    }
}

fn start(kind: Kind, space: Space, chunk: Ull, ordered: bool) {
    with_current(|ctx| {
        // SAFETY: a null scratch pointer is allowed.
        unsafe {
            begin_loop(
                ctx,
                space,
                kind,
                chunk,
                ordered,
                ptr::null_mut(),
                ptr::null_mut(),
            )
        };
    });
}

fn next(istart: *mut Ull, iend: *mut Ull) -> bool {
    let chunk = with_current(next_chunk);
    // SAFETY: the exported callers pass GCC's pointers through unchanged.
    unsafe { store(chunk, istart, iend) }
}

macro_rules! ull_start {
    ($($name:ident => $kind:expr, $ordered:expr;)*) => {$(
        /// Enters an `unsigned long long` loop construct; returns the first chunk.
        ///
        /// # Safety
        /// `istart` and `iend` are valid for writes.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            up: bool, start_: Ull, end: Ull, incr: Ull, chunk: Ull,
            istart: *mut Ull, iend: *mut Ull,
        ) -> bool {
            start($kind, Space::ull(up, start_, end, incr), chunk, $ordered);
            next(istart, iend)
        }
    )*};
}

macro_rules! ull_runtime_start {
    ($($name:ident => $ordered:expr;)*) => {$(
        /// Enters an `unsigned long long` `schedule(runtime)` loop construct.
        ///
        /// # Safety
        /// `istart` and `iend` are valid for writes.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            up: bool, start_: Ull, end: Ull, incr: Ull,
            istart: *mut Ull, iend: *mut Ull,
        ) -> bool {
            start(Kind::Runtime, Space::ull(up, start_, end, incr), 0, $ordered);
            next(istart, iend)
        }
    )*};
}

macro_rules! ull_next {
    ($($name:ident)*) => {$(
        /// The calling member's next chunk of its current loop.
        ///
        /// # Safety
        /// `istart` and `iend` are valid for writes.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(istart: *mut Ull, iend: *mut Ull) -> bool {
            next(istart, iend)
        }
    )*};
}

const STATIC: Kind = Kind::Fixed(Sched::Static);
const DYNAMIC: Kind = Kind::Fixed(Sched::Dynamic);
const GUIDED: Kind = Kind::Fixed(Sched::Guided);

ull_start! {
    GOMP_loop_ull_static_start => STATIC, false;
    GOMP_loop_ull_dynamic_start => DYNAMIC, false;
    GOMP_loop_ull_guided_start => GUIDED, false;
    GOMP_loop_ull_nonmonotonic_dynamic_start => DYNAMIC, false;
    GOMP_loop_ull_nonmonotonic_guided_start => GUIDED, false;
    GOMP_loop_ull_ordered_static_start => STATIC, true;
    GOMP_loop_ull_ordered_dynamic_start => DYNAMIC, true;
    GOMP_loop_ull_ordered_guided_start => GUIDED, true;
}

ull_runtime_start! {
    GOMP_loop_ull_runtime_start => false;
    GOMP_loop_ull_nonmonotonic_runtime_start => false;
    GOMP_loop_ull_maybe_nonmonotonic_runtime_start => false;
    GOMP_loop_ull_ordered_runtime_start => true;
}

ull_next! {
    GOMP_loop_ull_static_next GOMP_loop_ull_dynamic_next GOMP_loop_ull_guided_next
    GOMP_loop_ull_runtime_next GOMP_loop_ull_nonmonotonic_dynamic_next
    GOMP_loop_ull_nonmonotonic_guided_next GOMP_loop_ull_nonmonotonic_runtime_next
    GOMP_loop_ull_maybe_nonmonotonic_runtime_next GOMP_loop_ull_ordered_static_next
    GOMP_loop_ull_ordered_dynamic_next GOMP_loop_ull_ordered_guided_next
    GOMP_loop_ull_ordered_runtime_next
}

/// The generic `unsigned long long` loop start of GCC ≥ 9; see `GOMP_loop_start`.
///
/// # Safety
/// `istart`/`iend` are null or valid for writes; `mem` is null or valid for a
/// read and a write; `reductions` is null or GCC's array of the loop's task
/// reductions.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GOMP_loop_ull_start(
    up: bool,
    start_: Ull,
    end: Ull,
    incr: Ull,
    sched: c_long,
    chunk: Ull,
    istart: *mut Ull,
    iend: *mut Ull,
    reductions: *mut usize,
    mem: *mut *mut c_void,
) -> bool {
    let space = Space::ull(up, start_, end, incr);
    generic_start(space, sched, chunk, istart, iend, reductions, mem, false)
}

/// [`GOMP_loop_ull_start`] for `ordered` loops.
///
/// # Safety
/// As for [`GOMP_loop_ull_start`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GOMP_loop_ull_ordered_start(
    up: bool,
    start_: Ull,
    end: Ull,
    incr: Ull,
    sched: c_long,
    chunk: Ull,
    istart: *mut Ull,
    iend: *mut Ull,
    reductions: *mut usize,
    mem: *mut *mut c_void,
) -> bool {
    let space = Space::ull(up, start_, end, incr);
    generic_start(space, sched, chunk, istart, iend, reductions, mem, true)
}

#[allow(clippy::too_many_arguments)]
fn generic_start(
    space: Space,
    sched: c_long,
    chunk: Ull,
    istart: *mut Ull,
    iend: *mut Ull,
    reductions: *mut usize,
    mem: *mut *mut c_void,
    ordered: bool,
) -> bool {
    with_current(|ctx| {
        // SAFETY: `mem` and `reductions` come from GCC (null or valid).
        unsafe {
            begin_loop(
                ctx,
                space,
                Kind::from_gfs(sched),
                chunk,
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
