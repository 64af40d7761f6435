//! `maestro serve`: the PostgreSQL wire protocol server (maestro-server).

use std::io::Write as _;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use maestro_bench::tpch;
use maestro_execution::Granularity;
use maestro_server::Engine;

use crate::exit::{failure, usage};
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
    /// A workload class to define at start (repeatable; README, "Workload
    /// classes"): `NAME[:KEY=VALUE,…]`. A session picks one with
    /// `SET maestro.workload_class = 'NAME'`.
    #[arg(long = "class", value_name = "SPEC", value_parser = crate::flags::class_spec)]
    classes: Vec<maestro_scheduler::ClassSpec>,
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
    let scheduler =
        tpch::start_scheduler("single-hints", contexts(a.contexts)?).map_err(failure)?;
    crate::flags::define_classes(&scheduler, &a.classes)?;
    let engine = Arc::new(Engine::new(scheduler, a.granularity));
    if let Some(sf) = sf {
        eprintln!("loading TPC-H SF {sf} …");
        let took = engine.load_tpch(sf).map_err(failure)?;
        eprintln!("loaded in {:.2} s", took.as_secs_f64());
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
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
