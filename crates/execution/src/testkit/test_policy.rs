//! The granularity policies: task counts, profiles and adaptive growth.

use std::sync::Arc;

use super::{Fixture, TEST_MIN_ROWS, executor, scheduler};
use crate::{
    AdaptiveConfig, AdaptiveState, Agg, CmpOp, Granularity, Input, Pred, SearchPhase, aggregate,
    select,
};

#[test]
fn task_counts_follow_the_policy() {
    let contexts = scheduler().contexts();
    let rows = 100 * TEST_MIN_ROWS;
    for (policy, expected) in [
        ("fixed:1", 1),
        ("fixed:8", 8),
        ("static", contexts),
        ("adaptive", 1),
    ] {
        let ctx = executor(policy).context("tasks");
        assert_eq!(ctx.tasks_for("op", rows), expected, "{policy}");
        // Capped so that a task gets at least TEST_MIN_ROWS rows.
        assert_eq!(
            ctx.tasks_for("op", 2 * TEST_MIN_ROWS),
            expected.min(2),
            "{policy}"
        );
        assert_eq!(ctx.tasks_for("op", 0), 1, "{policy}");
    }
    let hint = executor("hint").context("tasks").tasks_for("op", rows);
    assert!((1..=contexts).contains(&hint), "{hint}");
}

#[test]
fn profiles_count_tasks_per_operator() {
    let fx = Fixture::new(20 * TEST_MIN_ROWS, 10);
    let p = Pred::cmp(fx.q(), CmpOp::Lt, 10i64).unwrap();
    for policy in ["fixed:1", "fixed:5", "static", "hint"] {
        let ctx = executor(policy).context("profile");
        select(&ctx, "sel", fx.n, &p).unwrap();
        select(&ctx, "sel", fx.n, &p).unwrap();
        let prof = ctx.finish();
        let op = prof.op("sel").unwrap();
        assert_eq!(op.calls, 2);
        assert_eq!(op.rows_in, 2 * fx.n as u64);
        match policy.parse::<Granularity>().unwrap() {
            Granularity::Fixed(n) => assert_eq!(op.tasks, 2 * n as u64, "{policy}"),
            Granularity::Static => assert_eq!(op.tasks, 2 * scheduler().contexts() as u64),
            _ => assert!(
                op.tasks >= 2 && op.tasks <= 2 * (scheduler().contexts() as u64 + op.splits)
            ),
        }
        assert_eq!(prof.tasks, op.tasks);
        assert_eq!(prof.granularity, policy);
    }
}

#[test]
fn adaptive_grows_an_operator_per_run_and_converges() {
    let fx = Fixture::new(200 * TEST_MIN_ROWS, 11);
    // A small max_dop bounds the search, so convergence within the runs below
    // does not depend on measured times: every run grows some operator until
    // none can grow (agg 1→3→5→7, cheap 1→3, capped at 2 tasks by its rows).
    let state = Arc::new(AdaptiveState::new(AdaptiveConfig {
        max_dop: 7,
        ..AdaptiveConfig::default()
    }));
    let exec = executor("adaptive").with_adaptive_state(state.clone());
    let filter = Pred::cmp(fx.q(), CmpOp::Lt, 40i64).unwrap();
    let mut dops = Vec::new();
    for _ in 0..20 {
        let ctx = exec.context("Qa");
        dops.push((ctx.requested_tasks("agg"), ctx.requested_tasks("cheap")));
        aggregate(
            &ctx,
            "agg",
            Input::filtered(fx.n, &filter),
            &[fx.k().into()],
            &[Agg::sum(fx.v())],
        )
        .unwrap();
        select(&ctx, "cheap", 2 * TEST_MIN_ROWS, &filter).unwrap();
        ctx.finish();
    }
    assert_eq!(dops[0], (1, 1));
    // The first run always sets the best time, so one operator grows by 2.
    assert!(dops[1] == (3, 1) || dops[1] == (1, 3), "{dops:?}");
    assert!(
        dops.iter()
            .all(|&(a, c)| a % 2 == 1 && a <= 7 && c % 2 == 1 && c <= 3),
        "{dops:?}"
    );
    let r = state
        .report()
        .into_iter()
        .find(|r| r.template == "Qa")
        .unwrap();
    assert_eq!(r.runs, 20);
    assert_eq!(r.phase, SearchPhase::Converged, "{r:?}");
    let (best, _) = r.best.clone().unwrap();
    assert_eq!(r.candidate, best);
    // Once converged, every run uses the best plan.
    let last = dops[dops.len() - 1];
    assert_eq!(last, (best.dop("agg"), best.dop("cheap")));
}
