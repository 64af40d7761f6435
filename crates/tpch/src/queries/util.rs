//! Small conversions the query plans share: operator outputs to result cells.

use maestro_execution::{AggColumn, Col, ExecError};
use maestro_storage::column::Table;

use crate::Database;

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

/// The key of nation `name`, or -1 (which matches no row) if there is none:
/// a scan of the 25 nations.
pub(crate) fn nation_key(db: &Database, name: &str) -> Result<i64, ExecError> {
    let (keys, names) = (db.nation.i64("n_nationkey")?, db.nation.dict("n_name")?);
    Ok((0..db.nation.num_rows())
        .find(|&r| names.get(r) == name)
        .map_or(-1, |r| keys[r]))
}

/// The keys of the nations in region `name` (a scan of the 5 regions and 25
/// nations).
pub(crate) fn region_nations(db: &Database, name: &str) -> Result<Vec<i64>, ExecError> {
    let (region, nation) = (&db.region, &db.nation);
    let r_names = region.dict("r_name")?;
    let region_key = (0..region.num_rows())
        .find(|&r| r_names.get(r) == name)
        .map(|r| region.i64("r_regionkey").map(|k| k[r]))
        .transpose()?;
    let (keys, regions) = (nation.i64("n_nationkey")?, nation.i64("n_regionkey")?);
    Ok(keys
        .iter()
        .zip(regions)
        .filter(|&(_, r)| Some(*r) == region_key)
        .map(|(&k, _)| k)
        .collect())
}

/// `n_name`'s dictionary code indexed by nation key: grouping and sorting on
/// the code groups and sorts by the name (the dictionary is sorted).
pub(crate) fn nation_name_codes(db: &Database) -> Result<Vec<i64>, ExecError> {
    let (keys, names) = (db.nation.i64("n_nationkey")?, db.nation.dict("n_name")?);
    let len = keys.iter().map(|&k| k as usize + 1).max().unwrap_or(0);
    let mut code = vec![0i64; len];
    for (r, &k) in keys.iter().enumerate() {
        code[k as usize] = i64::from(names.codes()[r]);
    }
    Ok(code)
}
