//! Snapshot isolation on the SQL store's main + delta, seeded and replayable
//! (`MAESTRO_STRESS_SEED`): writers move money between accounts in
//! transaction blocks (two UPDATEs, an INSERT into a log and an UPDATE of a
//! per-writer count, retried whole on 40001 and 40P01 — two transfers in
//! opposite directions wait for each other's rows), as REPEATABLE READ
//! blocks or as READ COMMITTED ones (each statement on a fresh snapshot,
//! run again after meeting a row a finished writer changed: no increment
//! may be lost), readers check inside each of their snapshots that
//! - the balances sum to what was loaded (no partial transfer is seen),
//! - the log's rows equal the counts' sum (a transaction's writes to two
//!   tables appear together),
//! - a second read of the balances in the same transaction gives the same
//!   sum (repeatable read),
//!
//! while another thread merges the deltas again and again. Afterwards every
//! committed transfer is in the log, and the balances match the log.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use common::{autocommit, exec, scheduler};
use maestro_execution::{Executor, Granularity};
use maestro_sql::store::MergeScope;
use maestro_sql::{ErrorKind, Output, Rerun, Store};
use maestro_tpch::queries::Value;

const ACCOUNTS: i64 = 24;
const BALANCE_START: i64 = 1000;
const WRITERS: u64 = 3;
const TRANSFERS_PER_WRITER: i64 = 60;

/// The integers of `sql`'s single row, read in `t`.
fn ints(store: &Store, t: &mut maestro_txn::Transaction, sql: &str) -> Vec<i64> {
    let view = store.view(t);
    let exec = Executor::new(scheduler(), Granularity::Static).with_min_rows_per_task(8);
    let out = maestro_sql::execute(&exec, &view, sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    let Output::Rows(r) = out else {
        panic!("{sql}: expected rows")
    };
    assert_eq!(r.rows.len(), 1, "{sql}: {:?}", r.rows);
    r.rows[0]
        .iter()
        .map(|v| match v {
            Value::Int(i) => *i,
            Value::Decimal { value, scale: 0 } => i64::try_from(*value).expect("fits"),
            other => panic!("{sql}: not an integer: {other:?}"),
        })
        .collect()
}

fn xorshift(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

/// How the writers' blocks are isolated.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Level {
    RepeatableRead,
    ReadCommitted,
}

/// Runs of one READ COMMITTED statement before the test gives up (the
/// server's bound).
const STATEMENT_RUNS_MAX: u32 = 100;

#[test]
fn readers_never_see_a_partial_transfer_while_writers_commit_and_deltas_merge() {
    transfers(Level::RepeatableRead);
}

#[test]
fn read_committed_transfers_lose_no_update_while_deltas_merge() {
    transfers(Level::ReadCommitted);
}

/// Statement `sql` of `t`, as a block at `level` runs it.
fn statement(
    store: &Store,
    t: &mut maestro_txn::Transaction,
    level: Level,
    sql: &str,
) -> Result<(), maestro_sql::SqlError> {
    let mut runs = 1;
    loop {
        if level == Level::ReadCommitted {
            store.refresh_snapshot(t)?;
        }
        match exec(store, t, sql) {
            Err(e) if e.rerun == Rerun::OnFreshSnapshot && level == Level::ReadCommitted => {
                assert!(runs < STATEMENT_RUNS_MAX, "{sql}: run {runs} times: {e}");
                runs += 1;
            }
            other => return other.map(|_| ()),
        }
    }
}

fn transfers(level: Level) {
    let seed: u64 = std::env::var("MAESTRO_STRESS_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0xba4c_5eed);
    let store = Arc::new(Store::new());
    autocommit(&store, "create table accounts (id bigint, balance bigint)");
    autocommit(
        &store,
        "create table log (w bigint, i bigint, amount bigint)",
    );
    autocommit(&store, "create table counts (w bigint, n bigint)");
    let rows: Vec<String> = (0..ACCOUNTS)
        .map(|id| format!("({id}, {BALANCE_START})"))
        .collect();
    autocommit(
        &store,
        &format!("insert into accounts values {}", rows.join(", ")),
    );
    let counts: Vec<String> = (0..WRITERS).map(|w| format!("({w}, 0)")).collect();
    autocommit(
        &store,
        &format!("insert into counts values {}", counts.join(", ")),
    );
    let total = ACCOUNTS * BALANCE_START;

    let writing = Arc::new(AtomicBool::new(true));
    let merger = {
        let (store, writing) = (Arc::clone(&store), Arc::clone(&writing));
        std::thread::spawn(move || {
            let mut merged = 0;
            while writing.load(Ordering::Relaxed) {
                merged += store.merge_deltas(MergeScope::All).unwrap().merged.len();
            }
            merged
        })
    };
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let (store, writing) = (Arc::clone(&store), Arc::clone(&writing));
            std::thread::spawn(move || {
                let mut snapshots = 0u64;
                while writing.load(Ordering::Relaxed) || snapshots == 0 {
                    let mut t = store.begin().unwrap();
                    let first = ints(
                        &store,
                        &mut t,
                        "select sum(balance), count(*) from accounts",
                    );
                    let logged = ints(&store, &mut t, "select count(*) from log")[0];
                    let counted = ints(&store, &mut t, "select sum(n) from counts")[0];
                    let again = ints(&store, &mut t, "select sum(balance) from accounts")[0];
                    t.abort();
                    assert_eq!(first, [total, ACCOUNTS], "seed {seed}: a partial transfer");
                    assert_eq!(logged, counted, "seed {seed}: log and counts disagree");
                    assert_eq!(again, first[0], "seed {seed}: not repeatable");
                    snapshots += 1;
                }
                snapshots
            })
        })
        .collect();
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let store = Arc::clone(&store);
            std::thread::spawn(move || {
                let mut rng = seed ^ (w + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
                let mut moved = vec![0i64; ACCOUNTS as usize];
                let mut conflicts = 0u64;
                for i in 0..TRANSFERS_PER_WRITER {
                    let from = (xorshift(&mut rng) % ACCOUNTS as u64) as i64;
                    let to =
                        (from + 1 + (xorshift(&mut rng) % (ACCOUNTS as u64 - 1)) as i64) % ACCOUNTS;
                    let amount = 1 + (xorshift(&mut rng) % 50) as i64;
                    let statements = [
                        format!(
                            "update accounts set balance = balance - {amount} where id = {from}"
                        ),
                        format!("update accounts set balance = balance + {amount} where id = {to}"),
                        format!("insert into log values ({w}, {i}, {amount})"),
                        format!("update counts set n = n + 1 where w = {w}"),
                    ];
                    loop {
                        let mut t = store.begin().unwrap();
                        let done = statements
                            .iter()
                            .try_for_each(|s| statement(&store, &mut t, level, s))
                            .and_then(|()| store.commit(t));
                        match done {
                            Ok(()) => break,
                            Err(e)
                                if matches!(
                                    e.kind,
                                    ErrorKind::SerializationFailure | ErrorKind::Deadlock
                                ) =>
                            {
                                conflicts += 1
                            }
                            Err(e) => {
                                panic!("seed {seed}, {level:?}: writer {w} transfer {i}: {e}")
                            }
                        }
                    }
                    moved[from as usize] -= amount;
                    moved[to as usize] += amount;
                }
                (moved, conflicts)
            })
        })
        .collect();
    let mut moved = vec![0i64; ACCOUNTS as usize];
    let mut retried = 0;
    for w in writers {
        let (m, conflicts) = w.join().unwrap();
        retried += conflicts;
        for (a, d) in moved.iter_mut().zip(m) {
            *a += d;
        }
    }
    writing.store(false, Ordering::Relaxed);
    let merges = merger.join().unwrap();
    eprintln!("seed {seed}, {level:?}: {retried} blocks retried, {merges} merges");
    let snapshots: u64 = readers.into_iter().map(|r| r.join().unwrap()).sum();
    assert!(snapshots > 0);

    // Every committed transfer is logged once, and each balance is the
    // start plus what the writers say they moved.
    let mut t = store.begin().unwrap();
    let logged = ints(&store, &mut t, "select count(*) from log")[0];
    assert_eq!(
        logged,
        WRITERS as i64 * TRANSFERS_PER_WRITER,
        "seed {seed}: {merges} merges"
    );
    for (id, d) in moved.iter().enumerate() {
        let balance = ints(
            &store,
            &mut t,
            &format!("select sum(balance) from accounts where id = {id}"),
        )[0];
        assert_eq!(balance, BALANCE_START + d, "seed {seed}: account {id}");
    }
    t.abort();
}
