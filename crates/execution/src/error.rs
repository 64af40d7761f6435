//! `ExecError`: why a plan could not be built or run. Operators check their
//! inputs (column types, key counts, scales) before they start and return these
//! instead of panicking; a panic inside a task is a bug and is re-raised.

use std::fmt;

use maestro_scheduler::{CancelReason, Cancelled, GraphError, TaskPanic};
use maestro_storage::column::ColumnError;

#[derive(Debug)]
pub enum ExecError {
    /// A column lookup failed (unknown name, wrong type).
    Column(ColumnError),
    /// An operand does not have the type the operation needs.
    Type {
        /// What was being built (`"predicate l_shipdate <= ..."`, `"sum"`, ...).
        context: String,
        expected: &'static str,
        found: String,
    },
    /// Too many key columns for a group or join key.
    TooManyKeys { given: usize, max: usize },
    /// Build and probe keys do not fit together.
    KeyMismatch(String),
    /// A LIKE pattern this engine does not support.
    Pattern {
        pattern: String,
        reason: &'static str,
    },
    /// More rows than a `u32` row id can address.
    TooManyRows(usize),
    /// The plan's task graph was refused.
    Graph(GraphError),
    /// A node of the plan's task graph panicked.
    Task(TaskPanic),
    /// The run was cancelled or hit its statement timeout; it stopped at an
    /// operator's checkpoint and left nothing behind.
    Cancelled(Cancelled),
}

impl fmt::Display for ExecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExecError::Column(e) => write!(f, "{e}"),
            ExecError::Type {
                context,
                expected,
                found,
            } => write!(f, "{context}: expected {expected}, found {found}"),
            ExecError::TooManyKeys { given, max } => {
                write!(f, "{given} key columns given, at most {max} supported")
            }
            ExecError::KeyMismatch(why) => write!(f, "join keys do not match: {why}"),
            ExecError::Pattern { pattern, reason } => {
                write!(f, "LIKE pattern {pattern:?}: {reason}")
            }
            ExecError::TooManyRows(n) => {
                write!(f, "{n} rows exceed the u32 row ids operators use")
            }
            ExecError::Graph(e) => write!(f, "plan graph: {e}"),
            ExecError::Task(p) => write!(f, "plan task panicked: {p:?}"),
            ExecError::Cancelled(c) => match c.reason {
                CancelReason::Cancelled => f.write_str("query cancelled"),
                CancelReason::TimedOut => f.write_str("query stopped: statement timeout"),
                CancelReason::StatementMemoryLimit => {
                    f.write_str("query stopped: statement memory limit exceeded")
                }
                CancelReason::ClassMemoryLimit => {
                    f.write_str("query stopped: workload class memory limit exceeded")
                }
            },
        }
    }
}

impl std::error::Error for ExecError {}

impl From<ColumnError> for ExecError {
    fn from(e: ColumnError) -> Self {
        ExecError::Column(e)
    }
}

impl From<GraphError> for ExecError {
    fn from(e: GraphError) -> Self {
        ExecError::Graph(e)
    }
}

impl From<TaskPanic> for ExecError {
    fn from(p: TaskPanic) -> Self {
        ExecError::Task(p)
    }
}

/// Checks that `len` positions can be addressed by `u32` row ids.
pub(crate) fn check_rows(len: usize) -> Result<(), ExecError> {
    if len > u32::MAX as usize {
        return Err(ExecError::TooManyRows(len));
    }
    Ok(())
}
