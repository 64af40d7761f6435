//! Why a load failed.

use std::fmt;

use maestro_storage::column::ColumnError;

#[derive(Debug, Clone, PartialEq)]
pub enum LoadError {
    /// The scale factor is outside `0.01..=10` or not a finite number.
    InvalidScaleFactor { value: f64, reason: &'static str },
    /// A load option is out of range.
    InvalidOption {
        option: &'static str,
        reason: &'static str,
    },
    /// Building a table failed (a bug: generated columns disagree with the schema).
    Column(ColumnError),
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::InvalidScaleFactor { value, reason } => write!(
                f,
                "invalid TPC-H scale factor {value}: {reason} (accepted: 0.01 to 10)"
            ),
            LoadError::InvalidOption { option, reason } => {
                write!(f, "invalid load option {option}: {reason}")
            }
            LoadError::Column(e) => write!(f, "building a table failed: {e}"),
        }
    }
}

impl std::error::Error for LoadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LoadError::Column(e) => Some(e),
            _ => None,
        }
    }
}

impl From<ColumnError> for LoadError {
    fn from(e: ColumnError) -> Self {
        LoadError::Column(e)
    }
}
