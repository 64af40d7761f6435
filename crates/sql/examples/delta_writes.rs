//! Main + delta against a copy per write, side by side on one SQL store
//! holding TPC-H (issue 16 part 1):
//! - **writes**: one-row INSERTs into LINEITEM, each autocommitted; the
//!   `delta` variant leaves them in the delta, the `copy` variant merges
//!   after every write (`CALL maestro.merge()`'s path), which costs what a
//!   write cost before deltas existed — a new version of the whole table;
//! - **scans**: TPC-H Q1 and Q6 as SQL over LINEITEM with an empty delta,
//!   with a delta of `--delta-rows` appended rows (columns with a tail),
//!   and with half of those deleted again (read through live row ids);
//! - **merges** of such a delta into LINEITEM: from a client thread (one
//!   column after another) and as a scheduler job (columns as fork-join
//!   tasks), which includes the optimizer's statistics of the new main; each query runs once untimed first
//!   (a merged main computes its statistics on first use).
//!
//! Each repetition runs the variants in turn, the order alternating
//! between repetitions; per variant the median and range.
//!
//!     cargo run --release -p maestro-sql --example delta_writes -- [--sf 1] [--reps 5] [--writes 20] [--delta-rows 10000] [--out FILE.json]

use std::sync::Arc;
use std::time::Instant;

use maestro_execution::{Executor, Granularity};
use maestro_scheduler::{Scheduler, SchedulerConfig};
use maestro_sql::store::MergeScope;
use maestro_sql::{LogicalPlan, Output, Store};
use maestro_tpch::queries::QueryResult;

#[path = "common/args.rs"]
mod args;
use args::arg;

fn stats(v: &[f64]) -> (f64, f64, f64) {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    (s[s.len() / 2], s[0], s[s.len() - 1])
}

struct Bench {
    store: Store,
    exec: Executor,
}

impl Bench {
    fn write(&self, sql: &str) {
        let ctx = self.exec.context("delta_writes");
        let run = |c: &dyn maestro_sql::Catalog, p: &LogicalPlan| -> Result<QueryResult, _> {
            self.exec.run_plan(|| maestro_sql::lower::run(&ctx, c, p))
        };
        let stmt = maestro_sql::parse(sql).expect("parses");
        let mut t = self.store.begin().expect("begins");
        self.store
            .execute(&mut t, &stmt, &[], &run)
            .expect("a write")
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
        self.store.commit(t).expect("commits");
    }

    /// One INSERT of `n` new LINEITEM rows, keys after `*next_key`.
    fn insert_rows(&self, next_key: &mut u64, n: u64) {
        let rows: Vec<String> = (0..n)
            .map(|_| {
                *next_key += 1;
                lineitem_row(*next_key)
            })
            .collect();
        self.write(&format!("insert into lineitem values {}", rows.join(", ")));
    }

    fn query(&self, sql: &str) -> usize {
        let mut t = self.store.begin().expect("begins");
        let view = self.store.view(&mut t);
        let out = maestro_sql::execute(&self.exec, &view, sql).expect("runs");
        t.abort();
        match out {
            Output::Rows(r) => r.rows.len(),
            Output::Explain(_) => unreachable!("a query"),
        }
    }

    fn delta_rows(&self) -> usize {
        let mut t = self.store.begin().expect("begins");
        let view = self.store.view(&mut t);
        let n = view
            .entry("lineitem")
            .expect("lineitem")
            .1
            .live_delta()
            .map_or(0, |d| d.size());
        t.abort();
        n
    }
}

fn lineitem_row(k: u64) -> String {
    format!(
        "({}, 1, 1, 1, 17, 17000.00, 0.04, 0.02, 'N', 'O', date '1998-01-01', \
         date '1998-01-15', date '1998-02-01', 'NONE', 'AIR', 'delta bench row')",
        7_000_000_000u64 + k
    )
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let sf: f64 = arg(&args, "--sf", "1").parse().expect("--sf F");
    let reps: usize = arg(&args, "--reps", "5").parse().expect("--reps N");
    let writes: u64 = arg(&args, "--writes", "20").parse().expect("--writes N");
    let delta_rows: u64 = arg(&args, "--delta-rows", "10000")
        .parse()
        .expect("--delta-rows N");
    assert!(
        reps > 0 && writes > 0,
        "--reps and --writes must be at least 1"
    );
    let out = arg(&args, "--out", "");
    let scheduler =
        Arc::new(Scheduler::new(SchedulerConfig::single_hints()).expect("scheduler starts"));
    let db = maestro_tpch::load(&scheduler, sf, &|_| {}).expect("TPC-H loads");
    let bench = Bench {
        store: Store::new(),
        exec: Executor::new(scheduler.clone(), Granularity::Hint),
    };
    bench.store.put_tpch(&db).expect("TPC-H into the store");
    let q1 = std::fs::read_to_string("crates/sql/tests/queries/tpch_q01.sql")
        .expect("run from the repository root");
    let q6 = std::fs::read_to_string("crates/sql/tests/queries/tpch_q06.sql")
        .expect("run from the repository root");
    let mut next_key = 0u64;
    let mut json = Vec::new();
    let mut per_write = (Vec::new(), Vec::new()); // (delta, copy) ms
    let mut merges: [Vec<f64>; 2] = Default::default(); // (sequential, scheduler) ms
    // Per query, per scan variant (merged, appended delta, delta with
    // deletions) the times in ms.
    let mut scans: Vec<(&str, [Vec<f64>; 3])> =
        vec![("q1", Default::default()), ("q6", Default::default())];
    for rep in 0..reps {
        for variant in if rep % 2 == 0 { [0, 1] } else { [1, 0] } {
            bench.store.merge_deltas(MergeScope::All).expect("merges");
            let t = Instant::now();
            for _ in 0..writes {
                next_key += 1;
                bench.write(&format!(
                    "insert into lineitem values {}",
                    lineitem_row(next_key)
                ));
                if variant == 1 {
                    bench.store.merge_deltas(MergeScope::All).expect("merges");
                }
            }
            let ms = t.elapsed().as_secs_f64() * 1e3 / writes as f64;
            [&mut per_write.0, &mut per_write.1][variant].push(ms);
        }
        // Scans: merged; a delta of `delta_rows` appended rows; the same
        // with half of them deleted again (read through live row ids) —
        // the order rotating between repetitions.
        for k in 0..3 {
            let variant = (rep + k) % 3;
            bench.store.merge_deltas(MergeScope::All).expect("merges");
            if variant >= 1 {
                let first = next_key + 1;
                bench.insert_rows(&mut next_key, delta_rows);
                let mut want = delta_rows;
                if variant == 2 {
                    bench.write(&format!(
                        "delete from lineitem where l_orderkey >= {} and l_orderkey < {}",
                        7_000_000_000 + first,
                        7_000_000_000 + first + delta_rows / 2
                    ));
                    want += delta_rows / 2;
                }
                assert_eq!(
                    bench.delta_rows() as u64,
                    want,
                    "the writes stay in the delta"
                );
            }
            for (sql, scan) in [&q1, &q6].into_iter().zip(scans.iter_mut()) {
                // Untimed first: a merged main computes its column
                // statistics on first use (the optimizer's), which is the
                // merge's cost, not the scan's.
                bench.query(sql);
                let t = Instant::now();
                bench.query(sql);
                scan.1[variant].push(t.elapsed().as_secs_f64() * 1e3);
            }
        }
        // Merges of a delta of `delta_rows` appended rows: from this thread
        // (one column after another) and as a scheduler job (the columns as
        // fork-join tasks), alternating.
        for k in 0..2 {
            let variant = (rep + k) % 2;
            bench.insert_rows(&mut next_key, delta_rows);
            let t = Instant::now();
            let report = match variant {
                0 => bench.store.merge_deltas(MergeScope::All),
                _ => scheduler.install(|| bench.store.merge_deltas(MergeScope::All)),
            }
            .expect("merges");
            assert_eq!(report.merged.len(), 1, "{report:?}");
            merges[variant].push(t.elapsed().as_secs_f64() * 1e3);
        }
        eprintln!("repetition {} of {reps} done", rep + 1);
    }
    let (d, c) = (stats(&per_write.0), stats(&per_write.1));
    println!(
        "1-row INSERT into lineitem: delta {:.3} ms [{:.3}–{:.3}], copy per write {:.1} ms [{:.1}–{:.1}]",
        d.0, d.1, d.2, c.0, c.1, c.2
    );
    json.push(format!(
        "{{\"case\":\"insert_1_row\",\"delta_ms\":{:?},\"copy_ms\":{:?}}}",
        per_write.0, per_write.1
    ));
    for (name, [merged, appended, deleted]) in &scans {
        let m = stats(merged);
        for (what, times) in [("appended", appended), ("with deletions", deleted)] {
            let ratios: Vec<f64> = times.iter().zip(merged).map(|(a, b)| a / b).collect();
            let (w, r) = (stats(times), stats(&ratios));
            println!(
                "{name}: merged {:.1} ms, delta ({what}) {:.1} ms, ratio {:.2} [{:.2}–{:.2}]",
                m.0, w.0, r.0, r.1, r.2
            );
        }
        json.push(format!(
            "{{\"case\":\"{name}\",\"delta_rows\":{delta_rows},\"merged_ms\":{merged:?},\"appended_delta_ms\":{appended:?},\"delta_with_deletions_ms\":{deleted:?}}}"
        ));
    }
    let (a, b) = (stats(&merges[0]), stats(&merges[1]));
    println!(
        "merge of a {delta_rows}-row delta into lineitem: one column after another {:.1} ms \
         [{:.1}–{:.1}], columns as scheduler tasks {:.1} ms [{:.1}–{:.1}]",
        a.0, a.1, a.2, b.0, b.1, b.2
    );
    json.push(format!(
        "{{\"case\":\"merge\",\"delta_rows\":{delta_rows},\"sequential_ms\":{:?},\"scheduler_ms\":{:?}}}",
        merges[0], merges[1]
    ));
    if !out.is_empty() {
        let text = format!(
            "{{\"sf\":{sf},\"reps\":{reps},\"writes\":{writes},\"results\":[{}]}}\n",
            json.join(",")
        );
        std::fs::write(&out, text).expect("writes --out");
        eprintln!("wrote {out}");
    }
}
