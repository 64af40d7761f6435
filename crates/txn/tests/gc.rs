//! Garbage collection keeps versions bounded by what snapshots can read.

use maestro_txn::{Database, DatabaseConfig, Isolation, Table};

const UPDATES: i64 = 10_000;

fn one_row(config: DatabaseConfig) -> (Database, std::sync::Arc<Table<i64>>, u64) {
    let db = Database::new(config);
    let table = Table::new("t");
    let mut txn = db.begin(Isolation::Snapshot).unwrap();
    let row = txn.insert(&table, 0).unwrap();
    txn.commit().unwrap();
    (db, table, row)
}

fn update(db: &Database, table: &std::sync::Arc<Table<i64>>, row: u64, value: i64) {
    let mut txn = db.begin(Isolation::Snapshot).unwrap();
    txn.update(table, row, value).unwrap();
    txn.commit().unwrap();
}

#[test]
fn commit_time_gc_keeps_versions_bounded_while_an_old_snapshot_is_held() {
    let (db, table, row) = one_row(DatabaseConfig::default());
    let old = db.snapshot().unwrap();
    let mut versions_max = 0;
    for value in 1..=UPDATES {
        update(&db, &table, row, value);
        versions_max = versions_max.max(table.versions());
    }
    // The old snapshot pins the one version it reads, not the 10 000 since:
    // newest + pinned + at most one superseded but not yet pruned.
    assert!(versions_max <= 3, "versions_max {versions_max}");
    assert_eq!(table.read(&old, row), Some(0));
    drop(old);
    db.collect(usize::MAX);
    assert_eq!(table.versions(), 1);
    assert_eq!(db.gc_rows_queued(), 0);
    assert_eq!(table.read(&db.snapshot().unwrap(), row), Some(UPDATES));
}

#[test]
fn explicit_collect_frees_everything_no_snapshot_reads() {
    let (db, table, row) = one_row(DatabaseConfig {
        gc_rows_per_written_row: 0,
        ..DatabaseConfig::default()
    });
    let old = db.snapshot().unwrap();
    for value in 1..=100 {
        update(&db, &table, row, value);
    }
    let middle = db.snapshot().unwrap();
    for value in 101..=200 {
        update(&db, &table, row, value);
    }
    assert_eq!(table.versions(), 201, "no GC ran yet");
    let stats = db.collect(usize::MAX);
    assert_eq!(stats.versions_freed, 198);
    assert_eq!(stats.rows_queued, 1, "pinned versions keep the row queued");
    assert_eq!(table.read(&old, row), Some(0));
    assert_eq!(table.read(&middle, row), Some(100));
    drop(old);
    db.collect(usize::MAX);
    assert_eq!(table.versions(), 2);
    drop(middle);
    db.collect(usize::MAX);
    assert_eq!(table.versions(), 1);
    assert_eq!(db.gc_rows_queued(), 0);
}

#[test]
fn deleted_rows_leave_no_versions() {
    let (db, table, row) = one_row(DatabaseConfig::default());
    let old = db.snapshot().unwrap();
    let mut txn = db.begin(Isolation::Snapshot).unwrap();
    txn.delete(&table, row).unwrap();
    txn.commit().unwrap();
    assert_eq!(table.read(&old, row), Some(0));
    db.collect(usize::MAX);
    assert_eq!(table.versions(), 2, "the old snapshot still reads the row");
    drop(old);
    db.collect(usize::MAX);
    assert_eq!(table.versions(), 0);
    assert_eq!(table.read(&db.snapshot().unwrap(), row), None);
}

#[test]
fn live_versions_track_live_rows_under_concurrent_updates() {
    const THREADS: u64 = 2;
    const ROWS: u64 = 32;
    let db = Database::default();
    let table = Table::<u64>::new("t");
    let mut load = db.begin(Isolation::Snapshot).unwrap();
    for _ in 0..ROWS {
        load.insert(&table, 0).unwrap();
    }
    load.commit().unwrap();
    std::thread::scope(|scope| {
        for thread in 0..THREADS {
            let (db, table) = (&db, &table);
            scope.spawn(move || {
                for step in 0..5_000 {
                    let row = (thread * 7 + step * 13) % ROWS;
                    let mut txn = db.begin(Isolation::Snapshot).unwrap();
                    if txn.update(table, row, step).is_ok() {
                        let _ = txn.commit();
                    }
                }
            });
        }
    });
    db.collect(usize::MAX);
    assert_eq!(table.versions(), ROWS as usize);
}
