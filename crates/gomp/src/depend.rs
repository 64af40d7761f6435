//! Dependences between sibling tasks (`depend` clauses), as far as a
//! `detach`ed task makes them matter.
//!
//! Without `detach`, a task with dependences runs at once in its creator when
//! none of its earlier siblings is still pending (see the `task` module): every
//! earlier sibling it could depend on has then finished. A task with `detach`
//! does not complete when its body returns but when its event is also fulfilled
//! (`omp_fulfill_event`), maybe much later and maybe by a task created after
//! it. So a parent's [`DepTable`] lists its children with dependences that have
//! not completed yet (*pending*: a detached task waiting for its event, or a
//! task blocked behind one, or such a blocked task released and not finished),
//! with their dependences. A new sibling whose dependences conflict with a
//! pending entry is *blocked*: its record is made, counted in its parent, group
//! and team (so that `taskwait`, taskgroup ends, barriers and the join wait for
//! it), but queued nowhere; each conflicting entry lists it as a successor, and
//! its record counts its blockers. When an entry completes
//! ([`DepTable::complete`]), each successor's blocker count drops, and a
//! successor whose count reaches zero is queued in its parent's children, its
//! taskgroup and its team like any deferred task. A task that must not be
//! deferred (`if(0)`, `final`, past the throttle, outside a region) and
//! `taskwait depend(…)` instead wait until no pending entry conflicts
//! ([`DepTable::wait_for`]), running the waiter's own queued children meanwhile
//! (OpenMP's task scheduling constraint allows nothing else).
//!
//! Conflict: two dependences on one address of which at least one is `out`
//! (`inout`, `mutexinoutset` and `inoutset` count as `out`: more ordering than
//! required, never less, as libgomp does for `mutexinoutset`), or an `out` on
//! address 0 (`omp_all_memory`), which conflicts with every dependence.
//!
//! Why no wake-up is lost in `wait_for`: everything that can end the wait
//! happens in `complete` under the table's mutex — the entry goes, released
//! successors are queued (in the waiter's children among others), and the
//! table's `generation` moves — and the waiter reads `generation` under that
//! mutex before it looks at its children, then sleeps only if `generation` has
//! not moved, registered in `waiters` under the same mutex. Its children are
//! queued by nobody else meanwhile: only the waiter itself creates them.
//!
//! Lock order: the table's mutex before a wait set's or the team's (a release
//! queues under the table's mutex); nothing takes the table's mutex while
//! holding one of those.

use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};

use smallvec::SmallVec;

use maestro_scheduler::sync::{Condvar, Mutex};

use crate::record::TaskRef;
use crate::runtime;
use crate::task::{self, WaitSet};

/// One `depend` item: an address and whether the task may write it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Dep {
    pub addr: usize,
    pub out: bool,
}

/// A task's dependences (most tasks name a few).
pub(crate) type Deps = SmallVec<[Dep; 4]>;

/// Dependence kinds in an `omp_depend_t` object (GCC's `gomp-constants.h`).
const DEPEND_IN: usize = 1;
const DEPEND_OUT: usize = 2;
const DEPEND_INOUT: usize = 3;
const DEPEND_MUTEXINOUTSET: usize = 4;
const DEPEND_INOUTSET: usize = 5;

/// Reads GCC's `depend` array. Two layouts: if `depend[0]` is non-zero, it is
/// the number of items `n`, `depend[1]` the number of `out`/`inout` ones, and
/// `depend[2..2 + n]` the addresses, `out` ones first. Otherwise `depend[1]` is
/// `n`, `depend[2..5]` the numbers of `out`/`inout`, `mutexinoutset` and `in`
/// items, whose addresses follow from `depend[5]` in that order, and the rest of
/// the `n` words point to `omp_depend_t` objects (`depobj`: address, kind).
///
/// # Safety
/// `depend` is such an array, as GCC emits it for a `task` or `taskwait`.
pub(crate) unsafe fn parse(depend: *const *mut c_void) -> Deps {
    // SAFETY: the caller guarantees the array holds every word read below.
    let word = |i: usize| unsafe { *depend.add(i) } as usize;
    let mut deps = Deps::new();
    if word(0) != 0 {
        let (n, nout) = (word(0), word(1));
        for i in 0..n {
            deps.push(Dep {
                addr: word(2 + i),
                out: i < nout,
            });
        }
        return deps;
    }
    let (n, nout, nmutex, nin) = (word(1), word(2), word(3), word(4));
    let plain = nout + nmutex + nin;
    for i in 0..plain.min(n) {
        deps.push(Dep {
            addr: word(5 + i),
            out: i < nout + nmutex,
        });
    }
    for i in plain..n {
        let obj = word(5 + i) as *const usize;
        // SAFETY: GCC passes a pointer to an initialized `omp_depend_t`, two
        // words: the address and the kind.
        let (addr, kind) = unsafe { (*obj, *obj.add(1)) };
        let out = match kind {
            DEPEND_IN => false,
            DEPEND_OUT | DEPEND_INOUT | DEPEND_MUTEXINOUTSET | DEPEND_INOUTSET => true,
            _ => runtime::fatal(&format!("unknown omp_depend_t dependence type {kind}")),
        };
        deps.push(Dep { addr, out });
    }
    deps
}

/// Whether a task with dependences `a` must be ordered after (or before) one
/// with `b`.
pub(crate) fn conflict(a: &[Dep], b: &[Dep]) -> bool {
    let all_memory = |d: &[Dep]| d.iter().any(|x| x.out && x.addr == 0);
    if (all_memory(a) && !b.is_empty()) || (all_memory(b) && !a.is_empty()) {
        return true;
    }
    a.iter()
        .any(|x| b.iter().any(|y| x.addr == y.addr && (x.out || y.out)))
}

/// The pending children with dependences of one task (see the module docs).
pub(crate) struct DepTable {
    state: Mutex<DepState>,
    cv: Condvar,
    /// Entry numbers. Relaxed: only the table's task draws them (one thread).
    next_id: AtomicU64,
}

#[derive(Default)]
struct DepState {
    /// Pending entries, in creation order.
    entries: Vec<Entry>,
    /// Moves whenever an entry completes (see the module docs).
    generation: u64,
    waiters: usize,
}

struct Entry {
    id: u64,
    deps: Deps,
    /// Blocked tasks that wait for this entry (among others, maybe).
    successors: Vec<TaskRef>,
}

impl DepState {
    fn conflicts(&self, deps: &[Dep]) -> bool {
        self.entries.iter().any(|e| conflict(&e.deps, deps))
    }
}

impl Default for DepTable {
    fn default() -> Self {
        Self::new()
    }
}

impl DepTable {
    pub fn new() -> DepTable {
        DepTable {
            state: Mutex::new(DepState::default()),
            cv: Condvar::new(),
            next_id: AtomicU64::new(0),
        }
    }

    /// A number for a new entry (drawn before its record is made).
    pub fn new_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Whether a task with `deps` would be blocked now.
    pub fn conflicts(&self, deps: &[Dep]) -> bool {
        self.state.lock().conflicts(deps)
    }

    /// Adds entry `id` with `deps`, pending until [`DepTable::complete`]`(id)`.
    /// `blocked`: the entry's task, if it may wait for earlier entries; it
    /// becomes a successor of each one it conflicts with. Returns how many
    /// (the task's blocker count is set to it first); with no `blocked` task
    /// the caller has made sure nothing conflicts.
    pub fn register(&self, id: u64, deps: Deps, blocked: Option<&TaskRef>) -> usize {
        let mut s = self.state.lock();
        let mut blockers = 0;
        if let Some(t) = blocked {
            for e in s.entries.iter_mut() {
                if conflict(&e.deps, &deps) {
                    e.successors.push(t.clone());
                    blockers += 1;
                }
            }
            t.set_blockers(blockers);
        }
        s.entries.push(Entry {
            id,
            deps,
            successors: Vec::new(),
        });
        blockers
    }

    /// Entry `id`'s task completed: the entry goes, and successors left with no
    /// blocker are queued to run (they have counted in their parent, group and
    /// team since their creation). Called before the task's completion is
    /// signalled to its own parent, group and team.
    pub fn complete(&self, id: u64) {
        let mut s = self.state.lock();
        let Some(pos) = s.entries.iter().position(|e| e.id == id) else {
            runtime::fatal("task dependences: completing a task that is not pending");
        };
        let entry = s.entries.remove(pos);
        for t in entry.successors {
            if t.unblock() {
                task::release(t);
            }
        }
        s.generation += 1;
        if s.waiters > 0 {
            self.cv.notify_all();
        }
    }

    /// Waits until no pending entry conflicts with `deps`, running the
    /// waiter's queued `children` meanwhile (see the module docs for why no
    /// wake-up is lost).
    pub fn wait_for(&self, deps: &[Dep], children: Option<&WaitSet>) {
        loop {
            let generation = {
                let s = self.state.lock();
                if !s.conflicts(deps) {
                    return;
                }
                s.generation
            };
            if let Some(t) = children.and_then(WaitSet::pop_queued) {
                task::execute(t);
                continue;
            }
            let mut s = self.state.lock();
            if s.generation == generation {
                s.waiters += 1;
                self.cv.wait(&mut s);
                s.waiters -= 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(addr: usize, out: bool) -> Dep {
        Dep { addr, out }
    }

    #[test]
    fn conflicts_need_one_out_on_a_shared_address() {
        assert!(!conflict(&[d(8, false)], &[d(8, false)]));
        assert!(conflict(&[d(8, true)], &[d(8, false)]));
        assert!(conflict(&[d(8, false)], &[d(8, true)]));
        assert!(conflict(&[d(8, true)], &[d(8, true)]));
        assert!(!conflict(&[d(8, true)], &[d(16, true)]));
        assert!(conflict(
            &[d(16, false), d(8, true)],
            &[d(24, true), d(8, false)]
        ));
        assert!(!conflict(&[], &[d(8, true)]));
    }

    #[test]
    fn all_memory_conflicts_with_every_dependence() {
        assert!(conflict(&[d(0, true)], &[d(8, false)]));
        assert!(conflict(&[d(8, false)], &[d(0, true)]));
        assert!(!conflict(&[d(0, true)], &[]));
    }

    #[test]
    fn parses_both_layouts_and_depobjs() {
        let (a, b, c) = (0x100usize, 0x200usize, 0x300usize);
        // Old layout: 3 items, 1 out first.
        let old: [usize; 5] = [3, 1, a, b, c];
        // SAFETY: a well-formed array of the old layout.
        let deps = unsafe { parse(old.as_ptr().cast()) };
        assert_eq!(deps.as_slice(), &[d(a, true), d(b, false), d(c, false)]);
        // New layout: 4 items: 1 out, 1 mutexinoutset, 1 in, 1 depobj (in).
        let obj: [usize; 2] = [0x400, DEPEND_IN];
        let new: [usize; 9] = [0, 4, 1, 1, 1, a, b, c, obj.as_ptr() as usize];
        // SAFETY: a well-formed array of the new layout.
        let deps = unsafe { parse(new.as_ptr().cast()) };
        assert_eq!(
            deps.as_slice(),
            &[d(a, true), d(b, true), d(c, false), d(0x400, false)]
        );
    }

    #[test]
    fn entries_conflict_until_completed() {
        let t = DepTable::new();
        let id = t.new_id();
        t.register(id, [d(8, true)].into_iter().collect(), None);
        assert!(t.conflicts(&[d(8, false)]));
        assert!(!t.conflicts(&[d(16, false)]));
        t.complete(id);
        assert!(!t.conflicts(&[d(8, false)]));
        // Nothing conflicts: the wait returns at once.
        t.wait_for(&[d(8, true)], None);
    }
}
