//! Statement parameters on the wire: the PostgreSQL types a Describe
//! announces for maestro-sql's parameter types (and the other way round for
//! the types a client declares in Parse), and a Bind message's values —
//! text or binary — decoded into [`ParamValue`]s of those types.

use maestro_sql::ParamValue;
use maestro_sql::types::SqlType;
use maestro_storage::column::Date;
use pgwire::api::Type;
use pgwire::error::ErrorInfo;

use crate::errors::{self, error};

/// The type a Describe announces for a parameter of type `t`.
/// Result columns' types, except that a string parameter is TEXT (what
/// drivers send untyped strings as) rather than VARCHAR.
pub fn pg_type(t: SqlType) -> Type {
    match t {
        SqlType::Str => Type::TEXT,
        t => crate::encode::pg_type(t),
    }
}

/// The maestro-sql type of a parameter the client declared as `t`
/// (`Ok(None)`: unspecified, to be inferred).
pub fn declared_type(t: &Type) -> Result<Option<SqlType>, Box<ErrorInfo>> {
    Ok(Some(match *t {
        Type::INT2 | Type::INT4 | Type::INT8 => SqlType::Int,
        // The value brings its own scale; 2 only types the describing.
        Type::NUMERIC => SqlType::Decimal(2),
        Type::FLOAT4 | Type::FLOAT8 => SqlType::Double,
        Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME => SqlType::Str,
        Type::DATE => SqlType::Date,
        Type::TIMESTAMP => SqlType::Timestamp,
        Type::BOOL => SqlType::Bool,
        Type::UNKNOWN => return Ok(None),
        ref other => {
            return Err(error(
                errors::FEATURE_NOT_SUPPORTED,
                format!("parameters of type {other} are not supported"),
            ));
        }
    }))
}

/// One Bind value of parameter `$n` (1-based) whose wire type is `t` and
/// SQL type `ty`; `binary` says its format.
pub fn decode(
    n: usize,
    t: &Type,
    ty: SqlType,
    raw: Option<&[u8]>,
    binary: bool,
) -> Result<ParamValue, Box<ErrorInfo>> {
    let Some(raw) = raw else {
        return Ok(ParamValue::Null(ty));
    };
    if !binary {
        let text = std::str::from_utf8(raw).map_err(|_| {
            error(
                errors::CHARACTER_NOT_IN_REPERTOIRE,
                format!("parameter ${n} is not valid UTF-8"),
            )
        })?;
        return ParamValue::parse(text, ty).map_err(|e| errors::sql_error(&e, None));
    }
    let bad = || {
        error(
            errors::INVALID_BINARY_REPRESENTATION,
            format!("incorrect binary data format in bind parameter {n} (type {t})"),
        )
    };
    let int = |len: usize| -> Result<i64, Box<ErrorInfo>> {
        match (raw.len() == len).then_some(raw) {
            Some(&[a, b]) => Ok(i64::from(i16::from_be_bytes([a, b]))),
            Some(&[a, b, c, d]) => Ok(i64::from(i32::from_be_bytes([a, b, c, d]))),
            Some(b) if b.len() == 8 => Ok(i64::from_be_bytes(b.try_into().map_err(|_| bad())?)),
            _ => Err(bad()),
        }
    };
    Ok(match *t {
        Type::INT2 => ParamValue::Int(int(2)?),
        Type::INT4 => ParamValue::Int(int(4)?),
        Type::INT8 => ParamValue::Int(int(8)?),
        Type::FLOAT4 => {
            let b: [u8; 4] = raw.try_into().map_err(|_| bad())?;
            ParamValue::Double(f64::from(f32::from_be_bytes(b)))
        }
        Type::FLOAT8 => {
            let b: [u8; 8] = raw.try_into().map_err(|_| bad())?;
            ParamValue::Double(f64::from_be_bytes(b))
        }
        Type::NUMERIC => numeric(raw).ok_or_else(|| {
            error(
                errors::NUMERIC_VALUE_OUT_OF_RANGE,
                format!(
                    "numeric parameter ${n} is NaN, infinite or out of range (at most 18 digits)"
                ),
            )
        })?,
        Type::DATE => {
            let b: [u8; 4] = raw.try_into().map_err(|_| bad())?;
            // Days since 2000-01-01 on the wire, since 1970-01-01 here.
            let days = i32::from_be_bytes(b).checked_add(10_957).ok_or_else(bad)?;
            ParamValue::Date(Date(days))
        }
        Type::TIMESTAMP => {
            let b: [u8; 8] = raw.try_into().map_err(|_| bad())?;
            // Microseconds since 2000-01-01 on the wire, since 1970 here.
            let t = i64::from_be_bytes(b)
                .checked_add(crate::encode::PG_EPOCH_MICROS)
                .ok_or_else(bad)?;
            ParamValue::Timestamp(t)
        }
        Type::BOOL => match raw {
            [0] => ParamValue::Bool(false),
            [1] => ParamValue::Bool(true),
            _ => return Err(bad()),
        },
        // Text types (and unknown) are sent as their text.
        _ => {
            let text = std::str::from_utf8(raw).map_err(|_| bad())?;
            return ParamValue::parse(text, ty).map_err(|e| errors::sql_error(&e, None));
        }
    })
}

/// numeric's binary format (digit count, weight, sign, display scale, then
/// base-10000 digits) as an exact decimal; `None` for NaN, infinities and
/// values that do not fit 64 bits with at most 18 fractional digits.
fn numeric(b: &[u8]) -> Option<ParamValue> {
    let word = |i: usize| -> Option<i16> {
        Some(i16::from_be_bytes([*b.get(2 * i)?, *b.get(2 * i + 1)?]))
    };
    let (n, weight, sign, dscale) = (word(0)?, word(1)?, word(2)?, word(3)?);
    let n = usize::try_from(n).ok()?;
    if b.len() != 8 + 2 * n || !(sign == 0 || sign == 0x4000) {
        return None;
    }
    let scale = u8::try_from(dscale).ok().filter(|&s| s <= 18)?;
    // value = Σ digit[i] · 10000^(weight - i), scaled by 10^scale.
    let mut v: i128 = 0;
    for i in 0..n {
        let d = i128::from(word(4 + i)?);
        if !(0..10_000).contains(&d) {
            return None;
        }
        let exp = i32::from(weight) - i as i32;
        // Digit d stands for d · 10^(4·exp + scale).
        let pow = 4 * exp + i32::from(scale);
        let term = if pow >= 0 {
            d.checked_mul(10i128.checked_pow(u32::try_from(pow).ok()?)?)?
        } else {
            // Digits below the display scale (should not be sent).
            d / 10i128
                .checked_pow(u32::try_from(-pow).ok()?)
                .unwrap_or(i128::MAX)
        };
        v = v.checked_add(term)?;
    }
    if sign == 0x4000 {
        v = -v;
    }
    Some(ParamValue::Num {
        value: i64::try_from(v).ok()?,
        scale,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &[i16]) -> Vec<u8> {
        w.iter().flat_map(|x| x.to_be_bytes()).collect()
    }

    #[test]
    fn decodes_binary_numerics() {
        // 24.5 with display scale 2: digits [24, 5000], weight 0.
        assert_eq!(
            numeric(&words(&[2, 0, 0, 2, 24, 5000])),
            Some(ParamValue::Num {
                value: 2450,
                scale: 2
            })
        );
        // -123456.7: digits [12, 3456, 7000], weight 1, scale 1.
        assert_eq!(
            numeric(&words(&[3, 1, 0x4000, 1, 12, 3456, 7000])),
            Some(ParamValue::Num {
                value: -1_234_567,
                scale: 1
            })
        );
        // 0 (no digits), NaN, truncated.
        assert_eq!(
            numeric(&words(&[0, 0, 0, 0])),
            Some(ParamValue::Num { value: 0, scale: 0 })
        );
        assert_eq!(numeric(&words(&[0, 0, -16384, 0])), None);
        assert_eq!(numeric(&words(&[2, 0, 0, 2, 24])), None);
    }

    #[test]
    fn decodes_text_and_binary() {
        let v = decode(1, &Type::INT8, SqlType::Int, Some(b"42"), false).unwrap();
        assert_eq!(v, ParamValue::Int(42));
        let e = decode(1, &Type::INT8, SqlType::Int, Some(b"4x2"), false).unwrap_err();
        assert_eq!(e.code, "22P02");
        let v = decode(
            1,
            &Type::INT4,
            SqlType::Int,
            Some(&7i32.to_be_bytes()),
            true,
        )
        .unwrap();
        assert_eq!(v, ParamValue::Int(7));
        let e = decode(1, &Type::INT4, SqlType::Int, Some(&[1, 2]), true).unwrap_err();
        assert_eq!(e.code, "22P03");
        let v = decode(
            2,
            &Type::DATE,
            SqlType::Date,
            Some(&0i32.to_be_bytes()),
            true,
        )
        .unwrap();
        assert_eq!(v, ParamValue::Date(Date::parse("2000-01-01").unwrap()));
        assert_eq!(
            decode(1, &Type::TEXT, SqlType::Str, None, true).unwrap(),
            ParamValue::Null(SqlType::Str)
        );
    }
}
