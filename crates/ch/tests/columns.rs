//! The column mirror (`maestro_ch::columns`): the 22 CH query texts run by
//! the SQL engine on column mains plus journal deltas give the hand-written
//! plans' answers (which `answers.rs` checks against DuckDB) on the same
//! data — before any merge (main = the load, delta = every write since),
//! after a merge, and with writes on top of a merged main, also extended
//! from one query's delta to the next query's snapshot; the deltas hold
//! updates, inserts, deletions (NEW-ORDER) and NULLs turned to values
//! (deliveries).

use std::sync::Arc;

use maestro_ch::columns::{ColumnMirror, MergePolicy, result_csv, run_sql};
use maestro_ch::fixture::{fixture_inputs, fixture_loaded};
use maestro_ch::{ChDatabase, QUERIES};
use maestro_execution::{Executor, Granularity};
use maestro_scheduler::Scheduler;
use maestro_tpcc::mvcc;

/// Every query's SQL answer on the mirror equals the hand-written plan's
/// (no writer runs, so two snapshots see the same data).
fn check_all(exec: &Executor, db: &ChDatabase, mirror: &ColumnMirror, stage: &str) {
    let view = mirror.view(db).expect("a view");
    let snap = db.snapshot().expect("a snapshot");
    let mut failures = Vec::new();
    for q in QUERIES {
        let expected = (q.run)(&snap);
        match run_sql(exec, &view, q.number, expected.columns.len()) {
            Ok(result) => {
                if let Err(e) = expected.compare_csv(&result_csv(&result)) {
                    failures.push(format!("Q{}: {e}", q.number));
                }
            }
            Err(e) => failures.push(e),
        }
    }
    assert!(failures.is_empty(), "{stage}:\n{}", failures.join("\n"));
}

#[test]
fn sql_on_column_mains_and_journal_deltas_equals_the_hand_written_plans() {
    let db = fixture_loaded().expect("the database loads");
    let mirror = ColumnMirror::new(&db).expect("the mirror builds");
    let exec = Executor::new(
        Arc::new(Scheduler::with_preset("single-hints", 2).expect("a scheduler")),
        Granularity::Static,
    )
    .with_min_rows_per_task(64);
    let mut inputs = fixture_inputs(&db);
    let mut run = |n: usize| {
        for _ in 0..n {
            mvcc::execute(&db.tpcc, &inputs.next_input(), None).expect("a transaction");
        }
    };

    run(1_500);
    let view = mirror.view(&db).expect("a view");
    assert!(
        view.delta_rows() > 10_000,
        "{} rows in deltas",
        view.delta_rows()
    );
    drop(view);
    let with_deltas = mirror.stats();
    assert!(
        with_deltas.main_bytes > 1 << 20 && with_deltas.delta_bytes > 0,
        "{with_deltas:?}"
    );
    check_all(&exec, &db, &mirror, "main + delta");

    let merged = mirror
        .merge_due(&db, MergePolicy::ANY_CHANGE)
        .expect("merges")
        .expect("due");
    assert!(merged.tables >= 5, "{merged:?}");
    assert_eq!(mirror.pending_changes(), 0);
    let view = mirror.view(&db).expect("a view");
    assert_eq!(view.delta_rows(), 0);
    drop(view);
    let merged_stats = mirror.stats();
    assert!(
        merged_stats.main_bytes > 1 << 20 && merged_stats.delta_bytes < with_deltas.delta_bytes,
        "merged: {merged_stats:?}, before: {with_deltas:?}"
    );
    check_all(&exec, &db, &mirror, "merged");

    run(700);
    check_all(&exec, &db, &mirror, "merged main + delta");
    // The next views extend the deltas the last ones built (the rows
    // written in between: updates of rows already in the delta too).
    run(800);
    check_all(&exec, &db, &mirror, "merged main + extended delta");
    let never = MergePolicy {
        changes_min: usize::MAX,
        main_fraction: 1,
    };
    assert!(mirror.merge_due(&db, never).expect("no error").is_none());
    let fraction = MergePolicy {
        changes_min: 1,
        main_fraction: 1,
    };
    assert!(
        mirror.merge_due(&db, fraction).expect("no error").is_none(),
        "no table has a delta as large as its main"
    );
}
