//! SQL types and literals, mapped onto the column store's types: integers
//! (`Int32`/`Int64`), exact fixed-point decimals with their scale, dates (days
//! since 1970), timestamps (microseconds since 1970-01-01 00:00:00 UTC in
//! an `Int64` column: a stored column's declared type says it is one),
//! strings (dictionary or heap), and DOUBLE only where SQL produces one from
//! exact values (`AVG`, `/`).

use std::fmt;

use maestro_storage::column::{DataType, Date};

/// The type of a bound expression.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SqlType {
    /// A 64-bit integer (sums of integers are 128-bit at run time).
    Int,
    /// An exact fixed-point number with this many fractional digits.
    Decimal(u8),
    Double,
    Date,
    /// `TIMESTAMP [WITHOUT TIME ZONE]`: microseconds since the Unix epoch
    /// (UTC), PostgreSQL's resolution. Compared, grouped, sorted, cast to
    /// DATE and EXTRACT(YEAR)-ed; no arithmetic.
    Timestamp,
    Str,
    Bool,
    /// Only as an operand of date arithmetic with constants.
    Interval,
}

impl SqlType {
    pub fn of_column(t: DataType) -> SqlType {
        match t {
            DataType::Int32 | DataType::Int64 => SqlType::Int,
            DataType::Decimal { scale } => SqlType::Decimal(scale),
            DataType::Date => SqlType::Date,
            DataType::Str | DataType::StrHeap => SqlType::Str,
        }
    }

    /// Integers and decimals (exact numbers).
    pub fn is_exact(self) -> bool {
        matches!(self, SqlType::Int | SqlType::Decimal(_))
    }

    pub fn is_numeric(self) -> bool {
        self.is_exact() || self == SqlType::Double
    }

    /// Fractional digits of an exact number (0 for integers).
    pub fn scale(self) -> u8 {
        match self {
            SqlType::Decimal(s) => s,
            _ => 0,
        }
    }

    /// The exact type with `scale` fractional digits.
    pub fn exact(scale: u8) -> SqlType {
        if scale == 0 {
            SqlType::Int
        } else {
            SqlType::Decimal(scale)
        }
    }

    /// Whether values of the two types can be compared.
    pub fn comparable(self, other: SqlType) -> bool {
        (self.is_numeric() && other.is_numeric()) || self == other
    }
}

impl fmt::Display for SqlType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SqlType::Int => f.write_str("integer"),
            SqlType::Decimal(s) => write!(f, "decimal(scale {s})"),
            SqlType::Double => f.write_str("double"),
            SqlType::Date => f.write_str("date"),
            SqlType::Timestamp => f.write_str("timestamp"),
            SqlType::Str => f.write_str("varchar"),
            SqlType::Bool => f.write_str("boolean"),
            SqlType::Interval => f.write_str("interval"),
        }
    }
}

/// A constant.
#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    /// `value / 10^scale` (scale 0: an integer).
    Num {
        value: i64,
        scale: u8,
    },
    Date(Date),
    /// Microseconds since 1970-01-01 00:00:00 UTC.
    Timestamp(i64),
    Str(String),
    Interval {
        months: i32,
        days: i32,
    },
    /// A DOUBLE PRECISION (a bound parameter's, a constant cast to one).
    Double(f64),
    Bool(bool),
}

impl Literal {
    pub fn int(value: i64) -> Literal {
        Literal::Num { value, scale: 0 }
    }

    pub fn sql_type(&self) -> SqlType {
        match self {
            Literal::Num { scale, .. } => SqlType::exact(*scale),
            Literal::Date(_) => SqlType::Date,
            Literal::Timestamp(_) => SqlType::Timestamp,
            Literal::Str(_) => SqlType::Str,
            Literal::Interval { .. } => SqlType::Interval,
            Literal::Double(_) => SqlType::Double,
            Literal::Bool(_) => SqlType::Bool,
        }
    }
}

impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Num { value, scale: 0 } => write!(f, "{value}"),
            Literal::Num { value, scale } => {
                let d = maestro_storage::column::Decimal {
                    value: *value,
                    scale: *scale,
                };
                write!(f, "{d}")
            }
            Literal::Date(d) => write!(f, "DATE '{d}'"),
            Literal::Timestamp(t) => write!(f, "TIMESTAMP '{}'", format_timestamp(*t)),
            Literal::Str(s) => write!(f, "'{}'", s.replace('\'', "''")),
            Literal::Interval { months, days } => {
                write!(f, "INTERVAL '{months} months {days} days'")
            }
            Literal::Double(d) => write!(f, "CAST('{}' AS DOUBLE PRECISION)", double_text(*d)),
            Literal::Bool(b) => f.write_str(if *b { "TRUE" } else { "FALSE" }),
        }
    }
}

/// `[+-]digits[.digits]` exactly, as (value, scale): `-12.50` is (−1250, 2);
/// `None` if it is not one, has more than 30 fractional digits or does not
/// fit 128 bits.
pub(crate) fn parse_exact(s: &str) -> Option<(i128, u8)> {
    let (neg, digits) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
    if int.is_empty() && frac.is_empty()
        || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let scale = u8::try_from(frac.len()).ok().filter(|&s| s <= 30)?;
    let v: i128 = format!("{int}{frac}").parse().ok()?;
    Some((if neg { -v } else { v }, scale))
}

const MICROS_PER_DAY: i64 = 86_400_000_000;

pub use maestro_tpch::queries::format_timestamp;

/// `t` as a timestamp: µs since 1970-01-01 00:00:00 UTC (the clock is past
/// 1970, and µs since then fit an i64 for 292 000 years).
pub fn epoch_us(t: std::time::SystemTime) -> i64 {
    let since = t
        .duration_since(std::time::UNIX_EPOCH)
        .expect("the clock is past 1970");
    i64::try_from(since.as_micros()).expect("µs since 1970 fit in i64")
}

/// The date of a timestamp (the day it falls on, UTC).
pub fn timestamp_date(micros: i64) -> Option<Date> {
    i32::try_from(micros.div_euclid(MICROS_PER_DAY))
        .ok()
        .map(Date)
}

/// `YYYY-MM-DD[( |T)HH:MM[:SS[.f…]]][zone]` (UTC; a bare date is its
/// midnight) as microseconds since the epoch; `None` if it is not one.
/// Fractional seconds past the sixth digit round to the microsecond (half
/// to even), and a zone (`Z`, `±HH`, `±HH:MM`, `±HHMM`, as pgJDBC's
/// `setTimestamp` sends) is ignored — both as PostgreSQL's input of
/// `timestamp without time zone` does.
pub fn parse_timestamp(s: &str) -> Option<i64> {
    let s = s.trim();
    let s = s.strip_suffix('Z').unwrap_or(s);
    let (date, time) = match s.split_once([' ', 'T']) {
        Some((d, t)) => (d, Some(t.trim())),
        None => (s, None),
    };
    let day = i64::from(Date::parse(date).ok()?.0);
    let mut micros = 0i64;
    if let Some(t) = time {
        let t = without_zone(t);
        let (hms, frac) = t.split_once('.').unwrap_or((t, ""));
        let parts: Vec<&str> = hms.split(':').collect();
        if !(2..=3).contains(&parts.len())
            || parts
                .iter()
                .any(|p| p.len() != 2 || !p.bytes().all(|b| b.is_ascii_digit()))
            || !frac.bytes().all(|b| b.is_ascii_digit())
            || (parts.len() == 2 && !frac.is_empty())
        {
            return None;
        }
        let num = |p: &str| p.parse::<i64>().ok();
        let (h, m) = (num(parts[0])?, num(parts[1])?);
        let sec = parts.get(2).map_or(Some(0), |p| num(p))?;
        if h > 23 || m > 59 || sec > 59 {
            return None;
        }
        let f = round_micros(frac)?;
        micros = ((h * 60 + m) * 60 + sec) * 1_000_000 + f;
    }
    day.checked_mul(MICROS_PER_DAY)?.checked_add(micros)
}

/// `t` without a trailing `±HH`, `±HH:MM` or `±HHMM` zone offset.
fn without_zone(t: &str) -> &str {
    let Some(at) = t.rfind(['+', '-']) else {
        return t;
    };
    let zone = t[at + 1..].replace(':', "");
    let offset = (zone.len() == 2 || zone.len() == 4) && zone.bytes().all(|b| b.is_ascii_digit());
    if offset { t[..at].trim_end() } else { t }
}

/// Fractional-second digits as microseconds, rounded half to even past
/// the sixth digit (PostgreSQL rounds its input with `rint`).
fn round_micros(frac: &str) -> Option<i64> {
    let (kept, rest) = frac.split_at(frac.len().min(6));
    let mut f = if kept.is_empty() {
        0
    } else {
        kept.parse::<i64>().ok()? * 10i64.pow(6 - kept.len() as u32)
    };
    let rest = rest.trim_end_matches('0');
    let up = match rest.as_bytes().first() {
        None => false,
        Some(b'5') if rest.len() == 1 => f % 2 == 1,
        Some(&d) => d >= b'5',
    };
    if up {
        f += 1;
    }
    Some(f)
}

/// A DOUBLE PRECISION as PostgreSQL reads one: a decimal or exponent
/// number, `NaN`, `[+-]Infinity` (any case); not Rust's extras (`inf`).
pub(crate) fn parse_double(s: &str) -> Option<f64> {
    let s = s.trim();
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    let special = ["nan", "infinity"].contains(&body.to_ascii_lowercase().as_str());
    let numeric = body
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_digit() || b == b'.')
        && body
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'));
    (special || numeric)
        .then(|| s.parse::<f64>().ok())
        .flatten()
}

/// float8's text: the shortest digits that read back as the same double,
/// as PostgreSQL 12+ prints them — fixed notation for decimal exponents
/// -4 to 14, otherwise `1.5e-07`/`1e+308` (a sign and at least two
/// exponent digits); `Infinity`, `NaN` spelled its way.
pub fn double_text(d: f64) -> String {
    if d.is_nan() {
        return "NaN".to_string();
    }
    if d.is_infinite() {
        return if d > 0.0 { "Infinity" } else { "-Infinity" }.to_string();
    }
    // Rust's `{:e}` is the shortest round-trip digits: "1.5e-7", "1e308".
    let scientific = format!("{d:e}");
    let (mantissa, exponent) = scientific
        .split_once('e')
        .expect("a finite double's {:e} has an exponent");
    let exponent: i32 = exponent.parse().expect("an integer exponent");
    if (-4..15).contains(&exponent) {
        format!("{d}")
    } else {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exponent.unsigned_abs())
    }
}

/// An `i64` whose order is the order of the doubles (IEEE total order:
/// -NaN < -Infinity < … < -0 < +0 < … < Infinity < NaN);
/// [`from_ordered_bits`] undoes it. REAL and DOUBLE PRECISION columns store
/// this of their values ([`stored_double`]), so the operators' integer
/// kernels filter, sort and find extremes on the stored column.
pub fn ordered_bits(d: f64) -> i64 {
    let b = d.to_bits() as i64;
    b ^ (((b >> 63) as u64) >> 1) as i64
}

/// The double [`ordered_bits`] made `o` from (the map is its own inverse:
/// it flips the bits after the sign bit of negative numbers).
pub fn from_ordered_bits(o: i64) -> f64 {
    f64::from_bits((o ^ (((o >> 63) as u64) >> 1) as i64) as u64)
}

/// What a REAL or DOUBLE PRECISION column stores for `d`: its ordered
/// bits, every NaN as the one positive quiet NaN — PostgreSQL's NaN, equal
/// to itself and above every number, which is where its ordered bits sort
/// (a NaN with the sign bit would sort below -Infinity).
pub fn stored_double(d: f64) -> i64 {
    ordered_bits(if d.is_nan() { f64::NAN } else { d })
}

/// The stored values (ordered bits, [`stored_double`]) of the doubles equal
/// to the constant `l`, as the smallest and the largest: a zero is two
/// (-0 and +0, equal in SQL), any other number one; a number reads as the
/// evaluator reads one beside a double (the correctly rounded quotient).
/// `None` for NaN (equal only to NaN, which comparisons leave to the
/// evaluator) and for constants that are no numbers. A filter on a stored
/// double column and an index lookup on one both compare with these.
pub fn stored_doubles_equal_to(l: &Literal) -> Option<(i64, i64)> {
    let d = match l {
        Literal::Double(d) => *d,
        Literal::Num { value, scale } => {
            maestro_tpch::queries::ratio_f64(i128::from(*value), 10i128.pow(u32::from(*scale)))
        }
        _ => return None,
    };
    if d.is_nan() {
        None
    } else if d == 0.0 {
        Some((ordered_bits(-0.0), ordered_bits(0.0)))
    } else {
        Some((ordered_bits(d), ordered_bits(d)))
    }
}

/// PostgreSQL's boolean input: `t`/`true`/`yes`/`on`/`1` and their
/// negations, in any case, around blanks (a unique prefix of the words
/// too, as `boolin` accepts).
pub(crate) fn parse_bool(s: &str) -> Option<bool> {
    let t = s.trim().to_ascii_lowercase();
    let prefix_of = |word: &str| !t.is_empty() && word.starts_with(t.as_str());
    if prefix_of("true") || prefix_of("yes") || t == "on" || t == "1" {
        Some(true)
    } else if prefix_of("false") || prefix_of("no") || t == "off" || t == "of" || t == "0" {
        // "o" alone is ambiguous (on/off), as in PostgreSQL.
        Some(false)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_constant_equals_one_stored_double_or_both_zeros() {
        let num = |value, scale| Literal::Num { value, scale };
        let o = ordered_bits;
        assert_eq!(stored_doubles_equal_to(&num(1, 1)), Some((o(0.1), o(0.1))));
        assert_eq!(
            stored_doubles_equal_to(&Literal::Double(-2.5)),
            Some((o(-2.5), o(-2.5)))
        );
        assert_eq!(stored_doubles_equal_to(&num(0, 3)), Some((o(-0.0), o(0.0))));
        assert_eq!(
            stored_doubles_equal_to(&Literal::Double(-0.0)),
            Some((o(-0.0), o(0.0)))
        );
        assert_eq!(stored_doubles_equal_to(&Literal::Double(f64::NAN)), None);
        assert_eq!(stored_doubles_equal_to(&Literal::Str("1".into())), None);
    }

    #[test]
    fn ordered_bits_order_the_doubles_and_come_back() {
        let ds = [
            f64::NEG_INFINITY,
            -1e300,
            -2.5,
            -0.0,
            0.0,
            1e-300,
            3.0,
            f64::INFINITY,
        ];
        for w in ds.windows(2) {
            assert!(
                ordered_bits(w[0]) < ordered_bits(w[1]),
                "{} < {}",
                w[0],
                w[1]
            );
        }
        for d in ds {
            assert_eq!(from_ordered_bits(ordered_bits(d)).to_bits(), d.to_bits());
        }
        assert!(ordered_bits(f64::NAN) > ordered_bits(f64::INFINITY));
    }

    #[test]
    fn timestamps_parse_and_print_as_postgresql_does() {
        let t = parse_timestamp("2007-01-02 00:00:00.000000").unwrap();
        assert_eq!(t, 1_167_696_000_000_000);
        assert_eq!(format_timestamp(t), "2007-01-02 00:00:00");
        assert_eq!(parse_timestamp("2007-01-02"), Some(t));
        assert_eq!(parse_timestamp("2007-01-02T00:00:00Z"), Some(t));
        let u = parse_timestamp("2010-05-23 12:00:00.25").unwrap();
        assert_eq!(format_timestamp(u), "2010-05-23 12:00:00.25");
        assert_eq!(format_timestamp(-1), "1969-12-31 23:59:59.999999");
        assert_eq!(timestamp_date(u), Date::parse("2010-05-23").ok());
        // Past microseconds: rounded, half to even, carrying into seconds.
        let micros = |s: &str| parse_timestamp(s).map(|v| v - t);
        assert_eq!(micros("2007-01-02 00:00:00.1234567"), Some(123_457));
        assert_eq!(micros("2007-01-02 00:00:00.0000001"), Some(0));
        assert_eq!(micros("2007-01-02 00:00:00.0000005"), Some(0));
        assert_eq!(micros("2007-01-02 00:00:00.0000015"), Some(2));
        assert_eq!(micros("2007-01-02 00:00:00.00000051"), Some(1));
        assert_eq!(micros("2007-01-02 00:00:59.9999999"), Some(60_000_000));
        // A zone is ignored (timestamp without time zone).
        assert_eq!(micros("2007-01-02 00:00:00+00"), Some(0));
        assert_eq!(micros("2007-01-02 00:00:00.5-05:30"), Some(500_000));
        assert_eq!(micros("2007-01-02 00:00:00 +0100"), Some(0));
        assert_eq!(parse_timestamp("2007-01-02 00:00:00+5"), None);
        // Not wrapped.
        for bad in ["2007-01-02 24:00:00", "2007-13-01", "x"] {
            assert_eq!(parse_timestamp(bad), None, "{bad}");
        }
    }
}
