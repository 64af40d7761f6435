//! `maestro tpch refresh`: TPC-H's refresh functions as MVCC transactions
//! (`maestro_tpch::SharedDatabase`), the refresh sets for another engine,
//! and the queries on a refreshed snapshot beside the freshly loaded store.
//! The SQL store's main + delta variant is `tpch_refresh_delta.rs`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::Args;
use maestro_bench::reps::{self, Spread};
use maestro_bench::tpch;
use maestro_execution::{Executor, Granularity};
use maestro_tpch::queries::{QUERY_COUNT, QueryParams, run_profiled};
use maestro_tpch::{Database, REFRESH_SETS_MAX, RefreshFunction, RefreshReport, SharedDatabase};
use serde_json::json;

use crate::exit::{failure, usage};
use crate::tpch::{contexts, scale_factor};
use crate::variants::GranularityParser;
use crate::{flags, output};

#[derive(Args)]
pub struct RefreshArgs {
    /// Scale factor (0.01 to 10); each refresh function changes SF × 1 500 orders.
    #[arg(long, default_value_t = 1.0)]
    sf: f64,
    /// Refresh pairs to run: RF1 then RF2 of set 1, then of set 2, … up to N.
    #[arg(long, default_value_t = 1)]
    pairs: u32,
    /// Only write refresh sets 1..=N in dbgen's file names (`orders.tbl.u<n>`,
    /// `lineitem.tbl.u<n>`, `delete.<n>`) into this directory; loads nothing.
    #[arg(long, value_name = "DIR")]
    export_sets: Option<PathBuf>,
    /// After the pairs, time the 22 queries (validation parameters) on the
    /// refreshed snapshot and on the loaded tables, side by side, in rotated
    /// order, --reps times. With `--storage delta`: the 22 SQL statements on
    /// the store's main + delta and on the same rows merged (answers compared).
    #[arg(long)]
    compare_queries: bool,
    /// Repetitions of the comparison (default 3).
    #[arg(long)]
    reps: Option<usize>,
    /// Granularity policy of the queries.
    #[arg(long, default_value = "hint", value_parser = GranularityParser)]
    granularity: Granularity,
    /// Hardware contexts to use (default: detected).
    #[arg(long)]
    contexts: Option<usize>,
    /// Where the refreshes write: copy-on-write versions of the tables
    /// (`cow`, what the hand-written queries read) or the deltas of the SQL
    /// store's tables (`delta`, main + delta: `maestro serve`'s storage).
    #[arg(long, value_enum, default_value_t = Storage::Cow)]
    storage: Storage,
    /// Print one JSON object on stdout (progress stays on stderr).
    #[arg(long)]
    json: bool,
    /// Also write the JSON and the table into this directory.
    #[arg(long)]
    out: Option<PathBuf>,
}

/// The storage `maestro tpch refresh` writes to (and `tpch throughput --storage` reads).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Storage {
    /// Copy-on-write versions of ORDERS and LINEITEM (`SharedDatabase`).
    Cow,
    /// The deltas of the SQL store's ORDERS and LINEITEM.
    Delta,
}

/// One line per committed refresh, for progress output.
pub(crate) fn report_line(r: &RefreshReport) -> String {
    let sign = match r.function {
        RefreshFunction::Rf1 => '+',
        RefreshFunction::Rf2 => '-',
    };
    format!(
        "{} set {}: {sign}{} orders, {sign}{} line items; rows generated in {:.1} ms, versions \
         built in {:.1} ms, committed after {:.1} ms (commit ts {}, {} attempt(s))",
        r.function,
        r.number,
        r.orders_changed,
        r.lineitem_changed,
        r.generate.as_secs_f64() * 1e3,
        r.build.as_secs_f64() * 1e3,
        r.total.as_secs_f64() * 1e3,
        r.commit_ts,
        r.attempts
    )
}

pub(crate) fn refresh(a: RefreshArgs) -> Result<ExitCode, ExitCode> {
    let sf = scale_factor(a.sf)?;
    if a.pairs == 0 || a.pairs > REFRESH_SETS_MAX {
        return Err(usage(format!(
            "--pairs {}: expected 1 to {REFRESH_SETS_MAX}",
            a.pairs
        )));
    }
    if let Some(dir) = &a.export_sets {
        for n in 1..=a.pairs {
            let files = maestro_tpch::export_set(sf, n, dir).map_err(failure)?;
            for f in files {
                eprintln!("wrote {}", f.display());
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    let reps = flags::reps(a.reps, false)?;
    let scheduler =
        tpch::start_scheduler("single-hints", contexts(a.contexts)?).map_err(failure)?;
    eprintln!("loading TPC-H SF {sf} …");
    let (loaded, load) = tpch::load(&scheduler, sf, &|_| {}).map_err(failure)?;
    eprintln!("loaded in {:.2} s", load.as_secs_f64());
    if a.storage == Storage::Delta {
        let exec = Executor::new(scheduler.clone(), a.granularity);
        let (json, table) = crate::tpch_refresh_delta::refresh_deltas(
            sf,
            a.pairs,
            a.compare_queries.then_some(reps),
            &loaded,
            load.as_secs_f64(),
            &exec,
        )?;
        return Ok(emit(&json, &table, &a));
    }
    let shared = SharedDatabase::new(loaded.clone()).map_err(failure)?;
    let mut reports = Vec::new();
    for n in 1..=a.pairs {
        for f in [RefreshFunction::Rf1, RefreshFunction::Rf2] {
            let r = shared.refresh(&scheduler, f, n).map_err(failure)?;
            eprintln!("{}", report_line(&r));
            reports.push(r);
        }
    }
    let refreshed = shared.snapshot().map_err(failure)?;
    let mut table = format!(
        "TPC-H SF {sf}: {} refresh pair(s); orders {} → {}, line items {} → {}\n\
         function | set | orders | line items | generate ms | build ms | commit ms (transaction)\n",
        a.pairs,
        loaded.orders.num_rows(),
        refreshed.orders.num_rows(),
        loaded.lineitem.num_rows(),
        refreshed.lineitem.num_rows()
    );
    for r in &reports {
        table.push_str(&format!(
            "{} | {} | {} | {} | {:.1} | {:.1} | {:.1}\n",
            r.function,
            r.number,
            r.orders_changed,
            r.lineitem_changed,
            r.generate.as_secs_f64() * 1e3,
            r.build.as_secs_f64() * 1e3,
            r.total.as_secs_f64() * 1e3
        ));
    }
    let mut comparison = Vec::new();
    if a.compare_queries {
        let exec = Executor::new(scheduler.clone(), a.granularity);
        let (rows, text) = compare_queries(&exec, &loaded, &refreshed, sf, reps)?;
        comparison = rows;
        table.push_str(&text);
    }
    let json = json!({
        "experiment": "tpch-refresh",
        "storage": "cow",
        "sf": sf,
        "pairs": a.pairs,
        "contexts": scheduler.contexts(),
        "granularity": a.granularity.to_string(),
        "load_seconds": load.as_secs_f64(),
        "orders_rows": [loaded.orders.num_rows(), refreshed.orders.num_rows()],
        "lineitem_rows": [loaded.lineitem.num_rows(), refreshed.lineitem.num_rows()],
        "refreshes": reports.iter().map(|r| json!({
            "function": r.function.to_string(),
            "set": r.number,
            "orders_changed": r.orders_changed,
            "lineitem_changed": r.lineitem_changed,
            "generate_s": r.generate.as_secs_f64(),
            "build_s": r.build.as_secs_f64(),
            "total_s": r.total.as_secs_f64(),
            "commit_ts": r.commit_ts,
            "attempts": r.attempts,
        })).collect::<Vec<_>>(),
        "catalog_versions_stored": shared.versions_stored(),
        "queries": comparison,
    });
    Ok(emit(&json, &table, &a))
}

/// The report on stdout (`--json`: the JSON) and into `--out`.
fn emit(json: &serde_json::Value, table: &str, a: &RefreshArgs) -> ExitCode {
    let json = serde_json::to_string_pretty(json).expect("JSON serializes");
    output::emit(&json, table, "tpch-refresh", a.json, a.out.clone(), &[])
}

/// Each query on `loaded` and on `refreshed`, the two in alternating order
/// per repetition; per query the median seconds of each and the median and
/// range of the per-repetition ratios refreshed ÷ loaded.
fn compare_queries(
    exec: &Executor,
    loaded: &Database,
    refreshed: &Database,
    sf: f64,
    reps: usize,
) -> Result<(Vec<serde_json::Value>, String), ExitCode> {
    let mut rows = Vec::new();
    let mut text = String::from(
        "query | loaded s (median) | refreshed s (median) | refreshed ÷ loaded, median [min–max]\n",
    );
    let time = |db: &Database, p: &QueryParams| -> Result<f64, ExitCode> {
        let start = Instant::now();
        run_profiled(exec, db, p).map_err(failure)?;
        Ok(start.elapsed().as_secs_f64())
    };
    let mut ratios_all = Vec::new();
    for q in 1..=QUERY_COUNT {
        let p = QueryParams::validation(q, sf).map_err(failure)?;
        let t = paired(reps, || time(loaded, &p), || time(refreshed, &p))?;
        let (o, n, r, lo, hi) = (t.first_median, t.second_median, t.ratio, t.min, t.max);
        eprintln!("Q{q}: loaded {o:.4} s, refreshed {n:.4} s, ratio {r:.3} [{lo:.3}–{hi:.3}]");
        text.push_str(&format!(
            "Q{q} | {o:.4} | {n:.4} | {r:.3} [{lo:.3}–{hi:.3}]\n"
        ));
        ratios_all.push(r);
        rows.push(json!({
            "query": q, "loaded_s": t.first, "refreshed_s": t.second, "ratios": t.ratios,
            "loaded_median_s": o, "refreshed_median_s": n, "ratio_median": r,
        }));
    }
    text.push_str(&geomean_line(&ratios_all));
    Ok((rows, text))
}

/// Two variants timed side by side: per repetition both, in rotated order
/// (the first first on even repetitions).
pub(crate) struct Paired {
    pub first: Vec<f64>,
    pub second: Vec<f64>,
    /// Per repetition, second ÷ first.
    pub ratios: Vec<f64>,
    pub first_median: f64,
    pub second_median: f64,
    /// The median of `ratios`, and their range.
    pub ratio: f64,
    pub min: f64,
    pub max: f64,
}

/// Runs `first` and `second` `reps` times each, rotated.
pub(crate) fn paired(
    reps: usize,
    mut first: impl FnMut() -> Result<f64, ExitCode>,
    mut second: impl FnMut() -> Result<f64, ExitCode>,
) -> Result<Paired, ExitCode> {
    let (mut a, mut b, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for rep in 0..reps {
        let (mut x, mut y) = (0.0, 0.0);
        for variant in reps::rotation(2, rep) {
            match variant {
                0 => x = first()?,
                _ => y = second()?,
            }
        }
        a.push(x);
        b.push(y);
        ratios.push(y / x);
    }
    let median = |v: &[f64]| Spread::of(v).expect("at least one repetition");
    let ((first_median, _), (second_median, _), (ratio, spread)) =
        (median(&a), median(&b), median(&ratios));
    Ok(Paired {
        first: a,
        second: b,
        ratios,
        first_median,
        second_median,
        ratio,
        min: spread.min,
        max: spread.max,
    })
}

/// The closing line of a 22-query comparison table.
pub(crate) fn geomean_line(ratios: &[f64]) -> String {
    let geo = (ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64).exp();
    let (_, all) = Spread::of(ratios).expect("22 queries");
    format!(
        "geometric mean of the {} median ratios: {geo:.3} (per-query medians {:.3}–{:.3})\n",
        ratios.len(),
        all.min,
        all.max
    )
}
