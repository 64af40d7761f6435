//! `maestro tpcc run|check --cc sql`: TPC-C's transactions as SQL
//! statements on the SQL store (`maestro_server::tpcc`), driven by the same
//! terminals as the row engines; the consistency conditions checked by SQL.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use maestro_execution::Granularity;
use maestro_server::Engine;
use maestro_server::tpcc::{SqlTpcc, check_consistency};
use maestro_server::txn::Isolation;
use maestro_tpcc::driver::Mode;

use crate::exit::{failure, usage};
use crate::tpcc::Opened;
use crate::variants::{SqlIsolation, TpccCc};

/// The scheduler preset the SQL engine runs plans on when the terminals
/// run on their own threads (`maestro serve`'s).
const RECEIVERS_PRESET: &str = "single-hints";

/// Usage errors of options `--cc sql` does not take, or that need it.
pub(crate) fn refuse_unsupported(
    cc: TpccCc,
    isolation: SqlIsolation,
    export: Option<&Path>,
) -> Result<(), ExitCode> {
    if cc != TpccCc::Sql {
        if isolation != SqlIsolation::RepeatableRead {
            return Err(usage("--isolation is for --cc sql"));
        }
        return Ok(());
    }
    if export.is_some() {
        return Err(usage(
            "--export writes the row tables; with --cc sql the tables are SQL tables \
             (`maestro serve` and COPY … TO STDOUT read them)",
        ));
    }
    Ok(())
}

/// Loads W warehouses into a new SQL store on a scheduler for `mode`.
pub(crate) fn load(
    warehouses: u16,
    seed: u64,
    isolation: SqlIsolation,
    mode: Mode,
    contexts: usize,
) -> Result<(Box<SqlTpcc>, Opened), ExitCode> {
    let preset = match mode {
        Mode::Scheduler(_) => mode.name(),
        Mode::Receivers => RECEIVERS_PRESET,
    };
    let scheduler = maestro_bench::tpch::start_scheduler(preset, contexts).map_err(failure)?;
    let engine = Arc::new(Engine::new(scheduler, Granularity::Hint));
    let isolation = match isolation {
        SqlIsolation::RepeatableRead => Isolation::RepeatableRead,
        SqlIsolation::ReadCommitted => Isolation::ReadCommitted,
    };
    eprintln!("loading TPC-C W={warehouses} into the SQL store ({isolation:?}) …");
    let start = std::time::Instant::now();
    let (tpcc, load) = SqlTpcc::load(engine, warehouses, seed, isolation).map_err(failure)?;
    eprintln!(
        "loaded {} rows in {:.2} s (indexes: {})",
        load.rows,
        start.elapsed().as_secs_f64(),
        maestro_server::tpcc::INDEXES
            .map(|(_, t, c)| format!("{t}.{c}"))
            .join(", ")
    );
    let opened = Opened {
        constants: load.constants,
        rows: load.rows,
    };
    Ok((Box::new(tpcc), opened))
}

/// The run's resident memory line, and the store's table versions.
pub(crate) fn memory_line(
    loaded_rows: u64,
    (before, after): (Option<u64>, Option<u64>),
    tpcc: &SqlTpcc,
) {
    if let (Some(b), Some(a)) = (before, after) {
        eprintln!(
            "resident memory: {:.1} MiB before the run, {:.1} MiB after ({loaded_rows} rows loaded)",
            b as f64 / 1048576.0,
            a as f64 / 1048576.0
        );
    }
    let store = tpcc.engine().store();
    let plans = store.plan_cache_stats();
    eprintln!(
        "sql store: {} table versions stored; plans: {} from the cache, {} kept, {} first seen, {} planned per execution",
        store.versions_stored(),
        plans.hits,
        plans.kept,
        plans.seen,
        plans.not_kept
    );
}

/// Conditions 1–4 by SQL on one snapshot; Err(exit 1) on a violation.
pub(crate) fn consistency(tpcc: &SqlTpcc) -> Result<(), ExitCode> {
    let violations = check_consistency(
        tpcc.engine(),
        maestro_tpcc::driver::TxnEngine::warehouses(tpcc),
    )
    .map_err(failure)?;
    crate::tpcc::report_violations(
        &violations,
        "consistency conditions 1-4 (by SQL on the store)",
    )
}
