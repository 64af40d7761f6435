//! Partitioned execution on the scheduler: an operator splits its positions
//! `0..len` into ranges and runs a body per range as scheduler tasks, as many as
//! the granularity policy grants.
//!
//! - `fixed`, `static`, `adaptive`: exactly `n` near-equal ranges, one task each
//!   (`Scheduler::scope`; one range runs on the calling worker).
//! - `hint`: `Scheduler::parallel_for` over grains of the range: at most the
//!   concurrency hint tasks at the start, and running pieces split when the hint
//!   rises (ADMS 2013 §6). Per-range outputs are kept with their start and put
//!   back in order; per-task accumulators come from a free list, so a fold makes
//!   as many partial results as pieces ran at once, not one per grain.
//!
//! [`OpRun`] also times the operator and reports it to the context on drop.
//!
//! Cancellation: every task and every `hint` grain starts at a checkpoint of
//! the run's [`maestro_scheduler::CancelToken`], and a `fold` task checks again
//! between morsels of at most [`MAX_HINT_GRAIN`] positions, so a cancelled run
//! stops within one morsel of work per running task.

use std::cell::Cell;
use std::ops::Range;
use std::time::Instant;

use parking_lot::Mutex;

use crate::executor::ExecContext;
use crate::granularity::Granularity;
use crate::profile::{OpCall, OpId, OpKind};

/// Under `hint`, a range is cut into about this many grains per context, so that
/// running pieces have room to split.
const HINT_GRAINS_PER_CONTEXT: usize = 8;
/// Under `hint`, grains never exceed this many positions (unless a task's
/// minimum is larger).
pub(crate) const MAX_HINT_GRAIN: usize = 128 * 1024;

/// Under `hint`, a phase over partitions (merges) makes this many per context,
/// so that running pieces have room to split.
const HINT_PARTITIONS_PER_CONTEXT: usize = 4;

/// How one phase of an operator is cut into tasks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Schedule {
    /// Exactly this many tasks over near-equal ranges.
    Tasks(usize),
    /// `parallel_for` with this grain (tasks bounded by the hint, with splitting).
    Hint { grain: usize },
}

/// One call of an operator: its phases run through `map`/`fold`; the time, task
/// counts and rows are reported to the context when it is dropped.
pub(crate) struct OpRun<'c> {
    ctx: &'c ExecContext,
    op: OpId,
    kind: OpKind,
    start: Instant,
    rows_in: usize,
    rows_out: Cell<usize>,
    tasks: Cell<usize>,
    splits: Cell<usize>,
    dop: Cell<usize>,
    max_phase_tasks: Cell<usize>,
}

impl<'c> OpRun<'c> {
    pub(crate) fn new(ctx: &'c ExecContext, op: OpId, kind: OpKind, rows_in: usize) -> Self {
        OpRun {
            ctx,
            op,
            kind,
            start: Instant::now(),
            rows_in,
            rows_out: Cell::new(0),
            tasks: Cell::new(0),
            splits: Cell::new(0),
            dop: Cell::new(0),
            max_phase_tasks: Cell::new(0),
        }
    }

    pub(crate) fn ctx(&self) -> &'c ExecContext {
        self.ctx
    }

    /// Charges `bytes` the operator allocated to the statement (see
    /// [`ExecContext::charge`]).
    pub(crate) fn charge(&self, bytes: usize) {
        self.ctx.charge(bytes);
    }

    /// Charges the output of `rows` elements of `T`.
    pub(crate) fn charge_rows<T>(&self, rows: usize) {
        self.charge(rows.saturating_mul(std::mem::size_of::<T>()));
    }

    pub(crate) fn set_rows_out(&self, rows: usize) {
        self.rows_out.set(rows);
    }

    /// Runs `body` over ranges covering `0..len` (each of at least `min_per_task`
    /// positions where possible) and returns the outputs in range order.
    pub(crate) fn map<R, F>(&self, len: usize, min_per_task: usize, body: F) -> Vec<R>
    where
        R: Send,
        F: Fn(Range<usize>) -> R + Sync + Send,
    {
        if len == 0 {
            return Vec::new();
        }
        match self.schedule(len, min_per_task) {
            Schedule::Tasks(n) => self.run_tasks(len, n, &body),
            Schedule::Hint { grain } => {
                let out = Mutex::new(Vec::new());
                self.run_hint(len, grain, |r| {
                    let start = r.start;
                    let v = body(r);
                    out.lock().push((start, v));
                });
                let mut out = out.into_inner();
                out.sort_unstable_by_key(|(start, _)| *start);
                out.into_iter().map(|(_, v)| v).collect()
            }
        }
    }

    /// One output value per position of `0..len`, each range's written by
    /// `body` into that range of the output: one allocation of `len` values
    /// and no per-range parts to concatenate afterwards (a gather through a
    /// join's 600 000 row ids spent more time copying its parts together
    /// than computing them, CH Q10).
    pub(crate) fn fill<T, F>(&self, len: usize, min_per_task: usize, body: F) -> Vec<T>
    where
        T: Copy + Default + Send + Sync,
        F: Fn(Range<usize>, &mut [T]) + Sync + Send,
    {
        // Zero for the integers: fresh zeroed pages, faulted in by the tasks
        // that write them rather than cleared here.
        let mut out = vec![T::default(); len];
        let base = OutPtr(out.as_mut_ptr());
        let base = &base;
        self.map(len, min_per_task, move |r: Range<usize>| {
            assert!(r.end <= len, "range {r:?} past the output's {len} values");
            // SAFETY: `map` runs `body` on ranges that are disjoint and lie in
            // `0..len` (`run_tasks` cuts `0..len` into consecutive ranges,
            // `run_hint` hands out the pieces of `Scheduler::parallel_for`,
            // which splits a range into disjoint parts; the end is asserted
            // above), so no two tasks ever hold overlapping slices; `out` is
            // neither moved nor read until `map` returns, after every range
            // ran; `T: Copy` has no destructor a partial write could skip.
            let slice = unsafe { std::slice::from_raw_parts_mut(base.0.add(r.start), r.len()) };
            body(r, slice);
        });
        out
    }

    /// Folds ranges covering `0..len` into per-task accumulators made by `init`
    /// and returns them (unordered; none when `len == 0`).
    pub(crate) fn fold<A, I, F>(&self, len: usize, min_per_task: usize, init: I, body: F) -> Vec<A>
    where
        A: Send,
        I: Fn() -> A + Sync + Send,
        F: Fn(&mut A, Range<usize>) + Sync + Send,
    {
        if len == 0 {
            return Vec::new();
        }
        match self.schedule(len, min_per_task) {
            Schedule::Tasks(n) => {
                // A task's range is folded in morsels, with a cancellation
                // checkpoint before each (a fold may be called on pieces of a
                // range in any number, as `hint` does).
                let ctx = self.ctx;
                self.run_tasks(len, n, |r| {
                    let mut acc = init();
                    let mut start = r.start;
                    while start < r.end {
                        let end = r.end.min(start + MAX_HINT_GRAIN);
                        if start > r.start {
                            ctx.checkpoint();
                        }
                        body(&mut acc, start..end);
                        start = end;
                    }
                    acc
                })
            }
            Schedule::Hint { grain } => {
                // Free list: a grain takes an accumulator nobody is using (or makes
                // one) and puts it back, so at most one per concurrent piece exists.
                let pool: Mutex<Vec<A>> = Mutex::new(Vec::new());
                self.run_hint(len, grain, |r| {
                    let taken = pool.lock().pop();
                    let mut acc = taken.unwrap_or_else(&init);
                    body(&mut acc, r);
                    pool.lock().push(acc);
                });
                pool.into_inner()
            }
        }
    }

    /// How many partitions a partitioned phase over `units` items should use
    /// (each with at least `min_units`): the policy's task count, or under
    /// `hint` a few per context (the hint then bounds the tasks running them).
    pub(crate) fn partitions(&self, units: usize, min_units: usize) -> usize {
        let cap = units.div_ceil(min_units.max(1)).max(1);
        match self.ctx.granularity() {
            Granularity::Hint => (self.ctx.contexts() * HINT_PARTITIONS_PER_CONTEXT).clamp(1, cap),
            Granularity::Fixed(_) | Granularity::Static | Granularity::Adaptive => {
                self.ctx.tasks_for_units(self.op, units, min_units)
            }
        }
    }

    fn schedule(&self, len: usize, min_per_task: usize) -> Schedule {
        let requested = self.ctx.requested_tasks(self.op);
        self.dop.set(self.dop.get().max(requested));
        match self.ctx.granularity() {
            Granularity::Hint => {
                let contexts = self.ctx.contexts().max(1);
                let min = min_per_task.max(1);
                let grain = (len / (contexts * HINT_GRAINS_PER_CONTEXT))
                    .clamp(min, min.max(MAX_HINT_GRAIN));
                Schedule::Hint { grain }
            }
            Granularity::Fixed(_) | Granularity::Static | Granularity::Adaptive => {
                Schedule::Tasks(self.ctx.tasks_for_units(self.op, len, min_per_task))
            }
        }
    }

    fn count_phase(&self, tasks: usize, splits: usize) {
        self.tasks.set(self.tasks.get() + tasks);
        self.splits.set(self.splits.get() + splits);
        self.max_phase_tasks
            .set(self.max_phase_tasks.get().max(tasks));
    }

    /// `n` tasks over near-equal ranges of `0..len`; outputs in range order.
    fn run_tasks<R, F>(&self, len: usize, n: usize, body: F) -> Vec<R>
    where
        R: Send,
        F: Fn(Range<usize>) -> R + Sync + Send,
    {
        let n = n.clamp(1, len);
        self.count_phase(n, 0);
        // Every task starts at a cancellation checkpoint.
        let ctx = self.ctx;
        let body = move |r: Range<usize>| {
            ctx.checkpoint();
            body(r)
        };
        let ranges: Vec<Range<usize>> = (0..n).map(|i| len * i / n..len * (i + 1) / n).collect();
        let mut slots: Vec<Option<R>> = ranges.iter().map(|_| None).collect();
        let body = &body;
        if let Some(pool) = self.ctx.operator_pool() {
            // The papers' dispatcher pool: a single task runs in place on the
            // plan's thread, as an executor thread would run it.
            if n == 1 {
                return vec![body(0..len)];
            }
            pool.scope(|s| {
                for (slot, r) in slots.iter_mut().zip(ranges) {
                    s.spawn(move |_| *slot = Some(body(r)));
                }
            });
        } else {
            let sched = self.ctx.scheduler();
            if n == 1 {
                return vec![sched.install(|| body(0..len))];
            }
            sched.scope(|s| {
                let mut pairs = slots.iter_mut().zip(ranges);
                let first = pairs.next();
                for (slot, r) in pairs {
                    s.spawn(move |_| *slot = Some(body(r)));
                }
                if let Some((slot, r)) = first {
                    *slot = Some(body(r));
                }
            });
        }
        slots
            .into_iter()
            .map(|s| s.expect("every task of a scope ran"))
            .collect()
    }

    fn run_hint<F>(&self, len: usize, grain: usize, body: F)
    where
        F: Fn(Range<usize>) + Sync + Send,
    {
        let ctx = self.ctx;
        // Every grain starts at a cancellation checkpoint.
        let st = self.ctx.scheduler().parallel_for(0..len, grain, move |r| {
            ctx.checkpoint();
            body(r)
        });
        self.count_phase(st.initial_tasks + st.splits, st.splits);
    }
}

/// The start of [`OpRun::fill`]'s output, shared by its tasks.
struct OutPtr<T>(*mut T);

// SAFETY: the tasks only write disjoint ranges through the pointer (see
// `OpRun::fill`), so sharing it is sharing `&mut` to disjoint parts of one
// `Vec<T>`, which is `Send`/`Sync` exactly when `T` is `Send`.
unsafe impl<T: Send> Send for OutPtr<T> {}
// SAFETY: as for `Send`: no two threads access the same element.
unsafe impl<T: Send> Sync for OutPtr<T> {}

impl Drop for OpRun<'_> {
    fn drop(&mut self) {
        self.ctx.record(OpCall {
            op: self.op,
            kind: self.kind,
            rows_in: self.rows_in,
            rows_out: self.rows_out.get(),
            tasks: self.tasks.get(),
            splits: self.splits.get(),
            dop: self.dop.get(),
            max_phase_tasks: self.max_phase_tasks.get(),
            elapsed: self.start.elapsed(),
        });
    }
}
