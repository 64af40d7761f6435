//! `maestro ch …`: CH-benCHmark on shared data — TPC-C terminals and
//! analytical queries on the same MVCC tables. Progress goes to stderr;
//! stdout holds the report or, with `--json`, one JSON object. Exit codes:
//! 0 success, 1 a failure while running or a consistency violation, 2 bad
//! arguments.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Subcommand};
use maestro_ch::columns::HeapRelease;
use maestro_ch::run::{ChReport, ChRunConfig, OlapEngine};
use maestro_ch::{ChConfig, ChDatabase, QUERIES};
use maestro_tpcc::driver::{self, Mode, RunConfig, Storage};
use serde_json::{Value, json};

use crate::exit::{failure, usage};
use crate::tpcc_durable::{DurableArgs, open_ch};
use crate::variants::{TpccVariant, name_of};

#[derive(Subcommand)]
pub enum ChCommand {
    /// Run TPC-C terminals and analytical clients together on shared data;
    /// print tpmC, analytical queries per hour, per-query latency, the retry
    /// rate and freshness; check consistency at the end.
    Run(RunArgs),
    /// Run the transactions for S seconds, take one snapshot, and write every
    /// table of it as DIR/<table>.csv and the answers to the queries on that
    /// same snapshot as DIR/q<N>.csv.
    Snapshot(SnapshotArgs),
}

#[derive(Args)]
pub struct RunArgs {
    /// Warehouses to load (1 to 65535; default 1; with --data-dir only to
    /// create it).
    #[arg(long)]
    warehouses: Option<u16>,
    /// TPC-C terminals (at least 1).
    #[arg(long, default_value_t = 4)]
    terminals: usize,
    /// Analytical clients, each running the queries in turn (0: TPC-C only).
    #[arg(long, default_value_t = 1)]
    olap_clients: usize,
    /// What runs the analytical queries: `sql` — the SQL texts on column
    /// mains plus deltas of the rows written since (the column mirror,
    /// merged as it grows), parallel operators; `plans` — the hand-written
    /// plans scanning row versions, one job per query.
    #[arg(long, value_enum, default_value = "plans")]
    olap_engine: EngineArg,
    /// After each merge of the column mirror (`--olap-engine sql`): return
    /// the heap's free pages — the replaced mains — to the kernel
    /// (`after-merge`), or leave them to malloc (`never`).
    #[arg(long, value_enum, default_value = "after-merge")]
    heap_release: HeapReleaseArg,
    /// Seconds to run (positive, fractions allowed).
    #[arg(long, default_value_t = 10.0, allow_negative_numbers = true)]
    duration: f64,
    /// A scheduler preset (transactions and queries as scheduler jobs) or
    /// receivers (each terminal and client on its own thread).
    #[arg(long, value_enum, default_value = "single-pool")]
    variant: TpccVariant,
    /// Hardware contexts the scheduler keeps active (default: detected).
    #[arg(long)]
    contexts: Option<usize>,
    /// Seed of the load and of the terminals' inputs.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Cap the terminals' transactions per second in total (default: as
    /// fast as they go).
    #[arg(long)]
    max_tps: Option<f64>,
    #[command(flatten)]
    durable: DurableArgs,
    /// Print one JSON object on stdout (progress stays on stderr).
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum HeapReleaseArg {
    AfterMerge,
    Never,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum EngineArg {
    Sql,
    Plans,
}

#[derive(Args)]
pub struct SnapshotArgs {
    /// Warehouses to load (1 to 65535).
    #[arg(long, default_value_t = 1)]
    warehouses: u16,
    /// Seconds of transactions before the snapshot (0: the loaded data).
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    run_seconds: f64,
    /// Terminals running those transactions.
    #[arg(long, default_value_t = 4)]
    terminals: usize,
    /// Directory for the CSV files (created if missing).
    #[arg(long)]
    out: PathBuf,
    /// Every timestamp the load and the transactions write comes from a
    /// clock that starts at this UTC instant (e.g. 2020-01-01T00:00:00Z) and
    /// advances with real time; default: the system clock.
    #[arg(long)]
    clock_start: Option<String>,
    /// Seed of the load and of the terminals' inputs.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

pub fn run(command: ChCommand) -> ExitCode {
    let result = match command {
        ChCommand::Run(a) => run_ch(a),
        ChCommand::Snapshot(a) => snapshot(a),
    };
    result.unwrap_or_else(|code| code)
}

fn seconds(flag: &str, s: f64, zero_ok: bool) -> Result<Duration, ExitCode> {
    let ok = s.is_finite() && (s > 0.0 || (zero_ok && s == 0.0));
    if !ok {
        let what = if zero_ok { "non-negative" } else { "positive" };
        return Err(usage(format!("{flag} must be a {what} number of seconds")));
    }
    Duration::try_from_secs_f64(s).map_err(|e| usage(format!("{flag} {s}: {e}")))
}

fn load(config: &ChConfig) -> Result<ChDatabase, ExitCode> {
    if config.warehouses == 0 {
        return Err(usage("--warehouses must be at least 1"));
    }
    eprintln!(
        "loading CH-benCHmark W={} (TPC-C on MVCC tables + supplier, nation, region) …",
        config.warehouses
    );
    let (db, report) = ChDatabase::load(config, &|p| eprintln!("  {p}")).map_err(failure)?;
    eprintln!(
        "loaded {} TPC-C rows in {:.2} s",
        report.counts.total(),
        report.elapsed.as_secs_f64()
    );
    Ok(db)
}

fn consistency(db: &ChDatabase) -> Result<(), ExitCode> {
    let violations = db.tpcc.check_consistency().map_err(failure)?;
    crate::tpcc::report_violations(&violations, "consistency conditions 1-4")
}

fn run_ch(a: RunArgs) -> Result<ExitCode, ExitCode> {
    let duration = seconds("--duration", a.duration, false)?;
    if a.terminals == 0 {
        return Err(usage("--terminals must be at least 1"));
    }
    let mode: Mode = name_of(&a.variant).parse().map_err(usage)?;
    let contexts = a
        .contexts
        .unwrap_or_else(maestro_scheduler::detected_contexts);
    if contexts == 0 || contexts > maestro_scheduler::WORKERS_MAX_LIMIT {
        return Err(usage(format!(
            "--contexts must be in 1..={}",
            maestro_scheduler::WORKERS_MAX_LIMIT
        )));
    }
    let durable = a.durable.validate(None)?;
    let db = match &durable {
        None => load(&ChConfig {
            warehouses: a.warehouses.unwrap_or(1),
            seed: a.seed,
            clock_start: None,
        })?,
        Some(options) => {
            if a.warehouses == Some(0) {
                return Err(usage("--warehouses must be at least 1"));
            }
            let progress = |p: &maestro_tpcc::LoadProgress| eprintln!("  {p}");
            open_ch(options, a.warehouses, 1, a.seed, &progress).map_err(failure)?
        }
    };
    if a.max_tps.is_some_and(|r| !(r > 0.0 && r.is_finite())) {
        return Err(usage("--max-tps must be a positive number"));
    }
    let mut tpcc = RunConfig::new(a.terminals, duration, mode, db.load_constants);
    tpcc.seed = a.seed;
    tpcc.max_tps = a.max_tps;
    tpcc.contexts = contexts;
    if let Some(options) = &durable {
        options.configure(&mut tpcc)?;
    }
    let olap_engine = match a.olap_engine {
        EngineArg::Sql => OlapEngine::Sql,
        EngineArg::Plans => OlapEngine::Plans,
    };
    if olap_engine == OlapEngine::Sql && mode == Mode::Receivers && a.olap_clients > 0 {
        return Err(usage(
            "--olap-engine sql runs on the scheduler: choose a scheduler --variant or --olap-engine plans",
        ));
    }
    let config = ChRunConfig {
        tpcc,
        olap_clients: a.olap_clients,
        olap_engine,
        heap_release: match a.heap_release {
            HeapReleaseArg::AfterMerge => HeapRelease::AfterMerge,
            HeapReleaseArg::Never => HeapRelease::Never,
        },
    };
    eprintln!(
        "running {} terminals and {} analytical clients ({} queries, {} engine) for {:.1} s ({}, {} contexts)",
        a.terminals,
        a.olap_clients,
        QUERIES.len(),
        olap_engine.name(),
        duration.as_secs_f64(),
        mode,
        contexts
    );
    let report = maestro_ch::run::run(&db, &config, &|p| eprintln!("  {p}")).map_err(failure)?;
    if a.json {
        println!(
            "{}",
            report_json(&report, db.tpcc.warehouses(), a.terminals)
        );
    } else {
        print!("{report}");
    }
    consistency(&db)?;
    Ok(ExitCode::SUCCESS)
}

fn snapshot(a: SnapshotArgs) -> Result<ExitCode, ExitCode> {
    let run_for = seconds("--run-seconds", a.run_seconds, true)?;
    let clock_start = a
        .clock_start
        .as_deref()
        .map(maestro_ch::time::parse_iso8601)
        .transpose()
        .map_err(|e| usage(format!("--clock-start: {e}")))?;
    if a.terminals == 0 && !run_for.is_zero() {
        return Err(usage("--terminals must be at least 1 to run transactions"));
    }
    let db = load(&ChConfig {
        warehouses: a.warehouses,
        seed: a.seed,
        clock_start,
    })?;
    if !run_for.is_zero() {
        let mut config = RunConfig::new(a.terminals, run_for, Mode::Receivers, db.load_constants);
        config.seed = a.seed;
        eprintln!(
            "running {} terminals for {:.1} s before the snapshot",
            a.terminals,
            run_for.as_secs_f64()
        );
        let report = driver::run_storage(Storage::Mvcc(&db.tpcc), &config, &|p| eprintln!("  {p}"))
            .map_err(failure)?;
        eprint!("{report}");
    }
    let snap = db.snapshot().map_err(failure)?;
    let written = maestro_ch::export::write_snapshot(&snap, &a.out)
        .map_err(|e| failure(format!("writing {}: {e}", a.out.display())))?;
    let rows: u64 = written.tables.iter().map(|(_, n)| n).sum();
    eprintln!(
        "wrote {} tables ({rows} rows) and the answers to {} queries to {}",
        written.tables.len(),
        written.queries.len(),
        a.out.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// `{"experiment":"ch","warehouses":…,"terminals":…,"olap_clients":…,
/// "seconds":…,"results":[…]}` with one `{"variant","metric","value"}` per
/// number.
fn report_json(r: &ChReport, warehouses: u16, terminals: usize) -> Value {
    let variant = r.tpcc.mode.as_str();
    let mut results = Vec::new();
    let mut metric = |name: String, value: f64| {
        results.push(json!({"variant": variant, "metric": name, "value": value}));
    };
    let t = &r.tpcc;
    metric("tpmC".into(), t.tpmc());
    metric(
        "transactions_per_second".into(),
        t.transactions_per_second(),
    );
    metric("conflict_retries".into(), t.deadlock_aborts() as f64);
    metric("abort_rate".into(), t.abort_rate());
    metric("queries_per_hour".into(), r.queries_per_hour());
    metric("queries_completed".into(), r.queries_completed() as f64);
    metric("mirror_merges".into(), r.mirror.merges as f64);
    metric("mirror_merge_seconds".into(), r.mirror.merge_seconds);
    metric("mirror_delta_seconds".into(), r.mirror.delta_seconds);
    metric("mirror_main_bytes".into(), r.mirror.main_bytes as f64);
    metric("mirror_delta_bytes".into(), r.mirror.delta_bytes as f64);
    metric(
        "delta_rows_per_query".into(),
        r.delta_rows as f64 / r.queries_completed().max(1) as f64,
    );
    metric(
        "freshness_p50_ms".into(),
        r.freshness.p50.as_secs_f64() * 1e3,
    );
    metric(
        "freshness_max_ms".into(),
        r.freshness.max.as_secs_f64() * 1e3,
    );
    for q in &r.queries {
        let l = &q.latency;
        metric(format!("q{}_count", q.number), l.count as f64);
        for (p, d) in [
            ("p50", l.p50),
            ("p90", l.p90),
            ("p99", l.p99),
            ("max", l.max),
        ] {
            metric(
                format!("q{}_latency_{p}_ms", q.number),
                d.as_secs_f64() * 1e3,
            );
        }
    }
    json!({
        "experiment": "ch",
        "warehouses": warehouses,
        "terminals": terminals,
        "olap_clients": r.olap_clients,
        "olap_engine": r.olap_engine.name(),
        "seconds": r.elapsed.as_secs_f64(),
        "results": results,
    })
}
