//! `latches` (Johnson et al., DaMoN 2009; papers/README.md §4): TPC-C
//! throughput as the terminals grow from 1 to 8 × contexts, with the lock
//! manager's shard latches in each of three flavours
//! ([`LatchFlavour`]): `blocking` (the scheduler-aware mutex: a short
//! back-off, then park), `spinning` (test-and-test-and-set, never parks) and
//! `load-controlled` (the scheduler's `Latch`: spins while the active level is
//! at most the contexts, parks as *blocked* above). The check: the
//! load-controlled latch should track the better of the other two across the
//! terminal range (rows `ratio_vs_better_of_spinning_blocking`).
//!
//! The flavour changes only the latches of the lock table; 2PL lock waits
//! block in every flavour, and the rows' own latches are unchanged.
//!
//! The database is loaded once and reused: runs insert orders and history,
//! so later runs see somewhat larger tables. To spread that drift evenly the
//! terminal counts are the outer loop and the flavours the inner one, in an
//! order rotated per terminal count. After each run the TPC-C consistency
//! conditions are checked; a violation fails the experiment.
//!
//! Per terminal count the flavours run `reps` times ([`crate::reps`]): the
//! order starts one flavour later per terminal count and per repetition. Rows
//! are medians over the repetitions with their min–max; the load-controlled
//! ratio is computed per repetition, then its median taken.
//!
//! Per (flavour, terminals), the case is `terminals_T` and the row's extra
//! keys are `"terminals": T` and `"flavour"`.

use std::time::{Duration, Instant};

use maestro_tpcc::driver::{self, Mode, Preset, RunConfig, RunReport};
use maestro_tpcc::lock::LatchFlavour;
use serde_json::json;

use crate::cpu::process_cpu_times;
use crate::{Report, ResultRow};

/// Parameters of `latches`.
#[derive(Clone, Debug)]
pub struct LatchesParams {
    pub warehouses: u16,
    /// Terminal counts, each a separate run per flavour.
    pub terminals: Vec<usize>,
    /// Length of each run.
    pub duration: Duration,
    pub flavours: Vec<LatchFlavour>,
    /// Scheduler preset (one task per transaction) or receivers.
    pub mode: Mode,
    /// Seeds the load and every run's inputs.
    pub seed: u64,
    /// Repetitions of every (flavour, terminals) run; the median counts.
    pub reps: usize,
}

/// 1, 2, 4, … doubling up to `max`, and `max` itself.
pub fn doubling_up_to(max: usize) -> Vec<usize> {
    let mut v: Vec<usize> = std::iter::successors(Some(1usize), |&t| t.checked_mul(2))
        .take_while(|&t| t < max)
        .collect();
    v.push(max.max(1));
    v
}

impl LatchesParams {
    /// W = 2, terminals 1, 2, 4, … 8 × contexts, 10 s per run, all flavours,
    /// scheduler preset `single-pool`.
    pub fn full(contexts: usize) -> LatchesParams {
        LatchesParams {
            warehouses: 2,
            terminals: doubling_up_to(8 * contexts.max(1)),
            duration: Duration::from_secs(10),
            flavours: LatchFlavour::ALL.to_vec(),
            mode: Mode::Scheduler(Preset::SinglePool),
            seed: 42,
            reps: crate::reps::default_reps(false),
        }
    }

    /// Like [`full`](Self::full) with 1 s runs at 1, contexts and
    /// 8 × contexts terminals.
    pub fn quick(contexts: usize) -> LatchesParams {
        let c = contexts.max(1);
        let mut terminals = vec![1, c, 8 * c];
        terminals.dedup();
        LatchesParams {
            terminals,
            duration: Duration::from_secs(1),
            reps: crate::reps::default_reps(true),
            ..LatchesParams::full(contexts)
        }
    }

    fn validate(&self) -> Result<(), String> {
        if self.warehouses == 0 {
            return Err("bench latches: at least one warehouse is needed".into());
        }
        if self.terminals.is_empty() || self.terminals.contains(&0) {
            return Err(format!(
                "bench latches: terminal counts must be ≥ 1, got {:?}",
                self.terminals
            ));
        }
        if self.flavours.is_empty() {
            return Err("bench latches: no latch flavour to run".into());
        }
        if self.duration.is_zero() {
            return Err("bench latches: the duration must be positive".into());
        }
        Ok(())
    }

    fn json(&self, load_seconds: f64) -> serde_json::Value {
        json!({
            "warehouses": self.warehouses,
            "terminals": self.terminals,
            "duration_s": self.duration.as_secs_f64(),
            "flavours": self.flavours.iter().map(|f| f.name()).collect::<Vec<_>>(),
            "mode": self.mode.name(),
            "seed": self.seed,
            "reps": self.reps,
            "load_seconds": load_seconds,
        })
    }
}

/// What one run measured besides its [`RunReport`].
#[derive(Clone, Debug)]
pub struct Measured {
    pub flavour: LatchFlavour,
    pub terminals: usize,
    pub report: RunReport,
    /// Process CPU seconds ÷ (wall seconds × contexts) over the run.
    pub cpu_utilisation: f64,
    pub voluntary_switches: u64,
    pub involuntary_switches: u64,
}

/// (metric, unit, higher is better, value) of one run.
fn metrics(m: &Measured) -> Vec<(&'static str, &'static str, bool, f64)> {
    let r = &m.report;
    let mut v = vec![
        (
            "transactions_per_second",
            "tx/s",
            true,
            r.transactions_per_second(),
        ),
        ("tpmC", "tpmC", true, r.tpmc()),
        ("abort_rate", "ratio", false, r.abort_rate()),
        ("lock_waits", "count", false, r.locks.waits as f64),
        (
            "latch_contended",
            "count",
            false,
            r.locks.latch_contended as f64,
        ),
        ("cpu_utilisation", "ratio", false, m.cpu_utilisation),
        (
            "voluntary_context_switches",
            "count",
            false,
            m.voluntary_switches as f64,
        ),
        (
            "involuntary_context_switches",
            "count",
            false,
            m.involuntary_switches as f64,
        ),
    ];
    if let Some(s) = &r.scheduler {
        v.extend([
            ("blocked_events", "count", false, s.blocked_events as f64),
            ("workers_peak", "count", false, s.workers_peak as f64),
            ("latch_parks", "count", false, s.latch_parks as f64),
            (
                "latch_spin_acquires",
                "count",
                true,
                s.latch_spin_acquires as f64,
            ),
        ]);
    }
    v
}

fn row(
    flavour: &str,
    terminals: usize,
    metric: &str,
    unit: &str,
    higher_is_better: bool,
    value: f64,
) -> ResultRow {
    let mut extra = serde_json::Map::new();
    extra.insert("terminals".into(), json!(terminals));
    extra.insert("flavour".into(), json!(flavour));
    ResultRow {
        case: format!("terminals_{terminals}"),
        variant: flavour.into(),
        metric: metric.into(),
        value,
        unit: unit.into(),
        ratio_vs_rayon: None,
        higher_is_better,
        extra,
        ..Default::default()
    }
}

/// The rows of a set of runs: every metric of every run, then per terminal
/// count where all three flavours ran, load-controlled's throughput ÷ the
/// better of spinning's and blocking's.
pub fn rows(runs: &[Measured]) -> Vec<ResultRow> {
    let mut out: Vec<ResultRow> = runs.iter().flat_map(metric_rows).collect();
    out.extend(ratio_rows(&out));
    out
}

fn metric_rows(m: &Measured) -> Vec<ResultRow> {
    metrics(m)
        .into_iter()
        .map(|(metric, unit, hib, value)| {
            row(m.flavour.name(), m.terminals, metric, unit, hib, value)
        })
        .collect()
}

/// Per terminal count in `rows` where all three flavours have a throughput,
/// load-controlled's ÷ the better of spinning's and blocking's.
fn ratio_rows(rows: &[ResultRow]) -> Vec<ResultRow> {
    let mut terminals: Vec<u64> = rows
        .iter()
        .filter_map(|r| r.extra.get("terminals")?.as_u64())
        .collect();
    terminals.sort_unstable();
    terminals.dedup();
    let mut out = Vec::new();
    for t in terminals {
        let tps = |f: LatchFlavour| {
            rows.iter()
                .find(|r| {
                    r.extra.get("terminals").and_then(|v| v.as_u64()) == Some(t)
                        && r.variant == f.name()
                        && r.metric == "transactions_per_second"
                })
                .map(|r| r.value)
        };
        if let (Some(lc), Some(spin), Some(block)) = (
            tps(LatchFlavour::LoadControlled),
            tps(LatchFlavour::Spinning),
            tps(LatchFlavour::Blocking),
        ) {
            let better = spin.max(block);
            if better > 0.0 {
                out.push(row(
                    LatchFlavour::LoadControlled.name(),
                    t as usize,
                    "ratio_vs_better_of_spinning_blocking",
                    "x",
                    true,
                    lc / better,
                ));
            }
        }
    }
    out
}

/// One run of the mix on `db` with `flavour` latches; fails on an error or a
/// consistency violation afterwards.
fn run_once(
    db: &maestro_tpcc::Database,
    load: &maestro_tpcc::LoadReport,
    contexts: usize,
    params: &LatchesParams,
    (flavour, terminals): (LatchFlavour, usize),
) -> Result<Measured, String> {
    let mut config = RunConfig::new(terminals, params.duration, params.mode, load.constants);
    config.contexts = contexts;
    config.seed = params.seed ^ (terminals as u64) << 32;
    config.latch = flavour;
    let c0 = process_cpu_times();
    let t0 = Instant::now();
    let report = driver::run(db, &config, &|_| {}).map_err(|e| e.to_string())?;
    let wall = t0.elapsed().as_secs_f64();
    let c1 = process_cpu_times();
    let cpu = (c1.user + c1.system).saturating_sub(c0.user + c0.system);
    let violations = maestro_tpcc::check_consistency(db);
    if !violations.is_empty() {
        let shown: Vec<String> = violations.iter().take(5).map(ToString::to_string).collect();
        return Err(format!(
            "{} consistency violation(s): {}",
            violations.len(),
            shown.join("; ")
        ));
    }
    Ok(Measured {
        flavour,
        terminals,
        report,
        cpu_utilisation: cpu.as_secs_f64() / (wall * contexts as f64).max(1e-9),
        voluntary_switches: c1.voluntary_switches.saturating_sub(c0.voluntary_switches),
        involuntary_switches: c1
            .involuntary_switches
            .saturating_sub(c0.involuntary_switches),
    })
}

/// Runs `latches` on `contexts` contexts. `progress` gets one line per run.
pub fn run(
    contexts: usize,
    params: &LatchesParams,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Report, String> {
    params.validate()?;
    let contexts = contexts.max(1);
    let mut load_config = maestro_tpcc::LoadConfig::new(params.warehouses);
    load_config.seed = params.seed;
    load_config.threads = contexts;
    let (db, load) = maestro_tpcc::load(&load_config, &|_| {}).map_err(|e| e.to_string())?;
    let load_seconds = load.elapsed.as_secs_f64();
    progress(&format!(
        "TPC-C W={} loaded in {load_seconds:.2} s",
        params.warehouses
    ));
    let mut results = Vec::new();
    let mut log = String::new();
    for (i, &t) in params.terminals.iter().enumerate() {
        // Start one flavour later per terminal count too, to spread the
        // database's growth over the flavours even with one repetition.
        let n = params.flavours.len();
        let flavours: Vec<LatchFlavour> = (0..n).map(|j| params.flavours[(i + j) % n]).collect();
        let mut per_rep = crate::reps::repeat(&flavours, params.reps, |&flavour, rep| {
            let m = run_once(&db, &load, contexts, params, (flavour, t))
                .map_err(|e| format!("bench latches, {flavour} at {t} terminals: {e}"))?;
            let r = &m.report;
            progress(&format!(
                "T={t:<3} rep {}/{} {:<16} {:>9.0} tx/s  tpmC {:>9.0}  aborts {:.4}  waits {:>7}  \
                 latch contended {:>7}  blocked {:>7}  cpu {:.2}",
                rep + 1,
                params.reps,
                flavour.name(),
                r.transactions_per_second(),
                r.tpmc(),
                r.abort_rate(),
                r.locks.waits,
                r.locks.latch_contended,
                r.scheduler.as_ref().map_or(0, |s| s.blocked_events),
                m.cpu_utilisation
            ));
            log.push_str(&format!("{r}\n"));
            Ok(metric_rows(&m))
        })?;
        for rows in &mut per_rep {
            let ratios = ratio_rows(rows);
            rows.extend(ratios);
        }
        results.extend(crate::reps::aggregate(per_rep));
    }
    let chart = crate::chart_of(
        &results,
        "transactions_per_second",
        "terminals",
        "TPC-C throughput by latch flavour",
        "terminals",
        "transactions/s",
    )?;
    Ok(Report {
        experiment: "latches".into(),
        contexts,
        params: params.json(load_seconds),
        results,
        attachments: vec![
            ("latches-runs.txt".into(), log),
            ("latches.svg".into(), chart),
        ],
    })
}

/// A table for people: throughput per terminal count and flavour, and the
/// load-controlled ratio.
pub fn summary(report: &Report) -> String {
    let value = |case: &str, variant: &str, metric: &str| {
        report
            .results
            .iter()
            .find(|r| r.case == case && r.variant == variant && r.metric == metric)
            .map(|r| r.value)
    };
    let mut cases: Vec<(u64, String)> = report
        .results
        .iter()
        .filter_map(|r| {
            r.extra
                .get("terminals")?
                .as_u64()
                .map(|t| (t, r.case.clone()))
        })
        .collect();
    cases.sort();
    cases.dedup();
    let mut out = format!(
        "{:>9} {:>12} {:>12} {:>16} {:>8}   (tx/s; blocked events in brackets)\n",
        "terminals", "blocking", "spinning", "load-controlled", "lc/best"
    );
    for (t, case) in cases {
        let cell = |f: LatchFlavour| match (
            value(&case, f.name(), "transactions_per_second"),
            value(&case, f.name(), "blocked_events"),
        ) {
            (Some(tps), Some(b)) => format!("{tps:.0} ({b:.0})"),
            (Some(tps), None) => format!("{tps:.0}"),
            _ => "-".into(),
        };
        let ratio = value(
            &case,
            LatchFlavour::LoadControlled.name(),
            "ratio_vs_better_of_spinning_blocking",
        )
        .map_or_else(|| "-".into(), |r| format!("{r:.2}"));
        out.push_str(&format!(
            "{t:>9} {:>12} {:>12} {:>16} {ratio:>8}\n",
            cell(LatchFlavour::Blocking),
            cell(LatchFlavour::Spinning),
            cell(LatchFlavour::LoadControlled),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_counts_double_up_to_eight_times_the_contexts() {
        assert_eq!(LatchesParams::full(2).terminals, [1, 2, 4, 8, 16]);
        assert_eq!(LatchesParams::full(3).terminals, [1, 2, 4, 8, 16, 24]);
        assert_eq!(LatchesParams::full(1).terminals, [1, 2, 4, 8]);
        assert_eq!(LatchesParams::quick(2).terminals, [1, 2, 16]);
        assert_eq!(LatchesParams::quick(1).terminals, [1, 8]);
        let full = LatchesParams::full(2);
        assert_eq!(full.warehouses, 2);
        assert_eq!(full.duration, Duration::from_secs(10));
        assert_eq!(full.flavours, LatchFlavour::ALL);
        assert_eq!(full.mode, Mode::Scheduler(Preset::SinglePool));
        assert!(LatchesParams::quick(2).duration <= Duration::from_secs(1));
    }

    #[test]
    fn bad_parameters_are_errors() {
        let p = LatchesParams::quick(2);
        let none = |_: &str| {};
        for bad in [
            LatchesParams {
                terminals: vec![],
                ..p.clone()
            },
            LatchesParams {
                terminals: vec![1, 0],
                ..p.clone()
            },
            LatchesParams {
                flavours: vec![],
                ..p.clone()
            },
            LatchesParams {
                warehouses: 0,
                ..p.clone()
            },
            LatchesParams {
                duration: Duration::ZERO,
                ..p.clone()
            },
        ] {
            assert!(run(2, &bad, &none).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_short_run_has_every_flavour_metric_and_the_ratio() {
        let params = LatchesParams {
            warehouses: 1,
            terminals: vec![1, 3],
            duration: Duration::from_millis(300),
            ..LatchesParams::quick(2)
        };
        let lines = std::sync::atomic::AtomicUsize::new(0);
        let r = run(2, &params, &|l| {
            eprintln!("{l}");
            lines.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        })
        .unwrap();
        // One line for the load, one per run.
        assert_eq!(lines.into_inner(), 1 + 2 * 3);
        assert_eq!(r.experiment, "latches");
        for t in [1usize, 3] {
            for f in LatchFlavour::ALL {
                for metric in [
                    "transactions_per_second",
                    "tpmC",
                    "abort_rate",
                    "lock_waits",
                    "blocked_events",
                    "cpu_utilisation",
                ] {
                    let row = r
                        .results
                        .iter()
                        .find(|x| {
                            x.case == format!("terminals_{t}")
                                && x.variant == f.name()
                                && x.metric == metric
                        })
                        .unwrap_or_else(|| panic!("missing {f}/{t}/{metric}"));
                    assert!(row.value.is_finite() && row.value >= 0.0, "{row:?}");
                    assert_eq!(row.extra["terminals"], json!(t));
                    assert_eq!(row.extra["flavour"], json!(f.name()));
                }
            }
            assert!(r.results.iter().any(|x| x.case == format!("terminals_{t}")
                && x.metric == "ratio_vs_better_of_spinning_blocking"));
        }
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["params"]["terminals"], json!([1, 3]));
        assert_eq!(json["results"][0]["terminals"], json!(1));
        assert_eq!(r.attachments.len(), 2);
        let table = summary(&r);
        assert_eq!(table.lines().count(), 3, "{table}");
    }

    /// The measured numbers: `cargo test --release -p maestro-bench
    /// latches::tests::numbers -- --ignored --nocapture` (W = 2, terminals
    /// 1–16, 5 s per run; `MAESTRO_LATCHES_SECONDS` overrides the length,
    /// `MAESTRO_LATCHES_MODE` the mode, e.g. `receivers`).
    #[test]
    #[ignore = "long-running benchmark; run in release"]
    fn numbers() {
        let contexts = maestro_scheduler::detected_contexts();
        let seconds: f64 = std::env::var("MAESTRO_LATCHES_SECONDS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(5.0);
        let mode = std::env::var("MAESTRO_LATCHES_MODE")
            .map_or(Ok(Mode::Scheduler(Preset::SinglePool)), |m| m.parse())
            .unwrap();
        let params = LatchesParams {
            terminals: vec![1, 2, 4, 8, 16],
            duration: Duration::from_secs_f64(seconds),
            mode,
            ..LatchesParams::full(contexts)
        };
        let r = run(contexts, &params, &|l| eprintln!("{l}")).unwrap();
        println!("{}", summary(&r));
        println!("{}", r.table());
        println!("{}", serde_json::to_string(&r).unwrap());
    }
}
