//! `maestro tpcc …`: run the TPC-C mix under strict 2PL (or snapshot
//! isolation with `--cc mvcc`, or as SQL on the SQL store with `--cc sql`:
//! `tpcc_sql.rs`) and check the consistency conditions. Progress goes to stderr; stdout holds the table or,
//! with `--json`, one JSON object. Exit codes: 0 success, 1 a failure while
//! running or a consistency violation, 2 bad arguments.

use crate::exit::{failure, usage};
use crate::flags::renamed;
use crate::tpcc_durable::{DurableArgs, open_durable};
use crate::tpcc_sql;
use crate::variants::{SqlIsolation, TpccCc, TpccVariant, name_of};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Subcommand};
use maestro_tpcc::driver::{self, Cc, Mode, RunConfig, RunReport, Storage};
use maestro_tpcc::mvcc::{MvccDatabase, load_mvcc};
use maestro_tpcc::random::NuRandConstants;
use maestro_tpcc::{Database, LoadConfig, check_consistency, export_csv, load};
use serde_json::{Value, json};

#[derive(Subcommand)]
pub enum TpccCommand {
    /// Load W warehouses, run the standard mix with T terminals, check
    /// consistency and print tpmC, transactions per second, the abort rate
    /// and latency percentiles per transaction type.
    Run(RunArgs),
    /// Load W warehouses (optionally run the mix first) and check the
    /// consistency conditions 1-4 of clause 3.3.2.
    Check(CheckArgs),
}

#[derive(Args)]
pub struct RunArgs {
    /// Warehouses to load (1 to 65535); with --data-dir only to create it.
    #[arg(long)]
    warehouses: Option<u16>,
    /// Terminals, each bound to a home warehouse (at least 1).
    #[arg(long)]
    terminals: usize,
    /// Seconds to run (positive, fractions allowed).
    #[arg(long, allow_negative_numbers = true)]
    duration: f64,
    /// A scheduler preset (one scheduler task per transaction) or receivers
    /// (each terminal on its own thread).
    #[arg(long, value_enum, default_value = "single-pool")]
    variant: TpccVariant,
    /// Deprecated spelling of --variant.
    #[arg(
        long = "scheduler",
        value_enum,
        value_name = "VARIANT",
        hide = true,
        conflicts_with = "variant"
    )]
    old_scheduler: Option<TpccVariant>,
    /// Concurrency control: strict two-phase locking on row tables,
    /// snapshot isolation on versioned tables (write conflicts retried), or
    /// the transactions as SQL on the SQL store (main + delta columns).
    /// Default: 2pl, or mvcc with --data-dir.
    #[arg(long, value_enum)]
    cc: Option<TpccCc>,
    /// Isolation level of --cc sql's transactions.
    #[arg(long, value_enum, default_value = "repeatable-read")]
    isolation: SqlIsolation,
    /// Hardware contexts the scheduler keeps active (default: detected).
    #[arg(long)]
    contexts: Option<usize>,
    /// Seed of the load and of the terminals' inputs.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// After the run, write every table as DIR/<table>.csv.
    #[arg(long)]
    export: Option<PathBuf>,
    /// At most this many transactions per second in total (terminals pace their
    /// starts), e.g. for long runs whose inserted rows must fit in memory.
    #[arg(long)]
    max_tps: Option<f64>,
    /// Transaction timeout in milliseconds from submission: a transaction
    /// still running (or queued, or waiting for a lock) then rolls back and
    /// counts as timed out.
    #[arg(long, value_name = "MS")]
    txn_timeout_ms: Option<f64>,
    /// Run every transaction in this workload class (README, "Workload
    /// classes"; scheduler variants): its admission control (rejections
    /// counted as `rejected`), timeout and memory limits (`timed_out`).
    #[arg(long = "class", value_name = "SPEC", value_parser = crate::flags::class_spec_boxed)]
    class: Option<Box<maestro_scheduler::ClassSpec>>,
    #[command(flatten)]
    durable: DurableArgs,
    /// Print one JSON object on stdout (progress stays on stderr).
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct CheckArgs {
    /// Warehouses to load (1 to 65535); not with --data-dir.
    #[arg(long)]
    warehouses: Option<u16>,
    /// Seed of the load (and of the inputs with --duration).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Run the mix for this many seconds before checking.
    #[arg(long, allow_negative_numbers = true)]
    duration: Option<f64>,
    /// Terminals of that run.
    #[arg(long, default_value_t = 8)]
    terminals: usize,
    /// Variant of that run (as for `tpcc run`).
    #[arg(long, value_enum, default_value = "single-pool")]
    variant: TpccVariant,
    /// Deprecated spelling of --variant.
    #[arg(
        long = "scheduler",
        value_enum,
        value_name = "VARIANT",
        hide = true,
        conflicts_with = "variant"
    )]
    old_scheduler: Option<TpccVariant>,
    /// Concurrency control of that run (as for `tpcc run`).
    #[arg(long, value_enum, default_value = "2pl")]
    cc: TpccCc,
    /// Hardware contexts of that run (default: detected).
    #[arg(long)]
    contexts: Option<usize>,
    /// Check the database recovered from DIR instead of a fresh load.
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// Write every table as OUT/<table>.csv after the check.
    #[arg(long, value_name = "OUT")]
    export: Option<PathBuf>,
}

pub fn run(command: TpccCommand) -> ExitCode {
    let result = match command {
        TpccCommand::Run(a) => run_mix(a),
        TpccCommand::Check(a) => check(a),
    };
    result.unwrap_or_else(|code| code)
}

/// `--warehouses`: required and at least 1 without a data directory;
/// optional with one (0 = take the directory's).
fn warehouses(w: Option<u16>, data_dir: Option<&std::path::Path>) -> Result<u16, ExitCode> {
    match (w, data_dir) {
        (Some(0), _) => Err(usage("--warehouses must be at least 1")),
        (Some(w), _) => Ok(w),
        (None, Some(_)) => Ok(0),
        (None, None) => Err(usage(
            "--warehouses is required (unless --data-dir holds a database)",
        )),
    }
}

/// The validated options of a run (checked before the load, which takes a while).
struct RunOptions {
    terminals: usize,
    duration: Duration,
    mode: Mode,
    contexts: usize,
    seed: u64,
}

fn run_options(
    terminals: usize,
    seconds: f64,
    variant: TpccVariant,
    contexts: Option<usize>,
    seed: u64,
) -> Result<RunOptions, ExitCode> {
    if terminals == 0 {
        return Err(usage("--terminals must be at least 1"));
    }
    if !(seconds > 0.0 && seconds.is_finite()) {
        return Err(usage("--duration must be a positive number of seconds"));
    }
    let mode: Mode = name_of(&variant).parse().map_err(usage)?;
    let contexts = contexts.unwrap_or_else(maestro_scheduler::detected_contexts);
    if contexts == 0 || contexts > maestro_scheduler::WORKERS_MAX_LIMIT {
        return Err(usage(format!(
            "--contexts must be in 1..={}",
            maestro_scheduler::WORKERS_MAX_LIMIT
        )));
    }
    let duration = Duration::try_from_secs_f64(seconds)
        .map_err(|e| usage(format!("--duration {seconds}: {e}")))?;
    Ok(RunOptions {
        terminals,
        duration,
        mode,
        contexts,
        seed,
    })
}

impl RunOptions {
    /// The driver's configuration, with the load's NURand constants.
    fn config(&self, load: &Opened) -> RunConfig {
        let mut config = RunConfig::new(self.terminals, self.duration, self.mode, load.constants);
        config.seed = self.seed;
        config.contexts = self.contexts;
        config
    }
}

/// A loaded database of any storage.
pub(crate) enum Loaded {
    Locking(Box<Database>),
    Mvcc(Box<MvccDatabase>),
    Sql(Box<maestro_server::tpcc::SqlTpcc>),
}

impl Loaded {
    fn storage(&self) -> Storage<'_> {
        match self {
            Loaded::Locking(db) => Storage::Locking(db),
            Loaded::Mvcc(db) => Storage::Mvcc(db),
            Loaded::Sql(t) => Storage::External(&**t),
        }
    }

    /// Calls `f` on the rows as they are now: the tables themselves under
    /// 2PL, one snapshot copied into row tables under MVCC; the SQL store's
    /// rows are checked by SQL instead (`tpcc_sql::consistency`).
    fn with_rows<R>(&self, f: impl FnOnce(&Database) -> R) -> Result<R, ExitCode> {
        match self {
            Loaded::Locking(db) => Ok(f(db)),
            Loaded::Mvcc(db) => Ok(f(&db.snapshot_to_2pl().map_err(failure)?)),
            Loaded::Sql(_) => Err(failure(
                "the SQL store's tables are not row tables (checked by SQL)",
            )),
        }
    }
}

/// What a run starts from, however the database was opened.
pub(crate) struct Opened {
    pub(crate) constants: NuRandConstants,
    /// Rows before the run (for the memory line).
    pub(crate) rows: u64,
}

fn load_db(warehouses: u16, seed: u64, cc: Cc) -> Result<(Loaded, Opened), ExitCode> {
    let mut config = LoadConfig::new(warehouses);
    config.seed = seed;
    eprintln!("loading TPC-C W={warehouses} ({cc}) …");
    let progress = |p: &maestro_tpcc::LoadProgress| eprintln!("  {p}");
    let (db, report) = match cc {
        Cc::TwoPhaseLocking => {
            let (db, report) = load(&config, &progress).map_err(failure)?;
            (Loaded::Locking(Box::new(db)), report)
        }
        Cc::Mvcc => {
            let (db, report) = load_mvcc(&config, &progress).map_err(failure)?;
            (Loaded::Mvcc(Box::new(db)), report)
        }
        Cc::Sql => unreachable!("the SQL store loads through tpcc_sql::load"),
    };
    eprintln!(
        "loaded {} rows in {:.2} s",
        report.counts.total(),
        report.elapsed.as_secs_f64()
    );
    let opened = Opened {
        constants: report.constants,
        rows: report.counts.total(),
    };
    Ok((db, opened))
}

fn execute(db: &Loaded, config: &RunConfig) -> Result<RunReport, ExitCode> {
    eprintln!(
        "running {} terminals for {:.1} s ({}, {}, {} contexts)",
        config.terminals,
        config.duration.as_secs_f64(),
        config.mode,
        db.storage().cc(),
        config.contexts
    );
    let progress = |p: &driver::RunProgress| eprintln!("  {p}");
    match db {
        // Transactions as tasks of the scheduler the SQL engine runs its
        // plans on (one scheduler), or on the terminals' threads.
        Loaded::Sql(t) => {
            let scheduler = match config.mode {
                Mode::Scheduler(_) => Some(&**t.engine().scheduler()),
                Mode::Receivers => None,
            };
            driver::run_on_storage(db.storage(), config, scheduler, &progress)
        }
        _ => driver::run_storage(db.storage(), config, &progress),
    }
    .map_err(failure)
}

fn cc_of(cc: TpccCc) -> Cc {
    match cc {
        TpccCc::TwoPl => Cc::TwoPhaseLocking,
        TpccCc::Mvcc => Cc::Mvcc,
        TpccCc::Sql => Cc::Sql,
    }
}

/// Loads the database `cc` names: the SQL store for `sql` (its scheduler
/// made for `options`), else row tables.
fn load_any(
    w: u16,
    seed: u64,
    cc: TpccCc,
    isolation: SqlIsolation,
    options: Option<&RunOptions>,
) -> Result<(Loaded, Opened), ExitCode> {
    match cc {
        TpccCc::Sql => {
            let (mode, contexts) = options.map_or_else(
                || (Mode::Receivers, maestro_scheduler::detected_contexts()),
                |o| (o.mode, o.contexts),
            );
            let (t, opened) = tpcc_sql::load(w, seed, isolation, mode, contexts)?;
            Ok((Loaded::Sql(t), opened))
        }
        other => load_db(w, seed, cc_of(other)),
    }
}

/// Prints the violations on stderr; Err(exit 1) if there are any.
fn consistency(db: &Database) -> Result<(), ExitCode> {
    report_violations(&check_consistency(db), "consistency conditions 1-4")
}

/// `checked: ok` when `violations` is empty, else each on stderr and
/// Err(exit 1).
pub(crate) fn report_violations(
    violations: &[impl std::fmt::Display],
    checked: &str,
) -> Result<(), ExitCode> {
    if violations.is_empty() {
        eprintln!("{checked}: ok");
        return Ok(());
    }
    for v in violations {
        eprintln!("  {v}");
    }
    Err(failure(format!(
        "{} consistency violation(s)",
        violations.len()
    )))
}

fn run_mix(a: RunArgs) -> Result<ExitCode, ExitCode> {
    let data_dir = a.durable.data_dir.as_deref();
    let w = warehouses(a.warehouses, data_dir)?;
    let variant = renamed(Some(a.variant), a.old_scheduler, "--scheduler", "--variant")
        .expect("--variant has a default");
    let options = run_options(a.terminals, a.duration, variant, a.contexts, a.seed)?;
    if a.class.is_some() && matches!(options.mode, Mode::Receivers) {
        return Err(usage(
            "--class needs a scheduler --variant (receivers has no workload classes)",
        ));
    }
    if a.max_tps.is_some_and(|r| !(r > 0.0 && r.is_finite())) {
        return Err(usage("--max-tps must be a positive number"));
    }
    let txn_timeout = match a.txn_timeout_ms {
        None => None,
        Some(ms) if ms > 0.0 && ms.is_finite() => Some(Duration::from_secs_f64(ms / 1e3)),
        Some(ms) => {
            return Err(usage(format!(
                "--txn-timeout-ms {ms}: expected a positive number of milliseconds"
            )));
        }
    };
    let durable = a.durable.validate(a.cc)?;
    let cc = a.cc.unwrap_or(TpccCc::TwoPl);
    tpcc_sql::refuse_unsupported(cc, a.isolation, a.export.as_deref())?;
    let (db, opened) = match &durable {
        Some(durable) => open_durable(durable, w, a.seed)?,
        None => load_any(w, a.seed, cc, a.isolation, Some(&options))?,
    };
    let mut config = options.config(&opened);
    config.max_tps = a.max_tps;
    config.txn_timeout = txn_timeout;
    config.class_spec = a.class.map(|c| *c);
    if let Some(durable) = &durable {
        durable.configure(&mut config)?;
    }
    let rss_before = resident_bytes();
    let report = execute(&db, &config)?;
    // Before the MVCC snapshot copy below, which allocates a whole copy.
    let rss_after = resident_bytes();
    if a.json {
        let mut json = report_json(&report, a.duration);
        json["resident_bytes_before"] = json!(rss_before);
        json["resident_bytes_after"] = json!(rss_after);
        println!("{json}");
    } else {
        print!("{report}");
    }
    if let Loaded::Sql(t) = &db {
        tpcc_sql::memory_line(opened.rows, (rss_before, rss_after), t);
        return tpcc_sql::consistency(t).map(|()| ExitCode::SUCCESS);
    }
    let versions = match &db {
        Loaded::Mvcc(mvcc) => Some(mvcc.versions_stored()),
        Loaded::Locking(_) | Loaded::Sql(_) => None,
    };
    db.with_rows(|rows| {
        if let Some(versions) = versions {
            let live = rows.counts().total();
            eprintln!(
                "mvcc versions: {versions} stored for {live} live rows ({:+.1} %)",
                100.0 * (versions as f64 / live.max(1) as f64 - 1.0)
            );
        }
        finish(
            rows,
            opened.rows,
            (rss_before, rss_after),
            a.export.as_deref(),
        )
    })?
    .map(|()| ExitCode::SUCCESS)
}

/// After a run: the memory line, the consistency check and the export, on
/// the rows as they are after the run.
fn finish(
    db: &Database,
    loaded_rows: u64,
    (rss_before, rss_after): (Option<u64>, Option<u64>),
    export: Option<&std::path::Path>,
) -> Result<(), ExitCode> {
    if let (Some(b), Some(after)) = (rss_before, rss_after) {
        let inserted = db.counts().total().saturating_sub(loaded_rows);
        let grown = after.saturating_sub(b);
        eprintln!(
            "resident memory: {:.1} MiB before the run, {:.1} MiB after: +{:.1} MiB for {inserted} \
             inserted rows ({:.0} bytes per row)",
            b as f64 / 1048576.0,
            after as f64 / 1048576.0,
            grown as f64 / 1048576.0,
            grown as f64 / inserted.max(1) as f64
        );
    }
    let checked = consistency(db);
    if let Some(dir) = export {
        let files = export_csv(db, dir)
            .map_err(|e| failure(format!("export to {}: {e}", dir.display())))?;
        let rows: u64 = files.iter().map(|(_, n)| n).sum();
        eprintln!(
            "exported {} tables ({rows} rows) to {}",
            files.len(),
            dir.display()
        );
    }
    checked
}

fn check(a: CheckArgs) -> Result<ExitCode, ExitCode> {
    let w = warehouses(a.warehouses, a.data_dir.as_deref())?;
    let variant = renamed(Some(a.variant), a.old_scheduler, "--scheduler", "--variant")
        .expect("--variant has a default");
    let options = a
        .duration
        .map(|seconds| run_options(a.terminals, seconds, variant, a.contexts, a.seed))
        .transpose()?;
    if a.data_dir.is_some() && options.is_some() {
        return Err(usage(
            "tpcc check --data-dir checks the recovered database as it is: use tpcc run --data-dir to run the mix on it",
        ));
    }
    let (db, opened) = match &a.data_dir {
        Some(dir) => {
            let state = maestro_txn::Database::data_dir_state(dir).map_err(failure)?;
            if state == maestro_txn::DataDirState::Empty {
                return Err(failure(format!(
                    "{} holds no database to check (tpcc run --data-dir creates one)",
                    dir.display()
                )));
            }
            open_durable(&DurableArgs::checking(dir), w, a.seed)?
        }
        None => {
            tpcc_sql::refuse_unsupported(a.cc, SqlIsolation::RepeatableRead, a.export.as_deref())?;
            load_any(
                w,
                a.seed,
                a.cc,
                SqlIsolation::RepeatableRead,
                options.as_ref(),
            )?
        }
    };
    if let Some(options) = &options {
        let report = execute(&db, &options.config(&opened))?;
        eprint!("{report}");
    }
    let w = db.storage().warehouses();
    if let Loaded::Sql(t) = &db {
        tpcc_sql::consistency(t)?;
        println!("ok: W={w}, consistency conditions 1-4 hold");
        return Ok(ExitCode::SUCCESS);
    }
    db.with_rows(|rows| {
        let checked = consistency(rows);
        if let Some(dir) = &a.export {
            let files = export_csv(rows, dir)
                .map_err(|e| failure(format!("export to {}: {e}", dir.display())))?;
            let n: u64 = files.iter().map(|(_, n)| n).sum();
            eprintln!(
                "exported {} tables ({n} rows) to {}",
                files.len(),
                dir.display()
            );
        }
        checked
    })??;
    println!("ok: W={w}, consistency conditions 1-4 hold");
    Ok(ExitCode::SUCCESS)
}

/// `{"experiment":"tpcc","warehouses":…,"terminals":…,"seconds":…,"results":[…]}`
/// with one `{"variant","metric","value"}` per number.
fn report_json(r: &RunReport, seconds: f64) -> Value {
    let variant = r.mode.as_str();
    let mut results = Vec::new();
    let mut metric = |name: String, value: f64| {
        results.push(json!({"variant": variant, "metric": name, "value": value}));
    };
    metric("tpmC".into(), r.tpmc());
    metric(
        "transactions_per_second".into(),
        r.transactions_per_second(),
    );
    metric("abort_rate".into(), r.abort_rate());
    let aborts = match r.cc {
        Cc::TwoPhaseLocking => "deadlock_aborts",
        Cc::Mvcc | Cc::Sql => "conflict_retries",
    };
    metric(aborts.into(), r.deadlock_aborts() as f64);
    metric("user_rollbacks".into(), r.user_rollbacks() as f64);
    metric("timed_out".into(), r.timed_out() as f64);
    metric("rejected".into(), r.rejected() as f64);
    metric("committed".into(), r.committed() as f64);
    metric("elapsed_seconds".into(), r.elapsed.as_secs_f64());
    metric("lock_waits".into(), r.locks.waits as f64);
    for k in &r.kinds {
        let name = k.kind.name();
        metric(format!("{name}_committed"), k.committed as f64);
        metric(format!("{name}_{aborts}"), k.deadlock_aborts as f64);
        let l = &k.latency;
        for (p, d) in [
            ("p50", l.p50),
            ("p90", l.p90),
            ("p99", l.p99),
            ("max", l.max),
        ] {
            metric(format!("{name}_latency_{p}_ms"), d.as_secs_f64() * 1e3);
        }
    }
    if let Some(s) = &r.scheduler {
        metric("blocked_events".into(), s.blocked_events as f64);
        metric(
            "inactive_by_user_events".into(),
            s.inactive_by_user_events as f64,
        );
        metric("workers_peak".into(), s.workers_peak as f64);
    }
    let mut durability = "none";
    if let Some(d) = &r.durability {
        durability = "off";
        if let Some(log) = &d.log {
            durability = log.durability.name();
            metric("log_records".into(), log.records as f64);
            metric("log_flushes".into(), log.flushes as f64);
            metric("log_records_per_flush".into(), log.records_per_flush());
            metric("log_bytes".into(), log.bytes as f64);
            metric("log_sync_seconds".into(), log.sync_time.as_secs_f64());
        }
        metric("checkpoints".into(), d.checkpoints.len() as f64);
        metric("checkpoint_seconds".into(), d.checkpoint_seconds());
    }
    // Whole seconds print as an integer, as in the shared benchmark shape.
    let seconds = if seconds.fract() == 0.0 && seconds < u64::MAX as f64 {
        json!(seconds as u64)
    } else {
        json!(seconds)
    };
    json!({
        "experiment": "tpcc",
        "cc": r.cc.name(),
        "durability": durability,
        "warehouses": r.warehouses,
        "terminals": r.terminals,
        "seconds": seconds,
        "results": results,
    })
}

/// This process's resident set (`VmRSS` of /proc/self/status), if readable.
fn resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
