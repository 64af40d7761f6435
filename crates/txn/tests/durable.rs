//! The redo log, checkpoints and recovery: what was acknowledged survives a
//! restart, torn tails are cut, damage is an error naming its file, injected
//! flush failures are never acknowledged.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use maestro_txn::{
    CounterTable, Database, Durability, DurabilityConfig, DurableError, FaultPlan, Isolation,
    Table, TxnError,
};

type Row = (u64, String);

struct Db {
    db: Database,
    rows: Arc<Table<Row>>,
    other: Arc<Table<i32>>,
    counters: Arc<CounterTable>,
}

impl Db {
    fn new() -> Self {
        let db = Database::default();
        let rows = Table::new("rows");
        let other = Table::new("other");
        let counters = CounterTable::new("counters");
        db.make_durable(&rows).unwrap();
        db.make_durable(&other).unwrap();
        db.make_counters_durable(&counters).unwrap();
        Db {
            db,
            rows,
            other,
            counters,
        }
    }

    /// Everything a fresh snapshot sees.
    fn contents(&self) -> (BTreeMap<u64, Row>, BTreeMap<u64, i32>, BTreeMap<u64, i64>) {
        let snapshot = self.db.snapshot().unwrap();
        let mut rows = BTreeMap::new();
        self.rows.scan(&snapshot, |id, r| {
            rows.insert(id, r.clone());
        });
        let mut other = BTreeMap::new();
        self.other.scan(&snapshot, |id, r| {
            other.insert(id, *r);
        });
        let counters = (0..4)
            .filter_map(|id| self.counters.read(&snapshot, id).map(|v| (id, v)))
            .collect();
        (rows, other, counters)
    }
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("maestro-durable-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn sync() -> DurabilityConfig {
    DurabilityConfig::new(Durability::Sync)
}

/// Loads 10 rows and 2 counters, creates the data directory.
fn created(dir: &Path, config: DurabilityConfig) -> Db {
    let db = Db::new();
    let mut txn = db.db.begin(Isolation::Snapshot).unwrap();
    for i in 0..10 {
        txn.insert(&db.rows, (i, format!("row {i}"))).unwrap();
    }
    txn.create_counter(&db.counters, 100).unwrap();
    txn.create_counter(&db.counters, 200).unwrap();
    txn.commit().unwrap();
    db.db.create_data_dir(dir, config, b"meta!").unwrap();
    db
}

/// One transaction of every kind of write, numbered `i`.
fn work(db: &Db, i: u64) -> Result<(), TxnError> {
    let mut txn = db.db.begin(Isolation::Snapshot)?;
    txn.insert(&db.rows, (100 + i, format!("new {i}")))?;
    txn.update(&db.rows, i % 9, (i % 9, format!("updated by {i}")))?;
    if i.is_multiple_of(3) {
        txn.insert(&db.other, i as i32)?;
    }
    if i == 5 {
        txn.delete(&db.rows, 9)?;
    }
    txn.add(&db.counters, i % 2, i as i64)?;
    txn.commit().map(|_| ())
}

fn recovered(dir: &Path) -> (Db, maestro_txn::RecoveryReport) {
    let db = Db::new();
    let report = db.db.recover(dir, sync()).unwrap();
    (db, report)
}

#[test]
fn acknowledged_commits_survive_a_restart() {
    let dir = temp_dir("restart");
    let db = created(&dir, sync());
    for i in 0..20 {
        work(&db, i).unwrap();
    }
    let before = db.contents();
    let stats = db.db.log_stats().unwrap();
    assert_eq!(stats.records, 20);
    assert!(stats.flushes >= 1 && stats.flushes <= 20, "{stats:?}");
    let last = db.db.last_commit_ts();
    drop(db);

    let (db, report) = recovered(&dir);
    assert_eq!(db.contents(), before);
    assert_eq!(report.records_replayed, 20);
    assert_eq!(report.meta, b"meta!");
    assert_eq!(report.recovered_ts, last);
    assert!(report.torn_tail.is_none());
    // The clock continues, and a second restart sees this run's commits too.
    work(&db, 20).unwrap();
    assert!(db.db.last_commit_ts() > last);
    let before = db.contents();
    drop(db);
    let (db, report) = recovered(&dir);
    assert_eq!(db.contents(), before);
    assert_eq!(report.records_replayed, 21);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_checkpoint_covers_the_log_before_it_and_removes_it() {
    let dir = temp_dir("checkpoint");
    let db = created(&dir, sync());
    for i in 0..10 {
        work(&db, i).unwrap();
    }
    let report = db.db.checkpoint().unwrap();
    assert!(report.files_removed >= 2, "{report:?}"); // segment 1 and the first checkpoint
    for i in 10..15 {
        work(&db, i).unwrap();
    }
    let before = db.contents();
    drop(db);
    let (db, recovery) = recovered(&dir);
    assert_eq!(db.contents(), before);
    assert_eq!(recovery.checkpoint_ts, report.snapshot_ts);
    assert_eq!(recovery.records_replayed, 5);
    std::fs::remove_dir_all(&dir).unwrap();
}

fn last_segment(dir: &Path) -> PathBuf {
    let mut segments: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    segments.sort();
    segments.pop().unwrap()
}

#[test]
fn a_torn_tail_is_cut_and_reported() {
    let dir = temp_dir("torn");
    let db = created(&dir, sync());
    for i in 0..6 {
        work(&db, i).unwrap();
    }
    let segment = last_segment(&dir);
    let len = std::fs::metadata(&segment).unwrap().len();
    work(&db, 6).unwrap();
    drop(db);
    // Tear the last record: keep 5 of its bytes.
    let bytes = std::fs::read(&segment).unwrap();
    std::fs::write(&segment, &bytes[..len as usize + 5]).unwrap();
    let (db, report) = recovered(&dir);
    let torn = report.torn_tail.expect("torn tail reported");
    assert_eq!((torn.path, torn.offset, torn.bytes_cut), (segment, len, 5));
    assert_eq!(report.records_replayed, 6);
    let (rows, _, _) = db.contents();
    assert!(rows.values().any(|r| r.0 == 105), "commit 5 is there");
    assert!(
        !rows.values().any(|r| r.0 == 106),
        "the torn commit 6 is gone"
    );
    drop(db);
    // The cut is permanent: the next recovery finds a clean tail.
    let (_, report) = recovered(&dir);
    assert!(report.torn_tail.is_none());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn damage_before_the_tail_and_damaged_checkpoints_are_errors_naming_the_file() {
    let dir = temp_dir("damage");
    let db = created(&dir, sync());
    for i in 0..4 {
        work(&db, i).unwrap();
    }
    drop(db);
    // A second run adds a segment, so the first is no longer the tail.
    let (db, _) = recovered(&dir);
    work(&db, 4).unwrap();
    drop(db);
    let mut segments: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    segments.sort();
    assert_eq!(segments.len(), 2);
    let mut bytes = std::fs::read(&segments[0]).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&segments[0], &bytes).unwrap();
    let error = Db::new().db.recover(&dir, sync()).err().unwrap();
    assert!(
        matches!(&error, DurableError::CorruptLog { path, .. } if *path == segments[0]),
        "{error}"
    );
    bytes[middle] ^= 0xff;
    std::fs::write(&segments[0], &bytes).unwrap();

    let checkpoint = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "ckpt"))
        .unwrap();
    let mut bytes = std::fs::read(&checkpoint).unwrap();
    bytes[40] ^= 0x01;
    std::fs::write(&checkpoint, &bytes).unwrap();
    let error = Db::new().db.recover(&dir, sync()).err().unwrap();
    assert!(
        matches!(&error, DurableError::CorruptCheckpoint { path, .. } if *path == checkpoint),
        "{error}"
    );
    assert!(error.to_string().contains("checkpoint-"), "{error}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_failed_flush_is_never_acknowledged_and_stops_commits() {
    for faults in [
        FaultPlan {
            sync_failure_at_flush: Some(4),
            ..FaultPlan::default()
        },
        FaultPlan {
            short_write_at_flush: Some(4),
            ..FaultPlan::default()
        },
    ] {
        let dir = temp_dir("fault");
        let config = DurabilityConfig { faults, ..sync() };
        let db = created(&dir, config);
        let mut acknowledged = Vec::new();
        let mut outcomes = Vec::new();
        for i in 0..8 {
            let outcome = work(&db, i);
            if outcome.is_ok() {
                acknowledged.push(i);
            }
            outcomes.push(outcome);
        }
        // One flush per commit here (one thread): commits 0..3 are flushes
        // 1..3, commit 3 meets the fault at flush 4.
        assert_eq!(acknowledged, vec![0, 1, 2], "{faults:?}: {outcomes:?}");
        assert!(matches!(outcomes[3], Err(TxnError::NotDurable { .. })));
        for outcome in &outcomes[4..] {
            assert!(
                matches!(outcome, Err(TxnError::LogFailed { .. })),
                "{outcome:?}"
            );
        }
        assert!(db.db.log_stats().unwrap().failure.is_some());
        assert!(db.db.checkpoint().is_err());
        drop(db);
        let (db, report) = recovered(&dir);
        // Every acknowledged commit is there; the failed one may be.
        assert!((3..=4).contains(&report.records_replayed), "{report:?}");
        let (rows, _, _) = db.contents();
        for i in acknowledged {
            assert!(rows.contains_key(&(10 + i)), "commit {i} lost");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn concurrent_commits_share_flushes_and_all_survive() {
    let dir = temp_dir("group");
    let config = DurabilityConfig::new(Durability::Group {
        delay: std::time::Duration::from_micros(200),
    });
    let db = Arc::new(created(&dir, config));
    let threads = 4u64;
    let per_thread = 25u64;
    std::thread::scope(|s| {
        for t in 0..threads {
            let db = Arc::clone(&db);
            s.spawn(move || {
                for i in 0..per_thread {
                    let mut txn = db.db.begin(Isolation::Snapshot).unwrap();
                    txn.insert(&db.other, (t * 1000 + i) as i32).unwrap();
                    txn.add(&db.counters, 0, 1).unwrap();
                    txn.commit().unwrap();
                }
            });
        }
    });
    let stats = db.db.log_stats().unwrap();
    assert_eq!(stats.records, threads * per_thread);
    let before = db.contents();
    assert_eq!(before.2[&0], 100 + (threads * per_thread) as i64);
    drop(db);
    let (db, _) = recovered(&dir);
    assert_eq!(db.contents(), before);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn recovery_refuses_other_tables_and_a_used_database() {
    let dir = temp_dir("mismatch");
    drop(created(&dir, sync()));
    let db = Database::default();
    db.make_durable(&Table::<Row>::new("rows")).unwrap();
    let error = db.recover(&dir, sync()).err().unwrap();
    assert!(
        matches!(error, DurableError::CatalogMismatch { .. }),
        "{error}"
    );

    let used = Db::new();
    let mut txn = used.db.begin(Isolation::Snapshot).unwrap();
    txn.insert(&used.other, 1).unwrap();
    txn.commit().unwrap();
    assert!(matches!(
        used.db.recover(&dir, sync()),
        Err(DurableError::State { .. })
    ));
    let error = Db::new()
        .db
        .create_data_dir(&dir, sync(), b"")
        .err()
        .unwrap();
    assert!(matches!(error, DurableError::DataDir { .. }), "{error}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn durability_off_logs_nothing_but_the_directory_recovers_its_checkpoint() {
    let dir = temp_dir("off");
    let db = created(&dir, DurabilityConfig::new(Durability::Off));
    work(&db, 0).unwrap();
    assert!(db.db.log_stats().is_none());
    drop(db);
    let (db, report) = recovered(&dir);
    assert_eq!(report.records_replayed, 0);
    assert_eq!(db.contents().0.len(), 10);
    std::fs::remove_dir_all(&dir).unwrap();
}
