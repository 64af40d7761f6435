//! Hash joins against a naive hash map of build positions.

use std::collections::HashMap;

use super::{Fixture, for_each_policy};
use crate::{CmpOp, Expr, Input, JoinKind, JoinOutput, JoinTable, NO_ROW, Pred};

/// Naive join: for every selected probe position, the selected build positions
/// with an equal key and a true residual.
fn naive(
    build: impl Iterator<Item = usize>,
    probe: impl Iterator<Item = usize>,
    bkey: impl Fn(usize) -> Vec<i64>,
    pkey: impl Fn(usize) -> Vec<i64>,
    residual: impl Fn(usize, usize) -> bool,
) -> Vec<(u32, Vec<u32>)> {
    let mut map: HashMap<Vec<i64>, Vec<u32>> = HashMap::new();
    for b in build {
        map.entry(bkey(b)).or_default().push(b as u32);
    }
    probe
        .map(|p| {
            let m = map
                .get(&pkey(p))
                .map(|v| {
                    v.iter()
                        .copied()
                        .filter(|&b| residual(p, b as usize))
                        .collect()
                })
                .unwrap_or_default();
            (p as u32, m)
        })
        .collect()
}

fn sorted_pairs(probe: &[u32], build: &[u32]) -> Vec<(u32, u32)> {
    let mut v: Vec<(u32, u32)> = probe.iter().copied().zip(build.iter().copied()).collect();
    v.sort_unstable();
    v
}

#[test]
fn joins_match_a_naive_join_under_every_policy() {
    let b = Fixture::new(3_000, 6);
    let p = Fixture::new(8_000, 7);
    // Build: rows with q < 40; keys (id mod 1000) and (k, tag).
    let bfilter = Pred::cmp(b.q(), CmpOp::Lt, 40i64).unwrap();
    let pfilter = Pred::cmp(p.v(), CmpOp::Ge, 0i64).unwrap();
    let bsel = || (0..b.n).filter(|&i| b.q[i] < 40);
    let psel = || (0..p.n).filter(|&i| p.v[i] >= 0);
    let bid = [Expr::func(0, |r| b.id[r as usize] % 1000)];
    let pid = [Expr::func(0, |r| p.id[r as usize] % 1000)];
    let single = naive(
        bsel(),
        psel(),
        |i| vec![b.id[i] % 1000],
        |i| vec![p.id[i] % 1000],
        |_, _| true,
    );
    let bkeys2 = [Expr::col(b.k()), Expr::col(b.tag())];
    // The probe's tag codes come from another dictionary: map them to strings' codes in b's.
    let pcode = |r: u32| b.tag.code_of(p.tags[r as usize]).map_or(-1, i64::from);
    let pkeys2 = [Expr::col(p.k()), Expr::func(0, pcode)];
    let residual = |pp: u32, bb: u32| p.q[pp as usize] != b.q[bb as usize];
    let composite = naive(
        bsel(),
        0..p.n,
        |i| vec![b.k[i], b.tag.codes()[i].into()],
        |i| vec![p.k[i], pcode(i as u32)],
        |pp, bb| p.q[pp] != b.q[bb],
    );
    assert!(
        single.iter().any(|(_, m)| m.len() > 1),
        "duplicate build keys"
    );
    assert!(single.iter().any(|(_, m)| m.is_empty()), "unmatched probes");

    for_each_policy(|ctx| {
        let g = ctx.granularity();
        let t = JoinTable::build(ctx, "build", Input::filtered(b.n, &bfilter), &bid).unwrap();
        assert_eq!(t.len(), bsel().count());
        assert_eq!(
            t.build_positions(),
            bsel().map(|i| i as u32).collect::<Vec<_>>()
        );
        let pin = Input::filtered(p.n, &pfilter);

        let inner = t.inner(ctx, "inner", pin, &pid).unwrap();
        let exp: Vec<(u32, u32)> = single
            .iter()
            .flat_map(|(pp, m)| m.iter().map(|&bb| (*pp, bb)))
            .collect();
        assert_eq!(sorted_pairs(&inner.probe, &inner.build), exp, "{g} inner");
        assert!(
            inner.probe.windows(2).all(|w| w[0] <= w[1]),
            "{g} probe order kept"
        );

        let outer = t.left_outer(ctx, "outer", pin, &pid).unwrap();
        let mut exp_outer = exp.clone();
        exp_outer.extend(
            single
                .iter()
                .filter(|(_, m)| m.is_empty())
                .map(|(pp, _)| (*pp, NO_ROW)),
        );
        exp_outer.sort_unstable();
        assert_eq!(
            sorted_pairs(&outer.probe, &outer.build),
            exp_outer,
            "{g} left outer"
        );

        let semi = t.semi(ctx, "semi", pin, &pid).unwrap();
        let exp_semi: Vec<u32> = single
            .iter()
            .filter(|(_, m)| !m.is_empty())
            .map(|(pp, _)| *pp)
            .collect();
        assert_eq!(semi, exp_semi, "{g} semi");
        let anti = t.anti(ctx, "anti", pin, &pid).unwrap();
        let exp_anti: Vec<u32> = single
            .iter()
            .filter(|(_, m)| m.is_empty())
            .map(|(pp, _)| *pp)
            .collect();
        assert_eq!(anti, exp_anti, "{g} anti");
        let mark = t.mark(ctx, "mark", pin, &pid).unwrap();
        assert_eq!(mark.len(), p.n);
        assert_eq!(mark.positions(), exp_semi, "{g} mark");

        let t2 = JoinTable::build(ctx, "build2", Input::filtered(b.n, &bfilter), &bkeys2).unwrap();
        let out = t2
            .probe(
                ctx,
                "probe2",
                JoinKind::Inner,
                Input::all(p.n),
                &pkeys2,
                Some(&residual),
            )
            .unwrap();
        let JoinOutput::Pairs(pairs) = out else {
            panic!("inner join yields pairs")
        };
        let exp2: Vec<(u32, u32)> = composite
            .iter()
            .flat_map(|(pp, m)| m.iter().map(|&bb| (*pp, bb)))
            .collect();
        assert!(!exp2.is_empty());
        assert_eq!(
            sorted_pairs(&pairs.probe, &pairs.build),
            exp2,
            "{g} composite + residual"
        );
        let JoinOutput::Positions(anti2) = t2
            .probe(
                ctx,
                "anti2",
                JoinKind::Anti,
                Input::all(p.n),
                &pkeys2,
                Some(&residual),
            )
            .unwrap()
        else {
            panic!("anti join yields positions")
        };
        let exp_anti2: Vec<u32> = composite
            .iter()
            .filter(|(_, m)| m.is_empty())
            .map(|(pp, _)| *pp)
            .collect();
        assert_eq!(anti2, exp_anti2, "{g} composite anti + residual");
    });
}

#[test]
fn empty_sides_and_key_errors() {
    let fx = Fixture::new(500, 8);
    let none = Pred::cmp(fx.q(), CmpOp::Gt, 1000i64).unwrap();
    for_each_policy(|ctx| {
        let t =
            JoinTable::build(ctx, "build", Input::filtered(fx.n, &none), &[fx.k().into()]).unwrap();
        assert!(t.is_empty());
        assert!(
            t.inner(ctx, "probe", Input::all(fx.n), &[fx.k().into()])
                .unwrap()
                .is_empty()
        );
        assert_eq!(
            t.anti(ctx, "anti", Input::all(fx.n), &[fx.k().into()])
                .unwrap()
                .len(),
            fx.n
        );
        let t = JoinTable::build(ctx, "build", Input::all(fx.n), &[fx.k().into()]).unwrap();
        assert!(
            t.inner(ctx, "probe", Input::all(0), &[fx.k().into()])
                .unwrap()
                .is_empty()
        );
    });
    let ctx = super::executor("static").context("errors");
    let t = JoinTable::build(&ctx, "b", Input::all(fx.n), &[fx.k().into()]).unwrap();
    let two = [fx.k().into(), fx.q().into()];
    assert!(t.inner(&ctx, "p", Input::all(fx.n), &two).is_err());
    assert!(
        t.inner(&ctx, "p", Input::all(fx.n), &[fx.v().into()])
            .is_err()
    );
    assert!(JoinTable::build(&ctx, "b", Input::all(fx.n), &[]).is_err());
}
