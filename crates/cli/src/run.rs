//! `maestro run` (and `maestro` with no arguments): the mixed HTAP main job.

use crate::exit::{failure, usage};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use maestro_bench::mixed::{self, LiveSample, MixedConfig};
use maestro_bench::run_report::{self, RunSetup};

use crate::variants::{EngineVariant, name_of};

#[derive(Args, Clone)]
pub struct RunArgs {
    /// TPC-H scale factor (0.01 to 10).
    #[arg(long, default_value_t = 0.1)]
    sf: f64,
    /// TPC-C warehouses.
    #[arg(long, default_value_t = 2)]
    warehouses: u16,
    /// Concurrent TPC-H clients (each runs its stream's query order back to back).
    #[arg(long, default_value_t = 2)]
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
    eprintln!(
        "maestro run: loading TPC-H SF {} and TPC-C W={} on {contexts} contexts …",
        a.sf, a.warehouses
    );
    let dbs = match mixed::load_both(a.sf, a.warehouses, contexts, &|l| eprintln!("  {l}")) {
        Ok(d) => d,
        Err(e) => return usage(e),
    };
    eprintln!(
        "running {} TPC-H client(s) and {} TPC-C terminal(s) on {} for {} s",
        a.tpch_clients, a.tpcc_terminals, variant, a.duration
    );
    let config = MixedConfig::new(
        &variant,
        contexts,
        a.tpch_clients,
        a.tpcc_terminals,
        Duration::from_secs_f64(a.duration),
        a.seed,
    );
    let outcome = match mixed::run_mixed(&dbs, &config, &print_live) {
        Ok(o) => o,
        Err(e) => return failure(e),
    };
    let setup = RunSetup {
        sf: a.sf,
        warehouses: a.warehouses,
        contexts,
        seed: a.seed,
        load_seconds: dbs.load_seconds,
    };
    if a.json {
        let json = serde_json::json!({"experiment": "run", "setup": setup, "outcome": outcome});
        println!("{json}");
    } else {
        print!("{}", run_report::summary(&setup, &outcome));
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

fn print_live(l: &LiveSample) {
    let workers = match (l.active_workers, l.hint) {
        (Some(a), Some(h)) => format!("   active workers {a}   hint {h}"),
        _ => String::new(),
    };
    eprintln!(
        "  {:>5.1} s   TPC-H {:>7.1} queries/min ({} done)   TPC-C {:>9.0} tpmC{workers}",
        l.elapsed_s, l.tpch_queries_per_minute, l.tpch_queries, l.tpmc
    );
}
