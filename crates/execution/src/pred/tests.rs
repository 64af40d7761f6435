//! Predicate construction and evaluation on small columns.

use super::*;
use crate::expr::Expr;
use maestro_storage::column::{DictColumn, StrHeap};

fn eval(p: &Pred, n: u32) -> Vec<u32> {
    let mut out = Vec::new();
    p.select_range(0, n, &mut out);
    out
}

fn dec(s: &str) -> Decimal {
    let scale = s.split_once('.').map_or(0, |(_, f)| f.len()) as u8;
    Decimal::parse(s, scale).unwrap()
}

#[test]
fn decimal_literals_round_the_right_way() {
    let v = [4i64, 5, 6, 7, 8];
    let c = Col::decimal_raw(&v, 2); // 0.04 .. 0.08
    let sel = |op, lit: &str| eval(&Pred::cmp(c, op, dec(lit)).unwrap(), 5);
    assert_eq!(sel(CmpOp::Lt, "0.055"), [0, 1]);
    assert_eq!(sel(CmpOp::Le, "0.055"), [0, 1]);
    assert_eq!(sel(CmpOp::Gt, "0.055"), [2, 3, 4]);
    assert_eq!(sel(CmpOp::Ge, "0.055"), [2, 3, 4]);
    assert_eq!(sel(CmpOp::Eq, "0.055"), Vec::<u32>::new());
    assert_eq!(sel(CmpOp::Ne, "0.055"), [0, 1, 2, 3, 4]);
    assert_eq!(sel(CmpOp::Eq, "0.06"), [2]);
    assert_eq!(sel(CmpOp::Ne, "0.060"), [0, 1, 3, 4]);
    let b = Pred::between(c, dec("0.05"), dec("0.07")).unwrap();
    assert_eq!(eval(&b, 5), [1, 2, 3]);
    // Integer literal on a decimal column: 0 < x.
    assert_eq!(eval(&Pred::cmp(c, CmpOp::Gt, 0i64).unwrap(), 5).len(), 5);
    let neg = [-5i64, 5];
    let c = Col::decimal_raw(&neg, 1);
    assert_eq!(
        eval(&Pred::cmp(c, CmpOp::Lt, dec("-0.45")).unwrap(), 2),
        [0]
    );
    assert_eq!(
        eval(&Pred::cmp(c, CmpOp::Gt, dec("-0.55")).unwrap(), 2),
        [0, 1]
    );
}

#[test]
fn strings_dates_and_types() {
    let d = DictColumn::from_strs(["MAIL", "AIR", "SHIP", "AIR", "TRUCK"]);
    let c = Col::dict(&d);
    assert_eq!(eval(&Pred::cmp(c, CmpOp::Eq, "AIR").unwrap(), 5), [1, 3]);
    assert_eq!(
        eval(&Pred::cmp(c, CmpOp::Eq, "RAIL").unwrap(), 5),
        Vec::<u32>::new()
    );
    assert_eq!(eval(&Pred::cmp(c, CmpOp::Ne, "AIR").unwrap(), 5), [0, 2, 4]);
    assert_eq!(eval(&Pred::cmp(c, CmpOp::Lt, "MAIL").unwrap(), 5), [1, 3]);
    assert_eq!(
        eval(&Pred::cmp(c, CmpOp::Le, "MAIL").unwrap(), 5),
        [0, 1, 3]
    );
    assert_eq!(eval(&Pred::cmp(c, CmpOp::Gt, "N").unwrap(), 5), [2, 4]);
    assert_eq!(eval(&Pred::cmp(c, CmpOp::Ge, "SHIP").unwrap(), 5), [2, 4]);
    assert_eq!(
        eval(&Pred::is_in(c, ["SHIP", "MAIL", "X"]).unwrap(), 5),
        [0, 2]
    );
    assert_eq!(eval(&Pred::like(c, "%AI%").unwrap(), 5), [0, 1, 3]);
    assert_eq!(eval(&Pred::like(c, "T%").unwrap(), 5), [4]);
    assert_eq!(eval(&Pred::not_like(c, "%I%").unwrap(), 5), [4]);
    let h = StrHeap::from_strs(["special requests", "x", "a special b requests c"]);
    let hc = Col::heap(&h);
    assert_eq!(
        eval(&Pred::like(hc, "%special%requests%").unwrap(), 3),
        [0, 2]
    );
    assert_eq!(eval(&Pred::cmp(hc, CmpOp::Gt, "b").unwrap(), 3), [0, 1]);
    assert_eq!(eval(&Pred::is_in(hc, ["x", "y"]).unwrap(), 3), [1]);
    let days = [10i32, 20, 30];
    let dc = Col::date(&days);
    assert_eq!(eval(&Pred::cmp(dc, CmpOp::Lt, Date(20)).unwrap(), 3), [0]);
    assert!(Pred::cmp(dc, CmpOp::Lt, 20i64).is_err());
    assert!(Pred::cmp(c, CmpOp::Lt, 20i64).is_err());
    assert!(Pred::cmp(Col::i32(&days), CmpOp::Lt, "x").is_err());
    assert!(Pred::like(dc, "x%").is_err());
    assert!(Pred::cols(dc, CmpOp::Lt, Col::i32(&days)).is_err());
}

#[test]
fn logic_and_row_ids() {
    let v: Vec<i64> = (0..20).collect();
    let ids: Vec<u32> = (0..20).rev().collect();
    let c = Col::i64(&v).at(&ids); // position p reads 19 - p
    let small = Pred::cmp(c, CmpOp::Lt, 5i64).unwrap();
    let even = Pred::func(|p| p % 2 == 0);
    assert_eq!(eval(&small, 20), [15, 16, 17, 18, 19]);
    let and = Pred::and(vec![small.clone(), even.clone()]);
    assert_eq!(eval(&and, 20), [16, 18]);
    let or = Pred::or(vec![small.clone(), Pred::is_in(c, [0i64, 19, 7]).unwrap()]);
    assert_eq!(eval(&or, 20), [0, 12, 15, 16, 17, 18, 19]);
    assert_eq!(eval(&Pred::not(or), 20).len(), 13);
    let w = [1i64, 9, 2];
    let wc = Col::i64(&w);
    let cols = Pred::cols(Col::i64(&v), CmpOp::Lt, wc).unwrap();
    assert_eq!(eval(&cols, 3), [0, 1]);
    let wide = [5i128, 500];
    let wp = Pred::cmp(Col::wide(&wide, 2), CmpOp::Gt, 1i64).unwrap();
    assert_eq!(eval(&wp, 2), [1]);
}

#[test]
fn columns_with_a_tail_read_the_delta_rows_after_the_main() {
    let main = [10i64, 20, 30];
    let tail = [40i64, 5];
    let c = Col::i64(&main).with_tail(Col::i64(&tail));
    assert_eq!(c.len(), 5);
    assert_eq!(eval(&Pred::cmp(c, CmpOp::Ge, 25i64).unwrap(), 5), [2, 3]);
    assert_eq!(eval(&Pred::is_in(c, [5i64, 10]).unwrap(), 5), [0, 4]);
    // Through row ids spanning both parts (a delta's live rows).
    let ids = [4u32, 0, 3];
    let at = c.at(&ids);
    assert_eq!(eval(&Pred::cmp(at, CmpOp::Lt, 15i64).unwrap(), 3), [0, 1]);
    assert_eq!(at.cmp_at(0, 2), std::cmp::Ordering::Less);

    let dict = DictColumn::from_strs(["b", "a", "c"]);
    let more = dict.with_codes(vec![2, 0]).unwrap(); // "c", "a"
    let d = Col::dict(&dict).with_tail(Col::dict(&more));
    assert_eq!(d.str_at(3), Some("c"));
    assert_eq!(eval(&Pred::cmp(d, CmpOp::Eq, "a").unwrap(), 5), [1, 4]);
    assert_eq!(eval(&Pred::like(d, "%c%").unwrap(), 5), [2, 3]);

    let heap = StrHeap::from_strs(["x", "yy"]);
    let extra = StrHeap::from_strs(["zzz"]);
    let h = Col::heap(&heap).with_tail(Col::heap(&extra));
    assert_eq!(eval(&Pred::like(h, "%z%").unwrap(), 3), [2]);
    assert_eq!(eval(&Pred::cmp(h, CmpOp::Gt, "x").unwrap(), 3), [1, 2]);
}

#[test]
#[should_panic(expected = "a tail of another type")]
fn a_tail_of_another_type_is_refused() {
    let a = [1i64];
    let b = [1i32];
    let _ = Col::i64(&a).with_tail(Col::i32(&b));
}

#[test]
fn a_tail_splits_ascending_candidates_and_reads_others_one_by_one() {
    let main: Vec<i32> = (0..50).collect();
    let tail: Vec<i32> = (0..30).map(|i| 100 - i).collect();
    let c = Col::i32(&main).with_tail(Col::i32(&tail));
    let big = Pred::cmp(c, CmpOp::Ge, 45i64).unwrap();
    let want: Vec<u32> = (45..80).collect();
    assert_eq!(eval(&big, 80), want);
    // A range starting inside the tail, and one ending inside the main.
    let mut out = Vec::new();
    big.select_range(60, 80, &mut out);
    assert_eq!(out, (60..80).collect::<Vec<u32>>());
    big.select_range(10, 48, &mut out);
    assert_eq!(out, [45, 46, 47]);
    // Candidates out of order keep their order.
    let mut cand = vec![79, 3, 46, 55, 12];
    big.refine(&mut cand);
    assert_eq!(cand, [79, 46, 55]);
    // A bound no narrow value reaches.
    let none = Pred::cmp(c, CmpOp::Gt, i64::MAX).unwrap();
    assert!(eval(&none, 80).is_empty());
}

#[test]
fn ascending_row_ids_over_a_tail_split_where_the_tail_starts() {
    let main: Vec<i32> = (0..50).collect();
    let tail: Vec<i32> = (0..30).map(|i| 100 - i).collect();
    // Rows 10, 20, …, 40 of the main, then tail rows 0, 10, 20 (ids 50, 60, 70).
    let rows: Vec<u32> = (1..8).map(|i| i * 10).collect();
    let whole = Col::i32(&main).with_tail(Col::i32(&tail));
    let ascending = whole.at_ascending(&rows);
    assert_eq!(ascending.main_positions(), 4);
    let unknown = whole.at(&rows);
    assert_eq!(unknown.main_positions(), 0);
    for c in [ascending, unknown] {
        // Values 10 20 30 40 | 100 90 80.
        let p = Pred::cmp(c, CmpOp::Ge, 25i64).unwrap();
        assert_eq!(eval(&p, 7), [2, 3, 4, 5, 6]);
        let mut cand = vec![6, 0, 3];
        p.refine(&mut cand);
        assert_eq!(cand, [6, 3]);
        let mut out = Vec::new();
        Expr::col(c).eval(&[0, 3, 4, 6], &mut out);
        assert_eq!(out, [10, 40, 100, 80]);
        out.clear();
        Expr::col(c).eval(&[3, 1], &mut out);
        assert_eq!(out, [40, 20]);
    }
}

#[test]
fn not_in_sorted_removes_the_ids_from_any_candidates() {
    let dead = [0u32, 3, 4, 9, 17, 18, 19];
    let live = Pred::not_in_sorted(&dead);
    assert_eq!(
        eval(&live, 20),
        [1, 2, 5, 6, 7, 8, 10, 11, 12, 13, 14, 15, 16]
    );
    let mut out = Vec::new();
    live.select_range(4, 11, &mut out);
    assert_eq!(out, [5, 6, 7, 8, 10]);
    let mut cand = vec![19, 2, 9, 16, 3];
    live.refine(&mut cand);
    assert_eq!(cand, [2, 16]);
    let v: Vec<i64> = (0..20).collect();
    let small = Pred::cmp(Col::i64(&v), CmpOp::Lt, 6i64).unwrap();
    assert_eq!(eval(&Pred::and(vec![small, live]), 20), [1, 2, 5]);
    assert!(eval(&Pred::not_in_sorted(&[]), 3) == [0, 1, 2]);
}

#[test]
#[should_panic(expected = "ascending ids")]
fn not_in_sorted_refuses_ids_out_of_order() {
    let _ = Pred::not_in_sorted(&[3, 1]);
}

#[test]
fn not_in_sorted_equals_a_naive_difference_on_random_lists() {
    // A small LCG: the seed reproduces a failure.
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = |n: u32| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1);
        ((state >> 33) % u64::from(n)) as u32
    };
    for round in 0..200 {
        let n = 1 + next(300);
        let mut dead: Vec<u32> = (0..next(40)).map(|_| next(n + 10)).collect();
        dead.sort_unstable();
        dead.dedup();
        let live = Pred::not_in_sorted(&dead);
        let (start, end) = (next(n), n);
        let mut got = Vec::new();
        live.select_range(start, end, &mut got);
        let want: Vec<u32> = (start..end).filter(|p| !dead.contains(p)).collect();
        assert_eq!(
            got, want,
            "round {round}: range {start}..{end}, dead {dead:?}"
        );
        let mut shuffled: Vec<u32> = (0..n).rev().filter(|p| p % 3 != 0).collect();
        let want: Vec<u32> = shuffled
            .iter()
            .copied()
            .filter(|p| !dead.contains(p))
            .collect();
        live.refine(&mut shuffled);
        assert_eq!(shuffled, want, "round {round}: descending, dead {dead:?}");
    }
}

#[test]
fn an_expression_compared_with_zero_is_evaluated_on_the_candidates() {
    let v: Vec<i64> = (0..10).collect();
    let money = [150i64, 250, 100]; // 1.50, 2.50, 1.00
    let c = Col::i64(&v);
    // x % 3 = 0
    let p = Pred::expr_vs_zero(Expr::col(c).rem_const(3).unwrap(), CmpOp::Eq).unwrap();
    assert_eq!(eval(&p, 10), [0, 3, 6, 9]);
    // After another conjunct, only its survivors are evaluated.
    let both = Pred::and(vec![Pred::cmp(c, CmpOp::Gt, 4i64).unwrap(), p.clone()]);
    assert_eq!(eval(&both, 10), [6, 9]);
    // x - 1.50 > 0 across scales.
    let m = Col::decimal_raw(&money, 2);
    let gt = Pred::expr_vs_zero(Expr::col(m) - Expr::dec(dec("1.50")), CmpOp::Gt).unwrap();
    assert_eq!(eval(&gt, 3), [1]);
    let mut cand = vec![2, 0];
    Pred::expr_vs_zero(Expr::col(m) - Expr::dec(dec("1.50")), CmpOp::Le)
        .unwrap()
        .refine(&mut cand);
    assert_eq!(cand, [2, 0]);
    // Types are checked where it is built.
    let heap = StrHeap::from_strs(["a"]);
    assert!(Pred::expr_vs_zero(Expr::col(Col::heap(&heap)), CmpOp::Eq).is_err());
}
