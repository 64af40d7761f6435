//! The 22 queries as SQL text with any parameters
//! (`maestro_tpch::queries::sql_text`, the templates `generate.py` runs on
//! DuckDB) give the hand-written plans' answers on the SQL store: the
//! validation values and three random draws per query at SF 0.01, so a
//! parameter substituted into the wrong place (or not at all) shows.

mod common;

use common::{db, scheduler};
use maestro_execution::{Executor, Granularity};
use maestro_sql::{Output, Store};
use maestro_tpch::queries::{QueryParams, check, run_profiled, sql_text};

#[test]
fn sql_text_with_random_parameters_equals_the_hand_written_plans() {
    let exec = Executor::new(scheduler(), Granularity::Static).with_min_rows_per_task(1024);
    let store = Store::new();
    store.put_tpch(db()).unwrap();
    let mut t = store.begin().unwrap();
    let view = store.view(&mut t);
    let mut distinct_texts = 0;
    for q in 1..=22u8 {
        let mut sets = vec![QueryParams::validation(q, common::SCALE_FACTOR).unwrap()];
        for seed in [11, 22, 33] {
            sets.push(QueryParams::random(q, common::SCALE_FACTOR, seed).unwrap());
        }
        let mut texts = Vec::new();
        for p in &sets {
            let sql = sql_text(p).unwrap_or_else(|e| panic!("Q{q} {p}: {e}"));
            let got = match maestro_sql::execute(&exec, &view, &sql) {
                Ok(Output::Rows(rows)) => rows,
                Ok(Output::Explain(_)) => panic!("Q{q}: a plan, not rows"),
                Err(e) => panic!("Q{q} {p}: {e}\n{sql}"),
            };
            let (want, _) = run_profiled(&exec, db(), p).unwrap();
            check::parse_csv(&want.to_csv())
                .and_then(|want| check::compare(&got, &want))
                .unwrap_or_else(|m| panic!("Q{q} {p}: SQL text and plan differ: {}", m.0));
            texts.push(sql);
        }
        texts.sort();
        texts.dedup();
        distinct_texts += texts.len();
    }
    t.abort();
    // The draws differ from the validation values (else the test would
    // only repeat the validation check).
    assert!(distinct_texts > 22 * 3, "{distinct_texts} distinct texts");
}
