//! Every CH query on the deterministic fixture
//! (`maestro_ch::fixture`: one warehouse after 3 000 transactions) against
//! DuckDB's answers on the same tables, committed under `tests/answers/`
//! (regenerate with `scripts/regen_answers.sh`).

use maestro_ch::QUERIES;
use maestro_ch::fixture::fixture_database;

#[test]
fn every_implemented_query_matches_duckdb_on_the_fixture() {
    let db = fixture_database().unwrap();
    let snap = db.snapshot().unwrap();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/answers");
    let mut failures = Vec::new();
    for q in QUERIES {
        let path = dir.join(format!("q{}.csv", q.number));
        let expected =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        if let Err(e) = (q.run)(&snap).compare_csv(&expected) {
            failures.push(format!("Q{}: {e}", q.number));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// TPC-C's consistency conditions hold inside the snapshots analytical
/// queries read while terminals commit: no snapshot sees part of a
/// transaction.
#[test]
fn consistency_conditions_hold_inside_snapshots_taken_while_terminals_run() {
    use maestro_tpcc::driver::{self, Mode, RunConfig, Storage};
    use std::time::Duration;
    let (db, _) = maestro_ch::ChDatabase::load(
        &maestro_ch::ChConfig {
            warehouses: 1,
            seed: 3,
            clock_start: None,
        },
        &|_| {},
    )
    .unwrap();
    let config = RunConfig::new(
        3,
        Duration::from_millis(1500),
        Mode::Receivers,
        db.load_constants,
    );
    let checked = std::thread::scope(|s| {
        let checker = s.spawn(|| {
            let mut checked = 0;
            let start = std::time::Instant::now();
            while start.elapsed() < Duration::from_millis(1200) || checked < 2 {
                let snap = db.snapshot().unwrap();
                let violations = db.tpcc.check_consistency_at(&snap.snapshot).unwrap();
                assert!(violations.is_empty(), "inside a snapshot: {violations:?}");
                checked += 1;
            }
            checked
        });
        let report = driver::run_storage(Storage::Mvcc(&db.tpcc), &config, &|_| {}).unwrap();
        assert!(report.committed() > 0);
        checker.join().unwrap()
    });
    assert!(checked >= 2);
}

#[test]
fn all_22_queries_are_implemented_in_order() {
    let numbers: Vec<u8> = QUERIES.iter().map(|q| q.number).collect();
    assert_eq!(numbers, (1..=22).collect::<Vec<u8>>());
}
