//! Values into stored columns: a [`ColumnBuilder`] per column collects the
//! rows of one write (INSERT's values, UPDATE's new rows, COPY's fields),
//! casting each value to the column's declared type as PostgreSQL's
//! assignment casts do — numbers round to the column's scale, text is parsed
//! — and refusing what does not fit (22003, 22P02, 22001). A NULL goes into a
//! nullable column as a placeholder plus a 1 in its mask (`nulls.rs`), and
//! is refused by a NOT NULL one (23502).

use maestro_storage::column::{Column, Date, DecimalColumn, StrHeap};
use maestro_tpch::queries::Value;

use super::spec::{ColumnSpec, ColumnType};
use crate::error::{ErrorKind, Result, SqlError};

/// The values of one column of the rows being written.
pub struct ColumnBuilder<'s> {
    spec: &'s ColumnSpec,
    table: &'s str,
    values: Values,
    /// The mask of a nullable column (1 at a NULL), `None` for a NOT NULL
    /// one.
    nulls: Option<Vec<i32>>,
}

enum Values {
    Int32(Vec<i32>),
    Int64(Vec<i64>),
    Decimal(Vec<i64>),
    Date(Vec<i32>),
    Str(StrHeap),
    /// Microseconds since the epoch.
    Timestamp(Vec<i64>),
    /// 0 or 1 (`ColumnType::Bool`).
    Bool(Vec<i32>),
    /// The doubles' ordered bits (`ColumnType::Float64` and `Float32`).
    Float(Vec<i64>),
}

impl<'s> ColumnBuilder<'s> {
    pub fn new(table: &'s str, spec: &'s ColumnSpec) -> ColumnBuilder<'s> {
        let values = match spec.ty {
            ColumnType::Int32 | ColumnType::Int16 => Values::Int32(Vec::new()),
            ColumnType::Int64 => Values::Int64(Vec::new()),
            ColumnType::Decimal { .. } => Values::Decimal(Vec::new()),
            ColumnType::Date => Values::Date(Vec::new()),
            ColumnType::Str { .. } => Values::Str(StrHeap::new()),
            ColumnType::Timestamp => Values::Timestamp(Vec::new()),
            ColumnType::Bool => Values::Bool(Vec::new()),
            ColumnType::Float64 | ColumnType::Float32 => Values::Float(Vec::new()),
            ty @ (ColumnType::Float64Bits | ColumnType::Float32Bits) => {
                unreachable!("{ty:?} columns are refused when their catalog row is read")
            }
        };
        ColumnBuilder {
            spec,
            table,
            values,
            nulls: None,
        }
    }

    /// This builder taking NULLs (into a mask) when `nullable`.
    pub fn with_nulls(mut self, nullable: bool) -> ColumnBuilder<'s> {
        self.nulls = nullable.then(Vec::new);
        self
    }

    /// Appends a value computed by a query (a VALUES expression, an UPDATE's
    /// SET, an INSERT … SELECT's row).
    pub fn push(&mut self, v: &Value) -> Result<()> {
        let null = matches!(v, Value::Null);
        if !null {
            self.push_value(v)?;
        } else if self.nulls.is_none() {
            return Err(self.null());
        } else {
            self.push_placeholder();
        }
        if let Some(n) = &mut self.nulls {
            n.push(i32::from(null));
        }
        Ok(())
    }

    /// Appends a NULL; 23502 for a NOT NULL column.
    pub fn push_null(&mut self) -> Result<()> {
        self.push(&Value::Null)
    }

    /// What a NULL row holds under its mask.
    fn push_placeholder(&mut self) {
        match &mut self.values {
            Values::Int32(v) | Values::Date(v) | Values::Bool(v) => v.push(0),
            Values::Int64(v) | Values::Decimal(v) | Values::Timestamp(v) | Values::Float(v) => {
                v.push(0)
            }
            Values::Str(h) => h.push(""),
        }
    }

    /// Appends a value that is not NULL (the mask is the caller's).
    fn push_value(&mut self, v: &Value) -> Result<()> {
        match v {
            Value::Null => unreachable!("push handles NULL"),
            Value::Int(i) => self.push_exact(i128::from(*i), 0),
            Value::Decimal { value, scale } => self.push_exact(*value, *scale),
            Value::Double(d) => self.push_double(*d),
            Value::Date(d) => match &mut self.values {
                Values::Date(out) => {
                    out.push(d.days());
                    Ok(())
                }
                Values::Str(out) => {
                    out.push_display(d);
                    Ok(())
                }
                _ => Err(self.mismatch("date")),
            },
            Value::Timestamp(t) => match &mut self.values {
                Values::Timestamp(out) => {
                    out.push(*t);
                    Ok(())
                }
                Values::Str(out) => {
                    out.push(&maestro_tpch::queries::format_timestamp(*t));
                    Ok(())
                }
                _ => Err(self.mismatch("timestamp")),
            },
            Value::Str(s) => self.push_text_value(s),
        }
    }

    /// Appends a value given as text (a COPY field, a string literal).
    pub fn push_text(&mut self, s: &str) -> Result<()> {
        self.push_text_value(s)?;
        if let Some(n) = &mut self.nulls {
            n.push(0);
        }
        Ok(())
    }

    fn push_text_value(&mut self, s: &str) -> Result<()> {
        let ty = self.spec.ty;
        let invalid = || {
            SqlError::new(
                ErrorKind::InvalidText,
                format!("invalid input syntax for type {}: \"{s}\"", ty.pg_name()),
            )
        };
        match &mut self.values {
            Values::Str(out) => {
                if let ColumnType::Str { max_chars: Some(n) } = ty
                    && s.chars().count() > n as usize
                {
                    return Err(SqlError::new(
                        ErrorKind::StringTooLong,
                        format!("value too long for type character varying({n})"),
                    ));
                }
                out.push(s);
                Ok(())
            }
            Values::Date(out) => {
                let d = Date::parse(s.trim()).map_err(|_| {
                    SqlError::new(
                        ErrorKind::InvalidText,
                        format!("invalid input syntax for type date: \"{s}\""),
                    )
                })?;
                out.push(d.days());
                Ok(())
            }
            Values::Timestamp(out) => {
                out.push(crate::types::parse_timestamp(s).ok_or_else(invalid)?);
                Ok(())
            }
            Values::Bool(out) => {
                out.push(i32::from(crate::types::parse_bool(s).ok_or_else(invalid)?));
                Ok(())
            }
            Values::Float(_) => {
                let d = crate::types::parse_double(s).ok_or_else(invalid)?;
                self.push_float(d)
            }
            _ => {
                let (value, scale) = parse_number(s.trim()).ok_or_else(invalid)?;
                self.push_exact(value, scale)
            }
        }
    }

    /// The column and, for a nullable column, its mask column, once every
    /// row is in.
    pub fn finish_with_mask(self) -> (Column, Option<Column>) {
        let mask = self.nulls.clone().map(Column::Int32);
        (self.finish(), mask)
    }

    /// The column, once every row is in (its mask dropped).
    pub fn finish(self) -> Column {
        match self.values {
            Values::Int32(v) => Column::Int32(v),
            Values::Int64(v) => Column::Int64(v),
            Values::Decimal(v) => Column::Decimal(
                DecimalColumn::new(self.spec.ty_scale(), v).expect("the scale was checked"),
            ),
            Values::Date(v) => Column::Date(v),
            Values::Str(h) => Column::StrHeap(h),
            Values::Timestamp(v) | Values::Float(v) => Column::Int64(v),
            Values::Bool(v) => Column::Int32(v),
        }
    }

    /// `value / 10^scale` into an integer or decimal column (or as text).
    fn push_exact(&mut self, value: i128, scale: u8) -> Result<()> {
        let target = self.spec.ty_scale();
        let spec = self.spec;
        let out_of_range = || out_of_range(spec);
        match &mut self.values {
            Values::Int32(out) => {
                let v = rescale(value, scale, 0).ok_or_else(out_of_range)?;
                let v = i32::try_from(v).map_err(|_| out_of_range())?;
                if spec.ty == ColumnType::Int16 && i16::try_from(v).is_err() {
                    return Err(out_of_range());
                }
                out.push(v);
            }
            Values::Int64(out) => {
                let v = rescale(value, scale, 0).ok_or_else(out_of_range)?;
                out.push(i64::try_from(v).map_err(|_| out_of_range())?);
            }
            Values::Decimal(out) => {
                let v = rescale(value, scale, target).ok_or_else(out_of_range)?;
                let limit = match self.spec.ty {
                    ColumnType::Decimal {
                        precision: Some(p), ..
                    } => 10i128.pow(u32::from(p)),
                    _ => i128::from(i64::MAX) + 1,
                };
                if v.abs() >= limit {
                    return Err(out_of_range());
                }
                out.push(v as i64);
            }
            Values::Str(_) => {
                let text = Value::Decimal { value, scale }.to_text();
                return self.push_text_value(&text);
            }
            Values::Float(_) => {
                // The double nearest the decimal (Rust's parse), as
                // PostgreSQL's numeric-to-float8 cast.
                let d: f64 = Value::Decimal { value, scale }
                    .to_text()
                    .parse()
                    .map_err(|_| out_of_range())?;
                return self.push_float(d);
            }
            Values::Date(_) | Values::Timestamp(_) | Values::Bool(_) => {
                return Err(self.mismatch("a number"));
            }
        }
        Ok(())
    }

    /// A double into a REAL or DOUBLE PRECISION column: a REAL keeps the
    /// shortest decimal of the value's `f32`, and one beyond the `f32`'s
    /// range is out of range (22003), as PostgreSQL's float4 cast.
    fn push_float(&mut self, d: f64) -> Result<()> {
        let stored = if self.spec.ty == ColumnType::Float32 {
            let f = d as f32;
            if f.is_infinite() && d.is_finite() {
                return Err(self.out_of_range());
            }
            f.to_string().parse::<f64>().unwrap_or(f64::from(f))
        } else {
            d
        };
        match &mut self.values {
            Values::Float(out) => out.push(crate::types::stored_double(stored)),
            _ => unreachable!("push_float on a {:?} column", self.spec.ty),
        }
        Ok(())
    }

    fn push_double(&mut self, d: f64) -> Result<()> {
        if let Values::Float(_) = self.values {
            return self.push_float(d);
        }
        if !d.is_finite() {
            return Err(self.out_of_range());
        }
        if let Values::Str(out) = &mut self.values {
            out.push_display(d);
            return Ok(());
        }
        // Through the column's scale, rounding half away from zero.
        let scale = self.spec.ty_scale();
        let scaled = (d * 10f64.powi(i32::from(scale))).round();
        if scaled.abs() >= 1e38 {
            return Err(self.out_of_range());
        }
        self.push_exact(scaled as i128, scale)
    }

    fn null(&self) -> SqlError {
        SqlError::new(
            ErrorKind::NotNullViolation,
            format!(
                "null value in column \"{}\" of relation \"{}\" violates not-null constraint",
                self.spec.name, self.table
            ),
        )
    }

    fn out_of_range(&self) -> SqlError {
        out_of_range(self.spec)
    }

    fn mismatch(&self, what: &str) -> SqlError {
        SqlError::mismatch(format!(
            "column \"{}\" is of type {} but the expression is {what}",
            self.spec.name,
            self.spec.type_text()
        ))
    }
}

fn out_of_range(spec: &ColumnSpec) -> SqlError {
    SqlError::new(
        ErrorKind::OutOfRange,
        format!(
            "value out of range for column \"{}\" of type {}",
            spec.name,
            spec.type_text()
        ),
    )
}

impl ColumnSpec {
    fn ty_scale(&self) -> u8 {
        match self.ty {
            ColumnType::Decimal { scale, .. } => scale,
            _ => 0,
        }
    }

    /// The type as SQL spells it, for messages.
    pub fn type_text(&self) -> String {
        match self.ty {
            ColumnType::Decimal {
                precision: Some(p),
                scale,
            } => format!("numeric({p},{scale})"),
            ColumnType::Str { max_chars: Some(n) } => format!("character varying({n})"),
            t => t.pg_name().to_string(),
        }
    }
}

/// `value / 10^from` as a multiple of `10^-to`, rounded half away from zero
/// (PostgreSQL's numeric rounding); `None` on overflow.
pub(crate) fn rescale(value: i128, from: u8, to: u8) -> Option<i128> {
    if to >= from {
        value.checked_mul(10i128.checked_pow(u32::from(to - from))?)
    } else {
        let div = 10i128.checked_pow(u32::from(from - to))?;
        let q = value / div;
        let r = value % div;
        Some(if r.abs() * 2 >= div {
            q + value.signum()
        } else {
            q
        })
    }
}

/// `[-+]digits[.digits]` (or `[-+].digits`, `digits.`, an exponent
/// `e[-+]n`) as `value / 10^scale`, rounded to 30 fractional digits.
pub(crate) fn parse_number(s: &str) -> Option<(i128, u8)> {
    let (value, scale) = parse_number_exact(s)?;
    // More fractional digits than any column keeps: round to 30 first.
    if scale > 30 {
        return Some((rescale(value, u8::try_from(scale).ok()?, 30)?, 30));
    }
    Some((value, scale as u8))
}

/// [`parse_number`] without the rounding: `value / 10^scale` exactly, for
/// any scale; `None` past 128 bits.
pub(crate) fn parse_number_exact(s: &str) -> Option<(i128, u32)> {
    let (mantissa, exp) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], s[i + 1..].parse::<i32>().ok()?),
        None => (s, 0),
    };
    let (negative, body) = match mantissa.as_bytes().first() {
        Some(b'-') => (true, &mantissa[1..]),
        Some(b'+') => (false, &mantissa[1..]),
        _ => (false, mantissa),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    if (int.is_empty() && frac.is_empty())
        || !int.bytes().chain(frac.bytes()).all(|c| c.is_ascii_digit())
    {
        return None;
    }
    let mut value: i128 = 0;
    for c in int.bytes().chain(frac.bytes()) {
        value = value.checked_mul(10)?.checked_add(i128::from(c - b'0'))?;
    }
    let mut scale = i32::try_from(frac.len()).ok()?.checked_sub(exp)?;
    if value == 0 {
        // Zero whatever its exponent (and no 2^31 multiplications of it).
        scale = scale.max(0);
    }
    while scale < 0 {
        value = value.checked_mul(10)?;
        scale += 1;
    }
    Some((if negative { -value } else { value }, scale as u32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_parse_and_round_half_away_from_zero() {
        assert_eq!(parse_number("12.50"), Some((1250, 2)));
        assert_eq!(parse_number("-.5"), Some((-5, 1)));
        assert_eq!(parse_number("1e3"), Some((1000, 0)));
        assert_eq!(parse_number("abc"), None);
        assert_eq!(parse_number(""), None);
        assert_eq!(parse_number("1e-40"), Some((0, 30)));
        assert_eq!(parse_number_exact("1e-40"), Some((1, 40)));
        assert_eq!(parse_number_exact("1e-2147483648"), None);
        assert_eq!(parse_number_exact("1e2147483647"), None);
        assert_eq!(parse_number_exact("0e2147483647"), Some((0, 0)));
        assert_eq!(rescale(125, 2, 1), Some(13));
        assert_eq!(rescale(-125, 2, 1), Some(-13));
        assert_eq!(rescale(124, 2, 1), Some(12));
        assert_eq!(rescale(7, 0, 2), Some(700));
    }

    #[test]
    fn values_are_cast_to_the_column_and_checked() {
        let spec = ColumnSpec {
            name: "p".into(),
            ty: ColumnType::Decimal {
                precision: Some(4),
                scale: 2,
            },
        };
        let mut b = ColumnBuilder::new("t", &spec);
        b.push(&Value::Int(12)).unwrap();
        b.push_text("1.005").unwrap();
        let err = b.push(&Value::Int(100)).unwrap_err();
        assert_eq!(err.kind, ErrorKind::OutOfRange);
        assert_eq!(
            b.push(&Value::Null).unwrap_err().kind,
            ErrorKind::NotNullViolation
        );
        assert_eq!(b.push_text("x").unwrap_err().kind, ErrorKind::InvalidText);
        let Column::Decimal(d) = b.finish() else {
            panic!("a decimal column")
        };
        assert_eq!(d.values(), &[1200, 101]);
        let small = ColumnSpec {
            name: "i".into(),
            ty: ColumnType::Int32,
        };
        let mut b = ColumnBuilder::new("t", &small);
        assert_eq!(
            b.push(&Value::Int(1 << 40)).unwrap_err().kind,
            ErrorKind::OutOfRange
        );
        b.push(&Value::Decimal {
            value: 25,
            scale: 1,
        })
        .unwrap();
        assert!(matches!(b.finish(), Column::Int32(v) if v == [3]));
    }
}
