//! Errors of the column store: always returned, never panicked.

use std::fmt;

use super::types::DataType;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ColumnError {
    /// No column of that name in the table.
    UnknownColumn {
        table: String,
        column: String,
    },
    /// The column exists but has another type than the caller asked for.
    TypeMismatch {
        table: String,
        column: String,
        expected: DataType,
        found: DataType,
    },
    /// A column's length differs from the table's row count.
    LengthMismatch {
        table: String,
        column: String,
        expected: usize,
        found: usize,
    },
    /// Two columns of one table share a name.
    DuplicateColumn {
        table: String,
        column: String,
    },
    /// Parts of one column to concatenate have different types.
    MixedParts {
        expected: DataType,
        found: DataType,
    },
    InvalidDate {
        input: String,
        reason: &'static str,
    },
    InvalidDecimal {
        input: String,
        reason: &'static str,
    },
    /// Decimal scale above [`super::decimal::MAX_SCALE`].
    InvalidScale(u8),
    /// A copy-on-write rebuild was asked for rows that do not exist, out of
    /// order, or with appended rows of another schema.
    InvalidRebuild {
        reason: String,
    },
}

impl fmt::Display for ColumnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ColumnError::UnknownColumn { table, column } => {
                write!(f, "table {table} has no column {column}")
            }
            ColumnError::TypeMismatch {
                table,
                column,
                expected,
                found,
            } => write!(f, "column {table}.{column} is {found}, not {expected}"),
            ColumnError::LengthMismatch {
                table,
                column,
                expected,
                found,
            } => write!(
                f,
                "column {table}.{column} has {found} rows, the table {expected}"
            ),
            ColumnError::DuplicateColumn { table, column } => {
                write!(f, "table {table} has two columns named {column}")
            }
            ColumnError::InvalidRebuild { reason } => write!(f, "invalid rebuild: {reason}"),
            ColumnError::MixedParts { expected, found } => {
                write!(
                    f,
                    "cannot concatenate a {found} part to a {expected} column"
                )
            }
            ColumnError::InvalidDate { input, reason } => {
                write!(f, "invalid date {input:?}: {reason}")
            }
            ColumnError::InvalidDecimal { input, reason } => {
                write!(f, "invalid decimal {input:?}: {reason}")
            }
            ColumnError::InvalidScale(s) => {
                write!(f, "decimal scale {s} exceeds {}", super::decimal::MAX_SCALE)
            }
        }
    }
}

impl std::error::Error for ColumnError {}
