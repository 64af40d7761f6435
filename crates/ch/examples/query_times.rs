//! Each CH query's time as SQL on the column mirror and as its hand-written
//! plan, in sequence on an otherwise idle database: W warehouses, T
//! transactions run one after another, the mirror merged (no delta), then
//! per query `reps` runs of each, alternating, median printed. One JSON
//! object per line on stdout.
//!
//!     cargo run --release -p maestro-ch --example query_times -- 2 20000 5

use std::sync::Arc;
use std::time::Instant;

use maestro_ch::columns::{ColumnMirror, MergePolicy, run_sql};
use maestro_ch::{ChConfig, ChDatabase, QUERIES};
use maestro_execution::{Executor, Granularity};
use maestro_scheduler::Scheduler;
use maestro_tpcc::mvcc;
use maestro_tpcc::random::{NuRandConstants, TpccRng};
use maestro_tpcc::txn::InputGenerator;

fn arg<T: std::str::FromStr>(args: &[String], i: usize, default: T) -> T {
    args.get(i).and_then(|a| a.parse().ok()).unwrap_or(default)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let warehouses: u16 = arg(&args, 1, 2);
    let transactions: usize = arg(&args, 2, 20_000);
    let reps: usize = arg(&args, 3, 5).max(1);
    let config = ChConfig {
        warehouses,
        seed: 1,
        clock_start: None,
    };
    let (db, _) = ChDatabase::load(&config, &|_| {}).map_err(|e| e.to_string())?;
    let mirror = ColumnMirror::new(&db)?;
    let constants = NuRandConstants::for_run(&db.load_constants, &mut fastrand::Rng::with_seed(1));
    let mut inputs = InputGenerator::new(TpccRng::new(1, constants), warehouses, 1, 1);
    for _ in 0..transactions {
        mvcc::execute(&db.tpcc, &inputs.next_input(), None).map_err(|e| e.to_string())?;
    }
    mirror.merge_due(&db, MergePolicy::ANY_CHANGE)?;
    let scheduler = Scheduler::with_preset("single-hints", 2).map_err(|e| e.to_string())?;
    let exec = Executor::new(Arc::new(scheduler), Granularity::Hint);
    for q in QUERIES {
        let (mut sql, mut plans) = (Vec::new(), Vec::new());
        let mut rows = 0;
        for _ in 0..reps {
            let view = mirror.view(&db)?;
            let t = Instant::now();
            rows = run_sql(&exec, &view, q.number, 0)?.rows.len();
            sql.push(t.elapsed().as_secs_f64() * 1e3);
            drop(view);
            let snap = db.snapshot().map_err(|e| e.to_string())?;
            let t = Instant::now();
            std::hint::black_box((q.run)(&snap));
            plans.push(t.elapsed().as_secs_f64() * 1e3);
        }
        println!(
            "{{\"query\":{},\"rows\":{rows},\"sql_ms\":{:.2},\"plans_ms\":{:.2}}}",
            q.number,
            median(sql),
            median(plans)
        );
    }
    Ok(())
}
