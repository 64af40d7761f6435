//! Doacross loops (`for ordered(n)` with `ordered depend(sink: …)` /
//! `ordered depend(source)`), `long` and `unsigned long long` forms; the state
//! and its protocol are in the `doacross` module.
//!
//! `GOMP_loop_[ull_]doacross_{static,dynamic,guided,runtime}_start` and GCC
//! 9's generic `GOMP_loop_[ull_]doacross_start` enter a loop construct over
//! `counts[0]` iterations (GCC's normalized, 0-based first loop) and return
//! the first chunk; the chunks after it come from the ordinary `*_next`, the
//! end from `GOMP_loop_end[_nowait]`.
//!
//! `GOMP_doacross_wait(long first, ...)` and `GOMP_doacross_ull_wait` are
//! C-variadic (one argument per loop), which stable Rust cannot define. Each
//! is a naked trampoline that stores the argument registers next to each other
//! on its stack and calls [`wait_spilled`] with them and with the address of
//! the caller's stack arguments; `wait_spilled` reads as many as the current
//! loop has loops. Variadic integer arguments are passed exactly like
//! non-variadic ones under the x86-64 System V ABI (six in registers, then
//! the stack in 8-byte slots, `%al` only counting vector registers), which is
//! the one ABI the trampolines exist for: elsewhere the two symbols are not
//! exported, so a doacross program fails to link, naming them.

use std::ffi::{c_long, c_uint, c_void};

use smallvec::SmallVec;

use super::{Kind, begin_loop_with, next_chunk};
use crate::ctx::with_current;
use crate::doacross::Doacross;
use crate::icv::Sched;
use crate::loops::Space;
use crate::runtime;
use crate::workshare;

type Ull = u64;

/// Enters a doacross loop construct over `counts` (read with `count(i)`, `n`
/// of them) and, unless `istart` is null, returns the first chunk.
///
/// # Safety
/// `count(i)` reads GCC's counts array, valid for `n` entries; `istart` and
/// `iend` are null or valid for writes of a `T`; `scratch` and `reductions`
/// as for `begin_loop`.
#[allow(clippy::too_many_arguments)]
unsafe fn start<T: Copy>(
    n: c_uint,
    count: impl Fn(usize) -> u64,
    kind: Kind,
    chunk: u64,
    istart: *mut T,
    iend: *mut T,
    scratch: *mut *mut c_void,
    reductions: *mut usize,
    from: impl Fn(u64) -> T,
) -> bool {
    if n == 0 {
        runtime::fatal("GOMP_loop_doacross_start: no loops");
    }
    let counts: SmallVec<[u64; 4]> = (0..n as usize).map(count).collect();
    with_current(|ctx| {
        // SAFETY: the caller's contract on `scratch` and `reductions`.
        unsafe {
            begin_loop_with(
                ctx,
                Space::indices(counts[0]),
                kind,
                chunk,
                false,
                scratch,
                reductions,
                |ws| ws.with_doacross(Doacross::new(&counts)),
            )
        };
    });
    if istart.is_null() {
        return true;
    }
    match with_current(next_chunk) {
        Some((a, b)) => {
            // SAFETY: the caller's contract: GCC's locals.
            unsafe {
                *istart = from(a);
                *iend = from(b);
            }
            true
        }
        None => false,
    }
}

/// Runs `f` on the calling member's current doacross loop; stops the program
/// if there is none.
fn with_doacross<R>(what: &str, f: impl FnOnce(&Doacross) -> R) -> R {
    with_current(|ctx| workshare::with_current(ctx, |ws| ws.doacross().map(f)).flatten())
        .unwrap_or_else(|| runtime::fatal(&format!("{what} outside a doacross loop")))
}

const STATIC: Kind = Kind::Fixed(Sched::Static);
const DYNAMIC: Kind = Kind::Fixed(Sched::Dynamic);
const GUIDED: Kind = Kind::Fixed(Sched::Guided);

macro_rules! doacross_start {
    ($($name:ident, $ull:ident => $kind:expr;)*) => {$(
        /// Enters a doacross loop construct and returns the first chunk.
        ///
        /// # Safety
        /// `counts` is valid for `ncounts` reads; `istart` and `iend` for writes.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            ncounts: c_uint, counts: *const c_long, chunk: c_long,
            istart: *mut c_long, iend: *mut c_long,
        ) -> bool {
            // SAFETY: the caller's contract.
            unsafe {
                start(ncounts, |i| *counts.add(i) as u64, $kind, chunk as u64, istart, iend,
                      std::ptr::null_mut(), std::ptr::null_mut(), |x| x as c_long)
            }
        }

        /// The `unsigned long long` form.
        ///
        /// # Safety
        /// `counts` is valid for `ncounts` reads; `istart` and `iend` for writes.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $ull(
            ncounts: c_uint, counts: *const Ull, chunk: Ull,
            istart: *mut Ull, iend: *mut Ull,
        ) -> bool {
            // SAFETY: the caller's contract.
            unsafe {
                start(ncounts, |i| *counts.add(i), $kind, chunk, istart, iend,
                      std::ptr::null_mut(), std::ptr::null_mut(), |x| x)
            }
        }
    )*};
}

doacross_start! {
    GOMP_loop_doacross_static_start, GOMP_loop_ull_doacross_static_start => STATIC;
    GOMP_loop_doacross_dynamic_start, GOMP_loop_ull_doacross_dynamic_start => DYNAMIC;
    GOMP_loop_doacross_guided_start, GOMP_loop_ull_doacross_guided_start => GUIDED;
}

/// Enters a `schedule(runtime)` doacross loop and returns the first chunk.
///
/// # Safety
/// `counts` is valid for `ncounts` reads; `istart` and `iend` for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GOMP_loop_doacross_runtime_start(
    ncounts: c_uint,
    counts: *const c_long,
    istart: *mut c_long,
    iend: *mut c_long,
) -> bool {
    // SAFETY: the caller's contract.
    unsafe {
        start(
            ncounts,
            |i| *counts.add(i) as u64,
            Kind::Runtime,
            0,
            istart,
            iend,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            |x| x as c_long,
        )
    }
}

/// The `unsigned long long` form of [`GOMP_loop_doacross_runtime_start`].
///
/// # Safety
/// `counts` is valid for `ncounts` reads; `istart` and `iend` for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GOMP_loop_ull_doacross_runtime_start(
    ncounts: c_uint,
    counts: *const Ull,
    istart: *mut Ull,
    iend: *mut Ull,
) -> bool {
    // SAFETY: the caller's contract.
    unsafe {
        start(
            ncounts,
            |i| *counts.add(i),
            Kind::Runtime,
            0,
            istart,
            iend,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            |x| x,
        )
    }
}

/// The generic doacross start of GCC ≥ 9 (`sched` a `GFS_*` value); with a
/// null `istart` it only enters the construct.
///
/// # Safety
/// `counts` is valid for `ncounts` reads; `istart`/`iend` are null or valid
/// for writes; `mem` and `reductions` as for `GOMP_loop_start`.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn GOMP_loop_doacross_start(
    ncounts: c_uint,
    counts: *const c_long,
    sched: c_long,
    chunk: c_long,
    istart: *mut c_long,
    iend: *mut c_long,
    reductions: *mut usize,
    mem: *mut *mut c_void,
) -> bool {
    // SAFETY: the caller's contract.
    unsafe {
        start(
            ncounts,
            |i| *counts.add(i) as u64,
            Kind::from_gfs(sched),
            chunk as u64,
            istart,
            iend,
            mem,
            reductions,
            |x| x as c_long,
        )
    }
}

/// The `unsigned long long` form of [`GOMP_loop_doacross_start`].
///
/// # Safety
/// As for [`GOMP_loop_doacross_start`].
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn GOMP_loop_ull_doacross_start(
    ncounts: c_uint,
    counts: *const Ull,
    sched: c_long,
    chunk: Ull,
    istart: *mut Ull,
    iend: *mut Ull,
    reductions: *mut usize,
    mem: *mut *mut c_void,
) -> bool {
    // SAFETY: the caller's contract.
    unsafe {
        start(
            ncounts,
            |i| *counts.add(i),
            Kind::from_gfs(sched),
            chunk,
            istart,
            iend,
            mem,
            reductions,
            |x| x,
        )
    }
}

/// `ordered depend(source)`: the iteration `counts` (one entry per loop) is
/// done.
///
/// # Safety
/// `counts` is valid for as many reads as the current loop has loops.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GOMP_doacross_post(counts: *const c_long) {
    // SAFETY: the caller's contract; `c_long` and `u64` have one layout.
    unsafe { GOMP_doacross_ull_post(counts.cast()) }
}

/// The `unsigned long long` form of [`GOMP_doacross_post`].
///
/// # Safety
/// As for [`GOMP_doacross_post`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GOMP_doacross_ull_post(counts: *const Ull) {
    with_doacross("GOMP_doacross_post", |d| {
        // SAFETY: the caller's contract: `depth` entries.
        let v = unsafe { std::slice::from_raw_parts(counts, d.depth()) };
        d.post(v);
    });
}

/// Argument registers of the trampolines' ABI (x86-64 System V: `rdi`, `rsi`,
/// `rdx`, `rcx`, `r8`, `r9`).
#[cfg(target_arch = "x86_64")]
const REG_ARGS: usize = 6;

/// `ordered depend(sink: v)` behind the trampolines: `regs` holds the
/// register-passed arguments in order, `stack` points to the caller's stack
/// arguments (the rest, in order).
///
/// # Safety
/// Called only by the trampolines, with the arguments of a call GCC made with
/// one argument per loop of the current doacross loop.
#[cfg(target_arch = "x86_64")]
unsafe extern "C" fn wait_spilled(regs: *const u64, stack: *const u64) {
    with_doacross("GOMP_doacross_wait", |d| {
        let v: SmallVec<[u64; 8]> = (0..d.depth())
            .map(|i| {
                // SAFETY: the caller passed `depth` arguments: the first
                // `REG_ARGS` were stored at `regs`, the rest are at `stack`.
                unsafe {
                    if i < REG_ARGS {
                        *regs.add(i)
                    } else {
                        *stack.add(i - REG_ARGS)
                    }
                }
            })
            .collect();
        d.wait(&v);
    });
}

/// `ordered depend(sink: first, ...)`: waits until that iteration (one
/// argument per loop, `long`) has been posted. A trampoline: it pushes the six
/// argument registers (so they lie in order at `rsp`), points `rsi` at the
/// caller's stack arguments (above the saved `rbp` and the return address),
/// and calls [`wait_spilled`]; after `push rbp` and six pushes the stack is
/// 16-byte aligned again for the call.
///
/// # Safety
/// Called as GCC does: inside a doacross loop, one argument per loop.
#[cfg(target_arch = "x86_64")]
#[unsafe(no_mangle)]
#[unsafe(naked)]
pub unsafe extern "C" fn GOMP_doacross_wait(_first: c_long) {
    std::arch::naked_asm!(
        "push rbp",
        "mov rbp, rsp",
        "push r9",
        "push r8",
        "push rcx",
        "push rdx",
        "push rsi",
        "push rdi",
        "mov rdi, rsp",
        "lea rsi, [rbp + 16]",
        "call {wait}",
        "mov rsp, rbp",
        "pop rbp",
        "ret",
        wait = sym wait_spilled,
    )
}

/// The `unsigned long long` form of [`GOMP_doacross_wait`] (the same
/// trampoline: the arguments are read as 64-bit words either way).
///
/// # Safety
/// As for [`GOMP_doacross_wait`].
#[cfg(target_arch = "x86_64")]
#[unsafe(no_mangle)]
#[unsafe(naked)]
pub unsafe extern "C" fn GOMP_doacross_ull_wait(_first: Ull) {
    std::arch::naked_asm!(
        "push rbp",
        "mov rbp, rsp",
        "push r9",
        "push r8",
        "push rcx",
        "push rdx",
        "push rsi",
        "push rdi",
        "mov rdi, rsp",
        "lea rsi, [rbp + 16]",
        "call {wait}",
        "mov rsp, rbp",
        "pop rbp",
        "ret",
        wait = sym wait_spilled,
    )
}
