//! Sort and top-k against `slice::sort_by`.

use super::{Fixture, for_each_policy};
use crate::{CmpOp, Col, Input, Pred, SortKey, sort, top_k};

#[test]
fn sorts_match_a_naive_sort_under_every_policy() {
    let fx = Fixture::new(9_000, 9);
    let wide: Vec<i128> =
        fx.v.iter()
            .map(|&v| i128::from(v) * 1_000_000_000_000)
            .collect();
    // tag asc, k desc, text asc (heap), then position.
    let keys = [
        SortKey::asc(fx.tag()),
        SortKey::desc(fx.k()),
        SortKey::asc(fx.text()),
    ];
    let cmp = |a: &usize, b: &usize| {
        fx.tags[*a]
            .cmp(fx.tags[*b])
            .then(fx.k[*b].cmp(&fx.k[*a]))
            .then(fx.texts[*a].cmp(&fx.texts[*b]))
            .then(a.cmp(b))
    };
    let mut all: Vec<usize> = (0..fx.n).collect();
    all.sort_by(cmp);
    let all: Vec<u32> = all.into_iter().map(|i| i as u32).collect();
    let filter = Pred::cmp(fx.day(), CmpOp::Lt, maestro_storage::column::Date(9_000)).unwrap();
    let mut some: Vec<usize> = (0..fx.n).filter(|&i| fx.day[i] < 9_000).collect();
    let by_wide_desc = |a: &usize, b: &usize| {
        wide[*b]
            .cmp(&wide[*a])
            .then(fx.day[*a].cmp(&fx.day[*b]))
            .then(a.cmp(b))
    };
    some.sort_by(by_wide_desc);
    let some: Vec<u32> = some.into_iter().map(|i| i as u32).collect();
    let wide_keys = [SortKey::desc(Col::wide(&wide, 14)), SortKey::asc(fx.day())];
    for_each_policy(|ctx| {
        let g = ctx.granularity();
        assert_eq!(
            sort(ctx, "sort", Input::all(fx.n), &keys, None).unwrap(),
            all,
            "{g}"
        );
        for k in [0, 1, 10, 777, fx.n + 5] {
            let got = top_k(ctx, "topk", Input::all(fx.n), &keys, k).unwrap();
            assert_eq!(got, all[..k.min(fx.n)], "{g} top {k}");
        }
        let got = sort(
            ctx,
            "filtered",
            Input::filtered(fx.n, &filter),
            &wide_keys,
            None,
        )
        .unwrap();
        assert_eq!(got, some, "{g} filtered, wide keys");
        let got = top_k(
            ctx,
            "filtered_top",
            Input::filtered(fx.n, &filter),
            &wide_keys,
            25,
        )
        .unwrap();
        assert_eq!(got, some[..25], "{g} filtered top 25");
        assert!(
            sort(ctx, "empty", Input::all(0), &keys, None)
                .unwrap()
                .is_empty()
        );
    });
    let ctx = super::executor("static").context("errors");
    let short = [1i64, 2];
    assert!(
        sort(
            &ctx,
            "x",
            Input::all(fx.n),
            &[SortKey::asc(Col::i64(&short))],
            None
        )
        .is_err()
    );
}
