//! `maestro bench omp`: the SSDBM 2015 experiments — a database workload beside an
//! OpenMP application at three database priorities on stock libgomp and on ours
//! (§6.3), and the OpenMP overhead of ours against libgomp (§6.2).
//!
//! Repetitions ([`maestro_bench::reps`]): each repetition runs the whole
//! interference part with its runtimes and priorities in an order rotated by
//! the repetition, and the overhead part once more, its runtimes also in an
//! order rotated by the repetition; rows are medians with min–max.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use maestro_bench::{Report, ResultRow, reps};
use maestro_gomp_bench::interference::{
    DbPriority, InterferenceRow, InterferenceSetup, interference,
};
use maestro_gomp_bench::{
    AppRuntime, LibFreshness, OverheadSetup, cdylib_freshness, find_cdylib_dir, overhead,
};
use serde_json::json;

use crate::{CommonArgs, exit};

#[derive(Args)]
pub(crate) struct OmpArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// Comma-separated parts (default: both): interference, overhead.
    #[arg(long, value_delimiter = ',')]
    parts: Option<Vec<String>>,
    /// Seconds per interference run (default 5; 0.5 with --quick).
    #[arg(long)]
    duration: Option<f64>,
    /// Comma-separated application runtimes (default: all): libgomp, maestro-gomp,
    /// maestro-gomp-master-task.
    #[arg(long, value_delimiter = ',')]
    runtimes: Option<Vec<String>>,
    /// Comma-separated database priorities relative to OpenMP's (default: low, equal,
    /// high); `shares` puts the database and the application in workload classes of
    /// equal weight.
    #[arg(long, value_delimiter = ',')]
    db_priorities: Option<Vec<String>>,
    /// Incomplete aggregation jobs at most (the paper's 100).
    #[arg(long, default_value_t = 100)]
    jobs_in_flight: usize,
    /// Tuples per aggregation job.
    #[arg(long, default_value_t = 200_000)]
    agg_tuples: usize,
    /// Rows and columns of the application's square matrix.
    #[arg(long, default_value_t = 600)]
    matvec_size: usize,
    /// Application threads calling the product in a loop (the paper's 2).
    #[arg(long, default_value_t = 2)]
    app_threads: usize,
    /// Overhead: team size of every measured region (default: the contexts).
    #[arg(long)]
    threads: Option<usize>,
    /// Overhead: operations per measurement (was --reps before --reps meant
    /// repetitions).
    #[arg(long, default_value_t = 2000)]
    ops: usize,
    /// Deprecated spelling of --reps (runs per variant).
    #[arg(
        long = "runs",
        value_name = "REPS",
        hide = true,
        conflicts_with = "reps"
    )]
    old_runs: Option<usize>,
}

/// Square roots per aggregated value and per matrix element (guessed: enough
/// that both sides are CPU-bound rather than memory-bound, as in the paper).
const AGG_SQRTS: u32 = 4;
const MATVEC_SQRTS: u32 = 8;
/// Blocks of the aggregation's input (the paper's vector of vectors).
const AGG_BLOCKS: usize = 64;

/// The two parts of the experiment, in the order they run.
const PARTS: [&str; 2] = ["interference", "overhead"];

fn compiler() -> String {
    std::env::var("MAESTRO_OMP_CC").unwrap_or_else(|_| "gcc".into())
}

fn work_dir(part: &str) -> PathBuf {
    std::env::temp_dir().join(format!("maestro-bench-omp-{part}-{}", std::process::id()))
}

pub(crate) fn bench(args: OmpArgs) -> ExitCode {
    let parts = args
        .parts
        .clone()
        .unwrap_or_else(|| PARTS.iter().map(|p| p.to_string()).collect());
    if let Some(p) = parts.iter().find(|p| !PARTS.contains(&p.as_str())) {
        return exit::usage(format!("unknown part {p:?} ({})", PARTS.join(", ")));
    }
    let contexts = match crate::tpch::contexts(args.common.contexts) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let reps = match crate::flags::reps(
        crate::flags::renamed(args.common.reps, args.old_runs, "--runs", "--reps"),
        args.common.quick,
    ) {
        Ok(n) => n,
        Err(code) => {
            eprintln!("(bench omp: the operations per measurement are now --ops)");
            return code;
        }
    };
    let mut results = Vec::new();
    let mut params = serde_json::Map::new();
    // In this order, each at most once, whatever order --parts gave.
    for part in PARTS.into_iter().filter(|p| parts.iter().any(|q| q == p)) {
        let run = match part {
            "interference" => interference_part,
            "overhead" => overhead_part,
            other => panic!("part {other:?} is in PARTS without a runner"),
        };
        match run(&args, contexts, reps) {
            Ok((rows, p)) => {
                results.extend(rows);
                params.insert(part.into(), p);
            }
            Err(code) => return code,
        }
    }
    let report = Report {
        experiment: "omp".into(),
        contexts,
        params: serde_json::Value::Object(params),
        results,
        attachments: Vec::new(),
    };
    crate::emit(&report, "omp", args.common.json, args.common.out)
}

fn parse_list<T>(
    given: &Option<Vec<String>>,
    all: &[T],
    parse: impl Fn(&str) -> Result<T, String>,
) -> Result<Vec<T>, ExitCode>
where
    T: Copy,
{
    match given {
        None => Ok(all.to_vec()),
        Some(v) => v
            .iter()
            .map(|s| parse(s))
            .collect::<Result<Vec<_>, _>>()
            .map_err(exit::usage),
    }
}

/// `items` starting at `rep` (mod their count): this repetition's order.
fn rotated<T: Copy>(items: &[T], rep: usize) -> Vec<T> {
    reps::rotation(items.len(), rep).map(|k| items[k]).collect()
}

fn interference_part(
    args: &OmpArgs,
    contexts: usize,
    reps: usize,
) -> Result<(Vec<ResultRow>, serde_json::Value), ExitCode> {
    let runtimes = parse_list(&args.runtimes, &AppRuntime::ALL, AppRuntime::parse)?;
    let db_priorities = parse_list(&args.db_priorities, &DbPriority::ALL, DbPriority::parse)?;
    let secs = args
        .duration
        .unwrap_or(if args.common.quick { 0.5 } else { 5.0 });
    if !(secs.is_finite() && secs > 0.0 && secs <= 3600.0) {
        return Err(exit::usage("--duration must be in (0, 3600] seconds"));
    }
    if args.jobs_in_flight == 0 || args.agg_tuples == 0 || args.app_threads == 0 {
        return Err(exit::usage(
            "--jobs-in-flight, --agg-tuples and --app-threads must be at least 1",
        ));
    }
    if args.matvec_size == 0 || args.matvec_size > 20_000 {
        return Err(exit::usage("--matvec-size must be in 1..=20000"));
    }
    let (agg_tuples, matvec_size) = if args.common.quick {
        (args.agg_tuples.min(20_000), args.matvec_size.min(200))
    } else {
        (args.agg_tuples, args.matvec_size)
    };
    let mut setup = InterferenceSetup {
        cc: compiler(),
        work_dir: work_dir("interference"),
        duration: Duration::from_secs_f64(secs),
        jobs_in_flight_max: args.jobs_in_flight,
        agg_tuples,
        agg_blocks: AGG_BLOCKS,
        agg_sqrts: AGG_SQRTS,
        matvec_rows: matvec_size,
        matvec_cols: matvec_size,
        matvec_sqrts: MATVEC_SQRTS,
        app_threads: args.app_threads,
        runtimes,
        db_priorities,
        cpu_time: || {
            let t = maestro_bench::cpu::process_cpu_times();
            t.user + t.system
        },
    };
    let sched = match maestro_scheduler::Scheduler::with_preset("single-pool", contexts) {
        Ok(s) => Arc::new(s),
        Err(e) => return Err(exit::failure(format!("cannot start the scheduler: {e}"))),
    };
    let runs = setup.db_priorities.len() + setup.runtimes.len() * (1 + setup.db_priorities.len());
    eprintln!(
        "bench omp interference: {contexts} contexts, {reps} × {runs} runs of {secs:.1} s; database: \
         aggregations of {agg_tuples} tuples, at most {} in flight; application: {} threads, \
         {matvec_size}×{matvec_size} products",
        setup.jobs_in_flight_max, setup.app_threads
    );
    let (runtimes, priorities) = (setup.runtimes.clone(), setup.db_priorities.clone());
    let mut per_rep = Vec::new();
    for rep in 0..reps {
        setup.runtimes = rotated(&runtimes, rep);
        setup.db_priorities = rotated(&priorities, rep);
        eprintln!("  rep {}/{reps}", rep + 1);
        match interference(&setup, &sched, &|line| eprintln!("  {line}")) {
            Ok(rows) => per_rep.push(interference_rows(&rows)),
            Err(e) => {
                let _ = std::fs::remove_dir_all(&setup.work_dir);
                return Err(exit::failure(e));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&setup.work_dir);
    let params = json!({
        "duration_s": secs,
        "jobs_in_flight_max": setup.jobs_in_flight_max,
        "agg_tuples": agg_tuples,
        "agg_blocks": AGG_BLOCKS,
        "agg_sqrts": AGG_SQRTS,
        "matvec_size": matvec_size,
        "matvec_sqrts": MATVEC_SQRTS,
        "app_threads": setup.app_threads,
        "openmp_priority": maestro_scheduler::DEFAULT_PRIORITY,
        "scheduler": "single-pool",
        "reps": reps,
    });
    Ok((reps::aggregate(per_rep), params))
}

/// One result row per side of every run, with the ratio to that side running alone.
fn interference_rows(rows: &[InterferenceRow]) -> Vec<ResultRow> {
    let db_alone = |p: Option<DbPriority>| {
        rows.iter()
            .find(|r| r.runtime.is_none() && r.db_priority == p)
            .and_then(|r| r.db_per_s)
    };
    let app_alone = |rt: Option<AppRuntime>| {
        rows.iter()
            .find(|r| r.db_priority.is_none() && r.runtime == rt)
            .and_then(|r| r.app_per_s)
    };
    let mut out = Vec::new();
    for r in rows {
        let sides = [
            ("db_exec_per_s", r.db_per_s, db_alone(r.db_priority)),
            ("app_exec_per_s", r.app_per_s, app_alone(r.runtime)),
        ];
        for (metric, value, alone) in sides {
            let Some(value) = value else { continue };
            let mut extra = serde_json::Map::new();
            extra.insert("part".into(), json!("interference"));
            if let Some(p) = r.db_priority {
                extra.insert("db_priority".into(), json!(p.name()));
                extra.insert("db_level".into(), json!(p.level()));
            }
            if let Some(a) = alone.filter(|a| *a > 0.0)
                && !r.alone()
            {
                extra.insert("vs_alone".into(), json!(value / a));
            }
            extra.insert("cpu_utilization".into(), json!(r.cpu_utilization));
            out.push(ResultRow {
                case: r.case(),
                variant: r.runtime.map_or("database-only", AppRuntime::name).into(),
                metric: metric.into(),
                value,
                unit: "1/s".into(),
                higher_is_better: true,
                extra,
                ..Default::default()
            });
        }
    }
    out
}

/// Refuses a `libmaestro_gomp.so` older than the gomp sources (exit 2, naming
/// the rebuild command): `cargo build -p maestro-cli` does not rebuild it, and
/// a stale library measures old code without a sign (issue 12). A library
/// chosen with `MAESTRO_GOMP_LIB_DIR` only gets a warning: A/B runs point it
/// at older builds on purpose.
fn check_fresh(lib_dir: &std::path::Path) -> Result<(), ExitCode> {
    let lib = lib_dir.join("libmaestro_gomp.so");
    let freshness = cdylib_freshness(lib_dir);
    let problem = match &freshness {
        LibFreshness::Fresh => return Ok(()),
        LibFreshness::OlderThanSource(src) => format!(
            "{} is older than {} (stale: built before the last change to the OpenMP runtime)",
            lib.display(),
            src.display()
        ),
        LibFreshness::OlderThanBinary => {
            format!("{} is older than this binary (maybe stale)", lib.display())
        }
        LibFreshness::Unknown => {
            format!("cannot read the modification time of {}", lib.display())
        }
    };
    let fix = "rebuild it with `cargo build --release -p maestro-gomp`";
    if std::env::var_os("MAESTRO_GOMP_LIB_DIR").is_some() {
        eprintln!("WARNING: {problem}; using it anyway (MAESTRO_GOMP_LIB_DIR is set)");
        Ok(())
    } else if let LibFreshness::OlderThanSource(_) = freshness {
        Err(exit::usage(format!("{problem}; {fix}")))
    } else {
        eprintln!("WARNING: {problem}; {fix} if the OpenMP runtime changed");
        Ok(())
    }
}

fn overhead_part(
    args: &OmpArgs,
    contexts: usize,
    reps: usize,
) -> Result<(Vec<ResultRow>, serde_json::Value), ExitCode> {
    let threads = args.threads.unwrap_or(contexts);
    if threads == 0 || args.ops == 0 {
        return Err(exit::usage("--threads and --ops must be at least 1"));
    }
    let Some(lib_dir) = find_cdylib_dir() else {
        return Err(exit::usage(
            "libmaestro_gomp.so not found beside this binary; build it with \
             `cargo build --release -p maestro-gomp` or set MAESTRO_GOMP_LIB_DIR",
        ));
    };
    check_fresh(&lib_dir)?;
    let ops = if args.common.quick { 50 } else { args.ops };
    let mut setup = OverheadSetup {
        cc: compiler(),
        lib_dir,
        work_dir: work_dir("overhead"),
        threads,
        reps: ops,
        // One run per call: the repetitions are ours, so each gets its own row.
        runs: 1,
        // Our runtime's own scheduler gets the same contexts as `--contexts`.
        env: vec![("MAESTRO_OMP_CONTEXTS".into(), contexts.to_string())],
        runtimes: AppRuntime::ALL.to_vec(),
    };
    eprintln!(
        "bench omp overhead: {threads} threads per team, {ops} operations, {reps} repetition(s)"
    );
    let mut per_rep = Vec::new();
    for rep in 0..reps {
        setup.runtimes = rotated(&AppRuntime::ALL, rep);
        let rows = overhead(&setup);
        if rows.is_err() {
            let _ = std::fs::remove_dir_all(&setup.work_dir);
        }
        per_rep.push(overhead_rows(&rows.map_err(exit::failure)?));
    }
    let _ = std::fs::remove_dir_all(&setup.work_dir);
    Ok((
        reps::aggregate(per_rep),
        json!({"threads": threads, "ops": ops, "reps": reps}),
    ))
}

/// One row per (operation, runtime), with the ratio to stock libgomp.
fn overhead_rows(rows: &[maestro_gomp_bench::OverheadRow]) -> Vec<ResultRow> {
    let stock = |m: &str| {
        rows.iter()
            .find(|r| r.variant == "libgomp" && r.metric == m)
            .map(|r| r.micros)
    };
    rows.iter()
        .map(|r| {
            let mut extra = serde_json::Map::new();
            extra.insert("part".into(), json!("overhead"));
            if r.variant != "libgomp"
                && let Some(s) = stock(&r.metric)
                && s > 0.0
            {
                extra.insert("ratio_vs_libgomp".into(), json!(r.micros / s));
            }
            ResultRow {
                case: r.metric.clone(),
                variant: r.variant.to_string(),
                metric: "micros_per_op".into(),
                value: r.micros,
                unit: "us".into(),
                extra,
                ..Default::default()
            }
        })
        .collect()
}
