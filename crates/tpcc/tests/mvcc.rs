//! TPC-C on maestro-txn (`--cc mvcc`): the MVCC database holds what the 2PL
//! loader generated, and its indexes find exactly the visible rows.

use maestro_tpcc::keys::CustomerKey;
use maestro_tpcc::keys::{DistrictKey, OrderKey, StockKey, WarehouseKey};
use maestro_tpcc::mvcc::{self, MvccDatabase, load_mvcc, run_with_retry};
use maestro_tpcc::random::last_name;
use maestro_tpcc::txn::{
    CustomerSelector, MAX_ORDER_LINES, NewOrderInput, NewOrderLine, Outcome, PaymentInput,
    TxnOutput, UNUSED_ITEM_ID,
};
use maestro_tpcc::txn::{DeliveryInput, OrderStatusInput, StockLevelInput, TxnInput};
use maestro_tpcc::{Customer, History};
use maestro_tpcc::{
    District, IndexId, LoadConfig, NewOrder, Order, OrderLine, Stock, Warehouse, load,
};
use maestro_txn::{DatabaseConfig, Isolation};

fn new_order_input(items: &[u32]) -> NewOrderInput {
    let mut lines = [NewOrderLine::default(); MAX_ORDER_LINES];
    for (line, &i_id) in lines.iter_mut().zip(items) {
        *line = NewOrderLine {
            i_id,
            supply_w_id: 1,
            quantity: 5,
        };
    }
    NewOrderInput {
        w_id: 1,
        d_id: 1,
        c_id: 42,
        lines,
        ol_cnt: items.len() as u8,
    }
}

fn district(db: &MvccDatabase) -> District {
    let mut txn = db.txn.begin(Isolation::Snapshot).unwrap();
    let key = DistrictKey { w_id: 1, d_id: 1 }.pack().unwrap();
    db.lookup(&mut txn, IndexId::District, key)
        .unwrap()
        .unwrap()
        .1
}

fn stock(db: &MvccDatabase, i_id: u32) -> Stock {
    let mut txn = db.txn.begin(Isolation::Snapshot).unwrap();
    let key = StockKey { w_id: 1, i_id }.pack().unwrap();
    db.lookup(&mut txn, IndexId::Stock, key).unwrap().unwrap().1
}

#[test]
fn new_order_commits_its_rows_and_its_rollback_leaves_no_trace() {
    let (db, _) = load_mvcc(&LoadConfig::new(1), &|_| {}).unwrap();
    let before = district(&db);
    let stock_before = stock(&db, 11);
    let rolled = mvcc::new_order(&db, &new_order_input(&[11, 22, UNUSED_ITEM_ID]), 7).unwrap();
    assert_eq!(rolled.outcome, Outcome::RolledBack);
    assert_eq!(district(&db), before);
    assert_eq!(stock(&db, 11), stock_before);

    let done = mvcc::new_order(&db, &new_order_input(&[11, 22, 33]), 7).unwrap();
    assert_eq!(done.retries, 0);
    let Outcome::Committed(TxnOutput::NewOrder { o_id, ol_cnt, .. }) = done.outcome else {
        panic!("not committed: {done:?}");
    };
    assert_eq!((o_id, ol_cnt), (before.d_next_o_id, 3));
    assert_eq!(district(&db).d_next_o_id, o_id + 1);
    let s = stock(&db, 11);
    assert_eq!(s.s_order_cnt, stock_before.s_order_cnt + 1);
    assert_eq!(s.s_ytd, stock_before.s_ytd + 5);
    let mut txn = db.txn.begin(Isolation::Snapshot).unwrap();
    let key = OrderKey {
        w_id: 1,
        d_id: 1,
        o_id,
    }
    .pack()
    .unwrap();
    let order: Option<(_, Order)> = db.lookup(&mut txn, IndexId::Orders, key).unwrap();
    assert_eq!(order.unwrap().1.o_ol_cnt, 3);
    let no: Option<(_, NewOrder)> = db.lookup(&mut txn, IndexId::NewOrder, key).unwrap();
    assert!(no.is_some());
    let mut lines = 0;
    txn.scan(&db.order_line, |_, l: &OrderLine| {
        lines += u32::from(l.ol_o_id == o_id && l.ol_d_id == 1 && l.ol_w_id == 1);
    });
    assert_eq!(lines, 3);
}

#[test]
fn a_conflict_reruns_the_transaction_on_a_fresh_snapshot() {
    let db = MvccDatabase::new(1, DatabaseConfig::default());
    let mut setup = db.txn.begin(Isolation::Snapshot).unwrap();
    let row = setup
        .insert(
            &db.new_order,
            NewOrder {
                no_o_id: 1,
                no_d_id: 1,
                no_w_id: 1,
            },
        )
        .unwrap();
    setup.commit().unwrap();
    let mut attempts = 0;
    let done = run_with_retry(&db, |db, txn| {
        attempts += 1;
        if attempts == 1 {
            // Another transaction commits a newer version after our snapshot.
            let mut other = db.txn.begin(Isolation::Snapshot).unwrap();
            let mut r = other.read(&db.new_order, row).unwrap();
            r.no_o_id += 100;
            other.update(&db.new_order, row, r).unwrap();
            other.commit().unwrap();
        }
        let mut r = txn.read(&db.new_order, row).unwrap();
        r.no_o_id += 1;
        txn.update(&db.new_order, row, r)?;
        Ok(TxnOutput::StockLevel { low_stock: 0 })
    })
    .unwrap();
    assert_eq!((done.retries, attempts), (1, 2));
    let snapshot = db.txn.snapshot().unwrap();
    assert_eq!(db.new_order.read(&snapshot, row).unwrap().no_o_id, 102);
}

#[test]
fn mvcc_load_matches_2pl_load_and_indexes_find_rows() {
    let config = LoadConfig::new(1);
    let (db, report) = load_mvcc(&config, &|_| {}).unwrap();
    let (source, _) = load(&config, &|_| {}).unwrap();
    assert_eq!(db.warehouses(), 1);
    let mut txn = db.txn.begin(Isolation::Snapshot).unwrap();
    let mut stock = 0u64;
    txn.scan(&db.stock, |_, _| stock += 1);
    assert_eq!(stock, report.counts.stock);
    let mut new_orders = 0u64;
    txn.scan(&db.new_order, |_, _| new_orders += 1);
    assert_eq!(new_orders, report.counts.new_order);
    assert_eq!(db.index.get(IndexId::NewOrder).len() as u64, new_orders);

    let key = WarehouseKey { w_id: 1 }.pack().unwrap();
    let (_, w): (_, Warehouse) = db
        .lookup(&mut txn, IndexId::Warehouse, key)
        .unwrap()
        .unwrap();
    let id = source.index.warehouse.lookup(key).unwrap();
    assert_eq!(w, *source.warehouse.read(id).unwrap());
    let key = DistrictKey { w_id: 1, d_id: 3 }.pack().unwrap();
    let (_, d): (_, District) = db
        .lookup(&mut txn, IndexId::District, key)
        .unwrap()
        .unwrap();
    assert_eq!((d.d_w_id, d.d_id, d.d_next_o_id), (1, 3, 3001));
    txn.abort();
}

#[test]
fn index_entries_of_uncommitted_aborted_and_deleted_rows_are_invisible() {
    let db = MvccDatabase::new(1, DatabaseConfig::default());
    let row = NewOrder {
        no_o_id: 7,
        no_d_id: 1,
        no_w_id: 1,
    };
    let key = OrderKey {
        w_id: 1,
        d_id: 1,
        o_id: 7,
    }
    .pack()
    .unwrap();
    let mut writer = db.txn.begin(Isolation::Snapshot).unwrap();
    db.insert(&mut writer, row.clone()).unwrap();
    let mut reader = db.txn.begin(Isolation::Snapshot).unwrap();
    let seen: Option<(_, NewOrder)> = db.lookup(&mut reader, IndexId::NewOrder, key).unwrap();
    assert!(seen.is_none(), "uncommitted insert visible");
    writer.abort();
    let seen: Option<(_, NewOrder)> = db.lookup(&mut reader, IndexId::NewOrder, key).unwrap();
    assert!(seen.is_none(), "aborted insert visible");
    reader.abort();

    let mut writer = db.txn.begin(Isolation::Snapshot).unwrap();
    let id = db.insert(&mut writer, row.clone()).unwrap();
    writer.commit().unwrap();
    let mut old = db.txn.begin(Isolation::Snapshot).unwrap();
    let mut deleter = db.txn.begin(Isolation::Snapshot).unwrap();
    deleter.delete(&db.new_order, id).unwrap();
    deleter.commit().unwrap();
    let seen: Option<(_, NewOrder)> = db.lookup(&mut old, IndexId::NewOrder, key).unwrap();
    assert_eq!(seen, Some((id, row)), "old snapshot must still see it");
    let mut new = db.txn.begin(Isolation::Snapshot).unwrap();
    let seen: Option<(_, NewOrder)> = db.lookup(&mut new, IndexId::NewOrder, key).unwrap();
    assert!(seen.is_none(), "deleted row visible");
}

fn customer(db: &MvccDatabase, c_id: u16) -> Customer {
    let mut txn = db.txn.begin(Isolation::Snapshot).unwrap();
    let key = CustomerKey {
        w_id: 1,
        d_id: 2,
        c_id,
    }
    .pack()
    .unwrap();
    db.lookup(&mut txn, IndexId::Customer, key)
        .unwrap()
        .unwrap()
        .1
}

fn warehouse_ytd(db: &MvccDatabase) -> i64 {
    let mut txn = db.txn.begin(Isolation::Snapshot).unwrap();
    db.warehouse_ytd(&mut txn, 1).unwrap()
}

fn district_ytd(db: &MvccDatabase) -> i64 {
    let mut txn = db.txn.begin(Isolation::Snapshot).unwrap();
    db.district_ytd(&mut txn, 1, 1).unwrap()
}

#[test]
fn payment_moves_the_amount_by_id_and_by_last_name() {
    let (db, _) = load_mvcc(&LoadConfig::new(1), &|_| {}).unwrap();
    let input = |customer| PaymentInput {
        w_id: 1,
        d_id: 1,
        c_w_id: 1,
        c_d_id: 2,
        customer,
        h_amount: 1_234,
    };
    let c_before = customer(&db, 7);
    let d_before = district_ytd(&db);
    let w_before = warehouse_ytd(&db);
    let done = mvcc::payment(&db, &input(CustomerSelector::Id(7)), 9).unwrap();
    let Outcome::Committed(TxnOutput::Payment {
        c_id, c_balance, ..
    }) = done.outcome
    else {
        panic!("not committed: {done:?}");
    };
    assert_eq!(c_id, 7);
    let c = customer(&db, 7);
    assert_eq!(c.c_balance, c_before.c_balance - 1_234);
    assert_eq!(c_balance, c.c_balance);
    assert_eq!(c.c_ytd_payment, c_before.c_ytd_payment + 1_234);
    assert_eq!(c.c_payment_cnt, c_before.c_payment_cnt + 1);
    assert_eq!(district_ytd(&db), d_before + 1_234);
    assert_eq!(warehouse_ytd(&db), w_before + 1_234);
    let mut txn = db.txn.begin(Isolation::Snapshot).unwrap();
    let mut found = 0;
    txn.scan(&db.history, |_, h: &History| {
        found += u32::from(h.h_date == 9 && h.h_c_id == 7 && h.h_amount == 1_234);
    });
    assert_eq!(found, 1);

    // c_ids 1..=1000 carry last name number c_id - 1 (clause 4.3.2.3).
    let done = mvcc::payment(&db, &input(CustomerSelector::LastName(5)), 9).unwrap();
    let Outcome::Committed(TxnOutput::Payment { c_id, .. }) = done.outcome else {
        panic!("not committed: {done:?}");
    };
    assert_eq!(&*customer(&db, c_id).c_last, last_name(5));
    assert_eq!(warehouse_ytd(&db), w_before + 2 * 1_234);
}

#[test]
fn order_status_finds_the_latest_order_and_stock_level_counts_its_items() {
    let (db, _) = load_mvcc(&LoadConfig::new(1), &|_| {}).unwrap();
    let done = mvcc::new_order(&db, &new_order_input(&[11, 22, 33]), 7).unwrap();
    let Outcome::Committed(TxnOutput::NewOrder { o_id, .. }) = done.outcome else {
        panic!("not committed: {done:?}");
    };
    let input = OrderStatusInput {
        w_id: 1,
        d_id: 1,
        customer: CustomerSelector::Id(42),
    };
    let done = mvcc::order_status(&db, &input).unwrap();
    let Outcome::Committed(TxnOutput::OrderStatus { c_id, order, .. }) = done.outcome else {
        panic!("not committed: {done:?}");
    };
    assert_eq!((c_id, order), (42, Some((o_id, None, 3))));

    let stock_level = |threshold| {
        let input = StockLevelInput {
            w_id: 1,
            d_id: 1,
            threshold,
        };
        match mvcc::stock_level(&db, &input).unwrap().outcome {
            Outcome::Committed(TxnOutput::StockLevel { low_stock }) => low_stock,
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(stock_level(0), 0);
    // Every quantity is below i32::MAX: the distinct items of the last 20 orders.
    let mut txn = db.txn.begin(Isolation::Snapshot).unwrap();
    let mut items = Vec::new();
    txn.scan(&db.order_line, |_, l: &OrderLine| {
        if l.ol_w_id == 1 && l.ol_d_id == 1 && l.ol_o_id + 20 > o_id {
            items.push(l.ol_i_id);
        }
    });
    items.sort_unstable();
    items.dedup();
    assert_eq!(stock_level(i32::MAX), items.len() as u32);
}

#[test]
fn delivery_takes_each_districts_oldest_new_order() {
    let (db, _) = load_mvcc(&LoadConfig::new(1), &|_| {}).unwrap();
    let input = DeliveryInput {
        w_id: 1,
        o_carrier_id: 4,
    };
    // The loader leaves orders 2101..=3000 of every district undelivered.
    let key = OrderKey {
        w_id: 1,
        d_id: 1,
        o_id: 2101,
    }
    .pack()
    .unwrap();
    let mut txn = db.txn.begin(Isolation::Snapshot).unwrap();
    let order: Order = db
        .lookup(&mut txn, IndexId::Orders, key)
        .unwrap()
        .unwrap()
        .1;
    txn.abort();
    let c_before = {
        let mut txn = db.txn.begin(Isolation::Snapshot).unwrap();
        let key = CustomerKey {
            w_id: 1,
            d_id: 1,
            c_id: order.o_c_id,
        };
        let c: Customer = db
            .lookup(&mut txn, IndexId::Customer, key.pack().unwrap())
            .unwrap()
            .unwrap()
            .1;
        c
    };
    for o_id in [2101, 2102] {
        let done = mvcc::delivery(&db, &input, 11).unwrap();
        assert_eq!(
            done.outcome,
            Outcome::Committed(TxnOutput::Delivery {
                delivered: [Some(o_id); 10]
            })
        );
    }
    let mut txn = db.txn.begin(Isolation::Snapshot).unwrap();
    let no: Option<(_, NewOrder)> = db.lookup(&mut txn, IndexId::NewOrder, key).unwrap();
    assert!(no.is_none());
    let delivered: Order = db
        .lookup(&mut txn, IndexId::Orders, key)
        .unwrap()
        .unwrap()
        .1;
    assert_eq!(delivered.o_carrier_id, Some(4));
    let mut amount = 0;
    txn.scan(&db.order_line, |_, l: &OrderLine| {
        if (l.ol_w_id, l.ol_d_id, l.ol_o_id) == (1, 1, 2101) {
            assert_eq!(l.ol_delivery_d, Some(11));
            amount += l.ol_amount;
        }
    });
    let key = CustomerKey {
        w_id: 1,
        d_id: 1,
        c_id: order.o_c_id,
    };
    let c: Customer = db
        .lookup(&mut txn, IndexId::Customer, key.pack().unwrap())
        .unwrap()
        .unwrap()
        .1;
    assert!(c.c_delivery_cnt > c_before.c_delivery_cnt);
    assert!(c.c_balance >= c_before.c_balance + amount);
}

/// Runs `per_terminal` generated inputs on each of `terminals` threads
/// (terminal t on warehouse t % W + 1); returns (committed New-Orders, retries).
fn run_terminals(db: &MvccDatabase, seed: u64, terminals: u16, per_terminal: usize) -> (u64, u64) {
    use maestro_tpcc::txn::InputGenerator;
    use maestro_tpcc::{NuRandConstants, TpccRng};
    let constants = NuRandConstants::for_load(&mut fastrand::Rng::with_seed(seed));
    let results: Vec<(u64, u64)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..terminals)
            .map(|t| {
                s.spawn(move || {
                    let w_id = t % db.warehouses() + 1;
                    let rng = TpccRng::new(seed ^ (u64::from(t + 1) * 0x9E37), constants);
                    let mut generator = InputGenerator::new(rng, db.warehouses(), w_id, 1);
                    let (mut new_orders, mut retries) = (0, 0);
                    for n in 0..per_terminal {
                        let now = n as u64;
                        let done = match generator.next_input() {
                            TxnInput::NewOrder(i) => mvcc::new_order(db, &i, now),
                            TxnInput::Payment(i) => mvcc::payment(db, &i, now),
                            TxnInput::OrderStatus(i) => mvcc::order_status(db, &i),
                            TxnInput::Delivery(i) => mvcc::delivery(db, &i, now),
                            TxnInput::StockLevel(i) => mvcc::stock_level(db, &i),
                        }
                        .unwrap();
                        retries += u64::from(done.retries);
                        if let Outcome::Committed(TxnOutput::NewOrder { .. }) = done.outcome {
                            new_orders += 1;
                        }
                    }
                    (new_orders, retries)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    results
        .into_iter()
        .fold((0, 0), |(a, b), (c, d)| (a + c, b + d))
}

fn seed() -> u64 {
    let seed = std::env::var("TPCC_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| fastrand::u64(..));
    println!("TPCC_SEED={seed}");
    seed
}

fn orders(db: &MvccDatabase) -> u64 {
    let mut txn = db.txn.begin(Isolation::Snapshot).unwrap();
    let mut n = 0;
    txn.scan(&db.orders, |_, _| n += 1);
    n
}

#[test]
fn concurrent_terminals_keep_the_consistency_conditions() {
    let seed = seed();
    let (db, report) = load_mvcc(&LoadConfig::new(1), &|_| {}).unwrap();
    assert!(db.check_consistency().unwrap().is_empty());
    let (new_orders, retries) = run_terminals(&db, seed, 4, 150);
    println!("committed New-Orders {new_orders}, retries {retries}");
    assert_eq!(orders(&db), report.counts.orders + new_orders);
    let violations = db.check_consistency().unwrap();
    assert!(violations.is_empty(), "seed {seed}: {violations:?}");
}

/// Payments of one warehouse on distinct customers only add to the YTD
/// counters, so none of them may conflict, whatever their interleaving.
#[test]
fn concurrent_payments_of_one_warehouse_never_conflict() {
    const THREADS: u16 = 4;
    const PAYMENTS: u16 = 300;
    let (db, _) = load_mvcc(&LoadConfig::new(1), &|_| {}).unwrap();
    let w_before = warehouse_ytd(&db);
    let retries: u32 = std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let db = &db;
                s.spawn(move || {
                    let mut retries = 0;
                    for i in 0..PAYMENTS {
                        let input = PaymentInput {
                            w_id: 1,
                            d_id: (i % 10) as u8 + 1,
                            c_w_id: 1,
                            c_d_id: (i % 10) as u8 + 1,
                            // Thread t owns customers t+1, t+1+THREADS, …
                            customer: CustomerSelector::Id(t + 1 + (i % 100) * THREADS),
                            h_amount: 100,
                        };
                        retries += mvcc::payment(db, &input, 9).unwrap().retries;
                    }
                    retries
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    assert_eq!(retries, 0, "payments on distinct customers conflicted");
    let total = i64::from(THREADS) * i64::from(PAYMENTS) * 100;
    assert_eq!(warehouse_ytd(&db), w_before + total);
    assert!(db.check_consistency().unwrap().is_empty());
}

/// Delivered new-order entries leave the index once no snapshot can see
/// them, and not before: an open snapshot keeps them.
#[test]
fn delivered_new_order_entries_leave_the_index_once_no_snapshot_needs_them() {
    let (db, _) = load_mvcc(&LoadConfig::new(1), &|_| {}).unwrap();
    let entries = || db.index.get(IndexId::NewOrder).len();
    let before = entries();
    let delivery = TxnInput::Delivery(DeliveryInput {
        w_id: 1,
        o_carrier_id: 3,
    });
    // An old snapshot pins the entries of the first Delivery.
    let old = db.txn.snapshot().unwrap();
    mvcc::execute(&db, &delivery, None).unwrap();
    assert_eq!(
        entries(),
        before,
        "removed while a snapshot could read them"
    );
    assert_eq!(db.index_entries_retired(), 10);
    drop(old);
    for _ in 0..4 {
        mvcc::execute(&db, &delivery, None).unwrap();
    }
    assert_eq!(entries(), before - 50, "5 Deliveries × 10 districts");
    assert_eq!(db.index_entries_retired(), 0);
    assert!(db.check_consistency().unwrap().is_empty());
}
