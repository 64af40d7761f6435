//! A team's shared state: the team barrier, the queue of explicit tasks, the
//! members' claims and the join (forking is in `fork`). The protocol and the
//! argument why it cannot deadlock are in PROTOCOL.md.
//!
//! All waiting goes through `maestro_scheduler::sync` (waiters count as *blocked*,
//! so the scheduler activates other workers), and every waiter first helps: at a
//! barrier or the join it runs queued explicit tasks of the team, and at the join
//! the master runs every member that no worker has started yet.

use std::collections::VecDeque;
use std::ffi::c_void;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use maestro_scheduler::sync::{Condvar, Mutex, load_allows_spinning};
use smallvec::SmallVec;

use crate::ctx::Ctx;
use crate::icv::Icv;
use crate::record::TaskRef;
use crate::runtime;
use crate::task;
use crate::taskred::Registration;
use crate::workshare::{WorkShare, WsTable};

/// The outlined body of a parallel region and its argument block.
#[derive(Clone, Copy)]
pub(crate) struct RegionFn {
    pub f: unsafe extern "C" fn(*mut c_void),
    pub data: *mut c_void,
}

// SAFETY: `data` points to the encountering task's frame (GCC's argument block, or
// the native API's closure), which the master keeps alive until the join has seen
// every member finish; members only use it inside `f`. OpenMP makes the program
// responsible for synchronizing what `f` does with the shared data.
unsafe impl Send for RegionFn {}
// SAFETY: as above; the pointers themselves are never written after the fork.
unsafe impl Sync for RegionFn {}

/// A team's shared state (the public `Team` of the native API is a member's view).
pub(crate) struct TeamShared {
    pub n: usize,
    /// Nesting level: 0 for the initial team, 1 for the outermost region.
    pub level: usize,
    /// Enclosing teams with more than one member, this one included.
    pub active_level: usize,
    /// (thread number, team size) of the enclosing members at levels 1..level.
    pub outer: Vec<(usize, usize)>,
    /// (`omp_get_team_num`, `omp_get_num_teams`): the team of a host `teams`
    /// league this team belongs to (a league member's own team, or a region
    /// nested in it, which inherits it); (0, 1) outside any league.
    pub league: (usize, usize),
    body: Option<RegionFn>,
    /// Members 1..n run on dedicated home threads (`crate::home`): only
    /// there, so the join waits for them instead of running them inline.
    pub dedicated: bool,
    /// The home threads a dedicated team took from its forking thread, given
    /// back at the join.
    pub homes: parking_lot::Mutex<Option<crate::home::Taken>>,
    /// Set by whoever starts member k (a worker or the master at the join).
    claimed: Box<[AtomicBool]>,
    member_icv: Icv,
    /// A loop or sections construct combined with the region (`GOMP_parallel_loop_*`).
    pre_ws: Option<Arc<WorkShare>>,
    /// Locked as a leaf (`Mutex::lock_leaf`, not counted in the scheduler's
    /// held locks): no critical section on it calls into the scheduler, only
    /// `cv` waits, which release it.
    sync: Mutex<TeamSync>,
    /// `TeamSync::generation`, readable without the mutex: barrier waiters spin
    /// on it briefly before they sleep (stored under the mutex, Release; read
    /// with Acquire by the spinners).
    generation: AtomicU64,
    /// `TeamSync::finished`, readable without the mutex: the master's join
    /// spins on it briefly before it sleeps (stored under the mutex, Release;
    /// read with Acquire by the master).
    finished: AtomicUsize,
    /// Explicit tasks created and not yet finished. Incremented by the creator
    /// without the mutex (Relaxed: while a task is being created the count is
    /// already at least one — its creator is a task still counted, or a
    /// member that has not arrived at the barrier, whose arrival under the
    /// mutex publishes the increment — so a waiter cannot see zero too early);
    /// decremented without it (Release, pairing with the Acquire loads of the
    /// barrier and join checks, made under the mutex); only the decrement that
    /// reaches zero takes the mutex, to wake the waiters ([`Self::task_done`]).
    /// The throttle reads it Relaxed (a heuristic: a stale value lets one task
    /// more or fewer run at once).
    outstanding: AtomicUsize,
    /// `TeamSync::queued`'s length, readable without the mutex: barrier and
    /// join waiters stop spinning when tasks are queued, as libgomp's do on
    /// its barrier word's task-pending bit. Stored under the mutex; Relaxed on
    /// both sides: a spinner that sees it late only spins a little longer, and
    /// it decides under the mutex.
    queued_len: AtomicUsize,
    cv: Condvar,
    /// `single` constructs won so far (see [`TeamShared::single_start`]).
    singles: AtomicU64,
    pub ws: WsTable,
    /// The task reductions of a `parallel reduction(task, …)`, which every
    /// member's implicit task sees (`GOMP_parallel_reductions`).
    pub red: Option<Arc<Registration>>,
    /// `cancel parallel` happened: `TeamSync::cancelled`, readable without the
    /// mutex (cancellation points, tasks about to start). Stored under the
    /// mutex; Relaxed on both sides: no data is published with the flag, and
    /// seeing it late only lets more of the region run, which OpenMP allows
    /// (a cancellation takes effect at the next cancellation point that sees
    /// it); the barrier decides under the mutex.
    cancelled: AtomicBool,
    /// `cancel for` / `cancel sections`: the team's current loop or sections
    /// construct is cancelled. Such a construct has no `nowait` (OpenMP forbids
    /// it), so every member meets at its end's barrier, whose release clears
    /// the flag for the next construct. Relaxed, as `cancelled`.
    ws_cancelled: AtomicBool,
}

/// How a barrier wait ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BarrierEnd {
    /// Every member arrived and the team's tasks were done.
    Passed,
    /// A native-API member panicked.
    Poisoned,
    /// The region was cancelled (cancellable barriers only): the member left
    /// without waiting for the others.
    Cancelled,
}

/// How long a barrier waiter spins before it sleeps. Guessed: above the
/// microseconds a running team needs to arrive, far below the watchdog's
/// 20 ms, so an oversubscribed team wastes little.
const BARRIER_SPIN: std::time::Duration = std::time::Duration::from_micros(20);

#[derive(Default)]
struct TeamSync {
    arrived: usize,
    generation: u64,
    finished: usize,
    /// Explicit tasks not yet started, for waiters to run inline. May hold
    /// tasks already taken through their parent's or taskgroup's queue (a
    /// `taskwait` runs its children from there); pruned as it grows
    /// ([`TeamShared::push_task`]).
    queued: VecDeque<TaskRef>,
    /// `queued`'s length after its last pruning, doubled.
    prune_at: usize,
    waiters: usize,
    /// A native-API member panicked: barriers give up instead of waiting forever.
    poisoned: bool,
    /// `cancel parallel` happened: cancellable barriers let every member go.
    cancelled: bool,
}

/// The team queue is not pruned below this many records. Guessed: a pruning
/// scans the queue, so it should pay for itself over a few dozen pushes.
const PRUNE_MIN_TASKS: usize = 32;

/// Tasks a barrier or join waiter takes off the team queue at once
/// ([`TeamShared::take_batch`]). Guessed: enough to spread one lock round
/// trip and one update of the team's count — cache lines the creating member
/// writes too — over several empty tasks, few enough that a batch of real
/// tasks does not keep much work from other waiters (a batch is also at most
/// half of the queue).
const TASK_BATCH_MAX: usize = 8;

/// Runs a batch of queued tasks here (those nobody took meanwhile); returns
/// how many ran, whose completions the caller owes the team.
fn run_batch(batch: SmallVec<[TaskRef; TASK_BATCH_MAX]>) -> usize {
    batch.into_iter().filter(|t| task::run_body(t)).count()
}

/// libgomp's throttle: past this many unfinished tasks per member, new tasks run
/// at once in the creating task instead of being queued.
const TASKS_PER_MEMBER: usize = 64;

impl TeamShared {
    /// The team of one of a thread outside any parallel region.
    pub fn initial() -> Arc<TeamShared> {
        Arc::new(Self::build(
            1,
            0,
            0,
            Vec::new(),
            None,
            runtime::initial_icv(),
            None,
        ))
    }

    pub(crate) fn build(
        n: usize,
        level: usize,
        active_level: usize,
        outer: Vec<(usize, usize)>,
        body: Option<RegionFn>,
        member_icv: Icv,
        pre_ws: Option<Arc<WorkShare>>,
    ) -> TeamShared {
        TeamShared {
            n,
            level,
            active_level,
            outer,
            league: (0, 1),
            body,
            dedicated: false,
            homes: parking_lot::Mutex::new(None),
            claimed: (0..n).map(|k| AtomicBool::new(k == 0)).collect(),
            member_icv,
            pre_ws,
            sync: Mutex::new(TeamSync::default()),
            generation: AtomicU64::new(0),
            finished: AtomicUsize::new(0),
            outstanding: AtomicUsize::new(0),
            queued_len: AtomicUsize::new(0),
            cv: Condvar::new(),
            singles: AtomicU64::new(0),
            ws: WsTable::new(n),
            red: None,
            cancelled: AtomicBool::new(false),
            ws_cancelled: AtomicBool::new(false),
        }
    }

    /// Marks the team failed and wakes every waiter (native API only).
    pub fn poison(&self) {
        self.sync.lock_leaf().poisoned = true;
        self.cv.notify_all();
    }

    /// The team barrier. Returns false (at once) if the team is poisoned.
    pub fn barrier(&self) -> bool {
        self.wait_barrier(false) == BarrierEnd::Passed
    }

    /// The barrier of a cancellable region (`GOMP_barrier_cancel` and the
    /// `*_end_cancel` entry points): true if the region is cancelled, before
    /// or while this member waits; it then leaves at once, withdrawing its
    /// arrival (the region is ending: its members only meet again at the join,
    /// which counts finished members, not arrivals).
    pub fn barrier_cancellable(&self) -> bool {
        self.wait_barrier(true) == BarrierEnd::Cancelled
    }

    /// `cancel parallel`: marks the team cancelled and wakes every waiter, so
    /// that members waiting at cancellable barriers leave. No wake-up is lost:
    /// the flag is set under the team mutex, under which a waiter checks it
    /// before it sleeps.
    pub fn cancel(&self) {
        runtime::note_cancellation();
        let mut s = self.sync.lock_leaf();
        s.cancelled = true;
        self.cancelled.store(true, Ordering::Relaxed);
        drop(s);
        self.cv.notify_all();
    }

    /// Whether `cancel parallel` happened (see `cancelled`).
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed)
    }

    /// `cancel for` / `cancel sections`: cancels the current construct.
    pub fn cancel_workshare(&self) {
        self.ws_cancelled.store(true, Ordering::Relaxed);
    }

    /// Whether the current loop or sections construct is cancelled.
    pub fn workshare_cancelled(&self) -> bool {
        self.ws_cancelled.load(Ordering::Relaxed)
    }

    fn wait_barrier(&self, cancellable: bool) -> BarrierEnd {
        let mut s = self.sync.lock_leaf();
        if cancellable && s.cancelled {
            return BarrierEnd::Cancelled;
        }
        let generation = s.generation;
        s.arrived += 1;
        loop {
            if s.generation != generation {
                return BarrierEnd::Passed;
            }
            if s.poisoned {
                return BarrierEnd::Poisoned;
            }
            if cancellable && s.cancelled {
                s.arrived -= 1;
                return BarrierEnd::Cancelled;
            }
            // Acquire: pairs with the Release decrements in `task_done`.
            if s.arrived == self.n && self.outstanding.load(Ordering::Acquire) == 0 {
                s.arrived = 0;
                s.generation += 1;
                // The end of the construct that was cancelled, if any.
                self.ws_cancelled.store(false, Ordering::Relaxed);
                // Pairs with the Acquire load of the spinning waiters.
                self.generation.store(s.generation, Ordering::Release);
                drop(s);
                self.cv.notify_all();
                return BarrierEnd::Passed;
            }
            let batch = self.take_batch(&mut s);
            if !batch.is_empty() {
                drop(s);
                let ran = run_batch(batch);
                s = self.sync.lock_leaf();
                self.count_tasks_done(&mut s, ran);
                continue;
            }
            // Spin briefly first: a team's last member usually arrives within
            // microseconds, and parking costs tens of them (measured: a
            // barrier of 2 took 31.8 µs parking every time, libgomp 0.29 µs
            // spinning). Bounded, so a member that is not running yet costs
            // at most `BARRIER_SPIN` of CPU before the waiter sleeps as
            // *blocked* and the scheduler can run it.
            // The spin also ends when a task is queued, so that a waiter helps
            // at once instead of after the spin (perf, 2026-11-26: a member
            // at the barrier of a `single` producing tasks spun out the whole
            // spin, then slept with tasks queued: the producer, past the
            // throttle, ran every task itself and nobody woke the waiter).
            drop(s);
            self.spin_until(|| {
                // Acquire: pairs with the Release store of the releasing member.
                self.generation.load(Ordering::Acquire) != generation
                    || (cancellable && self.is_cancelled())
                    || self.tasks_queued()
            });
            // Acquire: as in the spin. The fast way out, without the mutex.
            if !cancellable && self.generation.load(Ordering::Acquire) != generation {
                return BarrierEnd::Passed;
            }
            s = self.sync.lock_leaf();
            if s.generation != generation {
                return BarrierEnd::Passed;
            }
            if (cancellable && s.cancelled) || !s.queued.is_empty() {
                continue;
            }
            s.waiters += 1;
            self.cv.wait(&mut s);
            s.waiters -= 1;
        }
    }

    /// Spins up to [`BARRIER_SPIN`] until `done()`; true if it held. Gives up
    /// early (and does not start) while the scheduler has more active workers
    /// than contexts: the spin would then take a core from a member that has
    /// yet to arrive or from other work (the `Latch` rule,
    /// `maestro_scheduler::sync::load_allows_spinning`).
    fn spin_until(&self, done: impl Fn() -> bool) -> bool {
        let start = std::time::Instant::now();
        loop {
            if !load_allows_spinning() {
                return done();
            }
            for _ in 0..64 {
                if done() {
                    return true;
                }
                std::hint::spin_loop();
            }
            if self.dedicated {
                // Dedicated threads are the OS's to place, and it may put the
                // member this waiter waits for on the same core: let it run
                // (perf, 2026-11-25: without this, master and home thread on
                // one core cost ~40 µs per region, a spin and a futex each).
                std::thread::yield_now();
            }
            if start.elapsed() >= BARRIER_SPIN {
                return false;
            }
        }
    }

    /// True for exactly one member per `single` construct: the team counts the
    /// constructs won, each member the constructs it met.
    pub fn single_start(&self, ctx: &Ctx) -> bool {
        let mine = ctx.ws.singles.get();
        ctx.ws.singles.set(mine + 1);
        self.n == 1
            || self
                .singles
                .compare_exchange(mine, mine + 1, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
    }

    /// Queues `t` (team mutex held as `s`), first dropping the records
    /// already taken once the queue has doubled since the last pruning
    /// (amortized O(1) per push). Without it a `taskwait` that runs its
    /// children from its own queue left every one of them in the team's until
    /// the next barrier: a tree of 2 046 tasks kept all 2 046 records alive.
    fn push_task(&self, s: &mut TeamSync, t: TaskRef) {
        if s.queued.len() >= s.prune_at.max(PRUNE_MIN_TASKS) {
            s.queued.retain(|t| !t.is_taken());
            s.prune_at = 2 * s.queued.len();
        }
        s.queued.push_back(t);
        self.queued_len.store(s.queued.len(), Ordering::Relaxed);
    }

    /// The last queued task (team mutex held as `s`), maybe one already taken.
    fn pop_queued(&self, s: &mut TeamSync) -> Option<TaskRef> {
        let t = s.queued.pop_back();
        self.queued_len.store(s.queued.len(), Ordering::Relaxed);
        t
    }

    /// Up to [`TASK_BATCH_MAX`] queued tasks, at most half of the queue
    /// (rounded up), for a barrier or join waiter (team mutex held as `s`):
    /// the oldest, from the end the creators do not push to. One lock round
    /// trip and one count update then serve several tasks handed over from
    /// another member (maybe already taken through their parent's or group's
    /// queue: whoever claims first runs them).
    fn take_batch(&self, s: &mut TeamSync) -> SmallVec<[TaskRef; TASK_BATCH_MAX]> {
        let k = s.queued.len().div_ceil(2).min(TASK_BATCH_MAX);
        let batch = s.queued.drain(..k).collect();
        self.queued_len.store(s.queued.len(), Ordering::Relaxed);
        batch
    }

    /// Whether tasks may be queued (a hint: see `queued_len`).
    fn tasks_queued(&self) -> bool {
        self.queued_len.load(Ordering::Relaxed) > 0
    }

    /// Counts a new explicit task and queues it for waiters to help with, unless
    /// the team is over the throttle: then returns false and the caller runs the
    /// task at once (it still counts until `task_done`).
    pub fn add_task(&self, t: &TaskRef) -> bool {
        // Relaxed: see `outstanding`.
        if self.outstanding.fetch_add(1, Ordering::Relaxed) >= TASKS_PER_MEMBER * self.n {
            return false;
        }
        let mut s = self.sync.lock_leaf();
        self.push_task(&mut s, t.clone());
        let wake = s.waiters > 0;
        drop(s);
        if wake {
            self.cv.notify_one();
        }
        true
    }

    /// Counts a new explicit task that is queued later ([`Self::queue_task`])
    /// or run at once by its creator.
    pub fn count_task(&self) {
        // Relaxed: see `outstanding`.
        self.outstanding.fetch_add(1, Ordering::Relaxed);
    }

    /// Queues a task counted by [`Self::count_task`] for waiters to help with
    /// (whatever the throttle: the task exists already).
    pub fn queue_task(&self, t: TaskRef) {
        let mut s = self.sync.lock_leaf();
        self.push_task(&mut s, t);
        let wake = s.waiters > 0;
        drop(s);
        if wake {
            self.cv.notify_one();
        }
    }

    /// Whether the team has more unfinished explicit tasks than its throttle
    /// allows (new ones then run at once in their creator).
    pub fn over_task_throttle(&self) -> bool {
        self.would_pass_task_throttle(0)
    }

    /// Whether `more` new tasks would take the team past its throttle
    /// (libgomp's rule for a whole taskloop: then all of its tasks run at
    /// once in the encountering task).
    /// Reads the count without the mutex: the check runs before every task
    /// is created.
    pub fn would_pass_task_throttle(&self, more: usize) -> bool {
        self.outstanding
            .load(Ordering::Relaxed)
            .saturating_add(more)
            >= TASKS_PER_MEMBER * self.n
    }

    pub(crate) fn pop_task(&self) -> Option<TaskRef> {
        self.pop_queued(&mut self.sync.lock_leaf())
    }

    /// An explicit task of this team finished. Takes the team mutex only if
    /// it was the last, to wake the waiters (barrier and join wait for the
    /// count to reach zero). No wake-up is lost: a waiter checks the count and
    /// registers (`waiters += 1`) under the mutex before it sleeps, and this
    /// takes the mutex after its decrement, so either the check sees zero or
    /// this sees the waiter (as `WaitSet::done`).
    pub fn task_done(&self) {
        // Release: pairs with the Acquire loads of the barrier and join checks.
        if self.outstanding.fetch_sub(1, Ordering::Release) == 1 {
            let wake = self.sync.lock_leaf().waiters > 0;
            if wake {
                self.cv.notify_all();
            }
        }
    }

    /// [`Self::task_done`] for a caller that holds the team mutex (as `s`): a
    /// barrier or join waiter that ran tasks and re-took the mutex to look
    /// for the next one; `n` tasks at once (a batch, [`Self::take_batch`]).
    fn count_tasks_done(&self, s: &mut TeamSync, n: usize) {
        // Release: as in `task_done`.
        if n > 0 && self.outstanding.fetch_sub(n, Ordering::Release) == n && s.waiters > 0 {
            self.cv.notify_all();
        }
    }

    /// Runs member `k` here unless someone started it already. Returns whether it ran.
    pub fn run_member(self: &Arc<Self>, k: usize) -> bool {
        if self.claimed[k].swap(true, Ordering::AcqRel) {
            return false;
        }
        let ctx = self.member_ctx(k);
        ctx.enter();
        if self.level > 0 {
            crate::abi::display::member_started();
        }
        let body = self.body.expect("a forked team has a body");
        // SAFETY: `body` is GCC's outlined region (or our trampoline) with the
        // argument block it was given; the master keeps the block alive until the
        // join, which waits for this member's `finish` below.
        unsafe { (body.f)(body.data) };
        // Help with the tasks queued so far before giving the worker back; the
        // master's join waits for the rest.
        while let Some(t) = self.pop_task() {
            task::execute(t);
        }
        self.finish();
        ctx.leave();
        true
    }

    pub(crate) fn member_ctx(self: &Arc<Self>, k: usize) -> Ctx {
        let ctx = Ctx::new(
            self.clone(),
            k,
            self.member_icv,
            None,
            self.red.clone(),
            false,
        );
        if let Some(ws) = &self.pre_ws {
            *ctx.ws.current.borrow_mut() = Some((0, ws.clone()));
            ctx.ws.next_seq.set(1);
        }
        ctx
    }

    fn finish(&self) {
        let mut s = self.sync.lock_leaf();
        s.finished += 1;
        // Release: pairs with the Acquire load in `join`'s spin.
        self.finished.store(s.finished, Ordering::Release);
        let wake = s.finished == self.n && s.waiters > 0;
        drop(s);
        if wake {
            self.cv.notify_all();
        }
    }

    /// The master's join: finish, start every member nobody started (unless
    /// the members run on dedicated threads, which start them), then wait
    /// (helping with tasks) until all members finished and no task is left.
    pub(crate) fn join(self: &Arc<Self>) {
        self.finish();
        if !self.dedicated {
            for k in 1..self.n {
                self.run_member(k);
            }
        }
        // Members that are running usually finish within microseconds: spin
        // for them as at a barrier (bounded, load-aware) before sleeping — a
        // futex sleep and wake-up per region cost more than the region itself
        // (perf, 2026-11-25). The loop below decides, under the mutex.
        // Acquire: pairs with the Release store in `finish`.
        // It also ends when a task is queued (as at a barrier).
        self.spin_until(|| self.finished.load(Ordering::Acquire) == self.n || self.tasks_queued());
        let mut s = self.sync.lock_leaf();
        loop {
            // Acquire: pairs with the Release decrements in `task_done`.
            if s.finished == self.n && self.outstanding.load(Ordering::Acquire) == 0 {
                return;
            }
            let batch = self.take_batch(&mut s);
            if !batch.is_empty() {
                drop(s);
                let ran = run_batch(batch);
                s = self.sync.lock_leaf();
                self.count_tasks_done(&mut s, ran);
                continue;
            }
            s.waiters += 1;
            self.cv.wait(&mut s);
            s.waiters -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn team(n: usize) -> Arc<TeamShared> {
        Arc::new(TeamShared::build(
            n,
            1,
            1,
            Vec::new(),
            None,
            runtime::initial_icv(),
            None,
        ))
    }

    #[test]
    fn the_team_queue_drops_taken_records_as_it_grows() {
        let t = team(2);
        let mut s = t.sync.lock();
        let pending = task::test_record();
        t.push_task(&mut s, pending.clone());
        for _ in 1..PRUNE_MIN_TASKS {
            let r = task::test_record();
            assert!(r.claim().is_some());
            t.push_task(&mut s, r);
        }
        assert_eq!(s.queued.len(), PRUNE_MIN_TASKS);
        // The next push prunes: only the pending record and the new one stay.
        t.push_task(&mut s, task::test_record());
        assert_eq!(s.queued.len(), 2);
        assert!(t.tasks_queued());
        assert!(s.queued.iter().any(|r| TaskRef::ptr_eq(r, &pending)));
        while t.pop_queued(&mut s).is_some() {}
        assert!(!t.tasks_queued(), "the length hint follows the queue");
    }

    #[test]
    fn a_waiter_takes_a_bounded_batch_of_the_oldest_tasks() {
        let t = team(2);
        let mut s = t.sync.lock_leaf();
        let recs: Vec<TaskRef> = (0..20).map(|_| task::test_record()).collect();
        for r in &recs {
            t.push_task(&mut s, r.clone());
        }
        let batch = t.take_batch(&mut s);
        assert_eq!(batch.len(), TASK_BATCH_MAX, "bounded by the batch size");
        for (b, r) in batch.iter().zip(&recs) {
            assert!(TaskRef::ptr_eq(b, r), "the oldest first, in order");
        }
        assert_eq!(s.queued.len(), 20 - TASK_BATCH_MAX);
        // Three left: the batch takes half of them, rounded up.
        while s.queued.len() > 3 {
            t.pop_queued(&mut s);
        }
        assert_eq!(t.take_batch(&mut s).len(), 2);
        assert_eq!(t.take_batch(&mut s).len(), 1);
        assert!(t.take_batch(&mut s).is_empty());
        assert!(!t.tasks_queued(), "the length hint follows the queue");
        drop(s);
        // Tasks claimed elsewhere meanwhile do not run, nor count.
        assert!(batch[0].claim().is_some());
        assert_eq!(run_batch(batch), TASK_BATCH_MAX - 1);
    }

    #[test]
    fn the_last_task_done_wakes_a_sleeping_barrier_waiter() {
        let t = team(1);
        t.count_task();
        let waiter = {
            let t = t.clone();
            std::thread::spawn(move || t.barrier())
        };
        // Whether the waiter sleeps, spins or has not arrived yet when the
        // count drops, it must pass: the barrier cannot pass before.
        t.task_done();
        assert!(waiter.join().unwrap());
        assert_eq!(t.outstanding.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn cancellable_barrier_passes_when_not_cancelled_and_ends_a_workshare_cancel() {
        let t = team(2);
        t.cancel_workshare();
        let other = {
            let t = t.clone();
            std::thread::spawn(move || t.barrier_cancellable())
        };
        assert!(!t.barrier_cancellable());
        assert!(!other.join().unwrap());
        assert!(!t.workshare_cancelled(), "the barrier's release ends it");
        assert!(!t.is_cancelled());
    }

    #[test]
    fn cancel_releases_waiters_and_later_arrivals() {
        let t = team(3);
        let waiter = {
            let t = t.clone();
            std::thread::spawn(move || t.barrier_cancellable())
        };
        // Let the waiter arrive and sleep (a member that never arrives keeps
        // the barrier closed, so only the cancellation can release it).
        std::thread::sleep(std::time::Duration::from_millis(20));
        t.cancel();
        assert!(waiter.join().unwrap());
        assert!(t.is_cancelled());
        assert!(t.barrier_cancellable(), "arriving after the cancel");
        assert_eq!(t.sync.lock().arrived, 0, "cancelled waiters withdraw");
    }
}
