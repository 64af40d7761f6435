//! `ch run`: TPC-C terminals and analytical clients on the same MVCC tables,
//! on one scheduler.
//!
//! The terminals are the TPC-C driver's (`maestro_tpcc::driver`, MVCC
//! storage): in a scheduler mode each transaction is an urgent scheduler job.
//! Each analytical client loops over the 22 queries (client `c`
//! starts at query `c`), taking a fresh snapshot per query, so every query
//! reads the data the terminals committed up to its start; in a scheduler
//! mode the query runs as one scheduler job at the default priority (below
//! the transactions), in `receivers` mode on the client's thread.
//!
//! Stopping: the terminals stop after the duration (the driver's rule); the
//! clients finish the query they are in after the same deadline, and only
//! queries completed by then count. Freshness is a query's snapshot age when
//! it completed: how old the newest data it could see was.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use maestro_scheduler::Scheduler;
use maestro_tpcc::TpccError;
use maestro_tpcc::driver::{
    self, Histogram, LatencySummary, Mode, RunConfig, RunProgress, RunReport, Storage,
};

use crate::db::ChDatabase;
use crate::queries::QUERIES;

/// A run's parameters: the TPC-C driver's, plus the analytical clients.
#[derive(Debug, Clone)]
pub struct ChRunConfig {
    pub tpcc: RunConfig,
    pub olap_clients: usize,
}

/// One query's results over the run.
#[derive(Debug, Clone)]
pub struct QueryReport {
    pub number: u8,
    pub latency: LatencySummary,
}

#[derive(Debug, Clone)]
pub struct ChReport {
    pub tpcc: RunReport,
    pub olap_clients: usize,
    /// From the start until the last client finished.
    pub elapsed: Duration,
    pub queries: Vec<QueryReport>,
    /// Snapshot age at each query's completion, over all queries.
    pub freshness: LatencySummary,
}

impl ChReport {
    pub fn queries_completed(&self) -> u64 {
        self.queries.iter().map(|q| q.latency.count).sum()
    }

    /// Analytical queries completed per hour.
    pub fn queries_per_hour(&self) -> f64 {
        3600.0 * self.queries_completed() as f64 / self.elapsed.as_secs_f64().max(f64::MIN_POSITIVE)
    }
}

impl std::fmt::Display for ChReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.tpcc)?;
        writeln!(
            f,
            "analytical: {} clients, {} queries in {:.2} s = {:.0} queries/hour; freshness p50 {:.1} ms, max {:.1} ms",
            self.olap_clients,
            self.queries_completed(),
            self.elapsed.as_secs_f64(),
            self.queries_per_hour(),
            ms(self.freshness.p50),
            ms(self.freshness.max)
        )?;
        writeln!(
            f,
            "{:<6} {:>7} {:>10} {:>10} {:>10}",
            "query", "count", "p50 ms", "p90 ms", "max ms"
        )?;
        for q in &self.queries {
            let l = &q.latency;
            writeln!(
                f,
                "{:<6} {:>7} {:>10.2} {:>10.2} {:>10.2}",
                format!("Q{}", q.number),
                l.count,
                ms(l.p50),
                ms(l.p90),
                ms(l.max)
            )?;
        }
        Ok(())
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// One client's tallies: a histogram per query, and freshness.
struct ClientTally {
    latency: Vec<Histogram>,
    freshness: Histogram,
}

/// Runs the terminals and the clients as `config` says; `progress` as the
/// TPC-C driver calls it.
pub fn run(
    db: &ChDatabase,
    config: &ChRunConfig,
    progress: &(dyn Fn(&RunProgress) + Sync),
) -> Result<ChReport, TpccError> {
    let scheduler = match config.tpcc.mode {
        Mode::Scheduler(_) => Some(
            Scheduler::with_preset(config.tpcc.mode.name(), config.tpcc.contexts).map_err(|e| {
                TpccError::InvalidOption {
                    option: "variant",
                    reason: e.to_string(),
                }
            })?,
        ),
        Mode::Receivers => None,
    };
    let scheduler = scheduler.as_ref();
    let start = Instant::now();
    let deadline = start + config.tpcc.duration;
    let failed = AtomicBool::new(false);
    let (tpcc, tallies) = std::thread::scope(|s| {
        let clients: Vec<_> = (0..config.olap_clients)
            .map(|c| {
                let failed = &failed;
                s.spawn(move || client(db, scheduler, c, deadline, failed))
            })
            .collect();
        let tpcc =
            driver::run_on_storage(Storage::Mvcc(&db.tpcc), &config.tpcc, scheduler, progress);
        if tpcc.is_err() {
            failed.store(true, Ordering::Relaxed);
        }
        let tallies: Vec<Result<ClientTally, TpccError>> = clients
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect();
        (tpcc, tallies)
    });
    let tpcc = tpcc?;
    let elapsed = start.elapsed();
    let mut latency: Vec<Histogram> = QUERIES.iter().map(|_| Histogram::default()).collect();
    let mut freshness = Histogram::default();
    for tally in tallies {
        let tally = tally?;
        for (all, one) in latency.iter_mut().zip(&tally.latency) {
            all.merge(one);
        }
        freshness.merge(&tally.freshness);
    }
    Ok(ChReport {
        tpcc,
        olap_clients: config.olap_clients,
        elapsed,
        queries: QUERIES
            .iter()
            .zip(&latency)
            .map(|(q, h)| QueryReport {
                number: q.number,
                latency: h.summary(),
            })
            .collect(),
        freshness: freshness.summary(),
    })
}

/// Client `c`: queries in turn from query `c`, each on a fresh snapshot,
/// until the deadline (or a failure elsewhere).
fn client(
    db: &ChDatabase,
    scheduler: Option<&Scheduler>,
    c: usize,
    deadline: Instant,
    failed: &AtomicBool,
) -> Result<ClientTally, TpccError> {
    let mut tally = ClientTally {
        latency: QUERIES.iter().map(|_| Histogram::default()).collect(),
        freshness: Histogram::default(),
    };
    let mut next = c % QUERIES.len().max(1);
    while Instant::now() < deadline && !failed.load(Ordering::Relaxed) && !QUERIES.is_empty() {
        let query = QUERIES[next];
        let started = Instant::now();
        let run = || -> Result<Duration, TpccError> {
            let snap = db.snapshot()?;
            let answer = (query.run)(&snap);
            std::hint::black_box(answer);
            Ok(snap.taken_at.elapsed())
        };
        let age = match scheduler {
            Some(s) => s.install(run),
            None => run(),
        }?;
        if Instant::now() <= deadline {
            tally.latency[next].record(started.elapsed());
            tally.freshness.record(age);
        }
        next = (next + 1) % QUERIES.len();
    }
    Ok(tally)
}
