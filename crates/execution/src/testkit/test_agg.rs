//! Hash aggregation against a naive `BTreeMap` group-by.

use std::collections::{BTreeMap, BTreeSet};

use super::{Fixture, for_each_policy};
use crate::{Agg, AggResult, CmpOp, Expr, Input, Pred, aggregate};

/// Per group: sum(v), count, avg(v) as (sum, count), min(q), max(v*disc), count distinct(tag).
/// Accumulators of the naive group-by.
type Acc<'f> = (i128, i128, i128, i128, i128, BTreeSet<&'f str>);

type Row = (i128, i128, (i128, i64), i128, i128, i128);

fn naive(
    fx: &Fixture,
    rows: impl Iterator<Item = usize>,
    key: impl Fn(usize) -> Vec<i64>,
) -> BTreeMap<Vec<i64>, Row> {
    let mut groups: BTreeMap<Vec<i64>, Acc> = BTreeMap::new();
    for i in rows {
        let g = groups
            .entry(key(i))
            .or_insert((0, 0, 0, i128::MAX, i128::MIN, BTreeSet::new()));
        g.0 += i128::from(fx.v[i]);
        g.1 += 1;
        g.2 += i128::from(fx.v[i]);
        g.3 = g.3.min(i128::from(fx.q[i]));
        g.4 = g.4.max(i128::from(fx.v[i] * fx.disc[i]));
        g.5.insert(fx.tags[i]);
    }
    groups
        .into_iter()
        .map(|(k, g)| {
            (
                k,
                (g.0, g.1, (g.2, g.1 as i64), g.3, g.4, g.5.len() as i128),
            )
        })
        .collect()
}

fn aggs(fx: &Fixture) -> Vec<Agg<'_>> {
    vec![
        Agg::sum(fx.v()),
        Agg::count(),
        Agg::avg(fx.v()),
        Agg::min(fx.q()),
        Agg::max(Expr::col(fx.v()) * Expr::col(fx.disc())),
        Agg::count_distinct(fx.tag()),
    ]
}

fn collect(r: &AggResult) -> BTreeMap<Vec<i64>, Row> {
    let mut out = BTreeMap::new();
    for g in 0..r.len() {
        let key: Vec<i64> = (0..r.num_keys()).map(|k| r.key(k)[g]).collect();
        let a = |i: usize| r.agg(i).values[g];
        let row = (a(0), a(1), (a(2), r.agg(2).counts[g]), a(3), a(4), a(5));
        assert!(out.insert(key, row).is_none(), "duplicate group");
    }
    out
}

#[test]
fn group_bys_match_a_naive_group_by_under_every_policy() {
    let fx = Fixture::new(12_000, 4);
    let filter = Pred::cmp(fx.disc(), CmpOp::Le, 0i64).unwrap(); // about 1 row in 11
    let exp_one = naive(&fx, 0..fx.n, |i| vec![fx.k[i]]);
    let exp_two = naive(&fx, 0..fx.n, |i| {
        vec![fx.tag.codes()[i].into(), fx.k[i] % 3]
    });
    let exp_wide = naive(&fx, 0..fx.n, |i| vec![fx.id[i]]);
    let exp_none = naive(&fx, 0..fx.n, |_| vec![]);
    let exp_filtered = naive(&fx, (0..fx.n).filter(|&i| fx.disc[i] <= 0), |i| {
        vec![
            fx.k[i],
            fx.q[i].into(),
            fx.day[i].into(),
            fx.tag.codes()[i].into(),
        ]
    });
    let k_mod_3 = Expr::func(0, |p| fx.k[p as usize] % 3);
    let a = aggs(&fx);
    for_each_policy(|ctx| {
        let g = ctx.granularity();
        let r = aggregate(ctx, "one", Input::all(fx.n), &[fx.k().into()], &a).unwrap();
        assert_eq!(collect(&r), exp_one, "{g} one key");
        let r = aggregate(
            ctx,
            "two",
            Input::all(fx.n),
            &[fx.tag().into(), k_mod_3.clone()],
            &a,
        )
        .unwrap();
        assert_eq!(collect(&r), exp_two, "{g} two keys");
        // Many groups: exercises the partitioned merge.
        let r = aggregate(ctx, "wide", Input::all(fx.n), &[fx.id().into()], &a).unwrap();
        assert_eq!(collect(&r), exp_wide, "{g} many groups");
        let r = aggregate(ctx, "scalar", Input::all(fx.n), &[], &a).unwrap();
        assert_eq!(collect(&r), exp_none, "{g} no keys");
        let keys = [
            fx.k().into(),
            fx.q().into(),
            fx.day().into(),
            fx.tag().into(),
        ];
        let r = aggregate(ctx, "four", Input::filtered(fx.n, &filter), &keys, &a).unwrap();
        assert_eq!(collect(&r), exp_filtered, "{g} four keys, filtered");
    });
}

#[test]
fn empty_inputs_and_errors() {
    let fx = Fixture::new(100, 5);
    let none = Pred::cmp(fx.q(), CmpOp::Gt, 1000i64).unwrap();
    for_each_policy(|ctx| {
        let r = aggregate(
            ctx,
            "scalar",
            Input::filtered(fx.n, &none),
            &[],
            &[Agg::sum(fx.v()), Agg::count()],
        )
        .unwrap();
        assert_eq!((r.len(), r.agg(0).values[0], r.agg(1).values[0]), (1, 0, 0));
        let r = aggregate(
            ctx,
            "grouped",
            Input::filtered(fx.n, &none),
            &[fx.k().into()],
            &[Agg::count()],
        )
        .unwrap();
        assert!(r.is_empty());
        let r = aggregate(ctx, "len0", Input::all(0), &[], &[Agg::count()]).unwrap();
        assert_eq!(r.len(), 1);
    });
    let ctx = super::executor("static").context("errors");
    let five: Vec<Expr> = (0..5).map(|_| fx.k().into()).collect();
    assert!(aggregate(&ctx, "x", Input::all(fx.n), &five, &[Agg::count()]).is_err());
    assert!(
        aggregate(
            &ctx,
            "x",
            Input::all(fx.n),
            &[fx.text().into()],
            &[Agg::count()]
        )
        .is_err()
    );
    assert!(aggregate(&ctx, "x", Input::all(fx.n), &[], &[Agg::sum(fx.text())]).is_err());
}

#[test]
fn double_sums_add_the_values_behind_the_bits() {
    // Halves of small integers: every partial sum is exact, so the order
    // the partitions merge in cannot change a group's sum.
    let fx = Fixture::new(12_000, 6);
    let doubles: Vec<f64> = (0..fx.n).map(|i| (i % 97) as f64 / 2.0 - 20.0).collect();
    let bits: Vec<i64> = doubles.iter().map(|d| d.to_bits() as i64).collect();
    let mut expected: BTreeMap<i64, f64> = BTreeMap::new();
    for (i, d) in doubles.iter().enumerate() {
        *expected.entry(fx.k[i]).or_default() += d;
    }
    let sum = [Agg::sum_double(crate::Col::i64(&bits))];
    for_each_policy(|ctx| {
        let r = aggregate(ctx, "sum_double", Input::all(fx.n), &[fx.k().into()], &sum).unwrap();
        let got: BTreeMap<i64, f64> = (0..r.len())
            .map(|g| {
                (
                    r.key(0)[g],
                    f64::from_bits(r.agg(0).values[g] as i64 as u64),
                )
            })
            .collect();
        assert_eq!(got, expected, "{}", ctx.granularity());
        let r = aggregate(ctx, "scalar", Input::all(fx.n), &[], &sum).unwrap();
        let total = f64::from_bits(r.agg(0).values[0] as i64 as u64);
        assert_eq!(
            total,
            expected.values().sum::<f64>(),
            "{}",
            ctx.granularity()
        );
    });
}
