//! A loom model of the idle/park protocol of `src/shared.rs` ("no lost wake-up"),
//! checked over the interleavings (all of them, or all within a preemption bound
//! where noted) and the weak-memory outcomes loom explores.
//!
//! Run with
//! `RUSTFLAGS="--cfg loom" cargo test -p maestro-scheduler --test loom_park --release --target-dir target/loom`.
//!
//! The model is a transcription, not the real code (which uses std atomics and
//! crossbeam's `Parker`); each step maps to the crate as follows:
//!
//! | model                      | crate                                                     |
//! |----------------------------|-----------------------------------------------------------|
//! | `Model::parked`            | the `parked` field of `AtomicWorkerCounts` (`counts.rs`); the `total` field is constant here (no worker is created or exits), so `active = total - parked` |
//! | `Model::queued`            | `Shared::queued` (SeqCst)                                 |
//! | `Model::roots`             | the root `Injector`s (`RootQueues`)                       |
//! | `Model::deque`             | a worker's local deque, seen by others through its `Stealer` |
//! | `Model::idle`              | `Shared::idle` (the idle list under its mutex)            |
//! | `Parker` (token + condvar) | crossbeam's `Parker`/`Unparker` in `Slot::unparker`       |
//! | `Model::push_root`         | `Shared::push_root`: `queued += 1` (SeqCst), push, `notify_work(1)` |
//! | `Model::push_deque`        | `join`/`Scope::spawn` on a worker: `deque.push`, `notify_work(1)` |
//! | `Model::notify_work`       | `Shared::notify_work`: `fence(SeqCst)`, load counts, return if `active >= contexts`, else `activate` |
//! | `Model::activate`          | `Shared::activate(Submit)`: reload counts, `parked > 0` → `wake_one`; creating a thread is left out (as at `workers_max`), so the model shows wake-ups alone suffice |
//! | `Model::wake_one`          | `Shared::wake_one`: lock idle, pop a slot, `Parked → Active` (SeqCst), unlock, unpark |
//! | `Model::find_task`         | `WorkerThread::find_task`: own deque (n/a), pools/roots (`queued -= 1` after a pop), steal other deques |
//! | `Model::worker`            | `WorkerThread::run` with `idle_spin_rounds = 0`: find, else shutdown check, else `park_idle` (a `Retry` loops at once: the model yields there, as loom needs for spins) |
//! | `Model::park_idle`         | `Shared::park_idle`: lock idle, `Active → Parked` (SeqCst RMW), `has_work()` or shutdown → revert (`Retry`), else push self, unlock, `sleep_until_woken` |
//! | `Model::has_work`          | `Shared::has_work`: `fence(SeqCst)`, `queued > 0` (SeqCst), any stealer non-empty |
//! | `Model::sleep_until_woken` | `Shared::sleep_until_woken`: park, lock idle, not in the list → woken, else park again |
//! | `Model::shutdown`          | `Drop for Scheduler`: `shutdown = true`, `wake_all`       |
//!
//! Left out: `park_timeout`'s timeout (it only adds re-checks of the idle list, and
//! the exit of extra workers), `park_if_surplus` (needs more workers than contexts),
//! thread creation, and the watchdog (which would mask a lost wake-up).
//!
//! What is checked: the submitter waits (parked, re-checking a counter) until
//! every task was consumed, then shuts the model down and joins the workers. A
//! lost wake-up is an execution in which a task stays queued while every worker
//! sleeps; the submitter then waits forever too, and loom reports the execution as
//! a `deadlock`. Every execution that ends is checked for consumed tasks, empty
//! queues, no parked count and an empty idle list. Deliberately broken variants
//! (no re-check of `has_work` after marking parked; no fences around a deque push)
//! must make loom find exactly such a deadlock, which shows that the model can fail.
//!
//! Note on orderings: loom weakens `SeqCst` *accesses* (it does not model their
//! single total order) but models `fence(SeqCst)` exactly. The protocol holds here
//! because `has_work` and `notify_work` use explicit fences; without them loom
//! also flags the `push_root` path, although there the SeqCst RMW and load on each
//! side would suffice in the C++ model. For the deque path the fences are needed
//! in any model (the push is only a Release store).
#![cfg(loom)]

// The model is shared through a std `Rc` (loom threads run on one OS thread and
// need no `Send`): when loom reports a deadlock it unwinds the current thread, and
// dropping a loom `Arc` then panics again and aborts the process instead of failing
// the test.
use std::rc::Rc;

use loom::model::Builder;
use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering, fence};
use loom::sync::{Condvar, Mutex};
use loom::thread;

/// Which version of the protocol to model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Variant {
    /// As written in `shared.rs`.
    Correct,
    /// Broken: `park_idle` marks the worker parked but does not re-check `has_work`.
    NoRecheck,
    /// Broken: neither `has_work` nor `notify_work` has its `fence(SeqCst)`.
    NoFences,
    /// Broken: a guest (a caller admitted to run its own job, `caller.rs`)
    /// leaves the counts without re-checking `has_work`.
    GuestNoRecheck,
}

/// Where the submitter puts its task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Push {
    /// A client thread: `push_root` (the task is counted in `queued`).
    Root,
    /// A busy worker (`join` / `Scope::spawn`): its own deque, not counted in
    /// `queued`; only a stealer sees it. The pushing worker is active and stays
    /// busy (it waits for the other half), so it never takes the task back.
    Deque,
}

/// crossbeam's `Parker`: a token that `unpark` sets and `park` consumes, so an
/// unpark before the park is not lost.
///
/// Built on a loom `Mutex` + `Condvar` rather than `loom::thread::park`: loom 0.7's
/// `unpark` makes a thread runnable whatever it is blocked on, so a stale unpark of
/// a worker that waits for the idle mutex trips loom's "expected to be able to
/// acquire lock" assertion. A condvar only wakes its own waiters.
struct Parker {
    token: Mutex<bool>,
    cv: Condvar,
}

impl Parker {
    fn new() -> Self {
        Parker {
            token: Mutex::new(false),
            cv: Condvar::new(),
        }
    }

    fn park(&self) {
        let mut token = self.token.lock().unwrap();
        while !*token {
            token = self.cv.wait(token).unwrap();
        }
        *token = false;
    }

    fn unpark(&self) {
        *self.token.lock().unwrap() = true;
        self.cv.notify_one();
    }
}

struct Model {
    variant: Variant,
    /// Worker threads counted in the counts word (the modelled idle workers, plus
    /// the pushing worker for `Push::Deque`).
    total: usize,
    /// `config.contexts` (= `total`: the pool is at its base size).
    contexts: usize,
    parked: AtomicUsize,
    /// Callers counted as active guests (`caller::run_counted`); part of the
    /// counts word's total in the crate, a separate counter here.
    guests: AtomicUsize,
    queued: AtomicUsize,
    roots: AtomicUsize,
    deque: AtomicUsize,
    idle: Mutex<Vec<usize>>,
    /// Each worker slot's parker (`Slot::unparker`).
    parkers: Vec<Parker>,
    shutdown: AtomicBool,
    consumed: AtomicUsize,
    /// The submitter sleeps here until every task was consumed.
    submitter: Parker,
}

impl Model {
    fn new(variant: Variant, push: Push, workers: usize) -> Self {
        let total = workers + usize::from(push == Push::Deque);
        Model {
            variant,
            total,
            contexts: total,
            parked: AtomicUsize::new(0),
            guests: AtomicUsize::new(0),
            queued: AtomicUsize::new(0),
            roots: AtomicUsize::new(0),
            deque: AtomicUsize::new(0),
            idle: Mutex::new(Vec::new()),
            parkers: (0..workers).map(|_| Parker::new()).collect(),
            shutdown: AtomicBool::new(false),
            consumed: AtomicUsize::new(0),
            submitter: Parker::new(),
        }
    }

    fn fence(&self) {
        if self.variant != Variant::NoFences {
            fence(Ordering::SeqCst);
        }
    }

    // ---- submitter side ----------------------------------------------------------

    fn push_root(&self) {
        // `queued += 1` (SeqCst) first, so that a pop never drives it below
        // zero; then Injector::push; then notify_work(1).
        self.queued.fetch_add(1, Ordering::SeqCst);
        self.roots.fetch_add(1, Ordering::Release);
        self.notify_work();
    }

    fn push_deque(&self) {
        // crossbeam's `Worker::push` publishes the slot with a Release store of
        // `back`; then `notify_work(1)`.
        self.deque.fetch_add(1, Ordering::Release);
        self.notify_work();
    }

    /// The active level: workers not parked, plus guests. (In the crate both
    /// live in one word read by one SeqCst load; two SeqCst loads here.)
    fn active(&self) -> usize {
        self.total - self.parked.load(Ordering::SeqCst) + self.guests.load(Ordering::SeqCst)
    }

    fn notify_work(&self) {
        self.fence();
        if self.active() >= self.contexts {
            return;
        }
        self.activate();
    }

    fn activate(&self) {
        let parked = self.parked.load(Ordering::SeqCst);
        if self.active() >= self.contexts {
            return; // NotNeeded
        }
        // Woken, or else `CapReached`: creating a thread is not modelled (as if
        // `workers_max` were reached).
        let _woken = parked > 0 && self.wake_one();
    }

    fn wake_one(&self) -> bool {
        let mut idle = self.idle.lock().unwrap();
        let Some(slot) = idle.pop() else {
            return false;
        };
        // Parked -> Active, by the waker, under the idle lock.
        self.parked.fetch_sub(1, Ordering::SeqCst);
        drop(idle);
        self.parkers[slot].unpark();
        true
    }

    fn wait_consumed(&self, tasks: usize) {
        while self.consumed.load(Ordering::SeqCst) < tasks {
            self.submitter.park();
        }
    }

    fn shutdown(&self) {
        self.shutdown.store(true, Ordering::SeqCst);
        while self.wake_one() {}
    }

    // ---- guest side --------------------------------------------------------------

    /// `caller::run_counted`'s exit (`Shared::leave_counts`): leave the counts
    /// (SeqCst RMW), then re-check for work and notify.
    fn guest_leaves(&self) {
        self.guests.fetch_sub(1, Ordering::SeqCst);
        if self.variant != Variant::GuestNoRecheck && self.has_work() {
            self.notify_work();
        }
    }

    // ---- worker side -------------------------------------------------------------

    fn find_task(&self) -> bool {
        // Pools/roots: a successful pop, then `queued -= 1` (SeqCst).
        let mut r = self.roots.load(Ordering::Acquire);
        while r > 0 {
            match self
                .roots
                .compare_exchange(r, r - 1, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => {
                    self.queued.fetch_sub(1, Ordering::SeqCst);
                    return true;
                }
                Err(x) => r = x,
            }
        }
        // Steal from the other worker's deque.
        let mut d = self.deque.load(Ordering::Acquire);
        while d > 0 {
            match self
                .deque
                .compare_exchange(d, d - 1, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return true,
                Err(x) => d = x,
            }
        }
        false
    }

    fn has_work(&self) -> bool {
        self.fence();
        self.queued.load(Ordering::SeqCst) > 0 || self.deque.load(Ordering::Acquire) > 0
    }

    /// Returns true if the worker slept (and was woken), false for `Retry`.
    fn park_idle(&self, me: usize) -> bool {
        {
            let mut idle = self.idle.lock().unwrap();
            self.parked.fetch_add(1, Ordering::SeqCst);
            let recheck = self.variant != Variant::NoRecheck && self.has_work();
            if recheck || self.shutdown.load(Ordering::SeqCst) {
                self.parked.fetch_sub(1, Ordering::SeqCst);
                return false;
            }
            idle.push(me);
        }
        self.sleep_until_woken(me);
        true
    }

    fn sleep_until_woken(&self, me: usize) {
        loop {
            self.parkers[me].park();
            let idle = self.idle.lock().unwrap();
            if !idle.contains(&me) {
                return; // A waker removed us and made us active.
            }
            // Spurious wake-up: stay parked.
        }
    }

    fn worker(&self, me: usize) {
        loop {
            if self.find_task() {
                self.consumed.fetch_add(1, Ordering::SeqCst);
                self.submitter.unpark();
                continue;
            }
            if self.shutdown.load(Ordering::SeqCst) && !self.has_work() {
                return;
            }
            if !self.park_idle(me) {
                // `Retry` makes the worker loop without sleeping, i.e. spin, until
                // it finds the task. Loom needs spins to yield. (The spin can last:
                // `push_root` counts `queued` *before* the push, so `has_work`
                // may say "work" with nothing to find until the push lands.)
                thread::yield_now();
            }
        }
    }

    fn check_end(&self, tasks: usize) {
        assert_eq!(
            self.consumed.load(Ordering::SeqCst),
            tasks,
            "every task consumed once"
        );
        assert_eq!(
            self.queued.load(Ordering::SeqCst),
            0,
            "queued counter back to 0"
        );
        assert_eq!(self.roots.load(Ordering::SeqCst), 0, "root queue empty");
        assert_eq!(self.deque.load(Ordering::SeqCst), 0, "deque empty");
        assert_eq!(
            self.parked.load(Ordering::SeqCst),
            0,
            "no worker left parked"
        );
        assert!(self.idle.lock().unwrap().is_empty(), "idle list empty");
    }
}

/// One execution: `workers` idle workers; the submitter pushes `tasks` tasks one
/// after the other (with `racing`, a second submitter thread pushes one of them
/// concurrently), waits until all were consumed, then shuts down.
fn execution(
    variant: Variant,
    push: Push,
    workers: usize,
    tasks: usize,
    racing: bool,
    guest: bool,
) {
    let m = Rc::new(Model::new(variant, push, workers));
    // A guest admitted before anything else happens holds a context (the
    // pool's workers are then one more than the free contexts) and leaves
    // concurrently with the pushes.
    let guest = guest.then(|| {
        m.guests.store(1, Ordering::SeqCst);
        let m = m.clone();
        thread::spawn(move || m.guest_leaves())
    });
    let handles: Vec<_> = (0..workers)
        .map(|me| {
            let m = m.clone();
            thread::spawn(move || m.worker(me))
        })
        .collect();
    let push_one = move |m: &Model| match push {
        Push::Root => m.push_root(),
        Push::Deque => m.push_deque(),
    };
    let racer = racing.then(|| {
        let m = m.clone();
        thread::spawn(move || push_one(&m))
    });
    for _ in 0..tasks - usize::from(racing) {
        push_one(&m);
    }
    m.wait_consumed(tasks);
    m.shutdown();
    for h in handles.into_iter().chain(racer).chain(guest) {
        h.join().unwrap();
    }
    m.check_end(tasks);
}

/// The shape of one model.
#[derive(Clone, Copy)]
struct Case {
    variant: Variant,
    push: Push,
    workers: usize,
    tasks: usize,
    racing: bool,
    /// A caller counted as a guest leaves while the tasks are pushed.
    guest: bool,
    /// None: exhaustive (unless `LOOM_MAX_PREEMPTIONS` is set).
    preemption_bound: Option<usize>,
}

const CORRECT_ROOT_1: Case = Case {
    variant: Variant::Correct,
    push: Push::Root,
    workers: 1,
    tasks: 1,
    racing: false,
    guest: false,
    preemption_bound: None,
};

fn check(c: Case) {
    let mut b = Builder::new();
    // `LOOM_MAX_PREEMPTIONS` (read by `Builder::new`) overrides the bound given here.
    if b.preemption_bound.is_none() {
        b.preemption_bound = c.preemption_bound;
    }
    // A worker spinning through `Retry` while another holds the task between its
    // pop and `queued -= 1` makes long (finite) executions; loom's default of 1000
    // branches cuts them off.
    b.max_branches = b.max_branches.max(20_000);
    b.check(move || execution(c.variant, c.push, c.workers, c.tasks, c.racing, c.guest));
}

// ---- the protocol as written: no execution loses a wake-up ------------------------

#[test]
fn one_worker_root_push() {
    check(CORRECT_ROOT_1);
}

#[test]
fn one_worker_deque_push() {
    check(Case {
        push: Push::Deque,
        ..CORRECT_ROOT_1
    });
}

#[test]
fn one_worker_two_root_pushes() {
    check(Case {
        tasks: 2,
        preemption_bound: Some(5),
        ..CORRECT_ROOT_1
    });
}

/// Two client threads submit at once (`notify_work` / `wake_one` race each other).
#[test]
fn one_worker_two_racing_submitters() {
    check(Case {
        tasks: 2,
        racing: true,
        preemption_bound: Some(3),
        ..CORRECT_ROOT_1
    });
}

/// Bounded to one preemption: with two, loom also explores an unfair schedule in
/// which the submitter is preempted between its `queued += 1` and its push, and
/// the two idle workers then take turns spinning through `Retry` (`has_work` says
/// yes, nothing is there yet) without the submitter ever running again. That is
/// the spin `push_root`'s count-before-push allows (see `Model::worker`), a
/// liveness artefact of an unfair scheduler, not a lost wake-up; loom reports it
/// as "exceeded maximum number of branches".
#[test]
fn two_workers_root_push() {
    check(Case {
        workers: 2,
        preemption_bound: Some(1),
        ..CORRECT_ROOT_1
    });
}

#[test]
fn two_workers_deque_push() {
    check(Case {
        push: Push::Deque,
        workers: 2,
        preemption_bound: Some(3),
        ..CORRECT_ROOT_1
    });
}

/// A guest holds the only context while a root is pushed, and leaves: either the
/// pusher sees it gone and wakes the worker, or its re-check sees the root.
#[test]
fn guest_leaves_while_a_root_is_pushed() {
    // Exhaustive runs for over 20 minutes (the guest adds a thread); three
    // preemptions cover the interleavings of the Dekker pair.
    check(Case {
        guest: true,
        preemption_bound: Some(3),
        ..CORRECT_ROOT_1
    });
}

/// The same with a deque push by a busy worker (the pool then has the pushing
/// worker active beside the idle one).
#[test]
fn guest_leaves_while_a_deque_push_happens() {
    check(Case {
        guest: true,
        push: Push::Deque,
        preemption_bound: Some(3),
        ..CORRECT_ROOT_1
    });
}

// ---- broken variants: loom must find the lost wake-up --------------------------

/// A guest that leaves without re-checking: the pusher saw the guest's context
/// taken and woke nobody, the worker parked before the push, and nobody else
/// will look.
#[test]
#[should_panic(expected = "deadlock")]
fn broken_guest_without_recheck_loses_a_wakeup() {
    check(Case {
        variant: Variant::GuestNoRecheck,
        guest: true,
        ..CORRECT_ROOT_1
    });
}

/// Without the re-check, a worker that searched before the push and marks itself
/// parked after the submitter read the counts sleeps with the task queued.
#[test]
#[should_panic(expected = "deadlock")]
fn broken_no_recheck_loses_a_wakeup() {
    check(Case {
        variant: Variant::NoRecheck,
        ..CORRECT_ROOT_1
    });
}

/// The same bug is found among two workers within one preemption.
#[test]
#[should_panic(expected = "deadlock")]
fn broken_no_recheck_loses_a_wakeup_among_two_workers() {
    check(Case {
        variant: Variant::NoRecheck,
        workers: 2,
        preemption_bound: Some(1),
        ..CORRECT_ROOT_1
    });
}

/// A deque push is a Release store, not SeqCst: without the fences, the pusher may
/// read stale counts ("nobody parked") while the parking worker reads a stale
/// deque ("empty"), the store-buffering outcome the fences exclude.
#[test]
#[should_panic(expected = "deadlock")]
fn broken_no_fences_deque_push_loses_a_wakeup() {
    check(Case {
        variant: Variant::NoFences,
        push: Push::Deque,
        ..CORRECT_ROOT_1
    });
}
