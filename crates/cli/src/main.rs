//! The `maestro` command.

mod ch;
mod exit;
mod flags;
mod omp;
mod output;
mod run;
mod serve;
mod sql;
mod tpcc;
mod tpcc_durable;
mod tpcc_sql;
mod tpch;
mod tpch_refresh;
mod tpch_refresh_delta;
mod variants;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use maestro_bench::scheduler::{self, Params};
use maestro_execution::Granularity;

use variants::{
    EngineVariant, GranularityParser, MixedVariant, SchedulerVariant, TpccVariant, names_or_all,
};

#[derive(Parser)]
#[command(
    name = "maestro",
    version,
    about = "Maestro: an HTAP engine built around one task scheduler"
)]
struct Cli {
    /// Without a command: `maestro run` with its defaults (the mixed HTAP main job).
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// The main job: TPC-H clients and TPC-C terminals together on one engine, with live
    /// progress, a summary and a report (the default command).
    Run(run::RunArgs),
    /// Run an experiment side by side and print a table (or JSON).
    Bench {
        #[command(subcommand)]
        experiment: Experiment,
    },
    /// TPC-C: run terminals against W warehouses, check consistency, export the tables.
    Tpcc {
        #[command(subcommand)]
        command: tpcc::TpccCommand,
    },
    /// CH-benCHmark: TPC-C terminals and analytical queries on the same MVCC data.
    Ch {
        #[command(subcommand)]
        command: ch::ChCommand,
    },
    /// TPC-H: run a query, run concurrent query streams, check the answers.
    Tpch {
        #[command(subcommand)]
        command: tpch::TpchCommand,
    },
    /// Run one SQL statement (SELECT or EXPLAIN SELECT) over the TPC-H tables.
    Sql(sql::SqlArgs),
    /// Serve SQL over the PostgreSQL wire protocol (psql, psycopg, tokio-postgres, …).
    Serve(serve::ServeArgs),
}

#[derive(Subcommand)]
enum Experiment {
    /// Scheduler overhead and blocking: Maestro presets against rayon.
    Scheduler(BenchArgs),
    /// B+-tree indexes: optimistic lock coupling against lock coupling and a locked BTreeMap.
    Olc(OlcArgs),
    /// The 22 TPC-H queries one after another (median of N), optionally beside DuckDB's times.
    TpchSingle(tpch::SingleArgs),
    /// N concurrent TPC-H queries per scheduler variant: time until the last returns, tasks,
    /// CPU, context switches, peak workers (ADMS 2013 figures 4–5).
    Analytical(AnalyticalArgs),
    /// Per TPC-H query: time under a background load ÷ time alone, for static, hint and
    /// adaptive, with a TPC-H and a CPU-hog background (DaMoN 2016 figures 6–8).
    Granularity(GranularityArgs),
    /// TPC-H clients from a list beside TPC-C terminals, per engine variant: queries/min and
    /// tpmC, CPU split, context switches (ADMS 2013 figures 7–8).
    Mixed(MixedArgs),
    /// Workers, hint and queues over time under the mixed load, per scheduler variant
    /// (ADMS 2013 figure 6).
    Timeline(MixedArgs),
    /// OpenMP: a database workload beside an OpenMP application at three database
    /// priorities, on stock libgomp and on ours (SSDBM 2015 §6.3); and the overhead of
    /// libmaestro_gomp.so against libgomp (fork/join, barrier, parallel for, tasks).
    Omp(omp::OmpArgs),
    /// TPC-C throughput as terminals grow, with three lock-table latch flavours: blocking,
    /// spinning, load-controlled (the spinning-and-blocking paper).
    Latches(LatchesArgs),
    /// TPC-C at a fixed rate beside TPC-H clients ramped to 4 × contexts, with and without
    /// workload classes: OLTP p50/p99, tpmC, queries/min (issue 13).
    Workload(WorkloadArgs),
}

#[derive(Args)]
struct WorkloadArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// Comma-separated variants: no-classes, classes (default both).
    #[arg(long, value_delimiter = ',')]
    variants: Option<Vec<String>>,
    /// Comma-separated TPC-H client counts (default 0, c, 2c, 4c for c contexts).
    #[arg(long, value_delimiter = ',')]
    olap_clients: Option<Vec<usize>>,
    /// TPC-C transactions per second in total (default 1000).
    #[arg(long)]
    tpcc_rate: Option<f64>,
    /// Seconds per run (default 8; quick 1.5).
    #[arg(long)]
    duration: Option<f64>,
    /// TPC-H scale factor (default 0.1; quick 0.02).
    #[arg(long)]
    sf: Option<f64>,
}

#[derive(Args)]
struct LatchesArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// Comma-separated terminal counts (default 1, 2, 4, … up to 8 × contexts).
    #[arg(long, value_delimiter = ',')]
    terminals: Option<Vec<usize>>,
    /// Comma-separated flavours (default all): blocking, spinning, load-controlled.
    #[arg(long, value_delimiter = ',')]
    flavours: Option<Vec<String>>,
    /// TPC-C execution: a scheduler preset (one task per transaction) or receivers
    /// (default single-pool).
    #[arg(long, value_enum)]
    variant: Option<TpccVariant>,
    /// Deprecated spelling of --variant.
    #[arg(
        long = "mode",
        value_enum,
        value_name = "VARIANT",
        hide = true,
        conflicts_with = "variant"
    )]
    old_mode: Option<TpccVariant>,
    /// Seconds per run (default 10; quick 1).
    #[arg(long)]
    duration: Option<f64>,
    /// TPC-C warehouses (default 2).
    #[arg(long)]
    warehouses: Option<u16>,
}

#[derive(Args)]
struct MixedArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// Comma-separated variants (default: the engine variants; single-classes on request).
    #[arg(long, value_enum, value_delimiter = ',')]
    variants: Option<Vec<MixedVariant>>,
    /// Comma-separated TPC-H client counts (timeline uses the largest).
    #[arg(long, value_delimiter = ',')]
    tpch_clients: Option<Vec<usize>>,
    /// TPC-C terminals (default 2 × contexts).
    #[arg(long)]
    tpcc_terminals: Option<usize>,
    /// Seconds per run (default 10; quick 1.5).
    #[arg(long)]
    duration: Option<f64>,
    /// TPC-H scale factor (default 1; quick 0.05).
    #[arg(long)]
    sf: Option<f64>,
    /// TPC-C warehouses (default 2).
    #[arg(long)]
    warehouses: Option<u16>,
    /// Disjoint TPC-H + TPC-C (the papers' shape) or CH-benCHmark on shared
    /// MVCC data (the analytical clients run the CH queries; --sf unused).
    #[arg(long, value_enum, default_value = "disjoint")]
    workload: run::JobWorkload,
    /// What runs CH-benCHmark's analytical queries (--workload ch).
    #[arg(long, value_enum, default_value = "plans")]
    olap_engine: run::EngineArg,
    /// single-classes: the transactions' class weight beside the queries'
    /// weight 1 (default 2).
    #[arg(long)]
    oltp_weight: Option<u32>,
    /// single-classes: the queries' class weight beside the transactions'
    /// (default 1).
    #[arg(long)]
    olap_weight: Option<u32>,
}

#[derive(Args)]
struct GranularityArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// Comma-separated granularity policies (default static,hint,adaptive).
    #[arg(long, value_delimiter = ',', value_parser = GranularityParser)]
    granularity: Option<Vec<Granularity>>,
    /// Deprecated spelling of --granularity.
    #[arg(long = "policies", value_name = "GRANULARITY", value_delimiter = ',', value_parser = GranularityParser,
          hide = true, conflicts_with = "granularity")]
    old_policies: Option<Vec<Granularity>>,
    /// TPC-H scale factor (default 1; quick 0.05).
    #[arg(long)]
    sf: Option<f64>,
}

#[derive(Args)]
struct AnalyticalArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// Comma-separated engine variants (default: all).
    #[arg(long, value_enum, value_delimiter = ',')]
    variants: Option<Vec<EngineVariant>>,
    /// Comma-separated numbers of concurrent queries (default 1,4,16,64,256; quick 1,16,64).
    #[arg(long, value_delimiter = ',')]
    clients: Option<Vec<usize>>,
    /// TPC-H scale factor (default 1; quick 0.1).
    #[arg(long)]
    sf: Option<f64>,
}

#[derive(Args)]
struct OlcArgs {
    /// Comma-separated thread counts.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4")]
    threads: Vec<usize>,
    /// Small sizes that finish in seconds.
    #[arg(long)]
    quick: bool,
    /// Repetitions of every variant, in an order rotated per repetition; rows
    /// report the median and min–max (default 3; 1 with --quick).
    #[arg(long)]
    reps: Option<usize>,
    /// Print one JSON object on stdout (progress stays on stderr).
    #[arg(long)]
    json: bool,
    /// Also write the JSON and the table into this directory.
    #[arg(long)]
    out: Option<PathBuf>,
}

/// What every side-by-side experiment takes.
#[derive(Args)]
pub(crate) struct CommonArgs {
    /// Hardware contexts to use (default: detected).
    #[arg(long)]
    pub(crate) contexts: Option<usize>,
    /// Small sizes that finish in seconds (CI uses this).
    #[arg(long)]
    pub(crate) quick: bool,
    /// Repetitions of every variant, in an order rotated per repetition; rows
    /// report the median and min–max (default 3; 1 with --quick).
    #[arg(long)]
    pub(crate) reps: Option<usize>,
    /// Print one JSON object on stdout (progress stays on stderr).
    #[arg(long)]
    pub(crate) json: bool,
    /// Also write the JSON, the table, a Markdown report and its charts into this directory.
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
}

impl CommonArgs {
    /// `--reps`, or its default for `--quick` or not.
    pub(crate) fn reps(&self) -> Result<usize, ExitCode> {
        flags::reps(self.reps, self.quick)
    }
}

#[derive(Args)]
struct BenchArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// Comma-separated variants (default: all).
    #[arg(long, value_enum, value_delimiter = ',')]
    variants: Option<Vec<SchedulerVariant>>,
    /// Comma-separated cases (default: all): fork_join, tiny_tasks, blocking_mix.
    #[arg(long, value_delimiter = ',')]
    cases: Option<Vec<String>>,
    /// Deprecated spelling of --reps.
    #[arg(
        long = "repetitions",
        value_name = "REPS",
        hide = true,
        conflicts_with = "reps"
    )]
    old_repetitions: Option<usize>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli
        .command
        .unwrap_or_else(|| Command::Run(run::RunArgs::default()))
    {
        Command::Run(args) => run::run(args),
        Command::Bench {
            experiment: Experiment::Scheduler(args),
        } => bench_scheduler(args),
        Command::Bench {
            experiment: Experiment::Olc(args),
        } => bench_olc(args),
        Command::Bench {
            experiment: Experiment::TpchSingle(args),
        } => tpch::bench_single(args),
        Command::Bench {
            experiment: Experiment::Analytical(args),
        } => bench_analytical(args),
        Command::Bench {
            experiment: Experiment::Granularity(args),
        } => bench_granularity(args),
        Command::Bench {
            experiment: Experiment::Mixed(args),
        } => bench_mixed(args, "mixed"),
        Command::Bench {
            experiment: Experiment::Timeline(args),
        } => bench_mixed(args, "timeline"),
        Command::Bench {
            experiment: Experiment::Omp(args),
        } => omp::bench(args),
        Command::Bench {
            experiment: Experiment::Latches(args),
        } => bench_latches(args),
        Command::Bench {
            experiment: Experiment::Workload(args),
        } => bench_workload(args),
        Command::Tpch { command } => tpch::run(command),
        Command::Sql(args) => sql::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Tpcc { command } => tpcc::run(command),
        Command::Ch { command } => ch::run(command),
    }
}

fn bench_olc(args: OlcArgs) -> ExitCode {
    let mut params = if args.quick {
        maestro_bench::olc::OlcParams::quick()
    } else {
        maestro_bench::olc::OlcParams::full()
    };
    params.reps = match flags::reps(args.reps, args.quick) {
        Ok(n) => n,
        Err(code) => return code,
    };
    eprintln!(
        "bench olc: threads {:?}, {} repetition(s)",
        args.threads, params.reps
    );
    match maestro_bench::olc::run(&args.threads, &params, |line| eprintln!("  {line}")) {
        Ok(report) => emit(&report, "olc", args.json, args.out),
        Err(e) => exit::usage(e),
    }
}

/// Prints a report (table or JSON) and, with `out`, writes it there with its
/// Markdown report and attachments.
pub(crate) fn emit(
    report: &maestro_bench::Report,
    name: &str,
    json: bool,
    out: Option<PathBuf>,
) -> ExitCode {
    let text = serde_json::to_string(report).expect("report serializes");
    let mut files = report.attachments.clone();
    files.push((format!("{name}.md"), report.markdown()));
    output::emit(&text, &report.table(), name, json, out, &files)
}

fn bench_scheduler(args: BenchArgs) -> ExitCode {
    let contexts = match tpch::contexts(args.common.contexts) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let variants = names_or_all(args.variants);
    let mut params = if args.common.quick {
        Params::quick()
    } else {
        Params::full()
    };
    if let Some(c) = args.cases {
        params.cases = c;
    }
    params.reps = match flags::reps(
        flags::renamed(
            args.common.reps,
            args.old_repetitions,
            "--repetitions",
            "--reps",
        ),
        args.common.quick,
    ) {
        Ok(n) => n,
        Err(code) => return code,
    };
    eprintln!(
        "bench scheduler: {contexts} contexts, variants {}, {} repetition(s)",
        variants.join(","),
        params.reps
    );
    let report = match scheduler::run(contexts, &variants, &params, |line| eprintln!("  {line}")) {
        Ok(r) => r,
        Err(e) => {
            return exit::usage(e);
        }
    };
    emit(&report, "scheduler", args.common.json, args.common.out)
}

fn bench_analytical(args: AnalyticalArgs) -> ExitCode {
    use maestro_bench::analytical::{self, AnalyticalParams};
    let contexts = match tpch::contexts(args.common.contexts) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let mut params = if args.common.quick {
        AnalyticalParams::quick()
    } else {
        AnalyticalParams::full()
    };
    if args.variants.is_some() {
        params.variants = names_or_all(args.variants);
    }
    params.reps = match args.common.reps() {
        Ok(n) => n,
        Err(code) => return code,
    };
    if let Some(c) = args.clients {
        params.clients = c;
    }
    if let Some(sf) = args.sf {
        match tpch::scale_factor(sf) {
            Ok(sf) => params.sf = sf,
            Err(code) => return code,
        }
    }
    eprintln!(
        "bench analytical: {contexts} contexts, SF {}, clients {:?}, variants {}, {} repetition(s)",
        params.sf,
        params.clients,
        params.variants.join(","),
        params.reps
    );
    match analytical::run(contexts, &params, &|line| eprintln!("  {line}")) {
        Ok(report) => emit(&report, "analytical", args.common.json, args.common.out),
        Err(e) => exit::usage(e),
    }
}

fn bench_granularity(args: GranularityArgs) -> ExitCode {
    use maestro_bench::granularity::{self, GranularityParams};
    let contexts = match tpch::contexts(args.common.contexts) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let mut params = if args.common.quick {
        GranularityParams::quick(contexts)
    } else {
        GranularityParams::full(contexts)
    };
    if let Some(p) = flags::renamed(
        args.granularity,
        args.old_policies,
        "--policies",
        "--granularity",
    ) {
        params.policies = p.iter().map(ToString::to_string).collect();
    }
    params.reps = match args.common.reps() {
        Ok(n) => n,
        Err(code) => return code,
    };
    if let Some(sf) = args.sf {
        match tpch::scale_factor(sf) {
            Ok(sf) => params.sf = sf,
            Err(code) => return code,
        }
    }
    eprintln!(
        "bench granularity: {contexts} contexts, SF {}, granularity {}, {} background threads, \
         {} repetition(s)",
        params.sf,
        params.policies.join(","),
        params.background_threads,
        params.reps
    );
    match granularity::run(contexts, &params, &|line| eprintln!("  {line}")) {
        Ok(report) => emit(&report, "granularity", args.common.json, args.common.out),
        Err(e) => exit::usage(e),
    }
}

fn bench_mixed(args: MixedArgs, experiment: &str) -> ExitCode {
    use maestro_bench::mixed_bench::{self, MixedParams};
    let contexts = match tpch::contexts(args.common.contexts) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let mut p = if args.common.quick {
        MixedParams::quick(contexts)
    } else {
        MixedParams::full(contexts)
    };
    if args.variants.is_some() {
        p.variants = names_or_all(args.variants);
    }
    p.reps = match args.common.reps() {
        Ok(n) => n,
        Err(code) => return code,
    };
    if let Some(c) = args.tpch_clients {
        p.tpch_clients = c;
    }
    if let Some(t) = args.tpcc_terminals {
        p.tpcc_terminals = t;
    }
    if let Some(w) = args.warehouses {
        p.warehouses = w;
    }
    match flags::duration(args.duration) {
        Ok(Some(d)) => p.duration = d,
        Ok(None) => {}
        Err(code) => return code,
    }
    if let Some(sf) = args.sf {
        match tpch::scale_factor(sf) {
            Ok(sf) => p.sf = sf,
            Err(code) => return code,
        }
    }
    p.workload = args.workload.kind(args.olap_engine);
    if let Some(w) = args.oltp_weight {
        p.oltp_weight = w;
    }
    if let Some(w) = args.olap_weight {
        p.olap_weight = w;
    }
    eprintln!(
        "bench {experiment}: {contexts} contexts, {} workload, SF {}, W={}, analytical clients {:?}, {} terminals, {:.1} s per run, variants {}, {} repetition(s), single-classes weights {}:{}",
        p.workload,
        p.sf,
        p.warehouses,
        p.tpch_clients,
        p.tpcc_terminals,
        p.duration.as_secs_f64(),
        p.variants.join(","),
        p.reps,
        p.oltp_weight,
        p.olap_weight
    );
    let progress = |line: &str| eprintln!("  {line}");
    let report = if experiment == "mixed" {
        mixed_bench::mixed(contexts, &p, &progress)
    } else {
        mixed_bench::timeline(contexts, &p, &progress)
    };
    match report {
        Ok(report) => emit(&report, experiment, args.common.json, args.common.out),
        Err(e) => exit::usage(e),
    }
}

fn bench_workload(args: WorkloadArgs) -> ExitCode {
    use maestro_bench::workload::{self, WorkloadParams};
    let contexts = match tpch::contexts(args.common.contexts) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let mut p = if args.common.quick {
        WorkloadParams::quick(contexts)
    } else {
        WorkloadParams::full(contexts)
    };
    if let Some(v) = args.variants {
        p.variants = v;
    }
    p.reps = match args.common.reps() {
        Ok(n) => n,
        Err(code) => return code,
    };
    if let Some(c) = args.olap_clients {
        p.olap_clients = c;
    }
    if let Some(r) = args.tpcc_rate {
        p.tpcc_rate = r;
    }
    match flags::duration(args.duration) {
        Ok(Some(d)) => p.duration = d,
        Ok(None) => {}
        Err(code) => return code,
    }
    if let Some(sf) = args.sf {
        match tpch::scale_factor(sf) {
            Ok(sf) => p.sf = sf,
            Err(code) => return code,
        }
    }
    eprintln!(
        "bench workload: {contexts} contexts, SF {}, W={}, OLAP clients {:?}, {} terminals at {} tx/s, {:.1} s per run, variants {}, {} repetition(s)",
        p.sf,
        p.warehouses,
        p.olap_clients,
        p.tpcc_terminals,
        p.tpcc_rate,
        p.duration.as_secs_f64(),
        p.variants.join(","),
        p.reps
    );
    let progress = |line: &str| eprintln!("  {line}");
    match workload::workload(contexts, &p, &progress) {
        Ok(report) => emit(&report, "workload", args.common.json, args.common.out),
        Err(e) => exit::usage(e),
    }
}

fn bench_latches(args: LatchesArgs) -> ExitCode {
    use exit::usage;
    use maestro_bench::latches::{self, LatchesParams};
    let contexts = match tpch::contexts(args.common.contexts) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let mut p = if args.common.quick {
        LatchesParams::quick(contexts)
    } else {
        LatchesParams::full(contexts)
    };
    if let Some(t) = args.terminals {
        p.terminals = t;
    }
    if let Some(f) = args.flavours {
        match f.iter().map(|s| s.parse()).collect::<Result<Vec<_>, _>>() {
            Ok(v) => p.flavours = v,
            Err(e) => return usage(format!("--flavours: {e}")),
        }
    }
    if let Some(v) = flags::renamed(args.variant, args.old_mode, "--mode", "--variant") {
        match variants::name_of(&v).parse() {
            Ok(mode) => p.mode = mode,
            Err(e) => return usage(format!("--variant: {e}")),
        }
    }
    p.reps = match args.common.reps() {
        Ok(n) => n,
        Err(code) => return code,
    };
    if let Some(w) = args.warehouses {
        p.warehouses = w;
    }
    match flags::duration(args.duration) {
        Ok(Some(d)) => p.duration = d,
        Ok(None) => {}
        Err(code) => return code,
    }
    eprintln!(
        "bench latches: {contexts} contexts, W={}, terminals {:?}, {:.1} s per run, {} repetition(s)",
        p.warehouses,
        p.terminals,
        p.duration.as_secs_f64(),
        p.reps
    );
    match latches::run(contexts, &p, &|line| eprintln!("  {line}")) {
        Ok(report) => emit(&report, "latches", args.common.json, args.common.out),
        Err(e) => usage(e),
    }
}
