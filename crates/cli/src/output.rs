//! How every experiment prints its result and writes it with `--out DIR`.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::exit::failure;

/// Prints `json` (with `--json`) or `table` on stdout; with `out`, also writes
/// `NAME.json`, `NAME.txt` and each of `files` (file name, content) into it.
pub(crate) fn emit(
    json: &str,
    table: &str,
    name: &str,
    as_json: bool,
    out: Option<PathBuf>,
    files: &[(String, String)],
) -> ExitCode {
    if as_json {
        println!("{json}");
    } else {
        print!("{table}");
    }
    let Some(dir) = out else {
        return ExitCode::SUCCESS;
    };
    let own = [
        (format!("{name}.json"), json.to_string()),
        (format!("{name}.txt"), table.to_string()),
    ];
    let all: Vec<&(String, String)> = own.iter().chain(files).collect();
    if let Err(e) = std::fs::create_dir_all(&dir) {
        return failure(format!("cannot write to {}: {e}", dir.display()));
    }
    for (file, body) in &all {
        if let Err(e) = std::fs::write(dir.join(file), body) {
            return failure(format!("cannot write {}/{file}: {e}", dir.display()));
        }
    }
    let names: Vec<&str> = all.iter().map(|(f, _)| f.as_str()).collect();
    eprintln!("wrote {}/{{{}}}", dir.display(), names.join(","));
    ExitCode::SUCCESS
}
