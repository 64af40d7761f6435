//! Cancellation of whole TPC-H queries: every query stops at its first
//! checkpoint under a cancelled token and leaves nothing behind — the same
//! executor then answers correctly and the scheduler holds no guest.

mod common;

use std::time::{Duration, Instant};

use maestro_execution::{ExecError, Executor, Granularity};
use maestro_scheduler::{CancelReason, CancelToken, Cancelled};
use maestro_tpch::queries::answers::{ANSWERS_SCALE_FACTOR, answer_sets, answers_dir};
use maestro_tpch::queries::{QUERY_COUNT, QueryParams, run_profiled_cancellable};

use common::{check_set, db, scheduler};

#[test]
fn every_query_stops_when_cancelled_and_the_engine_answers_right_after() {
    let s = scheduler();
    for policy in ["static", "hint", "adaptive"] {
        let exec = Executor::new(s.clone(), policy.parse::<Granularity>().unwrap())
            .with_min_rows_per_task(1024);
        for q in 1..=QUERY_COUNT {
            let params = QueryParams::validation(q, ANSWERS_SCALE_FACTOR).unwrap();
            let token = CancelToken::new();
            token.cancel();
            match run_profiled_cancellable(&exec, db(), &params, token) {
                Err(ExecError::Cancelled(Cancelled {
                    reason: CancelReason::Cancelled,
                })) => {}
                Err(e) => panic!("Q{q} under {policy}: expected a cancelled run, got {e}"),
                Ok(_) => panic!("Q{q} under {policy}: a cancelled query ran to its end"),
            }
        }
    }
    // Nothing was left behind: every worker goes idle (a guest that never
    // left, or a task still waiting, would stay counted), and every query
    // answers. The deadline only turns a hang into a failure.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let c = s.worker_counts();
        if c.parked() == c.total() {
            break;
        }
        assert!(Instant::now() < deadline, "workers never went idle: {c:?}");
        std::thread::sleep(Duration::from_millis(5));
    }
    let dir = answers_dir();
    for set in answer_sets(&dir)
        .unwrap()
        .iter()
        .filter(|s| s.set == "validation")
    {
        check_set(set, "hint", &dir).unwrap();
    }
}
