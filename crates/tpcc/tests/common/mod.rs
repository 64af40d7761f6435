//! Hand-made rows for tests that need a small database rather than a full load.

#![allow(dead_code)] // each test binary uses a different subset

pub mod audit;

use maestro_tpcc::random::last_name;
use maestro_tpcc::*;

/// The seed of a randomized test: `TPCC_SEED` if set, else a fresh one,
/// printed so that a failure can be replayed.
pub fn seed() -> u64 {
    let seed = std::env::var("TPCC_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| fastrand::u64(..));
    eprintln!("seed {seed} (replay with TPCC_SEED={seed})");
    seed
}

pub fn warehouse(w_id: u16, w_ytd: Money) -> Warehouse {
    Warehouse {
        w_id,
        w_name: format!("W{w_id}").into(),
        w_street_1: "1 Main St".into(),
        w_street_2: "Suite, 5".into(),
        w_city: "Springfield".into(),
        w_state: "CA".into(),
        w_zip: "123411111".into(),
        w_tax: 1250,
        w_ytd,
    }
}

pub fn district(w_id: u16, d_id: u8, d_ytd: Money, d_next_o_id: u32) -> District {
    District {
        d_id,
        d_w_id: w_id,
        d_name: format!("D{d_id}").into(),
        d_street_1: "2 Elm St".into(),
        d_street_2: "".into(),
        d_city: "Shelbyville".into(),
        d_state: "NV".into(),
        d_zip: "987611111".into(),
        d_tax: 5,
        d_ytd,
        d_next_o_id,
    }
}

pub fn customer(w_id: u16, d_id: u8, c_id: u16, name: u16, c_first: &str) -> Customer {
    Customer {
        c_id,
        c_d_id: d_id,
        c_w_id: w_id,
        c_first: c_first.into(),
        c_middle: "OE".into(),
        c_last: last_name(name).into(),
        c_street_1: "s1".into(),
        c_street_2: "s2".into(),
        c_city: "c".into(),
        c_state: "ST".into(),
        c_zip: "000011111".into(),
        c_phone: "0123456789012345".into(),
        c_since: 1_700_000_000,
        c_credit: "GC".into(),
        c_credit_lim: 5_000_000,
        c_discount: 1234,
        c_balance: -1000,
        c_ytd_payment: 1000,
        c_payment_cnt: 1,
        c_delivery_cnt: 0,
        c_data: "said \"hi\", then left".into(),
    }
}

pub fn order(w_id: u16, d_id: u8, o_id: u32, c_id: u16, o_ol_cnt: u8) -> Order {
    Order {
        o_id,
        o_d_id: d_id,
        o_w_id: w_id,
        o_c_id: c_id,
        o_entry_d: 1_700_000_000,
        o_carrier_id: None,
        o_ol_cnt,
        o_all_local: 1,
    }
}

pub fn order_line(w_id: u16, d_id: u8, o_id: u32, ol_number: u8) -> OrderLine {
    OrderLine {
        ol_o_id: o_id,
        ol_d_id: d_id,
        ol_w_id: w_id,
        ol_number,
        ol_i_id: 7,
        ol_supply_w_id: w_id,
        ol_delivery_d: None,
        ol_quantity: 5,
        ol_amount: 1999,
        ol_dist_info: [b'x'; 24],
    }
}

pub fn new_order(w_id: u16, d_id: u8, o_id: u32) -> NewOrder {
    NewOrder {
        no_o_id: o_id,
        no_d_id: d_id,
        no_w_id: w_id,
    }
}

/// One warehouse, one district with orders 1..=3 (2 and 3 undelivered), two
/// lines each, two customers named 5 and one named 6: consistent.
pub fn small_database() -> Database {
    let db = Database::new(1).unwrap();
    db.insert(warehouse(1, 300)).unwrap();
    db.insert(district(1, 1, 300, 4)).unwrap();
    for (c_id, name, first) in [(1, 5, "Zed"), (2, 6, "Amy"), (3, 5, "Bob")] {
        db.insert(customer(1, 1, c_id, name, first)).unwrap();
    }
    db.insert(History {
        h_c_id: 1,
        h_c_d_id: 1,
        h_c_w_id: 1,
        h_d_id: 1,
        h_w_id: 1,
        h_date: 1_700_000_000,
        h_amount: 1000,
        h_data: "h".into(),
    })
    .unwrap();
    for o_id in 1..=3 {
        db.insert(order(1, 1, o_id, 1, 2)).unwrap();
        for ol in 1..=2 {
            db.insert(order_line(1, 1, o_id, ol)).unwrap();
        }
        if o_id >= 2 {
            db.insert(new_order(1, 1, o_id)).unwrap();
        }
    }
    db.insert(Item {
        i_id: 7,
        i_im_id: 1,
        i_name: "item".into(),
        i_price: 100,
        i_data: "ORIGINAL".into(),
    })
    .unwrap();
    db.insert(Stock {
        s_i_id: 7,
        s_w_id: 1,
        s_quantity: 50,
        s_dist: std::sync::Arc::new(std::array::from_fn(|d| [b'a' + d as u8; 24])),
        s_ytd: 0,
        s_order_cnt: 0,
        s_remote_cnt: 0,
        s_data: "data".into(),
    })
    .unwrap();
    db
}
