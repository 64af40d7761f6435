//! Loads TPC-H at a scale factor and reports time and memory:
//! `cargo run --release -p maestro-tpch --example load -- [SF] [--quiet]`.

use std::time::Instant;

use maestro_scheduler::{Scheduler, SchedulerConfig};
use maestro_tpch::Progress;

/// `VmRSS` and `VmHWM` of this process in KiB (Linux), if readable.
fn rss_kib() -> Option<(u64, u64)> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let sf: f64 = args
        .iter()
        .find(|a| !a.starts_with("--"))
        .map_or(Ok(1.0), |a| a.parse())
        .unwrap_or_else(|e| {
            eprintln!("bad scale factor: {e}");
            std::process::exit(2)
        });
    let quiet = args.iter().any(|a| a == "--quiet");
    let scheduler = Scheduler::new(SchedulerConfig::single_hints()).expect("scheduler starts");
    let start = Instant::now();
    let report = |p: &Progress| {
        if !quiet || !matches!(p, Progress::PartGenerated { .. }) {
            eprintln!("{p}");
        }
    };
    let db = match maestro_tpch::load(&scheduler, sf, &report) {
        Ok(db) => db,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1)
        }
    };
    let elapsed = start.elapsed();
    let (rss, hwm) = rss_kib().unwrap_or((0, 0));
    let mib = |kib: u64| kib as f64 / 1024.0;
    println!(
        "SF {sf}: {} rows in {:.2} s on {} contexts; columns {:.1} MiB; VmRSS {:.1} MiB; VmHWM {:.1} MiB",
        db.total_rows(),
        elapsed.as_secs_f64(),
        scheduler.contexts(),
        db.heap_bytes() as f64 / (1024.0 * 1024.0),
        mib(rss),
        mib(hwm),
    );
    for t in db.tables() {
        println!(
            "  {:<9} {:>10} rows {:>9.1} MiB",
            t.name(),
            t.num_rows(),
            t.heap_bytes() as f64 / (1024.0 * 1024.0)
        );
    }
}
