//! TPC-H's refresh functions on the SQL store's main + delta: after two
//! RF1/RF2 pairs the store holds exactly the rows the copy-on-write refresh
//! of `maestro_tpch::SharedDatabase` builds (whose answers the TPC-H crate
//! checks against DuckDB's), and the 22 TPC-H statements give the same
//! answers on both — with the writes still in the deltas and after a merge.
//! The hand-written plans read the same store (`Store::tpch_database`) and
//! give DuckDB's answers after the same refreshes.

mod common;

use common::{db, scheduler};
use maestro_execution::{Executor, Granularity};
use maestro_sql::store::{MergeScope, RefreshReaders};
use maestro_sql::{Catalog, Output, Store, TpchCatalog};
use maestro_tpch::queries::answers::{answer_sets, refreshed_answers_dir};
use maestro_tpch::queries::{check, run_profiled};
use maestro_tpch::{RefreshFunction, SharedDatabase, refresh_count, rf1_rows, rf2_keys};

const SF: f64 = common::SCALE_FACTOR;

fn answer(catalog: &dyn Catalog, sql: &str) -> Vec<String> {
    let exec = Executor::new(scheduler(), Granularity::Static).with_min_rows_per_task(1024);
    match maestro_sql::execute(&exec, catalog, sql).unwrap_or_else(|e| panic!("{sql}: {e}")) {
        Output::Rows(r) => r.rows.iter().map(|row| format!("{row:?}")).collect(),
        Output::Explain(_) => panic!("expected rows"),
    }
}

fn statements() -> Vec<(String, String)> {
    (1..=22)
        .map(|q| {
            let file = format!(
                "{}/tests/queries/tpch_q{q:02}.sql",
                env!("CARGO_MANIFEST_DIR")
            );
            (
                file.clone(),
                std::fs::read_to_string(&file).expect("statement file"),
            )
        })
        .collect()
}

#[test]
fn refreshes_into_the_deltas_equal_the_copy_on_write_refresh() {
    let store = Store::new();
    store.put_tpch(db()).unwrap();
    let shared = SharedDatabase::new(db().clone()).unwrap();
    for n in 1..=2 {
        let rows = rf1_rows(SF, n).unwrap();
        let r = store.tpch_rf1(&rows, RefreshReaders::Sql).unwrap();
        assert_eq!(r.orders_changed, refresh_count(SF));
        assert!(
            store.tpch_rf1(&rows, RefreshReaders::Sql).is_err(),
            "a set applies once"
        );
        let r2 = store
            .tpch_rf2(&rf2_keys(SF, n).unwrap(), RefreshReaders::Sql)
            .unwrap();
        assert_eq!(r2.orders_changed, refresh_count(SF));
        assert!(r2.lineitem_changed >= r2.orders_changed);
        for f in [RefreshFunction::Rf1, RefreshFunction::Rf2] {
            shared.refresh(&scheduler(), f, n).unwrap();
        }
    }
    let reference = shared.snapshot().unwrap();
    let reference = TpchCatalog::new(&reference);
    let mut t = store.begin().unwrap();
    let view = store.view(&mut t);
    // The writes are in the deltas (nothing merged them: no server here).
    for table in ["orders", "lineitem"] {
        assert!(view.delta(table).is_some(), "{table} has no delta");
        let rows = view.materialized(table).unwrap();
        let want = reference.data(table).unwrap();
        assert_eq!(rows.num_rows(), want.num_rows(), "{table}");
        for r in (0..want.num_rows()).step_by(97) {
            assert_eq!(rows.row(r), want.row(r), "{table} row {r}");
        }
    }
    let queries = statements();
    for (file, sql) in &queries {
        assert_eq!(
            answer(&view, sql),
            answer(&reference, sql),
            "{file}, with deltas"
        );
    }
    t.abort();
    store.merge_deltas(MergeScope::All).unwrap();
    let mut t = store.begin().unwrap();
    let view = store.view(&mut t);
    assert!(view.delta("lineitem").is_none());
    for (file, sql) in &queries {
        assert_eq!(
            answer(&view, sql),
            answer(&reference, sql),
            "{file}, merged"
        );
    }
    t.abort();
}

/// Every committed parameter set's answer of the hand-written plans on
/// `db` against DuckDB's after two refresh pairs; the failures.
fn plan_failures(db: &maestro_tpch::Database) -> Vec<String> {
    let dir = refreshed_answers_dir(SF, 2).expect("refreshed answers are committed");
    let sets = answer_sets(&dir).unwrap();
    assert!(sets.len() >= 22 * 4, "{} sets", sets.len());
    let exec = Executor::new(scheduler(), Granularity::Hint).with_min_rows_per_task(1024);
    sets.iter()
        .filter_map(|set| {
            let params = set.query_params(SF).unwrap();
            let expected = set.answer(&dir).unwrap();
            let outcome = run_profiled(&exec, db, &params)
                .map_err(|e| e.to_string())
                .and_then(|(r, _)| check::compare(&r, &expected).map_err(|e| e.to_string()));
            outcome
                .err()
                .map(|e| format!("Q{} {}: {e}", set.query, set.set))
        })
        .collect()
}

#[test]
fn hand_written_plans_on_the_store_give_duckdbs_answers_after_refreshes() {
    let store = Store::new();
    store.put_tpch(db()).unwrap();
    // Before any write the plans read the loaded tables themselves.
    let loaded = store.tpch_database(SF).unwrap();
    assert!(std::sync::Arc::ptr_eq(&loaded.lineitem, &db().lineitem));
    for n in 1..=2 {
        // Set 1 for SQL readers (deltas only), set 2 for the plans (plain
        // tables built before the commit): the plans read both alike.
        let readers = [RefreshReaders::Sql, RefreshReaders::Plans][n as usize - 1];
        store.tpch_rf1(&rf1_rows(SF, n).unwrap(), readers).unwrap();
        store.tpch_rf2(&rf2_keys(SF, n).unwrap(), readers).unwrap();
    }
    // The writes are in the deltas: a version's plain table is built once
    // and shared by its readers.
    let with_deltas = store.tpch_database(SF).unwrap();
    let again = store.tpch_database(SF).unwrap();
    assert!(std::sync::Arc::ptr_eq(
        &with_deltas.lineitem,
        &again.lineitem
    ));
    assert!(
        std::sync::Arc::ptr_eq(&with_deltas.part, &db().part),
        "unwritten: the main"
    );
    let failures = plan_failures(&with_deltas);
    assert!(failures.is_empty(), "with deltas:\n{}", failures.join("\n"));
    // The check can fail: the loaded tables give other answers.
    assert!(plan_failures(&loaded).len() >= 10);
    // A merge swaps in the plain table the readers built.
    let report = store.merge_deltas(MergeScope::All).unwrap();
    assert_eq!(report.merged.len(), 2, "{report:?}");
    let merged = store.tpch_database(SF).unwrap();
    assert!(std::sync::Arc::ptr_eq(
        &merged.lineitem,
        &with_deltas.lineitem
    ));
    assert!(std::sync::Arc::ptr_eq(&merged.orders, &with_deltas.orders));
}

#[test]
fn hand_written_plans_refuse_a_table_whose_columns_changed() {
    let store = Store::new();
    store.put_tpch(db()).unwrap();
    common::autocommit(&store, "ALTER TABLE nation ADD COLUMN n_extra INTEGER");
    let e = store.tpch_database(SF).unwrap_err();
    assert!(e.message.contains("nation"), "{e}");
}
