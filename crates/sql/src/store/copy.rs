//! `COPY t [(cols)] FROM '/server/file' | STDIN [WITH] (FORMAT csv|text,
//! HEADER, DELIMITER 'c')`: the rows parsed with the `csv` crate, converted
//! per column type, and appended as one new version of the table. A row that
//! does not fit is an error (22P04) naming its line and column, and nothing
//! is inserted.

use std::sync::Arc;

use maestro_txn::Transaction;
use sqlparser::ast::{
    CopyLegacyCsvOption, CopyLegacyOption, CopyOption, CopySource, CopyTarget, Statement,
};

use super::convert::ColumnBuilder;
use super::ddl::table_name;
use super::dml::{QueryRunner, table_of};
use super::pending::ChangeNotes;
use super::spec::ColumnType;
use super::{Store, View};
use crate::bind::scope::normalize;
use crate::error::{ErrorKind, Result, SqlError};

/// How the COPY data is laid out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CopyFormat {
    /// CSV (quoted fields), else PostgreSQL's text format (tab-separated, no
    /// quoting; its backslash escapes are not decoded).
    pub csv: bool,
    pub header: bool,
    pub delimiter: u8,
}

/// A parsed `COPY … FROM`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CopyFrom {
    pub table: String,
    /// The columns the data has, in its order (empty: all, in table order).
    pub columns: Vec<String>,
    /// `None`: STDIN (the client sends the data); else a file on the server.
    pub file: Option<String>,
    pub format: CopyFormat,
}

/// `stmt` as a `COPY … FROM`, if it is one.
pub fn copy_from(stmt: &Statement) -> Option<Result<CopyFrom>> {
    let Statement::Copy {
        source,
        to,
        target,
        options,
        legacy_options,
        ..
    } = stmt
    else {
        return None;
    };
    Some(parse(source, *to, target, options, legacy_options))
}

fn parse(
    source: &CopySource,
    to: bool,
    target: &CopyTarget,
    options: &[CopyOption],
    legacy: &[CopyLegacyOption],
) -> Result<CopyFrom> {
    if to {
        return Err(SqlError::unsupported("COPY … TO (only COPY … FROM)"));
    }
    let CopySource::Table {
        table_name: name,
        columns,
    } = source
    else {
        return Err(SqlError::unsupported("COPY of a query"));
    };
    let file = match target {
        CopyTarget::Stdin => None,
        CopyTarget::File { filename } => Some(filename.clone()),
        other => return Err(SqlError::unsupported(format!("COPY FROM {other}"))),
    };
    let mut format = CopyFormat {
        csv: false,
        header: false,
        delimiter: b'\t',
    };
    let mut delimiter = None;
    for o in options {
        match o {
            CopyOption::Format(f) => match f.value.to_ascii_lowercase().as_str() {
                "csv" => format.csv = true,
                "text" => format.csv = false,
                other => return Err(SqlError::unsupported(format!("COPY format {other}"))),
            },
            CopyOption::Header(h) => format.header = *h,
            CopyOption::Delimiter(c) => delimiter = Some(*c),
            other => return Err(SqlError::unsupported(format!("COPY option {other}"))),
        }
    }
    for o in legacy {
        match o {
            CopyLegacyOption::Csv(csv) => {
                format.csv = true;
                for c in csv {
                    match c {
                        CopyLegacyCsvOption::Header => format.header = true,
                        other => {
                            return Err(SqlError::unsupported(format!("COPY option {other}")));
                        }
                    }
                }
            }
            CopyLegacyOption::Header => format.header = true,
            CopyLegacyOption::Delimiter(c) => delimiter = Some(*c),
            other => return Err(SqlError::unsupported(format!("COPY option {other}"))),
        }
    }
    if format.csv {
        format.delimiter = b',';
    }
    if let Some(c) = delimiter {
        format.delimiter = u8::try_from(c).ok().filter(u8::is_ascii).ok_or_else(|| {
            SqlError::unsupported("a COPY delimiter that is not one ASCII character")
        })?;
    }
    Ok(CopyFrom {
        table: table_name(name)?,
        columns: columns.iter().map(normalize).collect(),
        file,
        format,
    })
}

fn bad(table: &str, line: u64, what: String) -> SqlError {
    SqlError::new(
        ErrorKind::BadCopyData,
        format!("COPY {table}, line {line}: {what}"),
    )
}

impl Store {
    /// Appends the rows of `data` to `copy.table`; the rows copied. The
    /// columns COPY does not name get their defaults (`run` evaluates
    /// default expressions).
    pub fn copy_in(
        &self,
        txn: &mut Transaction,
        view: &View,
        copy: &CopyFrom,
        data: &[u8],
        run: QueryRunner,
    ) -> Result<u64> {
        let (row, entry) = view.entry(&copy.table)?;
        let order: Vec<usize> = if copy.columns.is_empty() {
            (0..entry.columns.len()).collect()
        } else {
            let order: Vec<usize> = copy
                .columns
                .iter()
                .map(|c| {
                    entry
                        .columns
                        .iter()
                        .position(|s| &s.name == c)
                        .ok_or_else(|| {
                            SqlError::new(
                                ErrorKind::UnknownColumn,
                                format!(
                                    "column \"{c}\" of relation \"{}\" does not exist",
                                    copy.table
                                ),
                            )
                        })
                })
                .collect::<Result<_>>()?;
            if let Some(m) =
                (0..entry.columns.len()).find(|&i| !order.contains(&i) && entry.needs_value(i))
            {
                return Err(SqlError::new(
                    ErrorKind::NotNullViolation,
                    format!(
                        "null value in column \"{}\" of relation \"{}\" violates not-null \
                         constraint (a NOT NULL column without a default COPY does not name)",
                        entry.columns[m].name, copy.table
                    ),
                ));
            }
            order
        };
        let mut builders: Vec<ColumnBuilder> = entry.builders();
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .delimiter(copy.format.delimiter)
            .quoting(copy.format.csv)
            .from_reader(data);
        let mut record = csv::ByteRecord::new();
        let mut rows = 0u64;
        let mut first = true;
        loop {
            let line = reader.position().line();
            match reader.read_byte_record(&mut record) {
                Ok(false) => break,
                Ok(true) => {}
                Err(e) => return Err(bad(&copy.table, line, e.to_string())),
            }
            let line = record.position().map_or(line, |p| p.line());
            if std::mem::take(&mut first) && copy.format.header {
                continue;
            }
            // PostgreSQL's terminator line in the text format.
            if !copy.format.csv && record.len() == 1 && &record[0] == b"\\." {
                break;
            }
            if record.len() != order.len() {
                let what = if record.len() < order.len() {
                    format!(
                        "missing data for column \"{}\"",
                        entry.columns[order[record.len()]].name
                    )
                } else {
                    "extra data after last expected column".to_string()
                };
                return Err(bad(&copy.table, line, what));
            }
            for (field, &c) in record.iter().zip(&order) {
                // A NULL: the text format's `\N`; in CSV an empty field of
                // a column that is not text (a text column reads it as an
                // empty string: the reader does not say whether it was
                // quoted, which is what tells PostgreSQL's NULL apart).
                let is_null = if copy.format.csv {
                    field.is_empty() && !matches!(entry.columns[c].ty, ColumnType::Str { .. })
                } else {
                    field == b"\\N"
                };
                if is_null {
                    builders[c].push_null().map_err(|e| {
                        bad(
                            &copy.table,
                            line,
                            format!("column {}: {}", entry.columns[c].name, e.message),
                        )
                    })?;
                    continue;
                }
                let text = std::str::from_utf8(field).map_err(|_| {
                    bad(
                        &copy.table,
                        line,
                        format!("column {}: invalid UTF-8", entry.columns[c].name),
                    )
                })?;
                builders[c].push_text(text).map_err(|e| {
                    bad(
                        &copy.table,
                        line,
                        format!("column {}: {}", entry.columns[c].name, e.message),
                    )
                })?;
            }
            rows += 1;
        }
        // The columns COPY does not name, filled once the rows are counted
        // (each column has a builder of its own).
        let named: Vec<bool> = (0..entry.columns.len())
            .map(|i| order.contains(&i))
            .collect();
        let mut drawn = Vec::new();
        let fills = self.fills(txn, view, row, entry, &named, rows, run, &mut drawn)?;
        for (i, mut fill) in fills.into_iter().enumerate() {
            if named[i] {
                continue;
            }
            for _ in 0..rows {
                fill.push(&mut builders[i])?;
            }
        }
        let add = table_of(entry, builders)?;
        let notes = ChangeNotes {
            drawn,
            skips_conflicts: false,
        };
        self.replace_drawing(txn, view, &copy.table, Vec::new(), Arc::new(add), notes)?;
        Ok(rows)
    }

    /// [`Store::copy_in`] of a file on the server.
    pub fn copy_file(
        &self,
        txn: &mut Transaction,
        view: &View,
        copy: &CopyFrom,
        run: QueryRunner,
    ) -> Result<u64> {
        let path = copy.file.as_deref().unwrap_or_default();
        let data = std::fs::read(path).map_err(|e| {
            SqlError::new(
                ErrorKind::Store,
                format!("could not open file \"{path}\" for reading: {e}"),
            )
        })?;
        self.copy_in(txn, view, copy, &data, run)
    }
}
