//! Test support: one scheduler for the crate's tests, an executor per
//! granularity policy, and seeded random tables; plus the operator tests, each
//! against a naive single-threaded reference.

mod fixture;
mod test_agg;
mod test_cancel;
mod test_graph;
mod test_join;
mod test_policy;
mod test_project;
mod test_select;
mod test_sort;

use std::sync::{Arc, OnceLock};

use maestro_scheduler::{Scheduler, SchedulerConfig};

use crate::{ExecContext, Executor, Granularity};

pub(crate) use fixture::Fixture;

/// Small tasks so that the test tables (thousands of rows) split many ways.
pub(crate) const TEST_MIN_ROWS: usize = 64;

pub(crate) fn scheduler() -> Arc<Scheduler> {
    static S: OnceLock<Arc<Scheduler>> = OnceLock::new();
    S.get_or_init(|| {
        let cfg = SchedulerConfig::single_hints().with_contexts(4);
        Arc::new(Scheduler::new(cfg).expect("scheduler starts"))
    })
    .clone()
}

/// The policies every operator test runs under.
pub(crate) const POLICIES: [&str; 6] = [
    "fixed:1", "fixed:3", "fixed:8", "static", "hint", "adaptive",
];

pub(crate) fn executor(policy: &str) -> Executor {
    let g: Granularity = policy.parse().expect("a valid policy");
    Executor::new(scheduler(), g).with_min_rows_per_task(TEST_MIN_ROWS)
}

/// Runs `f` under every policy, three runs each (so that `adaptive` grows),
/// and checks that each run reported its operators.
pub(crate) fn for_each_policy(mut f: impl FnMut(&ExecContext)) {
    for policy in POLICIES {
        let exec = executor(policy);
        for _ in 0..3 {
            let ctx = exec.context("test");
            f(&ctx);
            let profile = ctx.finish();
            assert!(!profile.ops.is_empty(), "{policy}: no operator reported");
            assert!(profile.ops.iter().all(|o| o.calls > 0));
        }
    }
}
