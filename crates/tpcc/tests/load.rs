//! The initial population: cardinalities and distributions of clause 4.3.3.1,
//! consistency right after the load, and each consistency check catching a
//! deliberately corrupted state.

use std::sync::atomic::{AtomicUsize, Ordering};

use maestro_tpcc::random::{ORIGINAL, parse_last_name};
use maestro_tpcc::*;

fn load_w(warehouses: u16, threads: usize) -> (Database, LoadReport) {
    let mut config = LoadConfig::new(warehouses);
    config.seed = 42;
    config.threads = threads;
    let events = AtomicUsize::new(0);
    let (db, report) = load(&config, &|_| {
        events.fetch_add(1, Ordering::Relaxed);
    })
    .unwrap();
    assert_eq!(events.into_inner(), usize::from(warehouses) + 1);
    eprintln!("W={warehouses}: {report:?}");
    (db, report)
}

fn assert_cardinalities(db: &Database, w: u64) {
    let c = db.counts();
    assert_eq!(
        (c.warehouse, c.district, c.item, c.stock),
        (w, 10 * w, 100_000, 100_000 * w)
    );
    assert_eq!(
        (c.customer, c.history, c.orders),
        (30_000 * w, 30_000 * w, 30_000 * w)
    );
    assert_eq!(c.new_order, 9_000 * w);
    assert!(
        (5 * c.orders..=15 * c.orders).contains(&c.order_line),
        "{c:?}"
    );
    let idx = &db.index;
    assert_eq!(idx.customer.len() as u64, c.customer);
    assert_eq!(idx.customer_name.len() as u64, c.customer);
    assert_eq!(idx.orders_by_customer.len() as u64, c.orders);
    assert_eq!(idx.order_line.len() as u64, c.order_line);
    assert_eq!(idx.stock.len() as u64, c.stock);
    assert_eq!(idx.new_order.len() as u64, c.new_order);
    let violations = check_consistency(db);
    assert!(violations.is_empty(), "{violations:?}");
}

#[test]
fn one_warehouse_matches_the_spec() {
    let (db, report) = load_w(1, 2);
    assert_cardinalities(&db, 1);
    assert_eq!(report.counts, db.counts());

    let pct = |n: usize, of: u64| n as f64 * 100.0 / of as f64;
    let mut originals = 0;
    db.item.scan(|_, i| {
        originals += usize::from(i.i_data.contains(ORIGINAL));
        assert!((100..=10_000).contains(&i.i_price) && (14..=24).contains(&i.i_name.len()));
    });
    assert!(
        (9.0..=11.0).contains(&pct(originals, 100_000)),
        "{originals}"
    );
    let (mut originals, mut bad_credit) = (0, 0);
    db.stock
        .scan(|_, s| originals += usize::from(s.s_data.contains(ORIGINAL)));
    assert!(
        (9.0..=11.0).contains(&pct(originals, 100_000)),
        "{originals}"
    );

    db.customer.scan(|_, c| {
        bad_credit += usize::from(&*c.c_credit == "BC");
        let name = parse_last_name(&c.c_last).unwrap();
        if c.c_id <= 1000 {
            assert_eq!(name, c.c_id - 1);
        }
        assert_eq!(
            (c.c_balance, c.c_credit_lim, &*c.c_middle),
            (-1000, 5_000_000, "OE")
        );
        assert!((300..=500).contains(&c.c_data.len()) && c.c_discount <= 5000);
    });
    assert!(
        (9.0..=11.0).contains(&pct(bad_credit, 30_000)),
        "{bad_credit}"
    );

    db.orders.scan(|_, o| {
        assert!((5..=15).contains(&o.o_ol_cnt));
        assert_eq!(o.o_carrier_id.is_none(), o.o_id >= FIRST_UNDELIVERED_O_ID);
        assert!(o.o_carrier_id.is_none_or(|c| (1..=10).contains(&c)));
    });
    db.order_line.scan(|_, ol| {
        let delivered = ol.ol_o_id < FIRST_UNDELIVERED_O_ID;
        assert_eq!(ol.ol_delivery_d.is_some(), delivered);
        assert_eq!(ol.ol_amount == 0, delivered, "{ol:?}");
        assert!((1..=999_999).contains(&ol.ol_amount) || delivered);
    });

    for d_id in 1..=10 {
        assert_eq!(db.oldest_new_order(1, d_id).unwrap().unwrap().0, 2101);
        // A permutation: every customer has exactly one order.
        for c_id in 1..=3000 {
            let (o_id, row) = db.latest_order(1, d_id, c_id).unwrap().unwrap();
            assert_eq!(db.orders.read(row).unwrap().o_id, o_id);
        }
        // The first 1000 customers give every name at least one customer.
        for name in [0, 500, 999] {
            assert!(!db.customers_by_last_name(1, d_id, name).unwrap().is_empty());
        }
    }
}

#[test]
fn two_warehouses_load_in_parallel_and_are_consistent() {
    let (db, report) = load_w(2, 4);
    assert_cardinalities(&db, 2);
    assert_eq!(report.threads, 3);
    let w2 = db.warehouse_row(2).unwrap().unwrap();
    assert_eq!(db.warehouse.read(w2).unwrap().w_ytd, 30_000_000);
}

#[test]
fn every_check_catches_its_corruption() {
    let (db, _) = load_w(1, 2);
    let only = |condition: u8| {
        let v = check_consistency(&db);
        assert!(
            !v.is_empty() && v.iter().all(|v| v.condition() == condition),
            "{v:?}"
        );
        v
    };

    let w = db.warehouse_row(1).unwrap().unwrap();
    db.warehouse.write(w).unwrap().w_ytd += 1;
    let v = only(1);
    let expected = Violation::WarehouseYtd {
        w_id: 1,
        w_ytd: Some(30_000_001),
        sum_d_ytd: 30_000_000,
    };
    assert_eq!(v, [expected]);
    db.warehouse.write(w).unwrap().w_ytd -= 1;

    let d = db.district_row(1, 4).unwrap().unwrap();
    db.district.write(d).unwrap().d_next_o_id += 1;
    assert_eq!(only(2).len(), 1);
    db.district.write(d).unwrap().d_next_o_id -= 1;

    // A hole in the middle of the queue breaks condition 3 only …
    let (_, no) = db.oldest_new_order(1, 5).unwrap().unwrap();
    let middle = db.new_order_row(1, 5, 2500).unwrap().unwrap();
    assert!(db.delete::<NewOrder>(middle).unwrap());
    let v = only(3);
    assert!(
        matches!(
            v[..],
            [Violation::NewOrderRange {
                new_orders: 899,
                ..
            }]
        ),
        "{v:?}"
    );
    db.undelete::<NewOrder>(middle).unwrap();
    // … losing the newest breaks condition 2; delivering the oldest breaks none.
    let newest = db.new_order_row(1, 5, 3000).unwrap().unwrap();
    db.delete::<NewOrder>(newest).unwrap();
    only(2);
    db.undelete::<NewOrder>(newest).unwrap();
    db.delete::<NewOrder>(no).unwrap();
    assert!(check_consistency(&db).is_empty());
    db.undelete::<NewOrder>(no).unwrap();

    let o = db.order_row(1, 7, 123).unwrap().unwrap();
    db.orders.write(o).unwrap().o_ol_cnt += 1;
    let v = only(4);
    assert!(
        matches!(
            v[..],
            [Violation::OrderLineCount {
                w_id: 1,
                d_id: 7,
                ..
            }]
        ),
        "{v:?}"
    );
    db.orders.write(o).unwrap().o_ol_cnt -= 1;

    assert!(check_consistency(&db).is_empty());
    assert!(v[0].to_string().starts_with("consistency condition 4"));
}
