//! Synchronization and the non-loop work-sharing constructs: `critical` (unnamed
//! and named), `atomic` (GCC falls back to it for operations without a hardware
//! atomic, e.g. several reductions at once), `single` (with `copyprivate`),
//! `sections`, and `ordered`.

use std::ffi::{c_uint, c_void};
use std::ptr;
use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering};

use super::{Kind, begin_loop, next_chunk};
use crate::ctx::with_current;
use crate::icv::Sched;
use crate::loops::Space;
use crate::runtime;
use crate::wordlock;
use crate::workshare::{self, WorkShare, WsKind};

static CRITICAL: AtomicU32 = AtomicU32::new(0);
static ATOMIC: AtomicU32 = AtomicU32::new(0);

/// Enters the unnamed `critical` section.
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_critical_start() {
    wordlock::lock(&CRITICAL);
}

#[unsafe(no_mangle)]
pub extern "C" fn GOMP_critical_end() {
    wordlock::unlock(&CRITICAL);
}

/// The lock word of a named critical section: GCC passes the address of a
/// zero-initialized, pointer-sized, pointer-aligned common symbol
/// (`.gomp_critical_user_NAME`) that only the runtime touches; we keep the lock
/// state in its first four bytes.
///
/// # Safety
/// `pptr` is such a slot.
unsafe fn name_word<'a>(pptr: *mut *mut c_void) -> &'a AtomicU32 {
    // SAFETY: the slot is 8 bytes, 8-aligned, lives for the whole program, and is
    // only ever accessed atomically by this runtime.
    unsafe { AtomicU32::from_ptr(pptr.cast::<u32>()) }
}

/// Enters the named `critical(NAME)` section.
///
/// # Safety
/// `pptr` is GCC's `.gomp_critical_user_NAME` slot.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GOMP_critical_name_start(pptr: *mut *mut c_void) {
    // SAFETY: forwarded from our caller.
    wordlock::lock(unsafe { name_word(pptr) });
}

/// # Safety
/// `pptr` is GCC's `.gomp_critical_user_NAME` slot, locked by the caller.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GOMP_critical_name_end(pptr: *mut *mut c_void) {
    // SAFETY: forwarded from our caller.
    wordlock::unlock(unsafe { name_word(pptr) });
}

#[unsafe(no_mangle)]
pub extern "C" fn GOMP_atomic_start() {
    wordlock::lock(&ATOMIC);
}

#[unsafe(no_mangle)]
pub extern "C" fn GOMP_atomic_end() {
    wordlock::unlock(&ATOMIC);
}

/// `single`: true for the one member that executes the block.
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_single_start() -> bool {
    with_current(|ctx| ctx.team.single_start(ctx))
}

/// `single copyprivate`: null for the executing member (which then calls
/// [`GOMP_single_copy_end`]); for the others, after the executor published it, the
/// executor's data block to copy from.
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_single_copy_start() -> *mut c_void {
    with_current(|ctx| {
        let (ws, first) = workshare::begin(ctx, || {
            WorkShare::new(WsKind::Copy(AtomicPtr::new(ptr::null_mut())))
        });
        if first {
            return ptr::null_mut();
        }
        ctx.team.barrier();
        let data = match &ws.kind {
            WsKind::Copy(p) => p.load(Ordering::Acquire),
            _ => runtime::fatal("GOMP_single_copy_start: work-share mismatch"),
        };
        workshare::end(ctx);
        data
    })
}

/// The executor of `single copyprivate` publishes `data` and waits until every
/// member has it (GCC adds a barrier after the copies).
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_single_copy_end(data: *mut c_void) {
    with_current(|ctx| {
        match workshare::current(ctx).as_deref().map(|w| &w.kind) {
            Some(WsKind::Copy(p)) => p.store(data, Ordering::Release),
            _ => runtime::fatal("GOMP_single_copy_end outside single copyprivate"),
        }
        ctx.team.barrier();
        workshare::end(ctx);
    });
}

fn sections_begin(count: c_uint, mem: *mut *mut c_void, reductions: *mut usize) -> c_uint {
    with_current(|ctx| {
        let space = Space::indices(u64::from(count));
        // SAFETY: `mem` is null or GCC's valid in/out slot, `reductions` null or
        // GCC's reductions array (our callers' contract).
        unsafe {
            begin_loop(
                ctx,
                space,
                Kind::Fixed(Sched::Dynamic),
                1,
                false,
                mem,
                reductions,
            )
        };
        section_number(next_chunk(ctx))
    })
}

fn section_number(chunk: Option<(u64, u64)>) -> c_uint {
    chunk.map_or(0, |(a, _)| a as c_uint + 1)
}

/// Enters a `sections` construct of `count` sections; returns the first section
/// this member runs (1-based), 0 if none.
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_sections_start(count: c_uint) -> c_uint {
    sections_begin(count, ptr::null_mut(), ptr::null_mut())
}

/// [`GOMP_sections_start`] of GCC ≥ 9 with the scratch memory of
/// `lastprivate(conditional:)`.
///
/// # Safety
/// `mem` is null or valid for a read and a write; `reductions` is null or
/// GCC's array of the construct's task reductions (`reduction(task, …)`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GOMP_sections2_start(
    count: c_uint,
    reductions: *mut usize,
    mem: *mut *mut c_void,
) -> c_uint {
    sections_begin(count, mem, reductions)
}

/// The next section for this member (1-based), 0 when none is left.
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_sections_next() -> c_uint {
    section_number(with_current(next_chunk))
}

#[unsafe(no_mangle)]
pub extern "C" fn GOMP_sections_end() {
    with_current(|ctx| {
        workshare::end(ctx);
        ctx.team.barrier();
    });
}

#[unsafe(no_mangle)]
pub extern "C" fn GOMP_sections_end_nowait() {
    with_current(workshare::end);
}

/// [`GOMP_sections_end`] in a cancellable region: as
/// [`GOMP_loop_end_cancel`](super::loops_long::GOMP_loop_end_cancel).
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_sections_end_cancel() -> bool {
    with_current(|ctx| {
        workshare::end(ctx);
        ctx.team.barrier_cancellable()
    })
}

/// Enters an `ordered` region: waits until every earlier chunk of the loop is
/// done. The turn is handed on when this member takes its next chunk or leaves
/// the loop, so `GOMP_ordered_end` has nothing to do.
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_ordered_start() {
    with_current(|ctx| {
        workshare::with_current(ctx, |ws| {
            if let (Some(l), Some((start, _))) = (ws.as_loop(), ctx.ws.chunk.get()) {
                l.ordered_wait(start);
            }
        });
    });
}

#[unsafe(no_mangle)]
pub extern "C" fn GOMP_ordered_end() {}
