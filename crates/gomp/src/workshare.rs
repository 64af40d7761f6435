//! Work-sharing constructs shared by a team: loops, sections, `single
//! copyprivate`. Every member meets the team's constructs in the same order, so a
//! per-member sequence number names a construct: the first member to reach number
//! `k` creates it in the team's table, the others find it there, and the last one
//! to leave removes it. With `nowait` members may be several constructs apart,
//! which is why this is a table and not a single slot.

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::ffi::c_void;
use std::sync::Arc;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

use maestro_scheduler::sync::Mutex;

use crate::ctx::Ctx;
use crate::doacross::Doacross;
use crate::loops::LoopWs;
use crate::taskred::Chunks;

/// What a construct shares.
// The loop variant is large (its cursor has a cache line of its own); boxing
// it would add an allocation per loop to the one its `Arc<WorkShare>` already
// costs.
#[allow(clippy::large_enum_variant)]
pub(crate) enum WsKind {
    /// A loop (sections are a loop over the section numbers).
    Loop(LoopWs),
    /// `single copyprivate`: the executing member publishes its data block.
    Copy(AtomicPtr<c_void>),
    /// `scope` with task reductions: only shares their private copies.
    Scope,
}

pub(crate) struct WorkShare {
    pub kind: WsKind,
    left: AtomicUsize,
    /// Zeroed memory GCC asks for through `GOMP_loop_start`'s `mem` argument
    /// (scan reductions, `lastprivate(conditional:)`), shared by the team.
    scratch: Option<Scratch>,
    /// The private copies of the construct's task reductions
    /// (`reduction(task, …)`), one per reductions array; empty without.
    task_red: Vec<Arc<Chunks>>,
    /// A doacross loop's posted iterations (`for ordered(n)`).
    doacross: Option<Doacross>,
}

impl WorkShare {
    pub fn new(kind: WsKind) -> WorkShare {
        WorkShare {
            kind,
            left: AtomicUsize::new(0),
            scratch: None,
            task_red: Vec::new(),
            doacross: None,
        }
    }

    pub fn with_doacross(mut self, d: Doacross) -> WorkShare {
        self.doacross = Some(d);
        self
    }

    pub fn doacross(&self) -> Option<&Doacross> {
        self.doacross.as_ref()
    }

    pub fn with_task_reductions(mut self, chunks: Vec<Arc<Chunks>>) -> WorkShare {
        self.task_red = chunks;
        self
    }

    pub fn task_reductions(&self) -> &[Arc<Chunks>] {
        &self.task_red
    }

    pub fn with_scratch(mut self, bytes: usize) -> WorkShare {
        self.scratch = Some(Scratch::zeroed(bytes));
        self
    }

    pub fn scratch_ptr(&self) -> *mut c_void {
        self.scratch
            .as_ref()
            .map_or(std::ptr::null_mut(), |s| s.ptr.cast())
    }

    pub fn as_loop(&self) -> Option<&LoopWs> {
        match &self.kind {
            WsKind::Loop(l) => Some(l),
            WsKind::Copy(_) | WsKind::Scope => None,
        }
    }
}

/// A zeroed, 16-byte aligned block owned by a work share.
struct Scratch {
    ptr: *mut u8,
    layout: Layout,
}

impl Scratch {
    fn zeroed(bytes: usize) -> Scratch {
        let layout = Layout::from_size_align(bytes.max(1), 16)
            .unwrap_or_else(|_| crate::runtime::fatal("work-share scratch size overflows"));
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        Scratch { ptr, layout }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // SAFETY: allocated in `zeroed` with this layout, freed once.
        unsafe { dealloc(self.ptr, self.layout) }
    }
}

// SAFETY: the block is plain memory handed to C code of one team, which
// synchronizes its own accesses (that is GCC's contract for this memory).
unsafe impl Send for Scratch {}
// SAFETY: as above.
unsafe impl Sync for Scratch {}

/// The team's live constructs by sequence number.
pub(crate) struct WsTable {
    n: usize,
    entries: Mutex<Vec<(u64, Arc<WorkShare>)>>,
}

impl WsTable {
    pub fn new(n: usize) -> WsTable {
        WsTable {
            n,
            entries: Mutex::new(Vec::new()),
        }
    }

    /// Registers the construct of a combined `parallel loop`/`sections` as number 0.
    pub fn insert_first(&self, ws: Arc<WorkShare>) {
        if self.n > 1 {
            self.entries.lock().push((0, ws));
        }
    }

    fn find_or_create(&self, seq: u64, init: impl FnOnce() -> WorkShare) -> (Arc<WorkShare>, bool) {
        let mut e = self.entries.lock();
        if let Some((_, ws)) = e.iter().find(|(s, _)| *s == seq) {
            return (ws.clone(), false);
        }
        let ws = Arc::new(init());
        e.push((seq, ws.clone()));
        (ws, true)
    }

    fn leave(&self, seq: u64, ws: &WorkShare) {
        if ws.left.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            self.entries.lock().retain(|(s, _)| *s != seq);
        }
    }
}

/// Enters the calling member's next construct; true if this member created it
/// (the first to arrive, which `single copyprivate` uses as the executor).
pub(crate) fn begin(ctx: &Ctx, init: impl FnOnce() -> WorkShare) -> (Arc<WorkShare>, bool) {
    let seq = ctx.ws.next_seq.get();
    ctx.ws.next_seq.set(seq + 1);
    let (ws, first) = if ctx.team.n == 1 {
        (Arc::new(init()), true)
    } else {
        ctx.team.ws.find_or_create(seq, init)
    };
    *ctx.ws.current.borrow_mut() = Some((seq, ws.clone()));
    ctx.ws.trip.set(0);
    ctx.ws.chunk.set(None);
    (ws, first)
}

/// Meets the calling member's next construct and leaves it at once: for a
/// construct that only shares what its first member made (`scope` with task
/// reductions), leaving the member's current construct alone. True if this
/// member made it.
pub(crate) fn meet(ctx: &Ctx, init: impl FnOnce() -> WorkShare) -> (Arc<WorkShare>, bool) {
    let seq = ctx.ws.next_seq.get();
    ctx.ws.next_seq.set(seq + 1);
    if ctx.team.n == 1 {
        return (Arc::new(init()), true);
    }
    let (ws, first) = ctx.team.ws.find_or_create(seq, init);
    ctx.team.ws.leave(seq, &ws);
    (ws, first)
}

/// The construct the member is in, if any.
pub(crate) fn current(ctx: &Ctx) -> Option<Arc<WorkShare>> {
    ctx.ws.current.borrow().as_ref().map(|(_, ws)| ws.clone())
}

/// Runs `f` on the member's current construct, if any, without taking a
/// reference: every member of a team holds the same `Arc`, so a clone per
/// chunk (`GOMP_loop_*_next`) or per ordered iteration is a contended atomic
/// on a line all members share. `f` must not enter or leave a construct of
/// this member (it runs under the member's borrow of its cursor).
pub(crate) fn with_current<R>(ctx: &Ctx, f: impl FnOnce(&WorkShare) -> R) -> Option<R> {
    ctx.ws.current.borrow().as_ref().map(|(_, ws)| f(ws))
}

/// Leaves the current construct (without the barrier `end` may add): hands the
/// `ordered` turn on, and frees the construct once every member left.
pub(crate) fn end(ctx: &Ctx) {
    let Some((seq, ws)) = ctx.ws.current.borrow_mut().take() else {
        return;
    };
    if let (Some(l), Some(chunk)) = (ws.as_loop(), ctx.ws.chunk.take()) {
        l.release_ordered(chunk);
    }
    if ctx.team.n > 1 {
        ctx.team.ws.leave(seq, &ws);
    }
}
