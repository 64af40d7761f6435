//! Explicit tasks (`omp task`), `taskwait` and taskgroups.
//!
//! Tasks run on the team's members, which are scheduler tasks, at task scheduling
//! points — as in libgomp, and unlike a design that hands each task to the
//! scheduler: that one would have to run a task on a worker outside the team, where
//! `omp_get_thread_num()` could not be unique among running tasks, and code that
//! indexes per-thread data by it (common in task-parallel C) would race.
//!
//! A deferred task sits in three queues: its parent's children, its taskgroup, its
//! team. Whoever takes its body first runs it: a member waiting at a `taskwait`,
//! taskgroup end, barrier or join helps instead of sleeping. A waiter only runs
//! tasks it is allowed to (OpenMP's task scheduling constraint): its own children
//! at `taskwait`, its group's tasks at the group's end, any task of the team at a
//! barrier or the end of the region.
//!
//! Included and undeferred tasks (`if(0)`, inside `final` tasks, tasks with
//! `depend` clauses, tasks outside any parallel region) run at once in the
//! creating task. Running every `depend` task at once, in creation order, satisfies
//! every dependence between siblings (dependences only order sibling tasks, and
//! earlier siblings have then all finished), at the price of their parallelism.

use std::cell::UnsafeCell;

use smallvec::SmallVec;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use maestro_scheduler::sync::{Condvar, Mutex};

use crate::abi::tasks::{ArgBlock, TaskFn};
use crate::ctx::{Ctx, Group, with_current};
use crate::icv::Icv;
use crate::runtime;
use crate::taskred::Registration;
use crate::team::TeamShared;

/// A deferred task's body: GCC's outlined task function and the task's own
/// copy of its argument block, kept apart (not boxed as a closure) so that a
/// task costs one allocation fewer.
pub(crate) struct TaskBody {
    f: TaskFn,
    block: ArgBlock,
    /// The task reductions in scope where the task was created (its
    /// `in_reduction` items map into them). Here rather than in the record so
    /// that they are released when the task ends, not when the last queue
    /// lets go of the record.
    red: Option<Arc<Registration>>,
}

impl TaskBody {
    fn run(self) {
        // SAFETY: `f` is GCC's outlined task function and `block` the task's own
        // argument block (filled by `copy_block` under GCC's contract), alive
        // until this call returns.
        unsafe { (self.f)(self.block.as_ptr()) }
    }
}

/// A deferred task.
pub(crate) struct TaskRec {
    /// Set by whoever takes the body to run it (the claim). Relaxed: the swaps
    /// on this one flag are totally ordered, so exactly one claimer wins; the
    /// body itself was published with the record through the queue mutexes the
    /// claimer got it from.
    taken: AtomicBool,
    /// Written at creation, then taken once by the claim's winner.
    body: UnsafeCell<Option<TaskBody>>,
    team: Arc<TeamShared>,
    icv: Icv,
    in_final: bool,
    parent: Arc<WaitSet>,
    group: Option<Arc<WaitSet>>,
}

// SAFETY: `body` is only touched by its creator before the record is shared and
// by the one thread that wins the claim (`taken`); everything else in the record
// is Sync, and the body is Send (it moves to the thread that runs it).
unsafe impl Sync for TaskRec {}

impl TaskRec {
    fn is_taken(&self) -> bool {
        self.taken.load(Ordering::Relaxed)
    }

    /// The body, for the one caller that claims it first.
    fn claim(&self) -> Option<TaskBody> {
        if self.taken.swap(true, Ordering::Relaxed) {
            return None;
        }
        // SAFETY: this caller won the claim, so no other thread reads or writes
        // the cell from now on, and the creator's write happened before the
        // record reached us (see `taken`).
        unsafe { (*self.body.get()).take() }
    }
}

/// Runs `t` here unless someone took it already, then signals its completion to
/// its parent, its taskgroup and its team. Called by a member of `t`'s team (or a
/// task running on one), whose number the task reports.
pub(crate) fn execute(t: Arc<TaskRec>) {
    if run_body(&t) {
        t.team.task_done();
    }
}

/// Runs `t` here unless someone took it already, then signals its completion to
/// its parent and its taskgroup, but not to its team: returns whether it ran,
/// and if so the caller owes the team one completion. Barrier and join waiters
/// count it under the team mutex they take next anyway
/// ([`TeamShared::count_task_done`](crate::team::TeamShared)), which saves a
/// lock round trip per task.
pub(crate) fn run_body(t: &TaskRec) -> bool {
    let Some(mut body) = t.claim() else {
        return false;
    };
    let num = with_current(|c| c.num);
    // SAFETY: `t`, and with it `t.team`, outlives `ctx` (dropped below).
    let ctx = unsafe {
        Ctx::borrowing(
            &t.team,
            num,
            t.icv,
            t.group.clone(),
            body.red.take(),
            t.in_final,
        )
    };
    ctx.enter();
    body.run();
    ctx.leave();
    drop(ctx);
    t.parent.done();
    if let Some(g) = &t.group {
        g.done();
    }
    true
}

/// Whether a task created in `parent` must run at once: in a `final` task,
/// outside any region, or past the team's throttle (libgomp's rule, checked before
/// any record is made, so a producer far ahead of its consumers pays no
/// bookkeeping for the tasks it runs itself).
pub(crate) fn must_run_now(parent: &Ctx) -> bool {
    parent.in_final || parent.team.level == 0 || parent.team.over_task_throttle()
}

/// The context of an included/undeferred task of `parent`: the parent's
/// team, thread, ICVs, taskgroup and task reductions, final if either is.
///
/// # Safety
/// `parent` (whose team the context borrows) must outlive the context.
#[inline]
unsafe fn included_ctx(parent: &Ctx, final_task: bool) -> Ctx {
    let (group, red) = parent.inherited();
    // SAFETY: forwarded to the caller's contract (`parent` holds the team).
    unsafe {
        Ctx::borrowing(
            &parent.team,
            parent.num,
            parent.icv.get(),
            group,
            red,
            parent.in_final || final_task,
        )
    }
}

/// Runs an included/undeferred task now, in a task context of its own (so that its
/// `taskwait` waits for its own children only).
pub(crate) fn run_now(parent: &Ctx, final_task: bool, body: impl FnOnce()) {
    // SAFETY: `parent` outlives `ctx`, a local of this call.
    let ctx = unsafe { included_ctx(parent, final_task) };
    ctx.enter();
    body();
    ctx.leave();
}

/// Runs `count` included/undeferred tasks one after the other, `body(i)` being
/// task `i`, in *one* task context (made once: a context per task costs an
/// allocation and two shared reference counts, more than a fine-grained
/// taskloop task's body). Each task starts with the parent's ICVs. A `taskwait`
/// in task `i` also waits for children left by tasks before it in the batch:
/// more waiting than the rule asks, never less (those children must finish
/// before the batch's taskloop ends anyway).
pub(crate) fn run_now_each(parent: &Ctx, final_task: bool, count: u64, mut body: impl FnMut(u64)) {
    // SAFETY: `parent` outlives `ctx`, a local of this call.
    let ctx = unsafe { included_ctx(parent, final_task) };
    ctx.enter();
    for i in 0..count {
        ctx.icv.set(parent.icv.get());
        body(i);
    }
    ctx.leave();
}

/// Defers `f(block)` as a child of `parent`.
pub(crate) fn defer(parent: &Ctx, final_task: bool, f: TaskFn, block: ArgBlock) {
    let (group, red) = parent.inherited();
    let body = TaskBody { f, block, red };
    let t = Arc::new(TaskRec {
        taken: AtomicBool::new(false),
        body: UnsafeCell::new(Some(body)),
        team: Arc::clone(&parent.team),
        icv: parent.icv.get(),
        in_final: final_task,
        parent: parent.children().clone(),
        group,
    });
    t.parent.add(&t);
    if let Some(g) = &t.group {
        g.add(&t);
    }
    if !t.team.add_task(&t) {
        // Over the throttle: run it now, as libgomp does.
        execute(t);
    }
}

/// Tasks a waiter waits for: a task's children, or a taskgroup.
pub(crate) struct WaitSet {
    /// Tasks added and not finished. Incremented under `state`'s mutex (by
    /// `add`); decremented without it (by `done`, Release, pairing with the
    /// waiter's Acquire load: what a task wrote is visible after the wait), so a
    /// finishing task takes the mutex only when it was the last.
    outstanding: AtomicUsize,
    state: Mutex<WaitState>,
    cv: Condvar,
}

#[derive(Default)]
struct WaitState {
    /// May hold tasks already taken; pruned as it grows. The first few entries
    /// sit inline: most tasks that create children create a few, and a set is
    /// made for each such task (a vector's buffer was a second allocation).
    queued: SmallVec<[Arc<TaskRec>; 4]>,
    prune_at: usize,
    waiters: usize,
}

impl Default for WaitSet {
    fn default() -> Self {
        Self::new()
    }
}

impl WaitSet {
    pub fn new() -> WaitSet {
        WaitSet {
            outstanding: AtomicUsize::new(0),
            state: Mutex::new(WaitState::default()),
            cv: Condvar::new(),
        }
    }

    fn add(&self, t: &Arc<TaskRec>) {
        let mut s = self.state.lock();
        // Relaxed: the mutex orders it against the waiter's check (taken under it).
        self.outstanding.fetch_add(1, Ordering::Relaxed);
        if s.queued.len() >= s.prune_at.max(32) {
            s.queued.retain(|t| !t.is_taken());
            s.prune_at = 2 * s.queued.len();
        }
        s.queued.push(t.clone());
        let wake = s.waiters > 0;
        drop(s);
        if wake {
            self.cv.notify_one();
        }
    }

    /// One task of the set finished. No wake-up is lost: a waiter registers
    /// (`waiters += 1`) and checks the count under the mutex before it sleeps,
    /// and the last task to finish takes that mutex after its decrement — so
    /// either the waiter's check sees zero, or the finisher sees the waiter and
    /// notifies it after it registered.
    fn done(&self) {
        // Release: pairs with the Acquire load in `wait`.
        if self.outstanding.fetch_sub(1, Ordering::Release) != 1 {
            return;
        }
        let wake = self.state.lock().waiters > 0;
        if wake {
            self.cv.notify_all();
        }
    }

    /// Lets go of the queued records: for a task's children once the task has
    /// ended, when nobody can wait for them any more. Each record holds the set
    /// (`TaskRec::parent`), so without this a task that left children it never
    /// waited for kept its set, their records and with them the team alive for
    /// good (measured: 2 KB per region of a `single` making 8 tasks). The
    /// children still run: they are in the team's queue too.
    pub fn forget_queued(&self) {
        let queued = std::mem::take(&mut self.state.lock().queued);
        drop(queued);
    }

    /// Waits until every task of the set finished, running queued ones meanwhile.
    pub fn wait(&self) {
        let mut s = self.state.lock();
        loop {
            // Acquire: pairs with the Release decrement in `done`.
            if self.outstanding.load(Ordering::Acquire) == 0 {
                s.queued.clear();
                return;
            }
            if let Some(t) = s.queued.pop() {
                drop(s);
                execute(t);
                s = self.state.lock();
                continue;
            }
            s.waiters += 1;
            self.cv.wait(&mut s);
            s.waiters -= 1;
        }
    }
}

/// `taskgroup` start: tasks created from here on (and their descendants) join it.
pub(crate) fn taskgroup_start(ctx: &Ctx) {
    open_group(ctx, false);
}

/// Opens a taskgroup that sees the task reductions in scope; `workshare`: one
/// a work-sharing construct with task reductions opens for each member.
pub(crate) fn open_group(ctx: &Ctx, workshare: bool) {
    let red = ctx.reductions();
    ctx.groups.borrow_mut().push(Group {
        set: Arc::new(WaitSet::new()),
        red,
        workshare,
    });
}

/// `taskgroup` end: waits for the group's tasks.
pub(crate) fn taskgroup_end(ctx: &Ctx) {
    close_group(ctx, false);
}

/// Ends the innermost taskgroup (which must be a work-sharing one exactly when
/// `workshare`): waits for its tasks, then drops it and with it its task
/// reductions.
pub(crate) fn close_group(ctx: &Ctx, workshare: bool) {
    let g = ctx.groups.borrow_mut().pop();
    match g {
        Some(g) if g.workshare == workshare => g.set.wait(),
        Some(_) if workshare => runtime::fatal(
            "GOMP_workshare_task_reduction_unregister: the innermost taskgroup is not the construct's",
        ),
        Some(_) => runtime::fatal("GOMP_taskgroup_end: the innermost taskgroup is a construct's"),
        None if workshare => runtime::fatal(
            "GOMP_workshare_task_reduction_unregister without a construct with task reductions",
        ),
        None => runtime::fatal("GOMP_taskgroup_end without a taskgroup"),
    }
}
