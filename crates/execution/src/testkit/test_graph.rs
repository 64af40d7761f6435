//! Plans as task graphs.

use std::sync::Arc;

use super::{Fixture, executor};
use crate::{Agg, CmpOp, ExecError, Input, JoinTable, PlanGraph, Pred, aggregate, select};

#[test]
fn a_plan_graph_runs_pipelines_and_passes_results() {
    let b = Arc::new(Fixture::new(2_000, 12));
    let p = Arc::new(Fixture::new(6_000, 13));
    for policy in ["fixed:3", "hint"] {
        let ctx = executor(policy).context("graph");
        let mut g = PlanGraph::new("graph test");
        let build = g.node("build", &[], {
            let (b, ctx) = (b.clone(), ctx.clone());
            move || {
                let f = Pred::cmp(b.q(), CmpOp::Lt, 25i64).unwrap();
                JoinTable::build(&ctx, "build", Input::filtered(b.n, &f), &[b.k().into()]).unwrap()
            }
        });
        let sel = g.node("select", &[], {
            let (p, ctx) = (p.clone(), ctx.clone());
            move || {
                select(
                    &ctx,
                    "select",
                    p.n,
                    &Pred::cmp(p.v(), CmpOp::Gt, 0i64).unwrap(),
                )
                .unwrap()
            }
        });
        let count = g.node("probe+agg", &[build.id(), sel.id()], {
            let (p, ctx, build, sel) = (p.clone(), ctx.clone(), build.clone(), sel.clone());
            move || {
                let rows = sel.get();
                let pairs = build
                    .get()
                    .inner(
                        &ctx,
                        "probe",
                        Input::all(rows.len()),
                        &[p.k().at(rows).into()],
                    )
                    .unwrap();
                let r = aggregate(&ctx, "count", Input::all(pairs.len()), &[], &[Agg::count()])
                    .unwrap();
                r.agg(0).values[0]
            }
        });
        assert_eq!(g.len(), 4);
        g.run(ctx.scheduler()).unwrap();
        let expected: usize = (0..p.n)
            .filter(|&i| p.v[i] > 0)
            .map(|i| {
                (0..b.n)
                    .filter(|&j| b.q[j] < 25 && b.k[j] == p.k[i])
                    .count()
            })
            .sum();
        assert_eq!(*count.get(), expected as i128, "{policy}");
        let prof = ctx.finish();
        for op in ["build", "select", "probe", "count"] {
            assert!(prof.op(op).is_some(), "{policy}: {op} missing");
        }
        assert_eq!(count.into_inner(), Some(expected as i128));
    }
}

#[test]
fn a_panicking_node_fails_the_plan() {
    let mut g = PlanGraph::new("failing");
    let a = g.node("a", &[], || 1);
    let _b = g.node("b", &[a.id()], || -> i32 { panic!("boom in b") });
    let err = g.run(&super::scheduler()).unwrap_err();
    match err {
        ExecError::Task(p) => assert!(p.message.contains("boom in b"), "{p:?}"),
        other => panic!("{other}"),
    }
}
