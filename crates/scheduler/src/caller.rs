//! Callers run, counted: a thread outside the pool that submits a job and waits
//! for it (`install`, and through it `join`, `scope`, `parallel_for` called from
//! a client thread) runs the job itself when the scheduler admits it, instead of
//! handing it to a parked worker and sleeping until that worker is done.
//!
//! Admission (`Shared::admit_caller`, protocol in PROTOCOL.md, "Callers run,
//! counted") gives one of three outcomes, [`Admission`]:
//! - `Counted`: a context is free. The caller becomes a *guest worker*: it is
//!   added to the worker counts as active (one CAS that only succeeds below the
//!   contexts), takes a worker slot whose deque others can steal from (so a
//!   `join` or `scope` inside the job runs in parallel), and runs the job with
//!   the full worker machinery — a lock wait makes it *blocked* and another
//!   worker is activated, as for any worker. When the job returns it leaves the
//!   counts and, if work is queued, activates a worker for the context it frees.
//! - `Extra`: no context is free, but the caller is urgent and urgent work holds
//!   fewer than its share of the contexts (or nothing else waits). It runs the
//!   job on its own thread without a slot, like a thread-per-terminal receiver:
//!   the OS shares the cores between it and the workers for the job's few
//!   microseconds. It is tracked in `urgent_running` so urgent work stays within
//!   its share while other work waits.
//! - `WaitTurn`: urgent, but its share (the urgent share, or its workload
//!   class's share) is full while other work waits: the caller sleeps at the
//!   share's turn gate (`turn.rs`) until a piece of the work filling it ends,
//!   then asks again (bounded by `urgent_turn_wait_max`, then `HandOff`).
//! - `HandOff`: the caller's priority is below queued work, or it is not
//!   urgent and no context is free, or every slot is taken: the job is
//!   queued as a root and the caller sleeps until a worker ran it (as before).

use std::cell::{Cell, RefCell};
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use crossbeam_utils::sync::Parker;

use crate::class::ClassId;
use crate::counts::WorkerState;
use crate::queues::Pool;
use crate::shared::Shared;
use crate::stats::Counters;
use crate::turn::Turn;
use crate::worker::WorkerThread;

/// Outcome of asking to run a job on the calling thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Admission {
    /// A context was free: run as a guest worker in this slot, counted active.
    Counted { slot: usize },
    /// Urgent and within the urgent share, but no context is free: run on this
    /// thread, uncounted (tracked in `urgent_running`).
    Extra,
    /// Queue the job for a worker and wait.
    HandOff,
    /// Urgent, but urgent work (in a class: the caller's class) holds its
    /// share while other work waits: wait for a piece of that work to end
    /// ([`Shared::wait_turn`]), then ask
    /// again — instead of handing the job to a worker, which costs the caller
    /// a sleep too and the worker a cold transaction.
    WaitTurn,
}

/// Whether a job of `priority` is urgent (above the default priority).
pub(crate) fn is_urgent(priority: usize) -> bool {
    priority > crate::DEFAULT_PRIORITY
}

impl Shared {
    /// Decides how a caller outside the pool runs a job of `priority` in
    /// workload class `class`.
    pub(crate) fn admit_caller(&self, class: ClassId, priority: usize) -> Admission {
        let urgent = is_urgent(priority);
        let classed = self.classes.defined() > 0 && class != ClassId::DEFAULT;
        // Never overtake queued work of a higher priority, nor (urgent callers)
        // queued urgent work of the same class: it was there first. A caller
        // of another class does not overtake its own class's queued roots.
        let floor = if urgent {
            crate::DEFAULT_PRIORITY
        } else {
            priority
        };
        let queued_before = if classed {
            self.classes.exists(class) && self.class_has_roots(class)
        } else {
            self.roots.any_above(floor)
        };
        if queued_before {
            Counters::bump(&self.stats.callers_handed_off);
            return Admission::HandOff;
        }
        let cfg = &self.config;
        // Searching workers hold a context only until they see the level above
        // the contexts; then they park as surplus, so the caller may take it.
        let yielding = self.searching.load(Ordering::Relaxed);
        if self
            .counts
            .try_add_active_below(
                cfg.contexts + yielding,
                cfg.count_sys_inactive,
                cfg.workers_max,
            )
            .is_some()
        {
            // A slot for the guest's deque; none free means the worker cap is
            // reached by threads that are leaving: undo and hand off.
            match self.take_slot() {
                Some(slot) => {
                    self.guests_now.fetch_add(1, Ordering::Relaxed);
                    Counters::bump(&self.stats.callers_counted);
                    return Admission::Counted { slot };
                }
                None => {
                    self.leave_counts();
                    Counters::bump(&self.stats.callers_handed_off);
                    return Admission::HandOff;
                }
            }
        }
        let within_share = if classed {
            self.class_below_share(class)
        } else {
            self.urgent_below_share()
        };
        if urgent && (within_share || !self.other_work_waits()) {
            Counters::bump(&self.stats.callers_extra);
            return Admission::Extra;
        }
        if urgent
            && (!classed || self.classes.exists(class))
            && !self.config.urgent_turn_wait_max.is_zero()
            && crate::sync::locks_held() == 0
        {
            // A caller holding a scheduler-aware lock hands off instead: the
            // urgent work it would wait for might wait for that lock.
            return Admission::WaitTurn;
        }
        Counters::bump(&self.stats.callers_handed_off);
        Admission::HandOff
    }

    /// Sleeps until the caller's share has room — the urgent share in the
    /// default class, `class`'s share among the demanding classes otherwise —
    /// or nothing else waits, for at most `urgent_turn_wait_max`.
    ///
    /// The wake-ups (no lost one: `turn.rs`, loom model `tests/loom_turn.rs`)
    /// come from each ending of the work that fills the share: a piece of
    /// urgent work (`UrgentGuard::drop`), or anything counted for the class
    /// leaving it (`Classes::move_count`). While the share is full some of that
    /// work runs and will end; each ending wakes one waiter, and one that goes
    /// runs in the share in turn and wakes the next when it ends. A class's
    /// share also grows when another class stops demanding; the ending that
    /// leaves a class with nothing running wakes one waiter of every class.
    /// The bound matters if that work cannot end (it waits for something this
    /// caller holds), if a woken waiter does not go on to run in the share
    /// itself (it hands off when roots of its kind were queued before it), or
    /// if the share has room because queued work drained (no ending signals
    /// that).
    pub(crate) fn wait_turn(&self, class: ClassId) -> Turn {
        Counters::bump(&self.stats.callers_waited_turn);
        let deadline = Instant::now() + self.config.urgent_turn_wait_max;
        let classed = self.classes.defined() > 0 && class != ClassId::DEFAULT;
        if classed {
            self.classes.turn(class).wait(deadline, || {
                self.class_below_share(class) || !self.other_work_waits()
            })
        } else {
            self.urgent_turn.wait(deadline, || {
                // SeqCst load, as the model's; the gate's fence already orders it.
                let full =
                    self.urgent_running.load(Ordering::SeqCst) >= self.config.urgent_contexts();
                !full || !self.other_work_waits()
            })
        }
    }

    /// Whether urgent work holds fewer contexts than its share.
    pub(crate) fn urgent_below_share(&self) -> bool {
        self.urgent_running.load(Ordering::Relaxed) < self.config.urgent_contexts()
    }

    /// Whether `class` is below its share among the demanding classes (no
    /// smaller pass: `class.rs`, "Shares"), counting itself as demanding.
    fn class_below_share(&self, class: ClassId) -> bool {
        let has_roots = |id: ClassId| id == class || self.class_has_roots(id);
        let only_this = |id: ClassId, _| id == class;
        self.classes
            .choose(true, ClassId::NONE, has_roots, only_this)
            .is_some()
    }

    /// Whether non-urgent work is queued (pools, roots at or below the default
    /// priority, or any other class's roots). Deques are not looked at: their
    /// owners are running.
    fn other_work_waits(&self) -> bool {
        !self.pools.iter().all(Pool::is_empty)
            || self.roots.any_at_or_below(crate::DEFAULT_PRIORITY)
            || (1..self.classes.defined()).any(|i| self.class_has_roots(ClassId::from_index(i)))
    }

    /// A guest (or a worker) leaves the counts as active; then, like a worker
    /// about to park, it re-checks for work: a pusher that saw the level full
    /// woke nobody, and this context is now free (PROTOCOL.md, the same Dekker
    /// pair as "No lost wake-up": the SeqCst RMW here, the fence and loads in
    /// `has_work`, against the pusher's `queued` increment and counts load).
    fn leave_counts(&self) {
        self.counts.remove_worker(WorkerState::Active);
        if self.has_work() {
            self.notify_work(1);
        }
    }
}

thread_local! {
    /// A client thread's parker, kept between its jobs (making one costs an
    /// allocation a 10 µs transaction should not pay every time). Its deque is
    /// the slot's (`Shared::take_deque`).
    static GUEST_PARKER: RefCell<Option<Parker>> = const { RefCell::new(None) };
}

/// Runs `f` on the calling thread as a guest worker in `slot` (admitted
/// [`Admission::Counted`]); gives the slot and the context back on return and
/// on unwinding.
pub(crate) fn run_counted<R>(
    shared: &Arc<Shared>,
    slot: usize,
    urgent: bool,
    f: impl FnOnce() -> R,
) -> R {
    let parker = GUEST_PARKER
        .with(|p| p.borrow_mut().take())
        .unwrap_or_default();
    shared.register_unparker(slot, &parker);
    let deque = shared.take_deque(slot);
    let guest = WorkerThread::new(shared.clone(), slot, deque, parker);
    let _urgent = urgent.then(|| UrgentGuard::enter(shared));
    // The guest counts for the caller's class while it runs (`into_parts`
    // below ends the count).
    guest.count_for(crate::class::current_class());
    let r = guest.run_as_current(|| catch_unwind(AssertUnwindSafe(f)));
    let (deque, parker) = guest.into_parts();
    // Asserts the deque is empty: every job a guest forks is joined before
    // its job returns.
    shared.release_slot(slot, Some(deque));
    shared.guests_now.fetch_sub(1, Ordering::Relaxed);
    shared.leave_counts();
    GUEST_PARKER.with(|p| *p.borrow_mut() = Some(parker));
    match r {
        Ok(r) => r,
        Err(p) => resume_unwind(p),
    }
}

/// Runs `f` on the calling thread, uncounted ([`Admission::Extra`]); it
/// counts in the urgent share (default class) or in its class's share.
pub(crate) fn run_extra<R>(shared: &Shared, class: ClassId, f: impl FnOnce() -> R) -> R {
    if shared.classes.defined() > 0 && class != ClassId::DEFAULT && shared.classes.exists(class) {
        let _class = ExtraClassGuard::enter(shared, class);
        return f();
    }
    let _urgent = UrgentGuard::enter(shared);
    f()
}

/// Counts an uncounted caller for its class while it runs, and charges the
/// class its time.
struct ExtraClassGuard<'a> {
    shared: &'a Shared,
    class: ClassId,
    since: Cell<u64>,
}

impl<'a> ExtraClassGuard<'a> {
    fn enter(shared: &'a Shared, class: ClassId) -> Self {
        let since = Cell::new(0);
        shared.classes.move_count(ClassId::NONE, class, &since);
        ExtraClassGuard {
            shared,
            class,
            since,
        }
    }
}

impl Drop for ExtraClassGuard<'_> {
    fn drop(&mut self) {
        self.shared
            .classes
            .move_count(self.class, ClassId::NONE, &self.since);
    }
}

/// Counts one piece of urgent work running (a guest, an extra caller, or a
/// worker running an urgent root) for the urgent share, until dropped.
pub(crate) struct UrgentGuard<'a>(&'a Shared);

impl<'a> UrgentGuard<'a> {
    pub(crate) fn enter(shared: &'a Shared) -> Self {
        shared.urgent_running.fetch_add(1, Ordering::Relaxed);
        UrgentGuard(shared)
    }
}

impl Drop for UrgentGuard<'_> {
    fn drop(&mut self) {
        let shared = self.0;
        // SeqCst RMW: pairs with the waiter's RMW and fence in `TurnGate::wait`
        // (through the fence in `TurnGate::ended`).
        shared.urgent_running.fetch_sub(1, Ordering::SeqCst);
        shared.urgent_turn.ended();
    }
}
