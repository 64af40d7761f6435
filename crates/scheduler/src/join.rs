//! Fork-join on the scheduler: `join` (two closures, the second offered for stealing)
//! and `scope` (any number of borrowed spawns). Both are the work-first half of the
//! paper's dispatch (§2, §4): the creator runs one part itself, the rest is offered
//! to other workers; a waiter helps with started work, then waits as
//! *waiting-for-graph* so another worker takes its core.

use std::any::Any;
use std::marker::PhantomData;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use parking_lot::Mutex;

use crate::abort::AbortOnDrop;
use crate::context::{current_context, with_context};
use crate::job::{HeapJob, StackJob};
use crate::latch::CountLatch;
use crate::queues::{Popped, Task};
use crate::shared::Shared;
use crate::stats::Counters;
use crate::worker::WorkerThread;

/// Runs `a` and `b`, potentially in parallel, and returns both results. On a worker
/// thread `b` is offered to other workers while this one runs `a`; elsewhere both
/// run sequentially on the caller (use [`crate::Scheduler::join`] from a client
/// thread). A panic in either is re-raised after both finished.
pub fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    match WorkerThread::current() {
        Some(w) => join_on_worker(w, a, b),
        None => (a(), b()),
    }
}

fn join_on_worker<A, B, RA, RB>(w: &WorkerThread, a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    let ctx = current_context();
    let class = crate::class::current_class();
    let job_b = StackJob::new(move || {
        crate::class::with_class(class, || match ctx {
            Some(c) => with_context(Some(c), b),
            None => b(),
        })
    });
    // SAFETY: job_b stays on this frame, unmoved, until either we pop its JobRef back
    // (then nobody else has it) or its latch is set (then the thief is done with it):
    // every path below ends in one of those two before job_b is dropped, including
    // when `a` panics (we catch it first).
    let job_ref = unsafe { job_b.as_job_ref() };
    let addr = job_ref.addr();
    // From the push until we pop the job back or see its latch set, a thief may
    // hold a pointer into this frame: unwinding out of here (a panic in
    // `notify_work`, in the waiting below, in the accounting) would free job_b
    // under it. `a`'s panic is caught; anything else aborts.
    let published = AbortOnDrop::arm("join while its second half may run elsewhere");
    w.deque.push(job_ref);
    w.shared.slots[w.slot]
        .created
        .fetch_add(1, Ordering::Relaxed);
    w.shared.notify_work(1);

    let ra = catch_unwind(AssertUnwindSafe(a));

    loop {
        if job_b.latch.probe() {
            break;
        }
        match w.deque.pop() {
            Some(j) if j.addr() == addr => {
                // Not stolen: nobody else has it. Run it here (unless `a`
                // panicked: then just drop it).
                published.disarm();
                return match ra {
                    Ok(ra) => (ra, job_b.run_inline()),
                    Err(p) => resume_unwind(p),
                };
            }
            Some(other) => {
                // A job pushed below ours by an enclosing join; run it now.
                w.execute(Task::Job(other), Popped::Own);
            }
            None => {
                w.wait_until(
                    || job_b.latch.probe(),
                    || {
                        job_b.latch.wait(None);
                    },
                );
                break;
            }
        }
    }
    // The latch is set: the thief is done with job_b.
    published.disarm();
    match ra {
        Ok(ra) => (ra, job_b.into_result()),
        Err(p) => resume_unwind(p),
    }
}

/// A scope for spawning borrowed tasks; see [`crate::Scheduler::scope`].
pub struct Scope<'scope> {
    shared: Arc<Shared>,
    pending: CountLatch,
    panic: Mutex<Option<Box<dyn Any + Send>>>,
    priority: usize,
    _marker: PhantomData<&'scope mut &'scope ()>,
}

impl<'scope> Scope<'scope> {
    pub(crate) fn new(shared: Arc<Shared>, priority: usize) -> Self {
        Scope {
            shared,
            pending: CountLatch::with_count(1),
            panic: Mutex::new(None),
            priority,
            _marker: PhantomData,
        }
    }

    /// Spawns a task that may borrow anything living longer than the scope. The
    /// scope does not return before every spawned task finished.
    pub fn spawn<F>(&self, f: F)
    where
        F: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        self.pending.increment();
        let ctx = current_context();
        let class = crate::class::current_class();
        let scope_addr = self as *const Scope<'scope> as usize;
        let run = move || {
            // SAFETY: `scope_addr` points to the Scope that spawned us; `run_scope`
            // keeps it alive until `pending` reaches zero, which happens only after
            // the decrement at the end of this closure.
            let scope = unsafe { &*(scope_addr as *const Scope<'scope>) };
            let r = catch_unwind(AssertUnwindSafe(|| {
                crate::class::with_class(class, || with_context(ctx, || f(scope)))
            }));
            if let Err(p) = r {
                // A cancelled statement's tasks unwind on purpose.
                if !p.is::<crate::cancel::Cancelled>() {
                    Counters::bump(&scope.shared.stats.task_panics);
                }
                scope.panic.lock().get_or_insert(p);
            }
            scope.pending.decrement();
        };
        // SAFETY: the job borrows `'scope` data and the Scope itself; `run_scope`
        // does not return — nor unwind: an abort guard covers its wait — before
        // `pending` reached zero, which happens only after this job's last access
        // to either (the decrement at the end of the closure).
        let job = unsafe { HeapJob::into_job_ref(run) };
        Counters::bump(&self.shared.stats.jobs_created);
        match WorkerThread::current() {
            Some(w) if w.belongs_to(&self.shared) => {
                w.deque.push(job);
                self.shared.notify_work(1);
            }
            _ => self.shared.push_root(self.priority, Task::Job(job)),
        }
    }
}

/// Runs a scope body on the current worker and waits for all spawns.
pub(crate) fn run_scope<'scope, R>(
    shared: Arc<Shared>,
    priority: usize,
    body: impl FnOnce(&Scope<'scope>) -> R,
) -> R {
    let scope = Scope::new(shared, priority);
    // Spawned jobs point to `scope` and to data the body borrowed: from the first
    // spawn until `pending` is observed at zero this frame must not unwind. The
    // body's panic is caught; a panic while waiting (a bug here) aborts.
    let spawned = AbortOnDrop::arm("a scope while its spawned jobs may run");
    let r = catch_unwind(AssertUnwindSafe(|| body(&scope)));
    scope.pending.decrement();
    match WorkerThread::current() {
        Some(w) => w.wait_until(
            || scope.pending.probe(),
            || {
                scope.pending.wait(None);
            },
        ),
        None => {
            scope.pending.wait(None);
        }
    }
    // The latch is set: every spawned job has finished touching `scope`.
    debug_assert!(scope.pending.core().probe());
    spawned.disarm();
    if let Some(p) = scope.panic.lock().take() {
        resume_unwind(p);
    }
    match r {
        Ok(r) => r,
        Err(p) => resume_unwind(p),
    }
}
