//! The 22 TPC-H statements of `tests/queries/` against the TPC-H crate's
//! hand-written plans on the same data: same answer (compared cell by cell
//! through the hand-written answer's CSV, as the tests compare), and the
//! times of both, side by side: each repetition runs the two in turn, the
//! order alternating between repetitions; per query the median time of each
//! and the median and range of the per-repetition ratios SQL ÷ hand-written.
//!
//!     cargo run --release -p maestro-sql --example sql_vs_handwritten -- [--sf 1] [--reps 5] [--policy hint] [--queries 2,17] [--out FILE.json]
//!
//! Prints one line per query: `Q<n> sql <s> hand <s> ratio <x> [<min>–<max>] same|DIFFERENT
//! (plan <s>)`, the last the median time to parse, bind and optimize the statement (timed
//! apart, also part of the SQL time);
//! `--out` writes every time as JSON.

use std::sync::Arc;
use std::time::Instant;

use maestro_execution::{Executor, Granularity};
use maestro_scheduler::{Scheduler, SchedulerConfig};
use maestro_sql::{Output, TpchCatalog};
use maestro_tpch::queries::{self, QueryParams, check};

#[path = "common/args.rs"]
mod args;
use args::arg;

fn timed<T>(f: impl FnOnce() -> T) -> (f64, T) {
    let t = Instant::now();
    let r = f();
    (t.elapsed().as_secs_f64(), r)
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    s[s.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let sf: f64 = arg(&args, "--sf", "1").parse().expect("--sf F");
    let reps: usize = arg(&args, "--reps", "5").parse().expect("--reps N");
    assert!(reps > 0, "--reps must be at least 1");
    let out = arg(&args, "--out", "");
    let mut rows = Vec::new();
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
        let run_sql = || match maestro_sql::execute(&exec, &catalog, &sql) {
            Ok(Output::Rows(r)) => r,
            other => panic!("Q{q}: {other:?}"),
        };
        let run_hand = || {
            queries::run_profiled(&exec, &db, &params)
                .expect("hand-written plan runs")
                .0
        };
        // Parsing, binding and optimizing alone (part of `sql_s`), timed apart.
        let t_plan: Vec<f64> = (0..reps)
            .map(|_| timed(|| maestro_sql::plan(&catalog, &sql).expect("plans")).0)
            .collect();
        let (mut t_sql, mut t_hand, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        let mut answers = None;
        for rep in 0..reps {
            let ((s, sql_rows), (h, hand_rows)) = if rep % 2 == 0 {
                let s = timed(run_sql);
                (s, timed(run_hand))
            } else {
                let h = timed(run_hand);
                (timed(run_sql), h)
            };
            t_sql.push(s);
            t_hand.push(h);
            ratios.push(s / h);
            answers = Some((sql_rows, hand_rows));
        }
        let (sql_rows, hand_rows) = answers.expect("at least one repetition");
        let same = check::parse_csv(&hand_rows.to_csv())
            .and_then(|expected| check::compare(&sql_rows, &expected))
            .map_err(|m| m.0);
        let (lo, hi) = ratios.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &r| {
            (lo.min(r), hi.max(r))
        });
        println!(
            "Q{q:<2} sql {:>8.4} s  hand {:>8.4} s  ratio {:>5.2} [{lo:.2}–{hi:.2}]  {}  (plan {:.4} s)",
            median(&t_sql),
            median(&t_hand),
            median(&ratios),
            match &same {
                Ok(()) => "same".to_string(),
                Err(m) => format!("DIFFERENT: {m}"),
            },
            median(&t_plan)
        );
        rows.push(format!(
            "{{\"query\": {q}, \"same_answer\": {}, \"sql_s\": {t_sql:?}, \"hand_s\": {t_hand:?}, \
             \"ratios\": {ratios:?}, \"ratio_median\": {}, \"plan_s\": {t_plan:?}}}",
            same.is_ok(),
            median(&ratios)
        ));
    }
    if !out.is_empty() {
        let json = format!(
            "{{\"experiment\": \"sql-vs-handwritten\", \"sf\": {sf}, \"reps\": {reps}, \
             \"policy\": \"{policy}\", \"contexts\": {}, \"results\": [\n{}\n]}}\n",
            scheduler.contexts(),
            rows.join(",\n")
        );
        std::fs::write(&out, json).unwrap_or_else(|e| panic!("writing {out}: {e}"));
        eprintln!("wrote {out}");
    }
}
