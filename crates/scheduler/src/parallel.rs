//! `parallel_for` for partitionable operations (paper §6): the number of tasks is
//! capped by the concurrency hint when the loop starts, and a running piece *splits*
//! its remaining range in two whenever the hint's estimate of free contexts says a
//! core is idle (and fewer pieces than contexts are live), so that an operation
//! started coarse on a busy machine spreads out when the machine frees up
//! (TBB-style lazy splitting).
//!
//! Why "free contexts ≥ ½" and not "hint > pieces": the hint counts *free* contexts,
//! and the loop's own pieces occupy some, so while the loop runs the hint can never
//! exceed `contexts − pieces`. On 2 contexts a one-piece loop would never see the
//! hint reach 2 (measured: zero splits); an idle core shows as a free-context EMA of
//! at least ½ (one sample after the machine frees up, with a = 0.5).

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::join::join;
use crate::shared::Shared;
use crate::stats::Counters;

/// What a `parallel_for` did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ParallelForStats {
    /// Tasks created at the start (min of the hint and the number of grains).
    pub initial_tasks: usize,
    /// Pieces split off later because the hint rose.
    pub splits: usize,
}

/// Where a piece asks for the current task limit.
pub(crate) trait HintSource: Sync {
    /// Tasks to create at the start.
    fn hint(&self) -> usize;
    /// The unrounded estimate of free contexts (0 when the hint is pinned: a pinned
    /// hint never rises, so nothing splits).
    fn free_contexts(&self) -> f64;
    /// Live pieces never exceed this (the contexts).
    fn max_pieces(&self) -> usize;
}

impl HintSource for Shared {
    fn hint(&self) -> usize {
        self.concurrency_hint()
    }
    fn free_contexts(&self) -> f64 {
        self.free_contexts_estimate()
    }
    fn max_pieces(&self) -> usize {
        // A statement's class may cap its parallelism (`class.rs`).
        self.config.contexts.min(self.concurrency_hint_cap())
    }
}

/// Splitting threshold on the free-context estimate (module docs).
const SPLIT_FREE_CONTEXTS: f64 = 0.5;

struct Loop<'a, F, H: ?Sized> {
    body: &'a F,
    grain: usize,
    hint: &'a H,
    live_pieces: AtomicUsize,
    splits: AtomicUsize,
}

/// Runs `body` over `range` in chunks of at most `grain` items. Must run on a worker
/// for parallelism (the caller, `Scheduler::parallel_for`, installs it on one).
pub(crate) fn run<F, H>(range: Range<usize>, grain: usize, hint: &H, body: &F) -> ParallelForStats
where
    F: Fn(Range<usize>) + Sync,
    H: HintSource + ?Sized,
{
    let grain = grain.max(1);
    let len = range.end.saturating_sub(range.start);
    if len == 0 {
        return ParallelForStats::default();
    }
    let tasks = hint.hint().max(1).min(len.div_ceil(grain));
    let lp = Loop {
        body,
        grain,
        hint,
        live_pieces: AtomicUsize::new(tasks),
        splits: AtomicUsize::new(0),
    };
    partition(&lp, range, tasks);
    ParallelForStats {
        initial_tasks: tasks,
        splits: lp.splits.load(Ordering::Relaxed),
    }
}

/// Splits `range` into `pieces` near-equal pieces by recursive `join`.
fn partition<F, H>(lp: &Loop<'_, F, H>, range: Range<usize>, pieces: usize)
where
    F: Fn(Range<usize>) + Sync,
    H: HintSource + ?Sized,
{
    if pieces <= 1 {
        piece(lp, range);
        return;
    }
    let left = pieces / 2;
    let len = range.end - range.start;
    let mid = range.start + len * left / pieces;
    join(
        || partition(lp, range.start..mid, left),
        || partition(lp, mid..range.end, pieces - left),
    );
}

fn piece<F, H>(lp: &Loop<'_, F, H>, range: Range<usize>)
where
    F: Fn(Range<usize>) + Sync,
    H: HintSource + ?Sized,
{
    run_chunks(lp, range);
    let before = lp.live_pieces.fetch_sub(1, Ordering::Relaxed);
    debug_assert!(before >= 1, "parallel_for: live pieces underflow");
}

impl<F, H: HintSource + ?Sized> Loop<'_, F, H> {
    /// Counts one more live piece if that stays within the bound. One CAS, so
    /// two pieces deciding at once cannot both take the last free place (a
    /// load-then-add lets both see `max − 1` and go to `max + 1`).
    fn try_add_piece(&self) -> bool {
        let max = self.hint.max_pieces();
        match self
            .live_pieces
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |live| {
                (live < max).then_some(live + 1)
            }) {
            Ok(before) => {
                debug_assert!(before < max, "parallel_for: live pieces exceed the bound");
                true
            }
            Err(_) => false,
        }
    }
}

fn run_chunks<F, H>(lp: &Loop<'_, F, H>, range: Range<usize>)
where
    F: Fn(Range<usize>) + Sync,
    H: HintSource + ?Sized,
{
    let mut cur = range.start;
    while cur < range.end {
        let remaining = range.end - cur;
        // The new piece is counted before it exists (so its decrement at its
        // end never precedes the increment) and only if the bound allows it.
        if remaining >= 2 * lp.grain
            && lp.hint.free_contexts() >= SPLIT_FREE_CONTEXTS
            && lp.try_add_piece()
        {
            lp.splits.fetch_add(1, Ordering::Relaxed);
            let mid = cur + remaining / 2;
            join(|| run_chunks(lp, cur..mid), || piece(lp, mid..range.end));
            return;
        }
        let end = (cur + lp.grain).min(range.end);
        (lp.body)(cur..end);
        cur = end;
    }
}

pub(crate) fn record(shared: &Shared, s: ParallelForStats) {
    Counters::add(
        &shared.stats.parallel_for_tasks,
        (s.initial_tasks + s.splits) as u64,
    );
    Counters::add(&shared.stats.parallel_for_splits, s.splits as u64);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Hint, free contexts (in whole units), max pieces.
    struct FixedHint(AtomicUsize, AtomicUsize, usize);
    impl HintSource for FixedHint {
        fn hint(&self) -> usize {
            self.0.load(Ordering::Relaxed)
        }
        fn free_contexts(&self) -> f64 {
            self.1.load(Ordering::Relaxed) as f64
        }
        fn max_pieces(&self) -> usize {
            self.2
        }
    }

    #[test]
    fn covers_every_index_once_without_a_worker() {
        let seen = Mutex::new(vec![0u8; 1000]);
        let h = FixedHint(AtomicUsize::new(7), AtomicUsize::new(0), 8);
        let s = run(3..1000, 10, &h, &|r: Range<usize>| {
            let mut v = seen.lock().unwrap();
            for i in r {
                v[i] += 1;
            }
        });
        assert_eq!(s.initial_tasks, 7);
        let v = seen.into_inner().unwrap();
        assert!(v[..3].iter().all(|&x| x == 0));
        assert!(v[3..].iter().all(|&x| x == 1));
    }

    #[test]
    fn splits_when_the_hint_rises() {
        let h = FixedHint(AtomicUsize::new(1), AtomicUsize::new(0), 4);
        let count = AtomicUsize::new(0);
        let s = run(0..1024, 8, &h, &|r: Range<usize>| {
            if count.fetch_add(r.len(), Ordering::Relaxed) == 0 {
                // The machine frees up after the first chunk.
                h.1.store(3, Ordering::Relaxed);
            }
        });
        assert_eq!(s.initial_tasks, 1);
        // Three splits bring the pieces to the cap of 4; run sequentially (no
        // worker), finished pieces free room for further splits of the remaining ones.
        assert!(s.splits >= 3, "{s:?}");
        assert_eq!(count.load(Ordering::Relaxed), 1024);
    }

    #[test]
    fn no_split_without_free_contexts() {
        let h = FixedHint(AtomicUsize::new(1), AtomicUsize::new(0), 4);
        let s = run(0..1024, 8, &h, &|_| {});
        assert_eq!(
            s,
            ParallelForStats {
                initial_tasks: 1,
                splits: 0
            }
        );
    }

    /// Splitting allowed all the time, at most `max` pieces.
    struct AlwaysFree(usize);
    impl HintSource for AlwaysFree {
        fn hint(&self) -> usize {
            1
        }
        fn free_contexts(&self) -> f64 {
            1.0
        }
        fn max_pieces(&self) -> usize {
            // Widens any window between a piece's look at the count and its
            // update (a preemption there is what makes the race real).
            std::thread::yield_now();
            self.0
        }
    }

    /// Many loops that split as fast as they can on 4 workers (more than the
    /// cores here, so pieces are preempted mid-decision): every index runs
    /// exactly once, and the debug assertions on the live-piece count (never
    /// above the bound, never below zero) hold. The seeds are printed.
    #[test]
    fn splitting_stress_keeps_the_live_piece_bound() {
        let base_seed = fastrand::u64(..);
        println!("splitting_stress base seed {base_seed}");
        let s =
            crate::Scheduler::new(crate::SchedulerConfig::single_pool().with_contexts(4)).unwrap();
        for round in 0..200u64 {
            let seed = base_seed.wrapping_add(round);
            let mut rng = fastrand::Rng::with_seed(seed);
            let len = rng.usize(1..3000);
            let grain = rng.usize(1..8);
            let max = rng.usize(1..4);
            let seen: Vec<std::sync::atomic::AtomicU8> = (0..len)
                .map(|_| std::sync::atomic::AtomicU8::new(0))
                .collect();
            let h = AlwaysFree(max);
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                s.install(|| {
                    run(0..len, grain, &h, &|r: Range<usize>| {
                        for i in r {
                            seen[i].fetch_add(1, Ordering::Relaxed);
                        }
                    })
                })
            }));
            assert!(
                r.is_ok(),
                "seed {seed} (len {len}, grain {grain}, max pieces {max})"
            );
            let wrong = seen.iter().position(|x| x.load(Ordering::Relaxed) != 1);
            assert_eq!(wrong, None, "seed {seed}: an index ran not exactly once");
        }
    }

    #[test]
    fn never_more_tasks_than_grains() {
        let h = FixedHint(AtomicUsize::new(64), AtomicUsize::new(0), 64);
        let s = run(0..5, 2, &h, &|_| {});
        assert_eq!(s.initial_tasks, 3);
    }
}
