//! The mixed HTAP workload: TPC-H clients (each running the spec's stream
//! order with random parameters, back to back) and TPC-C terminals on one
//! engine variant at the same time — the main job (`maestro run`) and the
//! `mixed` and `timeline` experiments (ADMS 2013 §7, figures 6–8).
//!
//! Two workloads ([`Workload`]): *disjoint* data (TPC-H on the column store,
//! TPC-C on its 2PL row tables; `bench mixed`, the papers' experiments) and
//! *shared* data (CH-benCHmark: TPC-C on the MVCC tables, the analytical
//! clients running the CH queries on snapshots of the same tables; the main
//! job's default). The analytical side's numbers keep the `tpch_` names in
//! the outcome; `workload` says which queries they count.
//!
//! On the scheduler presets both workloads share one scheduler: queries'
//! operators and transactions are its tasks. On the pool baselines
//! (`multiple-pools`, `rayon`) queries run on their pools and transactions on
//! the terminals' own threads (receivers), as in the papers' baseline.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use maestro_ch::columns::{ColumnMirror, HeapRelease};
use maestro_ch::run::OlapEngine;
use maestro_scheduler::{ClassId, ClassSpec, Scheduler, SchedulerStats, TimelineSample};
use maestro_tpcc::driver::{self, Mode, RunConfig, RunProgress, RunReport};
use maestro_tpch::queries::{QueryParams, run_profiled, stream_order};
use serde::Serialize;

use crate::class_run::REJECTED_BACKOFF;
use crate::cpu::process_cpu_times;
use crate::tpch::{Latency, engine, start_scheduler};

/// Both databases, loaded once and shared by every run.
pub struct Databases {
    pub tpch: maestro_tpch::Database,
    pub tpcc: maestro_tpcc::Database,
    pub tpcc_load: maestro_tpcc::LoadReport,
    pub load_seconds: f64,
}

/// Loads TPC-H at `sf` and TPC-C with `warehouses` warehouses.
pub fn load_both(
    sf: f64,
    warehouses: u16,
    contexts: usize,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Databases, String> {
    let start = Instant::now();
    let scheduler = start_scheduler("single-hints", contexts)?;
    let (tpch, _) = crate::tpch::load(&scheduler, sf, progress)?;
    progress(&format!("TPC-H SF {sf} loaded"));
    let mut config = maestro_tpcc::LoadConfig::new(warehouses);
    config.threads = contexts;
    let (tpcc, tpcc_load) = maestro_tpcc::load(&config, &|_| {}).map_err(|e| e.to_string())?;
    progress(&format!("TPC-C W={warehouses} loaded"));
    Ok(Databases {
        tpch,
        tpcc,
        tpcc_load,
        load_seconds: start.elapsed().as_secs_f64(),
    })
}

/// Which data a mixed run uses (what [`load_workload`] loads).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkloadKind {
    /// TPC-H at a scale factor beside TPC-C on its own tables.
    Disjoint,
    /// CH-benCHmark: TPC-C and its analytical queries on the same tables,
    /// run by `engine`.
    Ch(OlapEngine),
}

impl std::fmt::Display for WorkloadKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WorkloadKind::Disjoint => write!(f, "Disjoint"),
            WorkloadKind::Ch(engine) => write!(f, "Ch ({} engine)", engine.name()),
        }
    }
}

/// Loaded data for a [`Workload`].
pub enum LoadedWorkload {
    Disjoint(Box<Databases>),
    Ch {
        db: Box<maestro_ch::ChDatabase>,
        /// The column mirror the SQL engine reads (`None`: the hand-written
        /// plans); built right after the load, before any transaction.
        mirror: Option<Box<ColumnMirror>>,
        load_seconds: f64,
    },
}

impl LoadedWorkload {
    /// CH-benCHmark on `db` (loaded or opened, no transaction run since),
    /// its queries run by `engine`.
    pub fn ch(
        db: maestro_ch::ChDatabase,
        engine: OlapEngine,
        load_seconds: f64,
    ) -> Result<LoadedWorkload, String> {
        let mirror = match engine {
            OlapEngine::Plans => None,
            OlapEngine::Sql => Some(Box::new(ColumnMirror::new(&db)?)),
        };
        Ok(LoadedWorkload::Ch {
            db: Box::new(db),
            mirror,
            load_seconds,
        })
    }
}

impl LoadedWorkload {
    pub fn workload(&self) -> Workload<'_> {
        match self {
            LoadedWorkload::Disjoint(dbs) => Workload::Disjoint(dbs),
            LoadedWorkload::Ch { db, mirror, .. } => Workload::Shared(db, mirror.as_deref()),
        }
    }

    pub fn load_seconds(&self) -> f64 {
        match self {
            LoadedWorkload::Disjoint(dbs) => dbs.load_seconds,
            LoadedWorkload::Ch { load_seconds, .. } => *load_seconds,
        }
    }
}

/// Loads `kind`'s data: TPC-H at `sf` and TPC-C, or CH-benCHmark (`sf`
/// unused) with `warehouses` warehouses.
pub fn load_workload(
    kind: WorkloadKind,
    sf: f64,
    warehouses: u16,
    contexts: usize,
    seed: u64,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<LoadedWorkload, String> {
    match kind {
        WorkloadKind::Disjoint => load_both(sf, warehouses, contexts, progress)
            .map(|d| LoadedWorkload::Disjoint(Box::new(d))),
        WorkloadKind::Ch(engine) => {
            let start = Instant::now();
            let config = maestro_ch::ChConfig {
                warehouses,
                seed,
                clock_start: None,
            };
            let (db, _) =
                maestro_ch::ChDatabase::load(&config, &|_| {}).map_err(|e| e.to_string())?;
            progress(&format!(
                "CH-benCHmark W={warehouses} loaded (TPC-C on MVCC tables + supplier, nation, region)"
            ));
            LoadedWorkload::ch(db, engine, start.elapsed().as_secs_f64())
        }
    }
}

/// What the analytical clients query and where the transactions write.
#[derive(Clone, Copy)]
pub enum Workload<'a> {
    /// TPC-H on the column store beside TPC-C on its own 2PL tables.
    Disjoint(&'a Databases),
    /// CH-benCHmark: TPC-C and the CH queries on the same MVCC tables;
    /// with a column mirror, the queries are the SQL texts on it.
    Shared(&'a maestro_ch::ChDatabase, Option<&'a ColumnMirror>),
}

impl Workload<'_> {
    pub fn name(self) -> &'static str {
        match self {
            Workload::Disjoint(_) => "disjoint",
            Workload::Shared(_, None) => "ch",
            Workload::Shared(_, Some(_)) => "ch-sql",
        }
    }

    fn storage(&self) -> driver::Storage<'_> {
        match self {
            Workload::Disjoint(dbs) => driver::Storage::Locking(&dbs.tpcc),
            Workload::Shared(db, _) => driver::Storage::Mvcc(&db.tpcc),
        }
    }

    fn load_constants(&self) -> maestro_tpcc::NuRandConstants {
        match self {
            Workload::Disjoint(dbs) => dbs.tpcc_load.constants,
            Workload::Shared(db, _) => db.load_constants,
        }
    }

    /// Analytical query number `i` of client `c`: TPC-H in the spec's stream
    /// order with random parameters, or the CH queries in turn from query
    /// `c`, each on a fresh snapshot (one scheduler job on a preset).
    fn run_query(
        self,
        exec: &maestro_execution::Executor,
        shared: Option<&Scheduler>,
        (c, i, seed): (usize, u64, u64),
    ) -> Result<(), String> {
        match self {
            Workload::Disjoint(dbs) => {
                let order = stream_order(c + 1);
                let (round, q) = (
                    i / order.len() as u64,
                    order[(i % order.len() as u64) as usize],
                );
                let seed = seed ^ ((c as u64) << 32) ^ (round << 48);
                let p = QueryParams::random(q, dbs.tpch.scale_factor, seed)
                    .map_err(|e| e.to_string())?;
                run_profiled(exec, &dbs.tpch, &p)
                    .map(|_| ())
                    .map_err(|e| format!("TPC-H client {c} Q{q}: {e}"))
            }
            Workload::Shared(db, Some(mirror)) => {
                let queries = maestro_ch::QUERIES;
                let q = queries[(c + i as usize) % queries.len()];
                let view = mirror.view(db)?;
                maestro_ch::columns::run_sql(exec, &view, q.number, 0)
                    .map(std::hint::black_box)
                    .map(|_| ())
                    .map_err(|e| format!("CH client {c}: {e}"))
            }
            Workload::Shared(db, None) => {
                let queries = maestro_ch::QUERIES;
                let q = queries[(c + i as usize) % queries.len()];
                let run = || -> Result<(), maestro_tpcc::TpccError> {
                    let snap = db.snapshot()?;
                    std::hint::black_box((q.run)(&snap));
                    Ok(())
                };
                match shared {
                    Some(s) => s.install(run),
                    None => run(),
                }
                .map_err(|e| format!("CH client {c} Q{}: {e}", q.number))
            }
        }
    }

    /// Conditions 1–4 now (on one snapshot for the shared data).
    fn consistency_violations(self) -> Vec<String> {
        let violations = match self {
            Workload::Disjoint(dbs) => maestro_tpcc::check_consistency(&dbs.tpcc),
            Workload::Shared(db, _) => match db.tpcc.check_consistency() {
                Ok(v) => v,
                Err(e) => return vec![format!("checking consistency failed: {e}")],
            },
        };
        violations.iter().map(ToString::to_string).collect()
    }
}

/// One mixed run's shape.
#[derive(Clone, Debug)]
pub struct MixedConfig {
    pub variant: String,
    pub contexts: usize,
    pub tpch_clients: usize,
    pub tpcc_terminals: usize,
    pub duration: Duration,
    pub seed: u64,
    /// TPC-C transactions per second in total (`None`: as fast as they go).
    pub tpcc_max_tps: Option<f64>,
    /// Workload classes for the two workloads (scheduler presets only).
    pub classes: Option<WorkloadClasses>,
    /// On a data directory (CH workload): the terminals' checkpoint interval
    /// and acknowledgement log (`maestro_tpcc::driver::RunConfig`'s).
    pub checkpoint_interval: Option<Duration>,
    pub ack_log: Option<std::sync::Arc<maestro_tpcc::driver::AckLog>>,
}

impl MixedConfig {
    /// A run without rate limit or classes.
    pub fn new(
        variant: &str,
        contexts: usize,
        tpch_clients: usize,
        tpcc_terminals: usize,
        duration: Duration,
        seed: u64,
    ) -> MixedConfig {
        MixedConfig {
            variant: variant.to_string(),
            contexts,
            tpch_clients,
            tpcc_terminals,
            duration,
            seed,
            tpcc_max_tps: None,
            classes: None,
            checkpoint_interval: None,
            ack_log: None,
        }
    }
}

/// Two scheduler workload classes, one per workload (issue 13): transactions
/// in `oltp` (urgent priority), TPC-H queries in `olap`.
#[derive(Clone, Debug, Serialize)]
pub struct WorkloadClasses {
    pub oltp_weight: u32,
    pub olap_weight: u32,
    /// Tasks per operator of one query at most (`None`: no cap).
    pub olap_max_parallelism: Option<usize>,
    /// Admission control for the queries (`None`: every query runs at once).
    #[serde(skip)]
    pub olap_admission: Option<maestro_scheduler::AdmissionLimits>,
}

impl WorkloadClasses {
    /// Defines the two classes on `scheduler`: (oltp, olap).
    fn define(&self, scheduler: &Scheduler) -> Result<(ClassId, ClassId), String> {
        let oltp = scheduler
            .define_class(&ClassSpec {
                priority: maestro_scheduler::DEFAULT_PRIORITY + 1,
                ..ClassSpec::new("oltp", self.oltp_weight)
            })
            .map_err(|e| e.to_string())?;
        let olap = scheduler
            .define_class(&ClassSpec {
                max_parallelism: self.olap_max_parallelism,
                admission: self.olap_admission.clone(),
                ..ClassSpec::new("olap", self.olap_weight)
            })
            .map_err(|e| e.to_string())?;
        Ok((oltp, olap))
    }
}

/// What the live display shows once per second.
#[derive(Clone, Debug, Serialize)]
pub struct LiveSample {
    pub elapsed_s: f64,
    pub tpch_queries: usize,
    /// TPC-H queries per minute over the last second.
    pub tpch_queries_per_minute: f64,
    /// New-Orders per minute over the last second.
    pub tpmc: f64,
    /// The scheduler's last sample (scheduler presets only).
    pub active_workers: Option<usize>,
    pub hint: Option<usize>,
}

/// Thread seconds charged to the two workload classes of a run.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ClassThreadSeconds {
    pub oltp: f64,
    pub olap: f64,
    /// What the lag bound added to each class's service (s).
    pub oltp_raised: f64,
    pub olap_raised: f64,
}

/// A mixed run's results.
#[derive(Clone, Debug, Serialize)]
pub struct MixedOutcome {
    /// `disjoint` (TPC-H beside TPC-C) or `ch` (CH-benCHmark on shared data):
    /// which queries the `tpch_` fields count.
    pub workload: &'static str,
    pub variant: String,
    pub tpch_clients: usize,
    pub tpcc_terminals: usize,
    pub elapsed_s: f64,
    pub tpch_queries: usize,
    pub tpch_queries_per_minute: f64,
    pub tpch_latency: Option<Latency>,
    /// Queries admission control admitted, made wait, and rejected (with
    /// classes that have limits; else 0). Every query a client submitted
    /// either completed or was rejected (checked).
    pub tpch_admitted: u64,
    pub tpch_queued: u64,
    pub tpch_rejected: u64,
    /// With workload classes: the thread time each class ran over the run,
    /// and what the share's lag bound added to its service.
    pub class_thread_seconds: Option<ClassThreadSeconds>,
    pub tpmc: f64,
    pub tpcc_transactions_per_second: f64,
    pub tpcc_abort_rate: f64,
    /// CPU time of the process ÷ (wall × contexts), split.
    pub cpu_user: f64,
    pub cpu_system: f64,
    pub cpu_idle: f64,
    pub voluntary_context_switches: u64,
    pub involuntary_context_switches: u64,
    /// The shared scheduler's counters over the run (scheduler presets).
    pub scheduler_tasks: Option<u64>,
    pub workers_peak: Option<usize>,
    pub blocked_events: Option<u64>,
    /// How callers outside the pool ran their jobs, and how often workers slept
    /// and were woken, over the run (scheduler presets).
    pub dispatch: Option<Dispatch>,
    /// The watchdog's samples during the run (scheduler presets).
    pub timeline: Vec<TimelineSample>,
    pub live: Vec<LiveSample>,
    /// TPC-C consistency conditions 1–4 after the run (empty: all hold).
    pub consistency_violations: Vec<String>,
    #[serde(skip)]
    pub tpcc_report: Option<RunReport>,
}

/// The TPC-C mode of `variant`: transactions as tasks of a scheduler preset
/// (the preset names parse as modes), else on the terminals' threads (the
/// pool baselines).
fn tpcc_mode(variant: &str) -> Mode {
    variant.parse().unwrap_or(Mode::Receivers)
}

/// Runs `workload`'s analytical clients and TPC-C terminals together on
/// `config.variant`.
pub fn run_workload(
    workload: Workload<'_>,
    config: &MixedConfig,
    live: &(dyn Fn(&LiveSample) + Sync),
) -> Result<MixedOutcome, String> {
    if config.tpch_clients == 0 && config.tpcc_terminals == 0 {
        return Err("a mixed run needs TPC-H clients or TPC-C terminals".into());
    }
    let (scheduler, exec) = engine(&config.variant, config.contexts)?;
    let mode = tpcc_mode(&config.variant);
    let shared = matches!(mode, Mode::Scheduler(_)).then_some(&*scheduler);
    let classes = match (&config.classes, shared) {
        (Some(c), Some(s)) => Some(c.define(s)?),
        (Some(_), None) => {
            return Err(format!(
                "workload classes need a scheduler variant, not {}",
                config.variant
            ));
        }
        (None, _) => None,
    };
    let before = scheduler.stats();
    let started_ms = scheduler.timeline().last().map_or(0.0, |s| s.t_ms);
    let cpu0 = process_cpu_times();
    let stop = AtomicBool::new(false);
    let queries = AtomicUsize::new(0);
    let submitted = AtomicUsize::new(0);
    let rejected = AtomicUsize::new(0);
    let mut samples = Vec::new();
    let start = Instant::now();
    let (tpch_latencies, tpcc_report) = std::thread::scope(|s| {
        // The column mirror's merges, as default-priority jobs of the
        // analytical side's scheduler, until the run stops.
        let merger = match workload {
            Workload::Shared(db, Some(mirror)) => {
                let (stop, scheduler) = (&stop, &scheduler);
                Some(s.spawn(move || {
                    mirror.merge_until(db, scheduler, stop, None, HeapRelease::AfterMerge)
                }))
            }
            _ => None,
        };
        let clients: Vec<_> = (0..config.tpch_clients)
            .map(|c| {
                let (exec, stop, queries) = (&exec, &stop, &queries);
                let (submitted, rejected, scheduler) = (&submitted, &rejected, &scheduler);
                s.spawn(move || -> Result<Vec<f64>, String> {
                    if let Some((_, olap)) = classes {
                        maestro_scheduler::set_thread_class(olap);
                    }
                    let mut times = Vec::new();
                    for i in 0u64.. {
                        if stop.load(Ordering::Relaxed) {
                            break;
                        }
                        let t = Instant::now();
                        submitted.fetch_add(1, Ordering::Relaxed);
                        // Admission control (a class without limits admits
                        // at once); a rejected query is counted and the
                        // client backs off before its next one.
                        let _admitted = match classes {
                            Some((_, olap)) => match scheduler.admit(olap) {
                                Ok(a) => Some(a),
                                Err(_) => {
                                    rejected.fetch_add(1, Ordering::Relaxed);
                                    std::thread::sleep(REJECTED_BACKOFF);
                                    continue;
                                }
                            },
                            None => None,
                        };
                        workload.run_query(exec, shared, (c, i, config.seed))?;
                        times.push(t.elapsed().as_secs_f64());
                        queries.fetch_add(1, Ordering::Relaxed);
                    }
                    Ok(times)
                })
            })
            .collect();
        let mut last = (0usize, 0u64, Instant::now());
        let mut sample = |new_orders: u64| {
            let now = Instant::now();
            let minutes = now.duration_since(last.2).as_secs_f64() / 60.0;
            let q = queries.load(Ordering::Relaxed);
            let t = scheduler.timeline().last().copied();
            let l = LiveSample {
                elapsed_s: start.elapsed().as_secs_f64(),
                tpch_queries: q,
                tpch_queries_per_minute: (q - last.0) as f64 / minutes.max(1e-9),
                tpmc: new_orders.saturating_sub(last.1) as f64 / minutes.max(1e-9),
                active_workers: shared.and(t.map(|t| t.active)),
                hint: shared.and(t.map(|t| t.hint)),
            };
            live(&l);
            samples.push(l);
            last = (q, new_orders, now);
        };
        let tpcc = if config.tpcc_terminals > 0 {
            let mut rc = RunConfig::new(
                config.tpcc_terminals,
                config.duration,
                mode,
                workload.load_constants(),
            );
            rc.seed = config.seed;
            rc.contexts = config.contexts;
            rc.max_tps = config.tpcc_max_tps;
            rc.class = classes.map(|(oltp, _)| oltp);
            rc.checkpoint_interval = config.checkpoint_interval;
            rc.ack_log = config.ack_log.clone();
            let progress = std::sync::Mutex::new(&mut sample);
            let r = driver::run_on_storage(workload.storage(), &rc, shared, &|p: &RunProgress| {
                if let Ok(mut f) = progress.lock() {
                    (*f)(p.new_orders);
                }
            })
            .map_err(|e| e.to_string());
            Some(r)
        } else {
            while start.elapsed() < config.duration {
                std::thread::sleep(Duration::from_secs(1).min(config.duration));
                sample(0);
            }
            None
        };
        stop.store(true, Ordering::Relaxed);
        let mut latencies = Vec::new();
        for c in clients {
            match c.join() {
                Ok(Ok(t)) => latencies.extend(t),
                Ok(Err(e)) => return (Err(e), tpcc),
                Err(_) => return (Err("an analytical client panicked".into()), tpcc),
            }
        }
        if let Some(m) = merger {
            match m.join() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => return (Err(e), tpcc),
                Err(_) => return (Err("the column mirror's merge loop panicked".into()), tpcc),
            }
        }
        (Ok(latencies), tpcc)
    });
    let elapsed = start.elapsed().as_secs_f64();
    let tpch_latencies = tpch_latencies?;
    let (submitted, rejected) = (submitted.into_inner(), rejected.into_inner());
    if submitted != tpch_latencies.len() + rejected {
        return Err(format!(
            "lost queries: {submitted} submitted, {} completed, {rejected} rejected",
            tpch_latencies.len()
        ));
    }
    let class_stats = classes.map(|(oltp, olap)| {
        let stats = scheduler.class_stats();
        (stats[oltp.index()].clone(), stats[olap.index()].clone())
    });
    let tpcc_report = tpcc_report.transpose()?;
    let cpu1 = process_cpu_times();
    let after = scheduler.stats();
    let mut o = outcome(
        config,
        elapsed,
        tpch_latencies,
        tpcc_report,
        (cpu0, cpu1),
        shared.map(|_| (&before, &after)),
        scheduler_timeline(&scheduler, shared.is_some(), started_ms),
        samples,
        workload,
    );
    if let Some((oltp, olap)) = class_stats {
        let a = olap.admission;
        (o.tpch_admitted, o.tpch_queued, o.tpch_rejected) = (a.admitted, a.queued, a.rejected);
        o.class_thread_seconds = Some(ClassThreadSeconds {
            oltp: oltp.thread_ns as f64 / 1e9,
            olap: olap.thread_ns as f64 / 1e9,
            oltp_raised: oltp.raised_ns as f64 / 1e9,
            olap_raised: olap.raised_ns as f64 / 1e9,
        });
    }
    Ok(o)
}

fn scheduler_timeline(s: &Arc<Scheduler>, used: bool, after_ms: f64) -> Vec<TimelineSample> {
    if !used {
        return Vec::new();
    }
    s.timeline()
        .into_iter()
        .filter(|t| t.t_ms >= after_ms)
        .collect()
}

#[allow(clippy::too_many_arguments)]
fn outcome(
    config: &MixedConfig,
    elapsed: f64,
    tpch_latencies: Vec<f64>,
    tpcc: Option<RunReport>,
    (cpu0, cpu1): (crate::cpu::CpuTimes, crate::cpu::CpuTimes),
    stats: Option<(&SchedulerStats, &SchedulerStats)>,
    timeline: Vec<TimelineSample>,
    live: Vec<LiveSample>,
    workload: Workload<'_>,
) -> MixedOutcome {
    let capacity = elapsed * config.contexts as f64;
    let user = cpu1.user.saturating_sub(cpu0.user).as_secs_f64() / capacity;
    let system = cpu1.system.saturating_sub(cpu0.system).as_secs_f64() / capacity;
    let queries = tpch_latencies.len();
    MixedOutcome {
        workload: workload.name(),
        variant: config.variant.clone(),
        tpch_clients: config.tpch_clients,
        tpcc_terminals: config.tpcc_terminals,
        elapsed_s: elapsed,
        tpch_queries: queries,
        tpch_queries_per_minute: queries as f64 * 60.0 / elapsed,
        tpch_latency: (queries > 0).then(|| Latency::of(tpch_latencies)),
        tpch_admitted: 0,
        tpch_queued: 0,
        tpch_rejected: 0,
        class_thread_seconds: None,
        tpmc: tpcc.as_ref().map_or(0.0, RunReport::tpmc),
        tpcc_transactions_per_second: tpcc
            .as_ref()
            .map_or(0.0, RunReport::transactions_per_second),
        tpcc_abort_rate: tpcc.as_ref().map_or(0.0, RunReport::abort_rate),
        cpu_user: user,
        cpu_system: system,
        cpu_idle: (1.0 - user - system).clamp(0.0, 1.0),
        voluntary_context_switches: cpu1
            .voluntary_switches
            .saturating_sub(cpu0.voluntary_switches),
        involuntary_context_switches: cpu1
            .involuntary_switches
            .saturating_sub(cpu0.involuntary_switches),
        scheduler_tasks: stats.map(|(b, a)| a.tasks_created - b.tasks_created),
        workers_peak: stats.map(|(_, a)| a.workers_peak),
        blocked_events: stats.map(|(b, a)| a.blocked_events - b.blocked_events),
        dispatch: stats.map(|(b, a)| Dispatch::between(b, a)),
        timeline,
        live,
        consistency_violations: workload.consistency_violations(),
        tpcc_report: tpcc,
    }
}

/// Scheduler counters that show where jobs ran: on their callers (counted
/// guests or uncounted urgent extras) or handed to workers, and how often
/// workers parked and were woken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Dispatch {
    pub callers_counted: u64,
    pub callers_extra: u64,
    pub callers_handed_off: u64,
    pub callers_waited_turn: u64,
    pub workers_parked: u64,
    pub workers_woken: u64,
    pub surplus_parks: u64,
    /// Workers activated beyond the contexts for a stall (scheduler
    /// PROTOCOL.md, "Stall rescue"); expected 0 on a healthy run.
    pub stall_rescues: u64,
}

impl Dispatch {
    fn between(before: &SchedulerStats, after: &SchedulerStats) -> Dispatch {
        Dispatch {
            callers_counted: after.callers_counted - before.callers_counted,
            callers_extra: after.callers_extra - before.callers_extra,
            callers_handed_off: after.callers_handed_off - before.callers_handed_off,
            callers_waited_turn: after.callers_waited_turn - before.callers_waited_turn,
            workers_parked: after.workers_parked - before.workers_parked,
            workers_woken: after.workers_woken - before.workers_woken,
            surplus_parks: after.surplus_parks - before.surplus_parks,
            stall_rescues: after.stall_rescues - before.stall_rescues,
        }
    }
}
