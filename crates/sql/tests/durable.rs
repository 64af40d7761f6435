//! The store on a data directory: what committed survives a restart
//! (recovered from the checkpoint and the log), what rolled back does not,
//! and a statement logs the rows it changes, not its table.

mod common;

use std::path::{Path, PathBuf};

use common::{autocommit, exec};
use maestro_sql::store::{FoldPolicy, OpenError, Opened};
use maestro_sql::{Catalog, Store, Written};
use maestro_txn::{Durability, DurabilityConfig};

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("maestro-sql-durable-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn open(dir: &Path) -> (Store, Opened) {
    Store::open_data_dir(dir, DurabilityConfig::new(Durability::Sync), &|_| Ok(()))
        .unwrap_or_else(|e| panic!("open {}: {e}", dir.display()))
}

/// Every table's name, schema and rows (in stored order).
fn dump(store: &Store) -> Vec<String> {
    let mut t = store.begin().unwrap();
    let view = store.view(&mut t);
    let mut out = Vec::new();
    for name in view.table_names() {
        let def = view.table(&name).unwrap();
        out.push(format!("table {name}: {:?}", def.unique_columns));
        let data = view.materialized(&name).unwrap();
        out.push(format!("{:?}", data.schema().fields()));
        for r in 0..data.num_rows() {
            out.push(format!("{:?}", data.row(r)));
        }
    }
    t.abort();
    out
}

fn recovered(opened: &Opened) -> (usize, u64) {
    match opened {
        Opened::Recovered { tables, rows, .. } => (*tables, *rows),
        Opened::Created(_) => panic!("created, not recovered"),
    }
}

/// Removes data directory `d` and the files written beside it.
fn remove(d: &Path) {
    std::fs::remove_dir_all(d).unwrap();
    let prefix = format!("{}-", d.file_name().unwrap().to_string_lossy());
    for file in std::fs::read_dir(d.parent().unwrap()).unwrap().flatten() {
        if file.file_name().to_string_lossy().starts_with(&prefix) {
            let _ = std::fs::remove_file(file.path());
        }
    }
}

/// A file beside the data directory (COPY's input).
fn write_file(dir: &Path, name: &str, text: &str) -> String {
    let path = PathBuf::from(format!("{}-{name}", dir.display()));
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
fn committed_writes_survive_a_restart_and_a_rollback_does_not() {
    let d = dir("survive");
    let (store, opened) = open(&d);
    assert!(matches!(opened, Opened::Created(_)));
    autocommit(
        &store,
        "create table item (id integer primary key, name varchar(20), price decimal(10,2), \
         since date, n bigint)",
    );
    autocommit(
        &store,
        "insert into item values (1, 'apple', 1.50, '2024-01-31', 10), \
         (2, 'pear', 2.25, '1999-12-31', 20), (3, 'plum', 0.99, '2000-02-29', 30)",
    );
    let csv = write_file(
        &d,
        "items.csv",
        "4,kiwi,3.10,2020-05-05,40\n5,fig,7.00,2021-06-06,50\n",
    );
    assert_eq!(
        autocommit(&store, &format!("copy item from '{csv}' (format csv)")),
        Written::Copy(2)
    );
    autocommit(
        &store,
        "update item set price = price * 2, name = 'big kiwi' where id >= 4",
    );
    autocommit(&store, "delete from item where id = 2");
    autocommit(&store, "create table gone (a integer)");
    autocommit(&store, "insert into gone values (1)");
    autocommit(&store, "drop table gone");
    autocommit(
        &store,
        "create table copy_of as select id, name from item where id < 4",
    );
    // Two statements in one transaction, committed together.
    let mut t = store.begin().unwrap();
    exec(
        &store,
        &mut t,
        "insert into item values (6, 'lime', 0.10, '2026-11-26', 60)",
    )
    .unwrap();
    exec(&store, &mut t, "delete from copy_of where id = 1").unwrap();
    // A second change of the same table in the block, one of its rows the
    // block's own (the commit logs each change's positions as computed at
    // its statement when nothing committed since the snapshot).
    exec(
        &store,
        &mut t,
        "update item set n = n + 1 where id in (2, 6)",
    )
    .unwrap();
    store.commit(t).unwrap();
    // Rolled back: must not survive.
    let mut t = store.begin().unwrap();
    exec(
        &store,
        &mut t,
        "insert into item values (7, 'nope', 0, '2026-01-01', 0)",
    )
    .unwrap();
    exec(&store, &mut t, "create table nope (a integer)").unwrap();
    exec(&store, &mut t, "drop table copy_of").unwrap();
    t.abort();
    let before = dump(&store);
    assert!(before.iter().any(|l| l.contains("big kiwi")), "{before:#?}");
    assert!(!before.iter().any(|l| l.contains("nope")));
    drop(store);

    let (store, opened) = open(&d);
    assert_eq!(recovered(&opened), (2, 5 + 1));
    assert_eq!(dump(&store), before);
    // The recovered store takes writes and recovers again.
    autocommit(&store, "insert into copy_of values (9, 'nine')");
    let again = dump(&store);
    drop(store);
    let (store, _) = open(&d);
    assert_eq!(dump(&store), again);
    drop(store);
    remove(&d);
}

#[test]
fn checkpoints_while_writing_fold_changes_and_recover() {
    let d = dir("checkpoint");
    let (store, _) = open(&d);
    autocommit(&store, "create table t (a bigint, s text)");
    for i in 0..10 {
        autocommit(&store, &format!("insert into t values ({i}, 'v{i}')"));
    }
    autocommit(&store, "update t set s = 'odd' where a in (1, 3, 5, 7, 9)");
    assert_eq!(store.changes_pending(), 11);
    // Few small changes of a small table: the threshold folds them (they
    // touch more than a quarter of its rows).
    let (fold, _) = store.checkpoint(FoldPolicy::Threshold).unwrap();
    assert_eq!((fold.tables, fold.changes_removed), (1, 11));
    assert_eq!(store.changes_pending(), 0);
    autocommit(&store, "delete from t where a < 3");
    // A writer open across a checkpoint commits after it.
    let mut open_txn = store.begin().unwrap();
    exec(&store, &mut open_txn, "insert into t values (100, 'late')").unwrap();
    let (fold, _) = store.checkpoint(FoldPolicy::All).unwrap();
    assert_eq!(fold.changes_removed, 1);
    store.commit(open_txn).unwrap();
    autocommit(&store, "insert into t values (101, 'after')");
    let before = dump(&store);
    drop(store);
    let (store, opened) = open(&d);
    assert_eq!(recovered(&opened), (1, 9));
    assert_eq!(dump(&store), before);
    drop(store);
    remove(&d);
}

#[test]
fn one_row_into_a_big_table_logs_one_row() {
    let d = dir("volume");
    let (store, _) = open(&d);
    autocommit(
        &store,
        "create table big (id bigint, name text, amount decimal(12,2))",
    );
    let rows = 100_000;
    let text: String = (0..rows)
        .map(|i| format!("{i},name number {i},{}.{:02}\n", i * 3, i % 100))
        .collect();
    let csv = write_file(&d, "big.csv", &text);
    autocommit(&store, &format!("copy big from '{csv}' (format csv)"));
    let stats = || store.log_stats().expect("a log").bytes;
    let before = stats();
    autocommit(&store, "insert into big values (-1, 'one more', 1.00)");
    let one = stats() - before;
    let before = stats();
    autocommit(&store, "update big set amount = 0 where id = 5");
    let update = stats() - before;
    let before = stats();
    autocommit(&store, "delete from big where id = 7");
    let delete = stats() - before;
    // The table is ~2.5 MB encoded; each statement logs a few hundred bytes.
    for (what, bytes) in [("insert", one), ("update", update), ("delete", delete)] {
        assert!(bytes < 1024, "{what} of one row logged {bytes} bytes");
    }
    assert!(text.len() > 1_000_000);
    drop(store);
    let (store, opened) = open(&d);
    assert_eq!(recovered(&opened), (1, rows + 1 - 1));
    drop(store);
    remove(&d);
}

#[test]
fn a_damaged_checkpoint_is_an_error_naming_it() {
    let d = dir("damaged");
    let (store, _) = open(&d);
    autocommit(&store, "create table t (a integer)");
    autocommit(&store, "insert into t values (1), (2)");
    let (_, report) = store.checkpoint(FoldPolicy::All).unwrap();
    drop(store);
    let mut bytes = std::fs::read(&report.path).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0x55;
    std::fs::write(&report.path, bytes).unwrap();
    let e = Store::open_data_dir(&d, DurabilityConfig::new(Durability::Sync), &|_| Ok(()))
        .map(|_| ())
        .unwrap_err();
    assert!(matches!(e, OpenError::Durable(_)), "{e:?}");
    let name = report.path.file_name().unwrap().to_str().unwrap();
    assert!(e.to_string().contains(name), "{e}");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn the_first_start_checkpoints_what_initial_puts() {
    let d = dir("initial");
    let (store, opened) =
        Store::open_data_dir(&d, DurabilityConfig::new(Durability::Sync), &|s: &Store| {
            let mut t = s.begin()?;
            exec(s, &mut t, "create table seed (a integer)")?;
            exec(s, &mut t, "insert into seed values (42)")?;
            s.commit(t)
        })
        .unwrap();
    assert!(matches!(opened, Opened::Created(_)));
    let before = dump(&store);
    drop(store);
    let (store, opened) = open(&d);
    assert_eq!(recovered(&opened), (1, 1));
    assert_eq!(dump(&store), before);
    drop(store);
    remove(&d);
}

#[test]
fn without_a_log_only_the_first_checkpoint_survives() {
    let d = dir("off");
    let off = || DurabilityConfig::new(Durability::Off);
    let (store, _) = Store::open_data_dir(&d, off(), &|_| Ok(())).unwrap();
    autocommit(&store, "create table t (a integer)");
    autocommit(&store, "insert into t values (1)");
    assert!(store.log_stats().is_none());
    let e = store.checkpoint(FoldPolicy::All).map(|_| ()).unwrap_err();
    assert!(e.to_string().contains("needs a log"), "{e}");
    drop(store);
    let (store, opened) = Store::open_data_dir(&d, off(), &|_| Ok(())).unwrap();
    assert_eq!(recovered(&opened), (0, 0));
    assert!(dump(&store).is_empty());
    drop(store);
    remove(&d);
}

#[test]
fn loaded_tpch_tables_survive_and_a_reload_replaces_them() {
    let d = dir("tpch");
    let (store, _) = open(&d);
    // `CALL maestro.load_tpch` commits this (dictionary string columns).
    store.put_tpch(common::db()).unwrap();
    autocommit(&store, "delete from nation where n_nationkey > 20");
    let before = dump(&store);
    drop(store);
    let (store, opened) = open(&d);
    assert_eq!(recovered(&opened).0, 8);
    assert_eq!(dump(&store), before);
    // A reload replaces the tables, their bases and changes.
    store.put_tpch(common::db()).unwrap();
    let reloaded = dump(&store);
    assert_ne!(reloaded, before);
    drop(store);
    let (store, _) = open(&d);
    assert_eq!(dump(&store), reloaded);
    drop(store);
    remove(&d);
}

/// TPC-H's refresh functions on a durable store: RF1's rows and RF2's
/// deletions are logged like any write and come back after a restart, in
/// the order a merge would lay them out.
#[test]
fn refreshes_into_the_deltas_survive_a_restart() {
    let d = dir("refresh");
    let scheduler = std::sync::Arc::new(
        maestro_scheduler::Scheduler::new(maestro_scheduler::SchedulerConfig::single_hints())
            .unwrap(),
    );
    let db = maestro_tpch::load(&scheduler, 0.01, &|_| {}).unwrap();
    let before = {
        let (store, _) = open(&d);
        store.put_tpch(&db).unwrap();
        store
            .tpch_rf1(
                &maestro_tpch::rf1_rows(0.01, 1).unwrap(),
                maestro_sql::store::RefreshReaders::Sql,
            )
            .unwrap();
        store
            .tpch_rf2(
                &maestro_tpch::rf2_keys(0.01, 1).unwrap(),
                maestro_sql::store::RefreshReaders::Sql,
            )
            .unwrap();
        dump(&store)
    };
    let (store, opened) = open(&d);
    assert_eq!(recovered(&opened).0, 8);
    assert_eq!(dump(&store), before);
    let _ = std::fs::remove_dir_all(&d);
}

/// EXPLAIN of `sql` on `store`'s current snapshot.
fn explain(store: &Store, sql: &str) -> String {
    let mut t = store.begin().unwrap();
    let view = store.view(&mut t);
    let (plan, _) = maestro_sql::plan(&view, sql).unwrap();
    t.abort();
    plan.explain()
}

#[test]
fn index_declarations_survive_a_restart() {
    let d = dir("index");
    let (store, _) = open(&d);
    autocommit(&store, "create table t (k bigint, s varchar(10))");
    let values: Vec<String> = (0..1000)
        .map(|k| format!("({k}, 's{}')", k % 300))
        .collect();
    autocommit(
        &store,
        &format!("insert into t values {}", values.join(", ")),
    );
    store
        .merge_deltas(maestro_sql::store::MergeScope::All)
        .unwrap();
    autocommit(&store, "create index t_k on t (k)");
    autocommit(&store, "create index t_s on t (s)");
    autocommit(&store, "drop index t_s");
    // Rolled back: must not survive.
    let mut t = store.begin().unwrap();
    exec(&store, &mut t, "create index nope on t (s)").unwrap();
    t.abort();
    let point = "select s from t where k = 42";
    assert!(explain(&store, point).contains("Index Scan t using t_k (t.k = 42)"));
    drop(store);

    let (store, _) = open(&d);
    let plan = explain(&store, point);
    assert!(plan.contains("Index Scan t using t_k (t.k = 42)"), "{plan}");
    let by_s = explain(&store, "select k from t where s = 's1'");
    assert!(!by_s.contains("Index Scan"), "{by_s}");
    // Recovery built the declared index (no query pays for it).
    let mut t = store.begin().unwrap();
    let view = store.view(&mut t);
    assert!(view.data("t").unwrap().has_sorted_index(0));
    assert!(!view.data("t").unwrap().has_sorted_index(1));
    t.abort();
    // And the name is taken again after the restart.
    let mut t = store.begin().unwrap();
    let e = exec(&store, &mut t, "create index t_k on t (s)").unwrap_err();
    assert_eq!(e.kind, maestro_sql::ErrorKind::DuplicateTable);
    t.abort();
    // A checkpoint writes the catalog row, declarations included.
    store.checkpoint(FoldPolicy::All).unwrap();
    drop(store);
    let (store, _) = open(&d);
    assert!(explain(&store, point).contains("Index Scan t using t_k"));
    drop(store);
    remove(&d);
}

#[test]
fn declared_keys_survive_a_restart() {
    let d = dir("keys");
    let (store, _) = open(&d);
    autocommit(
        &store,
        "create table stock (w int, i int, qty int, tag varchar(4) unique, primary key (w, i))",
    );
    autocommit(
        &store,
        "insert into stock values (1, 1, 10, 'a'), (1, 2, 20, 'b'), (2, 1, 30, 'c')",
    );
    // NULLs: two in the unique column (distinct), one in another.
    autocommit(
        &store,
        "insert into stock values (3, 1, null, null), (3, 2, 5, null)",
    );
    // A key made by a unique index.
    autocommit(&store, "create unique index stock_qty on stock (qty)");
    drop(store);

    let (store, _) = open(&d);
    for sql in [
        "insert into stock values (1, 2, 99, 'z')",
        "insert into stock values (3, 3, 99, 'b')",
        "insert into stock values (5, 5, 10, 'y')",
    ] {
        let mut t = store.begin().unwrap();
        let e = exec(&store, &mut t, sql).expect_err(sql);
        t.abort();
        assert_eq!(
            e.kind,
            maestro_sql::ErrorKind::UniqueViolation,
            "{sql}: {e}"
        );
    }
    autocommit(
        &store,
        "insert into stock values (2, 2, 40, 'd'), (4, 4, 1, null)",
    );
    let mut t = store.begin().unwrap();
    let view = store.view(&mut t);
    let def = view.table("stock").unwrap();
    let exec = maestro_execution::Executor::new(
        common::scheduler(),
        maestro_execution::Granularity::Static,
    );
    let out = maestro_sql::execute(
        &exec,
        &view,
        "select count(*), count(qty), count(tag) from stock",
    )
    .unwrap();
    t.abort();
    let maestro_sql::Output::Rows(r) = out else {
        panic!("rows")
    };
    assert_eq!(format!("{:?}", r.rows), "[[Int(7), Int(6), Int(4)]]");
    // The unique column holds NULLs now: no key for the planner (the
    // store still enforces it on the values).
    assert!(def.unique_columns.is_empty(), "{:?}", def.unique_columns);
    assert_eq!(def.keys, [vec!["w".to_string(), "i".to_string()]]);
    // The unique index still knows the key is its own: dropping it after
    // the restart drops the key.
    autocommit(&store, "drop index stock_qty");
    autocommit(&store, "insert into stock values (5, 5, 10, 'y')");
    drop(store);
    remove(&d);
}
