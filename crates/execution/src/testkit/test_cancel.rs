//! Cancellation: a run whose token is cancelled mid-operator stops within a
//! morsel per running task, returns `ExecError::Cancelled`, and leaves the
//! scheduler as it found it. Event counts only, no clocks.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use maestro_scheduler::{CancelReason, CancelToken, Cancelled, Scheduler, SchedulerConfig};

use super::{POLICIES, TEST_MIN_ROWS, executor};
use crate::driver::{MAX_HINT_GRAIN, OpRun};
use crate::profile::OpKind;
use crate::{ExecError, Executor, Granularity};

/// Morsels in the folded range: many more than can run before a cancel is seen.
const MORSELS: usize = 200;
/// The morsel whose body cancels the run (as another thread would).
const CANCEL_AT: usize = 3;

/// Folds `MORSELS` morsels under `policy`, the `CANCEL_AT`-th cancelling the
/// token; returns the outcome and how many morsels ran in all.
fn fold_cancelled_midway(s: &Arc<Scheduler>, policy: &str) -> (Result<(), ExecError>, usize) {
    let g: Granularity = policy.parse().expect("a valid policy");
    let exec = Executor::new(s.clone(), g).with_min_rows_per_task(TEST_MIN_ROWS);
    let token = CancelToken::new();
    let ctx = exec.context_cancellable("cancel", token.clone());
    let ran = AtomicUsize::new(0);
    let outcome = exec.run_plan_cancellable(|| {
        let op = OpRun::new(&ctx, "fold", OpKind::Aggregate, MORSELS * MAX_HINT_GRAIN);
        // One position per "row" and a task minimum of one morsel: every
        // policy's tasks cover whole morsels.
        op.fold(
            MORSELS * MAX_HINT_GRAIN,
            MAX_HINT_GRAIN,
            || 0usize,
            |acc, r| {
                *acc += r.len();
                if ran.fetch_add(1, Ordering::SeqCst) + 1 == CANCEL_AT {
                    token.cancel();
                }
            },
        );
        Ok(())
    });
    (outcome, ran.load(Ordering::SeqCst))
}

#[test]
fn a_run_cancelled_mid_operator_stops_within_a_morsel_per_running_task() {
    // Its own scheduler: the crate's shared one sees other tests' panics.
    let cfg = SchedulerConfig::single_hints().with_contexts(4);
    let s = Arc::new(Scheduler::new(cfg).expect("scheduler starts"));
    let bound = CANCEL_AT + s.contexts() + s.config().workers_max.min(64);
    for policy in POLICIES {
        let panics_before = s.stats().task_panics;
        let (outcome, ran) = fold_cancelled_midway(&s, policy);
        match outcome {
            Err(ExecError::Cancelled(Cancelled {
                reason: CancelReason::Cancelled,
            })) => {}
            other => panic!("{policy}: expected a cancelled run, got {other:?}"),
        }
        assert!(
            ran >= CANCEL_AT && ran < bound.min(MORSELS),
            "{policy}: {ran} morsels ran; a cancel at morsel {CANCEL_AT} must stop the \
             rest of {MORSELS} (at most one more per running task)"
        );
        assert_eq!(
            s.stats().task_panics,
            panics_before,
            "{policy}: a cancelled task is not a panic"
        );
    }
}

#[test]
fn an_expired_timeout_stops_a_run_before_its_first_morsel() {
    let exec = executor("static");
    let ctx = exec.context_cancellable("timeout", CancelToken::with_timeout(Default::default()));
    let ran = AtomicUsize::new(0);
    let outcome = exec.run_plan_cancellable(|| {
        let op = OpRun::new(&ctx, "map", OpKind::Select, 10 * MAX_HINT_GRAIN);
        op.map(10 * MAX_HINT_GRAIN, MAX_HINT_GRAIN, |_| {
            ran.fetch_add(1, Ordering::SeqCst);
        });
        Ok(())
    });
    match outcome {
        Err(ExecError::Cancelled(Cancelled {
            reason: CancelReason::TimedOut,
        })) => {}
        other => panic!("expected a timed-out run, got {other:?}"),
    }
    assert_eq!(ran.load(Ordering::SeqCst), 0);
    assert_eq!(
        outcome_message(CancelReason::TimedOut),
        "query stopped: statement timeout"
    );
}

fn outcome_message(reason: CancelReason) -> String {
    ExecError::Cancelled(Cancelled { reason }).to_string()
}

#[test]
fn a_real_panic_in_a_cancellable_run_stays_a_panic() {
    let exec = executor("fixed:3");
    let ctx = exec.context_cancellable("panic", CancelToken::new());
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        exec.run_plan_cancellable(|| {
            let op = OpRun::new(&ctx, "map", OpKind::Select, 3 * MAX_HINT_GRAIN);
            op.map(3 * MAX_HINT_GRAIN, MAX_HINT_GRAIN, |r| {
                assert!(r.start > 0, "a bug in the first range");
            });
            Ok(())
        })
    }));
    assert!(r.is_err(), "the operator's panic must reach the caller");
}

/// A selection whose output exceeds the statement's memory limit stops the
/// run with the memory reason; without a limit the same run charges its
/// output (4 bytes per selected position) and succeeds.
#[test]
fn a_run_over_its_memory_limit_stops_with_the_memory_reason() {
    use super::Fixture;
    use crate::{CmpOp, Pred, select};
    use maestro_scheduler::StatementMemory;
    let fx = Fixture::new(10_000, 1);
    let pred = Pred::cmp(fx.q(), CmpOp::Ge, 0i64).unwrap(); // every row
    let exec = executor("static");
    let run = |limit: Option<u64>| {
        let token = CancelToken::for_statement(None, Some(StatementMemory::new(limit, None)));
        let ctx = exec.context_cancellable("memory", token);
        let outcome = exec.run_plan_cancellable(|| select(&ctx, "all", fx.n, &pred).map(|_| ()));
        (outcome, ctx.memory_charged())
    };
    let (free, charged) = run(None);
    assert!(free.is_ok(), "{free:?}");
    assert_eq!(charged, 4 * fx.n as u64, "one u32 per selected row");
    let (limited, _) = run(Some(charged / 2));
    match limited {
        Err(ExecError::Cancelled(Cancelled {
            reason: CancelReason::StatementMemoryLimit,
        })) => {}
        other => panic!("expected the memory limit to stop the run: {other:?}"),
    }
    let message = ExecError::Cancelled(Cancelled {
        reason: CancelReason::StatementMemoryLimit,
    })
    .to_string();
    assert_eq!(message, "query stopped: statement memory limit exceeded");
}
