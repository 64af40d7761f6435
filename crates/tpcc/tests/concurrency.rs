//! Concurrent appends keep every row: several threads append to one table (and
//! insert orders through the database's indexes) while a reader polls; seeded,
//! with the seed printed for replay (`TPCC_SEED=…`).

mod common;

use std::sync::atomic::{AtomicBool, Ordering};

use common::*;
use maestro_tpcc::*;

#[test]
fn concurrent_appends_keep_every_row() {
    let seed = seed();
    let mut rng = fastrand::Rng::with_seed(seed);
    let threads = 4u32;
    let per_thread: Vec<u32> = (0..threads).map(|_| rng.u32(2_000..6_000)).collect();
    let table: Table<(u32, u32)> = Table::new("t");
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        for (t, &n) in per_thread.iter().enumerate() {
            let (table, seed) = (&table, seed ^ t as u64);
            s.spawn(move || {
                let mut rng = fastrand::Rng::with_seed(seed);
                for i in 0..n {
                    let id = table.append((t as u32, i)).unwrap();
                    if rng.u8(..16) == 0 {
                        std::thread::yield_now();
                    }
                    // Deleting and reviving on the way must not lose the row.
                    if rng.u8(..64) == 0 {
                        assert!(table.delete(id) && table.undelete(id));
                    }
                }
            });
        }
        s.spawn(|| {
            // A reader sees each row either not yet (in flight) or whole.
            while !done.load(Ordering::Relaxed) {
                let end = table.allocated();
                for id in (0..end).step_by(97) {
                    if let Some(row) = table.read(id) {
                        assert!(row.0 < threads && row.1 < 6_000, "seed {seed}: {row:?}");
                    }
                }
            }
        });
        while table.live() < per_thread.iter().map(|&n| u64::from(n)).sum() {
            std::thread::yield_now();
        }
        done.store(true, Ordering::Relaxed);
    });
    let total: u32 = per_thread.iter().sum();
    assert_eq!(table.live(), u64::from(total), "seed {seed}");
    let mut next = vec![0u32; threads as usize];
    let mut ids = 0u64;
    table.scan(|id, &(t, i)| {
        assert_eq!(id, ids, "seed {seed}: row ids are dense");
        ids += 1;
        // A thread's rows appear in its append order.
        assert_eq!(i, next[t as usize], "seed {seed}: thread {t}");
        next[t as usize] += 1;
    });
    assert_eq!(next, per_thread, "seed {seed}");
}

#[test]
fn concurrent_order_inserts_are_all_indexed() {
    let seed = seed();
    let db = Database::new(2).unwrap();
    let districts: Vec<(u16, u8)> = (1..=2).flat_map(|w| (1..=3).map(move |d| (w, d))).collect();
    let orders = fastrand::Rng::with_seed(seed).u32(300..700);
    std::thread::scope(|s| {
        for (k, &(w, d)) in districts.iter().enumerate() {
            let db = &db;
            s.spawn(move || {
                let mut rng = fastrand::Rng::with_seed(seed ^ k as u64);
                for o_id in 1..=orders {
                    let ol_cnt = rng.u8(5..=15);
                    db.insert(order(w, d, o_id, rng.u16(1..=3000), ol_cnt))
                        .unwrap();
                    for ol in 1..=ol_cnt {
                        db.insert(order_line(w, d, o_id, ol)).unwrap();
                    }
                    db.insert(new_order(w, d, o_id)).unwrap();
                }
            });
        }
    });
    let expected = u64::from(orders) * districts.len() as u64;
    assert_eq!(db.counts().orders, expected, "seed {seed}");
    assert_eq!(db.index.orders.len() as u64, expected, "seed {seed}");
    assert_eq!(
        db.index.orders_by_customer.len() as u64,
        expected,
        "seed {seed}"
    );
    assert_eq!(db.index.new_order.len() as u64, expected, "seed {seed}");
    assert_eq!(
        db.index.order_line.len() as u64,
        db.counts().order_line,
        "seed {seed}"
    );
    for &(w, d) in &districts {
        for o_id in 1..=orders {
            let row = db.order_row(w, d, o_id).unwrap().expect("indexed");
            let o = db.orders.read(row).unwrap();
            assert_eq!((o.o_w_id, o.o_d_id, o.o_id), (w, d, o_id), "seed {seed}");
            let mut lines = 0;
            db.order_lines(w, d, o_id..=o_id, |_, _, _| {
                lines += 1;
                true
            })
            .unwrap();
            assert_eq!(lines, o.o_ol_cnt, "seed {seed}");
        }
    }
}
