//! TPC-H Q9. (Not yet written.)

use maestro_execution::{ExecContext, ExecError};

use super::{QueryParams, QueryResult};
use crate::Database;

pub(crate) fn run(
    _ctx: &ExecContext,
    _db: &Database,
    _p: &QueryParams,
) -> Result<QueryResult, ExecError> {
    Err(ExecError::KeyMismatch("Q9 is not written yet".into()))
}
