//! TPC-C on maestro-txn (`--cc mvcc`): the MVCC database holds what the 2PL
//! loader generated, and its indexes find exactly the visible rows.

use maestro_tpcc::keys::{DistrictKey, OrderKey, WarehouseKey};
use maestro_tpcc::mvcc::{MvccDatabase, load_mvcc};
use maestro_tpcc::{District, IndexId, LoadConfig, NewOrder, Warehouse, load};
use maestro_txn::{DatabaseConfig, Isolation};

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
