//! The main job's summary and report: plain text for the terminal, and with
//! `--out` a JSON file, a Markdown report and its SVG charts (throughput over
//! time, and the scheduler's workers and hint over time).

use std::fmt::Write as _;
use std::path::Path;

use crate::mixed::MixedOutcome;
use crate::plot::{Series, line_chart, timeline_series};

/// What the run was asked to do (for the report's header).
#[derive(Clone, Debug, serde::Serialize)]
pub struct RunSetup {
    /// TPC-H's scale factor (the disjoint workload; `None` for CH).
    pub sf: Option<f64>,
    pub warehouses: u16,
    pub contexts: usize,
    pub seed: u64,
    pub load_seconds: f64,
}

/// The summary printed at the end of `maestro run`.
/// The analytical side's name in reports.
fn analytical(o: &MixedOutcome) -> &'static str {
    if o.workload == "ch" { "CH" } else { "TPC-H" }
}

pub fn summary(setup: &RunSetup, o: &MixedOutcome) -> String {
    let mut s = String::new();
    let data = match setup.sf {
        Some(sf) => format!(
            "TPC-H SF {sf} × {} clients, TPC-C W={} × {} terminals (disjoint data)",
            o.tpch_clients, setup.warehouses, o.tpcc_terminals
        ),
        None => format!(
            "CH-benCHmark W={} on shared MVCC data: {} analytical clients, {} TPC-C terminals",
            setup.warehouses, o.tpch_clients, o.tpcc_terminals
        ),
    };
    let _ = writeln!(
        s,
        "maestro run: {} on {} contexts, {:.1} s — {data}",
        o.variant, setup.contexts, o.elapsed_s,
    );
    let _ = writeln!(
        s,
        "  {:<5}  {:>10.1} queries/min   {} queries{}",
        analytical(o),
        o.tpch_queries_per_minute,
        o.tpch_queries,
        o.tpch_latency.as_ref().map_or(String::new(), |l| format!(
            "   p50 {:.3} s   p99 {:.3} s",
            l.p50_s, l.p99_s
        ))
    );
    let _ = writeln!(
        s,
        "  TPC-C  {:>10.0} tpmC          {:.0} transactions/s   abort rate {:.4}",
        o.tpmc, o.tpcc_transactions_per_second, o.tpcc_abort_rate
    );
    let _ = writeln!(
        s,
        "  CPU    user {:.0} %   system {:.0} %   idle {:.0} %   context switches {} voluntary, {} involuntary",
        o.cpu_user * 100.0,
        o.cpu_system * 100.0,
        o.cpu_idle * 100.0,
        o.voluntary_context_switches,
        o.involuntary_context_switches
    );
    if let (Some(tasks), Some(peak), Some(blocked)) =
        (o.scheduler_tasks, o.workers_peak, o.blocked_events)
    {
        let _ = writeln!(
            s,
            "  scheduler  {tasks} tasks   peak {peak} workers   {blocked} blocked events"
        );
    }
    let _ = writeln!(
        s,
        "  TPC-C consistency conditions 1-4: {}",
        if o.consistency_violations.is_empty() {
            "ok".to_string()
        } else {
            o.consistency_violations.join("; ")
        }
    );
    s
}

/// Writes `report.json`, `report.md`, `throughput.svg` and (scheduler
/// variants) `workers.svg` into `dir`; returns the file names.
pub fn write(dir: &Path, setup: &RunSetup, o: &MixedOutcome) -> Result<Vec<String>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let write = |name: &str, body: &str| {
        std::fs::write(dir.join(name), body).map_err(|e| format!("{}/{name}: {e}", dir.display()))
    };
    let json = serde_json::json!({"experiment": "run", "setup": setup, "outcome": o});
    write("report.json", &json.to_string())?;
    let mut files = vec!["report.json".to_string()];
    let per_s = |f: fn(&crate::mixed::LiveSample) -> f64| -> Vec<(f64, f64)> {
        o.live.iter().map(|l| (l.elapsed_s, f(l))).collect()
    };
    let throughput = line_chart(
        "throughput over time (per second)",
        "seconds",
        "per minute",
        &[
            Series {
                name: if o.workload == "ch" {
                    "CH queries/min"
                } else {
                    "TPC-H queries/min"
                },
                points: per_s(|l| l.tpch_queries_per_minute),
                spread: Vec::new(),
            },
            Series {
                name: "TPC-C tpmC / 1000",
                points: per_s(|l| l.tpmc / 1000.0),
                spread: Vec::new(),
            },
        ],
    )?;
    write("throughput.svg", &throughput)?;
    files.push("throughput.svg".into());
    if !o.timeline.is_empty() {
        let workers = line_chart(
            &format!("{}: workers and hint (watchdog samples)", o.variant),
            "seconds",
            "workers",
            &timeline_series(&o.timeline),
        )?;
        write("workers.svg", &workers)?;
        files.push("workers.svg".into());
    }
    let mut md = format!(
        "# Maestro mixed HTAP run\n\n```\n{}```\n\n",
        summary(setup, o)
    );
    md.push_str("## Throughput over time\n\n![throughput](throughput.svg)\n\n");
    if files.iter().any(|f| f == "workers.svg") {
        md.push_str("## Scheduler: workers and concurrency hint\n\n![workers](workers.svg)\n\n");
    }
    let data = match setup.sf {
        Some(sf) => format!("TPC-H SF {sf} and TPC-C W={} (disjoint)", setup.warehouses),
        None => format!("CH-benCHmark W={} (shared MVCC data)", setup.warehouses),
    };
    md.push_str(&format!(
        "Setup: {data}, {} contexts, seed {}, load {:.2} s. Raw data: `report.json`.\n",
        setup.contexts, setup.seed, setup.load_seconds
    ));
    write("report.md", &md)?;
    files.push("report.md".into());
    Ok(files)
}
