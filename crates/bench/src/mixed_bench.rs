//! The `mixed` and `timeline` experiments (ADMS 2013 figures 6–8) on top of
//! [`crate::mixed::run_workload`]: TPC-H clients from a list beside a fixed number
//! of TPC-C terminals, per engine variant. Per TPC-H client count, the
//! variants run `reps` times in a rotated order ([`crate::reps`]); rows are
//! medians with their min–max.

use std::time::Duration;

use serde_json::json;

use crate::mixed::{
    LoadedWorkload, MixedConfig, MixedOutcome, Workload, WorkloadClasses, WorkloadKind,
    load_workload, run_workload,
};
use crate::plot::{line_chart, timeline_series};
use crate::tpch::ENGINE_VARIANTS;
use crate::{Report, ResultRow};

/// The mixed experiments' variants: the engine variants, and
/// `single-classes` — `single-hints` with the transactions in a workload
/// class of weight [`CLASSES_OLTP_WEIGHT`] (urgent) and the queries in one of
/// weight [`CLASSES_OLAP_WEIGHT`] (issue 13's shares instead of the urgent
/// share). Not in the default list: opt in with `--variants`.
pub const MIXED_VARIANTS: [&str; 6] = [
    ENGINE_VARIANTS[0],
    ENGINE_VARIANTS[1],
    ENGINE_VARIANTS[2],
    ENGINE_VARIANTS[3],
    ENGINE_VARIANTS[4],
    "single-classes",
];

/// `single-classes`' default transactional weight: 2 : 1 is the CPU split
/// multiple-pools lands at with 2 × contexts terminal threads beside
/// contexts operator threads (measured: TPC-C gets ~4/6 of the CPU there),
/// so the two engines are compared at the same split (guessed from that).
pub const CLASSES_OLTP_WEIGHT: u32 = 2;
/// `single-classes`' analytical weight.
pub const CLASSES_OLAP_WEIGHT: u32 = 1;

/// Parameters of `mixed` and `timeline`.
#[derive(Clone, Debug)]
pub struct MixedParams {
    pub sf: f64,
    pub warehouses: u16,
    pub tpch_clients: Vec<usize>,
    pub tpcc_terminals: usize,
    pub duration: Duration,
    pub variants: Vec<String>,
    pub seed: u64,
    /// Repetitions of every (variant, clients) run; the median counts.
    pub reps: usize,
    /// Disjoint TPC-H + TPC-C (the papers' experiments) or CH-benCHmark on
    /// shared data (`sf` unused).
    pub workload: WorkloadKind,
    /// `single-classes`' transactional weight, 1..=`CLASS_WEIGHT_MAX`.
    pub oltp_weight: u32,
    /// `single-classes`' analytical weight, 1..=`CLASS_WEIGHT_MAX`.
    pub olap_weight: u32,
}

impl MixedParams {
    /// The README's scale.
    pub fn full(contexts: usize) -> MixedParams {
        MixedParams {
            sf: 1.0,
            warehouses: 2,
            tpch_clients: vec![0, 1, 2 * contexts, 8 * contexts],
            tpcc_terminals: 2 * contexts,
            duration: Duration::from_secs(10),
            variants: ENGINE_VARIANTS.map(String::from).to_vec(),
            seed: 1,
            reps: crate::reps::default_reps(false),
            workload: WorkloadKind::Disjoint,
            oltp_weight: CLASSES_OLTP_WEIGHT,
            olap_weight: CLASSES_OLAP_WEIGHT,
        }
    }

    /// Seconds per run (CI).
    pub fn quick(contexts: usize) -> MixedParams {
        MixedParams {
            sf: 0.05,
            tpch_clients: vec![0, 2 * contexts],
            duration: Duration::from_millis(1500),
            reps: crate::reps::default_reps(true),
            ..MixedParams::full(contexts)
        }
    }

    fn check(&self) -> Result<(), String> {
        check_variants(&self.variants, &MIXED_VARIANTS)?;
        if self.tpch_clients.is_empty() || self.duration.is_zero() || self.warehouses == 0 {
            return Err("need TPC-H client counts, a positive duration and warehouses".into());
        }
        for (class, w) in [
            ("transactional", self.oltp_weight),
            ("analytical", self.olap_weight),
        ] {
            if !(1..=maestro_scheduler::CLASS_WEIGHT_MAX).contains(&w) {
                return Err(format!(
                    "the {class} weight must be 1..={}, not {w}",
                    maestro_scheduler::CLASS_WEIGHT_MAX,
                ));
            }
        }
        Ok(())
    }
}

fn one_run(
    dbs: Workload<'_>,
    p: &MixedParams,
    contexts: usize,
    variant: &str,
    clients: usize,
) -> Result<MixedOutcome, String> {
    let mut config = MixedConfig::new(
        variant,
        contexts,
        clients,
        p.tpcc_terminals,
        p.duration,
        p.seed,
    );
    if variant == "single-classes" {
        config.variant = "single-hints".into();
        config.classes = Some(WorkloadClasses {
            oltp_weight: p.oltp_weight,
            olap_weight: p.olap_weight,
            olap_max_parallelism: None,
            olap_admission: None,
        });
    }
    run_consistent(dbs, &config, &format!("{variant}, {clients} TPC-H clients"))
}

/// [`run_workload`], failing if TPC-C's consistency conditions do not hold
/// after it (`what` names the run in the error).
pub(crate) fn run_consistent(
    workload: Workload<'_>,
    config: &MixedConfig,
    what: &str,
) -> Result<MixedOutcome, String> {
    let o = run_workload(workload, config, &|_| {})?;
    if !o.consistency_violations.is_empty() {
        return Err(format!(
            "{what}: TPC-C consistency violated: {}",
            o.consistency_violations.join("; ")
        ));
    }
    Ok(o)
}

/// A result row of one (variant, client count) point, the count under
/// `clients_key` (`tpch_clients`, `olap_clients`).
pub(crate) fn point_row(
    clients_key: &str,
    variant: &str,
    clients: usize,
    metric: &str,
    value: f64,
    unit: &str,
) -> ResultRow {
    let mut extra = serde_json::Map::new();
    extra.insert(clients_key.into(), json!(clients));
    ResultRow {
        case: format!("{clients_key}={clients}"),
        variant: variant.into(),
        metric: metric.into(),
        value,
        unit: unit.into(),
        higher_is_better: matches!(metric, "tpmC" | "tpch_queries_per_minute"),
        extra,
        ..Default::default()
    }
}

fn row(variant: &str, clients: usize, metric: &str, value: f64, unit: &str) -> ResultRow {
    point_row("tpch_clients", variant, clients, metric, value, unit)
}

/// The points' rows grouped by variant, in `variants` order (each variant's
/// curve together, as before the repetitions).
pub(crate) fn grouped_by_variant(
    variants: &[String],
    per_point: &[Vec<ResultRow>],
) -> Vec<ResultRow> {
    let mut results = Vec::new();
    for v in variants {
        for rows in per_point {
            results.extend(rows.iter().filter(|r| r.variant == *v).cloned());
        }
    }
    results
}

/// `Err` naming the first of `variants` not in `known`.
pub(crate) fn check_variants(variants: &[String], known: &[&str]) -> Result<(), String> {
    match variants.iter().find(|v| !known.contains(&v.as_str())) {
        Some(v) => Err(format!(
            "unknown variant {v:?}: expected one of {}",
            known.join(", ")
        )),
        None => Ok(()),
    }
}

/// The data the runs of an experiment use. Disjoint: loaded once (TPC-H
/// is read-only, and the rows TPC-C inserts into its own tables do not slow
/// the queries). CH: loaded afresh for every run, because the transactions
/// grow the very tables the queries scan (~10 order lines per New-Order,
/// ~1 M rows per 10-s run here), so a run on data an earlier run grew would
/// be slower for a reason that is not its variant.
struct RunData<'a> {
    p: &'a MixedParams,
    contexts: usize,
    once: Option<LoadedWorkload>,
}

impl<'a> RunData<'a> {
    fn new(
        p: &'a MixedParams,
        contexts: usize,
        progress: &'a (dyn Fn(&str) + Sync),
    ) -> Result<Self, String> {
        let once = match p.workload {
            WorkloadKind::Disjoint => Some(load_workload(
                p.workload,
                p.sf,
                p.warehouses,
                contexts,
                p.seed,
                progress,
            )?),
            WorkloadKind::Ch(_) => None,
        };
        Ok(RunData { p, contexts, once })
    }

    /// Runs `f` on the data of one run.
    fn run<R>(&self, f: impl FnOnce(Workload<'_>) -> Result<R, String>) -> Result<R, String> {
        match &self.once {
            Some(loaded) => f(loaded.workload()),
            None => {
                let p = self.p;
                let quiet = |_: &str| {};
                let fresh = load_workload(
                    p.workload,
                    p.sf,
                    p.warehouses,
                    self.contexts,
                    p.seed,
                    &quiet,
                )?;
                f(fresh.workload())
            }
        }
    }
}

/// `mixed`: TPC-H queries per minute and tpmC per (variant, TPC-H clients).
pub fn mixed(
    contexts: usize,
    p: &MixedParams,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Report, String> {
    p.check()?;
    let data = RunData::new(p, contexts, progress)?;
    let mut per_point = Vec::new();
    for &clients in &p.tpch_clients {
        let per_rep = crate::reps::repeat(&p.variants, p.reps, |variant, rep| {
            let o = data.run(|w| one_run(w, p, contexts, variant, clients))?;
            progress(&format!(
                "{variant}, {clients} analytical clients, rep {}/{}: {:.0} queries/min, {:.0} tpmC",
                rep + 1,
                p.reps,
                o.tpch_queries_per_minute,
                o.tpmc
            ));
            let r = |m: &str, v: f64, u: &str| row(variant, clients, m, v, u);
            let mut rows = vec![
                r("tpmC", o.tpmc, "new-orders/min"),
                r(
                    "tpch_queries_per_minute",
                    o.tpch_queries_per_minute,
                    "queries/min",
                ),
                r("tpcc_abort_rate", o.tpcc_abort_rate, "fraction"),
                r("cpu_user", o.cpu_user, "fraction"),
                r("cpu_system", o.cpu_system, "fraction"),
                r("cpu_idle", o.cpu_idle, "fraction"),
                r(
                    "voluntary_context_switches",
                    o.voluntary_context_switches as f64,
                    "switches",
                ),
                r(
                    "involuntary_context_switches",
                    o.involuntary_context_switches as f64,
                    "switches",
                ),
            ];
            if let Some(t) = o.scheduler_tasks {
                rows.push(r("scheduler_tasks", t as f64, "tasks"));
            }
            if let Some(d) = o.dispatch {
                rows.push(r("callers_counted", d.callers_counted as f64, "jobs"));
                rows.push(r("callers_extra", d.callers_extra as f64, "jobs"));
                rows.push(r("callers_handed_off", d.callers_handed_off as f64, "jobs"));
                rows.push(r(
                    "callers_waited_turn",
                    d.callers_waited_turn as f64,
                    "waits",
                ));
                rows.push(r("workers_woken", d.workers_woken as f64, "wake-ups"));
                rows.push(r("stall_rescues", d.stall_rescues as f64, "workers"));
            }
            if let Some(t) = o.class_thread_seconds {
                rows.push(r("oltp_thread_seconds", t.oltp, "s"));
                rows.push(r("olap_thread_seconds", t.olap, "s"));
                rows.push(r("oltp_raised_seconds", t.oltp_raised, "s"));
                rows.push(r("olap_raised_seconds", t.olap_raised, "s"));
            }
            Ok(rows)
        })?;
        per_point.push(crate::reps::aggregate(per_rep));
    }
    let results = grouped_by_variant(&p.variants, &per_point);
    let attachments = vec![
        (
            "mixed-tpch.svg".to_string(),
            crate::chart_of(
                &results,
                "tpch_queries_per_minute",
                "tpch_clients",
                "TPC-H queries/min beside TPC-C (median, min–max)",
                "TPC-H clients",
                "queries/min",
            )?,
        ),
        (
            "mixed-tpcc.svg".to_string(),
            crate::chart_of(
                &results,
                "tpmC",
                "tpch_clients",
                "TPC-C tpmC beside TPC-H (median, min–max)",
                "TPC-H clients",
                "tpmC",
            )?,
        ),
    ];
    Ok(Report {
        experiment: "mixed".into(),
        contexts,
        params: json!({
            "sf": p.sf, "warehouses": p.warehouses, "tpch_clients": p.tpch_clients,
            "tpcc_terminals": p.tpcc_terminals, "seconds": p.duration.as_secs_f64(),
            "reps": p.reps, "classes_oltp_weight": p.oltp_weight,
            "classes_olap_weight": p.olap_weight,
        }),
        results,
        attachments,
    })
}

/// `timeline`: the scheduler's workers, hint and queue over one mixed run per
/// scheduler variant (the pool baselines have no scheduler to sample).
pub fn timeline(
    contexts: usize,
    p: &MixedParams,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Report, String> {
    p.check()?;
    let clients = *p.tpch_clients.iter().max().expect("checked non-empty");
    let data = RunData::new(p, contexts, progress)?;
    let variants: Vec<&String> = p
        .variants
        .iter()
        .filter(|v| v.starts_with("single"))
        .collect();
    let mut attachments = Vec::new();
    let per_rep = crate::reps::repeat(&variants, p.reps, |variant, rep| {
        let o = data.run(|w| one_run(w, p, contexts, variant, clients))?;
        let n = o.timeline.len().max(1) as f64;
        let mean = |f: fn(&maestro_scheduler::TimelineSample) -> usize| {
            o.timeline.iter().map(|t| f(t) as f64).sum::<f64>() / n
        };
        let r = |m: &str, v: f64, u: &str| row(variant, clients, m, v, u);
        let rows = vec![
            r("active_mean", mean(|t| t.active), "workers"),
            r("blocked_mean", mean(|t| t.blocked), "workers"),
            r("parked_mean", mean(|t| t.parked), "workers"),
            r(
                "total_max",
                o.timeline.iter().map(|t| t.total).max().unwrap_or(0) as f64,
                "workers",
            ),
            r("hint_mean", mean(|t| t.hint), "tasks"),
            r(
                "queued_mean",
                mean(|t| t.queued_roots + t.queued_tasks),
                "tasks",
            ),
            r("samples", o.timeline.len() as f64, "samples"),
        ];
        progress(&format!(
            "{variant}, rep {}/{}: {} samples",
            rep + 1,
            p.reps,
            o.timeline.len()
        ));
        // The charts and raw samples show the first repetition's run.
        if rep == 0 {
            let series = timeline_series(&o.timeline);
            let title = format!("{variant}: workers under the mixed load");
            attachments.push((
                format!("timeline-{variant}.svg"),
                line_chart(&title, "seconds", "workers", &series)?,
            ));
            let samples = serde_json::to_string(&o.timeline).map_err(|e| e.to_string())?;
            attachments.push((format!("timeline-{variant}.json"), samples));
        }
        Ok(rows)
    })?;
    let results = crate::reps::aggregate(per_rep);
    Ok(Report {
        experiment: "timeline".into(),
        contexts,
        params: json!({
            "sf": p.sf, "warehouses": p.warehouses, "tpch_clients": clients,
            "tpcc_terminals": p.tpcc_terminals, "seconds": p.duration.as_secs_f64(),
            "reps": p.reps,
        }),
        results,
        attachments,
    })
}
