//! Calendar dates as days since 1970-01-01 (proleptic Gregorian), the
//! representation of `Date` columns (`Vec<i32>`).
//!
//! Conversions use Howard Hinnant's `days_from_civil` / `civil_from_days`
//! algorithms, exact for every `i32` day count this module accepts.

use std::fmt;
use std::str::FromStr;

use super::ColumnError;

/// A date: days since 1970-01-01. Ordered like the calendar.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date(pub i32);

impl Date {
    /// The date of `year-month-day`, or an error if the day does not exist.
    pub fn from_ymd(year: i32, month: u32, day: u32) -> Result<Date, ColumnError> {
        if !(-9999..=9999).contains(&year) {
            return Err(invalid_date(
                format!("{year}-{month}-{day}"),
                "year out of range",
            ));
        }
        if !(1..=12).contains(&month) {
            return Err(invalid_date(
                format!("{year}-{month}-{day}"),
                "month not in 1..=12",
            ));
        }
        if day == 0 || day > days_in_month(year, month) {
            return Err(invalid_date(
                format!("{year}-{month}-{day}"),
                "day not in the month",
            ));
        }
        Ok(Date(days_from_civil(year, month, day)))
    }

    /// Parses exactly `YYYY-MM-DD` (four-digit year, two-digit month and day).
    pub fn parse(s: &str) -> Result<Date, ColumnError> {
        let b = s.as_bytes();
        let well_formed = b.len() == 10
            && b[4] == b'-'
            && b[7] == b'-'
            && b.iter()
                .enumerate()
                .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
        if !well_formed {
            return Err(invalid_date(s.to_string(), "expected YYYY-MM-DD"));
        }
        let num = |r: std::ops::Range<usize>| {
            b[r].iter()
                .fold(0u32, |acc, c| acc * 10 + u32::from(c - b'0'))
        };
        Date::from_ymd(num(0..4) as i32, num(5..7), num(8..10))
            .map_err(|_| invalid_date(s.to_string(), "no such day"))
    }

    /// Days since 1970-01-01.
    pub fn days(self) -> i32 {
        self.0
    }

    /// `(year, month, day)`.
    pub fn ymd(self) -> (i32, u32, u32) {
        civil_from_days(self.0)
    }

    pub fn year(self) -> i32 {
        self.ymd().0
    }

    pub fn add_days(self, days: i32) -> Date {
        Date(self.0 + days)
    }

    /// Adds calendar months; the day is clamped to the end of the target month
    /// (2024-01-31 + 1 month = 2024-02-29), as SQL's `+ interval 'n' month` does.
    pub fn add_months(self, months: i32) -> Date {
        let (y, m, d) = self.ymd();
        let total = y * 12 + (m as i32 - 1) + months;
        let (ny, nm) = (total.div_euclid(12), total.rem_euclid(12) as u32 + 1);
        Date(days_from_civil(ny, nm, d.min(days_in_month(ny, nm))))
    }

    pub fn add_years(self, years: i32) -> Date {
        self.add_months(years * 12)
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (y, m, d) = self.ymd();
        write!(f, "{y:04}-{m:02}-{d:02}")
    }
}

impl FromStr for Date {
    type Err = ColumnError;
    fn from_str(s: &str) -> Result<Date, ColumnError> {
        Date::parse(s)
    }
}

fn invalid_date(input: String, reason: &'static str) -> ColumnError {
    ColumnError::InvalidDate { input, reason }
}

fn is_leap(y: i32) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i32, m: u32) -> u32 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a valid civil date.
fn days_from_civil(y: i32, m: u32, d: u32) -> i32 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400) as u32; // [0, 399]
    let mp = (m + 9) % 12; // March = 0
    let doy = (153 * mp + 2) / 5 + d - 1; // [0, 365]
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy; // [0, 146096]
    era * 146_097 + doe as i32 - 719_468
}

/// The civil date of a day count.
fn civil_from_days(z: i32) -> (i32, u32, u32) {
    let z = i64::from(z) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097) as u32; // [0, 146096]
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365]
    let mp = (5 * doy + 2) / 153; // [0, 11]
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe as i64 + era * 400 + i64::from(m <= 2);
    (y as i32, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epoch_and_known_days() {
        assert_eq!(Date::parse("1970-01-01").unwrap(), Date(0));
        assert_eq!(Date::parse("1992-01-01").unwrap(), Date(8035));
        assert_eq!(Date::parse("1998-12-01").unwrap().days(), 10_561);
        assert_eq!(Date::parse("1969-12-31").unwrap(), Date(-1));
        assert_eq!(Date::parse("2000-02-29").unwrap().to_string(), "2000-02-29");
    }

    #[test]
    fn round_trips_every_day_of_four_centuries() {
        let start = Date::parse("1800-01-01").unwrap().days();
        let mut prev = (1799, 12, 31);
        for days in start..start + 146_097 * 2 {
            let d = Date(days);
            let (y, m, dd) = d.ymd();
            assert!((y, m, dd) > prev, "{d} follows {prev:?}");
            prev = (y, m, dd);
            assert_eq!(Date::from_ymd(y, m, dd).unwrap(), d);
            assert_eq!(Date::parse(&d.to_string()).unwrap(), d);
        }
    }

    #[test]
    fn rejects_malformed_and_impossible_dates() {
        for bad in [
            "1998-13-01",
            "1998-02-29",
            "1900-02-29",
            "1998-00-10",
            "1998-01-00",
            "1998-1-01",
            "98-01-01",
            "1998/01/01",
            "1998-01-01 ",
            "",
            "abcd-ef-gh",
        ] {
            assert!(
                matches!(Date::parse(bad), Err(ColumnError::InvalidDate { .. })),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn interval_arithmetic() {
        let d = Date::parse("1998-12-01").unwrap();
        assert_eq!(d.add_days(-90).to_string(), "1998-09-02");
        assert_eq!(
            Date::parse("1995-01-31").unwrap().add_months(1).to_string(),
            "1995-02-28"
        );
        assert_eq!(
            Date::parse("1996-12-15").unwrap().add_months(3).to_string(),
            "1997-03-15"
        );
        assert_eq!(
            Date::parse("1994-01-01").unwrap().add_years(1).to_string(),
            "1995-01-01"
        );
        assert_eq!(
            Date::parse("1994-03-01")
                .unwrap()
                .add_months(-3)
                .to_string(),
            "1993-12-01"
        );
        assert_eq!(d.year(), 1998);
    }
}
