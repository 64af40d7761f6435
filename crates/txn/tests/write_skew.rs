//! Write skew: allowed by snapshot isolation, refused by serializable mode.
//!
//! Two doctors are on call (`on_call` rows 0 and 1, value 1 = on call); the
//! rule is that at least one stays on call. Each transaction reads both rows,
//! sees two on call, and takes its own doctor off call. The writes touch
//! different rows, so snapshot isolation finds no write-write conflict.

use maestro_txn::{Database, Isolation, Table, TxnError};

fn run(isolation: Isolation) -> (Result<Option<u64>, TxnError>, i64) {
    let db = Database::default();
    let on_call = Table::<i64>::new("on_call");
    let mut load = db.begin(Isolation::Snapshot).unwrap();
    let rows = [
        load.insert(&on_call, 1).unwrap(),
        load.insert(&on_call, 1).unwrap(),
    ];
    load.commit().unwrap();

    let mut alice = db.begin(isolation).unwrap();
    let mut bob = db.begin(isolation).unwrap();
    for txn in [&mut alice, &mut bob] {
        let total: i64 = rows.iter().map(|&r| txn.read(&on_call, r).unwrap()).sum();
        assert_eq!(total, 2);
    }
    alice.update(&on_call, rows[0], 0).unwrap();
    bob.update(&on_call, rows[1], 0).unwrap();
    alice.commit().unwrap();
    let bob_commit = bob.commit();
    let snapshot = db.snapshot().unwrap();
    let total = rows
        .iter()
        .map(|&r| on_call.read(&snapshot, r).unwrap())
        .sum();
    (bob_commit, total)
}

#[test]
fn snapshot_isolation_allows_write_skew() {
    let (bob_commit, total) = run(Isolation::Snapshot);
    assert!(bob_commit.is_ok());
    assert_eq!(
        total, 0,
        "both doctors went off call: the anomaly SI permits"
    );
}

#[test]
fn serializable_mode_refuses_write_skew() {
    let (bob_commit, total) = run(Isolation::Serializable);
    assert_eq!(
        bob_commit,
        Err(TxnError::ReadValidation {
            table: "on_call",
            row: 0
        })
    );
    assert_eq!(total, 1);
}

#[test]
fn serializable_read_only_transaction_commits_without_validation() {
    // It read a snapshot, which is a prefix of the validated updaters'
    // serial order: it serializes before the writer.
    let db = Database::default();
    let t = Table::<i64>::new("t");
    let mut load = db.begin(Isolation::Snapshot).unwrap();
    let row = load.insert(&t, 1).unwrap();
    load.commit().unwrap();

    let mut reader = db.begin(Isolation::Serializable).unwrap();
    assert_eq!(reader.read(&t, row), Some(1));
    let mut writer = db.begin(Isolation::Snapshot).unwrap();
    writer.update(&t, row, 2).unwrap();
    writer.commit().unwrap();
    assert_eq!(reader.commit(), Ok(None));
}

/// A serializable transaction that scans a table to check a predicate fails
/// if another transaction inserted a matching row (a phantom) after its
/// snapshot; under SI it commits.
fn phantom(isolation: Isolation) -> Result<Option<u64>, TxnError> {
    let db = Database::default();
    let shifts = Table::<i64>::new("shifts");
    let mut load = db.begin(Isolation::Snapshot).unwrap();
    load.insert(&shifts, 8).unwrap();
    load.commit().unwrap();

    // Rule: at most 16 hours in total. Both check, both insert 8.
    let mut first = db.begin(isolation).unwrap();
    let mut second = db.begin(isolation).unwrap();
    for txn in [&mut first, &mut second] {
        let mut hours = 0;
        txn.scan(&shifts, |_, h| hours += h);
        assert_eq!(hours, 8);
        txn.insert(&shifts, 8).unwrap();
    }
    let mut own = 0;
    first.scan(&shifts, |_, h| own += h);
    assert_eq!(own, 16, "a scan sees the transaction's own insert");
    first.commit().unwrap();
    second.commit()
}

#[test]
fn snapshot_isolation_misses_phantoms() {
    assert!(phantom(Isolation::Snapshot).is_ok());
}

#[test]
fn serializable_scans_catch_phantoms() {
    assert_eq!(
        phantom(Isolation::Serializable),
        Err(TxnError::ScanValidation { table: "shifts" })
    );
}
