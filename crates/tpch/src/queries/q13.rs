//! TPC-H Q13. (Not yet written.)

use maestro_execution::{ExecContext, ExecError};

use super::{QueryParams, QueryResult};
use crate::Database;

pub(crate) fn run(
    _ctx: &ExecContext,
    _db: &Database,
    _p: &QueryParams,
) -> Result<QueryResult, ExecError> {
    Err(ExecError::KeyMismatch("Q13 is not written yet".into()))
}
