//! What the CLI tests share: running the `maestro` binary and reading its output.

#![allow(dead_code)] // each test binary uses a different subset

pub mod server;

use std::process::{Command, Output};

pub fn maestro(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_maestro"))
        .args(args)
        .output()
        .expect("maestro runs")
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Asserts the command succeeded (showing its stderr if not) and parses stdout as
/// one JSON object.
pub fn json_of(out: &Output) -> serde_json::Value {
    assert!(out.status.success(), "{}", stderr(out));
    serde_json::from_slice(&out.stdout).expect("stdout is one JSON object")
}

/// `keys!(variant = "single-pool", metric = "tpmC")`: the fields a report row
/// must have, for [`row`] and [`value`].
#[macro_export]
macro_rules! keys {
    ($($key:ident = $value:expr),* $(,)?) => {
        &[$((stringify!($key), serde_json::json!($value))),*]
    };
}

/// The first row of `report["results"]` whose fields equal `keys`; panics
/// naming the keys and listing the rows when none does.
pub fn row<'a>(
    report: &'a serde_json::Value,
    keys: &[(&str, serde_json::Value)],
) -> &'a serde_json::Value {
    let rows = report["results"].as_array().expect("a results array");
    rows.iter()
        .find(|r| keys.iter().all(|(k, v)| r[*k] == *v))
        .unwrap_or_else(|| panic!("no row with {keys:?} in {rows:?}"))
}

/// The `value` of [`row`] as a number.
pub fn value(report: &serde_json::Value, keys: &[(&str, serde_json::Value)]) -> f64 {
    let r = row(report, keys);
    r["value"]
        .as_f64()
        .unwrap_or_else(|| panic!("row {r} has no numeric value"))
}
