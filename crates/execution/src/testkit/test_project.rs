//! Projection and row-id composition against naive loops.

use maestro_storage::column::Date;

use super::{Fixture, for_each_policy};
use crate::{CmpOp, Expr, Input, NO_ROW, Pred, gather_positions, project};

/// `outer[inner[i]]`, keeping `NO_ROW`: what `gather_positions` computes.
fn compose(outer: &[u32], inner: &[u32]) -> Vec<u32> {
    inner
        .iter()
        .map(|&i| {
            if i == NO_ROW {
                NO_ROW
            } else {
                outer[i as usize]
            }
        })
        .collect()
}

#[test]
fn expressions_and_composition_match_naive_loops() {
    let fx = Fixture::new(8_000, 3);
    // v * (1 - disc) + year(day) * 100, over rows with q >= 10.
    let e = Expr::col(fx.v()) * (Expr::int(1) - Expr::col(fx.disc()))
        + Expr::year(fx.day()) * Expr::int(100);
    let filter = Pred::cmp(fx.q(), CmpOp::Ge, 10i64).unwrap();
    let expected: Vec<i64> = (0..fx.n)
        .filter(|&i| fx.q[i] >= 10)
        .map(|i| fx.v[i] * (100 - fx.disc[i]) + i64::from(Date(fx.day[i]).year()) * 100 * 10_000)
        .collect();
    let inner: Vec<u32> = (0..fx.n as u32)
        .map(|i| {
            if i % 7 == 0 {
                NO_ROW
            } else {
                (i * 31) % fx.n as u32
            }
        })
        .collect();
    let outer: Vec<u32> = (0..fx.n as u32).map(|i| i ^ 1).collect();
    let composed = compose(&outer, &inner);
    for_each_policy(|ctx| {
        let p = project(ctx, "proj", Input::filtered(fx.n, &filter), &e).unwrap();
        assert_eq!(p.scale, 4);
        assert_eq!(p.values, expected, "{}", ctx.granularity());
        assert_eq!(p.col().len(), expected.len());
        assert_eq!(gather_positions(ctx, "gather", &outer, &inner), composed);
    });
}

/// An unfiltered projection and a gather write each range into one output
/// (`OpRun::fill`): with lengths that do not divide evenly into tasks or
/// grains, the output is still the sequential answer.
#[test]
fn ranges_fill_their_part_of_one_output() {
    let outer: Vec<u32> = (0..10_007).map(|i| i * 7 + 1).collect();
    let values: Vec<i64> = (0..10_007).map(|i| i * 3 - 5_000).collect();
    for_each_policy(|ctx| {
        for len in [0usize, 1, 5, 999, 10_007] {
            let inner: Vec<u32> = (0..len as u32)
                .map(|i| {
                    if i % 11 == 3 {
                        NO_ROW
                    } else {
                        (i * 13) % 10_007
                    }
                })
                .collect();
            let expected = compose(&outer, &inner);
            let policy = ctx.granularity();
            assert_eq!(
                gather_positions(ctx, "g", &outer, &inner),
                expected,
                "{policy}, {len}"
            );
            let col = crate::Col::i64(&values[..len]);
            let doubled =
                project(ctx, "p", Input::all(len), &(Expr::col(col) * Expr::int(2))).unwrap();
            let want: Vec<i64> = values[..len].iter().map(|v| v * 2).collect();
            assert_eq!(doubled.values, want, "{policy}, {len}");
        }
    });
}
