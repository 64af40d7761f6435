//! `SqlError`: every way a statement can fail, as a value. Parse and bind
//! errors carry the line and column sqlparser reports for the offending token
//! or expression, when it has one.

use std::fmt;

/// What went wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// sqlparser rejected the text.
    Parse,
    UnknownTable,
    UnknownColumn,
    AmbiguousColumn,
    TypeMismatch,
    /// Valid SQL outside this slice (outer joins, subqueries, NULL tests, DDL, …).
    Unsupported,
    /// A SELECT item that is neither grouped nor aggregated, a non-constant LIMIT, …
    Invalid,
    /// The operators failed while running the plan.
    Execution,
    /// A parameter value that is not a value of its type (SQLSTATE 22P02).
    InvalidText,
    /// `$n` beyond the parameters given (SQLSTATE 42P02).
    UndefinedParameter,
    /// The statement was cancelled (SQLSTATE 57014).
    Cancelled,
    /// `x / 0` or `x % 0` on a row the statement evaluates (SQLSTATE 22012).
    DivisionByZero,
    /// CREATE TABLE of a name a visible table has (SQLSTATE 42P07).
    DuplicateTable,
    /// A column named twice where once is meant: in a table's columns or
    /// in one key (SQLSTATE 42701).
    DuplicateColumn,
    /// A table definition that cannot be: two primary keys (SQLSTATE
    /// 42P16).
    InvalidTableDefinition,
    /// DROP INDEX of a name no index has (SQLSTATE 42704).
    UndefinedObject,
    /// A NULL for a stored column: stored columns are NOT NULL (23502).
    NotNullViolation,
    /// A value outside its column's type (SQLSTATE 22003).
    OutOfRange,
    /// A string longer than its VARCHAR(n)/CHAR(n) column (SQLSTATE 22001).
    StringTooLong,
    /// A COPY row that does not fit the table (SQLSTATE 22P04).
    BadCopyData,
    /// A write that would leave two rows with one value of a unique column
    /// (SQLSTATE 23505).
    UniqueViolation,
    /// A write-write conflict with a concurrent transaction (SQLSTATE 40001).
    SerializationFailure,
    /// A value given for a `GENERATED ALWAYS AS IDENTITY` column
    /// (SQLSTATE 428C9).
    GeneratedAlways,
    /// A sequence past its type's largest value (SQLSTATE 2200H).
    SequenceLimit,
    /// An ON CONFLICT target that names no key (SQLSTATE 42P10).
    InvalidColumnReference,
    /// One statement would change a row twice: two rows of an `INSERT … ON
    /// CONFLICT DO UPDATE` with one key value (SQLSTATE 21000).
    CardinalityViolation,
    /// An argument outside what a function takes: generate_series's step 0
    /// (SQLSTATE 22023).
    InvalidParameterValue,
    /// Waiting for a row (or key value) another transaction holds would
    /// close a cycle of waits (SQLSTATE 40P01).
    Deadlock,
    /// A row stayed held by another transaction longer than a write waits
    /// for it, or `FOR UPDATE NOWAIT` found it held (SQLSTATE 55P03).
    LockNotAvailable,
    /// The store refused for another reason (a full catalog, …; XX000).
    Store,
}

/// A 1-based line and column in the statement text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    pub line: u64,
    pub column: u64,
}

/// Whether a failed statement may run again, on a fresh snapshot, inside
/// its transaction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Rerun {
    /// The statement may have left something behind, or running it again
    /// would meet the same error: the error ends the statement.
    #[default]
    Never,
    /// A 40001 found before the statement kept anything: a row (or the
    /// table) it would change was changed by a transaction that committed
    /// after its snapshot. READ COMMITTED runs it again on a fresh snapshot,
    /// as PostgreSQL re-evaluates an UPDATE on the newest row version.
    OnFreshSnapshot,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SqlError {
    pub kind: ErrorKind,
    pub message: String,
    pub position: Option<Position>,
    pub rerun: Rerun,
}

impl SqlError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> SqlError {
        SqlError {
            kind,
            message: message.into(),
            position: None,
            rerun: Rerun::Never,
        }
    }

    /// Attaches the start of a sqlparser span (line 0 means "no position").
    pub fn at(mut self, span: sqlparser::tokenizer::Span) -> SqlError {
        if self.position.is_none() && span.start.line > 0 {
            self.position = Some(Position {
                line: span.start.line,
                column: span.start.column,
            });
        }
        self
    }

    pub fn unsupported(what: impl fmt::Display) -> SqlError {
        SqlError::new(ErrorKind::Unsupported, format!("unsupported: {what}"))
    }

    /// A failure of the storage under the store (a column or delta
    /// operation refused), as `ErrorKind::Store`.
    pub fn store(e: impl fmt::Display) -> SqlError {
        SqlError::new(ErrorKind::Store, e.to_string())
    }

    pub fn mismatch(message: impl Into<String>) -> SqlError {
        SqlError::new(ErrorKind::TypeMismatch, message)
    }

    pub fn invalid(message: impl Into<String>) -> SqlError {
        SqlError::new(ErrorKind::Invalid, message)
    }

    pub fn is_unsupported(&self) -> bool {
        self.kind == ErrorKind::Unsupported
    }
}

impl fmt::Display for SqlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        if let Some(p) = self.position {
            write!(f, " at line {}, column {}", p.line, p.column)?;
        }
        Ok(())
    }
}

impl std::error::Error for SqlError {}

impl From<maestro_execution::ExecError> for SqlError {
    fn from(e: maestro_execution::ExecError) -> SqlError {
        SqlError::new(ErrorKind::Execution, e.to_string())
    }
}

pub type Result<T, E = SqlError> = std::result::Result<T, E>;
