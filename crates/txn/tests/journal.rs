//! The change journal (`Table::track_changes`): what committed writers
//! touched, by commit timestamp; aborted writers leave nothing.

use maestro_txn::{Database, Isolation, Table};

#[test]
fn committed_writes_are_journaled_by_timestamp_and_aborts_are_not() {
    let db = Database::default();
    let t = Table::<u32>::new("t");
    let mut load = db.begin(Isolation::Snapshot).unwrap();
    let rows: Vec<_> = (0..4).map(|v| load.insert(&t, v).unwrap()).collect();
    load.commit().unwrap();
    assert_eq!(t.changed_rows(0, u64::MAX), None, "not tracked yet");
    t.track_changes();
    let base = db.snapshot().unwrap().read_ts();

    let mut a = db.begin(Isolation::Snapshot).unwrap();
    a.update(&t, rows[2], 20).unwrap();
    let new = a.insert(&t, 4).unwrap();
    let ts_a = a.commit().unwrap().unwrap();

    let mut aborted = db.begin(Isolation::Snapshot).unwrap();
    aborted.update(&t, rows[0], 99).unwrap();
    aborted.abort();

    let mut b = db.begin(Isolation::Snapshot).unwrap();
    b.delete(&t, rows[1]).unwrap();
    b.update(&t, rows[2], 21).unwrap();
    let ts_b = b.commit().unwrap().unwrap();

    assert_eq!(
        t.changed_rows(base, ts_b).unwrap(),
        vec![rows[1], rows[2], new]
    );
    assert_eq!(t.changed_rows(base, ts_a).unwrap(), vec![rows[2], new]);
    assert_eq!(t.changed_rows(ts_a, ts_b).unwrap(), vec![rows[1], rows[2]]);
    assert_eq!(t.changes_recorded(), 4);
    t.forget_changes_upto(ts_a);
    assert_eq!(t.changes_recorded(), 2);
    assert_eq!(t.changed_rows(base, ts_b).unwrap(), vec![rows[1], rows[2]]);
}
