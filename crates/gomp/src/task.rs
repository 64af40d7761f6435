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
//! earlier siblings have then all finished), at the price of their parallelism —
//! except for siblings that are still *pending*: a `detach`ed task completes when
//! its body has returned *and* its event has been fulfilled (`omp_fulfill_event`),
//! so a later sibling that depends on it is deferred until then (the `depend`
//! module).
//!
//! A detached task's record counts two parts (its body, its event) in `parts`;
//! whoever finishes the second signals the completion ([`TaskRec::finish_part`]),
//! so the body's end and the fulfilment may come in either order, on any threads.

use std::cell::UnsafeCell;
use std::mem::MaybeUninit;

use smallvec::SmallVec;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use maestro_scheduler::sync::{Condvar, Mutex};

use crate::abi::tasks::{ArgBlock, TaskFn};
use crate::ctx::{self, Ctx, Group, TaskCtxSpec, run_in_task_ctx};
use crate::depend::{DepTable, Deps};
use crate::icv::Icv;
use crate::record::TaskRef;
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

/// A deferred task.
pub(crate) struct TaskRec {
    /// Set by whoever takes the body to run it (the claim). Relaxed: the swaps
    /// on this one flag are totally ordered, so exactly one claimer wins; the
    /// body itself was published with the record through the queue mutexes the
    /// claimer got it from.
    taken: AtomicBool,
    /// Written at creation (in place, see [`defer_with`]); initialized
    /// exactly while `taken` is false: the claim's winner runs it in place
    /// and drops it ([`Claimed`]), else the record's drop does.
    body: UnsafeCell<MaybeUninit<TaskBody>>,
    team: Arc<TeamShared>,
    icv: Icv,
    in_final: bool,
    parent: Arc<WaitSet>,
    group: Option<Arc<WaitSet>>,
    /// `detach`: the task completes when both parts, its body and its event,
    /// are done (see [`TaskRec::finish_part`]).
    detached: bool,
    /// Parts not done yet (2 for a detached task; unused otherwise). AcqRel
    /// decrements: the part finished last acquires what the other part's
    /// thread wrote before its Release, and passes both on to the waiters with
    /// the completion's own Release decrements (`WaitSet::done`, the team mutex).
    parts: AtomicUsize,
    /// The task's entry among its parent's pending tasks with dependences, if
    /// it has one (see the `depend` module).
    dep: Option<DepLink>,
    /// Pending siblings this task still waits for (a blocked task only).
    /// Only read and written under its parent's `DepTable` mutex, so Relaxed.
    blockers: AtomicUsize,
}

/// A task's entry in its parent's [`DepTable`].
pub(crate) struct DepLink {
    pub table: Arc<DepTable>,
    pub id: u64,
}

// SAFETY: `body` is only touched by its creator before the record is shared and
// by the one thread that wins the claim (`taken`); everything else in the record
// is Sync, and the body is Send (it moves to the thread that runs it).
unsafe impl Sync for TaskRec {}

impl TaskRec {
    /// Whether someone took the body to run it (or it was cancelled unrun).
    pub(crate) fn is_taken(&self) -> bool {
        self.taken.load(Ordering::Relaxed)
    }

    /// Sets the number of pending siblings a blocked task waits for (under its
    /// parent's `DepTable` mutex).
    pub(crate) fn set_blockers(&self, n: usize) {
        self.blockers.store(n, Ordering::Relaxed);
    }

    /// One of the task's blockers completed (under its parent's `DepTable`
    /// mutex); true if it was the last, and the task may run now.
    pub(crate) fn unblock(&self) -> bool {
        self.blockers.fetch_sub(1, Ordering::Relaxed) == 1
    }

    /// One part of the task is done: its body, or (for a detached task) its
    /// event; `all`: every part is (a cancelled task that will never run: its
    /// event no longer matters, as in libgomp). True if the task completed
    /// with it: then its completion has been signalled to its dependent
    /// siblings, its parent and its group, and the caller owes the team one
    /// completion. A part finished after the task completed (an event
    /// fulfilled after its task was cancelled) changes nothing.
    fn finish_part(&self, all: bool) -> bool {
        if self.detached {
            // AcqRel: see `parts`.
            let before = if all {
                self.parts.swap(0, Ordering::AcqRel)
            } else {
                match self
                    .parts
                    .fetch_update(Ordering::AcqRel, Ordering::Acquire, |p| p.checked_sub(1))
                {
                    Ok(p) => p,
                    Err(_) => return false,
                }
            };
            if before == 0 || (!all && before != 1) {
                return false;
            }
        }
        if let Some(link) = &self.dep {
            link.table.complete(link.id);
        }
        self.parent.done();
        if let Some(g) = &self.group {
            g.done();
        }
        true
    }

    /// Whether the task's region or taskgroup has been cancelled (then a task
    /// that has not started never does).
    fn cancelled(&self) -> bool {
        runtime::anything_cancelled()
            && (self.team.is_cancelled() || self.group.as_ref().is_some_and(|g| g.is_cancelled()))
    }

    /// The body, for the one caller that claims it first.
    pub(crate) fn claim(&self) -> Option<Claimed<'_>> {
        if self.taken.swap(true, Ordering::Relaxed) {
            return None;
        }
        Some(Claimed { rec: self })
    }
}

impl Drop for TaskRec {
    fn drop(&mut self) {
        if !*self.taken.get_mut() {
            // SAFETY: nobody claimed the body, so it is still initialized
            // (see `body`); dropped once, here.
            unsafe { self.body.get_mut().assume_init_drop() }
        }
    }
}

/// A claimed task's body, run in place in its record (moving it out cost
/// two copies of the argument block per task, callgrind 2026-11-27); dropped
/// in place when this goes.
pub(crate) struct Claimed<'a> {
    rec: &'a TaskRec,
}

impl Claimed<'_> {
    fn body(&mut self) -> &mut TaskBody {
        // SAFETY: this caller won the claim, so no other thread reads or
        // writes the cell from now on, the body is initialized (`taken` was
        // false), and the creator's write happened before the record reached
        // us (see `taken`).
        unsafe { (*self.rec.body.get()).assume_init_mut() }
    }
}

impl Drop for Claimed<'_> {
    fn drop(&mut self) {
        // SAFETY: as in `body`; dropped once, here (the record's drop skips
        // a taken body).
        unsafe { (*self.rec.body.get()).assume_init_drop() }
    }
}

/// Runs `t` here unless someone took it already, then signals its completion to
/// its parent, its taskgroup and its team. Called by a member of `t`'s team (or a
/// task running on one), whose number the task reports.
pub(crate) fn execute(t: TaskRef) {
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
    let Some(mut claimed) = t.claim() else {
        return false;
    };
    if t.cancelled() {
        // Cancelled before it started: it never runs.
        drop(claimed);
        return t.finish_part(true);
    }
    let body = claimed.body();
    let (f, block) = (body.f, body.block.as_ptr());
    // SAFETY: used within this call only.
    let current = unsafe { ctx::current() };
    let spec = TaskCtxSpec {
        team: &t.team,
        num: current.num,
        icv: t.icv,
        group: t.group.clone(),
        red: body.red.take(),
        in_final: t.in_final,
    };
    // SAFETY: `f` is GCC's outlined task function and `block` the task's own
    // argument block (filled by `copy_into` under GCC's contract), alive in
    // the record until `claimed` drops it below.
    run_in_task_ctx(current, spec, |_| unsafe { f(block) });
    drop(claimed);
    t.finish_part(false)
}

/// `omp_fulfill_event`: the event part of detached task `t` is done.
pub(crate) fn fulfill(t: &TaskRec) {
    if !t.detached {
        runtime::fatal("omp_fulfill_event: the handle is not a detached task's event");
    }
    if t.finish_part(false) {
        t.team.task_done();
    }
}

/// Queues a blocked task whose last blocker completed, like a deferred task
/// (it has counted in its parent, group and team since its creation).
pub(crate) fn release(t: TaskRef) {
    t.parent.enqueue(&t);
    if let Some(g) = &t.group {
        g.enqueue(&t);
    }
    let team = Arc::clone(&t.team);
    team.queue_task(t);
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
fn included_spec(parent: &Ctx, final_task: bool) -> TaskCtxSpec<'_> {
    let (group, red) = parent.inherited();
    TaskCtxSpec {
        team: &parent.team,
        num: parent.num,
        icv: parent.icv.get(),
        group,
        red,
        in_final: parent.in_final || final_task,
    }
}

/// Runs an included/undeferred task now, in a task context of its own (so that its
/// `taskwait` waits for its own children only). `parent` is the calling
/// thread's current context.
#[inline]
pub(crate) fn run_now(parent: &Ctx, final_task: bool, body: impl FnOnce()) {
    run_in_task_ctx(parent, included_spec(parent, final_task), |_| body());
}

/// Runs `count` included/undeferred tasks one after the other, `body(i)` being
/// task `i`, in *one* task context (made once: a context per task costs more
/// than a fine-grained taskloop task's body). Each task starts with the
/// parent's ICVs. A `taskwait` in task `i` also waits for children left by
/// tasks before it in the batch: more waiting than the rule asks, never less
/// (those children must finish before the batch's taskloop ends anyway).
pub(crate) fn run_now_each(parent: &Ctx, final_task: bool, count: u64, mut body: impl FnMut(u64)) {
    run_in_task_ctx(parent, included_spec(parent, final_task), |ctx| {
        for i in 0..count {
            ctx.icv.set(parent.icv.get());
            body(i);
        }
    });
}

/// Defers `f(block)` as a child of `parent`, `fill` writing the task's
/// argument block in place in its record.
///
/// `fill` gets a pointer valid for writing an `ArgBlock`, which it must
/// initialize whole (and may then change through it); the block does not
/// move afterwards.
pub(crate) fn defer_with(
    parent: &Ctx,
    final_task: bool,
    f: TaskFn,
    fill: impl FnOnce(*mut ArgBlock),
) {
    let (group, red) = parent.inherited();
    let t = TaskRef::new_with(|p| {
        // SAFETY: `new_with` hands a record-sized slot valid for writes;
        // every field is written once below (the body's block by `fill`,
        // under its contract), before the record is shared.
        unsafe {
            (&raw mut (*p).taken).write(AtomicBool::new(false));
            let body = UnsafeCell::raw_get(&raw const (*p).body).cast::<TaskBody>();
            (&raw mut (*body).f).write(f);
            (&raw mut (*body).red).write(red);
            fill(&raw mut (*body).block);
            (&raw mut (*p).team).write(Arc::clone(&parent.team));
            (&raw mut (*p).icv).write(parent.icv.get());
            (&raw mut (*p).in_final).write(final_task);
            (&raw mut (*p).parent).write(parent.children().clone());
            (&raw mut (*p).group).write(group);
            (&raw mut (*p).detached).write(false);
            (&raw mut (*p).parts).write(AtomicUsize::new(1));
            (&raw mut (*p).dep).write(None);
            (&raw mut (*p).blockers).write(AtomicUsize::new(0));
        }
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

/// A task that needs more than [`defer_with`]'s plain record: a detached one, or
/// one with dependences on a pending sibling. Made without its body, so that
/// its event handle (the record's address) exists before GCC's argument block
/// is copied: the handle goes into the block too.
pub(crate) struct Tracked {
    rec: TaskRef,
    deps: Option<Deps>,
}

impl Tracked {
    /// A record for a task created in `parent`; `run_here`: it will run at once
    /// in its creator (then it is final if its creator is).
    pub fn new(
        parent: &Ctx,
        final_task: bool,
        detach: bool,
        deps: Option<Deps>,
        run_here: bool,
    ) -> Tracked {
        let (group, red) = parent.inherited();
        let dep = deps.as_ref().map(|_| {
            let table = Arc::clone(parent.children().deps());
            let id = table.new_id();
            DepLink { table, id }
        });
        let rec = TaskRef::new(TaskRec {
            taken: AtomicBool::new(false),
            body: UnsafeCell::new(MaybeUninit::new(TaskBody {
                f: noop,
                block: ArgBlock::empty(),
                red,
            })),
            team: Arc::clone(&parent.team),
            icv: parent.icv.get(),
            in_final: final_task || (run_here && parent.in_final),
            parent: parent.children().clone(),
            group,
            detached: detach,
            parts: AtomicUsize::new(if detach { 2 } else { 1 }),
            dep,
            blockers: AtomicUsize::new(0),
        });
        Tracked { rec, deps }
    }

    /// The event handle of a detached task: the record's address, holding a
    /// reference that `omp_fulfill_event` ([`Tracked::from_event`]) gives back.
    pub fn event(&self) -> usize {
        self.rec.clone().into_raw()
    }

    /// The task an event handle names.
    ///
    /// # Safety
    /// `handle` came from [`Tracked::event`] and has not been passed here before.
    pub unsafe fn from_event(handle: usize) -> TaskRef {
        // SAFETY: the caller's contract: the handle is a reference made by
        // `TaskRef::into_raw` in `event` and not yet taken back.
        unsafe { TaskRef::from_raw(handle) }
    }

    /// Gives the task its body: GCC's function and the task's own block.
    pub fn set_body(&self, f: TaskFn, block: ArgBlock) {
        // SAFETY: the record has not been shared with another thread yet (the
        // event handle only sits in the creator's variables and block, which
        // nothing reads before the task runs or the creator returns).
        // The body is initialized: nobody can have claimed it yet.
        let b = unsafe { (*self.rec.body.get()).assume_init_mut() };
        b.f = f;
        b.block = block;
    }

    /// Counts the task in its parent, group and team, enters it among its
    /// parent's pending tasks if it has dependences, and then: if a pending
    /// sibling blocks it, leaves it to be queued when the last such completes;
    /// else runs it here (`run_here`, the caller having waited for conflicting
    /// siblings) or queues it.
    pub fn submit(self, run_here: bool) {
        let t = self.rec;
        t.parent.count();
        if let Some(g) = &t.group {
            g.count();
        }
        t.team.count_task();
        if let (Some(link), Some(deps)) = (&t.dep, self.deps) {
            let blocked = (!run_here).then_some(&t);
            if link.table.register(link.id, deps, blocked) > 0 {
                return;
            }
        }
        if run_here {
            execute(t);
        } else {
            release(t);
        }
    }
}

/// A plain record with an empty body, child of a fresh initial context's task
/// (unit tests only).
#[cfg(test)]
pub(crate) fn test_record() -> TaskRef {
    let parent = Ctx::new(
        TeamShared::initial(),
        0,
        runtime::initial_icv(),
        None,
        None,
        false,
    );
    let t = Tracked::new(&parent, false, false, None, false);
    t.set_body(noop, ArgBlock::empty());
    t.rec
}

/// The placeholder body of a [`Tracked`] record until [`Tracked::set_body`].
unsafe extern "C" fn noop(_: *mut std::ffi::c_void) {}

/// Waits (running the caller's queued children) until no pending child of
/// `ctx` with dependences conflicts with `deps`: before an undeferred task with
/// dependences runs, and for `taskwait depend(…)`.
pub(crate) fn wait_for_deps(ctx: &Ctx, deps: &[crate::depend::Dep]) {
    if let Some(children) = ctx.children.get()
        && let Some(table) = children.deps.get()
    {
        table.wait_for(deps, Some(children));
    }
}

/// Whether a task with `deps` created in `ctx` would be blocked by a pending
/// sibling.
pub(crate) fn deps_blocked(ctx: &Ctx, deps: &[crate::depend::Dep]) -> bool {
    ctx.children
        .get()
        .and_then(|c| c.deps.get())
        .is_some_and(|t| t.conflicts(deps))
}

/// Whether a task created now in `ctx` is not to be created at all: its
/// region or its taskgroup has been cancelled (libgomp's rule).
pub(crate) fn creation_cancelled(ctx: &Ctx) -> bool {
    runtime::anything_cancelled()
        && (ctx.team.is_cancelled() || ctx.with_group(|g| g.is_some_and(WaitSet::is_cancelled)))
}

/// `cancel taskgroup` in `ctx`: cancels the innermost taskgroup (for one a
/// work-sharing construct opened, the one enclosing it, as libgomp does).
pub(crate) fn cancel_taskgroup(ctx: &Ctx) {
    if let Some(g) = ctx.inherited().0 {
        runtime::note_cancellation();
        g.cancel_target().cancelled.store(true, Ordering::Relaxed);
    }
}

/// Whether the innermost taskgroup of `ctx` is cancelled.
pub(crate) fn taskgroup_cancelled(ctx: &Ctx) -> bool {
    ctx.inherited().0.is_some_and(|g| g.is_cancelled())
}

/// Tasks a waiter waits for: a task's children, or a taskgroup.
pub(crate) struct WaitSet {
    /// Tasks added and not finished. Incremented under `state`'s mutex (by
    /// `add`); decremented without it (by `done`, Release, pairing with the
    /// waiter's Acquire load: what a task wrote is visible after the wait), so a
    /// finishing task takes the mutex only when it was the last.
    outstanding: AtomicUsize,
    /// Locked as a leaf (`Mutex::lock_leaf`): no critical section on it calls
    /// into the scheduler, only `cv` waits, which release it.
    state: Mutex<WaitState>,
    cv: Condvar,
    /// A taskgroup's `cancel taskgroup`. Relaxed: no data is published with
    /// it, and a task that sees it late runs, which OpenMP allows.
    cancelled: AtomicBool,
    /// For a taskgroup a work-sharing construct opened: the enclosing one,
    /// which `cancel taskgroup` inside the construct's tasks cancels.
    outer: Option<Arc<WaitSet>>,
    /// For a task's children: those with dependences that have not completed
    /// (see the `depend` module); made, by the task itself, when a detached
    /// task with dependences or a task blocked behind one is created. Here
    /// rather than in the task's context, which every included task makes
    /// and drops.
    deps: OnceLock<Arc<DepTable>>,
}

#[derive(Default)]
struct WaitState {
    /// May hold tasks already taken; pruned as it grows. The first few entries
    /// sit inline: most tasks that create children create a few, and a set is
    /// made for each such task (a vector's buffer was a second allocation).
    queued: SmallVec<[TaskRef; 4]>,
    prune_at: usize,
    waiters: usize,
    /// Set when the set's task ended ([`WaitSet::forget_queued`]): tasks
    /// released later are not queued here (nobody would take them out).
    forgotten: bool,
}

impl Default for WaitSet {
    fn default() -> Self {
        Self::new()
    }
}

impl WaitSet {
    pub fn new() -> WaitSet {
        WaitSet::with_outer(None)
    }

    fn with_outer(outer: Option<Arc<WaitSet>>) -> WaitSet {
        WaitSet {
            outstanding: AtomicUsize::new(0),
            state: Mutex::new(WaitState::default()),
            cv: Condvar::new(),
            cancelled: AtomicBool::new(false),
            outer,
            deps: OnceLock::new(),
        }
    }

    /// The table of this task's pending children with dependences, made on
    /// first use (by the task whose children these are).
    pub fn deps(&self) -> &Arc<DepTable> {
        self.deps.get_or_init(|| Arc::new(DepTable::new()))
    }

    /// The group `cancel taskgroup` marks when this one is innermost.
    fn cancel_target(&self) -> &WaitSet {
        self.outer.as_deref().unwrap_or(self)
    }

    /// Whether this taskgroup (or, for a construct's, the enclosing one) is
    /// cancelled.
    fn is_cancelled(&self) -> bool {
        self.cancel_target().cancelled.load(Ordering::Relaxed)
            || self.cancelled.load(Ordering::Relaxed)
    }

    fn add(&self, t: &TaskRef) {
        let mut s = self.state.lock_leaf();
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

    /// Counts a task without queuing it (see [`WaitSet::enqueue`]).
    fn count(&self) {
        let _s = self.state.lock_leaf();
        // Relaxed: the mutex orders it against the waiter's check (taken under it).
        self.outstanding.fetch_add(1, Ordering::Relaxed);
    }

    /// Queues a task counted by [`WaitSet::count`] for a waiter to run.
    fn enqueue(&self, t: &TaskRef) {
        let mut s = self.state.lock_leaf();
        if s.forgotten {
            return;
        }
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

    /// The last queued task, if any (maybe one already taken).
    pub fn pop_queued(&self) -> Option<TaskRef> {
        self.state.lock_leaf().queued.pop()
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
        let wake = self.state.lock_leaf().waiters > 0;
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
        let queued = {
            let mut s = self.state.lock_leaf();
            s.forgotten = true;
            std::mem::take(&mut s.queued)
        };
        drop(queued);
    }

    /// Waits until every task of the set finished, running queued ones meanwhile.
    pub fn wait(&self) {
        let mut s = self.state.lock_leaf();
        loop {
            // Acquire: pairs with the Release decrement in `done`.
            if self.outstanding.load(Ordering::Acquire) == 0 {
                s.queued.clear();
                return;
            }
            if let Some(t) = s.queued.pop() {
                drop(s);
                execute(t);
                s = self.state.lock_leaf();
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
    let outer = if workshare { ctx.inherited().0 } else { None };
    ctx.groups.borrow_mut().push(Group {
        set: Arc::new(WaitSet::with_outer(outer)),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ctx::with_current;
    use crate::depend::Dep;
    use crate::team::TeamShared;

    fn parent() -> Ctx {
        Ctx::new(
            TeamShared::initial(),
            0,
            runtime::initial_icv(),
            None,
            None,
            false,
        )
    }

    fn outstanding(ctx: &Ctx) -> usize {
        ctx.children().outstanding.load(Ordering::Acquire)
    }

    /// A detached task of `ctx` (with `deps`, if any), submitted but not run.
    fn detached(ctx: &Ctx, deps: Option<Deps>) -> TaskRef {
        let t = Tracked::new(ctx, false, true, deps, false);
        t.set_body(noop, ArgBlock::empty());
        let rec = t.rec.clone();
        t.submit(false);
        rec
    }

    /// The context the calling thread runs in now.
    fn current_ptr() -> *const Ctx {
        with_current(|c| c as *const Ctx)
    }

    #[test]
    fn a_reused_task_context_keeps_no_stale_state() {
        let ctx = parent();
        let mut first = std::ptr::null();
        run_now(&ctx, true, || {
            with_current(|c| {
                first = c as *const Ctx;
                assert!(c.in_final, "a final task");
                // Leave everything a task can leave behind.
                let mut icv = c.icv.get();
                icv.nthreads += 7;
                c.icv.set(icv);
                // SAFETY: `dst` is valid for writing a block.
                defer_with(c, false, noop, |dst| unsafe {
                    dst.write(ArgBlock::empty())
                });
                open_group(c, false);
                c.team.single_start(c);
            });
        });
        assert!(current_ptr() != first, "left the task's context");
        run_now(&ctx, false, || {
            with_current(|c| {
                assert_eq!(c as *const Ctx, first, "the context was not reused");
                assert!(!c.in_final, "the last task's final flag survived");
                assert_eq!(c.icv.get().nthreads, ctx.icv.get().nthreads);
                assert!(c.children.get().is_none(), "the last task's children");
                assert!(c.groups.borrow().is_empty(), "the last task's taskgroup");
                assert!(c.inherited().0.is_none(), "a taskgroup it never joined");
                assert_eq!(c.ws.singles.get(), 0, "the last task's singles");
            });
        });
        // The deferred child still counts in the team until it runs.
        while let Some(t) = ctx.team.pop_task() {
            execute(t);
        }
    }

    #[test]
    fn a_thread_keeps_a_bounded_number_of_spare_contexts() {
        fn nest(ctx: &Ctx, depth: usize) {
            if depth > 0 {
                run_now(ctx, false, || with_current(|c| nest(c, depth - 1)));
            }
        }
        std::thread::spawn(|| {
            let ctx = parent();
            nest(&ctx, 3);
            assert_eq!(crate::ctx::spare_contexts(), 3, "one per level");
            nest(&ctx, 2);
            assert_eq!(crate::ctx::spare_contexts(), 3, "reused, not made anew");
            nest(&ctx, crate::ctx::SPARE_CONTEXTS_MAX + 5);
            assert_eq!(crate::ctx::spare_contexts(), crate::ctx::SPARE_CONTEXTS_MAX);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_record_reused_after_free_keeps_no_stale_state() {
        let a = test_record();
        assert!(a.claim().is_some());
        assert!(a.is_taken());
        a.set_blockers(3);
        let addr = &*a as *const TaskRec;
        drop(a);
        // The freed block is the first this thread reuses.
        let b = test_record();
        assert_eq!(&*b as *const TaskRec, addr, "the block was not reused");
        assert!(!b.is_taken(), "the old claim survived");
        assert_eq!(b.blockers.load(Ordering::Relaxed), 0);
        assert!(b.claim().is_some(), "the new body is there");
    }

    #[test]
    fn a_detached_task_completes_after_body_and_event_in_either_order() {
        let ctx = parent();
        let a = detached(&ctx, None);
        let b = detached(&ctx, None);
        assert_eq!(outstanding(&ctx), 2);
        // a: body first, then the event.
        assert!(!run_body(&a));
        assert_eq!(outstanding(&ctx), 2);
        fulfill(&a);
        assert_eq!(outstanding(&ctx), 1);
        // b: the event first, then the body.
        fulfill(&b);
        assert_eq!(outstanding(&ctx), 1);
        assert!(run_body(&b));
        b.team.task_done();
        assert_eq!(outstanding(&ctx), 0);
    }

    #[test]
    fn a_cancelled_detached_task_completes_once_and_a_late_event_is_ignored() {
        let ctx = parent();
        let t = detached(&ctx, None);
        assert!(t.finish_part(true));
        assert_eq!(outstanding(&ctx), 0);
        assert!(!t.finish_part(false), "the event after the cancellation");
        assert_eq!(outstanding(&ctx), 0);
    }

    #[test]
    fn a_dependent_task_is_released_when_its_detached_sibling_completes() {
        let ctx = parent();
        let x = Dep {
            addr: 64,
            out: true,
        };
        let d = detached(&ctx, Some([x].into_iter().collect()));
        // Queued at once: nothing blocks it.
        assert!(ctx.children().pop_queued().is_some());
        let reader = [Dep {
            addr: 64,
            out: false,
        }];
        assert!(deps_blocked(&ctx, &reader));
        let r = Tracked::new(
            &ctx,
            false,
            false,
            Some(reader.into_iter().collect()),
            false,
        );
        r.set_body(noop, ArgBlock::empty());
        let rec = r.rec.clone();
        r.submit(false);
        assert_eq!(outstanding(&ctx), 2);
        assert!(
            ctx.children().pop_queued().is_none(),
            "blocked: queued nowhere"
        );
        assert!(!run_body(&d));
        assert!(
            ctx.children().pop_queued().is_none(),
            "the event is missing"
        );
        fulfill(&d);
        let released = ctx.children().pop_queued().expect("released");
        assert!(TaskRef::ptr_eq(&released, &rec));
        assert!(run_body(&released));
        released.team.task_done();
        assert_eq!(outstanding(&ctx), 0);
        assert!(!deps_blocked(&ctx, &reader));
    }
}
