//! Invariants that catch lost updates: table totals before and after a run
//! must differ by exactly what the committed transactions did, and orders
//! must be whole.

use std::collections::HashMap;

use maestro_tpcc::driver::Audit;
use maestro_tpcc::*;

/// Sums over the tables, from row scans.
#[derive(Debug, Default, Clone, Copy)]
pub struct Totals {
    w_ytd: Money,
    d_ytd: Money,
    d_next_o_id: u64,
    c_balance: Money,
    c_ytd_payment: Money,
    c_payment_cnt: u64,
    c_delivery_cnt: u64,
    history: u64,
    orders: u64,
    delivered_orders: u64,
    new_orders: u64,
    order_lines: u64,
    /// Sum of `ol_amount` over delivered lines: what Deliveries charged.
    delivered_amount: Money,
    s_ytd: u64,
    s_order_cnt: u64,
}

pub fn totals(db: &Database) -> Totals {
    let mut t = Totals::default();
    db.warehouse.scan(|_, w| t.w_ytd += w.w_ytd);
    db.district.scan(|_, d| {
        t.d_ytd += d.d_ytd;
        t.d_next_o_id += u64::from(d.d_next_o_id);
    });
    db.customer.scan(|_, c| {
        t.c_balance += c.c_balance;
        t.c_ytd_payment += c.c_ytd_payment;
        t.c_payment_cnt += u64::from(c.c_payment_cnt);
        t.c_delivery_cnt += u64::from(c.c_delivery_cnt);
    });
    t.history = db.history.live();
    db.orders.scan(|_, o| {
        t.orders += 1;
        t.delivered_orders += u64::from(o.o_carrier_id.is_some());
    });
    t.new_orders = db.new_order.live();
    db.order_line.scan(|_, ol| {
        t.order_lines += 1;
        if ol.ol_delivery_d.is_some() {
            t.delivered_amount += ol.ol_amount;
        }
    });
    db.stock.scan(|_, s| {
        t.s_ytd += u64::from(s.s_ytd);
        t.s_order_cnt += u64::from(s.s_order_cnt);
    });
    t
}

/// Orders are whole: every new-order row has an undelivered order, every
/// order has exactly `o_ol_cnt` lines, delivered exactly when it is.
pub fn check_orders(db: &Database, seed: u64) {
    db.new_order.scan(|_, no| {
        let row = db.order_row(no.no_w_id, no.no_d_id, no.no_o_id).unwrap();
        let order = row.and_then(|r| db.orders.read(r));
        assert!(
            order.is_some_and(|o| o.o_carrier_id.is_none()),
            "seed {seed}: {no:?} without an undelivered order"
        );
    });
    let mut lines: HashMap<(u16, u8, u32), (u8, u8)> = HashMap::new();
    db.order_line.scan(|_, ol| {
        let e = lines
            .entry((ol.ol_w_id, ol.ol_d_id, ol.ol_o_id))
            .or_default();
        e.0 += 1;
        e.1 += u8::from(ol.ol_delivery_d.is_some());
    });
    db.orders.scan(|_, o| {
        let (n, delivered) = lines
            .remove(&(o.o_w_id, o.o_d_id, o.o_id))
            .unwrap_or_default();
        assert_eq!(n, o.o_ol_cnt, "seed {seed}: order {o:?} has {n} lines");
        let expected = if o.o_carrier_id.is_some() { n } else { 0 };
        assert_eq!(
            delivered, expected,
            "seed {seed}: order {o:?} partly delivered"
        );
    });
    assert!(
        lines.is_empty(),
        "seed {seed}: order lines without an order: {lines:?}"
    );
}

/// The data moved by exactly what the committed transactions did.
pub fn check_audit(before: &Totals, after: &Totals, a: &Audit, seed: u64) {
    let pay = a.payment_amount;
    let charged = after.delivered_amount - before.delivered_amount;
    let checks: [(&str, i128, i128); 14] = [
        (
            "sum(w_ytd)",
            (after.w_ytd - before.w_ytd).into(),
            pay.into(),
        ),
        (
            "sum(d_ytd)",
            (after.d_ytd - before.d_ytd).into(),
            pay.into(),
        ),
        (
            "sum(c_ytd_payment)",
            (after.c_ytd_payment - before.c_ytd_payment).into(),
            pay.into(),
        ),
        (
            "sum(c_payment_cnt)",
            (after.c_payment_cnt - before.c_payment_cnt).into(),
            a.payments.into(),
        ),
        (
            "history rows",
            (after.history - before.history).into(),
            a.payments.into(),
        ),
        (
            "sum(c_balance)",
            (after.c_balance - before.c_balance).into(),
            (charged - pay).into(),
        ),
        (
            "sum(d_next_o_id)",
            (after.d_next_o_id - before.d_next_o_id).into(),
            a.new_orders.into(),
        ),
        (
            "orders",
            (after.orders - before.orders).into(),
            a.new_orders.into(),
        ),
        (
            "order lines",
            (after.order_lines - before.order_lines).into(),
            a.order_lines.into(),
        ),
        (
            "sum(s_ytd)",
            (after.s_ytd - before.s_ytd).into(),
            a.ordered_quantity.into(),
        ),
        (
            "sum(s_order_cnt)",
            (after.s_order_cnt - before.s_order_cnt).into(),
            a.order_lines.into(),
        ),
        (
            "delivered orders",
            (after.delivered_orders - before.delivered_orders).into(),
            a.delivered_orders.into(),
        ),
        (
            "sum(c_delivery_cnt)",
            (after.c_delivery_cnt - before.c_delivery_cnt).into(),
            a.delivered_orders.into(),
        ),
        (
            "new-order rows",
            i128::from(after.new_orders) - i128::from(before.new_orders),
            i128::from(a.new_orders) - i128::from(a.delivered_orders),
        ),
    ];
    for (what, moved, expected) in checks {
        assert_eq!(
            moved, expected,
            "seed {seed}: {what} moved by {moved}, committed transactions say {expected}"
        );
    }
}
