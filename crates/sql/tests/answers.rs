//! The SQL front end against an independent engine: every statement of
//! `tests/queries/` runs under two granularity policies (1024-row tasks, so
//! SF 0.01 splits into several tasks per operator) and is compared with
//! DuckDB's answer in `answers/sf0.01/` (written by `answers/generate.py`).
//! The TPC-H ones are also compared with the TPC-H crate's committed answers
//! for the same parameters.

mod common;

use std::path::{Path, PathBuf};

use maestro_sql::Output;
use maestro_tpch::queries::answers::answers_dir;
use maestro_tpch::queries::check;

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn check_file(stem: &str, csv: &Path) -> Result<(), String> {
    let sql_path = crate_dir()
        .join("tests/queries")
        .join(format!("{stem}.sql"));
    let sql = std::fs::read_to_string(&sql_path).map_err(|e| format!("{stem}: {e}"))?;
    let text = std::fs::read_to_string(csv).map_err(|e| format!("{}: {e}", csv.display()))?;
    let expected = check::parse_csv(&text).map_err(|m| format!("{stem}: {}", m.0))?;
    for policy in ["fixed:3", "hint"] {
        let rows = match common::run_with(&sql, policy) {
            Ok(Output::Rows(r)) => r,
            Ok(Output::Explain(_)) => return Err(format!("{stem}: got a plan")),
            Err(e) => return Err(format!("{stem} under {policy}: {e}")),
        };
        check::compare(&rows, &expected)
            .map_err(|m| format!("{stem} under {policy} vs {}: {}", csv.display(), m.0))?;
    }
    Ok(())
}

fn answer(stem: &str) -> PathBuf {
    crate_dir()
        .join("answers/sf0.01")
        .join(format!("{stem}.csv"))
}

fn check_all(prefix: &str) {
    let mut stems: Vec<String> = std::fs::read_dir(crate_dir().join("tests/queries"))
        .expect("tests/queries")
        .filter_map(|e| {
            let p = e.ok()?.path();
            (p.extension()? == "sql").then(|| p.file_stem()?.to_str().map(str::to_string))?
        })
        .filter(|s| s.starts_with(prefix))
        .collect();
    stems.sort();
    assert!(!stems.is_empty(), "no queries starting with {prefix}");
    let failures: Vec<String> = stems
        .iter()
        .filter_map(|s| check_file(s, &answer(s)).err())
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn feature_queries_match_duckdb() {
    let n = std::fs::read_dir(crate_dir().join("tests/queries"))
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            name.to_str()
                .unwrap()
                .starts_with(|c: char| c.is_ascii_digit())
        })
        .count();
    assert!(n >= 15, "at least 15 feature queries, found {n}");
    check_all("");
}

/// The TPC-H crate's answer file for `tests/queries/tpch_qNN.sql` (Q11's
/// statement has the spec's unscaled validation FRACTION).
fn tpch_answer_name(q: u32) -> String {
    let set = if q == 11 {
        "validation_unscaled"
    } else {
        "validation"
    };
    format!("q{q}_{set}.csv")
}

#[test]
fn tpch_queries_match_the_tpch_crates_answers() {
    let failures: Vec<String> = (1..=22)
        .filter_map(|q| {
            let stem = format!("tpch_q{q:02}");
            check_file(&stem, &answers_dir().join(tpch_answer_name(q))).err()
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
