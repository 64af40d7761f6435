//! Decay within a class (PROTOCOL.md, "Decay within a class"): a statement
//! that has just arrived starts before the backlog of a long statement of
//! the same class, within a few tasks of the worker that starts it — event
//! counts, not wall time.

use std::cell::Cell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use maestro_scheduler::{ClassSpec, DEFAULT_PRIORITY, Scheduler, SchedulerConfig, TaskGraph};

const HANG_DEADLINE: Duration = Duration::from_secs(120);

fn until(what: &str, cond: impl Fn() -> bool) {
    let deadline = Instant::now() + HANG_DEADLINE;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn spin(iterations: u64) -> u64 {
    let mut x = 1u64;
    for i in 0..iterations {
        x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
    }
    x
}

thread_local! {
    /// Pieces of the long statement this thread ran after the short one was
    /// submitted.
    static LONG_AFTER: Cell<usize> = const { Cell::new(0) };
}

/// 3 contexts: two running a long `olap` statement (2 000 pieces in the
/// pools), one taken by a heavy class (weight 9) that arrives after `olap`
/// has started: `olap` is over its share (0.3 contexts) from then on — its
/// pass grows twice a unit of time per unit of time against the heavy
/// class's ninth, from above (a class that arrives later starts at most
/// `SHARE_LAG_MAX_NS` behind) — so without decay a worker finishing a piece
/// takes the next piece, and a new `olap` root waits for the whole backlog
/// (checked: with the decay off, the short statement starts after the last
/// piece). The order of arrival is what makes it deterministic: with the
/// heavy class running first, a delay before `olap` started (a loaded CI
/// machine) left `olap` below its share, and the share rule, not the decay,
/// started the short statement.
#[test]
fn a_new_statement_starts_within_a_few_tasks_of_a_long_ones_backlog() {
    const PIECES: usize = 2000;
    let s = Arc::new(Scheduler::new(SchedulerConfig::single_pool().with_contexts(3)).unwrap());
    let heavy = s.define_class(&ClassSpec::new("heavy", 9)).unwrap();
    let olap = s.define_class(&ClassSpec::new("olap", 1)).unwrap();
    let release = Arc::new(AtomicBool::new(false));

    let done = Arc::new(AtomicUsize::new(0));
    let submitted = Arc::new(AtomicBool::new(false));
    let heavy_spawned = Arc::new(AtomicBool::new(false));
    let gate_taken = Arc::new(AtomicBool::new(false));
    // (pieces its thread ran after the submission, pieces done in all) when
    // the short statement started.
    let started: Arc<parking_lot::Mutex<Option<(usize, usize)>>> = Default::default();
    let mut g = TaskGraph::new();
    let root = g.add(|| {});
    for _ in 0..PIECES {
        let (s2, done, submitted, started, release) = (
            s.clone(),
            done.clone(),
            submitted.clone(),
            started.clone(),
            release.clone(),
        );
        let (heavy_spawned, gate_taken) = (heavy_spawned.clone(), gate_taken.clone());
        let piece = g.add(move || {
            // The first piece to start after the heavy class arrived waits
            // for the short statement: it keeps a second worker in `olap`
            // and the backlog from draining however slowly the waiting
            // piece's thread runs (one piece only, so the third worker stays
            // free to start the heavy class).
            if heavy_spawned.load(Ordering::SeqCst)
                && !submitted.load(Ordering::SeqCst)
                && !gate_taken.swap(true, Ordering::SeqCst)
            {
                let deadline = Instant::now() + HANG_DEADLINE;
                while !submitted.load(Ordering::SeqCst) {
                    assert!(Instant::now() < deadline, "the short statement submitted");
                    std::hint::spin_loop();
                }
            }
            spin(20_000);
            if submitted.load(Ordering::SeqCst) {
                LONG_AFTER.with(|c| c.set(c.get() + 1));
            }
            if done.fetch_add(1, Ordering::SeqCst) == 10 {
                // The heavy class arrives now; a worker finishing an `olap`
                // piece starts it (it is below its share).
                s2.spawn_detached_in(heavy, DEFAULT_PRIORITY, move || {
                    while !release.load(Ordering::SeqCst) {
                        std::thread::sleep(Duration::from_micros(200));
                    }
                });
                heavy_spawned.store(true, Ordering::SeqCst);
                let deadline = Instant::now() + HANG_DEADLINE;
                while s2.class_stats()[heavy.index()].running < 1 {
                    assert!(Instant::now() < deadline, "the heavy class holds a worker");
                    std::hint::spin_loop();
                }
                // Both workers in `olap`: the one that finishes a piece then
                // sees its class over its share (one worker left in it
                // against 3 × 1/10), so only the decay starts a new root.
                while s2.class_stats()[olap.index()].running < 2 {
                    assert!(Instant::now() < deadline, "a second worker in olap");
                    std::hint::spin_loop();
                }
                submitted.store(true, Ordering::SeqCst);
                let done = done.clone();
                s2.spawn_detached_in(olap, DEFAULT_PRIORITY, move || {
                    let here = LONG_AFTER.with(Cell::get);
                    *started.lock() = Some((here, done.load(Ordering::SeqCst)));
                });
            }
        });
        g.edge(root, piece);
    }
    let long = maestro_scheduler::with_class(olap, || s.submit(g).unwrap());
    until("the short statement starts", || started.lock().is_some());
    release.store(true, Ordering::SeqCst);
    long.wait().unwrap();

    let (here, done_then) = started.lock().unwrap();
    assert!(
        here <= 4 + 1,
        "the short statement waited for {here} pieces on its worker (decay after 4)"
    );
    assert!(
        done_then < PIECES / 2,
        "it started after {done_then} of {PIECES} pieces: before the backlog"
    );
    assert!(s.class_stats()[olap.index()].decayed >= 1);
}
