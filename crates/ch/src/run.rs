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
//! With [`OlapEngine::Sql`] a client runs the query's SQL text
//! (`crates/ch/sql/`) through the SQL engine on the column mirror
//! (`crate::columns`): column mains plus the deltas the change journals
//! give, the engine's operators split into scheduler tasks at the default
//! priority; a background loop merges the mirror's due tables as
//! default-priority scheduler jobs until the deadline
//! ([`crate::columns::ColumnMirror::merge_until`]).
//!
//! Stopping: the terminals stop after the duration (the driver's rule); the
//! clients finish the query they are in after the same deadline, and only
//! queries completed by then count. Freshness is a query's snapshot age when
//! it completed: how old the newest data it could see was.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use maestro_execution::{Executor, Granularity};

use maestro_scheduler::Scheduler;
use maestro_tpcc::TpccError;
use maestro_tpcc::driver::{
    self, Histogram, LatencySummary, Mode, RunConfig, RunProgress, RunReport, Storage,
};

use crate::columns::{ColumnMirror, HeapRelease, MirrorStats, run_sql};
use crate::db::ChDatabase;
use crate::queries::QUERIES;

const MIB: f64 = 1024.0 * 1024.0;

/// What runs the analytical queries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OlapEngine {
    /// The hand-written plans over MVCC row scans (`crate::queries`), one
    /// scheduler job per query.
    Plans,
    /// The SQL texts on the column mirror, parallel operators.
    Sql,
}

impl OlapEngine {
    pub fn name(self) -> &'static str {
        match self {
            OlapEngine::Plans => "plans",
            OlapEngine::Sql => "sql",
        }
    }
}

/// A run's parameters: the TPC-C driver's, plus the analytical clients.
#[derive(Debug, Clone)]
pub struct ChRunConfig {
    pub tpcc: RunConfig,
    pub olap_clients: usize,
    pub olap_engine: OlapEngine,
    /// What the column mirror's merge loop does with freed mains (SQL
    /// engine).
    pub heap_release: HeapRelease,
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
    pub olap_engine: OlapEngine,
    /// The column mirror's merges and time (SQL engine).
    pub mirror: MirrorStats,
    /// Rows the queries' deltas were built from, summed over the queries
    /// (SQL engine).
    pub delta_rows: u64,
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
            "analytical ({}): {} clients, {} queries in {:.2} s = {:.0} queries/hour; freshness p50 {:.1} ms, max {:.1} ms",
            self.olap_engine.name(),
            self.olap_clients,
            self.queries_completed(),
            self.elapsed.as_secs_f64(),
            self.queries_per_hour(),
            ms(self.freshness.p50),
            ms(self.freshness.max)
        )?;
        if self.olap_engine == OlapEngine::Sql {
            let queries = self.queries_completed().max(1);
            writeln!(
                f,
                "column mirror: {} table merges in {:.2} s, deltas of {:.0} rows per query on average built in {:.2} s; mains {:.1} MiB, newest deltas {:.1} MiB at the end",
                self.mirror.merges,
                self.mirror.merge_seconds,
                self.delta_rows as f64 / queries as f64,
                self.mirror.delta_seconds,
                self.mirror.main_bytes as f64 / MIB,
                self.mirror.delta_bytes as f64 / MIB
            )?;
        }
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
        Mode::Scheduler(_) => Some(Arc::new(
            Scheduler::with_preset(config.tpcc.mode.name(), config.tpcc.contexts).map_err(|e| {
                TpccError::InvalidOption {
                    option: "variant",
                    reason: e.to_string(),
                }
            })?,
        )),
        Mode::Receivers => None,
    };
    let sql = match (config.olap_engine, &scheduler) {
        (OlapEngine::Plans, _) => None,
        (OlapEngine::Sql, None) => {
            return Err(TpccError::InvalidOption {
                option: "olap-engine",
                reason: "the SQL engine runs its operators on the scheduler: choose a scheduler variant, not receivers".into(),
            });
        }
        (OlapEngine::Sql, Some(s)) => {
            // Before the terminals start: the journals must see every write
            // after the mains' snapshot.
            let mirror = ColumnMirror::new(db).map_err(|reason| TpccError::InvalidOption {
                option: "olap-engine",
                reason,
            })?;
            let exec = Executor::new(Arc::clone(s), Granularity::Hint);
            Some(SqlEngine {
                mirror,
                exec,
                delta_rows: AtomicU64::new(0),
            })
        }
    };
    let sql = sql.as_ref();
    let scheduler = scheduler.as_deref();
    let start = Instant::now();
    let deadline = start + config.tpcc.duration;
    let failed = AtomicBool::new(false);
    let (tpcc, tallies, merged) = std::thread::scope(|s| {
        let clients: Vec<_> = (0..config.olap_clients)
            .map(|c| {
                let failed = &failed;
                s.spawn(move || client(db, scheduler, sql, c, deadline, failed))
            })
            .collect();
        let merger = sql.zip(scheduler).map(|(engine, sched)| {
            let failed = &failed;
            s.spawn(move || {
                engine
                    .mirror
                    .merge_until(db, sched, failed, Some(deadline), config.heap_release)
                    .map_err(|reason| TpccError::InvalidOption {
                        option: "olap-engine",
                        reason,
                    })
            })
        });
        let tpcc =
            driver::run_on_storage(Storage::Mvcc(&db.tpcc), &config.tpcc, scheduler, progress);
        if tpcc.is_err() {
            failed.store(true, Ordering::Relaxed);
        }
        let tallies: Vec<Result<ClientTally, TpccError>> = clients
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect();
        let merged = merger.map_or(Ok(()), |h| {
            h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
        });
        (tpcc, tallies, merged)
    });
    let tpcc = tpcc?;
    merged?;
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
        olap_engine: config.olap_engine,
        mirror: sql.map_or_else(MirrorStats::default, |e| e.mirror.stats()),
        delta_rows: sql.map_or(0, |e| e.delta_rows.load(Ordering::Relaxed)),
    })
}

/// The SQL engine's state for a run.
struct SqlEngine {
    mirror: ColumnMirror,
    exec: Executor,
    delta_rows: AtomicU64,
}

impl SqlEngine {
    /// Runs query `number` on a fresh view; returns the snapshot's age at
    /// the end.
    fn query(&self, db: &ChDatabase, number: u8) -> Result<Duration, TpccError> {
        let failed = |reason: String| TpccError::InvalidOption {
            option: "olap-engine",
            reason,
        };
        let view = self.mirror.view(db).map_err(failed)?;
        let answer = run_sql(&self.exec, &view, number, 0).map_err(failed)?;
        std::hint::black_box(answer);
        self.delta_rows
            .fetch_add(view.delta_rows() as u64, Ordering::Relaxed);
        Ok(view.taken_at().elapsed())
    }
}

/// Client `c`: queries in turn from query `c`, each on a fresh snapshot,
/// until the deadline (or a failure elsewhere).
fn client(
    db: &ChDatabase,
    scheduler: Option<&Scheduler>,
    sql: Option<&SqlEngine>,
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
        let age = match (scheduler, sql) {
            (Some(_), Some(engine)) => engine.query(db, query.number),
            (Some(s), None) => s.install(run),
            (None, _) => run(),
        }?;
        if Instant::now() <= deadline {
            tally.latency[next].record(started.elapsed());
            tally.freshness.record(age);
        }
        next = (next + 1) % QUERIES.len();
    }
    Ok(tally)
}
