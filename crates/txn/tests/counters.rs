//! Seeded concurrent stress of commutative counters: writers move amounts
//! between counters (+x on one, −x on another, in one transaction; some
//! transactions abort on purpose) while readers check, inside snapshots, that
//! the counters' sum equals the initial total and that a versioned
//! `transfers` row count agrees with a `moves` counter bumped by the same
//! transactions. Set `MAESTRO_TXN_SEED` to replay; the seed is printed at the
//! start and in every failure message.
//!
//! Additions never conflict, so every writer transaction must commit at the
//! first attempt (no retry loop here: a conflict fails the test).
//!
//! At the end, after GC with no live snapshot, every delta is folded and the
//! values equal the committed moves replayed sequentially.

use std::sync::atomic::{AtomicBool, Ordering};

use maestro_txn::{CounterTable, Database, Isolation, Table};

const COUNTERS: u64 = 8;
const INITIAL: i64 = 1_000;
const WRITERS: u64 = 3;
const MOVES_PER_WRITER: u64 = 4_000;
const READERS: u64 = 2;
const SNAPSHOTS_PER_READER_MIN: u64 = 200;
/// One writer transaction in this many aborts instead of committing.
const ABORT_ONE_IN: u64 = 7;

fn seed() -> u64 {
    let seed = std::env::var("MAESTRO_TXN_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| fastrand::u64(..));
    eprintln!("counter stress seed: {seed} (replay with MAESTRO_TXN_SEED={seed})");
    seed
}

#[test]
fn counter_additions_never_conflict_and_snapshots_see_whole_transactions() {
    let seed = seed();
    let db = Database::default();
    let counters = CounterTable::new("balances");
    let transfers = Table::<(u64, u64, i64)>::new("transfers");
    let mut setup = db.begin(Isolation::Snapshot).unwrap();
    let rows: Vec<_> = (0..COUNTERS)
        .map(|_| setup.create_counter(&counters, INITIAL).unwrap())
        .collect();
    let moves_row = setup.create_counter(&counters, 0).unwrap();
    setup.commit().unwrap();
    let total = INITIAL * COUNTERS as i64;
    let done = AtomicBool::new(false);

    let committed: Vec<Vec<(u64, u64, i64)>> = std::thread::scope(|s| {
        for r in 0..READERS {
            let (db, counters, transfers, rows, done) = (&db, &counters, &transfers, &rows, &done);
            s.spawn(move || {
                let mut checked = 0u64;
                while !done.load(Ordering::Relaxed) || checked < SNAPSHOTS_PER_READER_MIN {
                    let snapshot = db.snapshot().unwrap();
                    let sum: i64 = rows
                        .iter()
                        .map(|&row| counters.read(&snapshot, row).unwrap())
                        .sum();
                    assert_eq!(sum, total, "seed {seed}, reader {r}: sum of counters");
                    let mut inserted = 0i64;
                    transfers.scan(&snapshot, |_, _| inserted += 1);
                    assert_eq!(
                        counters.read(&snapshot, moves_row),
                        Some(inserted),
                        "seed {seed}, reader {r}: moves counter vs transfer rows"
                    );
                    checked += 1;
                }
            });
        }
        let writers: Vec<_> = (0..WRITERS)
            .map(|w| {
                let (db, counters, transfers, rows) = (&db, &counters, &transfers, &rows);
                s.spawn(move || {
                    let mut rng = fastrand::Rng::with_seed(seed ^ (w + 1));
                    let mut mine = Vec::new();
                    for _ in 0..MOVES_PER_WRITER {
                        let from = rng.u64(..COUNTERS);
                        let to = rng.u64(..COUNTERS);
                        let amount = rng.i64(1..50);
                        let mut txn = db.begin(Isolation::Snapshot).unwrap();
                        let attempt = |txn: &mut maestro_txn::Transaction| {
                            txn.add(counters, rows[from as usize], -amount)?;
                            txn.add(counters, rows[to as usize], amount)?;
                            txn.add(counters, moves_row, 1)?;
                            txn.insert(transfers, (from, to, amount)).map(|_| ())
                        };
                        attempt(&mut txn).unwrap_or_else(|e| {
                            panic!("seed {seed}, writer {w}: an addition failed: {e}")
                        });
                        if rng.u64(..ABORT_ONE_IN) == 0 {
                            txn.abort();
                        } else {
                            txn.commit().unwrap_or_else(|e| {
                                panic!("seed {seed}, writer {w}: commit failed: {e}")
                            });
                            mine.push((from, to, amount));
                        }
                    }
                    mine
                })
            })
            .collect();
        let committed = writers.into_iter().map(|h| h.join().unwrap()).collect();
        done.store(true, Ordering::Relaxed);
        committed
    });

    let mut expected = vec![INITIAL; COUNTERS as usize];
    let mut moves = 0i64;
    for (from, to, amount) in committed.iter().flatten() {
        expected[*from as usize] -= amount;
        expected[*to as usize] += amount;
        moves += 1;
    }
    while db.gc_rows_queued() > 0 {
        db.collect(1024);
    }
    assert_eq!(counters.deltas(), 0, "seed {seed}: deltas left after GC");
    let snapshot = db.snapshot().unwrap();
    let values: Vec<i64> = rows
        .iter()
        .map(|&row| counters.read(&snapshot, row).unwrap())
        .collect();
    assert_eq!(values, expected, "seed {seed}: final values");
    assert_eq!(counters.read(&snapshot, moves_row), Some(moves));
}

#[test]
fn counters_exist_only_once_their_creator_committed() {
    let db = Database::default();
    let counters = CounterTable::new("c");
    let mut creator = db.begin(Isolation::Snapshot).unwrap();
    let row = creator.create_counter(&counters, 5).unwrap();
    let mut other = db.begin(Isolation::Snapshot).unwrap();
    assert_eq!(other.read_counter(&counters, row), None);
    assert!(matches!(
        other.add(&counters, row, 1),
        Err(maestro_txn::TxnError::RowNotFound { .. })
    ));
    assert_eq!(creator.read_counter(&counters, row), Some(5));
    creator.commit().unwrap();
    other.abort();
    let mut later = db.begin(Isolation::Snapshot).unwrap();
    later.add(&counters, row, 2).unwrap();
    assert_eq!(later.read_counter(&counters, row), Some(7));
    later.commit().unwrap();
    assert_eq!(counters.read(&db.snapshot().unwrap(), row), Some(7));
}

#[test]
fn serializable_readers_of_a_counter_fail_validation_after_a_concurrent_add() {
    let db = Database::default();
    let counters = CounterTable::new("c");
    let mut setup = db.begin(Isolation::Snapshot).unwrap();
    let row = setup.create_counter(&counters, 0).unwrap();
    setup.commit().unwrap();
    let mut reader = db.begin(Isolation::Serializable).unwrap();
    assert_eq!(reader.read_counter(&counters, row), Some(0));
    let mut adder = db.begin(Isolation::Snapshot).unwrap();
    adder.add(&counters, row, 3).unwrap();
    adder.commit().unwrap();
    // The reader writes something, so it validates at commit.
    reader.add(&counters, row, 1).unwrap();
    assert!(matches!(
        reader.commit(),
        Err(maestro_txn::TxnError::ReadValidation { .. })
    ));
}
