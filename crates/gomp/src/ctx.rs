//! The OpenMP state of the task a thread is running, behind one thread-local
//! pointer. A team member or an explicit task installs its [`Ctx`] when it starts
//! and restores the previous one when it ends; since a scheduler task runs to
//! completion on one thread and tasks run inline (by a waiter helping) nest
//! strictly, the saved pointers form a stack and are always restored in order.
//! A thread outside any region (the program's main thread, a scheduler worker
//! running database work) gets a lazily made *initial* context of its own.

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
    /// The entering thread's `CURRENT`, kept by [`Ctx::enter`] so that
    /// [`Ctx::leave`] and contexts entered inside this one need no
    /// thread-local lookup (in a shared library each costs a call to
    /// `__tls_get_addr`: 3 of them were a tenth of an included task's
    /// instructions, callgrind 2026-11-26). Null until entered.
    slot: Cell<*const Cell<*const Ctx>>,
}

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
    static CURRENT: Cell<*const Ctx> = const { Cell::new(ptr::null()) };
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

    /// [`Ctx::enter`] for a context entered inside `current`, the calling
    /// thread's current context: uses the slot `current` kept, if it was
    /// entered (the initial context never is), instead of a lookup.
    pub fn enter_inside(&self, current: &Ctx) {
        let slot = current.slot.get();
        if slot.is_null() {
            self.enter();
        } else {
            // SAFETY: `current` is this thread's current context, so it was
            // entered on this thread and `slot` is this thread's `CURRENT`,
            // which lives as long as the thread.
            let c = unsafe { &*slot };
            debug_assert_eq!(c.get(), current as *const Ctx, "not the current context");
            self.enter_at(c);
        }
    }

    fn enter_at(&self, c: &Cell<*const Ctx>) {
        self.prev.set(c.replace(self as *const Ctx));
        self.slot.set(c as *const Cell<*const Ctx>);
    }

    /// Restores the context that was current before [`Ctx::enter`].
    pub fn leave(&self) {
        // SAFETY: `slot` was set by `enter` on this thread (the caller's
        // contract: the same thread, strictly nested) to this thread's
        // `CURRENT`, which lives as long as the thread.
        let c = unsafe { &*self.slot.get() };
        debug_assert_eq!(c.get(), self as *const Ctx, "contexts left out of order");
        c.set(self.prev.get());
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
    CURRENT.with(|c| c.get().is_null())
}

/// Runs `f` with the calling thread's current context.
pub(crate) fn with_current<R>(f: impl FnOnce(&Ctx) -> R) -> R {
    let p = CURRENT.with(|c| c.get());
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
