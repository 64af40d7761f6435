//! TPC-H experiments: `tpch-single` (the 22 queries one after another, the
//! median of N runs each with its min–max — before the shared harness, the best
//! of N — optionally beside DuckDB's times from `scripts/duckdb_tpch.py`) and
//! `tpch-throughput` (N concurrent query streams, each running the 22 queries
//! in the spec's per-stream order with its own random parameters; per stream
//! count, the granularities run `reps` times in a rotated order and each run
//! reports the median repetition's numbers with the queries/h min–max).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use maestro_execution::QueryProfile;
use maestro_execution::{Backend, Executor, Granularity};
use maestro_scheduler::{Scheduler, SchedulerConfig};
use maestro_tpch::Database;
use maestro_tpch::queries::{
    QUERY_COUNT, QueryParams, run_profiled, run_profiled_cancellable, stream_order,
};
use serde::{Deserialize, Serialize};

use crate::class_run::{ClassRun, Ran};
use crate::reps::{self, Spread};

/// Loads the database at `sf` on `scheduler`, reporting progress.
pub fn load(
    scheduler: &Scheduler,
    sf: f64,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<(Database, Duration), String> {
    let start = Instant::now();
    let db = maestro_tpch::load(scheduler, sf, &|p| progress(&p.to_string()))
        .map_err(|e| e.to_string())?;
    Ok((db, start.elapsed()))
}

/// Starts a scheduler of preset `preset` on `contexts` contexts.
pub fn start_scheduler(preset: &str, contexts: usize) -> Result<Arc<Scheduler>, String> {
    let config = SchedulerConfig::preset(preset)
        .map_err(|e| e.to_string())?
        .with_contexts(contexts);
    Scheduler::new(config)
        .map(Arc::new)
        .map_err(|e| e.to_string())
}

/// The analytical execution variants: the scheduler presets, and the papers'
/// thread-pool baselines on the same plans (`maestro_execution::Backend`).
pub const ENGINE_VARIANTS: [&str; 5] = [
    "multiple-pools",
    "single-pool-nosys",
    "single-pool",
    "single-hints",
    "rayon",
];

/// A scheduler and an executor for `variant` on `contexts` contexts, with the
/// granularity the variant is meant for: `hint` on `single-hints` (the only
/// preset with a live hint), `static` otherwise. `multiple-pools` runs plans on
/// a fixed executor pool and operators on a separate fixed dispatcher pool,
/// both of `contexts` threads; `rayon` runs both on one rayon pool. The
/// scheduler is still started (preset `single-pool`) for the rest of the
/// engine (e.g. TPC-C transactions as tasks).
pub fn engine(variant: &str, contexts: usize) -> Result<(Arc<Scheduler>, Executor), String> {
    let pool = |name: &'static str| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(contexts)
            .thread_name(move |i| format!("{name}-{i}"))
            .build()
            .map(Arc::new)
            .map_err(|e| e.to_string())
    };
    let (preset, granularity, backend) = match variant {
        "multiple-pools" => (
            "single-pool",
            Granularity::Static,
            Backend::Pools {
                plans: pool("executor")?,
                operators: pool("dispatcher")?,
            },
        ),
        "rayon" => {
            let shared = pool("rayon")?;
            (
                "single-pool",
                Granularity::Static,
                Backend::Pools {
                    plans: shared.clone(),
                    operators: shared,
                },
            )
        }
        "single-hints" => ("single-hints", Granularity::Hint, Backend::Maestro),
        "single-pool" | "single-pool-nosys" => (variant, Granularity::Static, Backend::Maestro),
        other => {
            return Err(format!(
                "unknown variant {other:?}: expected one of {}",
                ENGINE_VARIANTS.join(", ")
            ));
        }
    };
    let scheduler = start_scheduler(preset, contexts)?;
    let exec = Executor::new(scheduler.clone(), granularity).with_backend(backend);
    Ok((scheduler, exec))
}

/// One query's time in `tpch-single`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct QueryTime {
    /// The scheduler preset (`single-hints`) or the peer (`duckdb`).
    pub variant: String,
    pub query: u8,
    pub metric: String,
    /// The median over the repetitions.
    pub value: f64,
    /// `min`, `max`, `reps`, `samples` (absent in a peer's JSON that has none).
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<Spread>,
}

/// What `maestro bench tpch-single --json` prints.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SingleReport {
    pub experiment: String,
    pub sf: f64,
    pub contexts: usize,
    pub granularity: String,
    /// Runs per query (`repetitions` in older JSON and DuckDB's script).
    #[serde(alias = "repetitions")]
    pub reps: usize,
    pub load_seconds: f64,
    /// Median seconds per query and variant over `reps` runs.
    pub results: Vec<QueryTime>,
    /// Geometric mean of each variant's query times, over the queries every
    /// variant has.
    pub geomean_seconds: BTreeMap<String, f64>,
}

/// Parameters of `tpch-single`.
#[derive(Clone, Debug)]
pub struct SingleParams {
    pub sf: f64,
    pub contexts: usize,
    pub preset: String,
    pub granularity: Granularity,
    pub reps: usize,
    pub queries: Vec<u8>,
    /// Also run each query's SQL text on the SQL store's main + delta
    /// (variant `sql`), beside the hand-written plans in rotated order.
    pub sql: bool,
}

/// One way `tpch-single` runs a query.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SingleVariant {
    /// The hand-written plan on the loaded tables (named by the preset).
    Plans,
    /// The spec's SQL text on the SQL store (`maestro serve`'s storage):
    /// parsed, planned and run in a read-only transaction per run.
    Sql,
}

/// Runs `tpch-single`; `peer` adds another engine's times (DuckDB's JSON).
pub fn single(
    params: &SingleParams,
    peer: Vec<QueryTime>,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<SingleReport, String> {
    let scheduler = start_scheduler(&params.preset, params.contexts)?;
    let (db, load_time) = load(&scheduler, params.sf, progress)?;
    progress(&format!(
        "loaded SF {} in {:.2} s",
        params.sf,
        load_time.as_secs_f64()
    ));
    let store = if params.sql {
        Some(crate::tpch_delta::load_store(&db)?)
    } else {
        None
    };
    let variants: Vec<SingleVariant> = match &store {
        Some(_) => vec![SingleVariant::Plans, SingleVariant::Sql],
        None => vec![SingleVariant::Plans],
    };
    let name = |v: SingleVariant| match v {
        SingleVariant::Plans => params.preset.clone(),
        SingleVariant::Sql => "sql".to_string(),
    };
    let exec = Executor::new(scheduler, params.granularity);
    let mut results = Vec::new();
    for &q in &params.queries {
        let qp = QueryParams::validation(q, params.sf).map_err(|e| e.to_string())?;
        // The harness rotates the variants' order per repetition.
        let per_rep = reps::repeat(&variants, params.reps, |&variant, _| {
            let start = Instant::now();
            match (variant, &store) {
                (SingleVariant::Plans, _) => {
                    let (r, _) = run_profiled(&exec, &db, &qp).map_err(|e| format!("Q{q}: {e}"))?;
                    std::hint::black_box(r);
                }
                (SingleVariant::Sql, Some(store)) => {
                    let profile = crate::tpch_delta::query(&exec, store, &qp)?;
                    std::hint::black_box(profile);
                }
                (SingleVariant::Sql, None) => unreachable!("the sql variant runs with a store"),
            }
            Ok(vec![crate::ResultRow {
                case: format!("Q{q}"),
                variant: name(variant),
                metric: "seconds".into(),
                value: start.elapsed().as_secs_f64(),
                ..Default::default()
            }])
        })?;
        for row in reps::aggregate(per_rep) {
            let spread = row.spread.expect("aggregated rows have a spread");
            progress(&format!(
                "Q{q} {}: {:.4} s median {}",
                row.variant,
                row.value,
                spread.range(4)
            ));
            results.push(QueryTime {
                variant: row.variant,
                query: q,
                metric: "seconds".into(),
                value: row.value,
                spread: Some(spread),
            });
        }
    }
    results.extend(peer);
    let geomean_seconds = geomeans(&results);
    Ok(SingleReport {
        experiment: "tpch-single".into(),
        sf: params.sf,
        contexts: params.contexts,
        granularity: params.granularity.to_string(),
        reps: params.reps,
        load_seconds: load_time.as_secs_f64(),
        results,
        geomean_seconds,
    })
}

/// Geometric mean per variant over the queries all variants have.
fn geomeans(results: &[QueryTime]) -> BTreeMap<String, f64> {
    let variants: Vec<&str> = {
        let mut v: Vec<&str> = results.iter().map(|r| r.variant.as_str()).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let common: Vec<u8> = (1..=QUERY_COUNT)
        .filter(|q| {
            variants
                .iter()
                .all(|v| results.iter().any(|r| r.variant == *v && r.query == *q))
        })
        .collect();
    variants
        .iter()
        .map(|v| {
            let logs: Vec<f64> = results
                .iter()
                .filter(|r| r.variant == *v && common.contains(&r.query) && r.value > 0.0)
                .map(|r| r.value.ln())
                .collect();
            let mean = if logs.is_empty() {
                f64::NAN
            } else {
                (logs.iter().sum::<f64>() / logs.len() as f64).exp()
            };
            (v.to_string(), mean)
        })
        .collect()
}

impl SingleReport {
    /// One line per query: each variant's seconds, and ours ÷ each peer.
    pub fn table(&self) -> String {
        let mut variants: Vec<&str> = Vec::new();
        for r in &self.results {
            if !variants.contains(&r.variant.as_str()) {
                variants.push(&r.variant);
            }
        }
        // Every earlier variant ÷ every later one: ours first, then peers.
        let pairs: Vec<(&str, &str)> = variants
            .iter()
            .enumerate()
            .flat_map(|(i, a)| variants[i + 1..].iter().map(move |b| (*a, *b)))
            .collect();
        let ours = variants.first().copied().unwrap_or("");
        let pair_name = |a: &str, b: &str| {
            if a == ours {
                format!("÷ {b}")
            } else {
                format!("{a} ÷ {b}")
            }
        };
        let mut out = format!(
            "tpch-single: SF {}, {} contexts, granularity {}, median of {} [min–max] (load {:.2} s)\n",
            self.sf, self.contexts, self.granularity, self.reps, self.load_seconds
        );
        let mut header = format!("{:>5}", "query");
        for v in &variants {
            let _ = write!(header, " {:>14} {:>17}", format!("{v} s"), "[min–max]");
        }
        for (a, b) in &pairs {
            let _ = write!(header, " {:>12}", pair_name(a, b));
        }
        out.push_str(&header);
        out.push('\n');
        let find = |v: &str, q: u8| self.results.iter().find(|r| r.variant == v && r.query == q);
        let time = |v: &str, q: u8| find(v, q).map(|r| r.value);
        for q in 1..=QUERY_COUNT {
            if variants.iter().all(|v| time(v, q).is_none()) {
                continue;
            }
            let mut line = format!("{:>5}", format!("Q{q}"));
            for v in &variants {
                let range = find(v, q)
                    .and_then(|r| r.spread.as_ref())
                    .map_or_else(String::new, |s| s.range(4));
                let _ = match time(v, q) {
                    Some(t) => write!(line, " {t:>14.4} {range:>17}"),
                    None => write!(line, " {:>14} {:>17}", "-", ""),
                };
            }
            for (a, b) in &pairs {
                let _ = match (time(a, q), time(b, q)) {
                    (Some(a), Some(b)) if b > 0.0 => write!(line, " {:>12.2}", a / b),
                    _ => write!(line, " {:>12}", "-"),
                };
            }
            out.push_str(&line);
            out.push('\n');
        }
        let mut line = format!("{:>5}", "geo");
        for v in &variants {
            let _ = write!(line, " {:>14.4} {:>17}", self.geomean_seconds[*v], "");
        }
        for (a, b) in &pairs {
            let _ = write!(
                line,
                " {:>12.2}",
                self.geomean_seconds[*a] / self.geomean_seconds[*b]
            );
        }
        out.push_str(&line);
        out.push('\n');
        out
    }
}

/// Parameters of `tpch-throughput`.
#[derive(Clone, Debug)]
pub struct ThroughputParams {
    pub sf: f64,
    pub contexts: usize,
    pub preset: String,
    /// One run per (streams, granularity) pair.
    pub streams: Vec<usize>,
    pub granularities: Vec<Granularity>,
    /// Keep streams running for this long: each runs its 22 queries at least
    /// once, then continues its order (round after round) until the deadline,
    /// finishing the query it is in; `None`: each stream runs its 22 once.
    pub duration: Option<Duration>,
    /// Seed of the parameter draws (stream `s`, round `r` draw from it).
    pub seed: u64,
    /// Repetitions of every (streams, granularity) run; the median counts.
    pub reps: usize,
    /// Instead of drawing: the parameter sets of a [`ParamPlan`] (the same file
    /// DuckDB's script reads). With a plan the stop rule is the fixed window:
    /// streams issue queries until `duration` is up (no minimum round) and only
    /// queries completed within the window count; `duration` is required.
    pub plan: Option<Arc<ParamPlan>>,
    /// Run the spec's refresh stream beside the query streams: one RF1/RF2
    /// pair per query stream (clause 5.3.4), as MVCC transactions; every query
    /// then reads the snapshot current when it starts.
    pub refresh: bool,
    /// Run every query in this workload class (`--class`): admission
    /// control, the class's timeout and limits, its share of the workers.
    pub class: Option<maestro_scheduler::ClassSpec>,
    /// What the streams query and the refresh stream writes.
    pub storage: Storage,
}

/// `--storage`: where a throughput run's tables live.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Storage {
    /// The hand-written plans on copy-on-write table versions
    /// (`SharedDatabase`); the refresh stream builds new versions.
    Cow,
    /// Each query's SQL text on the SQL store's main + delta; the refresh
    /// stream writes into the deltas (`tpch_delta`).
    Delta,
    /// The hand-written plans on the SQL store's tables (each version read
    /// as a plain column table: `maestro_sql::Store::tpch_database`); the
    /// refresh stream writes into the deltas, builds the plain tables
    /// before each commit and merges after it (`tpch_delta`), since the
    /// plans read no delta.
    DeltaPlans,
}

impl std::str::FromStr for Storage {
    type Err = String;
    fn from_str(s: &str) -> Result<Storage, String> {
        match s {
            "cow" => Ok(Storage::Cow),
            "delta" => Ok(Storage::Delta),
            "delta-plans" => Ok(Storage::DeltaPlans),
            _ => Err(format!(
                "unknown storage {s:?}: expected cow, delta or delta-plans"
            )),
        }
    }
}

impl std::fmt::Display for Storage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Storage::Cow => "cow",
            Storage::Delta => "delta",
            Storage::DeltaPlans => "delta-plans",
        })
    }
}

/// What the refresh stream of one run did.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RefreshStream {
    /// RF1/RF2 pairs committed (set numbers continue across runs: a set is
    /// applied once per loaded database).
    pub pairs: usize,
    pub first_set: u32,
    /// Seconds per RF1 and per RF2, transaction start to commit (the rows
    /// were generated before the run).
    pub rf1_s: Vec<f64>,
    pub rf2_s: Vec<f64>,
    /// Start of the run to the last commit.
    pub elapsed_s: f64,
}

/// Where a run's queries read: the loaded tables, or snapshots of the
/// versioned tables the refresh stream changes.
enum Source<'a> {
    Loaded(&'a Database),
    Shared(&'a maestro_tpch::SharedDatabase),
    /// `--storage delta`: SQL text on main + delta.
    Delta(&'a maestro_sql::Store),
    /// `--storage delta --queries plans`: the plans on the store's tables.
    StorePlans {
        store: &'a maestro_sql::Store,
        scheduler: &'a Scheduler,
        sf: f64,
    },
}

impl Source<'_> {
    fn tables(&self) -> Result<std::borrow::Cow<'_, Database>, String> {
        match self {
            Source::Loaded(db) => Ok(std::borrow::Cow::Borrowed(db)),
            Source::Shared(s) => s
                .snapshot()
                .map(std::borrow::Cow::Owned)
                .map_err(|e| e.to_string()),
            Source::Delta(_) => Err("SQL text runs on the store, not on tables".into()),
            // On the scheduler: a version with a delta is merged once, its
            // columns as fork-join tasks.
            Source::StorePlans {
                store,
                scheduler,
                sf,
            } => scheduler
                .install(|| store.tpch_database(*sf))
                .map(std::borrow::Cow::Owned)
                .map_err(|e| e.to_string()),
        }
    }
}

/// Latency percentiles of a set of query executions.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Latency {
    pub count: usize,
    pub p50_s: f64,
    pub p99_s: f64,
    pub max_s: f64,
}

impl Latency {
    pub(crate) fn of(mut seconds: Vec<f64>) -> Latency {
        seconds.sort_by(f64::total_cmp);
        // Nearest-rank percentile.
        let rank = |p: f64| {
            let i = ((p * seconds.len() as f64).ceil() as usize).clamp(1, seconds.len());
            seconds[i - 1]
        };
        Latency {
            count: seconds.len(),
            p50_s: rank(0.50),
            p99_s: rank(0.99),
            max_s: *seconds.last().expect("at least one execution"),
        }
    }
}

/// One (streams, granularity) run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ThroughputRun {
    pub streams: usize,
    pub granularity: String,
    pub elapsed_s: f64,
    pub queries: usize,
    pub queries_per_hour: f64,
    pub latency: Latency,
    /// Per query number.
    pub per_query: BTreeMap<u8, Latency>,
    /// Tasks the operators created (sum over the queries' profiles).
    pub operator_tasks: u64,
    /// Tasks the scheduler created meanwhile (operators' plus their splits).
    pub scheduler_tasks: u64,
    /// `queries_per_hour` is the median over the repetitions; this is its
    /// `min`, `max`, `reps` and `samples`. The other numbers are the
    /// repetition closest to that median.
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<Spread>,
    /// With a [`ParamPlan`]: the window in seconds. `queries`, the latencies and
    /// `queries_per_hour` (= queries · 3600 / window) count only the queries
    /// completed within it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_s: Option<f64>,
    /// With a [`ParamPlan`]: queries that were running at the deadline and
    /// completed after it (not counted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub late: Option<usize>,
    /// With `--refresh`: the refresh stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh: Option<RefreshStream>,
    /// With `--class`: queries its admission control rejected (retryable,
    /// not run, not in `queries`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rejected: Option<usize>,
    /// With `--class`: queries its timeout or memory limits stopped (not in
    /// `queries`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<usize>,
}

/// What `maestro tpch throughput --json` prints.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ThroughputReport {
    pub experiment: String,
    pub sf: f64,
    pub contexts: usize,
    pub preset: String,
    pub seed: u64,
    pub load_seconds: f64,
    /// `cow` or `delta` (reports written before `--storage` have none).
    #[serde(default)]
    pub storage: Option<String>,
    pub runs: Vec<ThroughputRun>,
}

/// Runs `tpch-throughput`: loads once, then each (streams, granularity) run.
pub fn throughput(
    params: &ThroughputParams,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<ThroughputReport, String> {
    if params.streams.contains(&0) {
        return Err("--streams must be at least 1".into());
    }
    if let Some(plan) = &params.plan {
        plan.fits(params.sf, params.streams.iter().copied().max().unwrap_or(1))?;
        if params.duration.is_none() {
            return Err("a parameter plan runs a fixed window: give --duration".into());
        }
    }
    if params.storage == Storage::Delta && params.class.is_some() {
        // (`DeltaPlans` runs the plans, which a class can stop.)
        return Err(
            "--class runs the hand-written plans under a class; it has no SQL-text (--queries \
             sql) form"
                .into(),
        );
    }
    let scheduler = start_scheduler(&params.preset, params.contexts)?;
    let (db, load_time) = load(&scheduler, params.sf, progress)?;
    progress(&format!(
        "loaded SF {} in {:.2} s",
        params.sf,
        load_time.as_secs_f64()
    ));
    let shared = if params.refresh && params.storage == Storage::Cow {
        Some(maestro_tpch::SharedDatabase::new(db.clone()).map_err(|e| e.to_string())?)
    } else {
        None
    };
    let store = match params.storage {
        Storage::Delta | Storage::DeltaPlans => Some(crate::tpch_delta::load_store(&db)?),
        Storage::Cow => None,
    };
    let source = match (&shared, &store) {
        (_, Some(store)) if params.storage == Storage::DeltaPlans => Source::StorePlans {
            store,
            scheduler: &scheduler,
            sf: params.sf,
        },
        (_, Some(store)) => Source::Delta(store),
        (Some(s), None) => Source::Shared(s),
        (None, None) => Source::Loaded(&db),
    };
    let next_set = std::sync::atomic::AtomicU32::new(1);
    let mut runs = Vec::new();
    for &streams in &params.streams {
        // Per granularity, its runs in repetition order.
        let mut by_granularity: Vec<Vec<ThroughputRun>> =
            vec![Vec::new(); params.granularities.len()];
        let indices: Vec<usize> = (0..params.granularities.len()).collect();
        reps::repeat(&indices, params.reps, |&k, rep| {
            let g = params.granularities[k];
            let run = throughput_run(&scheduler, &source, &next_set, params, streams, g, progress)?;
            progress(&format!(
                "{streams} stream(s), {g}, rep {}/{}: {:.0} queries/h, p50 {:.3} s, p99 {:.3} s, {} operator tasks",
                rep + 1,
                params.reps,
                run.queries_per_hour,
                run.latency.p50_s,
                run.latency.p99_s,
                run.operator_tasks
            ));
            by_granularity[k].push(run);
            Ok(Vec::new())
        })?;
        runs.extend(by_granularity.into_iter().map(median_run));
    }
    Ok(ThroughputReport {
        experiment: "tpch-throughput".into(),
        sf: params.sf,
        contexts: params.contexts,
        preset: params.preset.clone(),
        seed: params.seed,
        load_seconds: load_time.as_secs_f64(),
        storage: Some(params.storage.to_string()),
        runs,
    })
}

/// The repetition whose queries/h is closest to the median, carrying the
/// median and the spread.
fn median_run(reps: Vec<ThroughputRun>) -> ThroughputRun {
    let qph: Vec<f64> = reps.iter().map(|r| r.queries_per_hour).collect();
    let (median, spread) = Spread::of(&qph).expect("at least one repetition");
    let mut closest = reps
        .into_iter()
        .min_by(|a, b| {
            (a.queries_per_hour - median)
                .abs()
                .total_cmp(&(b.queries_per_hour - median).abs())
        })
        .expect("at least one repetition");
    closest.queries_per_hour = median;
    closest.spread = Some(spread);
    closest
}

/// One execution in a stream.
struct Execution {
    query: u8,
    seconds: f64,
    tasks: u64,
    /// When it completed.
    end: Instant,
}

fn throughput_run(
    scheduler: &Arc<Scheduler>,
    source: &Source,
    next_set: &std::sync::atomic::AtomicU32,
    params: &ThroughputParams,
    streams: usize,
    granularity: Granularity,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<ThroughputRun, String> {
    // A fresh executor per run, so `adaptive` starts learning from scratch.
    let exec = Executor::new(scheduler.clone(), granularity);
    // The refresh stream's rows exist before the run, as dbgen's update
    // files do before a test (clause 5.3.4): generating them is not timed.
    let sets = match source {
        Source::Shared(shared) => prepare_refresh_sets(shared, next_set, streams)?,
        Source::Loaded(_) | Source::Delta(_) | Source::StorePlans { .. } => Vec::new(),
    };
    let delta_sets = match source {
        Source::Delta(_) | Source::StorePlans { .. } if params.refresh => {
            crate::tpch_delta::prepare_sets(params.sf, next_set, streams)?
        }
        _ => Vec::new(),
    };
    let class = params
        .class
        .as_ref()
        .map(|spec| ClassRun::define(scheduler, spec))
        .transpose()?;
    let tasks_before = scheduler.stats().tasks_created;
    let start = Instant::now();
    let deadline = params.duration.map(|d| start + d);
    let (outcomes, refresh): (Vec<Result<Vec<Execution>, String>>, _) = std::thread::scope(|s| {
        let refresher = match source {
            Source::Shared(shared) => {
                let sets = &sets;
                Some(s.spawn(move || refresh_stream(scheduler, shared, sets, start, progress)))
            }
            Source::Delta(store) | Source::StorePlans { store, .. } if params.refresh => {
                let sets = &delta_sets;
                let readers = match source {
                    Source::StorePlans { .. } => maestro_sql::store::RefreshReaders::Plans,
                    _ => maestro_sql::store::RefreshReaders::Sql,
                };
                Some(s.spawn(move || {
                    crate::tpch_delta::refresh_stream(
                        scheduler, store, sets, readers, start, progress,
                    )
                }))
            }
            Source::Loaded(_) | Source::Delta(_) | Source::StorePlans { .. } => None,
        };
        let handles: Vec<_> = (0..streams)
            .map(|stream| {
                let (exec, class) = (&exec, class.as_ref());
                s.spawn(move || {
                    let stream = Stream {
                        exec,
                        source,
                        class,
                        index: stream,
                    };
                    run_stream(&stream, params, deadline, progress)
                })
            })
            .collect();
        let outcomes = handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err("a stream panicked".into())))
            .collect();
        let refresh = refresher.map(|h| {
            h.join()
                .unwrap_or_else(|_| Err("the refresh stream panicked".into()))
        });
        (outcomes, refresh)
    });
    let refresh = refresh.transpose()?;
    let elapsed = start.elapsed().as_secs_f64();
    let mut executions: Vec<Execution> = outcomes
        .into_iter()
        .collect::<Result<Vec<_>, String>>()?
        .into_iter()
        .flatten()
        .collect();
    // The fixed-window rule: only queries completed by the deadline count.
    let window = params.plan.as_ref().and(params.duration);
    let mut late = None;
    if let (Some(_), Some(deadline)) = (window, deadline) {
        let all = executions.len();
        executions.retain(|e| e.end <= deadline);
        late = Some(all - executions.len());
        if executions.is_empty() {
            return Err(format!(
                "{streams} stream(s), {granularity}: no query completed within the \
                 {:.3} s window ({all} finished after it); give a longer --duration",
                window.map_or(0.0, |w| w.as_secs_f64())
            ));
        }
    }
    if executions.is_empty() {
        let (rejected, stopped) = class.as_ref().map_or((0, 0), ClassRun::counts);
        return Err(format!(
            "{streams} stream(s), {granularity}: no query completed ({rejected} rejected by \
             admission control, {stopped} stopped by the class's timeout or memory limits)"
        ));
    }
    let span = window.map_or(elapsed, |w| w.as_secs_f64());
    let mut per_query: BTreeMap<u8, Vec<f64>> = BTreeMap::new();
    for e in &executions {
        per_query.entry(e.query).or_default().push(e.seconds);
    }
    Ok(ThroughputRun {
        streams,
        granularity: granularity.to_string(),
        elapsed_s: elapsed,
        queries: executions.len(),
        queries_per_hour: executions.len() as f64 * 3600.0 / span,
        latency: Latency::of(executions.iter().map(|e| e.seconds).collect()),
        per_query: per_query
            .into_iter()
            .map(|(q, v)| (q, Latency::of(v)))
            .collect(),
        operator_tasks: executions.iter().map(|e| e.tasks).sum(),
        scheduler_tasks: scheduler.stats().tasks_created - tasks_before,
        spread: None,
        window_s: window.map(|w| w.as_secs_f64()),
        late,
        refresh,
        rejected: class.as_ref().map(|c| c.counts().0),
        stopped: class.as_ref().map(|c| c.counts().1),
    })
}

/// The rows of `pairs` refresh pairs, set numbers taken from `next_set`, in
/// the order the refresh stream applies them (RF1 then RF2 of each set).
fn prepare_refresh_sets(
    shared: &maestro_tpch::SharedDatabase,
    next_set: &std::sync::atomic::AtomicU32,
    pairs: usize,
) -> Result<Vec<maestro_tpch::RefreshSet>, String> {
    use maestro_tpch::RefreshFunction;
    let mut sets = Vec::with_capacity(2 * pairs);
    for _ in 0..pairs {
        // Relaxed: one run at a time uses the counter.
        let n = next_set.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        for f in [RefreshFunction::Rf1, RefreshFunction::Rf2] {
            sets.push(
                shared
                    .prepare(f, n)
                    .map_err(|e| format!("refresh set {n} ({f}): {e}"))?,
            );
        }
    }
    Ok(sets)
}

/// The refresh stream: the prepared sets applied one after another, each as
/// one transaction.
fn refresh_stream(
    scheduler: &Scheduler,
    shared: &maestro_tpch::SharedDatabase,
    sets: &[maestro_tpch::RefreshSet],
    start: Instant,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<RefreshStream, String> {
    drive_refresh_stream(
        sets,
        |set| (set.function(), set.number()),
        start,
        progress,
        |set| {
            shared.apply(scheduler, set).map(|r| Applied {
                total: r.total,
                lineitem_changed: r.lineitem_changed,
                place: "",
                note: String::new(),
            })
        },
    )
}

/// What applying one refresh set did, for [`drive_refresh_stream`].
pub(crate) struct Applied {
    /// Transaction start to commit.
    pub total: Duration,
    pub lineitem_changed: usize,
    /// Where it committed, for the progress line (`" into the deltas"`).
    pub place: &'static str,
    /// Appended to the set's progress line.
    pub note: String,
}

/// The refresh stream's loop, whatever stores the sets: each of `sets`
/// (`id`: its function and number) applied by `apply` in order, reported as
/// it commits, its time recorded per function.
pub(crate) fn drive_refresh_stream<S, E: std::fmt::Display>(
    sets: &[S],
    id: impl Fn(&S) -> (maestro_tpch::RefreshFunction, u32),
    start: Instant,
    progress: &(dyn Fn(&str) + Sync),
    mut apply: impl FnMut(&S) -> Result<Applied, E>,
) -> Result<RefreshStream, String> {
    use maestro_tpch::RefreshFunction;
    let (mut rf1_s, mut rf2_s) = (Vec::new(), Vec::new());
    for set in sets {
        let (f, n) = id(set);
        let r = apply(set).map_err(|e| format!("refresh stream {f} set {n}: {e}"))?;
        progress(&format!(
            "refresh stream: {f} set {n} committed{} after {:.1} ms ({} line items){}",
            r.place,
            r.total.as_secs_f64() * 1e3,
            r.lineitem_changed,
            r.note
        ));
        match f {
            RefreshFunction::Rf1 => rf1_s.push(r.total.as_secs_f64()),
            RefreshFunction::Rf2 => rf2_s.push(r.total.as_secs_f64()),
        }
    }
    Ok(RefreshStream {
        pairs: sets.len() / 2,
        first_set: sets.first().map_or(0, |s| id(s).1),
        rf1_s,
        rf2_s,
        elapsed_s: start.elapsed().as_secs_f64(),
    })
}

/// One query stream of a run.
struct Stream<'a> {
    exec: &'a Executor,
    source: &'a Source<'a>,
    /// `--class`: its queries run in it.
    class: Option<&'a ClassRun<'a>>,
    index: usize,
}

impl Stream<'_> {
    /// Runs one query; `None` if its class rejected or stopped it (counted).
    fn query(&self, qp: &QueryParams) -> Result<Option<QueryProfile>, String> {
        let q = qp.query();
        if let Source::Delta(store) = self.source {
            return crate::tpch_delta::query(self.exec, store, qp)
                .map(Some)
                .map_err(|e| format!("stream {}: {e}", self.index));
        }
        let db = self.source.tables()?;
        let failed = |e| format!("stream {} Q{q}: {e}", self.index);
        match self.class {
            None => run_profiled(self.exec, &db, qp)
                .map(|(_, p)| Some(p))
                .map_err(failed),
            Some(class) => match class
                .run(|token| run_profiled_cancellable(self.exec, &db, qp, token))
                .map_err(failed)?
            {
                Ran::Done((_, p)) => Ok(Some(p)),
                Ran::Rejected | Ran::Stopped => Ok(None),
            },
        }
    }
}

/// Stream `stream.index` (1-based in the spec's table: row `index + 1`; row
/// 0 is the power test's) runs its order, once or until `deadline`.
fn run_stream(
    s: &Stream,
    params: &ThroughputParams,
    deadline: Option<Instant>,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Vec<Execution>, String> {
    let stream = s.index;
    let mut out = Vec::new();
    if let (Some(plan), Some(deadline)) = (&params.plan, deadline) {
        // The fixed window: issue the plan's queries in order (from its start
        // again if it runs out) until the deadline; the caller counts only those
        // completed by then.
        let list = &plan.streams[stream];
        for (i, qp) in list.iter().cycle().enumerate() {
            if Instant::now() >= deadline {
                break;
            }
            if i > 0 && i % list.len() == 0 {
                progress(&format!("stream {stream}: the plan's list starts over"));
            }
            let q = qp.query();
            let start = Instant::now();
            let Some(profile) = s.query(qp)? else {
                continue;
            };
            let end = Instant::now();
            out.push(Execution {
                query: q,
                seconds: (end - start).as_secs_f64(),
                tasks: profile.tasks,
                end,
            });
        }
        return Ok(out);
    }
    let order = stream_order(stream + 1);
    for round in 0u64.. {
        for &q in &order {
            if round > 0 && deadline.is_some_and(|d| Instant::now() >= d) {
                return Ok(out);
            }
            let seed = params.seed ^ ((stream as u64) << 32) ^ (round << 48);
            let qp = QueryParams::random(q, params.sf, seed).map_err(|e| e.to_string())?;
            let start = Instant::now();
            let Some(profile) = s.query(&qp)? else {
                continue;
            };
            let end = Instant::now();
            out.push(Execution {
                query: q,
                seconds: (end - start).as_secs_f64(),
                tasks: profile.tasks,
                end,
            });
        }
        match deadline {
            Some(d) if Instant::now() < d => {
                progress(&format!("stream {stream}: round {} done", round + 1));
            }
            _ => break,
        }
    }
    Ok(out)
}

/// Parameter sets generated once and fed to both engines of a comparison
/// (`maestro tpch params` writes it, `maestro tpch throughput --params` and
/// `scripts/duckdb_tpch.py throughput --params` read it): for each stream, the
/// queries in the spec's order for that stream (row `stream + 1` of Appendix A),
/// round after round, each with its parameters drawn by the spec's rules.
///
/// JSON: `{"format": "maestro-tpch-params/1", "sf": 1.0, "seed": 7, "rounds": 20,
/// "streams": [[{"query": 21, "params": {"NATION": "…"}}, …], …]}`; values are
/// written as in the spec's SQL (as `crates/tpch/answers/params.json`).
#[derive(Clone, Debug, PartialEq)]
pub struct ParamPlan {
    pub sf: f64,
    pub seed: u64,
    pub rounds: usize,
    /// One list per stream.
    pub streams: Vec<Vec<QueryParams>>,
}

/// The `format` of a [`ParamPlan`] file.
pub const PARAM_PLAN_FORMAT: &str = "maestro-tpch-params/1";

impl ParamPlan {
    /// `streams` streams of `rounds` rounds, drawn from `seed` (the same draws
    /// `tpch throughput --seed` makes without a plan).
    pub fn generate(sf: f64, seed: u64, streams: usize, rounds: usize) -> ParamPlan {
        let streams = (0..streams)
            .map(|stream| {
                (0..rounds as u64)
                    .flat_map(|round| {
                        stream_order(stream + 1).map(|q| {
                            let seed = seed ^ ((stream as u64) << 32) ^ (round << 48);
                            QueryParams::random(q, sf, seed).expect("1..=22 are queries")
                        })
                    })
                    .collect()
            })
            .collect();
        ParamPlan {
            sf,
            seed,
            rounds,
            streams,
        }
    }

    pub fn to_json(&self) -> serde_json::Value {
        let streams: Vec<serde_json::Value> = self
            .streams
            .iter()
            .map(|list| {
                list.iter()
                    .map(|qp| {
                        let params: serde_json::Map<String, serde_json::Value> = qp
                            .iter()
                            .map(|(name, v)| (name.to_string(), v.to_string().into()))
                            .collect();
                        serde_json::json!({"query": qp.query(), "params": params})
                    })
                    .collect()
            })
            .collect();
        serde_json::json!({
            "format": PARAM_PLAN_FORMAT,
            "sf": self.sf,
            "seed": self.seed,
            "rounds": self.rounds,
            "streams": streams,
        })
    }

    /// Reads a plan; every parameter is checked as `tpch query --param` checks it.
    pub fn from_json(text: &str) -> Result<ParamPlan, String> {
        let json: serde_json::Value =
            serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
        if json["format"] != PARAM_PLAN_FORMAT {
            return Err(format!(
                "format is {}, expected {PARAM_PLAN_FORMAT:?}",
                json["format"]
            ));
        }
        let sf = json["sf"].as_f64().ok_or("no sf")?;
        let seed = json["seed"].as_u64().ok_or("no seed")?;
        let rounds = json["rounds"].as_u64().ok_or("no rounds")? as usize;
        let streams = json["streams"]
            .as_array()
            .ok_or("no streams")?
            .iter()
            .enumerate()
            .map(|(s, list)| {
                let list = list
                    .as_array()
                    .ok_or_else(|| format!("stream {s} is not a list"))?;
                if list.is_empty() {
                    return Err(format!("stream {s} has no queries"));
                }
                list.iter()
                    .map(|e| {
                        let q = e["query"]
                            .as_u64()
                            .and_then(|q| u8::try_from(q).ok())
                            .ok_or_else(|| format!("stream {s}: entry without a query: {e}"))?;
                        let mut qp = QueryParams::validation(q, sf)
                            .map_err(|err| format!("stream {s}: {err}"))?;
                        let params = e["params"]
                            .as_object()
                            .ok_or_else(|| format!("stream {s} Q{q}: no params"))?;
                        for (name, v) in params {
                            let v = v
                                .as_str()
                                .ok_or_else(|| format!("stream {s} Q{q}: {name} not a string"))?;
                            qp.set(name, v)
                                .map_err(|err| format!("stream {s}: {err}"))?;
                        }
                        qp.check().map_err(|err| format!("stream {s}: {err}"))?;
                        Ok(qp)
                    })
                    .collect::<Result<Vec<_>, String>>()
            })
            .collect::<Result<Vec<_>, String>>()?;
        if streams.is_empty() {
            return Err("no streams".into());
        }
        Ok(ParamPlan {
            sf,
            seed,
            rounds,
            streams,
        })
    }

    /// Whether a run at `sf` with up to `streams` streams can use this plan.
    pub fn fits(&self, sf: f64, streams: usize) -> Result<(), String> {
        if self.sf != sf {
            return Err(format!(
                "the parameter plan is for SF {}, this run is at SF {sf}",
                self.sf
            ));
        }
        if streams > self.streams.len() {
            return Err(format!(
                "the parameter plan has {} stream(s), this run needs {streams}",
                self.streams.len()
            ));
        }
        Ok(())
    }
}

impl ThroughputReport {
    /// One line per run.
    pub fn table(&self) -> String {
        let mut out = format!(
            "tpch-throughput: SF {}, {} contexts, variant {}, seed {}, storage {} (load {:.2} s); \
             queries/h: median over the repetitions, the rest from the repetition closest to it\n",
            self.sf,
            self.contexts,
            self.preset,
            self.seed,
            self.storage.as_deref().unwrap_or("cow"),
            self.load_seconds
        );
        let _ = writeln!(
            out,
            "{:>7} {:>11} {:>8} {:>9} {:>10} {:>19} {:>9} {:>9} {:>9} {:>15} {:>15}",
            "streams",
            "granularity",
            "queries",
            "elapsed s",
            "queries/h",
            "[min–max] (reps)",
            "p50 s",
            "p99 s",
            "max s",
            "operator tasks",
            "scheduler tasks"
        );
        for r in &self.runs {
            let _ = writeln!(
                out,
                "{:>7} {:>11} {:>8} {:>9.2} {:>10.0} {:>19} {:>9.4} {:>9.4} {:>9.4} {:>15} {:>15}",
                r.streams,
                r.granularity,
                r.queries,
                r.elapsed_s,
                r.queries_per_hour,
                r.spread.as_ref().map_or_else(String::new, |s| format!(
                    "{} ({})",
                    s.range(0),
                    s.reps
                )),
                r.latency.p50_s,
                r.latency.p99_s,
                r.latency.max_s,
                r.operator_tasks,
                r.scheduler_tasks
            );
            if let Some(f) = &r.refresh {
                let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
                let _ = writeln!(
                    out,
                    "{:>7}   refresh stream: {} pair(s) from set {}, RF1 {:.1} ms and RF2 {:.1} ms \
                     on average, done after {:.2} s",
                    "",
                    f.pairs,
                    f.first_set,
                    mean(&f.rf1_s) * 1e3,
                    mean(&f.rf2_s) * 1e3,
                    f.elapsed_s
                );
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parameter_plan_round_trips_and_follows_the_stream_orders() {
        let plan = ParamPlan::generate(0.1, 7, 3, 2);
        assert_eq!(plan.streams.len(), 3);
        for (s, list) in plan.streams.iter().enumerate() {
            assert_eq!(list.len(), 44);
            let order: Vec<u8> = list.iter().map(|qp| qp.query()).collect();
            assert_eq!(order[..22], stream_order(s + 1));
            assert_eq!(order[22..], stream_order(s + 1));
        }
        // Round 2 draws other values than round 1 (Q1's DELTA has 61 values).
        assert_ne!(plan.streams[0][..22], plan.streams[0][22..]);
        let text = plan.to_json().to_string();
        assert_eq!(ParamPlan::from_json(&text).unwrap(), plan);
        assert!(plan.fits(0.1, 3).is_ok());
        assert!(plan.fits(0.1, 4).unwrap_err().contains("3 stream(s)"));
        assert!(plan.fits(1.0, 1).unwrap_err().contains("SF 0.1"));
        let bad = text.replace("\"DELTA\":\"", "\"DELTA\":\"1");
        assert!(ParamPlan::from_json(&bad).is_err());
        assert!(ParamPlan::from_json("{}").unwrap_err().contains("format"));
    }

    #[test]
    fn nearest_rank_percentiles() {
        let l = Latency::of((1..=100).map(f64::from).collect());
        assert_eq!(
            (l.p50_s, l.p99_s, l.max_s, l.count),
            (50.0, 99.0, 100.0, 100)
        );
        let one = Latency::of(vec![0.5]);
        assert_eq!((one.p50_s, one.p99_s), (0.5, 0.5));
    }

    #[test]
    fn reads_a_peers_json_without_spread_and_with_the_old_repetitions_key() {
        let peer: SingleReport = serde_json::from_str(
            r#"{"experiment":"tpch-single","sf":1.0,"contexts":2,"granularity":"duckdb",
                "repetitions":3,"load_seconds":1.0,"geomean_seconds":{"duckdb":0.1},
                "results":[{"variant":"duckdb","query":1,"metric":"seconds","value":0.1}]}"#,
        )
        .unwrap();
        assert_eq!(peer.reps, 3);
        assert_eq!(peer.results[0].spread, None);
        let ours = serde_json::to_value(&peer).unwrap();
        assert_eq!(ours["reps"], 3);
        assert!(ours["results"][0].get("min").is_none());
    }

    #[test]
    fn table_shows_every_earlier_variant_over_every_later_one() {
        let t = |variant: &str, value| QueryTime {
            variant: variant.into(),
            query: 1,
            metric: "seconds".into(),
            value,
            spread: None,
        };
        let results = vec![t("single-hints", 1.0), t("sql", 2.0), t("duckdb", 4.0)];
        let report = SingleReport {
            experiment: "tpch-single".into(),
            sf: 1.0,
            contexts: 2,
            granularity: "hint".into(),
            reps: 1,
            load_seconds: 0.0,
            geomean_seconds: geomeans(&results),
            results,
        };
        let table = report.table();
        let lines: Vec<&str> = table.lines().collect();
        let header: Vec<&str> = lines[1].split_whitespace().collect();
        assert_eq!(
            header[header.len() - 7..],
            ["÷", "sql", "÷", "duckdb", "sql", "÷", "duckdb"],
            "{table}"
        );
        let q1: Vec<&str> = lines[2].split_whitespace().collect();
        assert_eq!(q1[q1.len() - 3..], ["0.50", "0.25", "0.50"], "{table}");
    }

    #[test]
    fn geomean_uses_only_queries_every_variant_has() {
        let t = |variant: &str, query, value| QueryTime {
            variant: variant.into(),
            query,
            metric: "seconds".into(),
            value,
            spread: None,
        };
        let g = geomeans(&[t("a", 1, 1.0), t("a", 2, 4.0), t("b", 2, 2.0)]);
        assert_eq!(g["a"], 4.0);
        assert_eq!(g["b"], 2.0);
    }
}
