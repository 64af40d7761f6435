//! Inserts, lookups, deletes and limits of `Database` on a small hand-made state.

mod common;

use common::*;
use maestro_tpcc::*;

#[test]
fn lookups_find_the_rows_they_name() {
    let db = small_database();
    assert!(check_consistency(&db).is_empty());
    let w = db.warehouse_row(1).unwrap().unwrap();
    assert_eq!(db.warehouse.read(w).unwrap().w_ytd, 300);
    assert_eq!(db.warehouse_row(2).unwrap(), None);
    let d = db.district_row(1, 1).unwrap().unwrap();
    assert_eq!(db.district.read(d).unwrap().d_next_o_id, 4);
    let c = db.customer_row(1, 1, 2).unwrap().unwrap();
    assert_eq!(&*db.customer.read(c).unwrap().c_first, "Amy");
    let named: Vec<u16> = db
        .customers_by_last_name(1, 1, 5)
        .unwrap()
        .into_iter()
        .map(|(c_id, row)| {
            assert_eq!(db.customer.read(row).unwrap().c_id, c_id);
            c_id
        })
        .collect();
    assert_eq!(named, [1, 3]);
    assert!(db.customers_by_last_name(1, 1, 7).unwrap().is_empty());
    let (o_id, row) = db.latest_order(1, 1, 1).unwrap().unwrap();
    assert_eq!((o_id, db.orders.read(row).unwrap().o_id), (3, 3));
    assert_eq!(db.latest_order(1, 1, 2).unwrap(), None);
    assert_eq!(db.oldest_new_order(1, 1).unwrap().map(|e| e.0), Some(2));
    let mut lines = vec![];
    db.order_lines(1, 1, 2..=3, |o, ol, row| {
        assert_eq!(db.order_line.read(row).unwrap().ol_number, ol);
        lines.push((o, ol));
        true
    })
    .unwrap();
    assert_eq!(lines, [(2, 1), (2, 2), (3, 1), (3, 2)]);
    assert!(db.item_row(7).unwrap().is_some() && db.stock_row(1, 7).unwrap().is_some());
    assert_eq!(db.order_row(1, 1, 3).unwrap(), Some(row));
    assert_eq!(db.counts().total(), 1 + 1 + 3 + 1 + 2 + 3 + 6 + 1 + 1);
}

#[test]
fn delivery_style_delete_and_its_undo() {
    let db = small_database();
    let (o_id, row) = db.oldest_new_order(1, 1).unwrap().unwrap();
    assert!(db.delete::<NewOrder>(row).unwrap());
    assert!(!db.delete::<NewOrder>(row).unwrap());
    assert_eq!(
        db.oldest_new_order(1, 1).unwrap().map(|e| e.0),
        Some(o_id + 1)
    );
    assert_eq!(db.counts().new_order, 1);
    assert!(db.new_order.read(row).is_none());
    assert!(db.undelete::<NewOrder>(row).unwrap());
    assert_eq!(db.oldest_new_order(1, 1).unwrap(), Some((o_id, row)));
    // Undoing an insert removes both index entries of an order.
    let extra = db.insert(order(1, 1, 9, 2, 0)).unwrap();
    assert_eq!(db.latest_order(1, 1, 2).unwrap(), Some((9, extra)));
    assert!(db.delete::<Order>(extra).unwrap());
    assert_eq!(db.latest_order(1, 1, 2).unwrap(), None);
    assert_eq!(db.order_row(1, 1, 9).unwrap(), None);
}

#[test]
fn duplicates_and_limits_are_errors_not_panics() {
    let db = small_database();
    let before = db.customer_row(1, 1, 1).unwrap();
    let err = db.insert(customer(1, 1, 1, 9, "Dup")).unwrap_err();
    assert!(
        matches!(
            err,
            TpccError::DuplicateKey {
                table: "customer",
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(db.customer_row(1, 1, 1).unwrap(), before);
    assert!(db.customers_by_last_name(1, 1, 9).unwrap().is_empty());
    assert_eq!(db.counts().customer, 3);

    let err = db.insert(customer(1, 1, 5000, 1, "Big")).unwrap_err();
    assert!(matches!(
        err,
        TpccError::KeyOutOfRange {
            field: "c_id",
            value: 5000,
            ..
        }
    ));
    let mut odd = customer(1, 1, 10, 1, "Odd");
    odd.c_last = "SMITH".into();
    assert!(matches!(db.insert(odd), Err(TpccError::InvalidRow { .. })));
    assert!(db.customer_row(1, 1, 4096).is_err());
    assert!(db.district_row(1, 16).is_err());
    assert!(db.order_lines(1, 99, 1..=2, |_, _, _| true).is_err());
    assert_eq!(db.counts().customer, 3);
    assert!(Database::new(0).is_err());
}
