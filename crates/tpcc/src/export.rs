//! CSV export: each table as `DIR/<table>.csv` with a header of the spec's
//! column names in lower case, one row per line, so the state after a run can
//! be verified with any other tool.
//!
//! Formats: integers and dates (seconds since the Unix epoch) in decimal;
//! money and rates exactly with their scale (`-10.00`, `0.1234`); nulls as an
//! empty field; text quoted (RFC 4180) only when it holds a comma, a quote or
//! a line break. Rows come in row-id order (for loaded tables, key order).

use std::fmt::{Display, Write as _};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use crate::db::Database;
use crate::error::TpccError;
use crate::schema::*;
use crate::table::Table;

/// `value / 10^scale` printed exactly, e.g. `(-5, 2)` → `-0.05`.
pub fn format_fixed(value: i64, scale: u32) -> String {
    let sign = if value < 0 { "-" } else { "" };
    let abs = value.unsigned_abs();
    if scale == 0 {
        return format!("{sign}{abs}");
    }
    let unit = 10u64.pow(scale);
    let width = scale as usize;
    format!("{sign}{}.{:0width$}", abs / unit, abs % unit)
}

/// One CSV line being built; `fields` decides the separator, since a field
/// (an empty string, a null) may add no text.
#[derive(Default)]
pub(crate) struct Line {
    buf: String,
    fields: usize,
    /// How dates print; `None`: seconds since the epoch.
    date_format: Option<DateFormat>,
}

/// Prints a timestamp (e.g. as ISO 8601 for CH-benCHmark's snapshots).
pub type DateFormat = fn(Timestamp) -> String;

impl Line {
    fn clear(&mut self) {
        self.buf.clear();
        self.fields = 0;
    }

    fn sep(&mut self) {
        if self.fields > 0 {
            self.buf.push(',');
        }
        self.fields += 1;
    }

    pub(crate) fn num(&mut self, v: impl Display) -> &mut Self {
        self.sep();
        // Writing to a String cannot fail.
        let _ = write!(self.buf, "{v}");
        self
    }

    pub(crate) fn opt(&mut self, v: Option<impl Display>) -> &mut Self {
        match v {
            Some(v) => self.num(v),
            None => {
                self.sep();
                self
            }
        }
    }

    pub(crate) fn date(&mut self, ts: Timestamp) -> &mut Self {
        match self.date_format {
            Some(format) => self.num(format(ts)),
            None => self.num(ts),
        }
    }

    pub(crate) fn opt_date(&mut self, ts: Option<Timestamp>) -> &mut Self {
        match ts {
            Some(ts) => self.date(ts),
            None => self.opt(None::<u8>),
        }
    }

    pub(crate) fn money(&mut self, v: Money) -> &mut Self {
        self.num(format_fixed(v, MONEY_SCALE))
    }

    pub(crate) fn rate(&mut self, v: Rate) -> &mut Self {
        self.num(format_fixed(i64::from(v), RATE_SCALE))
    }

    /// Fixed-width text; bytes that are not UTF-8 (never written by the loader)
    /// print as U+FFFD rather than failing the export.
    pub(crate) fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.text(&String::from_utf8_lossy(b))
    }

    pub(crate) fn text(&mut self, s: &str) -> &mut Self {
        self.sep();
        if s.contains([',', '"', '\n', '\r']) {
            self.buf.push('"');
            self.buf.push_str(&s.replace('"', "\"\""));
            self.buf.push('"');
        } else {
            self.buf.push_str(s);
        }
        self
    }
}

/// A row that prints itself as one CSV line (implemented in `csv_rows.rs`).
pub(crate) trait CsvRow {
    /// The header: the spec's column names, lower case, comma-separated.
    const HEADER: &'static str;
    fn write(&self, line: &mut Line);
}

/// Writes every table into `dir` (created if missing); returns the rows
/// written per table, in the order of [`TABLE_NAMES`].
pub fn export_csv(db: &Database, dir: &Path) -> Result<Vec<(&'static str, u64)>, TpccError> {
    export_csv_with(db, dir, None)
}

/// [`export_csv`] with dates printed by `date_format` (`None`: seconds since
/// the epoch).
pub fn export_csv_with(
    db: &Database,
    dir: &Path,
    date_format: Option<DateFormat>,
) -> Result<Vec<(&'static str, u64)>, TpccError> {
    std::fs::create_dir_all(dir)?;
    let f = date_format;
    Ok(vec![
        write_table(&db.warehouse, dir, f)?,
        write_table(&db.district, dir, f)?,
        write_table(&db.customer, dir, f)?,
        write_table(&db.history, dir, f)?,
        write_table(&db.new_order, dir, f)?,
        write_table(&db.orders, dir, f)?,
        write_table(&db.order_line, dir, f)?,
        write_table(&db.item, dir, f)?,
        write_table(&db.stock, dir, f)?,
    ])
}

fn write_table<R: CsvRow>(
    table: &Table<R>,
    dir: &Path,
    date_format: Option<DateFormat>,
) -> Result<(&'static str, u64), TpccError> {
    let path = dir.join(format!("{}.csv", table.name()));
    let mut out = BufWriter::new(File::create(path)?);
    writeln!(out, "{}", R::HEADER)?;
    let mut line = Line {
        date_format,
        ..Line::default()
    };
    let (mut rows, mut failure) = (0, None);
    table.scan(|_, row| {
        if failure.is_some() {
            return;
        }
        line.clear();
        row.write(&mut line);
        line.buf.push('\n');
        match out.write_all(line.buf.as_bytes()) {
            Ok(()) => rows += 1,
            Err(e) => failure = Some(e),
        }
    });
    if let Some(e) = failure {
        return Err(e.into());
    }
    out.flush()?;
    Ok((table.name(), rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_print_exactly_with_their_scale() {
        assert_eq!(format_fixed(30_000_000, 2), "300000.00");
        assert_eq!(format_fixed(-1000, 2), "-10.00");
        assert_eq!(format_fixed(-5, 2), "-0.05");
        assert_eq!(format_fixed(1234, 4), "0.1234");
        assert_eq!(format_fixed(7, 0), "7");
        assert_eq!(format_fixed(i64::MIN, 2), "-92233720368547758.08");
    }

    #[test]
    fn fields_are_quoted_only_when_needed() {
        let mut l = Line::default();
        l.text("")
            .text("a,b")
            .text("say \"hi\"")
            .opt(None::<u8>)
            .num(5);
        assert_eq!(l.buf, ",\"a,b\",\"say \"\"hi\"\"\",,5");
    }
}
