//! A query's answer: named columns and typed rows, written as CSV in the
//! format `ch snapshot` promises (header of lower-case names, RFC 4180
//! quoting, NULL as an empty field, timestamps ISO 8601 UTC, decimals exact,
//! floating-point values — averages and ratios — unrounded), and compared
//! with an expected CSV (numbers within a relative 1e-9, the rest exactly).

use std::fmt::Write as _;

use maestro_tpcc::Timestamp;

use crate::time::iso8601;

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Int(i64),
    /// `units / 10^scale`, exact (money is scale 2).
    Decimal(i128, u32),
    Float(f64),
    Text(String),
    Time(Timestamp),
    Null,
}

impl Value {
    pub fn money(cents: i128) -> Value {
        Value::Decimal(cents, 2)
    }

    fn write(&self, out: &mut String) {
        match self {
            Value::Int(v) => write!(out, "{v}").expect("a String takes any write"),
            Value::Decimal(units, scale) => out.push_str(&decimal(*units, *scale)),
            // Debug: the shortest text that reads back as the same f64,
            // with a ".0" on integral values (as Python's repr).
            Value::Float(v) => write!(out, "{v:?}").expect("a String takes any write"),
            Value::Text(s) => quote(s, out),
            Value::Time(ts) => out.push_str(&iso8601(*ts)),
            Value::Null => {}
        }
    }
}

/// `units / 10^scale` printed exactly.
fn decimal(units: i128, scale: u32) -> String {
    let sign = if units < 0 { "-" } else { "" };
    let abs = units.unsigned_abs();
    if scale == 0 {
        return format!("{sign}{abs}");
    }
    let unit = 10u128.pow(scale);
    let width = scale as usize;
    format!("{sign}{}.{:0width$}", abs / unit, abs % unit)
}

fn quote(s: &str, out: &mut String) {
    if s.contains([',', '"', '\n', '\r']) {
        out.push('"');
        out.push_str(&s.replace('"', "\"\""));
        out.push('"');
    } else {
        out.push_str(s);
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub columns: Vec<&'static str>,
    pub rows: Vec<Vec<Value>>,
}

impl Answer {
    pub fn new(columns: &[&'static str]) -> Self {
        Answer {
            columns: columns.to_vec(),
            rows: Vec::new(),
        }
    }

    pub fn push(&mut self, row: Vec<Value>) {
        debug_assert_eq!(row.len(), self.columns.len());
        self.rows.push(row);
    }

    pub fn to_csv(&self) -> String {
        csv_of(&self.columns, &self.rows)
    }

    /// Compares with an expected CSV of the same format: same header, same
    /// number of rows in the same order, numbers equal within a relative
    /// 1e-9 (absolute below 1e-9), other fields equal. An expected file that
    /// ends with `# rows: N` holds only the first rows of N: the count and
    /// those rows are compared. The error names the first difference.
    pub fn compare_csv(&self, expected: &str) -> Result<(), String> {
        let mut ours = parse_csv(&self.to_csv());
        let mut theirs = parse_csv(expected);
        if let Some(total) = theirs
            .last()
            .and_then(|l| l.first())
            .and_then(|f| f.strip_prefix("# rows: "))
        {
            let total: usize = total
                .parse()
                .map_err(|_| format!("bad row-count line {total:?}"))?;
            if ours.len() - 1 != total {
                return Err(format!("{} rows, expected {total}", ours.len() - 1));
            }
            theirs.pop();
            ours.truncate(theirs.len());
        }
        if ours.first() != theirs.first() {
            return Err(format!(
                "header {:?}, expected {:?}",
                ours.first(),
                theirs.first()
            ));
        }
        if ours.len() != theirs.len() {
            return Err(format!(
                "{} rows, expected {}",
                ours.len().saturating_sub(1),
                theirs.len().saturating_sub(1)
            ));
        }
        for (i, (a, b)) in ours.iter().zip(&theirs).enumerate().skip(1) {
            let same = a.len() == b.len() && a.iter().zip(b).all(|(x, y)| field_eq(x, y));
            if !same {
                return Err(format!("row {i}: {a:?}, expected {b:?}"));
            }
        }
        Ok(())
    }
}

fn field_eq(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    match (a.parse::<f64>(), b.parse::<f64>()) {
        // DuckDB prints 0/0 as `nan`, Rust as `NaN`: the same value.
        (Ok(x), Ok(y)) if x.is_nan() || y.is_nan() => x.is_nan() && y.is_nan(),
        (Ok(x), Ok(y)) => {
            let diff = (x - y).abs();
            diff <= 1e-9 || diff <= 1e-9 * x.abs().max(y.abs())
        }
        _ => false,
    }
}

/// RFC 4180 fields per line (quoted fields may hold commas and quotes; no
/// line breaks occur in CH answers).
pub fn parse_csv(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .filter(|l| !l.is_empty())
        .map(|line| {
            let mut fields = Vec::new();
            let mut field = String::new();
            let mut quoted = false;
            let mut chars = line.chars().peekable();
            while let Some(c) = chars.next() {
                match (c, quoted) {
                    ('"', true) if chars.peek() == Some(&'"') => {
                        field.push('"');
                        chars.next();
                    }
                    ('"', _) => quoted = !quoted,
                    (',', false) => fields.push(std::mem::take(&mut field)),
                    (c, _) => field.push(c),
                }
            }
            fields.push(field);
            fields
        })
        .collect()
}

/// Rows under a header of `columns` in the answers' CSV format.
pub fn csv_of<S: AsRef<str>>(columns: &[S], rows: &[Vec<Value>]) -> String {
    let names: Vec<&str> = columns.iter().map(AsRef::as_ref).collect();
    let mut out = names.join(",");
    out.push('\n');
    for row in rows {
        for (i, v) in row.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            v.write(&mut out);
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_format_and_comparison() {
        let mut a = Answer::new(&["n", "amount", "avg", "name", "at", "none"]);
        a.push(vec![
            Value::Int(-3),
            Value::money(-5),
            Value::Float(0.1),
            Value::Text("a,\"b\"".into()),
            Value::Time(1_577_836_800),
            Value::Null,
        ]);
        let csv = a.to_csv();
        assert_eq!(
            csv,
            "n,amount,avg,name,at,none\n-3,-0.05,0.1,\"a,\"\"b\"\"\",2020-01-01T00:00:00Z,\n"
        );
        assert_eq!(parse_csv(&csv)[1][3], "a,\"b\"");
        assert!(a.compare_csv(&csv).is_ok());
        let close = csv.replace("0.1,", "0.10000000000000001,");
        assert!(a.compare_csv(&close).is_ok());
        let off = csv.replace("-0.05", "-0.06");
        assert!(a.compare_csv(&off).unwrap_err().contains("row 1"));
        assert!(a.compare_csv("n\n").is_err());
        let mut b = Answer::new(&["k"]);
        for k in 0..3 {
            b.push(vec![Value::Int(k)]);
        }
        assert!(b.compare_csv("k\n0\n1\n# rows: 3\n").is_ok());
        assert!(b.compare_csv("k\n0\n1\n# rows: 4\n").is_err());
        assert!(b.compare_csv("k\n0\n2\n# rows: 3\n").is_err());
        let mut nan = Answer::new(&["share"]);
        nan.push(vec![Value::Float(f64::NAN)]);
        assert!(nan.compare_csv("share\nnan\n").is_ok());
        assert!(nan.compare_csv("share\n0.5\n").is_err());
    }
}
