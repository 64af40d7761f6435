//! Exact fixed-point decimals: an `i64` count of `10^-scale` units. TPC-H money
//! and rates have scale 2 (`12.34` is stored as `1234`).

use std::fmt;

use super::ColumnError;

/// The largest scale accepted (`10^18` still fits an `i64`).
pub const MAX_SCALE: u8 = 18;

/// One decimal value: `value / 10^scale`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Decimal {
    pub value: i64,
    pub scale: u8,
}

impl Decimal {
    pub fn new(value: i64, scale: u8) -> Result<Decimal, ColumnError> {
        check_scale(scale)?;
        Ok(Decimal { value, scale })
    }

    /// Parses `[-+]digits[.digits]` exactly at `scale`: fewer fractional digits are
    /// padded with zeros; more are an error unless they are all zeros (never rounded).
    pub fn parse(s: &str, scale: u8) -> Result<Decimal, ColumnError> {
        check_scale(scale)?;
        let bad = |reason| ColumnError::InvalidDecimal {
            input: s.to_string(),
            reason,
        };
        let (negative, body) = match s.as_bytes().first() {
            Some(b'-') => (true, &s[1..]),
            Some(b'+') => (false, &s[1..]),
            _ => (false, s),
        };
        let (int, frac) = body.split_once('.').unwrap_or((body, ""));
        if int.is_empty() && frac.is_empty() {
            return Err(bad("no digits"));
        }
        if !int.bytes().chain(frac.bytes()).all(|c| c.is_ascii_digit()) {
            return Err(bad("not a decimal number"));
        }
        let kept = frac.len().min(scale as usize);
        if frac.as_bytes()[kept..].iter().any(|&c| c != b'0') {
            return Err(bad("more fractional digits than the scale"));
        }
        let mut value: i64 = 0;
        let digits = int.bytes().chain(frac[..kept].bytes());
        let padding = std::iter::repeat_n(b'0', scale as usize - kept);
        for c in digits.chain(padding) {
            value = value
                .checked_mul(10)
                .and_then(|v| v.checked_add(i64::from(c - b'0')))
                .ok_or_else(|| bad("out of range"))?;
        }
        Ok(Decimal {
            value: if negative { -value } else { value },
            scale,
        })
    }

    /// `10^scale`.
    pub fn unit(scale: u8) -> i64 {
        10i64.pow(u32::from(scale))
    }

    /// Lossy conversion, for display and statistics only.
    pub fn to_f64(self) -> f64 {
        self.value as f64 / Decimal::unit(self.scale) as f64
    }
}

impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.scale == 0 {
            return write!(f, "{}", self.value);
        }
        let unit = Decimal::unit(self.scale).unsigned_abs();
        let abs = self.value.unsigned_abs();
        let sign = if self.value < 0 { "-" } else { "" };
        let width = self.scale as usize;
        write!(f, "{sign}{}.{:0width$}", abs / unit, abs % unit)
    }
}

fn check_scale(scale: u8) -> Result<(), ColumnError> {
    if scale > MAX_SCALE {
        return Err(ColumnError::InvalidScale(scale));
    }
    Ok(())
}

/// A column of decimals sharing one scale.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecimalColumn {
    scale: u8,
    values: Vec<i64>,
}

impl DecimalColumn {
    pub fn new(scale: u8, values: Vec<i64>) -> Result<DecimalColumn, ColumnError> {
        check_scale(scale)?;
        Ok(DecimalColumn { scale, values })
    }

    pub fn scale(&self) -> u8 {
        self.scale
    }

    /// The raw values in units of `10^-scale`.
    pub fn values(&self) -> &[i64] {
        &self.values
    }

    pub fn get(&self, row: usize) -> Decimal {
        Decimal {
            value: self.values[row],
            scale: self.scale,
        }
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    pub fn heap_bytes(&self) -> usize {
        self.values.capacity() * size_of::<i64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> i64 {
        Decimal::parse(s, 2).unwrap().value
    }

    #[test]
    fn parses_exactly() {
        assert_eq!(d("12.34"), 1234);
        assert_eq!(d("0.05"), 5);
        assert_eq!(d(".07"), 7);
        assert_eq!(d("-0.01"), -1);
        assert_eq!(d("+3"), 300);
        assert_eq!(d("3."), 300);
        assert_eq!(d("1.5"), 150);
        assert_eq!(d("1.500"), 150);
        assert_eq!(d("9999999999.99"), 999_999_999_999);
        assert_eq!(Decimal::parse("17", 0).unwrap().value, 17);
    }

    #[test]
    fn rejects_inexact_or_malformed() {
        for bad in [
            "1.234",
            "",
            "-",
            ".",
            "1e5",
            "1.2.3",
            " 1",
            "--1",
            "99999999999999999999",
        ] {
            assert!(
                matches!(
                    Decimal::parse(bad, 2),
                    Err(ColumnError::InvalidDecimal { .. })
                ),
                "{bad:?}"
            );
        }
        assert!(matches!(
            Decimal::parse("1", 19),
            Err(ColumnError::InvalidScale(19))
        ));
    }

    #[test]
    fn formats_like_tpch() {
        let f = |v, s| Decimal { value: v, scale: s }.to_string();
        assert_eq!(f(0, 2), "0.00");
        assert_eq!(f(1, 2), "0.01");
        assert_eq!(f(-1, 2), "-0.01");
        assert_eq!(f(-100, 2), "-1.00");
        assert_eq!(f(2116823, 2), "21168.23");
        assert_eq!(f(7, 0), "7");
        assert_eq!(f(i64::MIN, 2), "-92233720368547758.08");
        for v in [
            -999_999_999_999i64,
            -12345,
            -5,
            0,
            5,
            12345,
            999_999_999_999,
        ] {
            assert_eq!(d(&f(v, 2)), v);
        }
    }
}
