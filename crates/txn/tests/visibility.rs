//! Visibility, own writes, aborts and write-write conflicts.

use std::sync::Arc;

use maestro_txn::{Database, Isolation, Table, TxnError};

fn loaded(values: &[i64]) -> (Database, std::sync::Arc<Table<i64>>, Vec<u64>) {
    let db = Database::default();
    let table = Table::new("t");
    let mut txn = db.begin(Isolation::Snapshot).unwrap();
    let rows = values
        .iter()
        .map(|&v| txn.insert(&table, v).unwrap())
        .collect();
    txn.commit().unwrap();
    (db, table, rows)
}

#[test]
fn uncommitted_versions_are_seen_only_by_their_writer() {
    let (db, table, rows) = loaded(&[1]);
    let mut writer = db.begin(Isolation::Snapshot).unwrap();
    writer.update(&table, rows[0], 2).unwrap();
    let fresh = writer.insert(&table, 7).unwrap();
    assert_eq!(writer.read(&table, rows[0]), Some(2));
    assert_eq!(writer.read(&table, fresh), Some(7));

    let before = db.snapshot().unwrap();
    assert_eq!(table.read(&before, rows[0]), Some(1));
    assert_eq!(table.read(&before, fresh), None);

    writer.commit().unwrap();
    assert_eq!(table.read(&before, rows[0]), Some(1), "snapshot is stable");
    assert_eq!(table.read(&before, fresh), None);
    let after = db.snapshot().unwrap();
    assert_eq!(table.read(&after, rows[0]), Some(2));
    assert_eq!(table.read(&after, fresh), Some(7));
}

#[test]
fn aborted_transactions_leave_nothing_visible() {
    let (db, table, rows) = loaded(&[1, 2]);
    let versions_before = table.versions();
    let mut txn = db.begin(Isolation::Snapshot).unwrap();
    txn.update(&table, rows[0], 10).unwrap();
    txn.delete(&table, rows[1]).unwrap();
    let fresh = txn.insert(&table, 3).unwrap();
    txn.abort();

    let mut dropped = db.begin(Isolation::Snapshot).unwrap();
    dropped.update(&table, rows[0], 11).unwrap();
    drop(dropped);

    let snapshot = db.snapshot().unwrap();
    assert_eq!(table.read(&snapshot, rows[0]), Some(1));
    assert_eq!(table.read(&snapshot, rows[1]), Some(2));
    assert_eq!(table.read(&snapshot, fresh), None);
    assert_eq!(table.versions(), versions_before);
    // The row the aborted writer held is writable again.
    let mut next = db.begin(Isolation::Snapshot).unwrap();
    next.update(&table, rows[0], 12).unwrap();
    next.commit().unwrap();
}

#[test]
fn first_updater_wins_without_waiting() {
    let (db, table, rows) = loaded(&[1]);
    let mut first = db.begin(Isolation::Snapshot).unwrap();
    let mut second = db.begin(Isolation::Snapshot).unwrap();
    first.update(&table, rows[0], 2).unwrap();
    let conflict = second.update(&table, rows[0], 3).unwrap_err();
    assert_eq!(
        conflict,
        TxnError::WriteConflict {
            table: "t",
            row: rows[0]
        }
    );
    assert!(conflict.is_retryable());
    first.commit().unwrap();
    // Still refused: the committed version is newer than second's snapshot.
    let too_old = second.update(&table, rows[0], 3).unwrap_err();
    assert_eq!(
        too_old,
        TxnError::SnapshotTooOld {
            table: "t",
            row: rows[0]
        }
    );
    second.abort();
}

#[test]
fn own_writes_are_overwritten_in_place_and_deletes_hide_the_row() {
    let (db, table, rows) = loaded(&[1]);
    let versions_before = table.versions();
    let mut txn = db.begin(Isolation::Snapshot).unwrap();
    txn.update(&table, rows[0], 2).unwrap();
    txn.update(&table, rows[0], 3).unwrap();
    assert_eq!(table.versions(), versions_before + 1);
    txn.delete(&table, rows[0]).unwrap();
    assert_eq!(txn.read(&table, rows[0]), None);
    assert_eq!(
        txn.update(&table, rows[0], 4),
        Err(TxnError::RowNotFound {
            table: "t",
            row: rows[0]
        })
    );
    txn.commit().unwrap();
    let snapshot = db.snapshot().unwrap();
    assert_eq!(table.read(&snapshot, rows[0]), None);
    let mut late = db.begin(Isolation::Snapshot).unwrap();
    assert!(!late.delete(&table, rows[0]).unwrap_err().is_retryable());
}

#[test]
fn read_only_snapshots_take_a_slot_and_give_it_back() {
    let db = Database::new(maestro_txn::DatabaseConfig {
        snapshot_slots_max: 2,
        ..Default::default()
    });
    let a = db.snapshot().unwrap();
    let _b = db.snapshot().unwrap();
    assert_eq!(
        db.snapshot().unwrap_err(),
        TxnError::SnapshotSlotsExhausted { slots_max: 2 }
    );
    drop(a);
    db.snapshot().unwrap();
}

#[test]
fn low_watermark_is_the_oldest_live_snapshot() {
    let (db, table, rows) = loaded(&[1]);
    let old = db.snapshot().unwrap();
    for value in 2..5 {
        let mut txn = db.begin(Isolation::Snapshot).unwrap();
        txn.update(&table, rows[0], value).unwrap();
        txn.commit().unwrap();
    }
    let young = db.snapshot().unwrap();
    assert_eq!(db.low_watermark(), old.read_ts());
    assert!(young.read_ts() > old.read_ts());
    drop(old);
    assert_eq!(db.low_watermark(), young.read_ts());
    drop(young);
    assert_eq!(db.low_watermark(), db.last_commit_ts());
}

#[test]
fn scan_sees_exactly_the_snapshot() {
    let (db, table, rows) = loaded(&[1, 2, 3]);
    let before = db.snapshot().unwrap();
    let mut txn = db.begin(Isolation::Snapshot).unwrap();
    txn.delete(&table, rows[1]).unwrap();
    txn.insert(&table, 4).unwrap();
    txn.commit().unwrap();
    let after = db.snapshot().unwrap();
    let mut seen = Vec::new();
    table.scan(&before, |_, v| seen.push(*v));
    assert_eq!(seen, [1, 2, 3]);
    seen.clear();
    table.scan(&after, |_, v| seen.push(*v));
    assert_eq!(seen, [1, 3, 4]);
}

#[test]
fn a_write_conflict_names_a_blocker_that_finishes_with_its_holder() {
    let db = Database::default();
    let t = Table::<i64>::new("t");
    let mut setup = db.begin(Isolation::Snapshot).unwrap();
    let row = setup.insert(&t, 1).unwrap();
    setup.commit().unwrap();
    let mut holder = db.begin(Isolation::Snapshot).unwrap();
    holder.update(&t, row, 2).unwrap();
    let mut loser = db.begin(Isolation::Snapshot).unwrap();
    assert!(matches!(
        loser.update(&t, row, 3),
        Err(maestro_txn::TxnError::WriteConflict { .. })
    ));
    let blocker = loser.take_blocker().expect("a conflict names its blocker");
    assert!(loser.take_blocker().is_none(), "taken once");
    assert!(!blocker.is_finished());
    holder.commit().unwrap();
    assert!(blocker.is_finished());
    loser.abort();
}

#[test]
fn read_with_projects_the_version_the_transaction_sees() {
    let db = Database::default();
    let t = Table::<(i64, String)>::new("t");
    let mut setup = db.begin(Isolation::Snapshot).unwrap();
    let row = setup.insert(&t, (1, "one".into())).unwrap();
    setup.commit().unwrap();
    let mut reader = db.begin(Isolation::Snapshot).unwrap();
    let mut writer = db.begin(Isolation::Snapshot).unwrap();
    writer.update(&t, row, (2, "two".into())).unwrap();
    assert_eq!(writer.read_with(&t, row, |r| r.0), Some(2), "own write");
    writer.commit().unwrap();
    assert_eq!(
        reader.read_with(&t, row, |r| r.1.len()),
        Some(3),
        "snapshot"
    );
    assert_eq!(reader.read_with(&t, 99, |r| r.0), None);
    reader.abort();
}

/// A write over the newest committed version (a rebase): `newest` reads past
/// the snapshot, `update_over` accepts exactly that version, and another
/// transaction's uncommitted version is reported as held.
#[test]
fn a_write_can_build_on_the_newest_committed_version() {
    use maestro_txn::Newest;
    let db = Database::default();
    let table: Arc<Table<i64>> = Table::new("t");
    let mut setup = db.begin(Isolation::Snapshot).unwrap();
    let row = setup.insert(&table, 1).unwrap();
    setup.commit().unwrap();

    let mut late = db.begin(Isolation::Snapshot).unwrap();
    let mut early = db.begin(Isolation::Snapshot).unwrap();
    late.update(&table, row, 2).unwrap();
    // Held by `late`, uncommitted.
    assert!(matches!(early.newest(&table, row), Newest::Held(b) if !b.is_finished()));
    let committed = late.commit().unwrap().expect("wrote");

    // The snapshot still reads 1; a plain update is refused as too old.
    assert_eq!(early.read(&table, row), Some(1));
    assert!(early.update(&table, row, 10).is_err());
    let Newest::Committed { value, ts } = early.newest(&table, row) else {
        panic!("expected the committed version");
    };
    assert_eq!((value, ts), (2, committed));
    // Over an older version: refused; over the newest: accepted.
    assert!(early.update_over(&table, row, 99, ts - 1).is_err());
    early.update_over(&table, row, value + 10, ts).unwrap();
    assert!(matches!(early.newest(&table, row), Newest::Own));
    early.commit().unwrap();

    let mut reader = db.begin(Isolation::Snapshot).unwrap();
    assert_eq!(reader.read(&table, row), Some(12));
    reader.delete(&table, row).unwrap();
    reader.commit().unwrap();
    let mut after = db.begin(Isolation::Snapshot).unwrap();
    assert!(matches!(after.newest(&table, row), Newest::Missing));
}

#[test]
fn a_refreshed_snapshot_sees_later_commits_and_keeps_own_writes() {
    let (db, table, rows) = loaded(&[1, 2]);
    let mut reader = db.begin(Isolation::Snapshot).unwrap();
    reader.update(&table, rows[1], 20).unwrap();
    let mut other = db.begin(Isolation::Snapshot).unwrap();
    other.update(&table, rows[0], 10).unwrap();
    other.commit().unwrap();
    assert_eq!(reader.read(&table, rows[0]), Some(1), "before the refresh");
    reader.refresh_snapshot().unwrap();
    assert_eq!(reader.read(&table, rows[0]), Some(10), "a later commit");
    assert_eq!(reader.read(&table, rows[1]), Some(20), "its own write");
    // Writing the row another transaction committed is no longer a
    // conflict: the snapshot now includes that commit.
    reader.update(&table, rows[0], 11).unwrap();
    reader.commit().unwrap();
    let s = db.snapshot().unwrap();
    assert_eq!(table.read(&s, rows[0]), Some(11));
}

#[test]
#[should_panic(expected = "only a snapshot-isolation transaction")]
fn a_serializable_transaction_keeps_its_snapshot() {
    let (db, _table, _rows) = loaded(&[1]);
    let mut txn = db.begin(Isolation::Serializable).unwrap();
    let _ = txn.refresh_snapshot();
}
