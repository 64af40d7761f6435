//! `granularity` (DaMoN 2016 figures 6–8): for each TPC-H query and each
//! granularity policy, the query's time under a concurrent background load
//! divided by its time alone. Two backgrounds: `tpch` (other TPC-H streams on
//! the same scheduler and policy — contention for the same workers) and
//! `cpu-hog` (plain OS threads spinning outside the scheduler — contention for
//! the cores only), which separates scheduling overhead from contention.
//!
//! Each policy gets its own executor (so `adaptive` learns per template from
//! scratch) and `warmup` runs of every query under the background before the
//! measured runs, so `adaptive` has searched under the load it is measured in.
//!
//! The policies run `reps` times in a rotated order ([`crate::reps`]), each
//! repetition on a fresh executor; every row (a slowdown is a per-repetition
//! ratio) is the median over the repetitions with its min–max. Within a
//! repetition, a query's time is the median of `runs` runs.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use maestro_execution::{Executor, Granularity};
use maestro_tpch::Database;
use maestro_tpch::queries::{QUERY_COUNT, QueryParams, run_profiled, stream_order};
use serde_json::json;

use crate::tpch::{load, start_scheduler};
use crate::{Report, ResultRow};

/// The policies compared.
pub const POLICIES: [&str; 3] = ["static", "hint", "adaptive"];

/// The backgrounds.
pub const BACKGROUNDS: [&str; 2] = ["tpch", "cpu-hog"];

/// Parameters of `granularity`.
#[derive(Clone, Debug)]
pub struct GranularityParams {
    pub sf: f64,
    pub policies: Vec<String>,
    /// Background threads: TPC-H streams, or spinning threads.
    pub background_threads: usize,
    /// Runs of each query before measuring (adaptive's search).
    pub warmup: usize,
    /// Measured runs of each query per repetition; the median counts.
    pub runs: usize,
    /// Repetitions of every policy; the median counts.
    pub reps: usize,
}

impl GranularityParams {
    pub fn full(contexts: usize) -> GranularityParams {
        GranularityParams {
            sf: 1.0,
            policies: POLICIES.map(String::from).to_vec(),
            background_threads: 2 * contexts,
            warmup: 6,
            runs: 5,
            reps: crate::reps::default_reps(false),
        }
    }

    pub fn quick(contexts: usize) -> GranularityParams {
        GranularityParams {
            sf: 0.05,
            warmup: 3,
            runs: 3,
            reps: crate::reps::default_reps(true),
            ..GranularityParams::full(contexts)
        }
    }
}

/// Runs `granularity` on `contexts` contexts (scheduler preset `single-hints`).
pub fn run(
    contexts: usize,
    params: &GranularityParams,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Report, String> {
    let policies: Vec<Granularity> = params
        .policies
        .iter()
        .map(|p| p.parse::<Granularity>().map_err(|e| format!("{p:?}: {e}")))
        .collect::<Result<_, _>>()?;
    if params.runs == 0 || params.background_threads == 0 {
        return Err("runs and background threads must be at least 1".into());
    }
    let scheduler = start_scheduler("single-hints", contexts)?;
    let (db, load_time) = load(&scheduler, params.sf, progress)?;
    progress(&format!(
        "loaded SF {} in {:.2} s",
        params.sf,
        load_time.as_secs_f64()
    ));
    let qparams: Vec<QueryParams> = (1..=QUERY_COUNT)
        .map(|q| QueryParams::validation(q, params.sf).map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    let per_rep = crate::reps::repeat(&policies, params.reps, |&g, rep| {
        let mut rows = Vec::new();
        let exec = Executor::new(scheduler.clone(), g);
        // Alone: after the warm-up, so adaptive has a plan.
        let alone = measure_all(&exec, &db, &qparams, params)?;
        for background in BACKGROUNDS {
            let loaded =
                with_background(background, params.background_threads, &exec, &db, || {
                    measure_all(&exec, &db, &qparams, params)
                })?;
            let mut logs = Vec::new();
            for q in 0..usize::from(QUERY_COUNT) {
                let slowdown = loaded[q] / alone[q];
                logs.push(slowdown.ln());
                rows.push(row(
                    g,
                    background,
                    Some(q + 1),
                    "slowdown",
                    slowdown,
                    "ratio",
                ));
                rows.push(row(
                    g,
                    background,
                    Some(q + 1),
                    "seconds_loaded",
                    loaded[q],
                    "s",
                ));
            }
            let geo = (logs.iter().sum::<f64>() / logs.len() as f64).exp();
            rows.push(row(g, background, None, "slowdown_geomean", geo, "ratio"));
            progress(&format!(
                "{g} under {background}, rep {}/{}: geometric mean slowdown {geo:.2}",
                rep + 1,
                params.reps
            ));
        }
        for (q, &t) in alone.iter().enumerate() {
            rows.push(row(g, "none", Some(q + 1), "seconds_alone", t, "s"));
        }
        Ok(rows)
    })?;
    let results = crate::reps::aggregate(per_rep);
    let tpch: Vec<ResultRow> = results
        .iter()
        .filter(|r| r.metric == "slowdown" && r.extra.get("background") == Some(&json!("tpch")))
        .cloned()
        .collect();
    let chart = crate::chart_of(
        &tpch,
        "slowdown",
        "query",
        "slowdown under a TPC-H background, per query",
        "TPC-H query",
        "time loaded / time alone",
    )?;
    Ok(Report {
        experiment: "granularity".into(),
        contexts,
        params: json!({
            "sf": params.sf,
            "policies": params.policies,
            "background_threads": params.background_threads,
            "warmup": params.warmup,
            "runs": params.runs,
            "reps": params.reps,
            "backgrounds": BACKGROUNDS,
        }),
        results,
        attachments: vec![("granularity.svg".into(), chart)],
    })
}

fn row(
    g: Granularity,
    background: &str,
    query: Option<usize>,
    metric: &str,
    value: f64,
    unit: &str,
) -> ResultRow {
    let mut extra = serde_json::Map::new();
    extra.insert("background".into(), json!(background));
    if let Some(q) = query {
        extra.insert("query".into(), json!(q));
    }
    ResultRow {
        case: match query {
            Some(q) => format!("Q{q}/{background}"),
            None => format!("all/{background}"),
        },
        variant: g.to_string(),
        metric: metric.into(),
        value,
        unit: unit.into(),
        extra,
        ..Default::default()
    }
}

/// Median seconds of each query (index q - 1), after the warm-up runs.
fn measure_all(
    exec: &Executor,
    db: &Database,
    qparams: &[QueryParams],
    params: &GranularityParams,
) -> Result<Vec<f64>, String> {
    let mut medians = Vec::new();
    for p in qparams {
        for _ in 0..params.warmup {
            run_profiled(exec, db, p).map_err(|e| e.to_string())?;
        }
        let mut times = Vec::new();
        for _ in 0..params.runs {
            let start = Instant::now();
            run_profiled(exec, db, p).map_err(|e| e.to_string())?;
            times.push(start.elapsed().as_secs_f64());
        }
        times.sort_by(f64::total_cmp);
        medians.push(times[times.len() / 2]);
    }
    Ok(medians)
}

/// Runs `f` while `threads` background threads load the machine.
fn with_background<R>(
    kind: &str,
    threads: usize,
    exec: &Executor,
    db: &Database,
    f: impl FnOnce() -> Result<R, String>,
) -> Result<R, String> {
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let stop = &stop;
                s.spawn(move || -> Result<(), String> {
                    match kind {
                        "tpch" => tpch_stream(t, exec, db, stop),
                        _ => {
                            while !stop.load(Ordering::Relaxed) {
                                spin_for(Duration::from_micros(100));
                            }
                            Ok(())
                        }
                    }
                })
            })
            .collect();
        let out = f();
        stop.store(true, Ordering::Relaxed);
        for h in handles {
            h.join()
                .map_err(|_| "a background thread panicked".to_string())??;
        }
        out
    })
}

/// A background TPC-H stream: the spec's order for stream `t + 1`, random
/// parameters, until told to stop.
fn tpch_stream(t: usize, exec: &Executor, db: &Database, stop: &AtomicBool) -> Result<(), String> {
    for round in 0u64.. {
        for q in stream_order(t + 1) {
            if stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            let p = QueryParams::random(q, db.scale_factor, (t as u64) << 32 | round)
                .map_err(|e| e.to_string())?;
            run_profiled(exec, db, &p).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

fn spin_for(d: Duration) {
    let start = Instant::now();
    while start.elapsed() < d {
        std::hint::spin_loop();
    }
}
