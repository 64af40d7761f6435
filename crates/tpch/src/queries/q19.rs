//! TPC-H Q19. (Not yet written.)

use maestro_execution::{ExecContext, ExecError};

use super::{QueryParams, QueryResult};
use crate::Database;

pub(crate) fn run(
    _ctx: &ExecContext,
    _db: &Database,
    _p: &QueryParams,
) -> Result<QueryResult, ExecError> {
    Err(ExecError::KeyMismatch("Q19 is not written yet".into()))
}
