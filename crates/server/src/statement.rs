//! What the server does with a statement's text before maestro-sql sees it:
//! splitting a simple query into statements, finding `$1` parameters, and
//! recognising the statements the server answers itself (SET, SHOW, BEGIN,
//! COMMIT, CALL maestro.load_tpch, `SELECT version()`, …).

/// A statement inside a query string: its byte offset and text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece<'a> {
    pub offset: usize,
    pub text: &'a str,
}

/// What the lexer found in a text.
struct Scan {
    /// Byte offsets of top-level semicolons.
    semicolons: Vec<usize>,
    /// Whether a `$n` parameter appears outside strings and comments.
    parameters: bool,
}

/// Walks `sql` past strings (`'…'`, `E'…'`), quoted identifiers, dollar quotes
/// and comments.
fn scan(sql: &str) -> Scan {
    let b = sql.as_bytes();
    let mut out = Scan {
        semicolons: Vec::new(),
        parameters: false,
    };
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b';' => {
                out.semicolons.push(i);
                i += 1;
            }
            b'\'' => {
                let escapes = i > 0 && matches!(b[i - 1], b'e' | b'E');
                i += 1;
                while i < b.len() {
                    if escapes && b[i] == b'\\' {
                        i += 2;
                    } else if b[i] == b'\'' {
                        if b.get(i + 1) == Some(&b'\'') {
                            i += 2;
                        } else {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
                i += 1;
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += 1;
                }
                i += 1;
            }
            b'-' if b.get(i + 1) == Some(&b'-') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let mut depth = 0usize;
                while i < b.len() {
                    if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                        depth += 1;
                        i += 2;
                    } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
            }
            b'$' => {
                if b.get(i + 1).is_some_and(u8::is_ascii_digit) {
                    out.parameters = true;
                    i += 1;
                    continue;
                }
                // A dollar quote: $tag$ … $tag$ (tag: letters, digits, _).
                let tag_end = b[i + 1..]
                    .iter()
                    .position(|c| !(c.is_ascii_alphanumeric() || *c == b'_'))
                    .map(|p| i + 1 + p);
                match tag_end {
                    Some(e) if b[e] == b'$' && (e == i + 1 || !b[i + 1].is_ascii_digit()) => {
                        let tag = &sql[i..=e];
                        match sql[e + 1..].find(tag) {
                            Some(p) => i = e + 1 + p + tag.len(),
                            None => i = b.len(),
                        }
                    }
                    _ => i += 1,
                }
            }
            _ => i += 1,
        }
    }
    out
}

/// The statements of a simple query, without the semicolons between them
/// and without empty ones.
pub fn split(sql: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let mut start = 0;
    let ends = scan(sql).semicolons.into_iter().chain([sql.len()]);
    for end in ends {
        let text = &sql[start..end];
        if !is_blank(text) {
            out.push(Piece {
                offset: start,
                text,
            });
        }
        start = (end + 1).min(sql.len());
    }
    out
}

/// Whether `sql` has `$1`-style parameters.
pub fn has_parameters(sql: &str) -> bool {
    scan(sql).parameters
}

/// Only whitespace and comments.
pub fn is_blank(sql: &str) -> bool {
    words(sql).is_empty()
}

/// The words of `sql` outside comments: identifiers/keywords (as written),
/// quoted strings (with their quotes), numbers, and single punctuation.
fn words(sql: &str) -> Vec<&str> {
    let b = sql.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c == b'-' && b.get(i + 1) == Some(&b'-') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            match sql[i + 2..].find("*/") {
                Some(p) => i += p + 4,
                None => i = b.len(),
            }
        } else if c == b'\'' || c == b'"' {
            let start = i;
            i += 1;
            while i < b.len() {
                if b[i] == c {
                    if b.get(i + 1) == Some(&c) {
                        i += 2;
                        continue;
                    }
                    break;
                }
                i += 1;
            }
            i = (i + 1).min(b.len());
            out.push(&sql[start..i]);
        } else if c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || c >= 0x80 {
            let start = i;
            while i < b.len()
                && (b[i].is_ascii_alphanumeric()
                    || matches!(b[i], b'_' | b'.' | b'-' | b'+')
                    || b[i] >= 0x80)
            {
                // '-' and '+' only inside numbers' exponents and after a
                // leading digit run (1e-3); words stop at them otherwise.
                if matches!(b[i], b'-' | b'+')
                    && !(i > start && matches!(b[i - 1], b'e' | b'E') && b[start].is_ascii_digit())
                {
                    break;
                }
                i += 1;
            }
            out.push(&sql[start..i]);
        } else {
            let len = sql[i..].chars().next().map_or(1, char::len_utf8);
            out.push(&sql[i..i + len]);
            i += len;
        }
    }
    out
}

/// A word without its quotes ('' and "" unescaped); identifiers folded to
/// lower case unless quoted.
fn unquote(w: &str) -> String {
    if w.len() >= 2 && w.starts_with('\'') && w.ends_with('\'') {
        w[1..w.len() - 1].replace("''", "'")
    } else if w.len() >= 2 && w.starts_with('"') && w.ends_with('"') {
        w[1..w.len() - 1].replace("\"\"", "\"")
    } else {
        w.to_ascii_lowercase()
    }
}

/// What the server does with one statement.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// A query for maestro-sql (SELECT, WITH, EXPLAIN, …) or any statement it
    /// may reject.
    Sql,
    /// `SET name = value` (`None`: a SET the server accepts and ignores, e.g.
    /// `SET TRANSACTION …`).
    Set(Option<(String, String)>),
    /// `RESET name` / `RESET ALL` (`None`).
    Reset(Option<String>),
    Show(String),
    /// `BEGIN` / `START TRANSACTION`, with the words naming the isolation
    /// level it asks for (`ISOLATION LEVEL READ COMMITTED`: "read committed").
    Begin(Option<String>),
    /// `SET TRANSACTION ISOLATION LEVEL …`: the level's words.
    SetIsolation(String),
    Commit,
    Rollback,
    /// `COPY …`: FROM a server file runs like [`Command::Sql`]; FROM STDIN
    /// takes the data the client sends next.
    Copy,
    /// `CALL name(args)`: the name (lower case) and the arguments' words.
    Call {
        name: String,
        args: Vec<String>,
    },
    /// `DISCARD …`, `DEALLOCATE …`: accepted, nothing to do; the tag.
    Noop(&'static str),
    /// A parameterless function the server answers itself:
    /// `SELECT version()`, `current_database()`, …; the column name.
    Function(String),
    /// `SELECT current_setting('name')`.
    CurrentSetting(String),
}

/// Classifies one statement.
pub fn classify(sql: &str) -> Command {
    let w = words(sql);
    let lower: Vec<String> = w.iter().map(|s| s.to_ascii_lowercase()).collect();
    let l: Vec<&str> = lower.iter().map(String::as_str).collect();
    match l.first().copied() {
        Some("set") => match isolation_words(&l) {
            Some(level) if l.get(1) == Some(&"transaction") => Command::SetIsolation(level),
            // SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL …
            Some(level) if l.get(2) == Some(&"characteristics") => {
                Command::Set(Some(("default_transaction_isolation".to_string(), level)))
            }
            _ => Command::Set(set_assignment(&w[1..])),
        },
        Some("reset") => Command::Reset(match l.get(1) {
            Some(&"all") | None => None,
            Some(_) => Some(unquote(w[1])),
        }),
        Some("show") => match w.get(1) {
            Some(n) if l.len() == 2 => Command::Show(unquote(n)),
            // SHOW TRANSACTION ISOLATION LEVEL and the like.
            _ => Command::Show(l[1..].join("_")),
        },
        Some("begin") | Some("start") => Command::Begin(isolation_words(&l)),
        Some("commit") | Some("end") => Command::Commit,
        Some("rollback") | Some("abort") => Command::Rollback,
        Some("discard") => Command::Noop("DISCARD ALL"),
        Some("copy") => Command::Copy,
        Some("deallocate") => Command::Noop("DEALLOCATE"),
        Some("call") if l.len() >= 4 && l[2] == "(" && l.last() == Some(&")") => Command::Call {
            name: l[1].to_string(),
            args: w[3..w.len() - 1]
                .split(|a| *a == ",")
                .map(|a| a.concat())
                .collect(),
        },
        Some("select") => select_function(&l, &w).unwrap_or(Command::Sql),
        _ => Command::Sql,
    }
}

/// The words after `ISOLATION LEVEL` up to the next mode (`,`, `READ
/// WRITE`, `READ ONLY`, `[NOT] DEFERRABLE`), joined by one space.
fn isolation_words(l: &[&str]) -> Option<String> {
    let at = l.windows(2).position(|w| w == ["isolation", "level"])?;
    let mut words = Vec::new();
    for (k, &word) in l[at + 2..].iter().enumerate() {
        let next = l.get(at + 2 + k + 1).copied();
        let mode = word == ","
            || word == ";"
            || word == "not"
            || word == "deferrable"
            || (word == "read" && matches!(next, Some("write" | "only")));
        if mode {
            break;
        }
        words.push(word);
    }
    Some(words.join(" "))
}

/// `SELECT f()` for the few functions clients ask about, alone in the select
/// list, no FROM.
fn select_function(l: &[&str], w: &[&str]) -> Option<Command> {
    let name = l.get(1)?.strip_prefix("pg_catalog.").unwrap_or(l[1]);
    let rest = &l[2..];
    match (name, rest) {
        ("version" | "current_database" | "current_schema", ["(", ")"])
        | ("current_user" | "session_user" | "user" | "current_catalog", []) => {
            Some(Command::Function(name.to_string()))
        }
        ("current_setting", ["(", _, ")"]) => Some(Command::CurrentSetting(unquote(w[3]))),
        _ => None,
    }
}

/// `[SESSION | LOCAL] name {= | TO} value[, …]`, `TIME ZONE value`; `None`
/// for the forms the server just accepts.
fn set_assignment(w: &[&str]) -> Option<(String, String)> {
    let w = match w.first().map(|s| s.to_ascii_lowercase()).as_deref() {
        Some("session" | "local") => &w[1..],
        _ => w,
    };
    let l: Vec<String> = w.iter().map(|s| s.to_ascii_lowercase()).collect();
    if l.len() >= 3 && l[0] == "time" && l[1] == "zone" {
        return Some(("timezone".to_string(), value_text(&w[2..])));
    }
    if l.len() >= 3 && (l[1] == "=" || l[1] == "to") {
        return Some((unquote(w[0]), value_text(&w[2..])));
    }
    None
}

/// A SET value as SHOW prints it: quotes removed, list items joined by ", ".
fn value_text(w: &[&str]) -> String {
    w.split(|s| *s == ",")
        .map(|item| {
            item.iter()
                .map(|s| {
                    if s.starts_with('\'') || s.starts_with('"') {
                        unquote(s)
                    } else {
                        s.to_string()
                    }
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Setting `name`'s value in a startup message's `options` (what libpq's
/// `PGOPTIONS` and `options=` send): `-c name=value` or `--name=value`
/// items, spaces separating them unless escaped with a backslash (libpq's
/// rule). The last item naming it wins, as in PostgreSQL.
pub fn startup_option(options: &str, name: &str) -> Option<String> {
    let mut items = Vec::new();
    let mut item = String::new();
    let mut chars = options.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => item.extend(chars.next()),
            c if c.is_whitespace() => {
                if !item.is_empty() {
                    items.push(std::mem::take(&mut item));
                }
            }
            c => item.push(c),
        }
    }
    if !item.is_empty() {
        items.push(item);
    }
    let mut found = None;
    let mut k = 0;
    while k < items.len() {
        let assignment = if items[k] == "-c" {
            k += 1;
            items.get(k).map(String::as_str)
        } else {
            items[k]
                .strip_prefix("--")
                .or_else(|| items[k].strip_prefix("-c"))
        };
        if let Some((key, value)) = assignment.and_then(|a| a.split_once('='))
            && key.replace('-', "_").eq_ignore_ascii_case(name)
        {
            found = Some(value.to_string());
        }
        k += 1;
    }
    found
}

/// The 1-based character position in the whole query of (line, column) of
/// the statement starting at byte `offset`.
pub fn char_position(query: &str, offset: usize, line: u64, column: u64) -> usize {
    let before = query.get(..offset).map_or(0, |s| s.chars().count());
    let stmt = query.get(offset..).unwrap_or("");
    let mut chars = 0usize;
    for (n, l) in stmt.split('\n').enumerate() {
        if n as u64 + 1 == line {
            let col = usize::try_from(column.max(1) - 1).unwrap_or(0);
            return before + chars + col.min(l.chars().count()) + 1;
        }
        chars += l.chars().count() + 1;
    }
    before + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_outside_strings_and_comments() {
        let q = "SET a = 'x;y'; -- c;\nSELECT 1 /* ; */;;  ";
        let p: Vec<&str> = split(q).iter().map(|p| p.text.trim()).collect();
        assert_eq!(p, ["SET a = 'x;y'", "-- c;\nSELECT 1 /* ; */"]);
        assert_eq!(split(" ; ").len(), 0);
        assert!(has_parameters("select * from t where a = $1"));
        assert!(!has_parameters("select '$1', $$ $2 $$ from t"));
    }

    #[test]
    fn classifies() {
        assert_eq!(
            classify("SET DateStyle = 'ISO, MDY'"),
            Command::Set(Some(("datestyle".into(), "ISO, MDY".into())))
        );
        assert_eq!(
            classify("set extra_float_digits to 3"),
            Command::Set(Some(("extra_float_digits".into(), "3".into())))
        );
        assert_eq!(
            classify("SET SESSION maestro.workload_class TO olap"),
            Command::Set(Some(("maestro.workload_class".into(), "olap".into())))
        );
        assert_eq!(
            classify("SET TIME ZONE 'UTC'"),
            Command::Set(Some(("timezone".into(), "UTC".into())))
        );
        assert_eq!(
            classify("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY"),
            Command::Set(None)
        );
        assert_eq!(
            classify("show transaction_isolation"),
            Command::Show("transaction_isolation".into())
        );
        assert_eq!(
            classify("SHOW TRANSACTION ISOLATION LEVEL"),
            Command::Show("transaction_isolation_level".into())
        );
        assert_eq!(
            classify("CALL maestro.load_tpch(0.01)"),
            Command::Call {
                name: "maestro.load_tpch".into(),
                args: vec!["0.01".into()]
            }
        );
        assert_eq!(
            classify("call maestro.load_tpch(-1, 'x')"),
            Command::Call {
                name: "maestro.load_tpch".into(),
                args: vec!["-1".into(), "'x'".into()]
            }
        );
        assert_eq!(
            classify("select pg_catalog.version()"),
            Command::Function("version".into())
        );
        assert_eq!(
            classify("SELECT current_setting('DateStyle')"),
            Command::CurrentSetting("DateStyle".into())
        );
        assert_eq!(classify("select count(*) from nation"), Command::Sql);
        assert_eq!(
            classify("BEGIN ISOLATION LEVEL SERIALIZABLE"),
            Command::Begin(Some("serializable".into()))
        );
        assert_eq!(classify("begin"), Command::Begin(None));
        assert_eq!(
            classify("START TRANSACTION ISOLATION LEVEL READ COMMITTED, READ WRITE"),
            Command::Begin(Some("read committed".into()))
        );
        assert_eq!(
            classify("begin transaction isolation level repeatable read read only"),
            Command::Begin(Some("repeatable read".into()))
        );
        assert_eq!(
            classify("SET TRANSACTION ISOLATION LEVEL READ COMMITTED"),
            Command::SetIsolation("read committed".into())
        );
        assert_eq!(
            classify("SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL REPEATABLE READ"),
            Command::Set(Some((
                "default_transaction_isolation".into(),
                "repeatable read".into()
            )))
        );
        assert_eq!(classify("INSERT INTO t VALUES (1)"), Command::Sql);
    }

    #[test]
    fn startup_options_give_settings() {
        let options = r"-c default_transaction_isolation=read\ committed --statement-timeout=5s";
        assert_eq!(
            startup_option(options, "default_transaction_isolation").as_deref(),
            Some("read committed")
        );
        assert_eq!(
            startup_option(options, "statement_timeout").as_deref(),
            Some("5s")
        );
        assert_eq!(startup_option(options, "datestyle"), None);
        assert_eq!(
            startup_option("-cgeqo=off -c geqo=on", "geqo").as_deref(),
            Some("on")
        );
        assert_eq!(startup_option("-c", "geqo"), None);
    }

    #[test]
    fn positions_count_characters_from_one() {
        let q = "SET a = 1; SELECT x\nFROM é nope";
        let off = q.find("SELECT").unwrap();
        // line 2, column 8 of the statement: "nope".
        assert_eq!(
            char_position(q, off, 2, 8),
            q[..q.find("nope").unwrap()].chars().count() + 1
        );
        assert_eq!(char_position(q, off, 1, 1), 12);
    }
}
