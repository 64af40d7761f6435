//! The 22 TPC-H statements of `tests/queries/` against the TPC-H crate's
//! hand-written plans on the same data: same answer (compared cell by cell
//! through the hand-written answer's CSV, as the tests compare), and the best of `--reps` times of each.
//!
//!     cargo run --release -p maestro-sql --example sql_vs_handwritten -- [--sf 1] [--reps 3] [--policy hint] [--queries 2,17]
//!
//! Prints one line per query: `Q<n> sql <s> hand <s> ratio <x> same|DIFFERENT`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use maestro_execution::{Executor, Granularity};
use maestro_scheduler::{Scheduler, SchedulerConfig};
use maestro_sql::{Output, TpchCatalog};
use maestro_tpch::queries::{self, QueryParams, check};

fn arg(args: &[String], name: &str, default: &str) -> String {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
        .unwrap_or_else(|| default.to_string())
}

fn best<T>(reps: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best = Duration::MAX;
    let mut last = None;
    for _ in 0..reps {
        let t = Instant::now();
        let r = f();
        best = best.min(t.elapsed());
        last = Some(r);
    }
    (best, last.expect("at least one repetition"))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let sf: f64 = arg(&args, "--sf", "1").parse().expect("--sf F");
    let reps: usize = arg(&args, "--reps", "3").parse().expect("--reps N");
    let policy: Granularity = arg(&args, "--policy", "hint").parse().expect("--policy");
    let scheduler =
        Arc::new(Scheduler::new(SchedulerConfig::single_hints()).expect("scheduler starts"));
    let t = Instant::now();
    let db = maestro_tpch::load(&scheduler, sf, &|_| {}).expect("TPC-H loads");
    eprintln!("loaded SF {sf} in {:.1} s", t.elapsed().as_secs_f64());
    let catalog = TpchCatalog::new(&db);
    let exec = Executor::new(scheduler.clone(), policy);
    let only: Vec<u8> = arg(&args, "--queries", "")
        .split(',')
        .filter_map(|q| q.trim().parse().ok())
        .collect();
    for q in (1..=22u8).filter(|q| only.is_empty() || only.contains(q)) {
        let sql = std::fs::read_to_string(format!(
            "{}/tests/queries/tpch_q{q:02}.sql",
            env!("CARGO_MANIFEST_DIR")
        ))
        .expect("statement");
        // Q11's statement has the spec's unscaled FRACTION (0.0001).
        let mut params = QueryParams::validation(q, sf).expect("parameters");
        if q == 11 {
            params = QueryParams::validation(q, 1.0).expect("parameters");
        }
        let (t_sql, sql_rows) = best(reps, || match maestro_sql::execute(&exec, &catalog, &sql) {
            Ok(Output::Rows(r)) => r,
            other => panic!("Q{q}: {other:?}"),
        });
        let (t_hand, hand_rows) = best(reps, || {
            queries::run_profiled(&exec, &db, &params)
                .expect("hand-written plan runs")
                .0
        });
        let same = check::parse_csv(&hand_rows.to_csv())
            .and_then(|expected| check::compare(&sql_rows, &expected))
            .map_err(|m| m.0);
        println!(
            "Q{q:<2} sql {:>8.4} s  hand {:>8.4} s  ratio {:>5.2}  {}",
            t_sql.as_secs_f64(),
            t_hand.as_secs_f64(),
            t_sql.as_secs_f64() / t_hand.as_secs_f64(),
            match &same {
                Ok(()) => "same".to_string(),
                Err(m) => format!("DIFFERENT: {m}"),
            }
        );
    }
}
