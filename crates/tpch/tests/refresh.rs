//! TPC-H's refresh functions as MVCC transactions: answers after refreshes
//! equal DuckDB's on the same refresh sets, snapshots stay consistent while
//! refreshes commit, concurrent refreshes both land, old versions are freed.

mod common;

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use maestro_tpch::queries::answers::{ANSWERS_SCALE_FACTOR, answer_sets, refreshed_answers_dir};
use maestro_tpch::{Database, RefreshError, RefreshFunction, SharedDatabase, refresh_count};

use common::{check_set_on, db, scheduler};

fn shared() -> SharedDatabase {
    SharedDatabase::new(db().clone()).expect("the catalog commits")
}

fn pair(shared: &SharedDatabase, n: u32) {
    for f in [RefreshFunction::Rf1, RefreshFunction::Rf2] {
        let r = shared.refresh(&scheduler(), f, n).expect("refresh commits");
        assert_eq!(r.number, n);
        assert_eq!(r.orders_changed, refresh_count(ANSWERS_SCALE_FACTOR));
        assert!(r.lineitem_changed >= r.orders_changed, "{r:?}");
    }
}

/// Keys of `table`'s `column`.
fn keys(table: &maestro_storage::column::Table, column: &str) -> Vec<i64> {
    table.i64(column).expect("key column").to_vec()
}

/// What every snapshot must show: each line item has its order, each order
/// at least one line item, no key twice in ORDERS.
fn check_integrity(db: &Database) -> Result<(), String> {
    let orders = keys(&db.orders, "o_orderkey");
    let order_set: HashSet<i64> = orders.iter().copied().collect();
    if order_set.len() != orders.len() {
        return Err(format!(
            "{} duplicate order keys",
            orders.len() - order_set.len()
        ));
    }
    let lines: HashSet<i64> = keys(&db.lineitem, "l_orderkey").into_iter().collect();
    if let Some(k) = lines.iter().find(|k| !order_set.contains(k)) {
        return Err(format!("line items of order {k}, which does not exist"));
    }
    if let Some(k) = order_set.iter().find(|k| !lines.contains(k)) {
        return Err(format!("order {k} has no line items"));
    }
    Ok(())
}

#[test]
fn answers_after_two_refresh_pairs_equal_duckdb() {
    let dir = refreshed_answers_dir(ANSWERS_SCALE_FACTOR, 2).expect("answers are committed");
    let shared = shared();
    pair(&shared, 1);
    pair(&shared, 2);
    let refreshed = shared.snapshot().unwrap();
    check_integrity(&refreshed).unwrap();
    let sets = answer_sets(&dir).unwrap();
    assert!(sets.len() >= 22 * 4, "{} sets", sets.len());
    let failures: Vec<String> = sets
        .iter()
        .filter_map(|set| check_set_on(&refreshed, set, "hint", &dir).err())
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The check can fail: the unrefreshed tables give other answers.
    let stale = sets
        .iter()
        .filter(|set| check_set_on(db(), set, "hint", &dir).is_err())
        .count();
    assert!(
        stale >= 10,
        "only {stale} answers change with the refreshes"
    );
}

#[test]
fn a_snapshot_keeps_its_tables_while_refreshes_commit() {
    let shared = shared();
    let before = shared.snapshot().unwrap();
    let orders_before = keys(&before.orders, "o_orderkey");
    shared
        .refresh(&scheduler(), RefreshFunction::Rf1, 1)
        .unwrap();
    let after_rf1 = shared.snapshot().unwrap();
    assert_eq!(keys(&before.orders, "o_orderkey"), orders_before);
    let added = refresh_count(ANSWERS_SCALE_FACTOR);
    assert_eq!(after_rf1.orders.num_rows(), orders_before.len() + added);
    let max_before = orders_before.iter().max().copied().unwrap();
    let new_keys = &keys(&after_rf1.orders, "o_orderkey")[orders_before.len()..];
    assert!(new_keys.iter().all(|&k| k > max_before), "{new_keys:?}");
    shared
        .refresh(&scheduler(), RefreshFunction::Rf2, 1)
        .unwrap();
    let after_rf2 = shared.snapshot().unwrap();
    assert_eq!(after_rf2.orders.num_rows(), orders_before.len());
    let deleted = maestro_tpch::rf2_keys(ANSWERS_SCALE_FACTOR, 1).unwrap();
    let remaining: HashSet<i64> = keys(&after_rf2.orders, "o_orderkey").into_iter().collect();
    assert!(deleted.iter().all(|k| !remaining.contains(k)));
    // Untouched tables are shared, not copied.
    assert!(Arc::ptr_eq(&before.part, &after_rf2.part));
    for db in [&before, &after_rf1, &after_rf2] {
        check_integrity(db).unwrap();
    }
}

#[test]
fn readers_see_whole_refreshes_only() {
    let shared = Arc::new(shared());
    let population = db().orders.num_rows();
    let count = refresh_count(ANSWERS_SCALE_FACTOR);
    let done = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..2)
        .map(|reader| {
            let (shared, done) = (Arc::clone(&shared), Arc::clone(&done));
            std::thread::spawn(move || {
                let mut seen = 0;
                while !done.load(Ordering::Acquire) || seen == 0 {
                    let snap = shared.snapshot().unwrap();
                    let orders = snap.orders.num_rows();
                    assert!(
                        orders == population || orders == population + count,
                        "reader {reader}, snapshot {seen}: {orders} orders"
                    );
                    if let Err(e) = check_integrity(&snap) {
                        panic!("reader {reader}, snapshot {seen}: {e}");
                    }
                    seen += 1;
                }
                seen
            })
        })
        .collect();
    for n in 1..=3 {
        pair(&shared, n);
    }
    done.store(true, Ordering::Release);
    for r in readers {
        assert!(r.join().expect("reader passes") > 0);
    }
}

#[test]
fn concurrent_refreshes_both_commit() {
    let shared = Arc::new(shared());
    let before = shared.snapshot().unwrap();
    let handles: Vec<_> = [RefreshFunction::Rf1, RefreshFunction::Rf2]
        .into_iter()
        .map(|f| {
            let shared = Arc::clone(&shared);
            std::thread::spawn(move || shared.refresh(&scheduler(), f, 1).unwrap())
        })
        .collect();
    let reports: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let after = shared.snapshot().unwrap();
    let (inserted, deleted) = (&reports[0], &reports[1]);
    assert_eq!(after.orders.num_rows(), before.orders.num_rows());
    assert_eq!(
        after.lineitem.num_rows(),
        before.lineitem.num_rows() + inserted.lineitem_changed - deleted.lineitem_changed
    );
    assert_ne!(inserted.commit_ts, deleted.commit_ts);
    check_integrity(&after).unwrap();
}

#[test]
fn old_versions_leave_the_catalog() {
    let shared = shared();
    for n in 1..=3 {
        pair(&shared, n);
    }
    // Nobody holds a snapshot: the catalog keeps one version per table
    // (each refresh's commit collects what the previous ones left).
    shared.txn().collect(usize::MAX);
    assert_eq!(shared.versions_stored(), 8);
}

#[test]
fn an_insert_set_applies_once() {
    let shared = shared();
    shared
        .refresh(&scheduler(), RefreshFunction::Rf1, 1)
        .unwrap();
    let err = shared
        .refresh(&scheduler(), RefreshFunction::Rf1, 1)
        .unwrap_err();
    assert!(
        matches!(err, RefreshError::AlreadyApplied { number: 1, .. }),
        "{err}"
    );
    // Nothing changed: still one copy of the set's orders.
    let orders = shared.snapshot().unwrap().orders.num_rows();
    assert_eq!(
        orders,
        db().orders.num_rows() + refresh_count(ANSWERS_SCALE_FACTOR)
    );
}

#[test]
fn refresh_sets_out_of_range_are_errors() {
    let shared = shared();
    for n in [0, maestro_tpch::REFRESH_SETS_MAX + 1] {
        let err = shared
            .refresh(&scheduler(), RefreshFunction::Rf2, n)
            .unwrap_err();
        assert_eq!(err, RefreshError::SetOutOfRange { number: n });
    }
}
