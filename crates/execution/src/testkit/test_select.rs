//! Selection against a naive filter loop.

use maestro_storage::column::{Date, Decimal};

use super::{Fixture, for_each_policy};
use crate::{CmpOp, Col, Pred, select, select_bitmap};

fn naive(n: usize, f: impl Fn(usize) -> bool) -> Vec<u32> {
    (0..n).filter(|&i| f(i)).map(|i| i as u32).collect()
}

#[test]
fn selections_match_a_naive_loop_under_every_policy() {
    let fx = Fixture::new(10_000, 1);
    let lo = Date::parse("1994-01-01").unwrap();
    let hi = Date::parse("1995-01-01").unwrap();
    let dec = |v, s| Decimal { value: v, scale: s };
    let cases: Vec<(Pred, Vec<u32>)> = vec![
        (
            Pred::and(vec![
                Pred::cmp(fx.day(), CmpOp::Ge, lo).unwrap(),
                Pred::cmp(fx.day(), CmpOp::Lt, hi).unwrap(),
                Pred::between(fx.disc(), dec(5, 2), dec(7, 2)).unwrap(),
                Pred::cmp(fx.q(), CmpOp::Lt, 24i64).unwrap(),
            ]),
            naive(fx.n, |i| {
                fx.day[i] >= lo.0
                    && fx.day[i] < hi.0
                    && (5..=7).contains(&fx.disc[i])
                    && fx.q[i] < 24
            }),
        ),
        (
            Pred::or(vec![
                Pred::is_in(fx.tag(), ["MAIL", "SHIP"]).unwrap(),
                Pred::like(fx.text(), "%special%requests%").unwrap(),
            ]),
            naive(fx.n, |i| {
                let t = &fx.texts[i];
                ["MAIL", "SHIP"].contains(&fx.tags[i])
                    || t.find("special")
                        .is_some_and(|a| t[a + 7..].contains("requests"))
            }),
        ),
        (
            Pred::and(vec![
                Pred::not_like(fx.tag(), "R%").unwrap(),
                Pred::cmp(fx.v(), CmpOp::Gt, dec(-55, 1)).unwrap(),
            ]),
            naive(fx.n, |i| !fx.tags[i].starts_with('R') && fx.v[i] > -550),
        ),
        (
            Pred::cols(fx.q(), CmpOp::Lt, fx.k()).unwrap(),
            naive(fx.n, |i| i64::from(fx.q[i]) < fx.k[i]),
        ),
        (
            Pred::like(fx.tag(), "%AI%").unwrap(),
            naive(fx.n, |i| fx.tags[i].contains("AI")),
        ),
        (Pred::cmp(fx.tag(), CmpOp::Eq, "NONE").unwrap(), Vec::new()),
    ];
    for_each_policy(|ctx| {
        for (i, (pred, expected)) in cases.iter().enumerate() {
            let got = select(ctx, "select", fx.n, pred).unwrap();
            assert_eq!(&got, expected, "{} case {i}", ctx.granularity());
            let bits = select_bitmap(ctx, "bitmap", fx.n, pred).unwrap();
            assert_eq!(
                bits.positions(),
                *expected,
                "{} bitmap case {i}",
                ctx.granularity()
            );
        }
        let p = Pred::cmp(fx.q(), CmpOp::Lt, 24i64).unwrap();
        assert!(select(ctx, "empty", 0, &p).unwrap().is_empty());
        assert_eq!(
            select(ctx, "one", 1, &p).unwrap(),
            naive(1, |i| fx.q[i] < 24)
        );
    });
}

#[test]
fn selections_through_row_ids() {
    let fx = Fixture::new(5_000, 2);
    // Every third row, backwards.
    let ids: Vec<u32> = (0..fx.n as u32).rev().step_by(3).collect();
    let v = fx.v().at(&ids);
    let pred = Pred::and(vec![
        Pred::cmp(v, CmpOp::Ge, 0i64).unwrap(),
        Pred::is_in(Col::i64(&fx.k).at(&ids), [1i64, 2, 3, 5, 8, 13, 21, 34, 35]).unwrap(),
    ]);
    let expected = naive(ids.len(), |p| {
        let r = ids[p] as usize;
        fx.v[r] >= 0 && [1, 2, 3, 5, 8, 13, 21, 34, 35].contains(&fx.k[r])
    });
    assert!(!expected.is_empty());
    for_each_policy(|ctx| {
        assert_eq!(select(ctx, "sel", ids.len(), &pred).unwrap(), expected);
    });
}
