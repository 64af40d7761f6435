//! The worker accounting of the paper (§5), packed in one atomic word.
//!
//! Every worker is in exactly one [`WorkerState`]. The scheduler keeps, per state
//! except *active*, how many workers are in it, plus the total; active is derived:
//!
//! ```text
//! inactive = blocked + inactive_by_user + waiting_for_graph + parked
//! active   = total - inactive
//! ```
//!
//! Keeping all five counters in one `AtomicU64` makes every transition a single
//! read-modify-write, so no reader ever sees a worker counted twice or not at all
//! (the invariant `inactive <= total` holds in every snapshot; see the unit tests
//! and `debug_assert`s in [`WorkerCounts::checked`]).

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

/// Bits per field; bounds `workers_max` (see [`WORKERS_MAX_LIMIT`]).
const FIELD_BITS: u32 = 12;
const FIELD_MASK: u64 = (1 << FIELD_BITS) - 1;

/// The largest worker cap a packed word can count (4095 workers).
pub const WORKERS_MAX_LIMIT: usize = FIELD_MASK as usize;

/// The state of one worker thread (paper §5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkerState {
    /// Running a task or looking for one.
    Active,
    /// Blocked in a scheduler-aware primitive (mutex, condvar, latch…), about to sleep.
    Blocked,
    /// Inside a `blocking(|| ..)` region the developer marked (I/O, commit).
    InactiveByUser,
    /// Waiting for a task graph (or a `join`/`scope` half) another worker runs.
    WaitingForGraph,
    /// Parked by the scheduler: idle, or surplus while the active level exceeds contexts.
    Parked,
}

/// One field of the packed word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    Total = 0,
    Blocked = 1,
    InactiveByUser = 2,
    WaitingForGraph = 3,
    Parked = 4,
}

impl Field {
    const fn shift(self) -> u32 {
        self as u32 * FIELD_BITS
    }
    const fn one(self) -> u64 {
        1 << self.shift()
    }
    fn of_state(state: WorkerState) -> Option<Field> {
        match state {
            WorkerState::Active => None,
            WorkerState::Blocked => Some(Field::Blocked),
            WorkerState::InactiveByUser => Some(Field::InactiveByUser),
            WorkerState::WaitingForGraph => Some(Field::WaitingForGraph),
            WorkerState::Parked => Some(Field::Parked),
        }
    }
}

/// A snapshot of the packed worker counters.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct WorkerCounts(u64);

impl WorkerCounts {
    pub const ZERO: WorkerCounts = WorkerCounts(0);

    fn get(self, field: Field) -> usize {
        ((self.0 >> field.shift()) & FIELD_MASK) as usize
    }

    /// All worker threads alive (the paper's *concurrency level*).
    pub fn total(self) -> usize {
        self.get(Field::Total)
    }
    pub fn blocked(self) -> usize {
        self.get(Field::Blocked)
    }
    pub fn inactive_by_user(self) -> usize {
        self.get(Field::InactiveByUser)
    }
    pub fn waiting_for_graph(self) -> usize {
        self.get(Field::WaitingForGraph)
    }
    pub fn parked(self) -> usize {
        self.get(Field::Parked)
    }
    /// Workers in the given state.
    pub fn in_state(self, state: WorkerState) -> usize {
        match Field::of_state(state) {
            Some(f) => self.get(f),
            None => self.active_strict(),
        }
    }
    /// Workers running or looking for tasks: total minus every inactive state.
    pub fn active_strict(self) -> usize {
        self.total()
            - self.blocked()
            - self.inactive_by_user()
            - self.waiting_for_graph()
            - self.parked()
    }
    /// The *active concurrency level* as the policy sees it. With `count_sys_inactive`
    /// false (the `single_pool_nosys` preset), blocked and inactive-by-user workers
    /// still count as active, as in the paper's Single-Pool-NoSys variant.
    pub fn active_level(self, count_sys_inactive: bool) -> usize {
        if count_sys_inactive {
            self.active_strict()
        } else {
            self.total() - self.waiting_for_graph() - self.parked()
        }
    }

    /// Asserts the structural invariant and returns self.
    fn checked(self) -> Self {
        let inactive =
            self.blocked() + self.inactive_by_user() + self.waiting_for_graph() + self.parked();
        assert!(
            inactive <= self.total(),
            "worker counts corrupt: {self:?} (inactive {inactive} > total)"
        );
        self
    }
}

impl fmt::Debug for WorkerCounts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WorkerCounts")
            .field("total", &self.total())
            .field("blocked", &self.blocked())
            .field("inactive_by_user", &self.inactive_by_user())
            .field("waiting_for_graph", &self.waiting_for_graph())
            .field("parked", &self.parked())
            .finish()
    }
}

/// The atomic cell holding [`WorkerCounts`].
///
/// Orderings: every RMW here is `SeqCst`. The park protocol (PROTOCOL.md, "No lost
/// wake-up") needs a store-load fence between "I am parked" (here) and "is there
/// work?" (the queues' `queued` counter), paired with the submitter's "work queued"
/// then `load()` of these counts.
pub struct AtomicWorkerCounts(AtomicU64);

impl AtomicWorkerCounts {
    pub const fn new() -> Self {
        AtomicWorkerCounts(AtomicU64::new(0))
    }

    pub fn load(&self) -> WorkerCounts {
        WorkerCounts(self.0.load(Ordering::SeqCst))
    }

    /// A new worker thread starts life active (tests; the scheduler uses
    /// [`try_add_worker`](Self::try_add_worker)).
    #[cfg(test)]
    pub fn add_worker(&self) -> WorkerCounts {
        let prev = WorkerCounts(self.0.fetch_add(Field::Total.one(), Ordering::SeqCst));
        assert!(
            prev.total() < WORKERS_MAX_LIMIT,
            "worker count overflow: {prev:?}"
        );
        WorkerCounts(prev.0 + Field::Total.one()).checked()
    }

    /// Reserves a new worker slot only while `total < cap`; returns the new counts.
    pub fn try_add_worker(&self, cap: usize) -> Option<WorkerCounts> {
        let mut cur = self.0.load(Ordering::SeqCst);
        loop {
            if WorkerCounts(cur).total() >= cap.min(WORKERS_MAX_LIMIT) {
                return None;
            }
            let next = cur + Field::Total.one();
            match self
                .0
                .compare_exchange_weak(cur, next, Ordering::SeqCst, Ordering::SeqCst)
            {
                Ok(_) => return Some(WorkerCounts(next).checked()),
                Err(actual) => cur = actual,
            }
        }
    }

    /// Adds one active worker (a caller admitted to run its own job) only while
    /// the active level is below `level_limit` and `total < cap`; returns the
    /// new counts. One CAS decides both, so two callers can never take the same
    /// last free context.
    pub fn try_add_active_below(
        &self,
        level_limit: usize,
        count_sys_inactive: bool,
        cap: usize,
    ) -> Option<WorkerCounts> {
        let mut cur = self.0.load(Ordering::SeqCst);
        loop {
            let c = WorkerCounts(cur);
            if c.active_level(count_sys_inactive) >= level_limit
                || c.total() >= cap.min(WORKERS_MAX_LIMIT)
            {
                return None;
            }
            let next = cur + Field::Total.one();
            match self
                .0
                .compare_exchange_weak(cur, next, Ordering::SeqCst, Ordering::SeqCst)
            {
                Ok(_) => return Some(WorkerCounts(next).checked()),
                Err(actual) => cur = actual,
            }
        }
    }

    /// A worker thread exits from `state` (it must be counted there).
    pub fn remove_worker(&self, state: WorkerState) -> WorkerCounts {
        let mut delta = Field::Total.one();
        if let Some(f) = Field::of_state(state) {
            delta += f.one();
        }
        let prev = WorkerCounts(self.0.fetch_sub(delta, Ordering::SeqCst));
        assert!(
            prev.total() >= 1 && (state == WorkerState::Active || prev.in_state(state) >= 1),
            "remove_worker({state:?}) from {prev:?}"
        );
        WorkerCounts(prev.0 - delta).checked()
    }

    /// Moves one worker from `from` to `to`; returns the counts after the move.
    pub fn transition(&self, from: WorkerState, to: WorkerState) -> WorkerCounts {
        if from == to {
            return self.load();
        }
        let add = Field::of_state(to).map_or(0, Field::one);
        let sub = Field::of_state(from).map_or(0, Field::one);
        // Add first then subtract inside one RMW: wrapping arithmetic on the whole word
        // is exact because no field under- or overflows (asserted below).
        let prev = WorkerCounts(self.0.fetch_add(add.wrapping_sub(sub), Ordering::SeqCst));
        assert!(
            from == WorkerState::Active || prev.in_state(from) >= 1,
            "transition {from:?} -> {to:?} from {prev:?}"
        );
        WorkerCounts(prev.0.wrapping_add(add).wrapping_sub(sub)).checked()
    }

    /// Parks the calling (active) worker only if, after parking, the active level
    /// stays at least `floor`. This is how surplus workers park without two of them
    /// racing the level below the number of contexts.
    pub fn try_park_surplus(&self, floor: usize, count_sys_inactive: bool) -> bool {
        let mut cur = self.0.load(Ordering::SeqCst);
        loop {
            let c = WorkerCounts(cur);
            if c.active_level(count_sys_inactive) <= floor {
                return false;
            }
            let next = cur + Field::Parked.one();
            match self
                .0
                .compare_exchange_weak(cur, next, Ordering::SeqCst, Ordering::SeqCst)
            {
                Ok(_) => {
                    WorkerCounts(next).checked();
                    return true;
                }
                Err(actual) => cur = actual,
            }
        }
    }
}

impl Default for AtomicWorkerCounts {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_do_not_overlap() {
        let fields = [
            Field::Total,
            Field::Blocked,
            Field::InactiveByUser,
            Field::WaitingForGraph,
            Field::Parked,
        ];
        for (i, a) in fields.iter().enumerate() {
            let mask_a = FIELD_MASK << a.shift();
            assert!(a.shift() + FIELD_BITS <= 64);
            for b in &fields[i + 1..] {
                assert_eq!(
                    mask_a & (FIELD_MASK << b.shift()),
                    0,
                    "{a:?} overlaps {b:?}"
                );
            }
        }
    }

    #[test]
    fn transitions_keep_totals() {
        let c = AtomicWorkerCounts::new();
        for _ in 0..5 {
            c.add_worker();
        }
        c.transition(WorkerState::Active, WorkerState::Blocked);
        c.transition(WorkerState::Active, WorkerState::Parked);
        c.transition(WorkerState::Active, WorkerState::WaitingForGraph);
        let s = c.transition(WorkerState::Active, WorkerState::InactiveByUser);
        assert_eq!(s.total(), 5);
        assert_eq!(s.active_strict(), 1);
        assert_eq!(
            s.active_level(false),
            3,
            "nosys counts blocked and user-inactive"
        );
        let s = c.transition(WorkerState::Blocked, WorkerState::Active);
        assert_eq!((s.blocked(), s.active_strict()), (0, 2));
        let s = c.transition(WorkerState::Parked, WorkerState::Active);
        assert_eq!((s.parked(), s.active_strict()), (0, 3));
        let s = c.remove_worker(WorkerState::WaitingForGraph);
        assert_eq!((s.total(), s.waiting_for_graph()), (4, 0));
    }

    #[test]
    fn field_maximum_does_not_carry() {
        let c = AtomicWorkerCounts::new();
        for _ in 0..WORKERS_MAX_LIMIT {
            c.add_worker();
        }
        for _ in 0..WORKERS_MAX_LIMIT {
            c.transition(WorkerState::Active, WorkerState::Parked);
        }
        let s = c.load();
        assert_eq!(s.total(), WORKERS_MAX_LIMIT);
        assert_eq!(s.parked(), WORKERS_MAX_LIMIT);
        assert_eq!(s.blocked(), 0);
        assert_eq!(s.active_strict(), 0);
        assert!(c.try_add_worker(usize::MAX).is_none());
    }

    #[test]
    fn try_add_respects_cap() {
        let c = AtomicWorkerCounts::new();
        assert!(c.try_add_worker(2).is_some());
        assert!(c.try_add_worker(2).is_some());
        assert!(c.try_add_worker(2).is_none());
    }

    #[test]
    fn admission_below_the_level_takes_only_free_contexts() {
        let c = AtomicWorkerCounts::new();
        c.add_worker();
        c.transition(WorkerState::Active, WorkerState::Parked);
        // One parked worker: two contexts free.
        assert!(c.try_add_active_below(2, true, 64).is_some());
        assert!(c.try_add_active_below(2, true, 64).is_some());
        assert!(c.try_add_active_below(2, true, 64).is_none());
        // A blocked caller frees its context (not under nosys accounting).
        c.transition(WorkerState::Active, WorkerState::Blocked);
        assert!(c.try_add_active_below(2, false, 64).is_none());
        assert!(c.try_add_active_below(2, true, 64).is_some());
        // The cap on threads holds too.
        assert!(c.try_add_active_below(100, true, 4).is_none());
        assert_eq!(c.load().total(), 4);
    }

    #[test]
    fn surplus_park_keeps_floor() {
        let c = AtomicWorkerCounts::new();
        for _ in 0..3 {
            c.add_worker();
        }
        assert!(c.try_park_surplus(2, true));
        assert!(!c.try_park_surplus(2, true));
        assert_eq!(c.load().active_strict(), 2);
    }

    #[test]
    #[should_panic(expected = "transition")]
    fn leaving_an_empty_state_panics() {
        let c = AtomicWorkerCounts::new();
        c.add_worker();
        c.transition(WorkerState::Blocked, WorkerState::Active);
    }
}
