//! The native Rust API for UDFs: an OpenMP-style parallel region on the same
//! machinery as the C ABI (the same fork, barrier, work-sharing and join), so a
//! Rust UDF and a C UDF compete for the scheduler under the same rules.
//!
//! ```
//! use std::sync::atomic::{AtomicUsize, Ordering};
//! use maestro_gomp::{Schedule, parallel_region};
//!
//! let sum = AtomicUsize::new(0);
//! parallel_region(4, |team| {
//!     team.for_each(0..1000, Schedule::Dynamic(7), |i| {
//!         sum.fetch_add(i, Ordering::Relaxed);
//!     });
//! });
//! assert_eq!(sum.into_inner(), 999 * 1000 / 2);
//! ```
//!
//! A panic in a member is re-raised by `parallel_region` once every member has
//! finished; members waiting at a barrier of that team panic too (instead of
//! waiting for a member that will never arrive).

use std::any::Any;
use std::ffi::c_void;
use std::marker::PhantomData;
use std::ops::Range;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

use crate::ctx::{Ctx, with_current};
use crate::fork;
use crate::icv::Sched;
use crate::loops::{LoopWs, Space};
use crate::team::RegionFn;
use crate::workshare::{self, WorkShare, WsKind};

/// How [`Team::for_each`] deals out iterations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// One contiguous block per member.
    Static,
    /// Chunks of the given size dealt round-robin.
    StaticChunked(usize),
    /// Chunks of the given size taken on demand.
    Dynamic(usize),
    /// Shrinking chunks (remaining / members), at least the given size.
    Guided(usize),
}

impl Schedule {
    fn parts(self) -> (Sched, u64) {
        match self {
            Schedule::Static => (Sched::Static, 0),
            Schedule::StaticChunked(c) => (Sched::Static, c.max(1) as u64),
            Schedule::Dynamic(c) => (Sched::Dynamic, c.max(1) as u64),
            Schedule::Guided(c) => (Sched::Guided, c.max(1) as u64),
        }
    }
}

/// A member's view of its team inside [`parallel_region`].
pub struct Team<'a> {
    ctx: &'a Ctx,
    /// Bound to the member's thread, like the context it wraps.
    _not_send: PhantomData<*const ()>,
}

impl Team<'_> {
    /// This member's number, `0..num_threads()` (0 is the caller of the region).
    pub fn thread_num(&self) -> usize {
        self.ctx.num
    }

    pub fn num_threads(&self) -> usize {
        self.ctx.team.n
    }

    /// Nesting level of the region (1 for an outermost region).
    pub fn level(&self) -> usize {
        self.ctx.team.level
    }

    /// Waits until every member reached this barrier. Panics if another member
    /// panicked (it will never arrive).
    pub fn barrier(&self) {
        if !self.ctx.team.barrier() {
            panic!("another member of the parallel region panicked");
        }
    }

    /// Runs `body(i)` for every `i` in `range`, the iterations dealt to the
    /// members by `schedule`; every member must call it. Ends with a barrier.
    pub fn for_each(&self, range: Range<usize>, schedule: Schedule, body: impl Fn(usize)) {
        self.for_each_nowait(range, schedule, body);
        self.barrier();
    }

    /// [`for_each`](Self::for_each) without the closing barrier.
    pub fn for_each_nowait(&self, range: Range<usize>, schedule: Schedule, body: impl Fn(usize)) {
        let ctx = self.ctx;
        let (sched, chunk) = schedule.parts();
        let count = range.len() as u64;
        let (ws, _) = workshare::begin(ctx, || {
            let l = LoopWs::new(Space::indices(count), sched, chunk, ctx.team.n, false);
            WorkShare::new(WsKind::Loop(l))
        });
        let l = ws.as_loop().expect("a loop construct");
        while let Some((a, b)) = l.next_chunk(ctx) {
            for i in a..b {
                body(range.start + i as usize);
            }
        }
        workshare::end(ctx);
    }

    /// Runs `f` on exactly one member (the first to arrive); all members then meet
    /// at a barrier. Returns whether this member ran `f`.
    pub fn single(&self, f: impl FnOnce()) -> bool {
        let me = self.ctx.team.single_start(self.ctx);
        if me {
            f();
        }
        self.barrier();
        me
    }
}

/// What the members' trampoline needs.
struct Payload<'f, F> {
    f: &'f F,
    panic: parking_lot::Mutex<Option<Box<dyn Any + Send>>>,
}

/// Runs `f` as the calling member; records a panic and poisons the team.
///
/// # Safety
/// `data` points to a live `Payload<F>`.
unsafe extern "C" fn trampoline<F: Fn(&Team<'_>) + Sync>(data: *mut c_void) {
    // SAFETY: `parallel_region` passes its payload, which outlives the join.
    let payload = unsafe { &*data.cast::<Payload<'_, F>>() };
    with_current(|ctx| {
        let team = Team {
            ctx,
            _not_send: PhantomData,
        };
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| (payload.f)(&team))) {
            payload.panic.lock().get_or_insert(p);
            ctx.team.poison();
        }
    });
}

/// Runs `f` on a team of `num_threads` members (0 = the default: `nthreads-var`,
/// or the concurrency hint in hint mode); the caller is member 0, the others are
/// scheduler tasks at the OpenMP priority. Returns when every member finished.
/// Inside another region the team is nested (or serialized to one member when
/// nesting is disabled, OpenMP's default).
pub fn parallel_region<F>(num_threads: usize, f: F)
where
    F: Fn(&Team<'_>) + Sync,
{
    let payload = Payload {
        f: &f,
        panic: parking_lot::Mutex::new(None),
    };
    let body = RegionFn {
        f: trampoline::<F>,
        data: (&payload as *const Payload<'_, F>).cast_mut().cast(),
    };
    // The payload lives on this frame until `run_region` returns, after the join.
    fork::run_region_on_scheduler(body, num_threads);
    if let Some(p) = payload.panic.into_inner() {
        resume_unwind(p);
    }
}
