//! `maestro tpch …` and `maestro bench tpch-single`.

use crate::exit::{failure, usage};
use crate::variants::{GranularityParser, Preset, name_of};
use crate::{flags, output};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Args, Subcommand};
use maestro_bench::tpch::{
    self, ParamPlan, QueryTime, SingleParams, SingleReport, ThroughputParams,
};
use maestro_execution::{ExecError, Executor, Granularity};
use maestro_scheduler::{CancelReason, CancelToken, StatementMemory};
use maestro_sql::store::RefreshReaders;
use maestro_tpch::queries::answers::{
    ANSWER_SCALE_FACTORS, answer_sets, answers_dir_at, official_sf1, refreshed_answers_dir,
};
use maestro_tpch::queries::{
    OutputFormat, QUERY_COUNT, QueryParams, check, parse_query_number, run_profiled,
    run_profiled_cancellable,
};

#[derive(Subcommand)]
pub enum TpchCommand {
    /// Run one query and print its answer.
    Query(QueryArgs),
    /// N concurrent query streams: queries per hour, latency percentiles, tasks created.
    Throughput(ThroughputArgs),
    /// Write the parameter sets of N query streams to a file, for `throughput
    /// --params` and DuckDB's script to run the same work.
    Params(ParamsArgs),
    /// Run every query on every committed parameter set (SF 0.01, or --sf 0.1)
    /// and compare with the independent engine's answers.
    Check(CheckArgs),
    /// Run TPC-H's refresh functions (RF1 inserts, RF2 deletes) as MVCC
    /// transactions, or write their refresh sets for another engine.
    Refresh(crate::tpch_refresh::RefreshArgs),
}

#[derive(Args)]
pub struct QueryArgs {
    /// Query number, 1 to 22.
    query: String,
    /// Scale factor (0.01 to 10).
    #[arg(long, default_value_t = 1.0)]
    sf: f64,
    /// A substitution parameter, e.g. `--param DATE=1995-01-01` (repeatable);
    /// the others keep their validation values (or random ones with --seed).
    #[arg(long = "param", value_name = "NAME=VALUE")]
    params: Vec<String>,
    /// Draw the parameters at random by the spec's rules from this seed.
    #[arg(long)]
    seed: Option<u64>,
    /// Granularity policy.
    #[arg(long, default_value = "hint", value_parser = GranularityParser)]
    granularity: Granularity,
    /// table, csv or json.
    #[arg(long, default_value = "table")]
    format: OutputFormat,
    /// Hardware contexts to use (default: detected).
    #[arg(long)]
    contexts: Option<usize>,
    /// Print each operator's tasks and time to stderr.
    #[arg(long)]
    profile: bool,
    /// Statement timeout in seconds: the query stops at its operators' next
    /// morsel once this much time has passed since it started, and the
    /// command fails saying so.
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<f64>,
    /// Statement memory limit in MiB: the query stops once its operators
    /// have charged more (hash tables, intermediate vectors, sort runs; see
    /// `--profile` for what a query charges), and the command fails saying so.
    #[arg(long, value_name = "MIB")]
    memory_limit_mb: Option<f64>,
    /// Run the query in this workload class (README, "Workload classes"):
    /// its admission control, timeout and memory limits apply (the tighter
    /// of them and --timeout/--memory-limit-mb).
    #[arg(long = "class", value_name = "SPEC", value_parser = crate::flags::class_spec)]
    class: Option<maestro_scheduler::ClassSpec>,
}

#[derive(Args)]
pub struct ThroughputArgs {
    /// Scale factor (0.01 to 10).
    #[arg(long, default_value_t = 1.0)]
    sf: f64,
    /// Comma-separated stream counts; one run per count and granularity.
    #[arg(long, value_delimiter = ',', default_value = "1")]
    streams: Vec<usize>,
    /// Run for this many seconds: every stream runs its 22 queries once, then
    /// continues its order until the time is up, finishing the query it is in
    /// (default: each stream runs its 22 queries once).
    #[arg(long)]
    duration: Option<f64>,
    /// Comma-separated granularity policies.
    #[arg(long, value_delimiter = ',', default_value = "hint", value_parser = GranularityParser)]
    granularity: Vec<Granularity>,
    /// Seed of the streams' random parameters.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Scheduler variant (preset).
    #[arg(long, value_enum, default_value = "single-hints")]
    variant: Preset,
    /// Deprecated spelling of --variant.
    #[arg(
        long = "preset",
        value_enum,
        value_name = "VARIANT",
        hide = true,
        conflicts_with = "variant"
    )]
    old_preset: Option<Preset>,
    /// Repetitions of every (streams, granularity) run, granularities in an order
    /// rotated per repetition; queries/h is the median, with min–max (default 3).
    #[arg(long)]
    reps: Option<usize>,
    /// Run the parameter sets of this file (`maestro tpch params`) instead of
    /// drawing them, under the fixed-window rule: streams issue queries until
    /// --duration (required) is up and only queries completed by then count.
    #[arg(long, value_name = "FILE", conflicts_with = "seed")]
    params: Option<PathBuf>,
    /// Hardware contexts to use (default: detected).
    #[arg(long)]
    contexts: Option<usize>,
    /// Run the spec's refresh stream beside the query streams: one RF1/RF2
    /// pair per stream as MVCC transactions; each query reads the snapshot
    /// current when it starts. The run ends when every stream has.
    #[arg(long)]
    refresh: bool,
    /// Print one JSON object on stdout (progress stays on stderr).
    #[arg(long)]
    json: bool,
    /// Also write the JSON and the table into this directory.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Run every query in this workload class (README, "Workload classes"):
    /// admission control (rejections counted as `rejected`), the class's
    /// timeout and memory limits (stopped queries counted as `stopped`).
    #[arg(long = "class", value_name = "SPEC", value_parser = crate::flags::class_spec)]
    class: Option<maestro_scheduler::ClassSpec>,
    /// Where the streams read and the refresh stream writes: the SQL
    /// store's main + delta (`delta`, `maestro serve`'s storage: the
    /// refreshes are written into the deltas) or the copy-on-write table
    /// versions of `maestro_tpch::SharedDatabase` (`cow`, the baseline the
    /// store replaced; plans only).
    #[arg(long, value_enum, default_value_t = crate::tpch_refresh::Storage::Delta)]
    storage: crate::tpch_refresh::Storage,
    /// What the streams run: the hand-written plans (`plans`; on the store
    /// each version is read as one plain column table, which a refresh
    /// builds before it commits, and its delta is merged after it) or each
    /// query's SQL text (`sql`, through the deltas; a due merge after each
    /// refresh function; no `--class` form).
    #[arg(long, value_enum, default_value_t = QueryForm::Plans)]
    queries: QueryForm,
}

/// `tpch throughput --queries`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum QueryForm {
    /// The hand-written physical plans (`maestro_tpch::queries`).
    Plans,
    /// The spec's SQL text through the SQL engine.
    Sql,
}

#[derive(Args)]
pub struct ParamsArgs {
    /// Scale factor the parameters are for (Q11's FRACTION depends on it).
    #[arg(long, default_value_t = 1.0)]
    sf: f64,
    /// Seed of the draws (the same draws `throughput --seed` makes).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Number of streams (each in the spec's order for its stream).
    #[arg(long, default_value_t = 16)]
    streams: usize,
    /// Rounds of 22 queries per stream (a run that exhausts them starts over).
    #[arg(long, default_value_t = 20)]
    rounds: usize,
    /// The file to write.
    #[arg(long)]
    out: PathBuf,
}

#[derive(Args)]
pub struct CheckArgs {
    /// Instead: load SF 1 and compare the 22 validation answers with dbgen's
    /// official SF 1 answers (rounded to cents, as published).
    #[arg(long)]
    official_sf1: bool,
    /// Scale factor of the committed answers to check against: 0.01 or 0.1.
    #[arg(long, default_value_t = 0.01, conflicts_with = "official_sf1")]
    sf: f64,
    /// Comma-separated granularity policies to run every set under.
    #[arg(long, value_delimiter = ',', default_value = "static,hint", value_parser = GranularityParser)]
    granularity: Vec<Granularity>,
    /// First run this many refresh pairs (RF1 then RF2 of sets 1..=N, as
    /// transactions into the SQL store's deltas), then check the queries on
    /// a snapshot of the store against DuckDB's answers after the same
    /// refreshes (`answers/sf<SF>-refresh<N>/`).
    #[arg(long, value_name = "N", conflicts_with = "official_sf1")]
    refresh_pairs: Option<u32>,
}

#[derive(Args)]
pub struct SingleArgs {
    /// Scale factor (0.01 to 10).
    #[arg(long, default_value_t = 1.0)]
    sf: f64,
    /// Granularity policy.
    #[arg(long, default_value = "hint", value_parser = GranularityParser)]
    granularity: Granularity,
    /// Runs per query; the median counts, with min–max (default 3).
    #[arg(long)]
    reps: Option<usize>,
    /// Deprecated spelling of --reps.
    #[arg(
        long = "repetitions",
        value_name = "REPS",
        hide = true,
        conflicts_with = "reps"
    )]
    old_repetitions: Option<usize>,
    /// Comma-separated query numbers (default: all 22).
    #[arg(long, value_delimiter = ',')]
    queries: Option<Vec<String>>,
    /// Scheduler variant (preset).
    #[arg(long, value_enum, default_value = "single-hints")]
    variant: Preset,
    /// Deprecated spelling of --variant.
    #[arg(
        long = "preset",
        value_enum,
        value_name = "VARIANT",
        hide = true,
        conflicts_with = "variant"
    )]
    old_preset: Option<Preset>,
    /// Hardware contexts to use (default: detected).
    #[arg(long)]
    contexts: Option<usize>,
    /// DuckDB's times (the JSON `scripts/duckdb_tpch.py` prints), shown side by side.
    #[arg(long)]
    duckdb: Option<PathBuf>,
    /// Also run each query's SQL text on the SQL store's main + delta
    /// (`maestro serve`'s storage; variant `sql`), the plans and the SQL
    /// alternating within each repetition.
    #[arg(long)]
    sql: bool,
    /// Print one JSON object on stdout (progress stays on stderr).
    #[arg(long)]
    json: bool,
    /// Also write the JSON and the table into this directory.
    #[arg(long)]
    out: Option<PathBuf>,
}

pub(crate) fn contexts(given: Option<usize>) -> Result<usize, ExitCode> {
    let c = given.unwrap_or_else(maestro_scheduler::detected_contexts);
    if c == 0 || c > maestro_scheduler::WORKERS_MAX_LIMIT {
        return Err(usage(format!(
            "--contexts must be in 1..={}",
            maestro_scheduler::WORKERS_MAX_LIMIT
        )));
    }
    Ok(c)
}

pub(crate) fn scale_factor(sf: f64) -> Result<f64, ExitCode> {
    maestro_tpch::validate_scale_factor(sf).map_err(usage)?;
    Ok(sf)
}

pub fn run(command: TpchCommand) -> ExitCode {
    let result = match command {
        TpchCommand::Query(a) => query(a),
        TpchCommand::Throughput(a) => throughput(a),
        TpchCommand::Params(a) => write_params(a),
        TpchCommand::Check(a) => check_answers(a),
        TpchCommand::Refresh(a) => crate::tpch_refresh::refresh(a),
    };
    result.unwrap_or_else(|code| code)
}

fn query(a: QueryArgs) -> Result<ExitCode, ExitCode> {
    let q = parse_query_number(&a.query).map_err(usage)?;
    let sf = scale_factor(a.sf)?;
    let mut params = match a.seed {
        Some(seed) => QueryParams::random(q, sf, seed),
        None => QueryParams::validation(q, sf),
    }
    .map_err(usage)?;
    for p in &a.params {
        let Some((name, value)) = p.split_once('=') else {
            return Err(usage(format!("--param {p:?}: expected NAME=VALUE")));
        };
        params.set(name.trim(), value).map_err(usage)?;
    }
    params.check().map_err(usage)?;
    let timeout = match a.timeout {
        None => None,
        Some(t) if t.is_finite() && t >= 0.0 => Some(Duration::from_secs_f64(t)),
        Some(t) => {
            return Err(usage(format!(
                "--timeout {t}: expected a number of seconds, 0 or more"
            )));
        }
    };
    let memory_limit = match a.memory_limit_mb {
        None => None,
        Some(mb) if mb.is_finite() && mb > 0.0 => Some((mb * 1048576.0) as u64),
        Some(mb) => {
            return Err(usage(format!(
                "--memory-limit-mb {mb}: expected a positive number of MiB"
            )));
        }
    };
    let scheduler =
        tpch::start_scheduler("single-hints", contexts(a.contexts)?).map_err(failure)?;
    eprintln!("loading TPC-H SF {sf} …");
    let (db, load) = tpch::load(&scheduler, sf, &|_| {}).map_err(failure)?;
    eprintln!("loaded in {:.2} s; Q{q} {params}", load.as_secs_f64());
    let class = match &a.class {
        Some(spec) => {
            Some(crate::flags::define_classes(&scheduler, std::slice::from_ref(spec))?[0])
        }
        None => None,
    };
    let exec = Executor::new(Arc::clone(&scheduler), a.granularity);
    let start = Instant::now();
    let (cancel, _admitted) = match class {
        None => {
            let memory = StatementMemory::new(memory_limit, None);
            (CancelToken::for_statement(timeout, Some(memory)), None)
        }
        Some(c) => {
            let admitted = scheduler.admit(c).map_err(failure)?;
            maestro_scheduler::set_thread_class(c);
            let token = scheduler.statement_token_within(c, memory_limit, timeout);
            (token, Some(admitted))
        }
    };
    let class_name = a.class.as_ref().map(|s| s.name.clone());
    let (result, profile) =
        run_profiled_cancellable(&exec, &db, &params, cancel).map_err(|e| match e {
            ExecError::Cancelled(c) => {
                let limit = match (c.reason, &class_name) {
                    (CancelReason::TimedOut, Some(name)) => {
                        format!("--timeout or workload class {name}'s timeout")
                    }
                    (CancelReason::TimedOut, None) => {
                        format!("--timeout {}", a.timeout.unwrap_or_default())
                    }
                    (
                        CancelReason::StatementMemoryLimit | CancelReason::ClassMemoryLimit,
                        Some(name),
                    ) => format!("--memory-limit-mb or workload class {name}'s memory limits"),
                    (CancelReason::StatementMemoryLimit, None) => {
                        format!(
                            "--memory-limit-mb {}",
                            a.memory_limit_mb.unwrap_or_default()
                        )
                    }
                    _ => "cancelled".to_string(),
                };
                failure(format!(
                    "Q{q}: {e} after {:.4} s ({limit})",
                    start.elapsed().as_secs_f64(),
                ))
            }
            e => failure(e),
        })?;
    let elapsed = start.elapsed();
    print!("{}", result.format(a.format));
    if a.format == OutputFormat::Json {
        println!();
    }
    eprintln!(
        "Q{q}: {} row(s) in {:.4} s, {} operator task(s), {:.1} MiB charged, granularity {}",
        result.len(),
        elapsed.as_secs_f64(),
        profile.tasks,
        profile.memory_charged as f64 / 1048576.0,
        a.granularity
    );
    if a.profile {
        eprintln!("{}", profile.summary());
    }
    Ok(ExitCode::SUCCESS)
}

fn throughput(a: ThroughputArgs) -> Result<ExitCode, ExitCode> {
    if a.streams.contains(&0) {
        return Err(usage("--streams must be at least 1"));
    }
    let storage = match (a.storage, a.queries) {
        (crate::tpch_refresh::Storage::Cow, QueryForm::Plans) => tpch::Storage::Cow,
        (crate::tpch_refresh::Storage::Cow, QueryForm::Sql) => {
            return Err(usage(
                "--queries sql runs on the SQL store: --storage cow has the plans only",
            ));
        }
        (crate::tpch_refresh::Storage::Delta, QueryForm::Sql) => tpch::Storage::Delta,
        (crate::tpch_refresh::Storage::Delta, QueryForm::Plans) => tpch::Storage::DeltaPlans,
    };
    if storage == tpch::Storage::Delta && a.class.is_some() {
        return Err(usage(
            "--queries sql runs SQL text, which --class cannot admit, time out or stop (its \
             storage is the store's); drop one of them",
        ));
    }
    let duration = crate::flags::duration(a.duration)?;
    let variant = flags::renamed(Some(a.variant), a.old_preset, "--preset", "--variant")
        .expect("--variant has a default");
    let plan = match &a.params {
        None => None,
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| usage(format!("--params {}: {e}", path.display())))?;
            let plan = ParamPlan::from_json(&text)
                .map_err(|e| usage(format!("--params {}: {e}", path.display())))?;
            if duration.is_none() {
                return Err(usage(
                    "--params runs a fixed window: give --duration SECONDS",
                ));
            }
            let most = a.streams.iter().copied().max().unwrap_or(1);
            plan.fits(a.sf, most)
                .map_err(|e| usage(format!("--params {}: {e}", path.display())))?;
            Some(Arc::new(plan))
        }
    };
    let params = ThroughputParams {
        plan,
        sf: scale_factor(a.sf)?,
        contexts: contexts(a.contexts)?,
        preset: name_of(&variant),
        streams: a.streams,
        granularities: a.granularity,
        duration,
        seed: a.seed,
        reps: flags::reps(a.reps, false)?,
        refresh: a.refresh,
        class: a.class,
        storage,
    };
    eprintln!(
        "tpch throughput: SF {}, storage {storage}, streams {:?}, granularity {:?}, {} \
         repetition(s)",
        params.sf,
        params.streams,
        params
            .granularities
            .iter()
            .map(|g| g.to_string())
            .collect::<Vec<_>>(),
        params.reps
    );
    let report = tpch::throughput(&params, &|line| eprintln!("  {line}")).map_err(failure)?;
    let json = serde_json::to_string(&report).expect("report serializes");
    Ok(output::emit(
        &json,
        &report.table(),
        "tpch-throughput",
        a.json,
        a.out,
        &[],
    ))
}

fn write_params(a: ParamsArgs) -> Result<ExitCode, ExitCode> {
    let sf = scale_factor(a.sf)?;
    if a.streams == 0 || a.rounds == 0 {
        return Err(usage("--streams and --rounds must be at least 1"));
    }
    let plan = ParamPlan::generate(sf, a.seed, a.streams, a.rounds);
    let text = serde_json::to_string(&plan.to_json()).expect("plan serializes");
    std::fs::write(&a.out, text + "\n")
        .map_err(|e| failure(format!("{}: {e}", a.out.display())))?;
    eprintln!(
        "wrote {}: SF {sf}, seed {}, {} stream(s) × {} round(s) of 22 queries",
        a.out.display(),
        a.seed,
        a.streams,
        a.rounds
    );
    Ok(ExitCode::SUCCESS)
}

fn check_answers(a: CheckArgs) -> Result<ExitCode, ExitCode> {
    if a.official_sf1 {
        return check_official_sf1(a);
    }
    let sf = a.sf;
    let dir = match a.refresh_pairs {
        None => answers_dir_at(sf),
        Some(pairs) => refreshed_answers_dir(sf, pairs),
    }
    .ok_or_else(|| {
        usage(format!(
            "--sf {sf}{}: no committed answers; they exist at SF {} (after refreshes: see \
             crates/tpch/answers/sf*-refresh*)",
            a.refresh_pairs
                .map_or(String::new(), |n| format!(" --refresh-pairs {n}")),
            ANSWER_SCALE_FACTORS.map(|s| s.to_string()).join(" and ")
        ))
    })?;
    let sets = answer_sets(&dir).map_err(failure)?;
    let scheduler = tpch::start_scheduler("single-hints", maestro_scheduler::detected_contexts())
        .map_err(failure)?;
    let (mut db, _) = tpch::load(&scheduler, sf, &|_| {}).map_err(failure)?;
    if let Some(pairs) = a.refresh_pairs {
        // The store the server and `tpch throughput --storage delta` use:
        // the refreshes go into its deltas, and the plans read each table
        // of the snapshot as one plain column table.
        let store = maestro_sql::Store::new();
        store.put_tpch(&db).map_err(failure)?;
        for n in 1..=pairs {
            let rows = maestro_tpch::rf1_rows(sf, n).map_err(failure)?;
            let r1 = store
                .tpch_rf1(&rows, RefreshReaders::Plans)
                .map_err(failure)?;
            let keys = maestro_tpch::rf2_keys(sf, n).map_err(failure)?;
            let r2 = store
                .tpch_rf2(&keys, RefreshReaders::Plans)
                .map_err(failure)?;
            for r in [r1, r2] {
                eprintln!(
                    "{} set {n}: {} orders, {} line items, committed into the deltas after {:.1} ms",
                    r.function,
                    r.orders_changed,
                    r.lineitem_changed,
                    r.total.as_secs_f64() * 1e3
                );
            }
        }
        db = scheduler
            .install(|| store.tpch_database(sf))
            .map_err(failure)?;
    }
    let (mut passed, mut failed) = (0, 0);
    for g in &a.granularity {
        let exec = Executor::new(scheduler.clone(), *g).with_min_rows_per_task(1024);
        for set in &sets {
            let outcome = set
                .query_params(sf)
                .map_err(|e| e.to_string())
                .and_then(|p| run_profiled(&exec, &db, &p).map_err(|e| e.to_string()))
                .and_then(|(r, _)| {
                    let expected = set.answer(&dir).map_err(|e| e.to_string())?;
                    check::compare(&r, &expected)
                        .map(|_| r.len())
                        .map_err(|e| e.to_string())
                });
            match outcome {
                Ok(rows) => {
                    passed += 1;
                    println!(
                        "ok   Q{:<2} {:<20} {g:<10} {rows} row(s)",
                        set.query, set.set
                    );
                }
                Err(e) => {
                    failed += 1;
                    println!("FAIL Q{:<2} {:<20} {g:<10} {e}", set.query, set.set);
                }
            }
        }
    }
    println!(
        "{passed} passed, {failed} failed (answers: {})",
        dir.display()
    );
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn check_official_sf1(a: CheckArgs) -> Result<ExitCode, ExitCode> {
    let scheduler = tpch::start_scheduler("single-hints", maestro_scheduler::detected_contexts())
        .map_err(failure)?;
    eprintln!("loading TPC-H SF 1 …");
    let (db, _) = tpch::load(&scheduler, 1.0, &|_| {}).map_err(failure)?;
    let (mut passed, mut failed) = (0, 0);
    for g in &a.granularity {
        let exec = Executor::new(scheduler.clone(), *g);
        for q in 1..=QUERY_COUNT {
            let official = official_sf1(q).expect("tpchgen ships all 22 SF 1 answers");
            let outcome = QueryParams::validation(q, 1.0)
                .map_err(|e| e.to_string())
                .and_then(|p| run_profiled(&exec, &db, &p).map_err(|e| e.to_string()))
                .and_then(|(r, _)| {
                    check::compare_official(q, &r, official)
                        .map(|_| r.len())
                        .map_err(|e| e.to_string())
                });
            match outcome {
                Ok(rows) => {
                    passed += 1;
                    println!("ok   Q{q:<2} official SF 1   {g:<10} {rows} row(s)");
                }
                Err(e) => {
                    failed += 1;
                    println!("FAIL Q{q:<2} official SF 1   {g:<10} {e}");
                }
            }
        }
    }
    println!(
        "{passed} passed, {failed} failed (dbgen's official SF 1 answers, via the tpchgen crate)"
    );
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

pub fn bench_single(a: SingleArgs) -> ExitCode {
    bench_single_inner(a).unwrap_or_else(|code| code)
}

fn bench_single_inner(a: SingleArgs) -> Result<ExitCode, ExitCode> {
    let reps = flags::reps(
        flags::renamed(a.reps, a.old_repetitions, "--repetitions", "--reps"),
        false,
    )?;
    let variant = flags::renamed(Some(a.variant), a.old_preset, "--preset", "--variant")
        .expect("--variant has a default");
    let queries = match a.queries {
        None => (1..=QUERY_COUNT).collect(),
        Some(list) => list
            .iter()
            .map(|q| parse_query_number(q))
            .collect::<Result<Vec<u8>, _>>()
            .map_err(usage)?,
    };
    let peer: Vec<QueryTime> = match &a.duckdb {
        None => Vec::new(),
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| usage(format!("{}: {e}", path.display())))?;
            let theirs: SingleReport = serde_json::from_str(&text)
                .map_err(|e| usage(format!("{}: not a tpch-single JSON: {e}", path.display())))?;
            if theirs.sf != a.sf {
                return Err(usage(format!(
                    "{} is at SF {}, this run at SF {}",
                    path.display(),
                    theirs.sf,
                    a.sf
                )));
            }
            theirs.results
        }
    };
    let params = SingleParams {
        sf: scale_factor(a.sf)?,
        contexts: contexts(a.contexts)?,
        preset: name_of(&variant),
        granularity: a.granularity,
        reps,
        queries,
        sql: a.sql,
    };
    eprintln!(
        "bench tpch-single: SF {}, {} contexts, granularity {}, median of {}",
        params.sf, params.contexts, params.granularity, params.reps
    );
    let report = tpch::single(&params, peer, &|line| eprintln!("  {line}")).map_err(failure)?;
    let json = serde_json::to_string(&report).expect("report serializes");
    Ok(output::emit(
        &json,
        &report.table(),
        "tpch-single",
        a.json,
        a.out,
        &[],
    ))
}
