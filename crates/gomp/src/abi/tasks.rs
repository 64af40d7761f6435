//! `GOMP_task` and its waits, and `omp_fulfill_event`. GCC passes the task's
//! firstprivate block as `data` (`arg_size` bytes, aligned to `arg_align`) and,
//! when some copy needs code (C++ copy constructors, VLAs), a `cpyfn(dst, src)`
//! to build the task's own copy.
//!
//! `detach(event)`: GCC sets `GOMP_TASK_FLAG_DETACH` and passes the address of
//! the creator's `omp_event_handle_t` as `detach`; the runtime stores the handle
//! there and, as libgomp does, in the first word of `data` (where GCC's lowering
//! reads the task's firstprivate copy of the event from).

use std::alloc::{Layout, alloc, dealloc};
use std::cell::UnsafeCell;
use std::ffi::{c_int, c_long, c_uint, c_void};
use std::mem::MaybeUninit;

use crate::ctx::{Ctx, current, with_current};
use crate::depend;
use crate::runtime;
use crate::task::{self, Tracked};

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

/// A task's private copy of its argument block: inline when small and movable
/// (see [`ArgBlock::new`]), else allocated. A struct rather than an enum of
/// the two, so that a block can be written in place inside a task record
/// ([`copy_into`]) without building it elsewhere and moving it in.
pub(crate) struct ArgBlock {
    /// The allocated block, or null: the block is `inline`.
    heap: *mut u8,
    /// `heap`'s layout (unused when inline).
    layout: Layout,
    inline: InlineBytes,
}

impl ArgBlock {
    /// A block of `size` bytes aligned to `align`. `movable`: its contents may be
    /// moved bytewise once written — true for a block filled by a plain copy of
    /// GCC's, false for one a copy function fills (it may point into itself, as
    /// GCC's copies of variable-length arrays do); only a movable block is kept
    /// inline, since the block moves with the task's record.
    fn new(size: c_long, align: c_long, movable: bool) -> ArgBlock {
        let mut b = MaybeUninit::<ArgBlock>::uninit();
        // SAFETY: `b` is valid for writing a block.
        unsafe {
            init_storage(b.as_mut_ptr(), size, align, movable);
            b.assume_init()
        }
    }

    /// A block of no bytes, for a record whose body comes later.
    pub(crate) fn empty() -> ArgBlock {
        ArgBlock::new(0, 1, true)
    }

    /// The block's first byte; valid while the block neither moves nor drops.
    pub(crate) fn as_ptr(&self) -> *mut c_void {
        if self.heap.is_null() {
            self.inline.0.get().cast()
        } else {
            self.heap.cast()
        }
    }
}

/// Initializes the block at `dst` as [`ArgBlock::new`] would make it (its
/// bytes left unwritten), and returns its first byte.
///
/// # Safety
/// `dst` is valid for writing an `ArgBlock`; what it held is not dropped.
unsafe fn init_storage(dst: *mut ArgBlock, size: c_long, align: c_long, movable: bool) -> *mut u8 {
    let size = usize::try_from(size).unwrap_or(0).max(1);
    let align = usize::try_from(align).unwrap_or(1).max(1);
    let (heap, layout) = if movable && size <= INLINE_BYTES && align <= INLINE_ALIGN {
        (std::ptr::null_mut(), Layout::new::<u8>())
    } else {
        let layout = Layout::from_size_align(size, align.next_power_of_two())
            .unwrap_or_else(|_| runtime::fatal("GOMP_task: bad argument block layout"));
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        (ptr, layout)
    };
    // SAFETY: `dst` is valid for writes (the caller's contract); the inline
    // bytes may stay uninitialized (`MaybeUninit`).
    unsafe {
        (&raw mut (*dst).heap).write(heap);
        (&raw mut (*dst).layout).write(layout);
        if heap.is_null() {
            UnsafeCell::raw_get(&raw const (*dst).inline.0).cast()
        } else {
            heap
        }
    }
}

/// Writes at `dst` the task's own copy of GCC's block `data`, in place (see
/// [`ArgBlock`]).
///
/// # Safety
/// `dst` is valid for writing an `ArgBlock` (what it held is not dropped);
/// `data` is valid for `arg_size` bytes and `cpyfn`, if any, fills a block of
/// that size from it.
pub(crate) unsafe fn copy_into(
    dst: *mut ArgBlock,
    data: *mut c_void,
    cpyfn: Option<CopyFn>,
    arg_size: c_long,
    arg_align: c_long,
) {
    // SAFETY: the caller's contract on `dst`.
    let block = unsafe { init_storage(dst, arg_size, arg_align, cpyfn.is_none()) };
    // SAFETY: `data` is valid for `arg_size` bytes (the caller's contract) and
    // the fresh block has at least that size; they cannot overlap.
    unsafe {
        match cpyfn {
            Some(copy) => copy(block.cast(), data),
            None => std::ptr::copy_nonoverlapping(
                data.cast::<u8>(),
                block,
                usize::try_from(arg_size).unwrap_or(0),
            ),
        }
    }
}

impl Drop for ArgBlock {
    fn drop(&mut self) {
        if !self.heap.is_null() {
            // SAFETY: allocated in `init_storage` with this layout, freed once.
            unsafe { dealloc(self.heap, self.layout) }
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
/// size from it; `depend` is GCC's depend array if the flags say `depend`, and
/// `detach` points to an `omp_event_handle_t` if they say `detach`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GOMP_task(
    f: TaskFn,
    data: *mut c_void,
    cpyfn: Option<CopyFn>,
    arg_size: c_long,
    arg_align: c_long,
    if_clause: bool,
    flags: c_uint,
    depend: *mut *mut c_void,
    _priority: c_int,
    detach: *mut c_void,
) {
    // SAFETY: `ctx` is used within this call only.
    let ctx = unsafe { current() };
    // The common case first: a plain task run at once, on GCC's block in
    // place, out of line so that its frame does not burden the other paths
    // (callgrind, 2026-11-27: a closure over the arguments, as
    // `with_current` takes, cost 30 instructions per included task).
    if flags & (FLAG_DEPEND | FLAG_DETACH) == 0
        && cpyfn.is_none()
        && (!if_clause || task::must_run_now(ctx))
        && !task::creation_cancelled(ctx)
    {
        // SAFETY: forwarded GCC contract on `f` and `data`.
        return unsafe { included(ctx, f, data, flags & FLAG_FINAL != 0) };
    }
    // SAFETY: forwarded GCC contract on the arguments.
    unsafe {
        task_other(
            ctx, f, data, cpyfn, arg_size, arg_align, if_clause, flags, depend, detach,
        )
    }
}

/// A plain included task: runs `f(data)` now, in a task context of its own.
///
/// # Safety
/// `f` is GCC's outlined task function and `data` its block, which an
/// undeferred task may use in place (it outlives this call).
#[inline(never)]
unsafe fn included(ctx: &Ctx, f: TaskFn, data: *mut c_void, final_task: bool) {
    // SAFETY: the caller's contract.
    task::run_now(ctx, final_task, || unsafe { f(data) });
}

/// `GOMP_task` for every task but a plain included one without a copy
/// function: deferred ones, those with `depend`, `detach` or a copy function,
/// and those of a cancelled region or taskgroup (not created at all).
/// Inlined: a frame of its own cost each deferred task ~40 instructions
/// (callgrind, 2026-11-27).
///
/// # Safety
/// As for [`GOMP_task`].
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn task_other(
    ctx: &Ctx,
    f: TaskFn,
    data: *mut c_void,
    cpyfn: Option<CopyFn>,
    arg_size: c_long,
    arg_align: c_long,
    if_clause: bool,
    flags: c_uint,
    depend: *mut *mut c_void,
    detach: *mut c_void,
) {
    if task::creation_cancelled(ctx) {
        return;
    }
    let final_task = flags & FLAG_FINAL != 0;
    let undeferred = !if_clause || task::must_run_now(ctx);
    if flags & (FLAG_DEPEND | FLAG_DETACH) != 0 {
        let spec = TaskSpec {
            f,
            data,
            cpyfn,
            arg_size,
            arg_align,
            final_task,
        };
        // SAFETY: forwarded GCC contract on the arguments.
        if unsafe { with_depend_or_detach(ctx, &spec, flags, undeferred, depend, detach) } {
            return;
        }
        // With dependences on completed siblings only: running it now is
        // correct (see the `task` module).
    } else if !undeferred {
        // The block copied straight into the task's record (a copy built
        // here and moved in cost ~80 instructions of `memcpy` per task,
        // callgrind 2026-11-26).
        // SAFETY: `dst` is valid for writing a block (`defer_with`'s
        // contract); forwarded GCC contract on `data`, `cpyfn`, `arg_size`.
        task::defer_with(ctx, final_task, f, |dst| unsafe {
            copy_into(dst, data, cpyfn, arg_size, arg_align)
        });
        return;
    }
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
}

/// `GOMP_task` with `depend` or `detach`: waits for conflicting pending
/// siblings first if the task is `undeferred`; makes a record of its own
/// ([`tracked`]) for a detached task or one a pending sibling blocks, and
/// returns true; returns false for a task with dependences on completed
/// siblings only, which the caller runs now.
///
/// # Safety
/// As for [`GOMP_task`].
unsafe fn with_depend_or_detach(
    ctx: &Ctx,
    spec: &TaskSpec,
    flags: c_uint,
    undeferred: bool,
    depend: *mut *mut c_void,
    detach: *mut c_void,
) -> bool {
    let deps = (flags & FLAG_DEPEND != 0).then(|| {
        // SAFETY: GCC passes its depend array with the flag.
        unsafe { depend::parse(depend) }
    });
    let detached = flags & FLAG_DETACH != 0;
    if let Some(d) = &deps {
        if undeferred {
            task::wait_for_deps(ctx, d);
        } else if detached || task::deps_blocked(ctx, d) {
            // A pending sibling blocks it, or it will be pending itself.
            // SAFETY: forwarded GCC contract on the arguments.
            unsafe { tracked(ctx, spec, deps, detached.then_some(detach), false) };
            return true;
        }
    }
    if detached {
        // SAFETY: forwarded GCC contract on the arguments.
        unsafe { tracked(ctx, spec, deps, Some(detach), undeferred) };
        return true;
    }
    false
}

/// `GOMP_task`'s description of a task's body.
struct TaskSpec {
    f: TaskFn,
    data: *mut c_void,
    cpyfn: Option<CopyFn>,
    arg_size: c_long,
    arg_align: c_long,
    final_task: bool,
}

/// A task with a record of its own ([`Tracked`]): a detached one, or one with
/// dependences that may be blocked behind a pending sibling. A detached task's
/// event handle is stored in `*detach` and in the first word of `data` before
/// the block is copied. `run_here`: an undeferred task, run now (its creator
/// waited for its dependences); it still completes only when its event is
/// fulfilled, but its creator goes on when its body returns.
///
/// # Safety
/// As for [`GOMP_task`]; `detach`, if given, is valid for writing a handle.
unsafe fn tracked(
    ctx: &Ctx,
    spec: &TaskSpec,
    deps: Option<depend::Deps>,
    detach: Option<*mut c_void>,
    run_here: bool,
) {
    let t = Tracked::new(ctx, spec.final_task, detach.is_some(), deps, run_here);
    if let Some(slot) = detach {
        let handle = t.event();
        // SAFETY: `slot` is the creator's `omp_event_handle_t` (pointer-sized),
        // and GCC's block starts with the task's copy of it whenever it has
        // one (`data` non-null), as libgomp's `GOMP_task` relies on too.
        unsafe {
            slot.cast::<usize>().write(handle);
            if !spec.data.is_null() && spec.arg_size >= std::mem::size_of::<usize>() as c_long {
                spec.data.cast::<usize>().write_unaligned(handle);
            }
        }
    }
    // SAFETY: forwarded GCC contract on `data`, `cpyfn` and `arg_size`.
    let block = unsafe { copy_block(spec.data, spec.cpyfn, spec.arg_size, spec.arg_align) };
    t.set_body(spec.f, block);
    t.submit(run_here);
}

/// `omp_fulfill_event`: the event of a detached task is fulfilled; the task
/// completes if its body has returned too.
///
/// # Safety
/// `event` is a handle the runtime stored for a `detach` clause, fulfilled
/// once (OpenMP makes a second fulfilment non-conforming).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_fulfill_event(event: usize) {
    if event == 0 {
        runtime::fatal("omp_fulfill_event: a null event handle");
    }
    // SAFETY: the caller's contract: a handle from `Tracked::event`, given
    // back once.
    let t = unsafe { Tracked::from_event(event) };
    task::fulfill(&t);
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
    let mut b = MaybeUninit::<ArgBlock>::uninit();
    // SAFETY: `b` is valid for writing a block; the rest is our caller's
    // contract. `copy_into` initializes it whole.
    unsafe {
        copy_into(b.as_mut_ptr(), data, cpyfn, arg_size, arg_align);
        b.assume_init()
    }
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

/// `taskwait depend(...)`: waits for the earlier sibling tasks whose
/// dependences conflict with these. Tasks with dependences run when created
/// (see the `task` module) unless a pending sibling — a detached task whose
/// event is not fulfilled, or a task blocked behind one — held them back, so
/// only pending siblings are waited for (running the caller's children
/// meanwhile).
///
/// # Safety
/// `depend` is GCC's depend array.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GOMP_taskwait_depend(depend: *mut *mut c_void) {
    // SAFETY: the caller's contract.
    let deps = unsafe { depend::parse(depend) };
    with_current(|ctx| task::wait_for_deps(ctx, &deps));
}

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
