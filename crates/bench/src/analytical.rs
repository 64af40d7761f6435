//! `analytical` (ADMS 2013 figures 4–5): N concurrent TPC-H queries — the 22
//! templates round-robin with their validation parameters, all started at
//! once — and the time until the last one returns, per scheduler variant and
//! N; with the tasks created, CPU user/system/idle, context switches and the
//! peak number of workers.
//!
//! Variants ([`crate::tpch::ENGINE_VARIANTS`]) run on one loaded database:
//! the scheduler presets, with the granularity each is meant for (`hint` on
//! `single-hints`, `static` otherwise), and the papers' thread-pool baselines
//! `multiple-pools` and `rayon` (see [`crate::tpch::engine`]). Tasks and peak
//! workers are the Maestro scheduler's, so they are 0 for the pool baselines
//! (whose pools are fixed at `contexts` threads each).
//!
//! Per N, the variants run `reps` times in a rotated order ([`crate::reps`]);
//! rows are medians with their min–max.

use std::sync::Barrier;
use std::time::Instant;

use maestro_tpch::Database;
use maestro_tpch::queries::{QUERY_COUNT, QueryParams, run_profiled};
use serde_json::json;

use crate::cpu::process_cpu_times;
use crate::tpch::{engine, load, start_scheduler};
use crate::{Report, ResultRow};

/// The variants `analytical` knows.
pub use crate::tpch::ENGINE_VARIANTS as VARIANTS;

/// Parameters of `analytical`.
#[derive(Clone, Debug)]
pub struct AnalyticalParams {
    pub sf: f64,
    /// Concurrent queries per run.
    pub clients: Vec<usize>,
    pub variants: Vec<String>,
    /// Repetitions of every (variant, N) run; the median counts.
    pub reps: usize,
}

impl AnalyticalParams {
    /// The README's scale: SF 1, 1 to 256 concurrent queries.
    pub fn full() -> AnalyticalParams {
        AnalyticalParams {
            sf: 1.0,
            clients: vec![1, 4, 16, 64, 256],
            variants: VARIANTS.map(String::from).to_vec(),
            reps: crate::reps::default_reps(false),
        }
    }

    /// Seconds on 2 cores (CI).
    pub fn quick() -> AnalyticalParams {
        AnalyticalParams {
            sf: 0.1,
            clients: vec![1, 16, 64],
            variants: VARIANTS.map(String::from).to_vec(),
            reps: crate::reps::default_reps(true),
        }
    }
}

/// Runs `analytical` on `contexts` contexts.
pub fn run(
    contexts: usize,
    params: &AnalyticalParams,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Report, String> {
    if let Some(v) = params
        .variants
        .iter()
        .find(|v| !VARIANTS.contains(&v.as_str()))
    {
        return Err(format!(
            "unknown variant {v:?} for analytical: expected one of {}",
            VARIANTS.join(", ")
        ));
    }
    if params.clients.is_empty() || params.clients.contains(&0) {
        return Err("clients must be a non-empty list of positive counts".into());
    }
    let loader = start_scheduler("single-hints", contexts)?;
    let (db, load_time) = load(&loader, params.sf, progress)?;
    drop(loader);
    progress(&format!(
        "loaded SF {} in {:.2} s",
        params.sf,
        load_time.as_secs_f64()
    ));
    let mut per_n = Vec::new();
    for &n in &params.clients {
        let per_rep = crate::reps::repeat(&params.variants, params.reps, |variant, rep| {
            let rows = run_one(contexts, &db, variant, n)?;
            progress(&format!(
                "{variant}, {n} concurrent queries, rep {}/{}: {:.3} s, {} tasks",
                rep + 1,
                params.reps,
                rows[0].value,
                rows[1].value
            ));
            Ok(rows)
        })?;
        per_n.push(crate::reps::aggregate(per_rep));
    }
    // Grouped by variant (each variant's curve together), as before the repetitions.
    let mut results: Vec<ResultRow> = Vec::new();
    for v in &params.variants {
        for rows in &per_n {
            results.extend(rows.iter().filter(|r| r.variant == *v).cloned());
        }
    }
    let chart = crate::chart_of(
        &results,
        "seconds",
        "clients",
        "time until the last of N concurrent TPC-H queries",
        "concurrent queries",
        "seconds",
    )?;
    Ok(Report {
        experiment: "analytical".into(),
        contexts,
        params: json!({
            "sf": params.sf,
            "clients": params.clients,
            "queries": "the 22 templates round-robin, validation parameters",
            "granularity": "hint on single-hints, static otherwise",
            "reps": params.reps,
        }),
        results,
        attachments: vec![("analytical.svg".into(), chart)],
    })
}

/// One (variant, N) run on a fresh scheduler.
fn run_one(
    contexts: usize,
    db: &Database,
    variant: &str,
    clients: usize,
) -> Result<Vec<ResultRow>, String> {
    let (scheduler, exec) = engine(variant, contexts)?;
    let params: Vec<QueryParams> = (1..=QUERY_COUNT)
        .map(|q| QueryParams::validation(q, db.scale_factor).map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    let before = scheduler.stats();
    let barrier = Barrier::new(clients + 1);
    let (cpu0, wall) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..clients)
            .map(|i| {
                let (exec, barrier, p) = (&exec, &barrier, &params[i % params.len()]);
                s.spawn(move || {
                    barrier.wait();
                    run_profiled(exec, db, p)
                        .map(|_| ())
                        .map_err(|e| e.to_string())
                })
            })
            .collect();
        let cpu0 = process_cpu_times();
        barrier.wait();
        let start = Instant::now();
        let outcomes: Vec<Result<(), String>> = handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err("a client panicked".into())))
            .collect();
        (
            outcomes
                .into_iter()
                .collect::<Result<(), String>>()
                .map(|_| cpu0),
            start.elapsed(),
        )
    });
    let cpu0 = cpu0?;
    let cpu1 = process_cpu_times();
    let after = scheduler.stats();
    let wall_s = wall.as_secs_f64();
    let user = (cpu1.user.saturating_sub(cpu0.user)).as_secs_f64();
    let system = (cpu1.system.saturating_sub(cpu0.system)).as_secs_f64();
    let idle = (1.0 - (user + system) / (wall_s * contexts as f64)).clamp(0.0, 1.0);
    let row = |metric: &str, value: f64, unit: &str| {
        let mut extra = serde_json::Map::new();
        extra.insert("clients".into(), json!(clients));
        ResultRow {
            case: format!("clients={clients}"),
            variant: variant.to_string(),
            metric: metric.into(),
            value,
            unit: unit.into(),
            extra,
            ..Default::default()
        }
    };
    Ok(vec![
        row("seconds", wall_s, "s"),
        row(
            "tasks_created",
            (after.tasks_created - before.tasks_created) as f64,
            "tasks",
        ),
        row("cpu_user", user / wall_s / contexts as f64, "fraction"),
        row("cpu_system", system / wall_s / contexts as f64, "fraction"),
        row("cpu_idle", idle, "fraction"),
        row(
            "voluntary_context_switches",
            cpu1.voluntary_switches
                .saturating_sub(cpu0.voluntary_switches) as f64,
            "switches",
        ),
        row(
            "involuntary_context_switches",
            cpu1.involuntary_switches
                .saturating_sub(cpu0.involuntary_switches) as f64,
            "switches",
        ),
        row("workers_peak", after.workers_peak as f64, "threads"),
    ])
}
