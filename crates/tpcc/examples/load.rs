//! Loads W warehouses, reports the load time and row counts, and runs the
//! consistency checks: `cargo run --release -p maestro-tpcc --example load -- 2`.

use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let warehouses = match std::env::args().nth(1) {
        Some(w) => w.parse().map_err(|e| format!("warehouses {w:?}: {e}"))?,
        None => 2,
    };
    let config = maestro_tpcc::LoadConfig::new(warehouses);
    let (db, report) = maestro_tpcc::load(&config, &|p| eprintln!("{p}"))?;
    println!(
        "loaded W={warehouses} with {} threads in {:.2} s",
        report.threads,
        report.elapsed.as_secs_f64()
    );
    for (table, rows) in report.counts.by_table() {
        println!("{table:>10}: {rows}");
    }
    let start = Instant::now();
    let violations = maestro_tpcc::check_consistency(&db);
    println!(
        "consistency: {} violations in {:.2} s",
        violations.len(),
        start.elapsed().as_secs_f64()
    );
    Ok(())
}
