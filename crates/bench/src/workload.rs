//! The `workload` experiment (issue 13, part 6): TPC-C terminals at a fixed
//! total rate beside TPC-H clients ramped from 0 to 4 × contexts, with and
//! without workload classes, on one scheduler (`single-hints`).
//!
//! - `no-classes`: today's engine: transactions at the urgent priority
//!   (within the urgent share), queries at the default one.
//! - `classes`: transactions in class `oltp` (weight [`OLTP_WEIGHT`],
//!   urgent priority), queries in `olap` (weight [`OLAP_WEIGHT`], at most
//!   `max(1, contexts / 2)` tasks per operator, admission control).
//!
//! Per (variant, OLAP clients), `reps` rotated repetitions; rows are medians
//! with min–max: New-Order latency p50/p99 (submission to commit, the
//! OLTP latency the issue asks for), tpmC, TPC-H queries per minute.
//! In `classes`, queries pass admission control ([`olap_admission`]): rows
//! `admitted`, `queued`, `rejected` count them (0 without classes). A burst
//! is a point with many clients (`--olap-clients 40` is 10 × the 4 × contexts
//! load on 2 contexts); every submitted query completes or is rejected
//! (checked by `run_workload`).

use std::time::Duration;

use maestro_tpcc::txn::TxnKind;
use serde_json::json;

use crate::mixed::{Databases, MixedConfig, MixedOutcome, Workload, WorkloadClasses, load_both};
use crate::mixed_bench::{check_variants, grouped_by_variant, point_row, run_consistent};
use crate::{Report, ResultRow};

/// The experiment's variants.
pub const VARIANTS: [&str; 2] = ["no-classes", "classes"];

/// Weight of the transactional class (guessed: transactions are short, so a
/// large weight costs the analytical class little while keeping their wait
/// short).
pub const OLTP_WEIGHT: u32 = 4;
/// Weight of the analytical class.
pub const OLAP_WEIGHT: u32 = 1;

/// Parameters of `workload`.
#[derive(Clone, Debug)]
pub struct WorkloadParams {
    pub sf: f64,
    pub warehouses: u16,
    pub olap_clients: Vec<usize>,
    pub tpcc_terminals: usize,
    /// TPC-C transactions per second in total, spread over the terminals.
    pub tpcc_rate: f64,
    pub duration: Duration,
    pub variants: Vec<String>,
    pub seed: u64,
    pub reps: usize,
}

impl WorkloadParams {
    /// The README's scale.
    pub fn full(contexts: usize) -> WorkloadParams {
        WorkloadParams {
            sf: 0.1,
            warehouses: 2,
            olap_clients: vec![0, contexts, 2 * contexts, 4 * contexts],
            tpcc_terminals: 2 * contexts,
            // Guessed: well below what 2 contexts sustain alone (~10k/s), so
            // latency measures waiting for the scheduler, not saturation.
            tpcc_rate: 1000.0,
            duration: Duration::from_secs(8),
            variants: VARIANTS.map(String::from).to_vec(),
            seed: 1,
            reps: crate::reps::default_reps(false),
        }
    }

    /// Seconds per run (CI).
    pub fn quick(contexts: usize) -> WorkloadParams {
        WorkloadParams {
            sf: 0.02,
            olap_clients: vec![0, 2 * contexts],
            duration: Duration::from_millis(1500),
            reps: crate::reps::default_reps(true),
            ..WorkloadParams::full(contexts)
        }
    }

    fn check(&self) -> Result<(), String> {
        check_variants(&self.variants, &VARIANTS)?;
        if self.olap_clients.is_empty()
            || self.duration.is_zero()
            || self.warehouses == 0
            || self.tpcc_terminals == 0
        {
            return Err(
                "need OLAP client counts, a positive duration, warehouses and terminals".into(),
            );
        }
        if !(self.tpcc_rate > 0.0 && self.tpcc_rate.is_finite()) {
            return Err(format!(
                "the TPC-C rate must be positive, not {}",
                self.tpcc_rate
            ));
        }
        Ok(())
    }
}

fn one_run(
    dbs: &Databases,
    p: &WorkloadParams,
    contexts: usize,
    variant: &str,
    clients: usize,
) -> Result<MixedOutcome, String> {
    let mut config = MixedConfig::new(
        "single-hints",
        contexts,
        clients,
        p.tpcc_terminals,
        p.duration,
        p.seed,
    );
    config.tpcc_max_tps = Some(p.tpcc_rate);
    if variant == "classes" {
        config.classes = Some(WorkloadClasses {
            oltp_weight: OLTP_WEIGHT,
            olap_weight: OLAP_WEIGHT,
            olap_max_parallelism: Some((contexts / 2).max(1)),
            olap_admission: Some(olap_admission(contexts)),
        });
    }
    run_consistent(
        Workload::Disjoint(dbs),
        &config,
        &format!("{variant}, {clients} OLAP clients"),
    )
}

/// The `classes` variant's admission limits for queries: as many running
/// as contexts, up to 4 × contexts waiting at most 10 s (guessed: a burst of
/// clients queues instead of flooding the scheduler; the wait is far above
/// a query at SF 0.1), queueing above a load of 1.5 and rejecting above 4.
pub fn olap_admission(contexts: usize) -> maestro_scheduler::AdmissionLimits {
    maestro_scheduler::AdmissionLimits {
        max_running: contexts,
        queue_max: 4 * contexts,
        queue_wait_max: Duration::from_secs(10),
        queue_above_load: 1.5,
        reject_above_load: 4.0,
        // No memory budget is set in this experiment: unused.
        ..maestro_scheduler::AdmissionLimits::new(contexts)
    }
}

fn row(variant: &str, clients: usize, metric: &str, value: f64, unit: &str) -> ResultRow {
    point_row("olap_clients", variant, clients, metric, value, unit)
}

/// `workload`: OLTP latency and both throughputs per (variant, OLAP clients).
pub fn workload(
    contexts: usize,
    p: &WorkloadParams,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Report, String> {
    p.check()?;
    let dbs = load_both(p.sf, p.warehouses, contexts, progress)?;
    let mut per_point = Vec::new();
    for &clients in &p.olap_clients {
        let per_rep = crate::reps::repeat(&p.variants, p.reps, |variant, rep| {
            let o = one_run(&dbs, p, contexts, variant, clients)?;
            let report = o.tpcc_report.as_ref().ok_or("the TPC-C part did not run")?;
            let new_order = report.kind(TxnKind::NewOrder).latency;
            let ms = |d: Duration| d.as_secs_f64() * 1e3;
            progress(&format!(
                "{variant}, {clients} OLAP clients, rep {}/{}: New-Order p50 {:.2} ms p99 {:.2} ms, {:.0} tpmC, {:.0} queries/min",
                rep + 1,
                p.reps,
                ms(new_order.p50),
                ms(new_order.p99),
                o.tpmc,
                o.tpch_queries_per_minute
            ));
            let r = |m: &str, v: f64, u: &str| row(variant, clients, m, v, u);
            Ok(vec![
                r("oltp_p50_ms", ms(new_order.p50), "ms"),
                r("oltp_p99_ms", ms(new_order.p99), "ms"),
                r("tpmC", o.tpmc, "new-orders/min"),
                r(
                    "tpch_queries_per_minute",
                    o.tpch_queries_per_minute,
                    "queries/min",
                ),
                r("cpu_idle", o.cpu_idle, "fraction"),
                r("admitted", o.tpch_admitted as f64, "queries"),
                r("queued", o.tpch_queued as f64, "queries"),
                r("rejected", o.tpch_rejected as f64, "queries"),
            ])
        })?;
        per_point.push(crate::reps::aggregate(per_rep));
    }
    let results = grouped_by_variant(&p.variants, &per_point);
    let attachments = vec![(
        "workload-oltp-p99.svg".to_string(),
        crate::chart_of(
            &results,
            "oltp_p99_ms",
            "olap_clients",
            "New-Order p99 beside TPC-H clients (median, min–max)",
            "OLAP (TPC-H) clients",
            "ms",
        )?,
    )];
    Ok(Report {
        experiment: "workload".into(),
        contexts,
        params: json!({
            "sf": p.sf, "warehouses": p.warehouses, "olap_clients": p.olap_clients,
            "tpcc_terminals": p.tpcc_terminals, "tpcc_rate_per_s": p.tpcc_rate,
            "seconds": p.duration.as_secs_f64(), "reps": p.reps,
            "oltp_weight": OLTP_WEIGHT, "olap_weight": OLAP_WEIGHT,
            "olap_max_parallelism": (contexts / 2).max(1),
            "olap_admission": format!("{:?}", olap_admission(contexts)),
        }),
        results,
        attachments,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_parameters_are_refused_with_a_reason() {
        let ok = WorkloadParams::quick(2);
        assert!(ok.check().is_ok());
        let bad = WorkloadParams {
            variants: vec!["classes".into(), "strict".into()],
            ..ok.clone()
        };
        assert!(
            bad.check()
                .unwrap_err()
                .contains("unknown variant \"strict\"")
        );
        for bad in [
            WorkloadParams {
                tpcc_rate: 0.0,
                ..ok.clone()
            },
            WorkloadParams {
                tpcc_rate: f64::NAN,
                ..ok.clone()
            },
            WorkloadParams {
                olap_clients: vec![],
                ..ok.clone()
            },
            WorkloadParams {
                tpcc_terminals: 0,
                ..ok.clone()
            },
        ] {
            assert!(bad.check().is_err(), "{bad:?}");
        }
    }
}
