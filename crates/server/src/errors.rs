//! maestro-sql's errors as PostgreSQL ErrorResponses with SQLSTATE codes.

use maestro_sql::{ErrorKind, SqlError};
use pgwire::error::{ErrorInfo, PgWireError};

pub const CARDINALITY_VIOLATION: &str = "21000";
pub const GENERATED_ALWAYS: &str = "428C9";
pub const INVALID_COLUMN_REFERENCE: &str = "42P10";
pub const SEQUENCE_GENERATOR_LIMIT_EXCEEDED: &str = "2200H";
pub const SYNTAX_ERROR: &str = "42601";
pub const UNDEFINED_TABLE: &str = "42P01";
pub const UNDEFINED_COLUMN: &str = "42703";
pub const AMBIGUOUS_COLUMN: &str = "42702";
pub const DATATYPE_MISMATCH: &str = "42804";
pub const GROUPING_ERROR: &str = "42803";
pub const UNDEFINED_FUNCTION: &str = "42883";
pub const UNDEFINED_OBJECT: &str = "42704";
pub const FEATURE_NOT_SUPPORTED: &str = "0A000";
pub const INVALID_PARAMETER_VALUE: &str = "22023";
pub const INVALID_DATETIME_FORMAT: &str = "22007";
pub const NUMERIC_VALUE_OUT_OF_RANGE: &str = "22003";
pub const DATA_EXCEPTION: &str = "22000";
pub const PROTOCOL_VIOLATION: &str = "08P01";
pub const INVALID_BINARY_REPRESENTATION: &str = "22P03";
pub const CHARACTER_NOT_IN_REPERTOIRE: &str = "22021";
pub const INVALID_TEXT_REPRESENTATION: &str = "22P02";
pub const UNDEFINED_PARAMETER: &str = "42P02";
pub const QUERY_CANCELED: &str = "57014";
pub const DIVISION_BY_ZERO: &str = "22012";
/// A workload class's admission control rejected the statement (retryable).
pub const INSUFFICIENT_RESOURCES: &str = "53000";
pub const TOO_MANY_CONNECTIONS: &str = "53300";
/// A statement or workload class memory limit stopped the statement.
pub const OUT_OF_MEMORY: &str = "53200";
pub const INTERNAL_ERROR: &str = "XX000";
pub const DUPLICATE_TABLE: &str = "42P07";
pub const DUPLICATE_COLUMN: &str = "42701";
pub const INVALID_TABLE_DEFINITION: &str = "42P16";
pub const NOT_NULL_VIOLATION: &str = "23502";
pub const UNIQUE_VIOLATION: &str = "23505";
pub const STRING_DATA_RIGHT_TRUNCATION: &str = "22001";
pub const BAD_COPY_FILE_FORMAT: &str = "22P04";
pub const SERIALIZATION_FAILURE: &str = "40001";
pub const DEADLOCK_DETECTED: &str = "40P01";
pub const LOCK_NOT_AVAILABLE: &str = "55P03";
pub const IN_FAILED_SQL_TRANSACTION: &str = "25P02";
pub const ACTIVE_SQL_TRANSACTION: &str = "25001";
pub const UNDEFINED_FILE: &str = "58P01";

/// An ERROR with this code and message.
pub fn error(code: &str, message: impl Into<String>) -> Box<ErrorInfo> {
    Box::new(ErrorInfo::new(
        "ERROR".to_string(),
        code.to_string(),
        message.into(),
    ))
}

pub fn user_error(info: Box<ErrorInfo>) -> PgWireError {
    PgWireError::UserError(info)
}

/// The SQLSTATE of a maestro-sql error.
pub fn sqlstate(e: &SqlError) -> &'static str {
    let m = e.message.as_str();
    match e.kind {
        ErrorKind::Parse => SYNTAX_ERROR,
        ErrorKind::UnknownTable => UNDEFINED_TABLE,
        ErrorKind::UnknownColumn => UNDEFINED_COLUMN,
        ErrorKind::AmbiguousColumn => AMBIGUOUS_COLUMN,
        ErrorKind::TypeMismatch
            if m.starts_with("invalid date")
                || m.starts_with("invalid timestamp")
                || m.starts_with("interval") =>
        {
            INVALID_DATETIME_FORMAT
        }
        ErrorKind::TypeMismatch => DATATYPE_MISMATCH,
        ErrorKind::Unsupported => FEATURE_NOT_SUPPORTED,
        ErrorKind::Invalid if m.contains("out of range") => NUMERIC_VALUE_OUT_OF_RANGE,
        ErrorKind::Invalid if m.contains("LIMIT") => DATA_EXCEPTION,
        ErrorKind::Invalid if m.contains("GROUP BY") || m.contains("aggregat") => GROUPING_ERROR,
        ErrorKind::Invalid => SYNTAX_ERROR,
        ErrorKind::Execution if m.starts_with("LIKE pattern") => FEATURE_NOT_SUPPORTED,
        ErrorKind::Execution if m.contains("cancel") => QUERY_CANCELED,
        ErrorKind::Execution => INTERNAL_ERROR,
        ErrorKind::InvalidText if m.contains("type date") || m.contains("type timestamp") => {
            INVALID_DATETIME_FORMAT
        }
        ErrorKind::InvalidText => INVALID_TEXT_REPRESENTATION,
        ErrorKind::UndefinedParameter => UNDEFINED_PARAMETER,
        ErrorKind::Cancelled if m.contains("memory limit") => OUT_OF_MEMORY,
        ErrorKind::Cancelled => QUERY_CANCELED,
        ErrorKind::DivisionByZero => DIVISION_BY_ZERO,
        ErrorKind::DuplicateTable => DUPLICATE_TABLE,
        ErrorKind::DuplicateColumn => DUPLICATE_COLUMN,
        ErrorKind::InvalidTableDefinition => INVALID_TABLE_DEFINITION,
        ErrorKind::UndefinedObject => UNDEFINED_OBJECT,
        ErrorKind::NotNullViolation => NOT_NULL_VIOLATION,
        ErrorKind::UniqueViolation => UNIQUE_VIOLATION,
        ErrorKind::OutOfRange => NUMERIC_VALUE_OUT_OF_RANGE,
        ErrorKind::StringTooLong => STRING_DATA_RIGHT_TRUNCATION,
        ErrorKind::BadCopyData => BAD_COPY_FILE_FORMAT,
        ErrorKind::SerializationFailure => SERIALIZATION_FAILURE,
        ErrorKind::Deadlock => DEADLOCK_DETECTED,
        ErrorKind::LockNotAvailable => LOCK_NOT_AVAILABLE,
        ErrorKind::GeneratedAlways => GENERATED_ALWAYS,
        ErrorKind::SequenceLimit => SEQUENCE_GENERATOR_LIMIT_EXCEEDED,
        ErrorKind::InvalidColumnReference => INVALID_COLUMN_REFERENCE,
        ErrorKind::CardinalityViolation => CARDINALITY_VIOLATION,
        ErrorKind::InvalidParameterValue => INVALID_PARAMETER_VALUE,
        ErrorKind::Store if m.starts_with("could not open file") => UNDEFINED_FILE,
        ErrorKind::Store => INTERNAL_ERROR,
    }
}

/// A maestro-sql error as an ErrorResponse; `position` is the 1-based
/// character position in the client's query string, when the error has one.
pub fn sql_error(e: &SqlError, position: Option<usize>) -> Box<ErrorInfo> {
    let mut info = error(sqlstate(e), e.message.clone());
    info.position = position.map(|p| p.to_string());
    info
}
