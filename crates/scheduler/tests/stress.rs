//! Seeded random-DAG stress: every node runs exactly once, after all of its
//! predecessors. Set `MAESTRO_STRESS_SEED` to replay one seed; the seed of a failing
//! run is printed.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use maestro_scheduler::{Scheduler, SchedulerConfig, TaskGraph};

/// A random DAG with one root: node 0 precedes every node without another
/// predecessor; other edges go from lower to higher indices (acyclic by construction).
fn random_dag(rng: &mut fastrand::Rng, n: usize) -> Vec<Vec<usize>> {
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (j, p) in preds.iter_mut().enumerate().skip(1) {
        let k = rng.usize(0..=3.min(j));
        for _ in 0..k {
            let i = rng.usize(0..j);
            if !p.contains(&i) {
                p.push(i);
            }
        }
        if p.is_empty() {
            p.push(0);
        }
    }
    preds
}

fn run_seed(s: &Arc<Scheduler>, seed: u64) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let n = rng.usize(1..400);
    let preds = random_dag(&mut rng, n);
    let clock = Arc::new(AtomicU64::new(1));
    let finished: Arc<Vec<AtomicU64>> = Arc::new((0..n).map(|_| AtomicU64::new(0)).collect());
    let runs: Arc<Vec<AtomicUsize>> = Arc::new((0..n).map(|_| AtomicUsize::new(0)).collect());
    let violations = Arc::new(AtomicUsize::new(0));
    let mut g = TaskGraph::new().with_priority(rng.usize(0..4));
    let ids: Vec<_> = (0..n)
        .map(|j| {
            let (clock, finished, runs, violations) = (
                clock.clone(),
                finished.clone(),
                runs.clone(),
                violations.clone(),
            );
            let my_preds = preds[j].clone();
            let spin = rng.u32(0..2000);
            g.add(move || {
                let start = clock.fetch_add(1, Ordering::SeqCst);
                for &p in &my_preds {
                    let f = finished[p].load(Ordering::SeqCst);
                    if f == 0 || f >= start {
                        violations.fetch_add(1, Ordering::SeqCst);
                    }
                }
                runs[j].fetch_add(1, Ordering::SeqCst);
                for _ in 0..spin {
                    std::hint::spin_loop();
                }
                finished[j].store(clock.fetch_add(1, Ordering::SeqCst), Ordering::SeqCst);
            })
        })
        .collect();
    for (j, p) in preds.iter().enumerate() {
        for &i in p {
            g.edge(ids[i], ids[j]);
        }
    }
    s.submit(g).unwrap().wait().unwrap();
    for (j, r) in runs.iter().enumerate() {
        assert_eq!(
            r.load(Ordering::SeqCst),
            1,
            "seed {seed}: node {j} ran {} times",
            r.load(Ordering::SeqCst)
        );
    }
    assert_eq!(
        violations.load(Ordering::SeqCst),
        0,
        "seed {seed}: a node ran before a predecessor finished"
    );
}

#[test]
fn random_dags_respect_dependencies() {
    let base: u64 = std::env::var("MAESTRO_STRESS_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| fastrand::u64(..));
    let seeds = if std::env::var("MAESTRO_STRESS_SEED").is_ok() {
        1
    } else {
        60
    };
    for preset in ["single-pool", "single-hints", "single-pool-nosys"] {
        let mut cfg = SchedulerConfig::preset(preset).unwrap().with_contexts(4);
        cfg.pools = 3; // exercise stealing between pools even on small machines
        cfg.pools_first_probability = 0.7;
        let s = Arc::new(Scheduler::new(cfg).unwrap());
        for k in 0..seeds {
            let seed = base.wrapping_add(k);
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_seed(&s, seed)));
            if r.is_err() {
                panic!(
                    "random DAG stress failed under {preset}; replay with MAESTRO_STRESS_SEED={seed}"
                );
            }
        }
        // Several graphs at once, from several client threads.
        std::thread::scope(|t| {
            for c in 0..3u64 {
                let s = s.clone();
                t.spawn(move || {
                    for k in 0..seeds / 3 {
                        let seed = base.wrapping_add(1000 * (c + 1) + k);
                        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_seed(&s, seed)));
                        if r.is_err() {
                            panic!("concurrent DAG stress failed under {preset}; replay with MAESTRO_STRESS_SEED={seed}");
                        }
                    }
                });
            }
        });
        let st = s.stats();
        assert_eq!(st.tasks_executed, st.nodes_created, "{preset}: {st:?}");
    }
}

#[test]
fn fork_join_and_scopes_compute_exact_sums() {
    for preset in ["single-pool", "single-pool-nosys"] {
        let s = Scheduler::with_preset(preset, 3).unwrap();
        fn sum(v: &[u64]) -> u64 {
            if v.len() <= 64 {
                return v.iter().sum();
            }
            let (a, b) = v.split_at(v.len() / 2);
            let (x, y) = maestro_scheduler::join(|| sum(a), || sum(b));
            x + y
        }
        let v: Vec<u64> = (0..200_000).collect();
        let expect: u64 = v.iter().sum();
        assert_eq!(s.install(|| sum(&v)), expect);
        let total = AtomicU64::new(0);
        s.scope(|sc| {
            for chunk in v.chunks(1000) {
                let total = &total;
                sc.spawn(move |sc2| {
                    let (a, b) = chunk.split_at(chunk.len() / 2);
                    let b_sum: u64 = b.iter().sum();
                    sc2.spawn(move |_| {
                        total.fetch_add(b_sum, Ordering::Relaxed);
                    });
                    total.fetch_add(a.iter().sum::<u64>(), Ordering::Relaxed);
                });
            }
        });
        assert_eq!(total.load(Ordering::Relaxed), expect);
    }
}

#[test]
fn join_and_scope_propagate_panics() {
    let s = Scheduler::with_preset("single-pool", 2).unwrap();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        s.join(|| 1, || -> i32 { panic!("right side") })
    }));
    assert!(r.is_err());
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        s.scope(|sc| {
            sc.spawn(|_| panic!("in scope"));
        })
    }));
    assert!(r.is_err());
    assert_eq!(s.join(|| 1, || 2), (1, 2));
}
