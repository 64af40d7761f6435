//! maestro-sql's result types as PostgreSQL types, and cells in PostgreSQL's
//! text and binary formats: BIGINT as `int8`, DECIMAL(p,s) as `numeric` (exact,
//! `s` fractional digits), DOUBLE as `float8`, VARCHAR as `varchar`, DATE as
//! `date` (`YYYY-MM-DD`), TIMESTAMP as `timestamp` (`YYYY-MM-DD HH:MM:SS[.f]`;
//! binary: microseconds since 2000-01-01), BOOLEAN as `bool`.

use bytes::{BufMut, BytesMut};
use maestro_sql::types::{SqlType, double_text};
use maestro_tpch::queries::Value;
use pgwire::api::Type;
use pgwire::api::portal::Format;
use pgwire::api::results::{FieldFormat, FieldInfo};
use pgwire::messages::data::DataRow;

/// Days from 1970-01-01 (maestro's dates) to 2000-01-01 (PostgreSQL's epoch).
const PG_EPOCH_DAYS: i32 = 10_957;

/// Microseconds from 1970-01-01 to 2000-01-01 (timestamps' epochs).
pub const PG_EPOCH_MICROS: i64 = 10_957 * 86_400_000_000;

/// The PostgreSQL type of a result column of SQL type `t`.
pub fn pg_type(t: SqlType) -> Type {
    match t {
        SqlType::Int => Type::INT8,
        SqlType::Decimal(_) => Type::NUMERIC,
        SqlType::Double => Type::FLOAT8,
        SqlType::Date => Type::DATE,
        SqlType::Timestamp => Type::TIMESTAMP,
        SqlType::Str => Type::VARCHAR,
        SqlType::Bool => Type::BOOL,
        SqlType::Interval => Type::TEXT,
    }
}

/// The format of result column `i` as the client asked for it in Bind; text
/// where it asked for nothing or sent fewer codes than there are columns.
pub fn format_at(format: &Format, i: usize) -> FieldFormat {
    match format {
        Format::UnifiedText => FieldFormat::Text,
        Format::UnifiedBinary => FieldFormat::Binary,
        Format::Individual(codes) => codes
            .get(i)
            .map_or(FieldFormat::Text, |&c| FieldFormat::from(c)),
    }
}

/// The RowDescription of columns `cols` in `format`.
pub fn fields(cols: &[(String, SqlType)], format: &Format) -> Vec<FieldInfo> {
    cols.iter()
        .enumerate()
        .map(|(i, (name, t))| {
            let info = FieldInfo::new(name.clone(), None, None, pg_type(*t), format_at(format, i));
            match t {
                SqlType::Int | SqlType::Double | SqlType::Timestamp => info.with_type_size(8),
                SqlType::Date => info.with_type_size(4),
                SqlType::Bool => info.with_type_size(1),
                // numeric(38, s): the precision of an i128 and the exact scale.
                SqlType::Decimal(s) => info
                    .with_type_size(-1)
                    .with_type_modifier(((38 << 16) | i32::from(*s)) + 4),
                SqlType::Str | SqlType::Interval => info.with_type_size(-1),
            }
        })
        .collect()
}

/// One row of cells as a DataRow, each cell in its field's format.
pub fn data_row(row: &[Value], fields: &[FieldInfo]) -> DataRow {
    let mut data = BytesMut::new();
    for (i, v) in row.iter().enumerate() {
        let (ty, format) = fields.get(i).map_or((Type::TEXT, FieldFormat::Text), |f| {
            (f.datatype().clone(), f.format())
        });
        let cell = match format {
            FieldFormat::Text => text(v, &ty).map(String::into_bytes),
            FieldFormat::Binary => binary(v, &ty),
        };
        match cell {
            None => data.put_i32(-1),
            Some(bytes) => {
                data.put_i32(bytes.len() as i32);
                data.put_slice(&bytes);
            }
        }
    }
    DataRow::new(data, row.len() as i16)
}

/// A cell in PostgreSQL's text format (`None`: NULL).
pub fn text(v: &Value, ty: &Type) -> Option<String> {
    Some(match v {
        Value::Null => return None,
        Value::Int(i) => i.to_string(),
        Value::Decimal { value, scale } => decimal_text(*value, *scale),
        Value::Double(d) => double_text(*d),
        Value::Date(d) => d.to_string(),
        Value::Timestamp(t) => maestro_tpch::queries::format_timestamp(*t),
        Value::Str(s) if *ty == Type::BOOL => bool_text(s).to_string(),
        Value::Str(s) => s.clone(),
    })
}

/// A cell in PostgreSQL's binary format for type `ty` (`None`: NULL).
pub fn binary(v: &Value, ty: &Type) -> Option<Vec<u8>> {
    Some(match v {
        Value::Null => return None,
        Value::Int(i) => i.to_be_bytes().to_vec(),
        Value::Decimal { value, scale } => numeric_binary(*value, *scale),
        Value::Double(d) => d.to_bits().to_be_bytes().to_vec(),
        Value::Date(d) => d.0.wrapping_sub(PG_EPOCH_DAYS).to_be_bytes().to_vec(),
        Value::Timestamp(t) => t.wrapping_sub(PG_EPOCH_MICROS).to_be_bytes().to_vec(),
        Value::Str(s) if *ty == Type::BOOL => vec![u8::from(bool_text(s) == "t")],
        Value::Str(s) => s.as_bytes().to_vec(),
    })
}

fn bool_text(s: &str) -> &'static str {
    if s == "true" || s == "t" { "t" } else { "f" }
}

/// `value / 10^scale` with exactly `scale` fractional digits.
pub fn decimal_text(value: i128, scale: u8) -> String {
    let unit = 10u128.pow(u32::from(scale));
    let abs = value.unsigned_abs();
    let sign = if value < 0 { "-" } else { "" };
    if scale == 0 {
        return format!("{sign}{abs}");
    }
    format!(
        "{sign}{}.{:0width$}",
        abs / unit,
        abs % unit,
        width = usize::from(scale)
    )
}

/// `numeric`'s binary format: digit count, weight (of the first base-10000
/// digit), sign, display scale, then the base-10000 digits without leading or
/// trailing zero digits.
pub fn numeric_binary(value: i128, scale: u8) -> Vec<u8> {
    let abs = value.unsigned_abs();
    let unit = 10u128.pow(u32::from(scale));
    let (mut int, frac) = (abs / unit, abs % unit);
    let mut digits: Vec<i16> = Vec::new();
    while int > 0 {
        digits.push((int % 10_000) as i16);
        int /= 10_000;
    }
    digits.reverse();
    let mut weight = digits.len() as i16 - 1;
    // The fraction padded on the right to whole groups of four digits.
    let groups = u32::from(scale).div_ceil(4);
    let mut f = frac * 10u128.pow(groups * 4 - u32::from(scale));
    let mut frac_digits = vec![0i16; groups as usize];
    for d in frac_digits.iter_mut().rev() {
        *d = (f % 10_000) as i16;
        f /= 10_000;
    }
    digits.extend(frac_digits);
    let lead = digits.iter().take_while(|&&d| d == 0).count();
    digits.drain(..lead);
    weight -= lead as i16;
    while digits.last() == Some(&0) {
        digits.pop();
    }
    if digits.is_empty() {
        weight = 0;
    }
    let sign: u16 = if value < 0 && !digits.is_empty() {
        0x4000
    } else {
        0
    };
    let mut out = Vec::with_capacity(8 + 2 * digits.len());
    out.extend_from_slice(&(digits.len() as i16).to_be_bytes());
    out.extend_from_slice(&weight.to_be_bytes());
    out.extend_from_slice(&sign.to_be_bytes());
    out.extend_from_slice(&i16::from(scale).to_be_bytes());
    for d in digits {
        out.extend_from_slice(&d.to_be_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(b: &[u8]) -> Vec<i16> {
        b.chunks(2)
            .map(|c| i16::from_be_bytes([c[0], c[1]]))
            .collect()
    }

    #[test]
    fn numeric_binary_matches_postgres() {
        // numeric '12345.678': 3 digits, weight 1, +, dscale 3: 1 2345 6780.
        assert_eq!(
            words(&numeric_binary(12_345_678, 3)),
            [3, 1, 0, 3, 1, 2345, 6780]
        );
        // '-0.0042': 1 digit, weight -1, -, dscale 4: 42.
        assert_eq!(words(&numeric_binary(-42, 4)), [1, -1, 0x4000, 4, 42]);
        // '100000000.00': 1 digit (1), weight 2, trailing zeros dropped.
        assert_eq!(words(&numeric_binary(10_000_000_000, 2)), [1, 2, 0, 2, 1]);
        // '0.00'.
        assert_eq!(words(&numeric_binary(0, 2)), [0, 0, 0, 2]);
        // '0.00000001' (scale 8): weight -2, digit 1 (0000 0001).
        assert_eq!(words(&numeric_binary(1, 8)), [1, -2, 0, 8, 1]);
        // '0.000001': 0000 0100.
        assert_eq!(words(&numeric_binary(100, 8)), [1, -2, 0, 8, 100]);
    }

    #[test]
    fn texts() {
        assert_eq!(decimal_text(-5, 2), "-0.05");
        assert_eq!(decimal_text(1234, 0), "1234");
        assert_eq!(decimal_text(10, 1), "1.0");
        assert_eq!(double_text(0.5), "0.5");
        assert_eq!(double_text(3.0), "3");
        for (d, text) in [
            (1e308, "1e+308"),
            (1.5e-7, "1.5e-07"),
            (1e-5, "1e-05"),
            (0.0001, "0.0001"),
            (123456789012345.0, "123456789012345"),
            (1e15, "1e+15"),
            (-6.02e23, "-6.02e+23"),
            (0.1, "0.1"),
            (-0.0, "-0"),
        ] {
            assert_eq!(double_text(d), text, "{d:e}");
        }
        assert_eq!(double_text(f64::NEG_INFINITY), "-Infinity");
        assert_eq!(
            text(&Value::Str("true".into()), &Type::BOOL).as_deref(),
            Some("t")
        );
        assert_eq!(text(&Value::Null, &Type::INT8), None);
    }

    #[test]
    fn dates_count_from_2000() {
        let d = Value::Date(maestro_storage::column::Date(10_958));
        assert_eq!(binary(&d, &Type::DATE), Some(1i32.to_be_bytes().to_vec()));
        assert_eq!(text(&d, &Type::DATE).as_deref(), Some("2000-01-02"));
    }
}
