//! What the CLI tests share: running the `maestro` binary and reading its output.

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
