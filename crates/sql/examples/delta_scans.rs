//! The 22 TPC-H statements on the SQL store after TPC-H refreshes, read
//! through the deltas the refreshes left, against the same rows merged
//! (issue 16 part 4: "the 22 queries run on snapshots with no more than
//! 10 % slowdown against the immutable store").
//!
//! Two stores hold the same TPC-H load; both apply `--pairs` RF1/RF2 pairs
//! (RF1 appends to ORDERS' and LINEITEM's deltas, RF2 marks loaded rows
//! deleted), then one merges its deltas, so both hold the same rows: one as
//! main + delta, one as a freshly merged main. Each repetition runs a query
//! on both, the order alternating; per query the median time of each and
//! the median and range of the per-repetition ratios delta ÷ merged. The
//! two answers must be equal cell for cell.
//!
//!     cargo run --release -p maestro-sql --example delta_scans -- [--sf 1] [--reps 5] [--pairs 2] [--queries 1,6] [--out FILE.json]

use std::sync::Arc;
use std::time::Instant;

use maestro_execution::{Executor, Granularity};
use maestro_scheduler::{Scheduler, SchedulerConfig};
use maestro_sql::store::MergeScope;
use maestro_sql::{Output, Store};
use maestro_tpch::queries::QueryResult;

#[path = "common/args.rs"]
mod args;
use args::arg;

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    s[s.len() / 2]
}

fn query(exec: &Executor, store: &Store, sql: &str) -> (f64, QueryResult) {
    let mut t = store.begin().expect("begins");
    let view = store.view(&mut t);
    let start = Instant::now();
    let out = maestro_sql::execute(exec, &view, sql);
    let secs = start.elapsed().as_secs_f64();
    t.abort();
    match out {
        Ok(Output::Rows(r)) => (secs, r),
        other => panic!("{sql}: {other:?}"),
    }
}

/// Rows (appended, deleted) in the deltas of ORDERS and LINEITEM.
fn delta_sizes(store: &Store) -> [(usize, usize); 2] {
    let mut t = store.begin().expect("begins");
    let view = store.view(&mut t);
    let sizes = ["orders", "lineitem"].map(|table| {
        view.entry(table)
            .expect("a TPC-H table")
            .1
            .live_delta()
            .map_or((0, 0), |d| (d.appended().num_rows(), d.deleted().len()))
    });
    t.abort();
    sizes
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let sf: f64 = arg(&args, "--sf", "1").parse().expect("--sf F");
    let reps: usize = arg(&args, "--reps", "5").parse().expect("--reps N");
    let pairs: u32 = arg(&args, "--pairs", "2").parse().expect("--pairs N");
    assert!(
        reps > 0 && pairs > 0,
        "--reps and --pairs must be at least 1"
    );
    let out = arg(&args, "--out", "");
    let only: Vec<u8> = arg(&args, "--queries", "")
        .split(',')
        .filter_map(|q| q.trim().parse().ok())
        .collect();
    let scheduler =
        Arc::new(Scheduler::new(SchedulerConfig::single_hints()).expect("scheduler starts"));
    let exec = Executor::new(scheduler.clone(), Granularity::Hint);
    let t = Instant::now();
    let db = maestro_tpch::load(&scheduler, sf, &|_| {}).expect("TPC-H loads");
    eprintln!("loaded SF {sf} in {:.1} s", t.elapsed().as_secs_f64());
    let (delta, merged) = (Store::new(), Store::new());
    let _pool = maestro_tpch::keep_text_pool();
    for store in [&delta, &merged] {
        store.put_tpch(&db).expect("TPC-H into the store");
        for n in 1..=pairs {
            let rows = maestro_tpch::rf1_rows(sf, n).expect("RF1 set");
            store.tpch_rf1(&rows).expect("RF1");
            let keys = maestro_tpch::rf2_keys(sf, n).expect("RF2 set");
            store.tpch_rf2(&keys).expect("RF2");
        }
    }
    merged.merge_deltas(MergeScope::All).expect("merges");
    let sizes = delta_sizes(&delta);
    assert!(
        sizes.iter().all(|&(a, d)| a > 0 && d > 0) && delta_sizes(&merged) == [(0, 0); 2],
        "one store keeps its deltas, the other merged them: {sizes:?}"
    );
    eprintln!(
        "{pairs} refresh pairs: ORDERS delta {} appended + {} deleted, LINEITEM {} + {}",
        sizes[0].0, sizes[0].1, sizes[1].0, sizes[1].1
    );
    let mut rows = Vec::new();
    let mut all_ratios = Vec::new();
    for q in (1..=22u8).filter(|q| only.is_empty() || only.contains(q)) {
        let sql = std::fs::read_to_string(format!(
            "{}/tests/queries/tpch_q{q:02}.sql",
            env!("CARGO_MANIFEST_DIR")
        ))
        .expect("statement");
        // Untimed first on each: the merged main computes the optimizer's
        // column statistics on first use.
        let (_, first) = query(&exec, &delta, &sql);
        let (_, again) = query(&exec, &merged, &sql);
        let same = maestro_tpch::queries::check::parse_csv(&again.to_csv())
            .and_then(|expected| maestro_tpch::queries::check::compare(&first, &expected))
            .map_err(|m| m.0);
        let (mut t_delta, mut t_merged, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        for rep in 0..reps {
            let (d, m) = if rep % 2 == 0 {
                let d = query(&exec, &delta, &sql).0;
                (d, query(&exec, &merged, &sql).0)
            } else {
                let m = query(&exec, &merged, &sql).0;
                (query(&exec, &delta, &sql).0, m)
            };
            t_delta.push(d);
            t_merged.push(m);
            ratios.push(d / m);
        }
        let (lo, hi) = ratios.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &r| {
            (lo.min(r), hi.max(r))
        });
        all_ratios.push(median(&ratios));
        println!(
            "Q{q:<2} delta {:>8.4} s  merged {:>8.4} s  ratio {:>5.2} [{lo:.2}–{hi:.2}]  {}",
            median(&t_delta),
            median(&t_merged),
            median(&ratios),
            match &same {
                Ok(()) => "same".to_string(),
                Err(m) => format!("DIFFERENT: {m}"),
            }
        );
        rows.push(format!(
            "{{\"query\": {q}, \"same_answer\": {}, \"delta_s\": {t_delta:?}, \
             \"merged_s\": {t_merged:?}, \"ratios\": {ratios:?}, \"ratio_median\": {}}}",
            same.is_ok(),
            median(&ratios)
        ));
    }
    let geo = (all_ratios.iter().map(|r| r.ln()).sum::<f64>() / all_ratios.len() as f64).exp();
    println!("geometric mean of the median ratios: {geo:.3}");
    if !out.is_empty() {
        let json = format!(
            "{{\"experiment\": \"delta-scans\", \"sf\": {sf}, \"reps\": {reps}, \"pairs\": {pairs}, \
             \"contexts\": {}, \"orders_delta\": {:?}, \"lineitem_delta\": {:?}, \
             \"geomean_ratio\": {geo}, \"results\": [\n{}\n]}}\n",
            scheduler.contexts(),
            sizes[0],
            sizes[1],
            rows.join(",\n")
        );
        std::fs::write(&out, json).unwrap_or_else(|e| panic!("writing {out}: {e}"));
        eprintln!("wrote {out}");
    }
}
