//! Small conversions the query plans share: operator outputs to result cells.

use maestro_execution::{AggColumn, Col, ExecError};
use maestro_storage::column::Table;

use super::result::Value;

/// A column of `table` by the spec's name.
pub(crate) fn col<'a>(table: &'a Table, name: &str) -> Result<Col<'a>, ExecError> {
    Col::of(table, name)
}

/// Group `g`'s sum (or min/max) as an exact decimal at the aggregate's scale.
pub(crate) fn sum_cell(a: &AggColumn, g: usize) -> Value {
    Value::Decimal {
        value: a.values[g],
        scale: a.scale,
    }
}

/// Group `g`'s count (or distinct count) as an integer.
pub(crate) fn count_cell(a: &AggColumn, g: usize) -> Value {
    Value::Int(i64::try_from(a.values[g]).expect("a count fits in i64"))
}

/// Group `g`'s average as SQL's `AVG` returns it (a double), from the exact
/// sum and count; NULL for an empty group.
pub(crate) fn avg_cell(a: &AggColumn, g: usize) -> Value {
    let count = i128::from(a.counts[g]);
    if count == 0 {
        return Value::Null;
    }
    Value::ratio(a.values[g], count * 10i128.pow(u32::from(a.scale)))
}

/// The string at position `p` of a dictionary or heap column.
pub(crate) fn str_cell(c: &Col, p: u32) -> Value {
    Value::Str(
        c.str_at(p)
            .unwrap_or_else(|| panic!("str_cell of a numeric column {:?}", c.data().type_name()))
            .to_string(),
    )
}

/// The integer at position `p` of an integer column.
pub(crate) fn int_cell(c: &Col, p: u32) -> Value {
    let v = c.i128_at(p).expect("int_cell of a string column");
    Value::Int(i64::try_from(v).expect("an integer column fits in i64"))
}

/// The decimal at position `p` of a decimal column.
pub(crate) fn dec_cell(c: &Col, p: u32) -> Value {
    Value::Decimal {
        value: c.i128_at(p).expect("dec_cell of a string column"),
        scale: c.scale(),
    }
}

/// The date at position `p` of a date column.
pub(crate) fn date_cell(c: &Col, p: u32) -> Value {
    let days = c.i128_at(p).expect("date_cell of a string column");
    Value::Date(maestro_storage::column::Date(
        i32::try_from(days).expect("a date fits in i32"),
    ))
}
