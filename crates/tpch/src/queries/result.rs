//! `QueryResult`: a query's answer as typed rows, and its three printed forms
//! (an aligned table, the CSV of the issue — header of the spec's column names,
//! exact decimals, `YYYY-MM-DD` dates — and JSON).

use std::fmt::Write as _;

use maestro_storage::column::Date;
use serde_json::{Value as Json, json};

/// The type of one result column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnType {
    /// An exact integer (`BIGINT`/`INTEGER`).
    Int,
    /// An exact fixed-point number with this many fractional digits.
    Decimal(u8),
    /// A floating-point number (averages and ratios, `DOUBLE` in the spec's SQL).
    Double,
    Str,
    Date,
    /// A SQL TIMESTAMP (the SQL front end's CH tables).
    Timestamp,
    /// A SQL BOOLEAN (the SQL front end's): its values are `Value::Str`
    /// "true" and "false".
    Bool,
}

/// One cell.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Int(i64),
    /// `value / 10^scale`, exact.
    Decimal {
        value: i128,
        scale: u8,
    },
    Double(f64),
    Str(String),
    Date(Date),
    /// Microseconds since 1970-01-01 00:00:00 UTC.
    Timestamp(i64),
    /// SQL NULL: only the single row of an aggregate over no rows.
    Null,
}

impl Value {
    /// A double computed as the correctly rounded quotient `num / den` of two
    /// exact values (`den != 0`), as SQL's `AVG` or `DECIMAL / DECIMAL` returns.
    pub fn ratio(num: i128, den: i128) -> Value {
        Value::Double(ratio_f64(num, den))
    }

    /// The text of this cell in CSV (and in the table): integers and strings
    /// exact, decimals with all their (at least 2) fractional digits, dates
    /// `YYYY-MM-DD`, doubles as the shortest text that reads back as the same
    /// double, NULL empty.
    pub fn to_text(&self) -> String {
        match self {
            Value::Int(v) => v.to_string(),
            Value::Decimal { value, scale } => format_decimal(*value, *scale),
            Value::Double(v) => format_double(*v),
            Value::Str(s) => s.clone(),
            Value::Date(d) => d.to_string(),
            Value::Timestamp(t) => format_timestamp(*t),
            Value::Null => String::new(),
        }
    }

    fn to_json(&self) -> Json {
        match self {
            Value::Int(v) => json!(v),
            // Exact: a JSON number would lose digits beyond f64.
            Value::Decimal { .. } | Value::Date(_) | Value::Timestamp(_) => json!(self.to_text()),
            Value::Double(v) => json!(v),
            Value::Str(s) => json!(s),
            Value::Null => Json::Null,
        }
    }
}

const MICROS_PER_DAY: i64 = 86_400_000_000;

/// A timestamp (microseconds since the epoch, UTC) as PostgreSQL prints it:
/// `YYYY-MM-DD HH:MM:SS`, with `.ffffff` (trailing zeros dropped) when it
/// has a fraction of a second.
pub fn format_timestamp(micros: i64) -> String {
    let day = micros.div_euclid(MICROS_PER_DAY);
    let of_day = micros.rem_euclid(MICROS_PER_DAY);
    let (secs, frac) = (of_day / 1_000_000, of_day % 1_000_000);
    let date = Date(i32::try_from(day).unwrap_or(if day < 0 { i32::MIN } else { i32::MAX }));
    let mut s = format!(
        "{date} {:02}:{:02}:{:02}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    );
    if frac != 0 {
        s.push_str(format!(".{frac:06}").trim_end_matches('0'));
    }
    s
}

/// `num / den` as the nearest `f64`. Exact when both fit in 53 bits, which
/// covers every TPC-H ratio up to SF 10 and beyond; larger operands are first
/// scaled down, losing at most an ulp.
pub fn ratio_f64(num: i128, den: i128) -> f64 {
    const EXACT: i128 = 1 << 53;
    let (mut n, mut d) = (num, den);
    while n.abs() >= EXACT || d.abs() >= EXACT {
        n /= 2;
        d /= 2;
    }
    n as f64 / d as f64
}

/// `value / 10^scale` with all `scale` fractional digits, and at least 2.
pub fn format_decimal(value: i128, scale: u8) -> String {
    let (value, scale) = if scale < 2 {
        (value * 10i128.pow(u32::from(2 - scale)), 2)
    } else {
        (value, scale)
    };
    let unit = 10u128.pow(u32::from(scale));
    let abs = value.unsigned_abs();
    let sign = if value < 0 { "-" } else { "" };
    format!(
        "{sign}{}.{:0width$}",
        abs / unit,
        abs % unit,
        width = usize::from(scale)
    )
}

/// Rust's shortest round-trip form (like Python's `repr`), never in exponent
/// notation, always with a fractional part.
pub fn format_double(v: f64) -> String {
    let s = format!("{v}");
    if v.is_finite() && !s.contains('.') {
        format!("{s}.0")
    } else {
        s
    }
}

/// A query's answer: column names and types, then rows in the query's order.
#[derive(Clone, Debug, PartialEq)]
pub struct QueryResult {
    pub columns: Vec<(String, ColumnType)>,
    pub rows: Vec<Vec<Value>>,
}

/// How to print a [`QueryResult`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    Table,
    Csv,
    Json,
}

impl std::str::FromStr for OutputFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "table" => Ok(OutputFormat::Table),
            "csv" => Ok(OutputFormat::Csv),
            "json" => Ok(OutputFormat::Json),
            _ => Err(format!("unknown format {s:?}: expected table, csv or json")),
        }
    }
}

impl QueryResult {
    /// An empty result with these columns.
    pub fn new(columns: &[(&str, ColumnType)]) -> QueryResult {
        QueryResult {
            columns: columns.iter().map(|&(n, t)| (n.to_string(), t)).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row; panics if its width differs from the columns' (a bug in
    /// the query, not bad input).
    pub fn push(&mut self, row: Vec<Value>) {
        assert_eq!(
            row.len(),
            self.columns.len(),
            "row {row:?} does not fit columns {:?}",
            self.columns
        );
        self.rows.push(row);
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    pub fn column_names(&self) -> Vec<&str> {
        self.columns.iter().map(|(n, _)| n.as_str()).collect()
    }

    pub fn format(&self, format: OutputFormat) -> String {
        match format {
            OutputFormat::Table => self.to_table(),
            OutputFormat::Csv => self.to_csv(),
            OutputFormat::Json => self.to_json().to_string(),
        }
    }

    /// Header line, then one line per row; fields quoted (RFC 4180) only
    /// when they contain a comma, a quote or a line break.
    pub fn to_csv(&self) -> String {
        let mut out = String::new();
        let header: Vec<String> = self.column_names().into_iter().map(csv_field).collect();
        out.push_str(&header.join(","));
        out.push('\n');
        for row in &self.rows {
            let fields: Vec<String> = row.iter().map(|v| csv_field(&v.to_text())).collect();
            out.push_str(&fields.join(","));
            out.push('\n');
        }
        out
    }

    /// Columns padded to their widest cell; numbers right-aligned.
    pub fn to_table(&self) -> String {
        let cells: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|r| r.iter().map(Value::to_text).collect())
            .collect();
        let widths: Vec<usize> = self
            .columns
            .iter()
            .enumerate()
            .map(|(c, (name, _))| {
                cells
                    .iter()
                    .map(|r| r[c].chars().count())
                    .chain([name.chars().count()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let right = |t: ColumnType| {
            matches!(
                t,
                ColumnType::Int | ColumnType::Decimal(_) | ColumnType::Double
            )
        };
        let mut out = String::new();
        let line = |out: &mut String, texts: &[&str]| {
            let parts: Vec<String> = texts
                .iter()
                .enumerate()
                .map(|(c, t)| {
                    if right(self.columns[c].1) {
                        format!("{t:>w$}", w = widths[c])
                    } else {
                        format!("{t:<w$}", w = widths[c])
                    }
                })
                .collect();
            let _ = writeln!(out, "{}", parts.join(" | ").trim_end());
        };
        line(&mut out, &self.column_names());
        let rule: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
        let _ = writeln!(out, "{}", rule.join("-+-"));
        for r in &cells {
            let texts: Vec<&str> = r.iter().map(String::as_str).collect();
            line(&mut out, &texts);
        }
        let _ = writeln!(
            out,
            "({} row{})",
            self.rows.len(),
            if self.rows.len() == 1 { "" } else { "s" }
        );
        out
    }

    /// `{"columns":[...],"rows":[[...],...]}`; decimals and dates as strings.
    pub fn to_json(&self) -> Json {
        json!({
            "columns": self.column_names(),
            "rows": self.rows.iter().map(|r| r.iter().map(Value::to_json).collect::<Vec<_>>()).collect::<Vec<_>>(),
        })
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_keep_every_digit_and_at_least_two() {
        assert_eq!(format_decimal(9159851398, 4), "915985.1398");
        assert_eq!(format_decimal(-5, 2), "-0.05");
        assert_eq!(format_decimal(7, 0), "7.00");
        assert_eq!(format_decimal(0, 6), "0.000000");
    }

    #[test]
    fn doubles_print_like_python_repr() {
        assert_eq!(format_double(0.0), "0.0");
        assert_eq!(format_double(15.48654581228407), "15.48654581228407");
        assert_eq!(format_double(25.0), "25.0");
    }

    #[test]
    fn ratio_is_correctly_rounded_for_53_bit_operands() {
        assert_eq!(ratio_f64(1, 3), 1.0 / 3.0);
        assert_eq!(
            ratio_f64(3578570930693735, 100_000_000_000),
            35785.70930693735
        );
    }

    #[test]
    fn csv_quotes_only_where_needed() {
        let mut r = QueryResult::new(&[("a", ColumnType::Str), ("b", ColumnType::Decimal(2))]);
        r.push(vec![
            Value::Str("x, \"y\"".into()),
            Value::Decimal {
                value: 123,
                scale: 2,
            },
        ]);
        assert_eq!(r.to_csv(), "a,b\n\"x, \"\"y\"\"\",1.23\n");
        assert!(r.to_table().contains("(1 row)"));
    }
}
