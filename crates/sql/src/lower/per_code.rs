//! An expression that reads one dictionary-string column and nothing else,
//! evaluated once per dictionary entry instead of once per row: the rows
//! then only look their code's value up. CH-benCHmark joins customers to
//! nations on `ascii(substring(c_state from 1 for 1))` — 60 000 customers
//! at W = 2 share 676 states, and the row-by-row evaluator built a
//! substring per customer. Every `Expr` is deterministic, so an entry's
//! value is every row's value with that code.
//!
//! An entry no row of the relation holds may fail to evaluate (a CAST of a
//! string that is no number): its error is kept and raised only when a row
//! reads it, as the row-by-row evaluator would.

use maestro_storage::column::Column;

use super::eval::{Eval, eval_with};
use super::vector::{Relation, Scalar, Vector};
use crate::error::Result;
use crate::plan::Expr;
use crate::types::SqlType;

/// Rows per dictionary entry below which the rows are evaluated one by one
/// instead: evaluating an entry costs about what a row does, so with at
/// least this many rows per entry the entries cost at most half the rows.
/// Guessed, not measured.
const ROWS_PER_ENTRY_MIN: usize = 2;

/// `e`'s values at every position of `rel` through its dictionary, if `e`
/// reads exactly one column and that column is a dictionary-string base
/// column (its delta rows, if any, coded in the same dictionary) with at
/// most `rel.len / ROWS_PER_ENTRY_MIN` entries; `None` otherwise.
pub(crate) fn eval_per_code<'d>(
    e: &Expr,
    ty: SqlType,
    rel: &Relation<'d>,
) -> Option<Result<Vector<'d>>> {
    let columns = e.columns();
    let [c] = columns.iter().copied().collect::<Vec<_>>()[..] else {
        return None;
    };
    let Some(Vector::Base {
        column: Column::Str(main),
        tail,
        rows,
    }) = rel.get(c)
    else {
        return None;
    };
    let tail = match tail {
        None => None,
        Some(Column::Str(t)) if t.shares_dictionary(main) => Some(t),
        Some(_) => return None,
    };
    let entries = main.cardinality();
    if entries == 0 || entries > rel.len / ROWS_PER_ENTRY_MIN {
        return None;
    }
    let values: Vec<Eval> = (0..entries)
        .map(|code| {
            let s = main.decode(u32::try_from(code).expect("dictionary codes are u32"));
            eval_with(e, &|_| Scalar::Str(s.to_owned()))
        })
        .collect();
    let code_at = |p: usize| -> usize {
        let r = rows.as_ref().map_or(p, |r| r[p] as usize);
        let code = match (r.checked_sub(main.len()), tail) {
            (None, _) => main.codes()[r],
            (Some(t), Some(tail)) => tail.codes()[t],
            (Some(_), None) => panic!(
                "row {r} past a column of {} rows without a tail",
                main.len()
            ),
        };
        code as usize
    };
    Some(gather(&values, ty, rel.len, code_at))
}

/// The vector of `values[code_at(p)]` for every position `p < len`: plain
/// integers or dates where every entry that evaluated is one, scalars
/// otherwise; the first row reading an entry that failed fails.
fn gather<'d>(
    values: &[Eval],
    ty: SqlType,
    len: usize,
    code_at: impl Fn(usize) -> usize,
) -> Result<Vector<'d>> {
    let ok = || values.iter().filter_map(|v| v.as_ref().ok());
    match ty {
        SqlType::Int if ok().all(|v| int_of(v).is_some()) => {
            let lookup: Vec<Eval<i64>> = values
                .iter()
                .map(|v| v.clone().map(|v| int_of(&v).unwrap_or(0)))
                .collect();
            let ints = (0..len)
                .map(|p| lookup[code_at(p)])
                .collect::<std::result::Result<_, _>>()?;
            Ok(Vector::Int(ints))
        }
        SqlType::Date if ok().all(|v| matches!(v, Scalar::Date(_))) => {
            let dates = (0..len)
                .map(|p| match &values[code_at(p)] {
                    Ok(Scalar::Date(d)) => Ok(*d),
                    Ok(other) => unreachable!("checked to be dates: {other:?}"),
                    Err(e) => Err(*e),
                })
                .collect::<std::result::Result<_, _>>()?;
            Ok(Vector::Dates(dates))
        }
        _ => {
            let scalars = (0..len)
                .map(|p| values[code_at(p)].clone())
                .collect::<std::result::Result<_, _>>()?;
            Ok(Vector::Values(scalars))
        }
    }
}

/// An integer (scale 0) that fits 64 bits.
fn int_of(v: &Scalar) -> Option<i64> {
    match v {
        Scalar::Num { value, scale: 0 } => i64::try_from(*value).ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use maestro_storage::column::{Column, DictColumn};

    use super::*;
    use crate::lower::eval::eval_row;
    use crate::lower::vector::RowIds;
    use crate::plan::{ArithOp, ColumnId, Expr};
    use crate::types::Literal;

    fn states() -> Column {
        Column::Str(DictColumn::from_strs(
            ["AB", "CD", "AB", "EF", "CD", "AB", "ZZ", "AB"]
                .iter()
                .copied(),
        ))
    }

    fn ascii_first(c: ColumnId) -> Expr {
        Expr::Ascii(Box::new(Expr::Substring {
            expr: Box::new(Expr::Column(c)),
            start: 1,
            len: Some(1),
        }))
    }

    fn relation<'d>(
        column: &'d Column,
        tail: Option<&'d Column>,
        rows: Option<Vec<u32>>,
    ) -> Relation<'d> {
        let len = rows
            .as_ref()
            .map_or(column.len() + tail.map_or(0, Column::len), Vec::len);
        Relation {
            len,
            cols: vec![(
                ColumnId(0),
                Vector::Base {
                    column,
                    tail,
                    rows: rows.map(|r| RowIds::unordered(Arc::new(r))),
                },
            )],
        }
    }

    /// Every position's value as the row-by-row evaluator gives it.
    fn row_by_row(e: &Expr, rel: &Relation) -> Vec<Scalar> {
        (0..rel.len).map(|p| eval_row(e, rel, p).unwrap()).collect()
    }

    fn scalars(v: &Vector) -> Vec<Scalar> {
        match v {
            Vector::Int(_) | Vector::Dates(_) | Vector::Values(_) => {}
            other => panic!("unexpected vector {other:?}"),
        }
        let len = match v {
            Vector::Int(x) => x.len(),
            Vector::Dates(x) => x.len(),
            Vector::Values(x) => x.len(),
            _ => unreachable!(),
        };
        (0..len).map(|p| v.value_at(p)).collect()
    }

    #[test]
    fn an_integer_expression_of_one_dictionary_column_is_a_lookup() {
        let col = states();
        let e = ascii_first(ColumnId(0));
        for rows in [None, Some(vec![7, 3, 3, 0, 6, 1, 2, 4, 5])] {
            let rel = relation(&col, None, rows);
            let v = eval_per_code(&e, SqlType::Int, &rel)
                .expect("the dictionary path")
                .unwrap();
            assert!(matches!(v, Vector::Int(_)), "{v:?}");
            assert_eq!(scalars(&v), row_by_row(&e, &rel));
        }
    }

    #[test]
    fn a_string_result_and_a_tail_in_the_same_dictionary() {
        let Column::Str(main) = states() else {
            unreachable!()
        };
        let tail = Column::Str(main.with_codes(vec![3, 0, 0, 2]).expect("codes in range"));
        let main = Column::Str(main);
        let e = Expr::Substring {
            expr: Box::new(Expr::Column(ColumnId(0))),
            start: 2,
            len: Some(1),
        };
        for rows in [None, Some(vec![9, 0, 11, 8, 3, 10, 1, 2])] {
            let rel = relation(&main, Some(&tail), rows);
            let v = eval_per_code(&e, SqlType::Str, &rel)
                .expect("the dictionary path")
                .unwrap();
            assert_eq!(scalars(&v), row_by_row(&e, &rel));
        }
        // A tail with its own dictionary is read row by row.
        let other = Column::Str(DictColumn::from_strs(
            ["QQ", "QQ", "RR", "QQ"].iter().copied(),
        ));
        let rel = relation(&main, Some(&other), None);
        assert!(eval_per_code(&e, SqlType::Str, &rel).is_none());
    }

    #[test]
    fn an_entry_that_fails_fails_only_the_rows_that_read_it() {
        let col = Column::Str(DictColumn::from_strs(
            ["1", "2", "x", "1", "2", "1"].iter().copied(),
        ));
        // CAST(s AS integer) + 1: "x" is no integer.
        let e = Expr::Arith(
            ArithOp::Add,
            Box::new(Expr::Cast(
                Box::new(Expr::Column(ColumnId(0))),
                SqlType::Int,
            )),
            Box::new(Expr::Lit(Literal::Num { value: 1, scale: 0 })),
        );
        let without_x = relation(&col, None, Some(vec![0, 1, 3, 4, 5, 0]));
        let v = eval_per_code(&e, SqlType::Int, &without_x)
            .expect("the dictionary path")
            .unwrap();
        assert_eq!(scalars(&v), row_by_row(&e, &without_x));
        let with_x = relation(&col, None, Some(vec![0, 1, 2, 3, 4, 5]));
        let err = eval_per_code(&e, SqlType::Int, &with_x)
            .expect("the dictionary path")
            .unwrap_err();
        let expected: crate::error::SqlError = eval_row(&e, &with_x, 2).unwrap_err().into();
        assert_eq!(err.to_string(), expected.to_string());
    }

    #[test]
    fn few_rows_per_entry_or_two_columns_stay_row_by_row() {
        let col = states();
        // 4 entries, 3 rows: fewer than two rows per entry.
        let rel = relation(&col, None, Some(vec![0, 1, 3]));
        assert!(eval_per_code(&ascii_first(ColumnId(0)), SqlType::Int, &rel).is_none());
        let rel = relation(&col, None, None);
        let two = Expr::Arith(
            ArithOp::Add,
            Box::new(ascii_first(ColumnId(0))),
            Box::new(ascii_first(ColumnId(1))),
        );
        assert!(eval_per_code(&two, SqlType::Int, &rel).is_none());
    }
}
