//! Loads W warehouses, runs the TPC-C mix and checks consistency:
//! `cargo run --release -p maestro-tpcc --example run -- W T SECONDS MODE [CONTEXTS]`
//! (defaults: 2 2 10 single-pool, detected contexts; MODE is single-pool,
//! single-pool-nosys, single-hints or receivers).

use std::time::Duration;

use maestro_tpcc::driver::{self, RunConfig};

fn arg<T: std::str::FromStr>(n: usize, default: T) -> Result<T, String>
where
    T::Err: std::fmt::Display,
{
    match std::env::args().nth(n) {
        Some(s) => s.parse().map_err(|e| format!("argument {n} ({s:?}): {e}")),
        None => Ok(default),
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let warehouses: u16 = arg(1, 2)?;
    let terminals: usize = arg(2, 2)?;
    let seconds: f64 = arg(3, 10.0)?;
    let mode: driver::Mode = arg(4, driver::Mode::Scheduler(driver::Preset::SinglePool))?;
    let contexts: usize = arg(5, maestro_scheduler::detected_contexts())?;
    let (db, load) = maestro_tpcc::load(&maestro_tpcc::LoadConfig::new(warehouses), &|_| {})?;
    eprintln!(
        "loaded W={warehouses} in {:.2} s",
        load.elapsed.as_secs_f64()
    );
    let mut config = RunConfig::new(
        terminals,
        Duration::from_secs_f64(seconds),
        mode,
        load.constants,
    );
    config.contexts = contexts;
    let report = driver::run(&db, &config, &|p| eprintln!("  {p}"))?;
    print!("{report}");
    if std::env::var_os("SCHEDULER_STATS").is_some() {
        println!("{:#?}", report.scheduler);
    }
    let violations = maestro_tpcc::check_consistency(&db);
    println!("consistency: {} violation(s)", violations.len());
    for v in &violations {
        println!("  {v}");
    }
    Ok(())
}
