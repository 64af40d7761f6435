//! `maestro run` (and `maestro` with no arguments): the mixed HTAP main job —
//! CH-benCHmark on shared data by default (TPC-C terminals and analytical
//! clients on the same MVCC tables), or TPC-H beside TPC-C on disjoint data
//! (`--workload disjoint`, the papers' experiments' shape).

use crate::exit::{failure, usage};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use maestro_bench::mixed::{self, LiveSample, LoadedWorkload, MixedConfig, WorkloadKind};
use maestro_ch::run::OlapEngine;

use crate::tpcc_durable::{self, DurableArgs, DurableOptions};
use maestro_bench::run_report::{self, RunSetup};

use crate::variants::{EngineVariant, name_of};

/// What a mixed run runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum JobWorkload {
    /// CH-benCHmark: TPC-C and the CH queries on the same MVCC tables.
    Ch,
    /// TPC-H on the column store beside TPC-C on its own 2PL tables.
    Disjoint,
}

impl JobWorkload {
    pub fn kind(self, engine: EngineArg) -> WorkloadKind {
        match self {
            JobWorkload::Ch => WorkloadKind::Ch(engine.engine()),
            JobWorkload::Disjoint => WorkloadKind::Disjoint,
        }
    }
}

/// What runs CH-benCHmark's analytical queries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum EngineArg {
    /// The SQL texts on column mains plus deltas of the rows written since
    /// (the column mirror, merged as it grows), parallel operators.
    Sql,
    /// The hand-written plans scanning row versions, one job per query.
    Plans,
}

impl EngineArg {
    pub fn engine(self) -> OlapEngine {
        match self {
            EngineArg::Sql => OlapEngine::Sql,
            EngineArg::Plans => OlapEngine::Plans,
        }
    }
}

#[derive(Args, Clone)]
pub struct RunArgs {
    /// Shared data (CH-benCHmark) or disjoint TPC-H + TPC-C.
    #[arg(long, value_enum, default_value = "ch")]
    workload: JobWorkload,
    /// What runs CH-benCHmark's analytical queries (--workload ch).
    #[arg(long, value_enum, default_value = "plans")]
    olap_engine: EngineArg,
    /// TPC-H scale factor (0.01 to 10; the disjoint workload only).
    #[arg(long, default_value_t = 0.1)]
    sf: f64,
    /// TPC-C warehouses.
    #[arg(long, default_value_t = 2)]
    warehouses: u16,
    /// Concurrent analytical clients: CH clients (each runs the CH queries in
    /// turn) or TPC-H clients (each its stream's query order), back to back.
    #[arg(long, alias = "olap-clients", default_value_t = 2)]
    tpch_clients: usize,
    /// TPC-C terminals.
    #[arg(long, default_value_t = 4)]
    tpcc_terminals: usize,
    /// Seconds to run both workloads together.
    #[arg(long, default_value_t = 30.0)]
    duration: f64,
    /// Engine variant.
    #[arg(long, value_enum, default_value = "single-hints")]
    variant: EngineVariant,
    /// Hardware contexts to use (default: detected).
    #[arg(long)]
    contexts: Option<usize>,
    /// Seed of the queries' parameters and the terminals' inputs.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Where to write report.json, report.md and the charts.
    #[arg(long, default_value = "target/maestro-run")]
    out: PathBuf,
    /// Print the outcome as one JSON object on stdout instead of the summary.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    durable: DurableArgs,
}

impl Default for RunArgs {
    fn default() -> Self {
        use clap::Parser;
        #[derive(Parser)]
        struct Wrapper {
            #[command(flatten)]
            args: RunArgs,
        }
        Wrapper::parse_from(["maestro"]).args
    }
}

pub fn run(a: RunArgs) -> ExitCode {
    let contexts = a
        .contexts
        .unwrap_or_else(maestro_scheduler::detected_contexts);
    if contexts == 0 || contexts > maestro_scheduler::WORKERS_MAX_LIMIT {
        return usage(format!(
            "--contexts must be in 1..={}",
            maestro_scheduler::WORKERS_MAX_LIMIT
        ));
    }
    if let Err(e) = maestro_tpch::validate_scale_factor(a.sf) {
        return usage(e);
    }
    if a.warehouses == 0 {
        return usage("--warehouses must be at least 1");
    }
    if !(a.duration > 0.0 && a.duration.is_finite()) {
        return usage("--duration must be a positive number of seconds");
    }
    if a.tpch_clients == 0 && a.tpcc_terminals == 0 {
        return usage("give at least one TPC-H client or one TPC-C terminal");
    }
    let variant = name_of(&a.variant);
    let sf = (a.workload == JobWorkload::Disjoint).then_some(a.sf);
    if a.durable.data_dir.is_none() {
        eprintln!(
            "maestro run: loading {} on {contexts} contexts …",
            match sf {
                Some(sf) => format!("TPC-H SF {sf} and TPC-C W={}", a.warehouses),
                None => format!(
                    "CH-benCHmark W={} (TPC-C on MVCC tables + supplier, nation, region)",
                    a.warehouses
                ),
            }
        );
    }
    let durable = match a.durable.validate(None) {
        Ok(d) => d,
        Err(code) => return code,
    };
    if durable.is_some() && a.workload != JobWorkload::Ch {
        return usage("--data-dir keeps CH-benCHmark's MVCC tables: it needs --workload ch");
    }
    let progress = |l: &str| eprintln!("  {l}");
    let loaded = match &durable {
        None => mixed::load_workload(
            a.workload.kind(a.olap_engine),
            a.sf,
            a.warehouses,
            contexts,
            a.seed,
            &progress,
        ),
        Some(options) => open_ch(options, &a),
    };
    let loaded = match loaded {
        Ok(l) => l,
        Err(e) => return failure(e),
    };
    let (workload, load_seconds) = (loaded.workload(), loaded.load_seconds());
    eprintln!(
        "running {} analytical client(s) ({}) and {} TPC-C terminal(s) on {} for {} s",
        a.tpch_clients,
        if sf.is_some() { "TPC-H" } else { "CH" },
        a.tpcc_terminals,
        variant,
        a.duration
    );
    let mut config = MixedConfig::new(
        &variant,
        contexts,
        a.tpch_clients,
        a.tpcc_terminals,
        Duration::from_secs_f64(a.duration),
        a.seed,
    );
    if let Some(options) = &durable
        && let Err(code) = options.configure_mixed(&mut config)
    {
        return code;
    }
    let outcome = match mixed::run_workload(workload, &config, &print_live) {
        Ok(o) => o,
        Err(e) => return failure(e),
    };
    let warehouses = match &loaded {
        LoadedWorkload::Ch { db, .. } => db.tpcc.warehouses(),
        LoadedWorkload::Disjoint(_) => a.warehouses,
    };
    let setup = RunSetup {
        sf,
        warehouses,
        contexts,
        seed: a.seed,
        load_seconds,
    };
    if a.json {
        let json = serde_json::json!({"experiment": "run", "setup": setup, "outcome": outcome});
        println!("{json}");
    } else {
        print!("{}", run_report::summary(&setup, &outcome));
    }
    if let LoadedWorkload::Ch { db, .. } = &loaded
        && let Some(log) = db.tpcc.txn.log_stats()
    {
        eprintln!("{log}");
    }
    match run_report::write(&a.out, &setup, &outcome) {
        Ok(files) => eprintln!("report: {}/{{{}}}", a.out.display(), files.join(",")),
        Err(e) => return failure(e),
    }
    if outcome.consistency_violations.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// CH-benCHmark from (or into) a data directory.
fn open_ch(options: &DurableOptions, a: &RunArgs) -> Result<LoadedWorkload, String> {
    let start = std::time::Instant::now();
    // `--warehouses` has a default here, so it only sizes a new directory.
    let db = tpcc_durable::open_ch(options, None, a.warehouses, a.seed, &|_| {})?;
    LoadedWorkload::ch(db, a.olap_engine.engine(), start.elapsed().as_secs_f64())
}

fn print_live(l: &LiveSample) {
    let workers = match (l.active_workers, l.hint) {
        (Some(a), Some(h)) => format!("   active workers {a}   hint {h}"),
        _ => String::new(),
    };
    eprintln!(
        "  {:>5.1} s   analytical {:>7.1} queries/min ({} done)   TPC-C {:>9.0} tpmC{workers}",
        l.elapsed_s, l.tpch_queries_per_minute, l.tpch_queries, l.tpmc
    );
}
