//! `maestro serve`: the PostgreSQL wire protocol server (maestro-server),
//! optionally on a data directory (`--data-dir`: the SQL store is created
//! there the first time and recovered afterwards; commits are acknowledged
//! once logged per `--durability`; checkpoints run in the background).

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use maestro_bench::tpch;
use maestro_execution::Granularity;
use maestro_scheduler::Scheduler;
use maestro_server::Engine;
use maestro_sql::Store;
use maestro_sql::store::{FoldPolicy, Opened};
use maestro_txn::{DataDirState, Database};

use crate::exit::{failure, usage};
use crate::tpcc_durable::{DurabilityFlags, report_torn_tail};
use crate::tpch::{contexts, scale_factor};
use crate::variants::GranularityParser;

#[derive(Args)]
pub struct ServeArgs {
    /// TCP port to listen on (0: any free port; the address is printed).
    #[arg(long, default_value_t = 5433)]
    port: u16,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// Load TPC-H at this scale factor at start (default: an empty database;
    /// `CALL maestro.load_tpch(sf)` loads it later).
    #[arg(long)]
    sf: Option<f64>,
    /// Granularity policy of the operators.
    #[arg(long, default_value = "hint", value_parser = GranularityParser)]
    granularity: Granularity,
    /// Hardware contexts of the scheduler (default: detected).
    #[arg(long)]
    contexts: Option<usize>,
    /// Keep the SQL tables in DIR: the first start creates it (its first
    /// checkpoint holds --sf's TPC-H, else nothing), later starts recover it.
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    #[command(flatten)]
    durability: DurabilityFlags,
    /// A workload class to define at start (repeatable; README, "Workload
    /// classes"): `NAME[:KEY=VALUE,…]`. A session picks one with
    /// `SET maestro.workload_class = 'NAME'`, or by connecting with
    /// `application_name=NAME`.
    #[arg(long = "class", value_name = "SPEC", value_parser = crate::flags::class_spec)]
    classes: Vec<maestro_scheduler::ClassSpec>,
    /// Sessions served at once, each on a thread of its own; a connection
    /// beyond them is refused with 53300 (PostgreSQL's max_connections).
    #[arg(long, default_value_t = maestro_server::SESSIONS_MAX_DEFAULT,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=100_000))]
    max_connections: usize,
}

pub fn run(a: ServeArgs) -> ExitCode {
    serve(a).unwrap_or_else(|code| code)
}

fn serve(a: ServeArgs) -> Result<ExitCode, ExitCode> {
    let sf = a.sf.map(scale_factor).transpose()?;
    let addr: SocketAddr = format!("{}:{}", a.host, a.port)
        .parse()
        .or_else(|_| {
            std::net::ToSocketAddrs::to_socket_addrs(&(a.host.as_str(), a.port))
                .map_err(|e| e.to_string())
                .and_then(|mut it| it.next().ok_or_else(|| "no address".to_string()))
        })
        .map_err(|e| usage(format!("--host {}: {e}", a.host)))?;
    let durable = match &a.data_dir {
        None if a.durability.given() => return Err(usage("--durability needs --data-dir")),
        None => None,
        Some(dir) => {
            let (config, interval) = a.durability.options()?;
            let state = Database::data_dir_state(dir).map_err(failure)?;
            if sf.is_some() && state == DataDirState::HoldsData {
                return Err(usage(format!(
                    "--sf loads TPC-H into a new data directory, but {} already holds a \
                     database: start without --sf (CALL maestro.load_tpch(sf) replaces its \
                     TPC-H tables)",
                    dir.display()
                )));
            }
            Some((dir.clone(), config, interval))
        }
    };
    let scheduler =
        tpch::start_scheduler("single-hints", contexts(a.contexts)?).map_err(failure)?;
    crate::flags::define_classes(&scheduler, &a.classes)?;
    let engine = match durable {
        None => {
            let engine = Arc::new(Engine::new(scheduler, a.granularity));
            if let Some(sf) = sf {
                eprintln!("loading TPC-H SF {sf} …");
                let took = engine.load_tpch(sf).map_err(failure)?;
                eprintln!("loaded in {:.2} s", took.as_secs_f64());
            }
            engine
        }
        Some((dir, config, interval)) => {
            eprintln!(
                "opening data directory {} (durability {}) …",
                dir.display(),
                config.durability.name()
            );
            let initial = |store: &Store| {
                let Some(sf) = sf else { return Ok(()) };
                eprintln!("loading TPC-H SF {sf} …");
                let started = std::time::Instant::now();
                let db = maestro_tpch::load(&scheduler, sf, &|_| {}).map_err(|e| {
                    maestro_sql::SqlError::new(maestro_sql::ErrorKind::Store, e.to_string())
                })?;
                store.put_tpch(&db)?;
                eprintln!("loaded in {:.2} s", started.elapsed().as_secs_f64());
                Ok(())
            };
            let (store, opened) = Store::open_data_dir(&dir, config, &initial).map_err(failure)?;
            report_opened(&opened);
            let engine = Arc::new(Engine::with_store(
                Arc::clone(&scheduler),
                a.granularity,
                store,
            ));
            if let Some(interval) = interval {
                let engine = Arc::clone(&engine);
                std::thread::Builder::new()
                    .name("maestro-checkpoint".into())
                    .spawn(move || checkpoints(&engine, &scheduler, interval))
                    .map_err(|e| failure(format!("checkpoint thread: {e}")))?;
            }
            engine
        }
    };
    engine.set_sessions_max(a.max_connections);
    // Accepts connections (and refuses those beyond --max-connections):
    // every session runs on a thread of its own (`maestro_server::serve`).
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("maestro-serve")
        .enable_io()
        .enable_time()
        .build()
        .map_err(|e| failure(format!("tokio runtime: {e}")))?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| failure(format!("listen on {addr}: {e}")))?;
        let local = listener.local_addr().map_err(failure)?;
        println!("maestro serve: listening on {local}");
        let _ = std::io::stdout().flush();
        maestro_server::serve(listener, engine)
            .await
            .map_err(|e| failure(format!("accept on {local}: {e}")))?;
        Ok(ExitCode::SUCCESS)
    })
}

/// Prints how the data directory was opened.
fn report_opened(opened: &Opened) {
    match opened {
        Opened::Created(checkpoint) => eprintln!(
            "created: first checkpoint ({} rows) {:.1} MiB in {:.2} s",
            checkpoint.rows,
            checkpoint.bytes as f64 / 1048576.0,
            checkpoint.elapsed.as_secs_f64()
        ),
        Opened::Recovered {
            recovery,
            tables,
            rows,
            changes,
            rebuild,
        } => {
            eprintln!(
                "recovered {tables} tables ({rows} rows) in {:.2} s: checkpoint {} ({} rows), \
                 {} log records replayed from {} segment(s) ({} already in the checkpoint), \
                 {changes} changes applied to the tables' bases in {:.2} s",
                recovery.elapsed.as_secs_f64() + rebuild.as_secs_f64(),
                recovery.checkpoint.display(),
                recovery.checkpoint_rows,
                recovery.records_replayed,
                recovery.segments,
                recovery.records_skipped,
                rebuild.as_secs_f64(),
            );
            report_torn_tail(recovery);
        }
    }
}

/// Takes a checkpoint (after a fold) every `interval`, as a task on the
/// scheduler at the lowest priority, for as long as the server runs. A
/// failed checkpoint is reported and retried at the next interval: the log
/// still holds every acknowledged commit.
fn checkpoints(engine: &Engine, scheduler: &Scheduler, interval: Duration) {
    loop {
        std::thread::sleep(interval);
        let taken = scheduler
            .install_with_priority(maestro_tpcc::driver::CHECKPOINT_PRIORITY, || {
                engine.store().checkpoint(FoldPolicy::Threshold)
            });
        match taken {
            Ok((fold, report)) => {
                eprintln!(
                    "checkpoint: {} rows, {:.1} MiB in {:.2} s ({} tables folded, {} changes removed; {} files removed)",
                    report.rows,
                    report.bytes as f64 / 1048576.0,
                    report.elapsed.as_secs_f64(),
                    fold.tables,
                    fold.changes_removed,
                    report.files_removed
                );
                if let Some(why) = fold.skipped {
                    eprintln!("warning: fold skipped: {why}");
                }
            }
            Err(e) => eprintln!("warning: checkpoint failed: {e}"),
        }
    }
}
