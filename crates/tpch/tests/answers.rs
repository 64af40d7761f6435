//! Every query, for every committed parameter set (validation and three
//! random sets each), against DuckDB's answers on the same SF 0.01 data
//! (`answers/`). Parameter sets rotate through the granularity policies, with
//! small tasks so SF 0.01 splits as SF 1 would. The `boundary<k>` sets are
//! checked by `tests/boundaries.rs`.

mod common;

use std::sync::Arc;

use common::{db, scheduler};
use maestro_execution::Executor;
use maestro_tpch::queries::answers::{ANSWERS_SCALE_FACTOR, answer_sets, answers_dir};
use maestro_tpch::queries::{check, run_profiled};

const POLICIES: [&str; 5] = ["fixed:1", "fixed:3", "static", "hint", "adaptive"];

fn check_query(q: u8) {
    let dir = answers_dir();
    let sets: Vec<_> = answer_sets(&dir)
        .expect("params.json reads")
        .into_iter()
        .filter(|s| s.query == q && !s.set.starts_with("boundary"))
        .collect();
    assert!(sets.len() >= 4, "Q{q}: validation and three random sets");
    let mut failures = Vec::new();
    for (i, set) in sets.iter().enumerate() {
        // Each set under two policies, so every policy sees every query.
        for policy in [
            POLICIES[i % POLICIES.len()],
            POLICIES[(i + 2) % POLICIES.len()],
        ] {
            if let Err(m) = common::check_set(set, policy, &dir) {
                failures.push(m);
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

macro_rules! query_tests {
    ($($name:ident = $q:expr),* $(,)?) => {
        $(#[test] fn $name() { check_query($q); })*
    };
}

query_tests!(
    q01 = 1,
    q02 = 2,
    q03 = 3,
    q04 = 4,
    q05 = 5,
    q06 = 6,
    q07 = 7,
    q08 = 8,
    q09 = 9,
    q10 = 10,
    q11 = 11,
    q12 = 12,
    q13 = 13,
    q14 = 14,
    q15 = 15,
    q16 = 16,
    q17 = 17,
    q18 = 18,
    q19 = 19,
    q20 = 20,
    q21 = 21,
    q22 = 22,
);

/// The papers' thread-pool baselines run the same plans: every validation set
/// on Multiple-Pools (separate plan and operator pools) and on one rayon pool.
#[test]
fn thread_pool_backends_give_the_same_answers() {
    use maestro_execution::Backend;
    let pool = |n| {
        Arc::new(
            rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .unwrap(),
        )
    };
    let shared = pool(2);
    let backends = [
        (
            "multiple-pools",
            Backend::Pools {
                plans: pool(2),
                operators: pool(2),
            },
        ),
        (
            "rayon",
            Backend::Pools {
                plans: shared.clone(),
                operators: shared,
            },
        ),
    ];
    let dir = answers_dir();
    let sets = answer_sets(&dir).expect("params.json reads");
    for (name, backend) in backends {
        for g in ["static", "hint"] {
            let exec = Executor::new(scheduler(), g.parse().unwrap())
                .with_min_rows_per_task(1024)
                .with_backend(backend.clone());
            for set in sets.iter().filter(|s| s.set == "validation") {
                let params = set.query_params(ANSWERS_SCALE_FACTOR).unwrap();
                let (result, profile) = run_profiled(&exec, db(), &params).unwrap();
                check::compare(&result, &set.answer(&dir).unwrap())
                    .unwrap_or_else(|m| panic!("Q{} on {name} under {g}: {m}", set.query));
                assert!(profile.tasks >= 1);
            }
        }
    }
}
