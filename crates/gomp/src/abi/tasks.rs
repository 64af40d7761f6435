//! `GOMP_task` and its waits. GCC passes the task's firstprivate block as `data`
//! (`arg_size` bytes, aligned to `arg_align`) and, when some copy needs code
//! (C++ copy constructors, VLAs), a `cpyfn(dst, src)` to build the task's own copy.

use std::alloc::{Layout, alloc, dealloc};
use std::cell::UnsafeCell;
use std::ffi::{c_int, c_long, c_uint, c_void};
use std::mem::MaybeUninit;

use crate::ctx::with_current;
use crate::runtime;
use crate::task;

const FLAG_FINAL: c_uint = 1 << 1;
const FLAG_DEPEND: c_uint = 1 << 3;
const FLAG_DETACH: c_uint = 1 << 13;

pub(crate) type TaskFn = unsafe extern "C" fn(*mut c_void);
pub(super) type CopyFn = unsafe extern "C" fn(*mut c_void, *mut c_void);

/// Argument blocks of at most this many bytes (and an alignment of at most
/// [`INLINE_ALIGN`]) are kept inside the task's record instead of an allocation
/// of their own. Guessed: GCC's blocks hold the task's firstprivate scalars and
/// pointers to its shared variables, a few words for most tasks.
const INLINE_BYTES: usize = 64;
const INLINE_ALIGN: usize = 16;

/// Inline storage for a block; written through raw pointers, hence the cell.
#[repr(C, align(16))]
struct InlineBytes(UnsafeCell<[MaybeUninit<u8>; INLINE_BYTES]>);

enum Storage {
    Heap { ptr: *mut u8, layout: Layout },
    Inline(InlineBytes),
}

/// A task's private copy of its argument block: inline when small and movable
/// (see [`ArgBlock::new`]), else allocated.
pub(crate) struct ArgBlock {
    storage: Storage,
}

impl ArgBlock {
    /// A block of `size` bytes aligned to `align`. `movable`: its contents may be
    /// moved bytewise once written — true for a block filled by a plain copy of
    /// GCC's, false for one a copy function fills (it may point into itself, as
    /// GCC's copies of variable-length arrays do); only a movable block is kept
    /// inline, since the block moves with the task's record.
    fn new(size: c_long, align: c_long, movable: bool) -> ArgBlock {
        let size = usize::try_from(size).unwrap_or(0).max(1);
        let align = usize::try_from(align).unwrap_or(1).max(1);
        if movable && size <= INLINE_BYTES && align <= INLINE_ALIGN {
            return ArgBlock {
                storage: Storage::Inline(InlineBytes(UnsafeCell::new(
                    [MaybeUninit::uninit(); INLINE_BYTES],
                ))),
            };
        }
        let layout = Layout::from_size_align(size, align.next_power_of_two())
            .unwrap_or_else(|_| runtime::fatal("GOMP_task: bad argument block layout"));
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        ArgBlock {
            storage: Storage::Heap { ptr, layout },
        }
    }

    /// The block's first byte; valid while the block neither moves nor drops.
    pub(crate) fn as_ptr(&self) -> *mut c_void {
        match &self.storage {
            Storage::Heap { ptr, .. } => ptr.cast(),
            Storage::Inline(bytes) => bytes.0.get().cast(),
        }
    }
}

impl Drop for ArgBlock {
    fn drop(&mut self) {
        if let Storage::Heap { ptr, layout } = self.storage {
            // SAFETY: allocated in `new` with this layout, freed once.
            unsafe { dealloc(ptr, layout) }
        }
    }
}

// SAFETY: the block is owned by exactly one task and only touched by the thread
// running it (or, before that, by the creator filling it in).
unsafe impl Send for ArgBlock {}

/// `#pragma omp task`.
///
/// # Safety
/// `f`, `data`, `cpyfn`, `arg_size` and `arg_align` are as GCC generates them:
/// `data` is valid for `arg_size` bytes and `cpyfn`, if any, fills a block of that
/// size from it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GOMP_task(
    f: TaskFn,
    data: *mut c_void,
    cpyfn: Option<CopyFn>,
    arg_size: c_long,
    arg_align: c_long,
    if_clause: bool,
    flags: c_uint,
    _depend: *mut *mut c_void,
    _priority: c_int,
    _detach: *mut c_void,
) {
    if flags & FLAG_DETACH != 0 {
        runtime::fatal("GOMP_task: the detach clause is not supported");
    }
    let final_task = flags & FLAG_FINAL != 0;
    with_current(|ctx| {
        if !if_clause || flags & FLAG_DEPEND != 0 || task::must_run_now(ctx) {
            task::run_now(ctx, final_task, || match cpyfn {
                Some(copy) => {
                    let block = ArgBlock::new(arg_size, arg_align, false);
                    // SAFETY: GCC's copy function fills a block of `arg_size`
                    // bytes from `data`; then the body reads it.
                    unsafe {
                        copy(block.as_ptr(), data);
                        f(block.as_ptr());
                    }
                }
                // SAFETY: an undeferred task may use the creator's block in place,
                // which outlives this call.
                None => unsafe { f(data) },
            });
            return;
        }
        // SAFETY: forwarded GCC contract on `data`, `cpyfn` and `arg_size`.
        let block = unsafe { copy_block(data, cpyfn, arg_size, arg_align) };
        defer(ctx, f, block, final_task);
    });
}

/// The task's own copy of its argument block.
///
/// # Safety
/// `data` is valid for `arg_size` bytes and `cpyfn`, if any, fills a block of
/// that size from it.
pub(super) unsafe fn copy_block(
    data: *mut c_void,
    cpyfn: Option<CopyFn>,
    arg_size: c_long,
    arg_align: c_long,
) -> ArgBlock {
    let block = ArgBlock::new(arg_size, arg_align, cpyfn.is_none());
    // SAFETY: `data` is valid for `arg_size` bytes (our caller's contract) and the
    // fresh block has at least that size; they cannot overlap.
    unsafe {
        match cpyfn {
            Some(copy) => copy(block.as_ptr(), data),
            None => std::ptr::copy_nonoverlapping(
                data.cast::<u8>(),
                block.as_ptr().cast::<u8>(),
                usize::try_from(arg_size).unwrap_or(0),
            ),
        }
    }
    block
}

/// Defers `f(block)` as a child task of `ctx`.
pub(super) fn defer(ctx: &crate::ctx::Ctx, f: TaskFn, block: ArgBlock, final_task: bool) {
    task::defer(ctx, final_task, f, block);
}

/// `#pragma omp taskwait`: waits for the current task's children, running them
/// meanwhile.
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_taskwait() {
    with_current(|ctx| {
        if let Some(children) = ctx.children.get() {
            children.wait();
        }
    });
}

/// `taskwait depend(...)`: tasks with dependences run when created (see the
/// `task` module), so every task this could wait for has finished.
///
/// # Safety
/// Always safe; the argument is not read.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GOMP_taskwait_depend(_depend: *mut *mut c_void) {}

/// `#pragma omp taskyield`: a hint we do not act on.
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_taskyield() {}

#[unsafe(no_mangle)]
pub extern "C" fn GOMP_taskgroup_start() {
    with_current(task::taskgroup_start);
}

/// End of a taskgroup: waits for its tasks and their descendants.
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_taskgroup_end() {
    with_current(task::taskgroup_end);
}
