//! Each transaction alone, on hand-made rows (`common::small_database`) or a
//! loaded warehouse: its effects, its choice of customer by last name, and
//! New-Order's 1 % rollback leaving no trace.

mod common;

use common::*;
use maestro_tpcc::lock::LockManager;
use maestro_tpcc::txn::*;
use maestro_tpcc::*;

fn run(db: &Database, input: TxnInput) -> Executed {
    let locks = LockManager::new();
    let done = execute(db, &locks, &mut TxnState::default(), &input).unwrap();
    assert_eq!(done.deadlock_aborts, 0, "alone, nothing conflicts");
    assert_eq!(locks.locks_in_use(), 0, "every lock released");
    done
}

fn committed(done: Executed) -> TxnOutput {
    match done.outcome {
        Outcome::Committed(out) => out,
        Outcome::RolledBack => panic!("rolled back"),
    }
}

fn customer_row(db: &Database, c_id: u16) -> Customer {
    let row = db.customer_row(1, 1, c_id).unwrap().unwrap();
    db.customer.read(row).unwrap().clone()
}

#[test]
fn payment_by_last_name_takes_the_middle_customer_by_first_name() {
    let db = small_database();
    // Customers named 5: c_id 1 "Zed" and c_id 3 "Bob"; by c_first: Bob, Zed;
    // position ⌈2/2⌉ = 1 is Bob.
    let input = TxnInput::Payment(PaymentInput {
        w_id: 1,
        d_id: 1,
        c_w_id: 1,
        c_d_id: 1,
        customer: CustomerSelector::LastName(5),
        h_amount: 12_345,
    });
    let before = customer_row(&db, 3);
    let out = committed(run(&db, input));
    assert_eq!(
        out,
        TxnOutput::Payment {
            c_id: 3,
            c_balance: before.c_balance - 12_345,
            bad_credit: false
        }
    );
    let after = customer_row(&db, 3);
    assert_eq!(after.c_ytd_payment, before.c_ytd_payment + 12_345);
    assert_eq!(after.c_payment_cnt, before.c_payment_cnt + 1);
    assert_eq!(after.c_data, before.c_data);
    assert_eq!(db.warehouse.read(0).unwrap().w_ytd, 300 + 12_345);
    assert_eq!(db.district.read(0).unwrap().d_ytd, 300 + 12_345);
    assert_eq!(db.history.live(), 2);
    assert!(check_consistency(&db).is_empty());
}

#[test]
fn payment_with_bad_credit_prepends_to_c_data() {
    let db = small_database();
    let row = db.customer_row(1, 1, 2).unwrap().unwrap();
    db.customer.write(row).unwrap().c_credit = "BC".into();
    let old = customer_row(&db, 2).c_data;
    let input = TxnInput::Payment(PaymentInput {
        w_id: 1,
        d_id: 1,
        c_w_id: 1,
        c_d_id: 1,
        customer: CustomerSelector::Id(2),
        h_amount: 500,
    });
    let out = committed(run(&db, input));
    assert!(matches!(
        out,
        TxnOutput::Payment {
            bad_credit: true,
            ..
        }
    ));
    assert_eq!(
        &*customer_row(&db, 2).c_data,
        format!("2 1 1 1 1 5.00 {old}")
    );
}

#[test]
fn order_status_delivery_and_stock_level_on_a_small_database() {
    let db = small_database();
    let status = TxnInput::OrderStatus(OrderStatusInput {
        w_id: 1,
        d_id: 1,
        customer: CustomerSelector::Id(1),
    });
    let out = committed(run(&db, status.clone()));
    assert_eq!(
        out,
        TxnOutput::OrderStatus {
            c_id: 1,
            c_balance: -1000,
            order: Some((3, None, 2))
        }
    );

    let delivery = TxnInput::Delivery(DeliveryInput {
        w_id: 1,
        o_carrier_id: 7,
    });
    let mut delivered = [None; 10];
    delivered[0] = Some(2);
    assert_eq!(
        committed(run(&db, delivery)),
        TxnOutput::Delivery { delivered }
    );
    assert!(db.new_order_row(1, 1, 2).unwrap().is_none());
    let order = db
        .orders
        .read(db.order_row(1, 1, 2).unwrap().unwrap())
        .unwrap()
        .clone();
    assert_eq!(order.o_carrier_id, Some(7));
    let mut lines = 0;
    db.order_lines(1, 1, 2..=2, |_, _, row| {
        assert!(db.order_line.read(row).unwrap().ol_delivery_d.is_some());
        lines += 1;
        true
    })
    .unwrap();
    assert_eq!(lines, 2);
    let c = customer_row(&db, 1);
    assert_eq!((c.c_balance, c.c_delivery_cnt), (-1000 + 2 * 1999, 1));

    for (threshold, low) in [(51, 1), (50, 0)] {
        let input = TxnInput::StockLevel(StockLevelInput {
            w_id: 1,
            d_id: 1,
            threshold,
        });
        assert_eq!(
            committed(run(&db, input)),
            TxnOutput::StockLevel { low_stock: low }
        );
    }
    assert!(check_consistency(&db).is_empty());
}

/// Everything a New-Order may touch in district (1, 1) for these items.
fn snapshot(
    db: &Database,
    items: &[u32],
) -> (District, Vec<Stock>, TableCounts, Option<(u32, RowId)>) {
    let district = db
        .district
        .read(db.district_row(1, 1).unwrap().unwrap())
        .unwrap()
        .clone();
    let stock = items
        .iter()
        .filter_map(|&i| db.stock_row(1, i).unwrap())
        .map(|row| db.stock.read(row).unwrap().clone())
        .collect();
    (
        district,
        stock,
        db.counts(),
        db.latest_order(1, 1, 42).unwrap(),
    )
}

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

#[test]
fn new_order_rollback_leaves_no_trace_and_commit_does() {
    let (db, _) = load(&LoadConfig::new(1), &|_| {}).unwrap();
    let items = [11, 22, 33, 44, txn::UNUSED_ITEM_ID];
    let before = snapshot(&db, &items);
    let done = run(&db, TxnInput::NewOrder(new_order_input(&items)));
    assert_eq!(done.outcome, Outcome::RolledBack);
    assert_eq!(snapshot(&db, &items), before, "the rollback left a trace");
    let o_id = before.0.d_next_o_id;
    assert!(db.order_row(1, 1, o_id).unwrap().is_none());
    assert!(db.new_order_row(1, 1, o_id).unwrap().is_none());
    db.order_lines(1, 1, o_id..=o_id, |_, _, _| {
        panic!("order line of a rolled-back order")
    })
    .unwrap();
    assert!(check_consistency(&db).is_empty());

    // The same order without the unused item commits, with the same o_id.
    let valid = &items[..4];
    let out = committed(run(&db, TxnInput::NewOrder(new_order_input(valid))));
    let TxnOutput::NewOrder {
        o_id: got, ol_cnt, ..
    } = out
    else {
        panic!("{out:?}");
    };
    assert_eq!((got, ol_cnt), (o_id, 4));
    let (district, stock, counts, latest) = snapshot(&db, valid);
    assert_eq!(district.d_next_o_id, o_id + 1);
    assert_eq!(latest.map(|l| l.0), Some(o_id));
    assert_eq!(counts.orders, before.2.orders + 1);
    assert_eq!(counts.new_order, before.2.new_order + 1);
    assert_eq!(counts.order_line, before.2.order_line + 4);
    for (s, old) in stock.iter().zip(&before.1) {
        let expected = if old.s_quantity >= 15 {
            old.s_quantity - 5
        } else {
            old.s_quantity + 86
        };
        assert_eq!(
            (s.s_quantity, s.s_ytd, s.s_order_cnt),
            (expected, old.s_ytd + 5, old.s_order_cnt + 1)
        );
    }
    assert!(check_consistency(&db).is_empty());
}

#[test]
fn generated_inputs_follow_the_mix_and_the_clauses() {
    let seed = seed();
    let constants = NuRandConstants::for_load(&mut fastrand::Rng::with_seed(seed));
    let mut inputs = InputGenerator::new(TpccRng::new(seed, constants), 3, 2, 4);
    let mut kinds = [0u32; 5];
    let (mut rollbacks, mut remote_lines, mut lines) = (0, 0, 0);
    for _ in 0..20_000 {
        let input = inputs.next_input();
        kinds[input.kind().index()] += 1;
        match input {
            TxnInput::NewOrder(n) => {
                assert!((5..=15).contains(&n.ol_cnt) && n.w_id == 2);
                rollbacks += u32::from(n.lines().last().unwrap().i_id == txn::UNUSED_ITEM_ID);
                lines += n.lines().len();
                remote_lines += n.lines().iter().filter(|l| l.supply_w_id != 2).count();
            }
            TxnInput::Payment(p) => assert!((100..=500_000).contains(&p.h_amount)),
            TxnInput::StockLevel(s) => assert!((10..=20).contains(&s.threshold) && s.d_id == 4),
            _ => {}
        }
    }
    // Loose bounds (many standard deviations): a check of shape, not of luck.
    assert!(
        (8_000..10_000).contains(&kinds[0]) && (7_600..9_600).contains(&kinds[1]),
        "{kinds:?}"
    );
    assert!(
        kinds[2..].iter().all(|&k| (500..1_150).contains(&k)),
        "{kinds:?}"
    );
    assert!((20..200).contains(&rollbacks), "{rollbacks}");
    assert!(
        remote_lines > 0 && remote_lines < lines / 50,
        "{remote_lines} of {lines}"
    );
}

#[test]
fn a_new_order_cancelled_while_it_waits_for_a_stock_lock_leaves_no_trace() {
    use maestro_scheduler::{CancelReason, CancelToken, Cancelled};
    use maestro_tpcc::lock::{LockMode, LockName};

    let (db, _) = load(&LoadConfig::new(1), &|_| {}).unwrap();
    let items = [11, 22, 33, 44];
    let before = snapshot(&db, &items);
    let locks = LockManager::new();
    // Another transaction holds item 33's stock: New-Order takes the
    // district, inserts its order and new-order rows, updates stock 11 and
    // 22's locks… and waits at 33, mid-transaction.
    let holder = locks.begin();
    let stock_33 = LockName::stock(1, 33).unwrap();
    locks
        .acquire(holder, stock_33, LockMode::Exclusive)
        .unwrap();
    let token = CancelToken::new();
    let got = std::thread::scope(|s| {
        let t = s.spawn(|| {
            let input = TxnInput::NewOrder(new_order_input(&items));
            execute_cancellable(&db, &locks, &mut TxnState::default(), &input, &token)
        });
        // Event, not time: it is queued on the stock lock.
        while locks.waiting_requests() == 0 {
            std::thread::yield_now();
        }
        token.cancel();
        t.join().unwrap()
    });
    match got {
        Err(TpccError::Cancelled(Cancelled {
            reason: CancelReason::Cancelled,
        })) => {}
        other => panic!("expected a cancelled transaction, got {other:?}"),
    }
    assert_eq!(snapshot(&db, &items), before, "the cancel left a trace");
    assert_eq!(locks.locks_in_use(), 1, "only the holder's lock remains");
    assert_eq!(locks.waiting_requests(), 0);
    assert!(locks.release(holder, stock_33));
    assert!(check_consistency(&db).is_empty());
    // The same order commits afterwards.
    let out = committed(run(&db, TxnInput::NewOrder(new_order_input(&items))));
    assert!(matches!(out, TxnOutput::NewOrder { .. }), "{out:?}");
}
