//! Seeded concurrent stress: transfers between accounts while readers check
//! invariants inside snapshots. Set `MAESTRO_TXN_SEED` to replay a seed; the
//! seed is printed at the start and in every failure message.
//!
//! Invariants checked in every snapshot:
//! - the sum of all balances equals the initial total;
//! - the number of rows in `transfers` (one inserted per transfer) equals the
//!   `transfer_count` row (updated by the same transaction): inserts and
//!   updates of one transaction become visible together;
//! - (wide test) all rows written by one transaction carry the same value.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use maestro_txn::{Database, Isolation, Table, TxnError};

const ACCOUNTS: u64 = 16;
const BALANCE_INITIAL: i64 = 1_000;
const WRITERS: u64 = 3;
const TRANSFERS_PER_WRITER: u64 = 5_000;
const READERS: u64 = 2;
/// Snapshots each reader checks at least, even if the writers finish first.
const SNAPSHOTS_PER_READER_MIN: u64 = 200;

fn seed() -> u64 {
    let seed = std::env::var("MAESTRO_TXN_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| fastrand::u64(..));
    eprintln!("bank stress seed: {seed} (replay with MAESTRO_TXN_SEED={seed})");
    seed
}

/// Runs `body` until it commits; returns the number of retryable failures.
fn retry(
    db: &Database,
    isolation: Isolation,
    mut body: impl FnMut(&mut maestro_txn::Transaction) -> Result<(), TxnError>,
) -> u64 {
    let mut failures = 0;
    loop {
        let mut txn = db.begin(isolation).unwrap();
        match body(&mut txn).and_then(|()| txn.commit().map(|_| ())) {
            Ok(()) => return failures,
            Err(error) if error.is_retryable() => {
                failures += 1;
                // No-wait conflicts on the hot counter row: let its holder run.
                std::thread::yield_now();
            }
            Err(error) => panic!("non-retryable error: {error}"),
        }
    }
}

fn bank(isolation: Isolation) {
    let seed = seed();
    let db = Database::default();
    let accounts = Table::<i64>::new("accounts");
    let counter = Table::<u64>::new("transfer_count");
    let transfers = Table::<(u64, u64, i64)>::new("transfers");
    let mut load = db.begin(Isolation::Snapshot).unwrap();
    for _ in 0..ACCOUNTS {
        load.insert(&accounts, BALANCE_INITIAL).unwrap();
    }
    let counter_row = load.insert(&counter, 0).unwrap();
    load.commit().unwrap();
    let total = BALANCE_INITIAL * ACCOUNTS as i64;

    let writers_done = AtomicBool::new(false);
    let conflicts = AtomicU64::new(0);
    std::thread::scope(|scope| {
        let writers: Vec<_> = (0..WRITERS)
            .map(|writer| {
                let (db, accounts, counter, transfers) = (&db, &accounts, &counter, &transfers);
                let conflicts = &conflicts;
                scope.spawn(move || {
                    let mut rng = fastrand::Rng::with_seed(seed.wrapping_add(writer));
                    for _ in 0..TRANSFERS_PER_WRITER {
                        let from = rng.u64(..ACCOUNTS);
                        let to = (from + rng.u64(1..ACCOUNTS)) % ACCOUNTS;
                        let amount = rng.i64(1..50);
                        conflicts.fetch_add(
                            retry(db, isolation, |txn| {
                                let a = txn.read(accounts, from).unwrap();
                                let b = txn.read(accounts, to).unwrap();
                                txn.update(accounts, from, a - amount)?;
                                txn.update(accounts, to, b + amount)?;
                                let n = txn.read(counter, counter_row).unwrap();
                                txn.update(counter, counter_row, n + 1)?;
                                txn.insert(transfers, (from, to, amount))?;
                                Ok(())
                            }),
                            Ordering::Relaxed,
                        );
                    }
                })
            })
            .collect();
        for reader in 0..READERS {
            let (db, accounts, counter, transfers) = (&db, &accounts, &counter, &transfers);
            let writers_done = &writers_done;
            scope.spawn(move || {
                let mut checked = 0u64;
                while checked < SNAPSHOTS_PER_READER_MIN || !writers_done.load(Ordering::Acquire) {
                    let snapshot = db.snapshot().unwrap();
                    let mut sum = 0;
                    accounts.scan(&snapshot, |_, balance| sum += balance);
                    assert_eq!(
                        sum,
                        total,
                        "seed {seed}: reader {reader} saw a partial transfer at ts {}",
                        snapshot.read_ts()
                    );
                    let mut rows = 0u64;
                    transfers.scan(&snapshot, |_, _| rows += 1);
                    let count = counter.read(&snapshot, counter_row).unwrap();
                    assert_eq!(
                        rows, count,
                        "seed {seed}: insert and update of one transfer seen apart"
                    );
                    if checked.is_multiple_of(16) {
                        db.collect(64);
                    }
                    checked += 1;
                }
            });
        }
        for writer in writers {
            writer.join().unwrap();
        }
        writers_done.store(true, Ordering::Release);
    });

    let snapshot = db.snapshot().unwrap();
    assert_eq!(
        counter.read(&snapshot, counter_row),
        Some(WRITERS * TRANSFERS_PER_WRITER),
        "seed {seed}"
    );
    eprintln!(
        "seed {seed}: {} retryable conflicts",
        conflicts.load(Ordering::Relaxed)
    );
    drop(snapshot);
    while db.collect(usize::MAX).rows_queued > 0 {}
    // Every superseded version is gone: one per account, the counter, and
    // one per transfer row.
    assert_eq!(accounts.versions(), ACCOUNTS as usize, "seed {seed}");
    assert_eq!(counter.versions(), 1, "seed {seed}");
    assert_eq!(
        transfers.versions() as u64,
        WRITERS * TRANSFERS_PER_WRITER,
        "seed {seed}"
    );
}

#[test]
fn transfers_keep_the_total_under_snapshot_isolation() {
    bank(Isolation::Snapshot);
}

#[test]
fn transfers_keep_the_total_under_serializable() {
    bank(Isolation::Serializable);
}

/// One writer sets all `WIDTH` rows to the same value per transaction; readers
/// must never see two values in one snapshot.
#[test]
fn no_reader_sees_a_partial_wide_transaction() {
    const WIDTH: u64 = 64;
    const ROUNDS: u64 = 2_000;
    let db = Database::default();
    let table = Table::<u64>::new("wide");
    let mut load = db.begin(Isolation::Snapshot).unwrap();
    for _ in 0..WIDTH {
        load.insert(&table, 0).unwrap();
    }
    load.commit().unwrap();
    let done = AtomicBool::new(false);
    let table = Arc::clone(&table);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            for round in 1..=ROUNDS {
                let mut txn = db.begin(Isolation::Snapshot).unwrap();
                for row in 0..WIDTH {
                    txn.update(&table, row, round).unwrap();
                }
                txn.commit().unwrap();
            }
            done.store(true, Ordering::Release);
        });
        scope.spawn(|| {
            let mut last = 0;
            while !done.load(Ordering::Acquire) {
                let snapshot = db.snapshot().unwrap();
                let first = table.read(&snapshot, 0).unwrap();
                table.scan(&snapshot, |row, &value| {
                    assert_eq!(value, first, "row {row} at ts {}", snapshot.read_ts());
                });
                assert!(first >= last, "snapshots went back in time");
                last = first;
            }
        });
    });
}
