//! Seeded concurrent stress of the three `OrderedIndex` implementations against a
//! reference `BTreeMap`.
//!
//! The seed fixes every thread's sequence of operations (not the interleaving);
//! each test prints it, and a failure names it. Replay with
//! `MAESTRO_STRESS_SEED=<seed> cargo test -p maestro-storage --test index_stress`.
//! The checks hold for every interleaving of a correct index, so the outcome is
//! deterministic. `MAESTRO_STRESS_SCALE=<n>` multiplies the operation counts.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Barrier;

use maestro_storage::index::{LockedBTreeMap, OlcBTree, OrderedIndex, RwLockCouplingBTree};

const THREADS: u64 = 4;
const DEFAULT_SEED: u64 = 0x4D41_4553_5452_4F31;

fn base_seed() -> u64 {
    match std::env::var("MAESTRO_STRESS_SEED") {
        Ok(s) => s
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("MAESTRO_STRESS_SEED={s:?} is not a u64")),
        Err(_) => DEFAULT_SEED,
    }
}

/// Runs `f(seed)`; on failure panics with the seed and how to replay it.
fn seeded(name: &str, f: impl FnOnce(u64)) {
    let seed = base_seed();
    eprintln!("{name}: seed {seed}");
    if let Err(e) = catch_unwind(AssertUnwindSafe(|| f(seed))) {
        let msg = e
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        panic!(
            "{name} failed with seed {seed}: {msg}\n\
             replay: MAESTRO_STRESS_SEED={seed} cargo test -p maestro-storage --test index_stress {name}"
        );
    }
}

/// `MAESTRO_STRESS_SCALE` multiplies the operation counts (default 1) for soak runs.
fn ops(n: u64) -> u64 {
    let scale = std::env::var("MAESTRO_STRESS_SCALE")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .unwrap_or(1);
    n * scale.max(1)
}

fn rng_for(seed: u64, tid: u64) -> fastrand::Rng {
    fastrand::Rng::with_seed(seed ^ tid.wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// Values name their key, writer and a per-writer sequence number, so a value
/// read for the wrong key is caught at once and every write is unique.
fn value_for(key: u64, tid: u64, seq: u64) -> u64 {
    debug_assert!(key < 1 << 36 && tid < 16 && seq < 1 << 24);
    (key << 28) | (tid << 24) | seq
}
fn key_of(value: u64) -> u64 {
    value >> 28
}

fn full_scan<I: OrderedIndex<Key = u64, Value = u64>>(idx: &I) -> Vec<(u64, u64)> {
    let mut all = Vec::new();
    idx.range(0..=u64::MAX, &mut |k, v| {
        all.push((k, v));
        true
    });
    all
}

/// Checks a scan result: inside `lo..=hi`, strictly increasing, values naming
/// their keys.
fn check_scan(lo: u64, hi: u64, got: &[(u64, u64)]) {
    for w in got.windows(2) {
        assert!(w[0].0 < w[1].0, "scan not strictly increasing: {w:?}");
    }
    for &(k, v) in got {
        assert!((lo..=hi).contains(&k), "scan {lo}..={hi} returned key {k}");
        assert_eq!(key_of(v), k, "scan returned value {v:#x} for key {k}");
    }
}

// ---- disjoint key sets: exact per-thread reference ---------------------------------

/// Each thread owns the keys `≡ tid (mod THREADS)` and keeps its own reference map;
/// every lookup and the owned part of every scan must match it exactly. At the
/// end the union of the references must equal the index.
fn disjoint<I: OrderedIndex<Key = u64, Value = u64>>(idx: &I, seed: u64, ops: u64, keys: u64) {
    let start = Barrier::new(THREADS as usize);
    let refs: Vec<BTreeMap<u64, u64>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|tid| {
                let start = &start;
                s.spawn(move || {
                    let mut rng = rng_for(seed, tid);
                    let mut mine = BTreeMap::new();
                    start.wait();
                    for seq in 0..ops {
                        let key = rng.u64(0..keys) * THREADS + tid;
                        match rng.u32(0..100) {
                            0..45 => {
                                let v = value_for(key, tid, seq);
                                assert_eq!(idx.insert(key, v), mine.insert(key, v), "insert {key}");
                            }
                            45..65 => {
                                assert_eq!(idx.remove(key), mine.remove(&key), "remove {key}")
                            }
                            65..90 => {
                                assert_eq!(idx.lookup(key), mine.get(&key).copied(), "lookup {key}")
                            }
                            _ => {
                                let lo = rng.u64(0..keys * THREADS);
                                let hi = lo + rng.u64(0..64 * THREADS);
                                let mut got = Vec::new();
                                idx.range(lo..=hi, &mut |k, v| {
                                    got.push((k, v));
                                    true
                                });
                                check_scan(lo, hi, &got);
                                let own: Vec<(u64, u64)> =
                                    got.into_iter().filter(|e| e.0 % THREADS == tid).collect();
                                let want: Vec<(u64, u64)> =
                                    mine.range(lo..=hi).map(|(k, v)| (*k, *v)).collect();
                                assert_eq!(own, want, "scan {lo}..={hi} (own keys)");
                            }
                        }
                    }
                    mine
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    let reference: BTreeMap<u64, u64> = refs.into_iter().flatten().collect();
    assert_eq!(
        full_scan(idx),
        reference.iter().map(|(k, v)| (*k, *v)).collect::<Vec<_>>()
    );
    assert_eq!(idx.len(), reference.len());
    for key in 0..keys * THREADS {
        assert_eq!(
            idx.lookup(key),
            reference.get(&key).copied(),
            "final lookup {key}"
        );
    }
}

// ---- overlapping key set: linearizability of each key's history ------------------

#[derive(Clone, Copy, Debug)]
enum Write {
    Insert {
        key: u64,
        value: u64,
        prev: Option<u64>,
    },
    Remove {
        key: u64,
        prev: Option<u64>,
    },
}

/// One thread's writes (with what they returned) and the (key, value) pairs it read.
type ThreadLog = (Vec<Write>, Vec<(u64, u64)>);

/// All threads hammer the same odd keys; the even keys are inserted first and never
/// touched again ("stable"). Checked:
/// - every value read (lookup, scan, or returned by insert/remove) was written for
///   that key by some insert;
/// - every scan is ordered, in bounds, and contains every stable key in range;
/// - per key, each written value is returned as "previous" at most once (no lost
///   update), and the values never returned are exactly the final contents: at
///   most one per key, which must be what the index holds at the end.
fn overlapping<I: OrderedIndex<Key = u64, Value = u64>>(idx: &I, seed: u64, ops: u64, hot: u64) {
    const STABLE_TID: u64 = 15;
    for i in 0..hot {
        assert_eq!(idx.insert(2 * i, value_for(2 * i, STABLE_TID, 0)), None);
    }
    let start = Barrier::new(THREADS as usize);
    let logs: Vec<ThreadLog> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|tid| {
                let start = &start;
                s.spawn(move || {
                    let mut rng = rng_for(seed, tid);
                    let mut writes = Vec::new();
                    let mut seen = Vec::new();
                    start.wait();
                    for seq in 0..ops {
                        let key = 2 * rng.u64(0..hot) + 1;
                        match rng.u32(0..100) {
                            0..40 => {
                                let value = value_for(key, tid, seq);
                                let prev = idx.insert(key, value);
                                writes.push(Write::Insert { key, value, prev });
                            }
                            40..65 => {
                                let prev = idx.remove(key);
                                writes.push(Write::Remove { key, prev });
                            }
                            65..90 => {
                                if let Some(v) = idx.lookup(key) {
                                    seen.push((key, v));
                                }
                                let stable = key - 1;
                                assert_eq!(
                                    idx.lookup(stable),
                                    Some(value_for(stable, STABLE_TID, 0)),
                                    "stable key {stable}"
                                );
                            }
                            _ => {
                                let lo = rng.u64(0..2 * hot);
                                let hi = lo + rng.u64(0..96);
                                let mut got = Vec::new();
                                idx.range(lo..=hi, &mut |k, v| {
                                    got.push((k, v));
                                    true
                                });
                                check_scan(lo, hi, &got);
                                let stable: Vec<u64> =
                                    got.iter().filter(|e| e.0 % 2 == 0).map(|e| e.0).collect();
                                let want: Vec<u64> =
                                    (lo..=hi.min(2 * hot - 1)).filter(|k| k % 2 == 0).collect();
                                assert_eq!(stable, want, "scan {lo}..={hi} lost stable keys");
                                seen.extend(got.into_iter().filter(|e| e.0 % 2 == 1));
                            }
                        }
                    }
                    (writes, seen)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });

    let mut written: HashMap<u64, BTreeSet<u64>> = HashMap::new();
    for (writes, _) in &logs {
        for w in writes {
            if let Write::Insert { key, value, .. } = *w {
                written.entry(key).or_default().insert(value);
            }
        }
    }
    let was_written = |key: u64, v: u64| written.get(&key).is_some_and(|s| s.contains(&v));
    let mut consumed: HashMap<u64, BTreeSet<u64>> = HashMap::new();
    for (writes, seen) in &logs {
        for &(key, v) in seen {
            assert!(
                was_written(key, v),
                "read {v:#x} for key {key}, never written"
            );
        }
        for w in writes {
            let (key, prev) = match *w {
                Write::Insert { key, prev, .. } | Write::Remove { key, prev } => (key, prev),
            };
            if let Some(p) = prev {
                assert!(was_written(key, p), "{w:?}: previous value never written");
                assert!(
                    consumed.entry(key).or_default().insert(p),
                    "{w:?}: value {p:#x} returned as previous twice (lost update)"
                );
            }
        }
    }
    let mut reference: BTreeMap<u64, u64> = (0..hot)
        .map(|i| (2 * i, value_for(2 * i, STABLE_TID, 0)))
        .collect();
    for (key, values) in &written {
        let left: Vec<u64> = values
            .iter()
            .filter(|v| !consumed.get(key).is_some_and(|c| c.contains(v)))
            .copied()
            .collect();
        assert!(
            left.len() <= 1,
            "key {key}: {} values never overwritten",
            left.len()
        );
        if let Some(&v) = left.first() {
            reference.insert(*key, v);
        }
    }
    assert_eq!(
        full_scan(idx),
        reference.iter().map(|(k, v)| (*k, *v)).collect::<Vec<_>>()
    );
    assert_eq!(idx.len(), reference.len());
    for key in 0..2 * hot + 2 {
        assert_eq!(
            idx.lookup(key),
            reference.get(&key).copied(),
            "final lookup {key}"
        );
    }
}

// ---- a queue: producers append, consumers take the smallest key ------------------

/// TPC-C's new-order queue: two producers insert increasing keys, two consumers
/// repeatedly take the smallest key ≥ their cursor and remove it. Every key must be
/// consumed exactly once (the stragglers by a final drain).
fn queue<I: OrderedIndex<Key = u64, Value = u64>>(idx: &I, per_producer: u64) {
    const PRODUCERS: u64 = 2;
    let start = Barrier::new(4);
    let taken: Vec<Vec<u64>> = std::thread::scope(|s| {
        let mut handles = Vec::new();
        for p in 0..PRODUCERS {
            let start = &start;
            handles.push(s.spawn(move || {
                start.wait();
                for i in 0..per_producer {
                    let key = i * PRODUCERS + p;
                    assert_eq!(idx.insert(key, value_for(key, p, 0)), None);
                }
                Vec::new()
            }));
        }
        for _ in 0..2 {
            let start = &start;
            handles.push(s.spawn(move || {
                start.wait();
                let mut mine = Vec::new();
                let mut cursor = 0;
                let mut idle = 0;
                while idle < 1000 {
                    match idx.first_at_or_after(cursor) {
                        Some((k, v)) => {
                            assert_eq!(key_of(v), k);
                            idle = 0;
                            cursor = k;
                            if idx.remove(k).is_some() {
                                mine.push(k);
                            }
                        }
                        None => {
                            idle += 1;
                            std::thread::yield_now();
                        }
                    }
                }
                mine
            }));
        }
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    let mut all: Vec<u64> = taken.into_iter().flatten().collect();
    // Quiescent now: drain from a cursor (from 0 each time would walk the
    // drained region's empty leaves once per straggler).
    let mut cursor = 0;
    while let Some((k, _)) = idx.first_at_or_after(cursor) {
        assert!(idx.remove(k).is_some());
        all.push(k);
        cursor = k;
    }
    assert_eq!(idx.first_at_or_after(0), None);

    all.sort_unstable();
    let want: Vec<u64> = (0..per_producer * PRODUCERS).collect();
    assert_eq!(all.len(), want.len(), "keys consumed twice or lost");
    assert_eq!(all, want);
    assert!(idx.is_empty());
}

// ---- the tests ----------------------------------------------------------------------

#[test]
fn olc_disjoint_small_fanout_splits_every_level() {
    seeded("olc_disjoint_small_fanout_splits_every_level", |seed| {
        let mut t = OlcBTree::<u64, u64, 4>::new();
        disjoint(&t, seed, ops(200_000), 6_000);
        let shape = t.check_invariants().unwrap();
        assert!(shape.height >= 5, "{shape:?}");
        eprintln!("shape {shape:?}, {:?}", t.stats());
    });
}

#[test]
fn olc_disjoint_default_fanout() {
    seeded("olc_disjoint_default_fanout", |seed| {
        let mut t = OlcBTree::<u64, u64>::new();
        disjoint(&t, seed, ops(200_000), 50_000);
        let shape = t.check_invariants().unwrap();
        assert!(shape.height >= 2, "{shape:?}");
    });
}

#[test]
fn olc_overlapping_small_fanout() {
    seeded("olc_overlapping_small_fanout", |seed| {
        let mut t = OlcBTree::<u64, u64, 4>::new();
        overlapping(&t, seed, ops(200_000), 400);
        let shape = t.check_invariants().unwrap();
        assert!(shape.height >= 4, "{shape:?}");
        eprintln!("shape {shape:?}, {:?}", t.stats());
    });
}

#[test]
fn olc_overlapping_tiny_key_space() {
    // 16 hot keys: almost every write conflicts.
    seeded("olc_overlapping_tiny_key_space", |seed| {
        let mut t = OlcBTree::<u64, u64, 4>::new();
        overlapping(&t, seed, ops(200_000), 16);
        t.check_invariants().unwrap();
        eprintln!("{:?}", t.stats());
    });
}

#[test]
fn olc_pessimistic_only() {
    seeded("olc_pessimistic_only", |seed| {
        for run in 0..2 {
            let mut t = OlcBTree::<u64, u64, 4>::with_restart_limit(0);
            if run == 0 {
                overlapping(&t, seed, ops(100_000), 200);
            } else {
                disjoint(&t, seed, ops(100_000), 2_000);
            }
            t.check_invariants().unwrap();
            let st = t.stats();
            assert_eq!(st.restarts, 0);
            assert!(st.pessimistic > 0);
        }
    });
}

#[test]
fn olc_optimistic_and_pessimistic_mixed() {
    // Restart limit 1: any conflict sends the operation down the pessimistic path
    // while others stay optimistic.
    seeded("olc_optimistic_and_pessimistic_mixed", |seed| {
        let mut t = OlcBTree::<u64, u64, 4>::with_restart_limit(1);
        overlapping(&t, seed, ops(200_000), 64);
        t.check_invariants().unwrap();
        eprintln!("{:?}", t.stats());
    });
}

#[test]
fn olc_queue() {
    let mut t = OlcBTree::<u64, u64, 8>::new();
    queue(&t, ops(100_000));
    let shape = t.check_invariants().unwrap();
    eprintln!("shape {shape:?}, {:?}", t.stats());
}

#[test]
fn coupling_disjoint_and_overlapping() {
    seeded("coupling_disjoint_and_overlapping", |seed| {
        let t = RwLockCouplingBTree::<u64, u64, 4>::new();
        disjoint(&t, seed, ops(50_000), 4_000);
        assert!(t.height() >= 5);
        let t = RwLockCouplingBTree::<u64, u64, 4>::new();
        overlapping(&t, seed, ops(50_000), 300);
        let t = RwLockCouplingBTree::<u64, u64>::new();
        disjoint(&t, seed, ops(50_000), 20_000);
    });
}

#[test]
fn coupling_queue() {
    queue(&RwLockCouplingBTree::<u64, u64, 8>::new(), ops(20_000));
}

#[test]
fn locked_btreemap_disjoint_and_overlapping() {
    seeded("locked_btreemap_disjoint_and_overlapping", |seed| {
        disjoint(&LockedBTreeMap::new(), seed, ops(50_000), 4_000);
        overlapping(&LockedBTreeMap::new(), seed, ops(50_000), 300);
    });
}

#[test]
fn locked_btreemap_queue() {
    queue(&LockedBTreeMap::new(), ops(20_000));
}
