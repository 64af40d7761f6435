//! The README's measured tables say how they were made and where their raw
//! data is: every `docs/results/…` path it mentions exists, and every section
//! of "Measured results" and "Reproducing the papers" that holds a table has a
//! `Command:` line and a link to a JSON file under `docs/results/`.

use std::path::Path;

/// Sections (by the start of their `###` heading) whose raw JSON was never
/// committed. Each says "not yet re-measured; raw JSON pending" instead of a
/// link. They must be re-run with the command they name (`--out
/// docs/results/<date>/<experiment>`, or `--json >` for `tpcc run`) and then
/// leave this list — the test fails once such a section links its JSON.
const PENDING: [&str; 1] = ["`maestro bench olc`"];

const PENDING_MARK: &str = "not yet re-measured; raw JSON pending";

/// The `## ` parts whose `### ` sections are checked.
const RESULT_PARTS: [&str; 2] = ["## Measured results", "## Reproducing the papers"];

struct Section<'a> {
    heading: &'a str,
    lines: Vec<&'a str>,
}

/// The `###` sections of the result parts.
fn result_sections(readme: &str) -> Vec<Section<'_>> {
    let mut out: Vec<Section> = Vec::new();
    let mut in_part = false;
    for line in readme.lines() {
        if line.starts_with("## ") {
            in_part = RESULT_PARTS.contains(&line.trim_end());
            continue;
        }
        if !in_part {
            continue;
        }
        if let Some(heading) = line.strip_prefix("### ") {
            out.push(Section {
                heading,
                lines: Vec::new(),
            });
        } else if let Some(s) = out.last_mut() {
            s.lines.push(line);
        }
    }
    out
}

/// Every `docs/results/…` path in `text`, up to the first character that
/// cannot be part of it (`)`, a backtick, a space, …).
fn results_paths(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("docs/results/") {
        let tail = &rest[i..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || "/._-".contains(c)))
            .unwrap_or(tail.len());
        out.push(tail[..end].trim_end_matches('.'));
        rest = &tail[end..];
    }
    out
}

/// Whether `line` has a Markdown link to a JSON file under `docs/results/`.
fn links_json(line: &str) -> bool {
    line.split("](docs/results/").skip(1).any(|after| {
        after
            .split(')')
            .next()
            .is_some_and(|p| p.ends_with(".json"))
    })
}

/// What is wrong with `readme`; `exists` says whether a repository path exists.
fn problems(readme: &str, exists: impl Fn(&str) -> bool) -> Vec<String> {
    let mut out = Vec::new();
    for path in results_paths(readme) {
        if !exists(path) {
            out.push(format!("README mentions {path}, which does not exist"));
        }
    }
    for s in result_sections(readme) {
        if !s.lines.iter().any(|l| l.starts_with('|')) {
            continue;
        }
        let pending = PENDING.iter().any(|p| s.heading.starts_with(p));
        let has_json = s.lines.iter().any(|l| links_json(l));
        let marked = s.lines.iter().any(|l| l.contains(PENDING_MARK));
        if !s.lines.iter().any(|l| l.starts_with("Command:")) {
            out.push(format!("section {:?} has no `Command:` line", s.heading));
        }
        match (pending, has_json, marked) {
            (false, false, _) => out.push(format!(
                "section {:?} links no JSON under docs/results/",
                s.heading
            )),
            (true, true, _) => out.push(format!(
                "section {:?} links its JSON now: take it off PENDING",
                s.heading
            )),
            (true, false, false) => out.push(format!(
                "section {:?} is PENDING but does not say {PENDING_MARK:?}",
                s.heading
            )),
            _ => {}
        }
    }
    out
}

#[test]
fn readme_tables_name_their_command_and_link_existing_raw_json() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    assert!(
        result_sections(&readme).len() >= 8,
        "the result sections were not found: did a heading change?"
    );
    let found = problems(&readme, |p| root.join(p).exists());
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_check_catches_each_kind_of_gap() {
    let readme = "\
## CLI
| not | checked |
## Measured results
### Fine
Command: `maestro bench x`; raw JSON: [x](docs/results/d/x/x.json)
| a | b |
### No command
[y](docs/results/d/y/y.json)
| a | b |
### No JSON
Command: `maestro bench z`, table only: docs/results/d/z/z.txt
| a | b |
### Missing file
Command: `maestro bench w`; [w](docs/results/d/w/gone.json)
| a | b |
### `maestro bench olc` — pending but linked
Command: `maestro bench olc`; [o](docs/results/d/o/o.json)
| a | b |
### `maestro bench olc`, pending without the mark
Command: `maestro bench olc --quick`
| a | b |
### `maestro bench olc`, pending and marked
Command: `maestro bench olc`; not yet re-measured; raw JSON pending
| a | b |
### Prose only
no table here
## Other
### Not a result
| a | b |
";
    let found = problems(readme, |p| !p.ends_with("gone.json"));
    let expect = [
        "docs/results/d/w/gone.json, which does not exist",
        "\"No command\" has no `Command:` line",
        "\"No JSON\" links no JSON",
        "pending but linked\" links its JSON now",
        "pending without the mark\" is PENDING but does not say",
    ];
    assert_eq!(found.len(), expect.len(), "{found:#?}");
    for e in expect {
        assert!(found.iter().any(|f| f.contains(e)), "{e}: {found:#?}");
    }
}
