//! Type-erased jobs: the unit the queues carry besides graph nodes.
//!
//! A [`JobRef`] is a pointer plus the function that runs it. Two kinds exist:
//! - [`StackJob`]: lives on the stack of a `join` caller, who never returns before
//!   the job's latch is set, so the pointer stays valid while any queue holds it.
//! - [`HeapJob`]: boxed; running it frees it. Used for `spawn` and scope spawns.

use std::any::Any;
use std::cell::UnsafeCell;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

use crate::latch::CoreLatch;

pub(crate) struct JobRef {
    ptr: *const (),
    exec: unsafe fn(*const ()),
}

// SAFETY: a JobRef is only built from jobs whose closures are `Send` (both
// constructors below require it), so running it on another thread is sound.
unsafe impl Send for JobRef {}

impl JobRef {
    /// Runs the job.
    ///
    /// # Safety
    /// Each JobRef must be executed at most once, and (for stack jobs) before its
    /// owner's frame is gone, which `join` guarantees by waiting on the latch.
    pub(crate) unsafe fn execute(self) {
        // SAFETY: forwarded to the caller's contract above.
        unsafe { (self.exec)(self.ptr) }
    }

    pub(crate) fn addr(&self) -> *const () {
        self.ptr
    }
}

/// A job's outcome: not yet run, a value, or the panic it raised.
pub(crate) enum JobResult<R> {
    None,
    Ok(R),
    Panic(Box<dyn Any + Send>),
}

pub(crate) struct StackJob<F, R> {
    func: UnsafeCell<Option<F>>,
    result: UnsafeCell<JobResult<R>>,
    pub(crate) latch: CoreLatch,
}

impl<F, R> StackJob<F, R>
where
    F: FnOnce() -> R + Send,
    R: Send,
{
    pub(crate) fn new(func: F) -> Self {
        StackJob {
            func: UnsafeCell::new(Some(func)),
            result: UnsafeCell::new(JobResult::None),
            latch: CoreLatch::new(),
        }
    }

    /// # Safety
    /// The caller must keep `self` alive and unmoved until `latch` is set or the
    /// JobRef has been taken back unexecuted.
    pub(crate) unsafe fn as_job_ref(&self) -> JobRef {
        JobRef {
            ptr: self as *const Self as *const (),
            exec: Self::execute,
        }
    }

    unsafe fn execute(this: *const ()) {
        // SAFETY: `this` came from `as_job_ref` on a live StackJob of this type (the
        // owner waits for the latch), and the job runs at most once, so we have the
        // only access to `func` and `result` until `latch.set()` publishes them.
        unsafe {
            let this = &*(this as *const Self);
            let func = (*this.func.get()).take().expect("stack job run twice");
            *this.result.get() = match catch_unwind(AssertUnwindSafe(func)) {
                Ok(r) => JobResult::Ok(r),
                Err(p) => JobResult::Panic(p),
            };
            this.latch.set();
        }
    }

    /// Runs the closure on the current thread (the job was popped back, never shared).
    pub(crate) fn run_inline(self) -> R {
        let func = self.func.into_inner().expect("stack job already taken");
        func()
    }

    /// The result after the latch was observed set; re-raises the job's panic.
    pub(crate) fn into_result(self) -> R {
        match self.result.into_inner() {
            JobResult::Ok(r) => r,
            JobResult::Panic(p) => resume_unwind(p),
            JobResult::None => unreachable!("stack job result read before it ran"),
        }
    }
}

pub(crate) struct HeapJob<F> {
    func: F,
}

impl<F> HeapJob<F>
where
    F: FnOnce() + Send,
{
    /// Boxes `func` into a JobRef that frees itself when run.
    ///
    /// # Safety
    /// The closure need not be `'static`, so the returned JobRef erases its
    /// lifetime: the caller must guarantee that the job runs (and finishes) before
    /// anything `func` borrows goes away — scopes do so by not returning (nor
    /// unwinding) before every spawned job decremented their count latch.
    pub(crate) unsafe fn into_job_ref(func: F) -> JobRef {
        let ptr = Box::into_raw(Box::new(HeapJob { func }));
        JobRef {
            ptr: ptr as *const (),
            exec: Self::execute,
        }
    }

    unsafe fn execute(this: *const ()) {
        // SAFETY: `this` came from `Box::into_raw` in `into_job_ref` and each JobRef is
        // executed once, so reconstituting the box here is its unique release.
        let job = unsafe { Box::from_raw(this as *mut Self) };
        (job.func)();
    }
}
