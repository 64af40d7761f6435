//! `maestro tpch refresh --storage delta`: TPC-H's refresh pairs on the SQL
//! store's main + delta (`Store::tpch_rf1/rf2`) and, with
//! `--compare-queries`, the 22 SQL statements read through the deltas the
//! refreshes left beside the same rows merged into a fresh main (issue 16
//! part 4: queries on the shared storage against the immutable store).

use std::process::ExitCode;
use std::time::Instant;

use maestro_bench::tpch_delta::DeltaSet;
use maestro_execution::Executor;
use maestro_sql::store::{MergeScope, RefreshReaders};
use maestro_sql::{Output, Store};
use maestro_tpch::queries::{QueryResult, check};
use maestro_tpch::{Database, RefreshFunction};
use serde_json::json;

use crate::exit::failure;
use crate::tpch_refresh::{geomean_line, paired};

/// The pairs on a store holding `loaded`; the JSON report and its table.
/// `compare_reps`: also time the 22 statements, that many repetitions.
pub(crate) fn refresh_deltas(
    sf: f64,
    pairs: u32,
    compare_reps: Option<usize>,
    loaded: &Database,
    load_s: f64,
    exec: &Executor,
) -> Result<(serde_json::Value, String), ExitCode> {
    let store = Store::new();
    store.put_tpch(loaded).map_err(failure)?;
    // The comparison's other side: the same refreshes, then merged.
    let merged = match compare_reps {
        Some(_) => {
            let m = Store::new();
            m.put_tpch(loaded).map_err(failure)?;
            Some(m)
        }
        None => None,
    };
    let mut table = format!(
        "TPC-H SF {sf} on main + delta: {pairs} refresh pair(s)\n\
         function | set | orders | line items | generate ms | commit ms (transaction)\n"
    );
    let mut reports = Vec::new();
    // The first RF1 builds tpchgen's text pool; the later ones reuse it.
    let _pool = maestro_tpch::keep_text_pool();
    for n in 1..=pairs {
        for f in [RefreshFunction::Rf1, RefreshFunction::Rf2] {
            // The set's rows or keys once; both stores apply them.
            let start = Instant::now();
            let set = DeltaSet::generate(f, sf, n).map_err(failure)?;
            let generate = start.elapsed();
            let r = set.apply(&store, RefreshReaders::Sql).map_err(failure)?;
            if let Some(m) = &merged {
                set.apply(m, RefreshReaders::Sql).map_err(failure)?;
            }
            let (g, t) = (generate.as_secs_f64(), r.total.as_secs_f64());
            eprintln!(
                "{f} set {n}: {} orders, {} line items; rows generated in {:.1} ms, committed \
                 after {:.1} ms ({} attempt(s))",
                r.orders_changed,
                r.lineitem_changed,
                g * 1e3,
                t * 1e3,
                r.attempts
            );
            table.push_str(&format!(
                "{f} | {n} | {} | {} | {:.1} | {:.1}\n",
                r.orders_changed,
                r.lineitem_changed,
                g * 1e3,
                t * 1e3
            ));
            reports.push(json!({
                "function": f.to_string(), "set": n,
                "orders_changed": r.orders_changed, "lineitem_changed": r.lineitem_changed,
                "generate_s": g, "build_s": 0.0, "total_s": t, "attempts": r.attempts,
            }));
        }
    }
    let mut queries = Vec::new();
    if let (Some(reps), Some(merged)) = (compare_reps, &merged) {
        merged.merge_deltas(MergeScope::All).map_err(failure)?;
        let (rows, text) = compare_statements(exec, &store, merged, reps)?;
        queries = rows;
        table.push_str(&text);
    }
    let json = json!({
        "experiment": "tpch-refresh",
        "storage": "delta",
        "sf": sf,
        "pairs": pairs,
        "contexts": exec.scheduler().contexts(),
        "load_seconds": load_s,
        "refreshes": reports,
        "queries": queries,
    });
    Ok((json, table))
}

/// One statement in a read-only transaction of `store`: seconds and rows.
fn run(exec: &Executor, store: &Store, q: u8) -> Result<(f64, QueryResult), ExitCode> {
    let sql = maestro_sql::tpch_statement(q).expect("1 to 22");
    let mut t = store.begin().map_err(failure)?;
    let view = store.view(&mut t);
    let start = Instant::now();
    let out = maestro_sql::execute(exec, &view, sql);
    let secs = start.elapsed().as_secs_f64();
    t.abort();
    match out.map_err(|e| failure(format!("Q{q}: {e}")))? {
        Output::Rows(rows) => Ok((secs, rows)),
        Output::Explain(_) => Err(failure(format!("Q{q}: an EXPLAIN, not rows"))),
    }
}

/// Each statement on `delta` and on `merged` (same rows), in alternating
/// order per repetition after one untimed run of each (the merged main
/// computes the optimizer's column statistics on first use) whose answers
/// must be equal; per query the median seconds of each and the median and
/// range of the per-repetition ratios delta ÷ merged.
fn compare_statements(
    exec: &Executor,
    delta: &Store,
    merged: &Store,
    reps: usize,
) -> Result<(Vec<serde_json::Value>, String), ExitCode> {
    let mut rows = Vec::new();
    let mut text = String::from(
        "query | merged s (median) | main + delta s (median) | delta ÷ merged, median [min–max]\n",
    );
    let mut ratios_all = Vec::new();
    for q in 1..=22u8 {
        let (_, on_delta) = run(exec, delta, q)?;
        let (_, on_merged) = run(exec, merged, q)?;
        check::parse_csv(&on_merged.to_csv())
            .and_then(|expected| check::compare(&on_delta, &expected))
            .map_err(|m| failure(format!("Q{q}: main + delta and merged differ: {}", m.0)))?;
        let t = paired(
            reps,
            || Ok(run(exec, merged, q)?.0),
            || Ok(run(exec, delta, q)?.0),
        )?;
        let (o, n, r, lo, hi) = (t.first_median, t.second_median, t.ratio, t.min, t.max);
        eprintln!("Q{q}: merged {o:.4} s, main + delta {n:.4} s, ratio {r:.3} [{lo:.3}–{hi:.3}]");
        text.push_str(&format!(
            "Q{q} | {o:.4} | {n:.4} | {r:.3} [{lo:.3}–{hi:.3}]\n"
        ));
        ratios_all.push(r);
        rows.push(json!({
            "query": q, "merged_s": t.first, "delta_s": t.second, "ratios": t.ratios,
            "merged_median_s": o, "delta_median_s": n, "ratio_median": r, "same_answer": true,
        }));
    }
    text.push_str(&geomean_line(&ratios_all));
    Ok((rows, text))
}
