//! The deterministic database the answer tests check against DuckDB: one
//! warehouse (seed 1) loaded at [`FIXTURE_LOAD_TIME`], then
//! [`FIXTURE_TRANSACTIONS`] transactions of terminal 0's input stream run
//! one after another with the clock frozen at [`FIXTURE_RUN_TIME`]. The same
//! code builds the database for the test and for the files DuckDB answers
//! from (`examples/answer_fixture.rs`, `scripts/regen_answers.sh`).

use maestro_tpcc::mvcc;
use maestro_tpcc::random::{NuRandConstants, TpccRng};
use maestro_tpcc::txn::InputGenerator;
use maestro_tpcc::{Timestamp, TpccError};

use crate::db::{ChConfig, ChDatabase};
use crate::time::at;

pub const FIXTURE_SEED: u64 = 1;
pub const FIXTURE_LOAD_TIME: Timestamp = at(2019, 6, 1, 0, 0, 0);
pub const FIXTURE_RUN_TIME: Timestamp = at(2019, 12, 31, 12, 0, 0);
pub const FIXTURE_TRANSACTIONS: usize = 3_000;

pub fn fixture_database() -> Result<ChDatabase, TpccError> {
    let db = fixture_loaded()?;
    let mut inputs = fixture_inputs(&db);
    for _ in 0..FIXTURE_TRANSACTIONS {
        mvcc::execute(&db.tpcc, &inputs.next_input(), None)?;
    }
    Ok(db)
}

/// The fixture's database before its transactions: loaded, the clock
/// frozen at [`FIXTURE_RUN_TIME`].
pub fn fixture_loaded() -> Result<ChDatabase, TpccError> {
    let (db, _) = ChDatabase::load(
        &ChConfig {
            warehouses: 1,
            seed: FIXTURE_SEED,
            clock_start: Some(FIXTURE_LOAD_TIME),
        },
        &|_| {},
    )?;
    db.tpcc.freeze_clock_at(FIXTURE_RUN_TIME);
    Ok(db)
}

/// Terminal 0's input stream, the fixture's transactions in order.
pub fn fixture_inputs(db: &ChDatabase) -> InputGenerator {
    let constants = NuRandConstants::for_run(
        &db.load_constants,
        &mut fastrand::Rng::with_seed(FIXTURE_SEED),
    );
    InputGenerator::new(TpccRng::new(FIXTURE_SEED, constants), 1, 1, 1)
}
