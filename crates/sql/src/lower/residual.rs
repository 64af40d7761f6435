//! A semi, anti or outer join's residual in its commonest shape, compiled:
//! one comparison of a left column with a right column, both numbers of one
//! kind and scale, each maybe under a NULL mask (CH Q4's `o_entry_d <=
//! ol_delivery_d` with NULL for undelivered lines). The pair is read from
//! the two columns and masks directly instead of interpreting the
//! expression over `Scalar`s per pair, which allocates nothing but still
//! builds and matches two values and an evaluation result per pair.
//!
//! SQL's three values: a pair passes only when the comparison is TRUE, so a
//! NULL on either side fails it — as the interpreter's `Fault::truth` does.

use std::sync::Arc;

use maestro_execution::{Col, Data};

use super::vector::{Relation, Vector};
use crate::plan::Expr;

/// A column's values and, where it has NULLs, its mask.
type Side<'r> = (Col<'r>, Option<&'r Arc<Vec<bool>>>);

/// The compiled check on (left position, right position), if `residual` has
/// the shape (else the caller interprets it).
pub(super) fn compiled<'r>(
    residual: &[Expr],
    left: &'r Relation<'r>,
    right: &'r Relation<'r>,
) -> Option<impl Fn(u32, u32) -> bool + Sync + 'r> {
    let [Expr::Cmp(op, a, b)] = residual else {
        return None;
    };
    let (Expr::Column(x), Expr::Column(y)) = (&**a, &**b) else {
        return None;
    };
    // `x op y` with x on the left, or `y (flipped op) x` with y on the left.
    let (op, l, r) = match (left.get(*x), right.get(*y)) {
        (Some(l), Some(r)) => (*op, l, r),
        _ => (op.flip(), left.get(*y)?, right.get(*x)?),
    };
    let (lc, ln) = side(l)?;
    let (rc, rn) = side(r)?;
    if lc.scale() != rc.scale()
        || matches!(lc.data(), Data::Date(_)) != matches!(rc.data(), Data::Date(_))
    {
        return None;
    }
    Some(move |p: u32, q: u32| {
        if ln.is_some_and(|m| m[p as usize]) || rn.is_some_and(|m| m[q as usize]) {
            return false;
        }
        match (lc.i128_at(p), rc.i128_at(q)) {
            (Some(a), Some(b)) => op.holds(a.cmp(&b)),
            _ => unreachable!("narrow numeric columns read as numbers"),
        }
    })
}

/// A number column (dictionary codes of two columns do not compare:
/// [`Vector::col_with_nulls`] refuses them) with its NULL mask.
fn side<'r>(v: &'r Vector<'r>) -> Option<Side<'r>> {
    v.col_with_nulls()
        .filter(|(col, _)| col.is_narrow_numeric())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{CmpOp, ColumnId};

    fn rel(cols: Vec<(usize, Vector<'static>)>, len: usize) -> Relation<'static> {
        Relation {
            len,
            cols: cols.into_iter().map(|(i, v)| (ColumnId(i), v)).collect(),
        }
    }

    fn cmp(op: CmpOp, a: usize, b: usize) -> Vec<Expr> {
        vec![Expr::Cmp(
            op,
            Box::new(Expr::Column(ColumnId(a))),
            Box::new(Expr::Column(ColumnId(b))),
        )]
    }

    #[test]
    fn compares_left_with_right_and_fails_on_nulls() {
        let left = rel(vec![(0, Vector::Int(vec![5, 7, 9]))], 3);
        let right = rel(
            vec![(
                1,
                Vector::Masked {
                    values: Box::new(Vector::Int(vec![7, 7, 0])),
                    nulls: Arc::new(vec![false, false, true]),
                },
            )],
            3,
        );
        // left.0 <= right.1
        let check = compiled(&cmp(CmpOp::Le, 0, 1), &left, &right).expect("compiles");
        assert!(check(0, 0) && check(1, 1) && !check(2, 0));
        assert!(!check(0, 2), "NULL on the right: unknown, not true");
        // Written the other way round: right.1 >= left.0 is the same check.
        let flipped = compiled(&cmp(CmpOp::Ge, 1, 0), &left, &right).expect("compiles");
        for p in 0..3 {
            for q in 0..3 {
                assert_eq!(check(p, q), flipped(p, q), "({p}, {q})");
            }
        }
    }

    #[test]
    fn other_shapes_are_left_to_the_interpreter() {
        let left = rel(
            vec![
                (0, Vector::Int(vec![1])),
                (2, Vector::Dates(vec![1])),
                (3, Vector::Values(vec![super::super::vector::Scalar::Null])),
            ],
            1,
        );
        let right = rel(vec![(1, Vector::Int(vec![1]))], 1);
        // Both columns on one side, a date against a number, no column form.
        assert!(compiled(&cmp(CmpOp::Eq, 0, 2), &left, &right).is_none());
        assert!(compiled(&cmp(CmpOp::Eq, 2, 1), &left, &right).is_none());
        assert!(compiled(&cmp(CmpOp::Eq, 3, 1), &left, &right).is_none());
        // Two conjuncts.
        let mut two = cmp(CmpOp::Eq, 0, 1);
        two.extend(cmp(CmpOp::Lt, 0, 1));
        assert!(compiled(&two, &left, &right).is_none());
        assert!(compiled(&cmp(CmpOp::Eq, 0, 1), &left, &right).is_some());
    }
}
