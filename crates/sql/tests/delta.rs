//! Main + delta: writes go into a table's delta without copying its main,
//! every statement reads main and delta together, and a merge — also while
//! writers commit — folds the delta into a new main without losing a write.

mod common;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use common::{autocommit, exec, scheduler};
use maestro_execution::{Executor, Granularity};
use maestro_sql::store::{MergeScope, merge_rows_min};
use maestro_sql::{ErrorKind, Output, Store};

/// The rows of `sql` on `store`'s current snapshot, each as text, sorted.
fn select(store: &Store, sql: &str) -> Vec<String> {
    let mut t = store.begin().unwrap();
    let view = store.view(&mut t);
    // 64-row tasks: the small tables split into several tasks per operator.
    let exec = Executor::new(scheduler(), Granularity::Static).with_min_rows_per_task(64);
    let out = maestro_sql::execute(&exec, &view, sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    t.abort();
    let Output::Rows(r) = out else {
        panic!("{sql}: expected rows")
    };
    let mut rows: Vec<String> = r.rows.iter().map(|row| format!("{row:?}")).collect();
    rows.sort();
    rows
}

/// The table's main and its delta's size.
fn parts(store: &Store, name: &str) -> (Arc<maestro_storage::column::Table>, usize) {
    let mut t = store.begin().unwrap();
    let view = store.view(&mut t);
    let (_, e) = view.entry(name).unwrap();
    let out = (Arc::clone(&e.data), e.live_delta().map_or(0, |d| d.size()));
    t.abort();
    out
}

fn insert_range(store: &Store, table: &str, from: i64, to: i64) {
    let values: Vec<String> = (from..to)
        .map(|k| format!("({k}, 'name{}', {}.25)", k % 7, k % 10))
        .collect();
    autocommit(
        store,
        &format!("insert into {table} values {}", values.join(", ")),
    );
}

/// The rows of `sql` in the order the statement returns them.
fn select_ordered(store: &Store, sql: &str) -> Vec<String> {
    let mut t = store.begin().unwrap();
    let view = store.view(&mut t);
    let exec = Executor::new(scheduler(), Granularity::Static).with_min_rows_per_task(64);
    let out = maestro_sql::execute(&exec, &view, sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    t.abort();
    let Output::Rows(r) = out else {
        panic!("{sql}: expected rows")
    };
    r.rows.iter().map(|row| format!("{row:?}")).collect()
}

#[test]
fn order_by_reads_sort_keys_through_live_rows_and_the_delta() {
    let store = Store::new();
    autocommit(
        &store,
        "create table t (k bigint, s varchar(20), v decimal(10,2))",
    );
    insert_range(&store, "t", 0, 200);
    store.merge_deltas(MergeScope::All).unwrap();
    let sql = "select k, s, v from t where k % 3 <> 1 order by s desc, v, k desc";
    // Expected: (s, v, k) of the rows kept, in the statement's order.
    let expect = |ks: &[i64]| -> Vec<String> {
        let mut rows: Vec<(String, i64, i64)> = ks
            .iter()
            .filter(|&&k| k % 3 != 1)
            .map(|&k| (format!("name{}", k % 7), (k % 10) * 100 + 25, k))
            .collect();
        rows.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then(b.2.cmp(&a.2)));
        rows.iter()
            .map(|(s, v, k)| format!("[Int({k}), Str({s:?}), Decimal {{ value: {v}, scale: 2 }}]"))
            .collect()
    };
    // Main only: the filter's row ids.
    let mut ks: Vec<i64> = (0..200).collect();
    assert_eq!(select_ordered(&store, sql), expect(&ks));
    // Deleted main rows, then appended rows (the columns' tails).
    autocommit(&store, "delete from t where k < 20");
    ks.retain(|&k| k >= 20);
    assert_eq!(select_ordered(&store, sql), expect(&ks));
    insert_range(&store, "t", 500, 530);
    ks.extend(500..530);
    assert_eq!(select_ordered(&store, sql), expect(&ks));
}

#[test]
fn writes_go_to_the_delta_and_every_statement_reads_both_parts() {
    let store = Store::new();
    autocommit(
        &store,
        "create table t (k bigint, s varchar(20), v decimal(10,2))",
    );
    insert_range(&store, "t", 0, 300);
    store.merge_deltas(MergeScope::All).unwrap();
    let (main, delta) = parts(&store, "t");
    assert_eq!((main.num_rows(), delta), (300, 0));

    // One row in, one main row and one delta row out, one row updated:
    // the main is the same allocation, the delta holds the writes.
    autocommit(
        &store,
        "insert into t values (1000, 'new', 9.50), (1001, 'new', 1.00)",
    );
    autocommit(&store, "delete from t where k = 5 or k = 1001");
    autocommit(&store, "update t set v = v + 100 where k = 7 or k = 1000");
    let (main_after, delta) = parts(&store, "t");
    assert!(Arc::ptr_eq(&main, &main_after), "a write copied the main");
    // 2 + 2 appended by the update, 4 deletion marks (5, 1001, 7, 1000).
    assert_eq!(delta, 4 + 4);

    let queries = [
        "select count(*), sum(v), min(k), max(k) from t",
        "select k, s, v from t where v > 50 order by k",
        "select s, count(*), sum(v) from t group by s",
        "select k from t where s like 'new%'",
        "select a.k, b.k from t a join t b on a.k = b.k + 993 where a.k >= 1000",
        "select count(*) from t where k in (5, 7, 1000, 1001)",
        // A filter fused into the aggregate above it, over main + delta
        // through the live rows' ids.
        "select s, count(*), sum(v) from t where k >= 6 group by s",
        // EXISTS and NOT EXISTS on one table read once (`lower/stacked.rs`)
        // over main + delta with deletions: reduced to a few outer keys
        // first, and (a larger outer side) not.
        "select a.k from t a where a.k in (7, 1000) \
         and exists (select * from t b where b.s = a.s and b.k <> a.k) \
         and not exists (select * from t c where c.s = a.s and c.k <> a.k and c.v > 100)",
        "select a.k from t a where a.k >= 100 \
         and exists (select * from t b where b.s = a.s and b.k <> a.k) \
         and not exists (select * from t c where c.s = a.s and c.k <> a.k and c.v > 100)",
        // A filtered scan probing a small side through its filter
        // (`lower/fused_join.rs`), which drops the deleted rows too.
        "select a.k, b.v from t a join t b on a.k = b.k \
         where a.k in (5, 7, 1000, 1001) and b.v >= 0",
        // An unfiltered scan of a table with deletions probing the same
        // way: its probe drops the deleted rows by position.
        "select a.k, b.v from t a join t b on a.k = b.k where a.k in (5, 7, 1000, 1001)",
    ];
    let before: Vec<Vec<String>> = queries.iter().map(|q| select(&store, q)).collect();
    // 1425.00 loaded, + 9.50 + 1.00 inserted, − 5.25 − 1.00 deleted,
    // + 2 × 100 updated.
    assert_eq!(
        before[0],
        vec!["[Int(300), Decimal { value: 162925, scale: 2 }, Int(0), Int(1000)]".to_string()]
    );
    assert_eq!(before[1].len(), 2, "{:?}", before[1]); // 7 and 1000
    assert_eq!(before[3].len(), 1);
    assert_eq!(before[4].len(), 1, "{:?}", before[4]); // 1000 = 7 + 993
    assert_eq!(before[5], vec!["[Int(2)]".to_string()]);
    // k 6..300 by k % 7, 7 with 100 added; 1000 ('new') at 109.50.
    let mut want: Vec<String> = (0..7)
        .map(|r| {
            let ks = (6..300).filter(|k| k % 7 == r);
            let n = ks.clone().count();
            let cents: i64 = ks
                .map(|k| (k % 10) * 100 + 25 + if k == 7 { 10000 } else { 0 })
                .sum();
            format!("[Str(\"name{r}\"), Int({n}), Decimal {{ value: {cents}, scale: 2 }}]")
        })
        .collect();
    want.push("[Str(\"new\"), Int(1), Decimal { value: 10950, scale: 2 }]".to_string());
    want.sort();
    assert_eq!(before[6], want);
    // 1000 has no other 'new' row (1001 is deleted); 7 is the only other
    // row over 100 with its name (name0), so it removes the other name0 rows.
    assert_eq!(before[7], vec!["[Int(7)]".to_string()]);
    let kept: Vec<i64> = (100..300).filter(|k| k % 7 != 0).collect();
    assert_eq!(before[8].len(), kept.len(), "{:?}", before[8]);
    assert_eq!(
        before[9],
        vec![
            "[Int(1000), Decimal { value: 10950, scale: 2 }]".to_string(),
            "[Int(7), Decimal { value: 10725, scale: 2 }]".to_string()
        ]
    );

    assert_eq!(before[10], before[9]);

    // A merge changes where rows live, not what statements see.
    let report = store.merge_deltas(MergeScope::All).unwrap();
    assert_eq!(report.merged, vec!["t".to_string()]);
    let (merged, delta) = parts(&store, "t");
    assert_eq!((merged.num_rows(), delta), (300, 0));
    // The optimizer's statistics of `k` (filtered and joined on above)
    // came with the merge, not with the next query.
    assert!(main.has_column_stats(0));
    assert!(merged.has_column_stats(0));
    let after: Vec<Vec<String>> = queries.iter().map(|q| select(&store, q)).collect();
    assert_eq!(before, after);
}

#[test]
fn a_write_past_the_bound_or_with_a_new_dictionary_string_merges_by_itself() {
    let store = Store::new();
    autocommit(
        &store,
        "create table t (k bigint, s varchar(20), v decimal(10,2))",
    );
    insert_range(&store, "t", 0, 100);
    let (main, delta) = parts(&store, "t");
    // A new table's first write goes to the delta of its empty main.
    assert_eq!((main.num_rows(), delta), (0, 100));
    assert!(delta < merge_rows_min(&main));

    // TPC-H's tables have dictionary columns (n_name): a string the
    // dictionary lacks makes the write merge (the dictionary grows, codes
    // stay sorted), one it has goes to the delta.
    store.put_tpch(common::db()).unwrap();
    let (nation, _) = parts(&store, "nation");
    autocommit(&store, "insert into nation values (25, 'ATLANTIS', 1, 'x')");
    let (grown, delta) = parts(&store, "nation");
    assert!(!Arc::ptr_eq(&nation, &grown) && delta == 0);
    assert_eq!(grown.num_rows(), 26);
    autocommit(&store, "insert into nation values (26, 'PERU', 2, 'y')");
    let (same, delta) = parts(&store, "nation");
    assert!(Arc::ptr_eq(&grown, &same) && delta == 1);
    assert_eq!(
        select(
            &store,
            "select n_nationkey from nation where n_name = 'PERU'"
        ),
        vec!["[Int(17)]".to_string(), "[Int(26)]".to_string()]
    );
    assert_eq!(
        select(&store, "select n_name from nation where n_nationkey >= 25"),
        vec![
            "[Str(\"ATLANTIS\")]".to_string(),
            "[Str(\"PERU\")]".to_string()
        ]
    );
}

/// Writers insert and delete rows of their own keys (retrying 40001) while
/// another thread merges again and again: every committed write survives
/// the merges, none comes back. Seed in the failure message.
#[test]
fn merges_while_writers_commit_lose_no_write() {
    let seed: u64 = std::env::var("MAESTRO_STRESS_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_de17a);
    let store = Arc::new(Store::new());
    autocommit(
        &store,
        "create table t (k bigint, s varchar(20), v decimal(10,2))",
    );
    let stop = Arc::new(AtomicBool::new(false));
    let merger = {
        let (store, stop) = (Arc::clone(&store), Arc::clone(&stop));
        std::thread::spawn(move || {
            let mut merged = 0;
            while !stop.load(Ordering::Relaxed) {
                merged += store.merge_deltas(MergeScope::All).unwrap().merged.len();
            }
            merged
        })
    };
    let writers: Vec<_> = (0..3u64)
        .map(|w| {
            let store = Arc::clone(&store);
            std::thread::spawn(move || {
                let mut rng = seed ^ (w + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
                let mut next = || {
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    rng
                };
                let mut live = BTreeSet::new();
                let mut conflicts = 0;
                for i in 0..120i64 {
                    let k = w as i64 * 1_000_000 + i;
                    let sql = if !live.is_empty() && next() % 3 == 0 {
                        let victim = *live.iter().nth((next() as usize) % live.len()).unwrap();
                        (format!("delete from t where k = {victim}"), Err(victim))
                    } else {
                        (format!("insert into t values ({k}, 'w{w}', {i})"), Ok(k))
                    };
                    loop {
                        let mut t = store.begin().unwrap();
                        let done = exec(&store, &mut t, &sql.0).and_then(|_| store.commit(t));
                        match done {
                            Ok(()) => break,
                            Err(e) if e.kind == ErrorKind::SerializationFailure => conflicts += 1,
                            Err(e) => panic!("seed {seed}: {}: {e}", sql.0),
                        }
                    }
                    match sql.1 {
                        Ok(k) => live.insert(k),
                        Err(k) => live.remove(&k),
                    };
                }
                (live, conflicts)
            })
        })
        .collect();
    let mut want = BTreeSet::new();
    for w in writers {
        let (live, _) = w.join().unwrap();
        want.extend(live);
    }
    stop.store(true, Ordering::Relaxed);
    let merges = merger.join().unwrap();
    let got: BTreeSet<i64> = select(&store, "select k from t")
        .iter()
        .map(|r| {
            r.trim_start_matches("[Int(")
                .trim_end_matches(")]")
                .parse()
                .unwrap()
        })
        .collect();
    assert_eq!(got, want, "seed {seed}: {merges} merges");
    store.merge_deltas(MergeScope::All).unwrap();
    assert_eq!(
        select(&store, "select count(*) from t"),
        vec![format!("[Int({})]", want.len())]
    );
}

/// `Entry::holds_nulls` (what binding asks for every nullable column of
/// every statement's tables) reads the main's part off its cached column
/// statistics and scans only the delta; it must agree with the masks the
/// readers build, in the main, in the delta, after deletes and merges.
#[test]
fn a_column_holds_nulls_in_the_main_or_the_delta_as_its_mask_says() {
    let store = Store::new();
    autocommit(&store, "create table t (k bigint not null, v bigint)");
    let check = |step: &str, expected: bool| {
        let mut t = store.begin().unwrap();
        let view = store.view(&mut t);
        let (_, e) = view.entry("t").unwrap();
        let holds = e.holds_nulls(1);
        let masked = e.null_masks()[1].is_some();
        // Asked again once the masks exist: from them.
        assert_eq!(e.holds_nulls(1), masked, "{step}: cached answer");
        assert!(!e.holds_nulls(0), "{step}: k is NOT NULL");
        t.abort();
        assert_eq!((holds, masked), (expected, expected), "{step}");
    };
    check("empty", false);
    autocommit(&store, "insert into t values (1, 10), (2, 20)");
    check("values in the delta", false);
    store.merge_deltas(MergeScope::All).unwrap();
    check("values in the main", false);
    autocommit(&store, "insert into t values (3, null)");
    check("a NULL in the delta", true);
    store.merge_deltas(MergeScope::All).unwrap();
    check("a NULL in the main", true);
    autocommit(&store, "insert into t values (4, 40)");
    check("a NULL in the main, values in the delta", true);
    // Deleted rows count until a merge drops them (the masks cover every
    // combined id).
    autocommit(&store, "delete from t where k = 3");
    check("the NULL row deleted", true);
    store.merge_deltas(MergeScope::All).unwrap();
    check("merged without it", false);
    autocommit(&store, "update t set v = null where k = 4");
    check("a NULL by an update", true);
}
