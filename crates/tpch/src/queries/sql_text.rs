//! The 22 queries as the spec's SQL text with any [`QueryParams`]: the qgen
//! templates with `:NAME` placeholders in `answers/templates/qNN.sql` (the
//! one copy; `answers/generate.py` reads the same files to compute DuckDB's
//! answers), substituted here as `generate.py`'s `substitute` does.
//!
//! Substitution is plain text replacement inside the template's own quotes,
//! so it refuses a value that could leave them or end the statement
//! ([`SqlTextError::UnsafeValue`]), a placeholder without a value and a value
//! without a placeholder (a renamed parameter must not run silently with the
//! template's text unchanged). Q15's view `revenue0` (create view; select;
//! drop view) becomes one statement with the view as a WITH query, as
//! `crates/bench/scripts/wire_tpch.py` rewrites it.

use std::fmt;

use super::QueryParams;

/// The templates, Q1 first.
const TEMPLATES: [&str; 22] = [
    include_str!("../../answers/templates/q01.sql"),
    include_str!("../../answers/templates/q02.sql"),
    include_str!("../../answers/templates/q03.sql"),
    include_str!("../../answers/templates/q04.sql"),
    include_str!("../../answers/templates/q05.sql"),
    include_str!("../../answers/templates/q06.sql"),
    include_str!("../../answers/templates/q07.sql"),
    include_str!("../../answers/templates/q08.sql"),
    include_str!("../../answers/templates/q09.sql"),
    include_str!("../../answers/templates/q10.sql"),
    include_str!("../../answers/templates/q11.sql"),
    include_str!("../../answers/templates/q12.sql"),
    include_str!("../../answers/templates/q13.sql"),
    include_str!("../../answers/templates/q14.sql"),
    include_str!("../../answers/templates/q15.sql"),
    include_str!("../../answers/templates/q16.sql"),
    include_str!("../../answers/templates/q17.sql"),
    include_str!("../../answers/templates/q18.sql"),
    include_str!("../../answers/templates/q19.sql"),
    include_str!("../../answers/templates/q20.sql"),
    include_str!("../../answers/templates/q21.sql"),
    include_str!("../../answers/templates/q22.sql"),
];

/// Why a template could not become SQL text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SqlTextError {
    /// Not a query number in 1..=22.
    UnknownQuery(u8),
    /// The template has `:NAME` but no value was given for it.
    MissingValue(String),
    /// A value was given for a name the template does not have.
    UnusedValue(String),
    /// The value has a character outside letters, digits, space, `.`, `#`
    /// and `-`, or `--`: it could close the template's quotes, end the
    /// statement or start a comment.
    UnsafeValue { name: String, value: String },
    /// Q15's template no longer has the spec's create view / select / drop
    /// view shape, so it cannot become one WITH statement.
    Q15Shape,
}

impl fmt::Display for SqlTextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SqlTextError::UnknownQuery(q) => {
                write!(f, "unknown query {q}: expected a number from 1 to 22")
            }
            SqlTextError::MissingValue(n) => write!(f, "no value for :{n}"),
            SqlTextError::UnusedValue(n) => {
                write!(f, "a value for {n}, which the template does not use")
            }
            SqlTextError::UnsafeValue { name, value } => write!(
                f,
                "unsafe value {value:?} for :{name}: only letters, digits, space, '.', '#' \
                 and single '-' may be substituted"
            ),
            SqlTextError::Q15Shape => {
                write!(f, "Q15's template is not create view; select; drop view")
            }
        }
    }
}

impl std::error::Error for SqlTextError {}

/// The template of query `q` (1 to 22) with its `:NAME` placeholders.
pub fn sql_template(q: u8) -> Option<&'static str> {
    TEMPLATES.get(usize::from(q).checked_sub(1)?).copied()
}

/// Query `params.query()` as one SQL statement (no trailing `;`) with
/// `params`' values as the spec's literals.
pub fn sql_text(params: &QueryParams) -> Result<String, SqlTextError> {
    let q = params.query();
    let t = sql_template(q).ok_or(SqlTextError::UnknownQuery(q))?;
    let values: Vec<(&str, String)> = params.iter().map(|(n, v)| (n, v.to_string())).collect();
    let sql = substitute(t, &values)?;
    let sql = if q == 15 { q15_with(&sql)? } else { sql };
    Ok(sql.trim().trim_end_matches(';').trim_end().to_string())
}

/// `template` with each `:NAME` replaced by its value in `values`.
pub fn substitute(template: &str, values: &[(&str, String)]) -> Result<String, SqlTextError> {
    for (name, value) in values {
        if !is_safe(value) {
            return Err(SqlTextError::UnsafeValue {
                name: name.to_string(),
                value: value.clone(),
            });
        }
    }
    let mut used = vec![false; values.len()];
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(colon) = rest.find(':') {
        out.push_str(&rest[..colon]);
        let after = &rest[colon + 1..];
        match placeholder(after) {
            Some(name) => {
                let i = values
                    .iter()
                    .position(|(n, _)| *n == name)
                    .ok_or_else(|| SqlTextError::MissingValue(name.to_string()))?;
                used[i] = true;
                out.push_str(&values[i].1);
                rest = &after[name.len()..];
            }
            None => {
                out.push(':');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    if let Some(i) = used.iter().position(|u| !u) {
        return Err(SqlTextError::UnusedValue(values[i].0.to_string()));
    }
    Ok(out)
}

/// The name at the start of `s` if `:` + `s` is a placeholder: generate.py's
/// `:([A-Z][A-Z0-9]*)\b` (a name running into a lower-case letter or `_` is
/// no placeholder there either).
fn placeholder(s: &str) -> Option<&str> {
    let len = s
        .bytes()
        .take_while(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
        .count();
    let first_is_letter = s.bytes().next().is_some_and(|b| b.is_ascii_uppercase());
    let ends_word = s
        .as_bytes()
        .get(len)
        .is_none_or(|&b| !(b.is_ascii_alphanumeric() || b == b'_'));
    (first_is_letter && ends_word).then(|| &s[..len])
}

/// Every value the spec's domains hold passes (dates, decimals, `Brand#45`,
/// `SAUDI ARABIA`, `MED BOX`); a quote, `;`, `%`, `_`, a backslash or a
/// comment start does not.
fn is_safe(value: &str) -> bool {
    !value.is_empty()
        && !value.contains("--")
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, ' ' | '.' | '#' | '-'))
}

/// `create view revenue0 (COLS) as BODY; SELECT; drop view revenue0;` as
/// `with revenue0 (COLS) as (BODY) SELECT`.
fn q15_with(sql: &str) -> Result<String, SqlTextError> {
    const HEAD: &str = "create view revenue0 (";
    let shape = || SqlTextError::Q15Shape;
    let start = sql.find(HEAD).ok_or_else(shape)? + HEAD.len();
    let rest = &sql[start..];
    let cols_end = rest.find(')').ok_or_else(shape)?;
    let cols = &rest[..cols_end];
    let rest = rest[cols_end + 1..]
        .trim_start()
        .strip_prefix("as")
        .ok_or_else(shape)?;
    let body_end = rest.find(';').ok_or_else(shape)?;
    let body = rest[..body_end].trim();
    let rest = &rest[body_end + 1..];
    let select_end = rest.find(';').ok_or_else(shape)?;
    let select = rest[..select_end].trim();
    if rest[select_end + 1..].trim().trim_end_matches(';').trim() != "drop view revenue0" {
        return Err(shape());
    }
    Ok(format!(
        "with revenue0 ({cols}) as (\n\t{body}\n)\n{select}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vals(pairs: &[(&'static str, &str)]) -> Vec<(&'static str, String)> {
        pairs.iter().map(|(n, v)| (*n, v.to_string())).collect()
    }

    #[test]
    fn every_query_has_one_statement_without_placeholders() {
        for q in 1..=22 {
            for p in [
                QueryParams::validation(q, 0.01).unwrap(),
                QueryParams::random(q, 1.0, 7).unwrap(),
            ] {
                let sql = sql_text(&p).unwrap();
                assert!(!sql.contains(';'), "Q{q}: {sql}");
                assert!(
                    !sql.contains(":D") && !sql.contains(":N"),
                    "Q{q} kept a placeholder"
                );
            }
        }
        assert!(sql_template(0).is_none() && sql_template(23).is_none());
    }

    #[test]
    fn validation_values_land_in_the_text() {
        let q1 = sql_text(&QueryParams::validation(1, 0.01).unwrap()).unwrap();
        assert!(q1.contains("interval '90' day"), "{q1}");
        let q11 = sql_text(&QueryParams::validation(11, 0.01).unwrap()).unwrap();
        assert!(q11.contains("0.0100000000"), "{q11}");
        let q15 = sql_text(&QueryParams::validation(15, 0.01).unwrap()).unwrap();
        assert!(q15.starts_with("with revenue0 (supplier_no, total_revenue) as ("));
        assert!(q15.contains("date '1996-01-01'") && !q15.contains("view"));
    }

    #[test]
    fn refuses_missing_unused_and_unsafe_values() {
        let t = "select :A from t where x = ':B'";
        let ok = substitute(t, &vals(&[("A", "1"), ("B", "Brand#45")])).unwrap();
        assert_eq!(ok, "select 1 from t where x = 'Brand#45'");
        assert_eq!(
            substitute(t, &vals(&[("A", "1")])),
            Err(SqlTextError::MissingValue("B".into()))
        );
        assert_eq!(
            substitute(t, &vals(&[("A", "1"), ("B", "x"), ("C", "2")])),
            Err(SqlTextError::UnusedValue("C".into()))
        );
        for bad in ["x' or '1'='1", "1; drop table t", "1 -- c", "a%", ""] {
            assert!(
                matches!(
                    substitute(t, &vals(&[("A", "1"), ("B", bad)])),
                    Err(SqlTextError::UnsafeValue { .. })
                ),
                "{bad:?} passed"
            );
        }
    }

    #[test]
    fn only_upper_case_names_ending_a_word_are_placeholders() {
        let t = "a::int, ':Ab', :A_b, :A1";
        assert_eq!(
            substitute(t, &vals(&[("A1", "5")])).unwrap(),
            "a::int, ':Ab', :A_b, 5"
        );
    }
}
