//! The OpenMP state of the task a thread is running, behind one thread-local
//! pointer. A team member or an explicit task installs its [`Ctx`] when it starts
//! and restores the previous one when it ends; since a scheduler task runs to
//! completion on one thread and tasks run inline (by a waiter helping) nest
//! strictly, the saved pointers form a stack and are always restored in order.
//! A thread outside any region (the program's main thread, a scheduler worker
//! running database work) gets a lazily made *initial* context of its own.
//!
//! Explicit tasks run in *reused* contexts ([`run_in_task_ctx`]): each thread
//! keeps the contexts of tasks that ended in a short list beside its current
//! pointer, and the next task it runs re-initializes one of them instead of
//! building and dropping a whole context (callgrind, 2026-11-26: building and
//! dropping one was ~50 of an included task's ~228 instructions). A context
//! goes back to the list holding nothing of its task: its children set,
//! taskgroups, inherited references and work-sharing cursor are cleared when
//! the task ends.

use std::cell::{Cell, OnceCell, RefCell};
use std::mem::ManuallyDrop;
use std::ops::Deref;
use std::ptr;
use std::sync::Arc;

use crate::icv::Icv;
use crate::task::WaitSet;
use crate::taskred::Registration;
use crate::team::TeamShared;
use crate::workshare::WorkShare;

/// One task's view: its team, its number in it, its ICVs, its children.
pub(crate) struct Ctx {
    /// The team. A member's context holds a reference of its own; a task's
    /// context borrows one that outlives it (see [`Ctx::borrowing`]) and never
    /// drops it (`owns_team` false).
    pub team: TeamRef,
    /// omp_get_thread_num(): the member number (for an explicit task, the number
    /// of the member that created it).
    pub num: usize,
    pub icv: Cell<Icv>,
    /// Children of the task running in this context (what `taskwait` waits for);
    /// made when the first child is deferred, so a task without children costs no
    /// allocation for it.
    pub children: OnceCell<Arc<WaitSet>>,
    /// The taskgroup this task was created in (its descendants count in it
    /// too); not one this task can end.
    inherited_group: Option<Arc<WaitSet>>,
    /// Taskgroups this task opened and has not ended, innermost last (empty, so
    /// no allocation, for the usual task that opens none). Dropped by hand
    /// (see `Drop for Ctx`): an empty vector's drop glue is an out-of-line
    /// call, 12 of an included task's ~245 instructions (callgrind,
    /// 2026-11-26).
    pub groups: ManuallyDrop<RefCell<Vec<Group>>>,
    /// The task reductions of the taskgroup this task was created in (or, for
    /// a member, of its `parallel reduction(task, …)`), which its
    /// `in_reduction` items refer to unless a group it opened registers more.
    inherited_red: Option<Arc<Registration>>,
    /// Inside a `final` task every task created is included (run at once).
    pub in_final: bool,
    pub ws: WsCursor,
    prev: Cell<*const Ctx>,
    /// The entering thread's [`Slot`], kept by [`Ctx::enter`] so that
    /// [`Ctx::leave`] and contexts entered inside this one need no
    /// thread-local lookup (in a shared library each costs a call to
    /// `__tls_get_addr`: 3 of them were a tenth of an included task's
    /// instructions, callgrind 2026-11-26). Null until entered.
    slot: Cell<*const Slot>,
}

/// A thread's OpenMP state: its current context and its spare task contexts.
pub(crate) struct Slot {
    current: Cell<*const Ctx>,
    /// Task contexts not in use, linked through their `prev` (see the module
    /// docs); each was made by `Box` and holds no reference.
    spare: Cell<*mut Ctx>,
    /// How many `spare` holds, at most [`SPARE_CONTEXTS_MAX`].
    spares: Cell<usize>,
}

/// Task contexts a thread keeps for reuse at most; more are freed. A thread
/// needs one per level of tasks nested on it (a task run inside a task run
/// inside …), so this bounds what a deep recursion of included tasks leaves
/// behind. Guessed: task-parallel recursions nest tens deep (a tree of depth
/// 10 needs 11), and a context is a few hundred bytes.
pub(crate) const SPARE_CONTEXTS_MAX: usize = 32;

/// A taskgroup a task opened: what its end waits for, and the task reductions
/// its tasks see.
pub(crate) struct Group {
    pub set: Arc<WaitSet>,
    /// Those of the enclosing scope until the group registers its own.
    pub red: Option<Arc<Registration>>,
    /// Opened by a work-sharing construct or `scope` with task reductions,
    /// closed by `GOMP_workshare_task_reduction_unregister`.
    pub workshare: bool,
}

/// A member's position in its team's sequence of work-sharing constructs.
#[derive(Default)]
pub(crate) struct WsCursor {
    /// Sequence number of the next construct this member enters.
    pub next_seq: Cell<u64>,
    /// The construct being executed (loops and sections span several calls).
    pub current: RefCell<Option<(u64, Arc<WorkShare>)>>,
    /// Chunks of a static schedule already taken by this member.
    pub trip: Cell<u64>,
    /// The chunk being executed, as iteration indices (for `ordered`).
    pub chunk: Cell<Option<(u64, u64)>>,
    /// `single` constructs encountered (see `team::single_start`).
    pub singles: Cell<u64>,
}

thread_local! {
    static CURRENT: Slot = const {
        Slot {
            current: Cell::new(ptr::null()),
            spare: Cell::new(ptr::null_mut()),
            spares: Cell::new(0),
        }
    };
    /// Frees the thread's spare contexts when it exits (see [`SpareGuard`]).
    static SPARE_GUARD: SpareGuard = const { SpareGuard };
    static INITIAL: Ctx = Ctx::new(TeamShared::initial(), 0, crate::runtime::initial_icv(), None, None, false);
}

impl Ctx {
    pub fn new(
        team: Arc<TeamShared>,
        num: usize,
        icv: Icv,
        group: Option<Arc<WaitSet>>,
        red: Option<Arc<Registration>>,
        in_final: bool,
    ) -> Ctx {
        let team = TeamRef {
            arc: ManuallyDrop::new(team),
            owned: true,
        };
        Ctx::with_team(team, num, icv, group, red, in_final)
    }

    fn with_team(
        team: TeamRef,
        num: usize,
        icv: Icv,
        group: Option<Arc<WaitSet>>,
        red: Option<Arc<Registration>>,
        in_final: bool,
    ) -> Ctx {
        Ctx {
            team,
            num,
            icv: Cell::new(icv),
            children: OnceCell::new(),
            inherited_group: group,
            groups: ManuallyDrop::new(RefCell::new(Vec::new())),
            inherited_red: red,
            in_final,
            ws: WsCursor::default(),
            prev: Cell::new(ptr::null()),
            slot: Cell::new(ptr::null()),
        }
    }

    /// A context like [`Ctx::new`]'s that uses `team`'s reference instead of
    /// taking one: an explicit task's context lives inside a call made while its
    /// record (or its creator's context) holds the team, and cloning the `Arc`
    /// per task made every task change a reference count that all members'
    /// tasks change (perf, 2026-11-25).
    ///
    /// # Safety
    /// `team` must outlive the returned context.
    pub unsafe fn borrowing(
        team: &Arc<TeamShared>,
        num: usize,
        icv: Icv,
        group: Option<Arc<WaitSet>>,
        red: Option<Arc<Registration>>,
        in_final: bool,
    ) -> Ctx {
        // SAFETY: a bitwise copy of the `Arc` that is never dropped (`owned` is
        // false), so the count stays right; the caller keeps the original, and
        // with it the team, alive for as long as the copy is used.
        let copy = unsafe { ptr::read(team) };
        let team = TeamRef {
            arc: ManuallyDrop::new(copy),
            owned: false,
        };
        Ctx::with_team(team, num, icv, group, red, in_final)
    }

    /// What a task created here inherits: the innermost open taskgroup, which
    /// it joins, and the task reductions in scope ([`Ctx::reductions`]), with
    /// one look at the groups.
    pub fn inherited(&self) -> (Option<Arc<WaitSet>>, Option<Arc<Registration>>) {
        match self.groups.borrow().last() {
            Some(g) => (Some(g.set.clone()), g.red.clone()),
            None => (self.inherited_group.clone(), self.inherited_red.clone()),
        }
    }

    /// Runs `f` on the innermost taskgroup (one this task opened, else the
    /// one it was created in) without taking a reference. `f` must not open
    /// or close a taskgroup.
    pub fn with_group<R>(&self, f: impl FnOnce(Option<&WaitSet>) -> R) -> R {
        let groups = self.groups.borrow();
        match groups.last() {
            Some(g) => f(Some(&g.set)),
            None => f(self.inherited_group.as_deref()),
        }
    }

    /// The task reductions in scope: those of the innermost taskgroup this
    /// task opened (which start as the inherited ones), else the inherited ones.
    pub fn reductions(&self) -> Option<Arc<Registration>> {
        match self.groups.borrow().last() {
            Some(g) => g.red.clone(),
            None => self.inherited_red.clone(),
        }
    }

    /// Runs `f` on the task reductions in scope without taking a reference
    /// (`in_reduction` remaps once per task; a clone would touch a count that
    /// every member's tasks touch). `f` must not open or close a taskgroup.
    pub fn with_reductions<R>(&self, f: impl FnOnce(Option<&Registration>) -> R) -> R {
        let groups = self.groups.borrow();
        match groups.last() {
            Some(g) => f(g.red.as_deref()),
            None => f(self.inherited_red.as_deref()),
        }
    }

    /// The set of this task's deferred children, made on first use.
    pub fn children(&self) -> &Arc<WaitSet> {
        self.children.get_or_init(|| Arc::new(WaitSet::new()))
    }

    /// Makes `self` the calling thread's context until [`Ctx::leave`].
    ///
    /// The caller must call `leave` on the same thread before `self` moves or is
    /// dropped, and after every `enter` made inside (strict nesting).
    pub fn enter(&self) {
        CURRENT.with(|c| self.enter_at(c));
    }

    /// The slot of the thread `self` is current on: the one kept at its
    /// `enter`, else (the initial context, never entered) a lookup.
    #[inline]
    fn slot_of_current(&self) -> &Slot {
        let slot = self.slot.get();
        if slot.is_null() {
            return initial_slot();
        }
        // SAFETY: `self` is this thread's current context, so it was entered
        // on this thread and `slot` is this thread's `CURRENT`, which lives as
        // long as the thread.
        unsafe { &*slot }
    }

    fn enter_at(&self, c: &Slot) {
        self.prev.set(c.current.replace(self as *const Ctx));
        self.slot.set(c as *const Slot);
    }

    /// Restores the context that was current before [`Ctx::enter`].
    pub fn leave(&self) {
        // SAFETY: `slot` was set by `enter` on this thread (the caller's
        // contract: the same thread, strictly nested) to this thread's
        // `CURRENT`, which lives as long as the thread.
        let c = unsafe { &*self.slot.get() };
        debug_assert_eq!(
            c.current.get(),
            self as *const Ctx,
            "contexts left out of order"
        );
        c.current.set(self.prev.get());
    }

    /// Lets go of everything a finished task's context holds, so that it can
    /// serve another task (see the module docs): its children set (whose
    /// queued records nobody can wait for any more), taskgroups it left open,
    /// its inherited taskgroup and task reductions, its work-sharing cursor.
    #[inline]
    fn clear(&mut self) {
        if self.children.get().is_some()
            || !self.groups.get_mut().is_empty()
            || self.inherited_group.is_some()
            || self.inherited_red.is_some()
            || self.ws.next_seq.get() != 0
            || self.ws.singles.get() != 0
        {
            self.clear_held();
        }
    }

    /// [`Ctx::clear`] for a context that holds something.
    #[cold]
    #[inline(never)]
    fn clear_held(&mut self) {
        if let Some(children) = self.children.take() {
            children.forget_queued();
        }
        self.groups.get_mut().clear();
        self.inherited_group = None;
        self.inherited_red = None;
        self.ws = WsCursor::default();
    }
}

/// The calling thread's slot, for a context that was never entered (the
/// initial one). Out of line so that the compiler does not hoist the lookup
/// into the common path, where the kept slot serves (callgrind, 2026-11-27:
/// it did, one `__tls_get_addr` per task).
#[cold]
#[inline(never)]
fn initial_slot<'a>() -> &'a Slot {
    // SAFETY: `CURRENT` lives as long as the thread; the caller uses the
    // borrow on this thread only, while the context it came for is current.
    CURRENT.with(|c| unsafe { &*(c as *const Slot) })
}

/// What a task context is made of (see [`run_in_task_ctx`]).
pub(crate) struct TaskCtxSpec<'a> {
    /// The task's team, which must outlive the task's run.
    pub team: &'a Arc<TeamShared>,
    pub num: usize,
    pub icv: Icv,
    pub group: Option<Arc<WaitSet>>,
    pub red: Option<Arc<Registration>>,
    pub in_final: bool,
}

/// Runs `body` as an explicit task in a context made from `spec`, entered
/// on the calling thread inside `current` (its current context): one of the
/// thread's spare contexts re-initialized, or a new one, which goes back to
/// the spares, cleared, when `body` returns. Uses `current`'s kept slot, so
/// it costs no thread-local lookup when `current` was entered.
///
/// A `body` that unwinds leaves its context entered and unused (leaked,
/// never freed under the thread's feet).
#[inline]
pub(crate) fn run_in_task_ctx<R>(
    current: &Ctx,
    spec: TaskCtxSpec<'_>,
    body: impl FnOnce(&Ctx) -> R,
) -> R {
    let slot = current.slot_of_current();
    let p = slot.spare.get();
    let p = if p.is_null() {
        new_spare(spec)
    } else {
        // SAFETY: spares are boxed contexts owned by the list, linked through
        // `prev`; only this thread uses its slot, and `p` leaves the list here.
        let c = unsafe {
            slot.spare.set((*p).prev.get().cast_mut());
            &mut *p
        };
        slot.spares.set(slot.spares.get() - 1);
        // SAFETY: the spare's team is a borrowed copy (`owned` false), never
        // dropped, so overwriting it leaks nothing; the new copy is valid for
        // this whole call, which borrows `spec.team`, and the context is
        // used only within the call (the next task replaces the copy again).
        unsafe { ptr::write(&mut *c.team.arc, ptr::read(spec.team)) };
        c.num = spec.num;
        c.icv.set(spec.icv);
        c.inherited_group = spec.group;
        c.inherited_red = spec.red;
        c.in_final = spec.in_final;
        p
    };
    // SAFETY: `p` is a live boxed context that only this call uses until it
    // goes back to the spares below.
    let ctx = unsafe { &*p };
    ctx.enter_at(slot);
    let r = body(ctx);
    ctx.leave();
    // SAFETY: as above; `ctx` is no longer used.
    let c = unsafe { &mut *p };
    c.clear();
    let n = slot.spares.get();
    if n < SPARE_CONTEXTS_MAX {
        c.prev.set(slot.spare.get());
        slot.spare.set(p);
        slot.spares.set(n + 1);
    } else {
        // SAFETY: made by `Box::into_raw` in `new_spare` and in no list.
        drop(unsafe { Box::from_raw(p) });
    }
    r
}

/// A context for [`run_in_task_ctx`] when the thread has no spare: the first
/// task this deep on this thread. Freed by the guard when the thread exits,
/// or when it comes back to a full list.
#[cold]
#[inline(never)]
fn new_spare(spec: TaskCtxSpec<'_>) -> *mut Ctx {
    let _ = SPARE_GUARD.try_with(|_| ());
    // SAFETY: as `Ctx::borrowing` asks: the copy is used only within the
    // `run_in_task_ctx` call that borrows `spec.team` (see there).
    let ctx = unsafe {
        Ctx::borrowing(
            spec.team,
            spec.num,
            spec.icv,
            spec.group,
            spec.red,
            spec.in_final,
        )
    };
    Box::into_raw(Box::new(ctx))
}

/// How many spare contexts the calling thread keeps (unit tests).
#[cfg(test)]
pub(crate) fn spare_contexts() -> usize {
    CURRENT.with(|c| c.spares.get())
}

/// Frees the calling thread's spare contexts when the thread exits. Touched
/// (and so registered) when the thread makes its first spare; `CURRENT` has
/// no destructor, so it is still there when this runs.
struct SpareGuard;

impl Drop for SpareGuard {
    fn drop(&mut self) {
        let _ = CURRENT.try_with(|slot| {
            let mut p = slot.spare.replace(ptr::null_mut());
            slot.spares.set(0);
            while !p.is_null() {
                // SAFETY: spares are boxed contexts owned by the list, which
                // was just emptied; each is freed once.
                let b = unsafe { Box::from_raw(p) };
                p = b.prev.get().cast_mut();
            }
        });
    }
}

impl Drop for Ctx {
    fn drop(&mut self) {
        // Nobody can `taskwait` on this task's children any more: break the
        // cycle between the set and the records queued in it.
        if let Some(children) = self.children.get() {
            children.forget_queued();
        }
        // A vector that never allocated holds no element and no buffer:
        // nothing to drop.
        if self.groups.get_mut().capacity() != 0 {
            // SAFETY: dropped once, here; the context is being dropped, so
            // nothing uses `groups` after.
            unsafe { ManuallyDrop::drop(&mut self.groups) }
        }
    }
}

/// A context's reference to its team: one of its own ([`Ctx::new`]) or a copy
/// of one that outlives the context ([`Ctx::borrowing`]). Derefs to the `Arc`,
/// so `ctx.team.clone()` makes a reference of one's own either way (the type is
/// not `Clone` itself, so that call cannot copy the borrowed form).
pub(crate) struct TeamRef {
    arc: ManuallyDrop<Arc<TeamShared>>,
    owned: bool,
}

impl Deref for TeamRef {
    type Target = Arc<TeamShared>;

    fn deref(&self) -> &Arc<TeamShared> {
        &self.arc
    }
}

impl Drop for TeamRef {
    fn drop(&mut self) {
        if self.owned {
            // SAFETY: this reference was given to the context (`Ctx::new`) and is
            // dropped once, here; nothing uses `arc` after.
            unsafe { ManuallyDrop::drop(&mut self.arc) }
        }
    }
}

/// Whether the calling thread runs no task of any team (its current context is
/// its initial one).
pub(crate) fn in_initial_context() -> bool {
    CURRENT.with(|c| c.current.get().is_null())
}

/// The calling thread's current context, for hot paths: unlike
/// [`with_current`] it takes no closure, whose captures the compiler spilled
/// to the stack one by one in `GOMP_task` (callgrind, 2026-11-27: 30 of an
/// included task's instructions).
///
/// # Safety
/// The caller must not use the reference after the context stops being
/// current: it must not keep it past its own return (contexts entered in the
/// meantime are left before, strict nesting).
#[inline]
pub(crate) unsafe fn current<'a>() -> &'a Ctx {
    let p = CURRENT.with(|c| c.current.get());
    if p.is_null() {
        return initial_ctx();
    }
    // SAFETY: as in `with_current`: a non-null pointer is a context entered on
    // this thread, alive and in place until it is left; the caller's contract
    // bounds the borrow by that.
    unsafe { &*p }
}

/// The calling thread's initial context (see [`current`]).
#[cold]
#[inline(never)]
fn initial_ctx<'a>() -> &'a Ctx {
    // SAFETY: the initial context lives until the thread's thread-local
    // storage is destroyed; [`current`]'s contract bounds the borrow.
    INITIAL.with(|c| unsafe { &*(c as *const Ctx) })
}

/// Runs `f` with the calling thread's current context.
pub(crate) fn with_current<R>(f: impl FnOnce(&Ctx) -> R) -> R {
    let p = CURRENT.with(|c| c.current.get());
    if p.is_null() {
        INITIAL.with(|c| f(c))
    } else {
        // SAFETY: a non-null CURRENT was installed by `Ctx::enter` of a context that
        // stays alive and in place until its `leave` restores the previous pointer;
        // `f` runs on this thread inside that window, and contexts entered within
        // `f` are left before it returns (strict nesting).
        f(unsafe { &*p })
    }
}
