//! `olc`: the B+-tree with optimistic lock coupling against its two baselines
//! (Leis et al., IEEE Data Eng. Bull. 2019, §4): lookups and inserts per second
//! at several thread counts.
//!
//! For every thread count and repetition, each variant in turn (interleaved, so
//! machine noise hits all alike, in an order rotated per repetition by
//! [`crate::reps`]; rows are medians over the repetitions with their min–max —
//! before the shared harness, the best repetition counted):
//! 1. *insert*: an empty index receives `keys` distinct random 64-bit keys (values
//!    are row ids), split evenly over the threads;
//! 2. *lookup*: the threads then look up `lookups` keys drawn uniformly from the
//!    inserted ones (every lookup hits; a miss is an error).
//!
//! Variants: `olc` ([`OlcBTree`]), `rwlock-coupling` ([`RwLockCouplingBTree`], a
//! reader-writer lock per node, lock coupling) and `rwlock-btreemap`
//! ([`LockedBTreeMap`], one lock around `std`'s `BTreeMap`). Both trees use
//! 4 KB nodes, as in the paper. Cases are named `insert_t{threads}` and
//! `lookup_t{threads}` (the shared row shape has no thread column); rows with
//! metric `ratio_vs_<baseline>` give olc ÷ that baseline (per repetition, then
//! the median).

use std::sync::Barrier;
use std::time::Instant;

use maestro_storage::index::{LockedBTreeMap, OlcBTree, OrderedIndex, RwLockCouplingBTree};
use serde::Serialize;

use crate::{Report, ResultRow};

/// Sizes of the experiment.
#[derive(Clone, Debug, Serialize)]
pub struct OlcParams {
    /// Distinct random keys inserted, hence the tree size the lookups see.
    pub keys: usize,
    /// Lookups per measurement, spread over the threads.
    pub lookups: usize,
    /// Repetitions; the median counts.
    pub reps: usize,
    /// Seed of the key set and the lookup sequences.
    pub seed: u64,
}

impl OlcParams {
    /// 10 M keys (the paper used 100 M on a 10-core machine).
    pub fn full() -> Self {
        OlcParams {
            keys: 10_000_000,
            lookups: 10_000_000,
            reps: crate::reps::default_reps(false),
            seed: 42,
        }
    }
    pub fn quick() -> Self {
        OlcParams {
            keys: 200_000,
            lookups: 1_000_000,
            // An insert phase lasts ~40 ms here: give --reps for numbers to quote.
            reps: crate::reps::default_reps(true),
            seed: 42,
        }
    }
}

/// The variants, OLC first.
pub const VARIANTS: [&str; 3] = ["olc", "rwlock-coupling", "rwlock-btreemap"];

/// splitmix64's finalizer: a bijection on u64, so distinct inputs give distinct keys.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// Runs `work(thread index)` on `threads` threads released together; returns the
/// wall time from the release until the last one finished.
fn timed_threads<R: Send>(threads: usize, work: impl Fn(usize) -> R + Sync) -> (f64, Vec<R>) {
    let start = Barrier::new(threads + 1);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (start, work) = (&start, &work);
                s.spawn(move || {
                    start.wait();
                    work(t)
                })
            })
            .collect();
        start.wait();
        let t0 = Instant::now();
        let results: Vec<R> = handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect();
        (t0.elapsed().as_secs_f64(), results)
    })
}

/// Inserts then looks up on a fresh index; returns (inserts/s, lookups/s).
fn measure<I: OrderedIndex<Key = u64, Value = u64>>(
    idx: I,
    keys: &[u64],
    threads: usize,
    params: &OlcParams,
) -> Result<(f64, f64), String> {
    let chunk = keys.len().div_ceil(threads);
    let (secs, _) = timed_threads(threads, |t| {
        let lo = (t * chunk).min(keys.len());
        let hi = ((t + 1) * chunk).min(keys.len());
        for (i, &k) in keys[lo..hi].iter().enumerate() {
            idx.insert(k, (lo + i) as u64);
        }
    });
    let inserts = keys.len() as f64 / secs;
    if idx.len() != keys.len() {
        return Err(format!(
            "{} entries after {} inserts",
            idx.len(),
            keys.len()
        ));
    }
    let per_thread = params.lookups.div_ceil(threads);
    let (secs, misses) = timed_threads(threads, |t| {
        let mut x = mix(params.seed ^ (t as u64 + 1)) | 1;
        let mut misses = 0u64;
        let mut sum = 0u64;
        for _ in 0..per_thread {
            // xorshift64, then a multiply-shift into 0..len.
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let i = ((x as u128 * keys.len() as u128) >> 64) as usize;
            match idx.lookup(keys[i]) {
                Some(v) => sum = sum.wrapping_add(v),
                None => misses += 1,
            }
        }
        std::hint::black_box(sum);
        misses
    });
    let misses: u64 = misses.iter().sum();
    if misses > 0 {
        return Err(format!("{misses} lookups of inserted keys missed"));
    }
    let lookups = (per_thread * threads) as f64 / secs;
    Ok((inserts, lookups))
}

fn measure_variant(
    variant: &str,
    keys: &[u64],
    threads: usize,
    params: &OlcParams,
) -> Result<(f64, f64), String> {
    match variant {
        "olc" => measure(OlcBTree::<u64, u64>::new(), keys, threads, params),
        "rwlock-coupling" => measure(
            RwLockCouplingBTree::<u64, u64>::new(),
            keys,
            threads,
            params,
        ),
        "rwlock-btreemap" => measure(LockedBTreeMap::<u64, u64>::new(), keys, threads, params),
        _ => Err(format!("unknown variant {variant}")),
    }
}

/// One repetition's `ratio_vs_<baseline>` rows: olc ÷ each baseline per case.
fn ratio_rows(rows: &[ResultRow]) -> Vec<ResultRow> {
    let mut out = Vec::new();
    for olc in rows.iter().filter(|r| r.variant == VARIANTS[0]) {
        for base in rows
            .iter()
            .filter(|r| r.case == olc.case && r.variant != VARIANTS[0] && r.value > 0.0)
        {
            out.push(ResultRow {
                case: olc.case.clone(),
                variant: olc.variant.clone(),
                metric: format!("ratio_vs_{}", base.variant),
                value: olc.value / base.value,
                unit: "x".into(),
                higher_is_better: true,
                ..Default::default()
            });
        }
    }
    out
}

/// Runs the experiment at each thread count. `progress` receives one line per
/// measurement.
pub fn run(
    threads: &[usize],
    params: &OlcParams,
    mut progress: impl FnMut(&str),
) -> Result<Report, String> {
    if threads.is_empty() || threads.contains(&0) {
        return Err(format!(
            "bench olc: thread counts must be ≥ 1, got {threads:?}"
        ));
    }
    if params.keys == 0 || params.lookups == 0 {
        return Err("bench olc: keys and lookups must be ≥ 1".into());
    }
    let keys: Vec<u64> = (0..params.keys as u64)
        .map(|i| mix(i ^ params.seed))
        .collect();
    let mut results = Vec::new();
    let ops_row = |case: String, variant: &str, value: f64| ResultRow {
        case,
        variant: variant.to_string(),
        metric: "ops_per_second".into(),
        value,
        unit: "ops/s".into(),
        higher_is_better: true,
        ..Default::default()
    };
    for &t in threads {
        // The rotation matters here: the first run of a process pays for fresh
        // pages that later runs get back from the allocator.
        let mut per_rep = crate::reps::repeat(&VARIANTS, params.reps, |&variant, rep| {
            let (ins, look) = measure_variant(variant, &keys, t, params)
                .map_err(|e| format!("bench olc, {variant} at {t} threads: {e}"))?;
            progress(&format!(
                "threads {t} rep {}/{} {:<16} insert {:>12.0}/s  lookup {:>12.0}/s",
                rep + 1,
                params.reps,
                variant,
                ins,
                look
            ));
            Ok(vec![
                ops_row(format!("lookup_t{t}"), variant, look),
                ops_row(format!("insert_t{t}"), variant, ins),
            ])
        })?;
        for rows in &mut per_rep {
            let ratios = ratio_rows(rows);
            rows.extend(ratios);
        }
        results.extend(crate::reps::aggregate(per_rep));
    }
    let mut params_json = serde_json::to_value(params).map_err(|e| e.to_string())?;
    params_json["threads"] = serde_json::json!(threads);
    params_json["fanout"] = serde_json::json!(maestro_storage::index::DEFAULT_FANOUT);
    Ok(Report {
        experiment: "olc".into(),
        contexts: std::thread::available_parallelism().map_or(1, |n| n.get()),
        params: params_json,
        results,
        attachments: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_run_has_every_variant_and_sane_values() {
        let p = OlcParams {
            keys: 3000,
            lookups: 3000,
            reps: 1,
            ..OlcParams::quick()
        };
        let mut lines = 0;
        let r = run(&[1, 2], &p, |_| lines += 1).unwrap();
        assert_eq!(lines, 2 * VARIANTS.len());
        for t in [1, 2] {
            for case in ["lookup", "insert"] {
                let case = format!("{case}_t{t}");
                for v in VARIANTS {
                    let row = r
                        .results
                        .iter()
                        .find(|x| x.variant == v && x.case == case && x.metric == "ops_per_second")
                        .unwrap_or_else(|| panic!("missing {v}/{case}"));
                    assert!(row.value.is_finite() && row.value > 0.0, "{row:?}");
                }
                for b in &VARIANTS[1..] {
                    let metric = format!("ratio_vs_{b}");
                    let row = r
                        .results
                        .iter()
                        .find(|x| x.case == case && x.metric == metric)
                        .unwrap_or_else(|| panic!("missing {metric} for {case}"));
                    assert!(row.value.is_finite() && row.value > 0.0, "{row:?}");
                }
            }
        }
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["experiment"], "olc");
        assert_eq!(json["params"]["threads"], serde_json::json!([1, 2]));
        assert!(r.table().contains("lookup_t2"));
    }

    #[test]
    fn bad_parameters_are_errors() {
        assert!(run(&[], &OlcParams::quick(), |_| {}).is_err());
        assert!(run(&[0], &OlcParams::quick(), |_| {}).is_err());
    }

    /// The measured numbers: `cargo test --release -p maestro-bench olc::tests::numbers
    /// -- --ignored --nocapture` (`MAESTRO_OLC_BENCH=quick` for the small size).
    #[test]
    #[ignore = "long-running benchmark; run in release"]
    fn numbers() {
        let params = match std::env::var("MAESTRO_OLC_BENCH").as_deref() {
            Ok("quick") => OlcParams::quick(),
            _ => OlcParams::full(),
        };
        let r = run(&[1, 2, 4], &params, |l| eprintln!("{l}")).unwrap();
        println!("{}", r.table());
        println!("{}", serde_json::to_string(&r).unwrap());
    }
}
