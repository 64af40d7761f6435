//! The combined `parallel for` entry points (`GOMP_parallel_loop_*`, `long`
//! loops only, as in libgomp): the team is forked with the loop construct already
//! entered by every member, so the outlined body starts with `GOMP_loop_*_next`.

use std::ffi::{c_long, c_uint, c_void};

use super::{Kind, loop_ws};
use crate::ctx::with_current;
use crate::fork::{self, Master};
use crate::icv::Sched;
use crate::loops::Space;
use crate::team::RegionFn;

const STATIC: Kind = Kind::Fixed(Sched::Static);
const DYNAMIC: Kind = Kind::Fixed(Sched::Dynamic);
const GUIDED: Kind = Kind::Fixed(Sched::Guided);

/// Forks a team whose members all start inside one loop construct.
fn parallel_loop(
    body: RegionFn,
    nthreads: c_uint,
    space: Space,
    kind: Kind,
    chunk: c_long,
) -> Master {
    with_current(|parent| {
        fork::fork(parent, body, nthreads as usize, |n| {
            Some(loop_ws(parent, n, space, kind, chunk as u64, false))
        })
    })
}

macro_rules! parallel_loop {
    ($($name:ident => $kind:expr;)*) => {$(
        /// `parallel for`: forks a team sharing the loop, runs `f(data)` as the
        /// master, joins.
        ///
        /// # Safety
        /// `f` is a GCC-outlined region body and `data` its argument block.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            f: unsafe extern "C" fn(*mut c_void), data: *mut c_void, nthreads: c_uint,
            start_: c_long, end: c_long, incr: c_long, chunk: c_long, _flags: c_uint,
        ) {
            let space = Space::long(start_, end, incr);
            fork::run_region(RegionFn { f, data }, nthreads as usize, |p, n| {
                Some(loop_ws(p, n, space, $kind, chunk as u64, false))
            });
        }
    )*};
}

macro_rules! parallel_loop_runtime {
    ($($name:ident;)*) => {$(
        /// `parallel for schedule(runtime)`: forks, runs `f(data)`, joins.
        ///
        /// # Safety
        /// `f` is a GCC-outlined region body and `data` its argument block.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            f: unsafe extern "C" fn(*mut c_void), data: *mut c_void, nthreads: c_uint,
            start_: c_long, end: c_long, incr: c_long, _flags: c_uint,
        ) {
            let space = Space::long(start_, end, incr);
            fork::run_region(RegionFn { f, data }, nthreads as usize, |p, n| {
                Some(loop_ws(p, n, space, Kind::Runtime, 0, false))
            });
        }
    )*};
}

macro_rules! parallel_loop_legacy {
    ($($name:ident => $kind:expr;)*) => {$(
        /// The pre-GCC-4.9 form: forks; the caller runs `f(data)` and calls
        /// `GOMP_parallel_end`.
        ///
        /// # Safety
        /// `f` is a GCC-outlined region body and `data` its argument block.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            f: unsafe extern "C" fn(*mut c_void), data: *mut c_void, nthreads: c_uint,
            start_: c_long, end: c_long, incr: c_long, chunk: c_long,
        ) {
            let body = RegionFn { f, data };
            let master = parallel_loop(body, nthreads, Space::long(start_, end, incr), $kind, chunk);
            super::parallel::push_legacy(master);
        }
    )*};
}

parallel_loop! {
    GOMP_parallel_loop_static => STATIC;
    GOMP_parallel_loop_dynamic => DYNAMIC;
    GOMP_parallel_loop_guided => GUIDED;
    GOMP_parallel_loop_nonmonotonic_dynamic => DYNAMIC;
    GOMP_parallel_loop_nonmonotonic_guided => GUIDED;
}

parallel_loop_runtime! {
    GOMP_parallel_loop_runtime;
    GOMP_parallel_loop_nonmonotonic_runtime;
    GOMP_parallel_loop_maybe_nonmonotonic_runtime;
}

parallel_loop_legacy! {
    GOMP_parallel_loop_static_start => STATIC;
    GOMP_parallel_loop_dynamic_start => DYNAMIC;
    GOMP_parallel_loop_guided_start => GUIDED;
}

/// The pre-GCC-4.9 `parallel for schedule(runtime)`.
///
/// # Safety
/// `f` is a GCC-outlined region body and `data` its argument block.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GOMP_parallel_loop_runtime_start(
    f: unsafe extern "C" fn(*mut c_void),
    data: *mut c_void,
    nthreads: c_uint,
    start_: c_long,
    end: c_long,
    incr: c_long,
) {
    let body = RegionFn { f, data };
    let master = parallel_loop(
        body,
        nthreads,
        Space::long(start_, end, incr),
        Kind::Runtime,
        0,
    );
    super::parallel::push_legacy(master);
}
