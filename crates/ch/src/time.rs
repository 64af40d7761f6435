//! Civil time for TPC-C timestamps (seconds since the Unix epoch, UTC): the
//! CH queries' date literals, `extract(year …)`, ISO 8601 output and the
//! parsing of `--clock-start`.

use maestro_tpcc::Timestamp;

const SECONDS_PER_DAY: i64 = 86_400;

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
/// `days_from_civil`).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of `days` since 1970-01-01: (year, month 1–12, day 1–31).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// The timestamp of a UTC date and time (for the queries' literals; the
/// dates are after 1970).
pub const fn at(year: i64, month: u32, day: u32, hour: u32, minute: u32, second: u32) -> Timestamp {
    // const fn: the body of days_from_civil inlined.
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = month as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + day as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    (days * SECONDS_PER_DAY + hour as i64 * 3600 + minute as i64 * 60 + second as i64) as Timestamp
}

/// The UTC year of `ts`.
pub fn year(ts: Timestamp) -> i64 {
    civil_from_days((ts as i64).div_euclid(SECONDS_PER_DAY)).0
}

/// `ts` as ISO 8601 UTC, e.g. `2020-01-01T00:00:00Z`.
pub fn iso8601(ts: Timestamp) -> String {
    let secs = ts as i64;
    let (y, mo, d) = civil_from_days(secs.div_euclid(SECONDS_PER_DAY));
    let rem = secs.rem_euclid(SECONDS_PER_DAY);
    format!(
        "{y:04}-{mo:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// Parses `YYYY-MM-DD`, `YYYY-MM-DDTHH:MM:SS` or the same with a trailing
/// `Z` (always UTC), as `--clock-start` takes it.
pub fn parse_iso8601(text: &str) -> Result<Timestamp, String> {
    let bad = || format!("{text:?} is not a UTC time like 2020-01-01T00:00:00Z");
    let s = text.strip_suffix('Z').unwrap_or(text);
    let (date, time) = match s.split_once(['T', ' ']) {
        Some((d, t)) => (d, Some(t)),
        None => (s, None),
    };
    let num = |part: Option<&str>, lo: i64, hi: i64| -> Result<i64, String> {
        let v: i64 = part.ok_or_else(bad)?.parse().map_err(|_| bad())?;
        if (lo..=hi).contains(&v) {
            Ok(v)
        } else {
            Err(bad())
        }
    };
    let mut d = date.split('-');
    let year = num(d.next(), 1970, 9999)?;
    let month = num(d.next(), 1, 12)? as u32;
    let day = num(d.next(), 1, 31)? as u32;
    if d.next().is_some() {
        return Err(bad());
    }
    let (mut h, mut mi, mut sec) = (0, 0, 0);
    if let Some(t) = time {
        let mut t = t.split(':');
        h = num(t.next(), 0, 23)?;
        mi = num(t.next(), 0, 59)?;
        sec = num(t.next(), 0, 59)?;
        if t.next().is_some() {
            return Err(bad());
        }
    }
    let days = days_from_civil(year, month, day);
    if civil_from_days(days) != (year, month, day) {
        return Err(bad());
    }
    Ok((days * SECONDS_PER_DAY + h * 3600 + mi * 60 + sec) as Timestamp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_known_dates() {
        assert_eq!(at(1970, 1, 1, 0, 0, 0), 0);
        assert_eq!(at(2007, 1, 2, 0, 0, 0), 1_167_696_000);
        assert_eq!(at(2020, 1, 1, 0, 0, 0), 1_577_836_800);
        assert_eq!(iso8601(1_577_836_800), "2020-01-01T00:00:00Z");
        assert_eq!(iso8601(951_782_400 + 3661), "2000-02-29T01:01:01Z");
        assert_eq!(year(1_577_836_799), 2019);
        assert_eq!(year(1_577_836_800), 2020);
        for ts in [0, 951_782_400, 1_167_696_000, 4_102_444_800 - 1] {
            assert_eq!(parse_iso8601(&iso8601(ts)), Ok(ts));
        }
        assert_eq!(parse_iso8601("2020-01-01"), Ok(1_577_836_800));
        assert!(parse_iso8601("2021-02-29").is_err());
        assert!(parse_iso8601("2020-13-01").is_err());
        assert!(parse_iso8601("yesterday").is_err());
        assert!(parse_iso8601("2020-01-01T25:00:00Z").is_err());
    }
}
