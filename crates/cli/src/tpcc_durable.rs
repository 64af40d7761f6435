//! `maestro tpcc run|check --data-dir DIR`: TPC-C on a data directory (issue
//! 18) — created from a load the first time, recovered afterwards — with the
//! durability of commits, background checkpoints and the acknowledgement
//! log the crash test reads.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, ValueEnum};
use maestro_tpcc::LoadConfig;
use maestro_tpcc::driver::{AckLog, RunConfig};
use maestro_tpcc::mvcc::{Opened as DirOpened, open_data_dir};
use maestro_txn::{Durability, DurabilityConfig, FaultPlan};

use crate::exit::{failure, usage};
use crate::tpcc::{Loaded, Opened};
use crate::variants::TpccCc;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum DurabilityFlag {
    /// A commit returns once its log record is synced (group commit: one
    /// sync serves every commit waiting meanwhile).
    Sync,
    /// As sync, but each sync first waits (at most --group-delay-us) while
    /// more commits arrive.
    Group,
    /// Nothing is logged: commits since the last checkpoint are lost.
    Off,
}

#[derive(Args, Clone)]
pub struct DurableArgs {
    /// Keep the database in DIR: the first run loads --warehouses into it
    /// (its first checkpoint), later runs recover it. Implies --cc mvcc.
    #[arg(long, value_name = "DIR")]
    pub(crate) data_dir: Option<PathBuf>,
    #[command(flatten)]
    durability: DurabilityFlags,
    /// Append `w_id,d_id,o_id` of every New-Order after its commit was
    /// acknowledged to FILE (one write per line).
    #[arg(long, value_name = "FILE")]
    ack_log: Option<PathBuf>,
    /// Fault injection for the crash tests: `sync-failure@N` or
    /// `short-write@N` makes the log's N-th flush fail.
    #[arg(long, value_name = "KIND@N", hide = true)]
    inject_log_fault: Option<String>,
}

fn fault_plan(spec: &str) -> Result<FaultPlan, ExitCode> {
    let bad = || {
        usage(format!(
            "--inject-log-fault {spec:?}: expected sync-failure@N or short-write@N (N ≥ 1)"
        ))
    };
    let (kind, n) = spec.split_once('@').ok_or_else(bad)?;
    let n: u64 = n.parse().ok().filter(|&n| n >= 1).ok_or_else(bad)?;
    match kind {
        "sync-failure" => Ok(FaultPlan {
            sync_failure_at_flush: Some(n),
            ..FaultPlan::default()
        }),
        "short-write" => Ok(FaultPlan {
            short_write_at_flush: Some(n),
            ..FaultPlan::default()
        }),
        _ => Err(bad()),
    }
}

/// Validated `DurableArgs` of a run on a data directory.
pub(crate) struct DurableOptions {
    dir: PathBuf,
    config: DurabilityConfig,
    checkpoint_interval: Option<Duration>,
    ack_log: Option<PathBuf>,
}

/// Runs a flush wait as an *inactive-by-user* region on the scheduler.
fn scheduler_blocking(f: &mut dyn FnMut()) {
    maestro_scheduler::sync::blocking(f)
}

/// How commits on a data directory are made durable: the flags `tpcc run`
/// and `serve` share beside their own `--data-dir`.
#[derive(Args, Clone)]
pub struct DurabilityFlags {
    /// When a commit is acknowledged (with --data-dir; default sync).
    #[arg(long, value_enum)]
    durability: Option<DurabilityFlag>,
    /// The longest a group sync waits for more commits, in microseconds.
    #[arg(long, value_name = "US", default_value_t = 200.0)]
    group_delay_us: f64,
    /// Seconds between background checkpoints.
    #[arg(long, value_name = "S", default_value_t = 30.0)]
    checkpoint_interval_s: f64,
}

impl DurabilityFlags {
    /// Whether `--durability` was given (refused without `--data-dir`).
    pub(crate) fn given(&self) -> bool {
        self.durability.is_some()
    }

    /// The log's configuration (default sync) and the interval of background
    /// checkpoints (none without a log).
    pub(crate) fn options(&self) -> Result<(DurabilityConfig, Option<Duration>), ExitCode> {
        if !(0.0..=1e6).contains(&self.group_delay_us) {
            return Err(usage("--group-delay-us must be in 0..=1000000"));
        }
        if !(self.checkpoint_interval_s > 0.0 && self.checkpoint_interval_s.is_finite()) {
            return Err(usage("--checkpoint-interval-s must be a positive number"));
        }
        let durability = match self.durability.unwrap_or(DurabilityFlag::Sync) {
            DurabilityFlag::Sync => Durability::Sync,
            DurabilityFlag::Group => Durability::Group {
                delay: Duration::from_secs_f64(self.group_delay_us / 1e6),
            },
            DurabilityFlag::Off => Durability::Off,
        };
        let mut config = DurabilityConfig::new(durability);
        config.blocking = scheduler_blocking;
        // Checkpoints without a log would make random prefixes durable.
        let interval = (durability != Durability::Off)
            .then(|| Duration::from_secs_f64(self.checkpoint_interval_s));
        Ok((config, interval))
    }
}

impl DurableArgs {
    /// `None` without --data-dir (then the other flags are refused).
    pub(crate) fn validate(&self, cc: Option<TpccCc>) -> Result<Option<DurableOptions>, ExitCode> {
        let Some(dir) = &self.data_dir else {
            if self.durability.given() || self.ack_log.is_some() || self.inject_log_fault.is_some()
            {
                return Err(usage("--durability and --ack-log need --data-dir"));
            }
            return Ok(None);
        };
        if cc == Some(TpccCc::Sql) {
            return Err(usage(
                "--data-dir keeps the MVCC row storage; the SQL store keeps its tables with `maestro serve --data-dir`",
            ));
        }
        if cc == Some(TpccCc::TwoPl) {
            return Err(usage(
                "--data-dir keeps the MVCC storage: it needs --cc mvcc (the default with --data-dir)",
            ));
        }
        let (mut config, checkpoint_interval) = self.durability.options()?;
        if let Some(spec) = &self.inject_log_fault {
            config.faults = fault_plan(spec)?;
        }
        Ok(Some(DurableOptions {
            dir: dir.clone(),
            config,
            checkpoint_interval,
            ack_log: self.ack_log.clone(),
        }))
    }

    /// What `tpcc check --data-dir` opens with: recovery, no log written.
    pub(crate) fn checking(dir: &Path) -> DurableOptions {
        DurableOptions {
            dir: dir.to_path_buf(),
            config: DurabilityConfig::new(Durability::Off),
            checkpoint_interval: None,
            ack_log: None,
        }
    }
}

impl DurableOptions {
    /// Checkpoints and the acknowledgement log of the run.
    pub(crate) fn configure(&self, config: &mut RunConfig) -> Result<(), ExitCode> {
        config.checkpoint_interval = self.checkpoint_interval;
        config.ack_log = self.open_ack_log()?;
        Ok(())
    }

    /// The same for the main job's terminals.
    pub(crate) fn configure_mixed(
        &self,
        config: &mut maestro_bench::mixed::MixedConfig,
    ) -> Result<(), ExitCode> {
        config.checkpoint_interval = self.checkpoint_interval;
        config.ack_log = self.open_ack_log()?;
        Ok(())
    }

    fn open_ack_log(&self) -> Result<Option<Arc<AckLog>>, ExitCode> {
        self.ack_log
            .as_deref()
            .map(|path| AckLog::open(path).map(Arc::new).map_err(failure))
            .transpose()
    }
}

/// Opens (creates or recovers) the database in the data directory.
pub(crate) fn open_durable(
    options: &DurableOptions,
    warehouses: u16,
    seed: u64,
) -> Result<(Loaded, Opened), ExitCode> {
    let mut load = LoadConfig::new(warehouses);
    load.seed = seed;
    options.announce();
    let progress = |p: &maestro_tpcc::LoadProgress| eprintln!("  {p}");
    let opened = open_data_dir(&options.dir, &load, options.config, &progress).map_err(failure)?;
    report_opened(&opened.opened, opened.db.warehouses());
    let started = Opened {
        constants: opened.constants,
        rows: opened.counts.total(),
    };
    Ok((Loaded::Mvcc(Box::new(opened.db)), started))
}

impl DurableOptions {
    pub(crate) fn announce(&self) {
        eprintln!(
            "opening data directory {} (durability {}) …",
            self.dir.display(),
            self.config.durability.name()
        );
    }
}

/// Opens CH-benCHmark on the data directory (`ch run`, `maestro run`): to
/// create it, `explicit` warehouses or else `create_with`; to recover, the
/// directory's own (an `explicit` count that differs is an error).
pub(crate) fn open_ch(
    options: &DurableOptions,
    explicit: Option<u16>,
    create_with: u16,
    seed: u64,
    progress: &(dyn Fn(&maestro_tpcc::LoadProgress) + Sync),
) -> Result<maestro_ch::ChDatabase, String> {
    let empty = maestro_txn::Database::data_dir_state(&options.dir).map_err(|e| e.to_string())?
        == maestro_txn::DataDirState::Empty;
    let config = maestro_ch::ChConfig {
        // 0: the directory's own.
        warehouses: explicit.unwrap_or(if empty { create_with } else { 0 }),
        seed,
        clock_start: None,
    };
    options.announce();
    let (db, opened) =
        maestro_ch::ChDatabase::open_data_dir(&options.dir, &config, options.config, progress)
            .map_err(|e| e.to_string())?;
    report_opened(&opened, db.tpcc.warehouses());
    Ok(db)
}

/// Prints how a data directory was opened (created or recovered, and what
/// recovery found).
fn report_opened(opened: &DirOpened, warehouses: u16) {
    match opened {
        DirOpened::Created { load, checkpoint } => eprintln!(
            "created: loaded W={warehouses} ({} rows) in {:.2} s, first checkpoint {:.1} MiB in {:.2} s",
            load.counts.total(),
            load.elapsed.as_secs_f64(),
            checkpoint.bytes as f64 / 1048576.0,
            checkpoint.elapsed.as_secs_f64()
        ),
        DirOpened::Recovered {
            recovery,
            index_seconds,
        } => {
            eprintln!(
                "recovered W={warehouses} in {:.2} s: checkpoint {} ({} rows), {} log records replayed from {} segment(s) ({} already in the checkpoint), indexes rebuilt in {index_seconds:.2} s",
                recovery.elapsed.as_secs_f64() + index_seconds,
                recovery.checkpoint.display(),
                recovery.checkpoint_rows,
                recovery.records_replayed,
                recovery.segments,
                recovery.records_skipped,
            );
            report_torn_tail(recovery);
        }
    }
}

/// Warns of a torn log tail recovery cut off, if it did.
pub(crate) fn report_torn_tail(recovery: &maestro_txn::RecoveryReport) {
    if let Some(torn) = &recovery.torn_tail {
        eprintln!(
            "warning: cut a torn log tail of {} bytes at {}:{} ({}); no acknowledged commit lies there",
            torn.bytes_cut,
            torn.path.display(),
            torn.offset,
            torn.reason
        );
    }
}
