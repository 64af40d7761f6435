//! `maestro serve`: the PostgreSQL wire protocol (the `pgwire` crate) in front
//! of maestro-sql. One session per connection, each on a thread of its own
//! (with a current-thread tokio runtime for its socket), as PostgreSQL has a
//! process per connection: every statement is planned and run by maestro-sql
//! on the Maestro scheduler from that thread (the scheduler admits it as a
//! counted caller, so a short statement runs where it was read), with no
//! hand-off between threads — so do COMMIT, COPY and the maintenance calls.
//!
//! The simple and the extended query protocol (Parse/Bind/Describe/Execute,
//! with `$n` parameters: [`params`]) answer with typed columns ([`encode`])
//! and errors with SQLSTATE codes ([`errors`]); a CancelRequest stops the
//! session's running statement ([`cancel`]). The server
//! itself answers what clients send around their queries ([`statement`]):
//! SET/RESET/SHOW of session settings, BEGIN/COMMIT/ROLLBACK (the session's
//! transaction on maestro-sql's store: [`txn`]), `SELECT version()` and
//! friends, `CALL maestro.load_tpch(sf)`, which loads or replaces the
//! TPC-H tables in the store, and `CALL maestro.load_ch(w [, seconds])`,
//! which does the same for one snapshot of CH-benCHmark's tables ([`ch`]).
//! Every statement runs in the session's open transaction or autocommits;
//! COPY FROM STDIN takes the client's data (`copy.rs`).

pub mod batched;
pub mod cancel;
mod copy;
pub mod encode;
pub mod errors;
pub mod params;
pub mod statement;
pub mod tpcc;
pub mod txn;

use std::collections::{BTreeMap, HashMap};
use std::fmt::Debug;
use std::io;
use std::ops::RangeInclusive;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex, PoisonError};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use futures::stream;
use futures::{Sink, SinkExt};
use maestro_execution::{Executor, Granularity};
use maestro_scheduler::{
    CancelReason, CancelToken, Cancelled, ClassId, Scheduler, catch_cancelled,
};
use maestro_sql::store::{
    CopyFrom, GiveUp, MergeScope, QueryRunner, RefreshReaders, Returned, StoreRefresh,
    is_row_write, is_write,
};
use maestro_sql::types::SqlType;
use maestro_sql::{
    Catalog, Description, ErrorKind, Explain, LogicalPlan, ParamValue, Rerun, SqlError, Statement,
    Store, Written,
};
use maestro_tpch::queries::{QueryResult, Value};
use maestro_tpch::{NewRows, RefreshFunction};
use maestro_txn::Transaction;
use pgwire::api::auth::{self, DefaultServerParameterProvider, StartupHandler};
use pgwire::api::cancel::CancelHandler;
use pgwire::api::portal::{Format, Portal};
use pgwire::api::query::{ExtendedQueryHandler, SimpleQueryHandler};
use pgwire::api::results::{FieldInfo, QueryResponse, Response, Tag};
use pgwire::api::stmt::QueryParser;
use pgwire::api::store::{Entry, PortalStore};
use pgwire::api::{
    ClientInfo, ClientPortalStore, DEFAULT_NAME, PgWireServerHandlers, PidSecretKeyGenerator,
    RandomPidSecretKeyGenerator, Type,
};
use pgwire::error::{ErrorInfo, PgWireError, PgWireResult};
use pgwire::messages::data::{NoData, ParameterDescription};
use pgwire::messages::extendedquery::{Describe, TARGET_TYPE_BYTE_STATEMENT};
use pgwire::messages::{PgWireBackendMessage, PgWireFrontendMessage};
use tokio::net::TcpListener;

use cancel::{CancelRequests, Registration, Running, Sessions};
use errors::{error, user_error};
use statement::Command;
use txn::{Isolation, SharedSlot, TxnSlot};

/// The background merges' priority: the lowest, below statements
/// (`maestro_scheduler::DEFAULT_PRIORITY`).
const MERGE_PRIORITY: usize = 0;

/// The server's version as `SELECT version()` and `SHOW server_version` give it.
pub const SERVER_VERSION: &str = "16.6";

/// The database every session shares: the SQL tables (the TPC-H tables once
/// loaded, and those clients create) and the executor that runs statements
/// on the scheduler.
pub struct Engine {
    scheduler: Arc<Scheduler>,
    exec: Executor,
    store: Arc<Store>,
    /// A background merge is queued or running (one at a time).
    merging: Arc<AtomicBool>,
    /// One load at a time; the scale factor of the TPC-H tables loaded last
    /// (what `CALL maestro.tpch_rf1(n)` generates rows for).
    loading: Mutex<Option<f64>>,
    /// RF1 sets generated ahead (`CALL maestro.tpch_refresh_sets(a, b)`), by
    /// set number: a refresh stream's rows exist before its run, as dbgen's
    /// update files do. Emptied by a load.
    prepared: Mutex<BTreeMap<u32, NewRows>>,
    /// The sessions, for cancel requests.
    sessions: Arc<Sessions>,
    /// Sessions served at once ([`Engine::set_sessions_max`]); each has a
    /// thread.
    sessions_max: AtomicUsize,
    /// Sessions whose thread runs now.
    sessions_live: Arc<AtomicUsize>,
    /// Autocommitted writes run again after a write-write conflict.
    autocommit_retries: AtomicU64,
    /// READ COMMITTED statements run again on a newer snapshot.
    statement_reruns: AtomicU64,
}

/// A statement's answer.
pub enum Answer {
    Rows {
        columns: Vec<(String, SqlType)>,
        rows: Vec<Vec<Value>>,
    },
    /// `EXPLAIN`: the plan's text.
    Explain(String),
    /// A write: what it did.
    Written(Written),
    /// A write with RETURNING: what it did, and the rows its list gave.
    Returned {
        written: Written,
        returned: Returned,
    },
}

impl Engine {
    /// Commits `txn`; a write that left a large delta queues a background
    /// merge (`maestro_sql::store` merge.rs: a scheduler job at the lowest
    /// priority, one at a time, never blocking readers or writers).
    pub fn commit(&self, txn: Transaction) -> Result<(), SqlError> {
        self.store.commit(txn)?;
        self.start_merge();
        Ok(())
    }

    /// Starts the background merge if a write asked for one and none runs.
    ///
    /// No request is lost: while a merge runs (`merging` set) a request
    /// stays in the store (not taken, or put back), and the merge job,
    /// after clearing `merging`, takes any request left and goes on. Either
    /// the job or a committer wins the `merging` swap; the other finds the
    /// request gone or puts it back.
    fn start_merge(&self) {
        if self.merging.load(Ordering::SeqCst) || !self.store.take_merge_request() {
            return;
        }
        if self.merging.swap(true, Ordering::SeqCst) {
            self.store.request_merge();
            return;
        }
        let (store, merging) = (Arc::clone(&self.store), Arc::clone(&self.merging));
        self.scheduler.spawn_detached(MERGE_PRIORITY, move || {
            loop {
                // A failed merge leaves the table as it was: its delta
                // stays readable and the next large write asks again.
                let _ = store.merge_deltas(MergeScope::Due);
                merging.store(false, Ordering::SeqCst);
                if !store.take_merge_request() {
                    break;
                }
                if merging.swap(true, Ordering::SeqCst) {
                    store.request_merge();
                    break;
                }
            }
        });
    }

    /// An empty database on `scheduler`.
    pub fn new(scheduler: Arc<Scheduler>, granularity: Granularity) -> Engine {
        Engine::with_store(scheduler, granularity, Store::new())
    }

    /// A database of `store`'s tables (e.g. one on a data directory:
    /// [`Store::open_data_dir`]) on `scheduler`.
    pub fn with_store(scheduler: Arc<Scheduler>, granularity: Granularity, store: Store) -> Engine {
        Engine {
            exec: Executor::new(Arc::clone(&scheduler), granularity),
            scheduler,
            store: Arc::new(store),
            merging: Arc::new(AtomicBool::new(false)),
            loading: Mutex::new(None),
            prepared: Mutex::new(BTreeMap::new()),
            sessions: Arc::new(Sessions::default()),
            sessions_max: AtomicUsize::new(SESSIONS_MAX_DEFAULT),
            sessions_live: Arc::new(AtomicUsize::new(0)),
            autocommit_retries: AtomicU64::new(0),
            statement_reruns: AtomicU64::new(0),
        }
    }

    /// Serves at most `n` sessions at once (`maestro serve
    /// --max-connections`): a connection beyond them is refused with
    /// 53300, "sorry, too many clients already", as PostgreSQL's
    /// `max_connections` does; a cancel request is still served.
    pub fn set_sessions_max(&self, n: usize) {
        self.sessions_max.store(n, Ordering::Relaxed);
    }

    /// Sessions whose thread runs now.
    pub fn sessions_live(&self) -> usize {
        self.sessions_live.load(Ordering::SeqCst)
    }

    /// Loads TPC-H at scale factor `sf` and puts its eight tables into the
    /// store, replacing tables of those names, as one transaction (statements
    /// already running finish on the old ones). Blocks while loading.
    pub fn load_tpch(&self, sf: f64) -> Result<Duration, String> {
        maestro_tpch::validate_scale_factor(sf).map_err(|e| e.to_string())?;
        let mut loaded = self.loading.lock().unwrap_or_else(PoisonError::into_inner);
        let start = Instant::now();
        let db = maestro_tpch::load(&self.scheduler, sf, &|_| {}).map_err(|e| e.to_string())?;
        self.store.put_tpch(&db).map_err(|e| e.to_string())?;
        *loaded = Some(sf);
        self.prepared
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
        Ok(start.elapsed())
    }

    /// TPC-H's refresh function `function` with set `set` on the loaded
    /// TPC-H tables (`Store::tpch_rf1`/`tpch_rf2`: one transaction into
    /// ORDERS' and LINEITEM's deltas), then a background merge if it left a
    /// large delta. RF1 takes its rows generated ahead
    /// ([`Engine::tpch_prepare_refresh`]) or generates them here (then
    /// tpchgen's text pool is built for the call, ~1 s, rather than kept:
    /// 300 MiB).
    pub fn tpch_refresh(
        &self,
        function: RefreshFunction,
        set: u32,
    ) -> Result<StoreRefresh, String> {
        let sf = self.refresh_scale(set..=set)?;
        let done = match function {
            RefreshFunction::Rf1 => {
                let ahead = self
                    .prepared
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .remove(&set);
                let rows = match ahead {
                    Some(rows) => rows,
                    None => maestro_tpch::rf1_rows(sf, set).map_err(|e| e.to_string())?,
                };
                self.store.tpch_rf1(&rows, RefreshReaders::Sql)
            }
            RefreshFunction::Rf2 => {
                let keys = maestro_tpch::rf2_keys(sf, set).map_err(|e| e.to_string())?;
                self.store.tpch_rf2(&keys, RefreshReaders::Sql)
            }
        }
        .map_err(|e| e.to_string())?;
        self.start_merge();
        Ok(done)
    }

    /// Generates RF1's rows of `sets` now (one text pool for all), for
    /// [`Engine::tpch_refresh`] to take later; returns how many.
    pub fn tpch_prepare_refresh(&self, sets: RangeInclusive<u32>) -> Result<usize, String> {
        let sf = self.refresh_scale(sets.clone())?;
        let _pool = maestro_tpch::keep_text_pool();
        let mut made = Vec::new();
        for n in sets {
            made.push((n, maestro_tpch::rf1_rows(sf, n).map_err(|e| e.to_string())?));
        }
        let count = made.len();
        self.prepared
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(made);
        Ok(count)
    }

    /// The loaded TPC-H scale factor, or an error naming what is missing
    /// or which set numbers are out of range.
    fn refresh_scale(&self, sets: RangeInclusive<u32>) -> Result<f64, String> {
        let sf = self
            .loading
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .ok_or("no TPC-H tables to refresh: CALL maestro.load_tpch(sf) first")?;
        let max = maestro_tpch::REFRESH_SETS_MAX;
        if sets.is_empty() || *sets.start() < 1 || *sets.end() > max {
            return Err(format!(
                "refresh sets {}..={}: expected 1 to {max}, first ≤ last",
                sets.start(),
                sets.end()
            ));
        }
        Ok(sf)
    }

    /// Loads CH-benCHmark with `warehouses` (seed 1, the system clock),
    /// runs its transactions for `run` on 4 terminals (none for zero), and
    /// puts the twelve tables of one snapshot into the store
    /// ([`Engine::put_ch`]). Blocks while loading.
    pub fn load_ch(&self, warehouses: u16, run: Duration) -> Result<Duration, String> {
        use maestro_tpcc::driver::{self, Mode, RunConfig, Storage};
        if warehouses == 0 {
            return Err("maestro.load_ch needs at least 1 warehouse".into());
        }
        let _one = self.loading.lock().unwrap_or_else(PoisonError::into_inner);
        let start = Instant::now();
        let config = maestro_ch::ChConfig {
            warehouses,
            seed: 1,
            clock_start: None,
        };
        let (db, _) = maestro_ch::ChDatabase::load(&config, &|_| {}).map_err(|e| e.to_string())?;
        if !run.is_zero() {
            let config = RunConfig::new(4, run, Mode::Receivers, db.load_constants);
            driver::run_storage(Storage::Mvcc(&db.tpcc), &config, &|_| {})
                .map_err(|e| e.to_string())?;
        }
        let snap = db.snapshot().map_err(|e| e.to_string())?;
        self.put_ch(&snap)?;
        Ok(start.elapsed())
    }

    /// Puts CH-benCHmark's twelve tables as `snap` sees them (and `oorder`,
    /// BenchBase's name of `orders`) into the store, replacing tables of
    /// those names, as one transaction (`maestro_ch::columns`).
    pub fn put_ch(&self, snap: &maestro_ch::Snap) -> Result<(), String> {
        let tables = maestro_ch::columns::snapshot_tables(snap)?;
        self.store.put_loaded(tables).map_err(|e| e.message)
    }

    /// The store of SQL tables.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The result columns and parameter types of a statement, without
    /// running it (`declared`: the parameter types the client gave), bound
    /// against the tables `slot`'s transaction sees (or the latest ones).
    pub fn describe(
        &self,
        sql: &str,
        declared: &[Option<SqlType>],
        slot: &mut TxnSlot,
    ) -> Result<Description, SqlError> {
        self.describe_parsed(&maestro_sql::parse(sql)?, declared, slot)
    }

    /// [`describe`](Self::describe) of a statement already parsed.
    pub fn describe_parsed(
        &self,
        stmt: &Statement,
        declared: &[Option<SqlType>],
        slot: &mut TxnSlot,
    ) -> Result<Description, SqlError> {
        let view = match slot {
            TxnSlot::Open(t, _) => self.store.view(t),
            _ => self.store.view(&mut self.store.begin()?),
        };
        if is_write(stmt) {
            return self.store.describe_write(&view, stmt, declared);
        }
        maestro_sql::describe_parsed(&view, stmt, declared)
    }

    /// Plans and runs one statement (a query's whole plan as one scheduler
    /// job) with `params` as `$1`, `$2`, …, in `slot`'s transaction or, when
    /// none is open, in one of its own that commits at its end. It stops at
    /// its operators' next checkpoint once `cancel` is cancelled. An error
    /// aborts the transaction (an open one becomes failed). Blocks until it
    /// is done.
    pub fn execute(
        &self,
        sql: &str,
        params: &[ParamValue],
        cancel: CancelToken,
        slot: &mut TxnSlot,
    ) -> Result<Answer, SqlError> {
        self.execute_in_class(sql, params, cancel, None, slot)
    }

    /// [`execute`](Self::execute) with the plan run in workload class
    /// `class` ([`Executor::run_plan_in`]; `None`: as `execute`). Admission
    /// and the class's statement token are the caller's (the session's).
    pub fn execute_in_class(
        &self,
        sql: &str,
        params: &[ParamValue],
        cancel: CancelToken,
        class: Option<ClassId>,
        slot: &mut TxnSlot,
    ) -> Result<Answer, SqlError> {
        match maestro_sql::parse(sql) {
            Ok(stmt) => self.execute_parsed_in_class(&stmt, params, cancel, class, slot),
            // As any failed statement: an open transaction becomes failed.
            Err(e) => self.in_transaction(slot, |_| Err(e)),
        }
    }

    /// [`execute_in_class`](Self::execute_in_class) of a statement already
    /// parsed (a prepared statement's, parsed once at its Parse).
    pub fn execute_parsed_in_class(
        &self,
        stmt: &Statement,
        params: &[ParamValue],
        cancel: CancelToken,
        class: Option<ClassId>,
        slot: &mut TxnSlot,
    ) -> Result<Answer, SqlError> {
        let level = slot.isolation();
        let first_of_block = matches!(slot, TxnSlot::Begun(_));
        if matches!(slot, TxnSlot::Open(..)) || !is_row_write(stmt) {
            let read_committed = matches!(slot, TxnSlot::Open(_, Isolation::ReadCommitted));
            return self.in_transaction(slot, |txn| {
                if read_committed {
                    self.execute_read_committed(txn, stmt, params, cancel, class)
                } else {
                    self.execute_in(txn, stmt, params, cancel, class)
                }
            });
        }
        // An INSERT, UPDATE or DELETE that is its transaction's first
        // statement (autocommitted, or the first of a block) and fails with
        // 40001 — at the statement, or at an autocommit's commit, where its
        // writes are installed — runs again on a fresh snapshot once the
        // other writer finished: nothing of it was seen or kept, so this is
        // the statement starting later, where the client would otherwise
        // get 40001 and retry itself.
        let mut attempt = 1;
        loop {
            let mut txn = self.store.begin()?;
            let out =
                catch_panic(|| self.execute_in(&mut txn, stmt, params, cancel.clone(), class));
            let (e, blocker) = match out {
                Ok(answer) if first_of_block => {
                    let level = level.unwrap_or_else(|| panic!("a begun block without a level"));
                    *slot = TxnSlot::Open(txn, level);
                    return Ok(answer);
                }
                // A failed commit aborted the transaction.
                Ok(answer) => match self.commit(txn) {
                    Ok(()) => return Ok(answer),
                    Err(e) => (txn::commit_error(e), None),
                },
                Err(e) => {
                    let blocker = txn.take_blocker();
                    txn.abort();
                    (e, blocker)
                }
            };
            if e.kind == ErrorKind::SerializationFailure
                && attempt < AUTOCOMMIT_ATTEMPTS_MAX
                && !cancel.is_cancelled()
            {
                self.autocommit_retries.fetch_add(1, Ordering::Relaxed);
                attempt += 1;
                match blocker {
                    Some(b) => {
                        // Inactive meanwhile: the other writer's work may
                        // need this context (`row_locks::wait_inactive`).
                        maestro_scheduler::sync::blocking(|| {
                            b.wait(CONFLICT_WAIT_MAX, || cancel.is_cancelled())
                        });
                    }
                    // A newer committed version: a fresh snapshot sees it.
                    None => std::thread::yield_now(),
                }
                continue;
            }
            if first_of_block {
                *slot = TxnSlot::Failed;
            }
            return Err(e);
        }
    }

    /// Autocommitted writes run again after a write-write conflict (see
    /// [`Self::execute_in_class`]), since the engine started.
    pub fn autocommit_retries(&self) -> u64 {
        self.autocommit_retries.load(Ordering::Relaxed)
    }

    /// READ COMMITTED statements run again on a newer snapshot after
    /// meeting a row a concurrent transaction changed (see
    /// [`Self::execute_read_committed`]), since the engine started.
    pub fn statement_reruns(&self) -> u64 {
        self.statement_reruns.load(Ordering::Relaxed)
    }

    /// The scheduler statements run on (its workload classes: `maestro
    /// serve --class`).
    pub fn scheduler(&self) -> &Arc<Scheduler> {
        &self.scheduler
    }

    /// Runs `f` in `slot`'s open transaction or, when none is open, in one
    /// of its own that commits if `f` succeeds. An error aborts the
    /// transaction (an open one becomes failed).
    pub fn in_transaction<T>(
        &self,
        slot: &mut TxnSlot,
        f: impl FnOnce(&mut Transaction) -> Result<T, SqlError>,
    ) -> Result<T, SqlError> {
        let explicit = slot.in_block();
        let level = slot.isolation();
        let mut txn = match std::mem::take(slot) {
            TxnSlot::Open(t, _) => t,
            other => match self.store.begin() {
                Ok(t) => t,
                Err(e) => {
                    *slot = other;
                    return Err(e);
                }
            },
        };
        // A panic in the statement must not leave the session's state
        // behind: it aborts the transaction like an error.
        let out = catch_panic(|| f(&mut txn));
        match (&out, explicit) {
            (Ok(_), true) => {
                // Only a begun or open block is run in (a failed one
                // refuses statements first).
                let level = level.unwrap_or_else(|| panic!("a block without a level: {slot:?}"));
                *slot = TxnSlot::Open(txn, level);
            }
            (Ok(_), false) => self.commit(txn).map_err(txn::commit_error)?,
            (Err(_), true) => {
                txn.abort();
                *slot = TxnSlot::Failed;
            }
            (Err(_), false) => txn.abort(),
        }
        out
    }

    /// COPY FROM STDIN's `data` into `copy`'s table in `txn`; the rows
    /// copied. Default expressions of the columns it does not name run as
    /// queries on the scheduler.
    pub fn copy_in(
        &self,
        txn: &mut Transaction,
        copy: &CopyFrom,
        data: &[u8],
    ) -> Result<u64, SqlError> {
        let ctx = self.exec.context_cancellable("SQL", CancelToken::new());
        let run = |catalog: &dyn Catalog, plan: &LogicalPlan| -> Result<QueryResult, SqlError> {
            catch_cancelled(|| {
                self.exec
                    .run_plan(|| maestro_sql::lower::run(&ctx, catalog, plan))
            })
            .map_err(cancelled_error)?
        };
        let view = self.store.view(txn);
        self.store.copy_in(txn, &view, copy, data, &run)
    }

    /// A statement of a READ COMMITTED block: on a snapshot taken now
    /// (`Store::refresh_snapshot`), and again on a newer one when it met a
    /// row a transaction it waited for changed ([`Rerun::OnFreshSnapshot`];
    /// nothing of the failed attempt was kept).
    fn execute_read_committed(
        &self,
        txn: &mut Transaction,
        stmt: &Statement,
        params: &[ParamValue],
        cancel: CancelToken,
        class: Option<ClassId>,
    ) -> Result<Answer, SqlError> {
        let mut attempt = 1;
        loop {
            self.store.refresh_snapshot(txn)?;
            match self.execute_in(txn, stmt, params, cancel.clone(), class) {
                Err(e)
                    if e.rerun == Rerun::OnFreshSnapshot
                        && attempt < READ_COMMITTED_ATTEMPTS_MAX
                        && !cancel.is_cancelled() =>
                {
                    attempt += 1;
                    self.statement_reruns.fetch_add(1, Ordering::Relaxed);
                }
                out => return out,
            }
        }
    }

    fn execute_in(
        &self,
        txn: &mut Transaction,
        stmt: &Statement,
        params: &[ParamValue],
        cancel: CancelToken,
        class: Option<ClassId>,
    ) -> Result<Answer, SqlError> {
        let give_up: GiveUp = {
            let cancel = cancel.clone();
            Arc::new(move || cancel.is_cancelled())
        };
        let ctx = self.exec.context_cancellable("SQL", cancel);
        let run = |catalog: &dyn Catalog, plan: &LogicalPlan| -> Result<QueryResult, SqlError> {
            catch_cancelled(|| {
                let plan = || maestro_sql::lower::run(&ctx, catalog, plan);
                match class {
                    Some(c) => self.exec.run_plan_in(c, plan),
                    None => self.exec.run_plan(plan),
                }
            })
            .map_err(cancelled_error)?
        };
        let runner: QueryRunner = &run;
        if let Some(executed) =
            self.store
                .execute_returning_until(txn, stmt, params, runner, Some(give_up))
        {
            return executed.map(|e| match e.returned {
                None => Answer::Written(e.written),
                Some(returned) => Answer::Returned {
                    written: e.written,
                    returned,
                },
            });
        }
        let view = self.store.view(txn);
        let (plan, explain) = maestro_sql::plan_parsed(&view, stmt, params)?;
        match explain {
            Explain::Plan => return Ok(Answer::Explain(plan.explain())),
            Explain::Analyze => {
                let (_, analysis) = catch_cancelled(|| {
                    self.exec
                        .run_plan(|| maestro_sql::lower::run_analyzed(&ctx, &view, &plan))
                })
                .map_err(cancelled_error)??;
                let text = maestro_sql::explain_analyze(&plan, &analysis, &ctx.finish());
                return Ok(Answer::Explain(text));
            }
            Explain::No => {}
        }
        let columns = maestro_sql::lower::result_columns(&plan);
        let result = run(&view, &plan)?;
        Ok(Answer::Rows {
            columns,
            rows: result.rows,
        })
    }
}

/// Attempts of an autocommitted write that keeps meeting other
/// transactions' writes of its table before its 40001 reaches the client.
/// Guessed: each attempt waits for the holder it met, so with N writers a
/// statement loses N − 1 races at worst per round.
const AUTOCOMMIT_ATTEMPTS_MAX: u32 = 100;

/// Runs of one READ COMMITTED statement that keeps meeting rows other
/// transactions changed before its 40001 reaches the client. Guessed: each
/// run follows a wait for the row's holder or a newer commit, so N writers
/// of one row make a statement run at most N times in a row unless new
/// writers keep arriving.
const READ_COMMITTED_ATTEMPTS_MAX: u32 = 100;

/// The longest wait for a conflicting transaction before the next attempt
/// (an open transaction block may hold its table for as long as its client
/// likes; the attempt then fails again and the bound above ends it).
/// Guessed.
const CONFLICT_WAIT_MAX: Duration = Duration::from_millis(100);

/// `f()`, with a panic turned into the statement's error.
fn catch_panic<T>(f: impl FnOnce() -> Result<T, SqlError>) -> Result<T, SqlError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|p| {
        Err(SqlError::new(
            ErrorKind::Store,
            format!(
                "internal error: the statement panicked: {}",
                maestro_scheduler::panic_message(p.as_ref())
            ),
        ))
    })
}

/// A cancelled run as the statement's error (SQLSTATE 57014).
fn cancelled_error(c: Cancelled) -> SqlError {
    SqlError::new(
        ErrorKind::Cancelled,
        match c.reason {
            CancelReason::Cancelled => "canceling statement due to user request",
            CancelReason::TimedOut => "canceling statement due to statement timeout",
            // errors.rs reads "memory limit" as SQLSTATE 53200.
            CancelReason::StatementMemoryLimit => {
                "canceling statement: statement memory limit exceeded"
            }
            CancelReason::ClassMemoryLimit => {
                "canceling statement: workload class memory limit exceeded"
            }
        },
    )
}

/// Accepts connections on `listener`, one session (a task) per connection,
/// for as long as the process runs.
pub async fn serve(listener: TcpListener, engine: Arc<Engine>) -> io::Result<()> {
    loop {
        let socket = match listener.accept().await {
            Ok((socket, _)) => socket,
            // Out of file descriptors, a connection reset before it was
            // accepted, …: the listener is fine, go on shortly.
            Err(e) => {
                eprintln!("maestro serve: accept: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let _ = socket.set_nodelay(true);
        let cancel = Arc::new(CancelRequests(Arc::clone(&engine.sessions)));
        // SeqCst: one order of counts for every accepting and ending session
        // (the bound is exact: no two connections take the last place).
        let live = engine.sessions_live.fetch_add(1, Ordering::SeqCst);
        let live = LiveSession(Arc::clone(&engine.sessions_live), live);
        if live.1 >= engine.sessions_max.load(Ordering::Relaxed) {
            drop(live);
            // Answered here, without a thread: the startup is refused with
            // 53300; a cancel request (a connection of its own) still works.
            tokio::spawn(async move {
                let _ = pgwire::tokio::process_socket(socket, None, Refusing { cancel }).await;
            });
            continue;
        }
        let handlers = Handlers {
            session: Arc::new(Session::new(Arc::clone(&engine))),
            cancel,
        };
        // One thread per session, as PostgreSQL has a process per
        // connection: the session reads, plans, runs and answers on it with
        // no hand-off between threads (see `in_place`).
        let socket = match socket.into_std() {
            Ok(s) => s,
            Err(e) => {
                eprintln!("maestro serve: a connection's socket: {e}");
                continue;
            }
        };
        let spawned = std::thread::Builder::new()
            .name("maestro-session".into())
            .spawn(move || {
                let _live = live;
                serve_session(socket, handlers)
            });
        if let Err(e) = spawned {
            // The connection closes (its socket dropped with the closure).
            eprintln!("maestro serve: no thread for a new session: {e}");
        }
    }
}

/// Sessions served at once unless `maestro serve --max-connections` says
/// otherwise: PostgreSQL's default `max_connections`.
pub const SESSIONS_MAX_DEFAULT: usize = 100;

/// A place among the live sessions (and the count before it was taken),
/// given back when dropped: when the session's thread ends, or at once if
/// the connection is refused or its thread cannot start.
struct LiveSession(Arc<AtomicUsize>, usize);

impl Drop for LiveSession {
    fn drop(&mut self) {
        // SeqCst: pairs with the accept loop's fetch_add (see there).
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The handlers of a connection beyond the sessions' bound: its startup is
/// refused (FATAL 53300, which ends the connection), its cancel request
/// served.
struct Refusing {
    cancel: Arc<CancelRequests>,
}

impl PgWireServerHandlers for Refusing {
    fn startup_handler(&self) -> Arc<impl StartupHandler> {
        Arc::new(RefuseStartup)
    }

    fn cancel_handler(&self) -> Arc<impl CancelHandler> {
        Arc::clone(&self.cancel)
    }
}

struct RefuseStartup;

#[async_trait]
impl StartupHandler for RefuseStartup {
    async fn on_startup<C>(
        &self,
        _client: &mut C,
        _message: PgWireFrontendMessage,
    ) -> PgWireResult<()>
    where
        C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        Err(PgWireError::UserError(Box::new(ErrorInfo::new(
            "FATAL".to_string(),
            errors::TOO_MANY_CONNECTIONS.to_string(),
            "sorry, too many clients already".to_string(),
        ))))
    }
}

/// Runs one connection's session on this thread, in a runtime of its own.
fn serve_session(socket: std::net::TcpStream, handlers: Handlers) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("maestro serve: a session's runtime: {e}");
            return;
        }
    };
    runtime.block_on(async move {
        match tokio::net::TcpStream::from_std(socket) {
            // A client that vanishes ends its session; nothing else to do.
            Ok(socket) => {
                let _ = batched::process_socket(socket, handlers).await;
            }
            Err(e) => eprintln!("maestro serve: a session's socket: {e}"),
        }
    });
}

struct Handlers {
    session: Arc<Session>,
    cancel: Arc<CancelRequests>,
}

impl PgWireServerHandlers for Handlers {
    fn simple_query_handler(&self) -> Arc<impl SimpleQueryHandler> {
        Arc::clone(&self.session)
    }

    fn extended_query_handler(&self) -> Arc<impl ExtendedQueryHandler> {
        Arc::clone(&self.session)
    }

    fn startup_handler(&self) -> Arc<impl StartupHandler> {
        Arc::new(Startup {
            session: Arc::clone(&self.session),
        })
    }

    fn cancel_handler(&self) -> Arc<impl CancelHandler> {
        Arc::clone(&self.cancel)
    }

    fn copy_handler(&self) -> Arc<impl pgwire::api::copy::CopyHandler> {
        Arc::clone(&self.session)
    }
}

/// No authentication (as pgwire's no-op handler), announcing
/// [`SERVER_VERSION`] as the server's version; registers the session's
/// BackendKeyData for cancel requests.
struct Startup {
    session: Arc<Session>,
}

static PIDS: LazyLock<RandomPidSecretKeyGenerator> =
    LazyLock::new(RandomPidSecretKeyGenerator::default);

#[async_trait]
impl StartupHandler for Startup {
    async fn on_startup<C>(
        &self,
        client: &mut C,
        message: PgWireFrontendMessage,
    ) -> PgWireResult<()>
    where
        C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        if let PgWireFrontendMessage::Startup(ref startup) = message {
            auth::protocol_negotiation(client, startup).await?;
            auth::save_startup_parameters_to_metadata(client, startup);
            let (pid, key) = PIDS.generate(client);
            let registration =
                self.session
                    .engine
                    .sessions
                    .register(pid, &key, Arc::clone(&self.session.running));
            *self
                .session
                .registration
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Some(registration);
            client.set_pid_and_secret_key(pid, key);
            let mut parameters = DefaultServerParameterProvider::default();
            parameters.server_version = SERVER_VERSION.to_string();
            auth::finish_authentication(client, &parameters).await?;
        }
        Ok(())
    }
}

/// One connection's state: its settings and its running statement.
pub struct Session {
    engine: Arc<Engine>,
    settings: Mutex<HashMap<String, String>>,
    parser: Arc<Parser>,
    running: Arc<Running>,
    /// Its entry for cancel requests (removed with the session).
    registration: Mutex<Option<Registration>>,
    /// Its transaction (dropped, so aborted, with the session).
    txn: SharedSlot,
    /// The COPY FROM STDIN whose data the client is sending.
    copy: Mutex<Option<copy::PendingCopy>>,
}

/// A prepared statement: its text, what it is, its result columns and its
/// parameters' types (as Describe announces them: on the wire, and in SQL).
#[derive(Clone, Debug)]
pub struct Prepared {
    sql: String,
    /// The statement parsed at Parse (a query for maestro-sql that parses):
    /// each Execute runs it without parsing the text again.
    parsed: Option<Arc<Statement>>,
    command: Command,
    columns: Vec<(String, SqlType)>,
    param_types: Vec<Type>,
    param_sql_types: Vec<SqlType>,
}

/// Parses statements for the extended protocol (binding them against the
/// tables to know their result columns).
pub struct Parser {
    engine: Arc<Engine>,
    /// The session's transaction: statements bind against what it sees.
    txn: SharedSlot,
}

/// Runs `f` — a statement, a COMMIT, a COPY's rows, a maintenance call —
/// on this thread, the session's own ([`serve`]: a thread and a
/// current-thread runtime per connection), so blocking it holds up nobody
/// else and nothing is handed to another thread and back: measured with
/// pgbench's simple-update at one client, 19 context switches per
/// transaction with `spawn_blocking` from a shared runtime, 13–15 with
/// `block_in_place` there, 8 on the session's own thread (0.47 instead of
/// 0.72 ms of the server's CPU per transaction). A panic becomes an
/// internal error.
fn on_session_thread<T>(
    f: impl FnOnce() -> Result<T, Box<ErrorInfo>>,
) -> Result<T, Box<ErrorInfo>> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|p| {
        Err(error(
            errors::INTERNAL_ERROR,
            format!(
                "internal error: the statement's thread failed: {}",
                maestro_scheduler::panic_message(p.as_ref())
            ),
        ))
    })
}

/// The setting that puts a session's statements in a workload class.
const WORKLOAD_CLASS: &str = "maestro.workload_class";

/// The setting naming the level blocks begin at.
const DEFAULT_ISOLATION: &str = "default_transaction_isolation";

/// The level blocks begin at unless the session chooses another.
const DEFAULT_ISOLATION_LEVEL: Isolation = Isolation::RepeatableRead;

/// The isolation level `words` name, if the engine gives it: 22023 for no
/// level, 0A000 for SERIALIZABLE ([`Isolation::granted`]).
fn isolation_named(words: &str) -> Result<Isolation, Box<ErrorInfo>> {
    Isolation::parse(words)
        .ok_or_else(|| {
            error(
                errors::INVALID_PARAMETER_VALUE,
                format!(
                    "invalid value for parameter \"transaction_isolation\": \"{words}\" (read \
                     committed, repeatable read)"
                ),
            )
        })?
        .granted()
}

/// Default values of the settings clients ask about.
fn default_setting(name: &str) -> Option<&'static str> {
    Some(match name {
        "server_version" => SERVER_VERSION,
        "server_version_num" => "160006",
        "server_encoding" | "client_encoding" => "UTF8",
        "datestyle" => "ISO, MDY",
        "intervalstyle" => "postgres",
        "timezone" | "log_timezone" => "UTC",
        DEFAULT_ISOLATION => DEFAULT_ISOLATION_LEVEL.name(),
        "transaction_read_only" | "default_transaction_read_only" | "in_hot_standby" => "off",
        "standard_conforming_strings" | "integer_datetimes" => "on",
        "search_path" => "\"$user\", public",
        "max_identifier_length" => "63",
        "extra_float_digits" => "1",
        "application_name" => "",
        "is_superuser" => "on",
        "lc_messages" | "lc_monetary" | "lc_numeric" | "lc_time" | "lc_collate" | "lc_ctype" => "C",
        "statement_timeout" | "lock_timeout" | "idle_in_transaction_session_timeout" => "0",
        WORKLOAD_CLASS => "default",
        _ => return None,
    })
}

fn text_rows(name: &str, values: Vec<String>, format: &Format) -> Response {
    let columns = vec![(name.to_string(), SqlType::Str)];
    let rows = values.into_iter().map(|v| vec![Value::Str(v)]).collect();
    rows_response(&columns, rows, format)
}

fn rows_response(
    columns: &[(String, SqlType)],
    rows: Vec<Vec<Value>>,
    format: &Format,
) -> Response {
    let fields: Arc<Vec<FieldInfo>> = Arc::new(encode::fields(columns, format));
    let encoded: Vec<PgWireResult<_>> = rows
        .iter()
        .map(|r| Ok(encode::data_row(r, &fields)))
        .collect();
    Response::Query(QueryResponse::new(fields, stream::iter(encoded)))
}

impl Session {
    fn new(engine: Arc<Engine>) -> Session {
        let txn = SharedSlot::default();
        Session {
            parser: Arc::new(Parser {
                engine: Arc::clone(&engine),
                txn: Arc::clone(&txn),
            }),
            engine,
            settings: Mutex::new(HashMap::new()),
            running: Arc::new(Running::default()),
            registration: Mutex::new(None),
            txn,
            copy: Mutex::new(None),
        }
    }

    /// A setting's value: SET in this session, else from the startup
    /// message, else the default.
    fn setting<C: ClientInfo>(&self, client: &C, name: &str) -> Option<String> {
        let name = name.to_ascii_lowercase();
        if let Some(v) = self
            .settings
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&name)
        {
            return Some(v.clone());
        }
        if let Some((_, v)) = client
            .metadata()
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(&name) && k.as_str() != "user")
        {
            return Some(v.clone());
        }
        if let Some(v) = client
            .metadata()
            .get("options")
            .and_then(|options| statement::startup_option(options, &name))
        {
            return Some(v);
        }
        match name.as_str() {
            "session_authorization" => client.metadata().get("user").cloned(),
            // The block's level, else the one a block would begin at.
            "transaction_isolation" | "transaction_isolation_level" => {
                let in_block = txn::lock(&self.txn).isolation();
                match in_block {
                    Some(level) => Some(level.name().to_string()),
                    None => self.setting(client, DEFAULT_ISOLATION),
                }
            }
            // Neither SET nor the startup message chose a class: a session
            // whose application_name is a class's name runs in that class
            // (README, "Workload classes"), so a client that cannot send
            // SET (a BI tool, a pooled driver) still picks its class.
            WORKLOAD_CLASS => self
                .setting(client, "application_name")
                .filter(|app| self.engine.scheduler.class_by_name(app).is_some())
                .or_else(|| default_setting(&name).map(str::to_string)),
            _ => default_setting(&name).map(str::to_string),
        }
    }

    /// `SET TRANSACTION ISOLATION LEVEL words`: the begun block's level.
    fn set_block_isolation(&self, words: &str) -> Result<Response, Box<ErrorInfo>> {
        let level = isolation_named(words)?;
        let mut slot = txn::lock(&self.txn);
        match &*slot {
            TxnSlot::Begun(_) => *slot = TxnSlot::Begun(level),
            TxnSlot::Open(..) => {
                return Err(error(
                    errors::ACTIVE_SQL_TRANSACTION,
                    "SET TRANSACTION ISOLATION LEVEL must be called before any query",
                ));
            }
            // Outside a block PostgreSQL warns that it has no effect; a
            // failed block refused it before.
            TxnSlot::Idle | TxnSlot::Failed => {}
        }
        Ok(Response::Execution(Tag::new("SET")))
    }

    /// The level a block begins at without naming one: the session's
    /// `default_transaction_isolation` (SET, or the startup message).
    fn default_isolation<C: ClientInfo>(&self, client: &C) -> Result<Isolation, Box<ErrorInfo>> {
        let words = self
            .setting(client, DEFAULT_ISOLATION)
            .unwrap_or_else(|| DEFAULT_ISOLATION_LEVEL.name().to_string());
        isolation_named(&words)
    }

    /// The class `name` names: `None` for the default class (`default`,
    /// `DEFAULT`: no class, statements run as without one), 22023 for a
    /// name the scheduler has no class of.
    fn class_named(&self, name: &str) -> Result<Option<ClassId>, Box<ErrorInfo>> {
        if name.eq_ignore_ascii_case("default") {
            return Ok(None);
        }
        match self.engine.scheduler.class_by_name(name) {
            Some(c) => Ok(Some(c)),
            None => {
                let names: Vec<String> = self
                    .engine
                    .scheduler
                    .class_stats()
                    .into_iter()
                    .map(|s| s.name)
                    .collect();
                Err(error(
                    errors::INVALID_PARAMETER_VALUE,
                    format!(
                        "invalid value for parameter \"{WORKLOAD_CLASS}\": \"{name}\" \
                         (workload classes: {}; maestro serve --class defines them)",
                        names.join(", ")
                    ),
                ))
            }
        }
    }

    /// The session's workload class (`SET maestro.workload_class`, else the
    /// startup parameter of that name, else the class named like the
    /// session's application_name), `None` for none.
    fn workload_class<C: ClientInfo>(&self, client: &C) -> Result<Option<ClassId>, Box<ErrorInfo>> {
        match self.setting(client, WORKLOAD_CLASS) {
            Some(name) => self.class_named(&name),
            None => Ok(None),
        }
    }

    /// Runs one statement (`text` starts at byte `offset` of `query`) with
    /// `params` as its `$n`.
    #[allow(clippy::too_many_arguments)]
    async fn run<C: ClientInfo>(
        &self,
        client: &C,
        command: &Command,
        parsed: Option<Arc<Statement>>,
        query: &str,
        offset: usize,
        text: &str,
        params: Vec<ParamValue>,
        format: &Format,
    ) -> Result<Response, Box<ErrorInfo>> {
        if matches!(*txn::lock(&self.txn), TxnSlot::Failed)
            && !matches!(command, Command::Commit | Command::Rollback)
        {
            return Err(txn::in_failed_transaction());
        }
        match command {
            Command::Copy => self.copy(text).await,
            Command::Sql => {
                let engine = &self.engine;
                // Cancellable while it runs (the guard ends that, also if
                // the client goes away and this future is dropped).
                let timeout = self
                    .setting(client, "statement_timeout")
                    .and_then(|t| cancel::statement_timeout(&t));
                // Under a workload class: the class's token (its timeout,
                // the earlier of it and the session's, and its memory
                // limits), its admission control, its share of the workers.
                let class = self.workload_class(client)?;
                let token = match class {
                    Some(c) => engine.scheduler.statement_token_within(c, None, timeout),
                    None => CancelToken::for_statement(timeout, None),
                };
                let _running = self.running.start(token.clone());
                let answer =
                    on_session_thread(|| {
                        let _admitted = match class {
                            Some(c) => Some(engine.scheduler.admit(c).map_err(|r| {
                                error(errors::INSUFFICIENT_RESOURCES, r.to_string())
                            })?),
                            None => None,
                        };
                        let mut slot = txn::lock(&self.txn);
                        match &parsed {
                            Some(stmt) => engine
                                .execute_parsed_in_class(stmt, &params, token, class, &mut slot),
                            None => engine.execute_in_class(text, &params, token, class, &mut slot),
                        }
                        .map_err(|e| {
                            // Positions count from the start of the whole query.
                            let pos = e
                                .position
                                .map(|p| statement::char_position(query, offset, p.line, p.column));
                            errors::sql_error(&e, pos)
                        })
                    })?;
                Ok(match answer {
                    Answer::Rows { columns, rows } => rows_response(&columns, rows, format),
                    Answer::Explain(plan) => text_rows(
                        "QUERY PLAN",
                        plan.lines().map(str::to_string).collect(),
                        format,
                    ),
                    Answer::Written(w) => Response::Execution(written_tag(w)),
                    Answer::Returned { written, returned } => {
                        returned_response(written, returned, format)
                    }
                })
            }
            // PostgreSQL's other spelling of SET TRANSACTION ISOLATION LEVEL.
            Command::Set(Some((name, words)))
                if name.eq_ignore_ascii_case("transaction_isolation") =>
            {
                self.set_block_isolation(words)
            }
            Command::Set(assignment) => {
                if let Some((name, value)) = assignment {
                    let mut settings = self.settings.lock().unwrap_or_else(PoisonError::into_inner);
                    if name.eq_ignore_ascii_case(WORKLOAD_CLASS) {
                        // Checked now, so the error comes with the SET.
                        // `default` is kept too: it overrides the class an
                        // application_name selects (RESET goes back to it).
                        let value = match self.class_named(value)? {
                            Some(_) => value.clone(),
                            None => "default".to_string(),
                        };
                        settings.insert(WORKLOAD_CLASS.to_string(), value);
                    } else if name.eq_ignore_ascii_case(DEFAULT_ISOLATION) {
                        let level = isolation_named(value)?;
                        settings.insert(DEFAULT_ISOLATION.to_string(), level.name().to_string());
                    } else {
                        settings.insert(name.clone(), value.clone());
                    }
                }
                Ok(Response::Execution(Tag::new("SET")))
            }
            Command::Reset(name) => {
                let mut settings = self.settings.lock().unwrap_or_else(PoisonError::into_inner);
                match name {
                    Some(n) => {
                        settings.remove(n);
                    }
                    None => settings.clear(),
                }
                Ok(Response::Execution(Tag::new("RESET")))
            }
            Command::Show(name) => match self.setting(client, name) {
                Some(v) => Ok(text_rows(name, vec![v], format)),
                None => Err(error(
                    errors::UNDEFINED_OBJECT,
                    format!("unrecognized configuration parameter \"{name}\""),
                )),
            },
            Command::CurrentSetting(name) => match self.setting(client, name) {
                Some(v) => Ok(text_rows("current_setting", vec![v], format)),
                None => Err(error(
                    errors::UNDEFINED_OBJECT,
                    format!("unrecognized configuration parameter \"{name}\""),
                )),
            },
            Command::Function(name) => {
                let meta = client.metadata();
                let value = match name.as_str() {
                    "version" => format!(
                        "PostgreSQL {SERVER_VERSION} (Maestro {}, an in-memory HTAP engine)",
                        env!("CARGO_PKG_VERSION")
                    ),
                    "current_database" | "current_catalog" => meta
                        .get("database")
                        .or_else(|| meta.get("user"))
                        .cloned()
                        .unwrap_or_else(|| "maestro".to_string()),
                    "current_schema" => "public".to_string(),
                    _ => meta.get("user").cloned().unwrap_or_default(),
                };
                Ok(text_rows(name, vec![value], format))
            }
            Command::Begin(level) => {
                let level = match level {
                    Some(words) => isolation_named(words)?,
                    None => self.default_isolation(client)?,
                };
                let mut slot = txn::lock(&self.txn);
                // BEGIN inside a transaction: PostgreSQL warns and goes on.
                if matches!(*slot, TxnSlot::Idle) {
                    *slot = TxnSlot::Begun(level);
                }
                Ok(Response::TransactionStart(Tag::new("BEGIN")))
            }
            Command::SetIsolation(words) => self.set_block_isolation(words),
            Command::Commit => {
                let taken = std::mem::take(&mut *txn::lock(&self.txn));
                match taken {
                    TxnSlot::Open(t, _) => {
                        let engine = Arc::clone(&self.engine);
                        on_session_thread(move || {
                            engine
                                .commit(t)
                                .map_err(|e| errors::sql_error(&txn::commit_error(e), None))
                        })?;
                        Ok(Response::TransactionEnd(Tag::new("COMMIT")))
                    }
                    // As PostgreSQL: COMMIT of a failed transaction rolls back.
                    TxnSlot::Failed => Ok(Response::TransactionEnd(Tag::new("ROLLBACK"))),
                    TxnSlot::Idle | TxnSlot::Begun(_) => {
                        Ok(Response::TransactionEnd(Tag::new("COMMIT")))
                    }
                }
            }
            Command::Rollback => {
                // Dropping the transaction aborts it.
                drop(std::mem::take(&mut *txn::lock(&self.txn)));
                Ok(Response::TransactionEnd(Tag::new("ROLLBACK")))
            }
            Command::Noop(tag) => Ok(Response::Execution(Tag::new(tag))),
            Command::Call { name, args } => self.call(name, args).await,
        }
    }

    /// `CALL maestro.load_tpch(sf)`, `CALL maestro.load_ch(w [, seconds])`,
    /// `CALL maestro.tpch_rf1(set)`, `CALL maestro.tpch_rf2(set)`,
    /// `CALL maestro.merge()`.
    async fn call(&self, name: &str, args: &[String]) -> Result<Response, Box<ErrorInfo>> {
        if name == "maestro.load_ch" {
            return self.call_load_ch(args).await;
        }
        if let Some(function) = match name {
            "maestro.tpch_rf1" => Some(RefreshFunction::Rf1),
            "maestro.tpch_rf2" => Some(RefreshFunction::Rf2),
            _ => None,
        } {
            return self.call_tpch_refresh(name, function, args).await;
        }
        if name == "maestro.tpch_refresh_sets" {
            return self.call_tpch_refresh_sets(args).await;
        }
        if name == "maestro.merge" {
            if !(args.is_empty() || matches!(args, [a] if a.trim().is_empty())) {
                return Err(error(
                    errors::INVALID_PARAMETER_VALUE,
                    "maestro.merge takes no argument: CALL maestro.merge()",
                ));
            }
            let engine = Arc::clone(&self.engine);
            on_session_thread(move || {
                // On the scheduler: a merge builds its columns as fork-join tasks.
                engine
                    .scheduler
                    .install(|| engine.store.merge_deltas(MergeScope::All))
                    .map_err(|e| errors::sql_error(&e, None))
            })?;
            return Ok(Response::Execution(Tag::new("CALL")));
        }
        if name != "maestro.load_tpch" {
            return Err(error(
                errors::UNDEFINED_FUNCTION,
                format!(
                    "procedure {name} does not exist (there are maestro.load_tpch(sf), \
                     maestro.load_ch(warehouses [, run_seconds]), maestro.tpch_rf1(set), \
                     maestro.tpch_rf2(set), maestro.tpch_refresh_sets(first, last) and \
                     maestro.merge())"
                ),
            ));
        }
        let sf = match args {
            [a] => a.trim_matches('\'').parse::<f64>().ok(),
            _ => None,
        }
        .ok_or_else(|| {
            error(
                errors::INVALID_PARAMETER_VALUE,
                "maestro.load_tpch takes one argument: the scale factor, e.g. CALL maestro.load_tpch(0.01)",
            )
        })?;
        let engine = Arc::clone(&self.engine);
        on_session_thread(move || {
            engine
                .load_tpch(sf)
                .map_err(|e| error(errors::INVALID_PARAMETER_VALUE, e))
        })?;
        Ok(Response::Execution(Tag::new("CALL")))
    }
}

impl Session {
    /// `CALL maestro.tpch_rf1(set)`, `CALL maestro.tpch_rf2(set)`.
    async fn call_tpch_refresh(
        &self,
        name: &str,
        function: RefreshFunction,
        args: &[String],
    ) -> Result<Response, Box<ErrorInfo>> {
        let set = match args {
            [a] => a.trim_matches('\'').trim().parse::<u32>().ok(),
            _ => None,
        }
        .ok_or_else(|| {
            error(
                errors::INVALID_PARAMETER_VALUE,
                format!("{name} takes one argument: the refresh set, e.g. CALL {name}(1)"),
            )
        })?;
        let engine = Arc::clone(&self.engine);
        on_session_thread(move || {
            engine
                .tpch_refresh(function, set)
                .map_err(|e| error(errors::INVALID_PARAMETER_VALUE, e))
        })?;
        Ok(Response::Execution(Tag::new("CALL")))
    }

    /// `CALL maestro.tpch_refresh_sets(first, last)`.
    async fn call_tpch_refresh_sets(&self, args: &[String]) -> Result<Response, Box<ErrorInfo>> {
        let number = |a: &String| a.trim_matches('\'').trim().parse::<u32>().ok();
        let sets = match args {
            [a, b] => number(a).zip(number(b)),
            _ => None,
        }
        .ok_or_else(|| {
            error(
                errors::INVALID_PARAMETER_VALUE,
                "maestro.tpch_refresh_sets takes the first and the last set, e.g. \
                 CALL maestro.tpch_refresh_sets(1, 4)",
            )
        })?;
        let engine = Arc::clone(&self.engine);
        on_session_thread(move || {
            engine
                .tpch_prepare_refresh(sets.0..=sets.1)
                .map_err(|e| error(errors::INVALID_PARAMETER_VALUE, e))
        })?;
        Ok(Response::Execution(Tag::new("CALL")))
    }

    /// `CALL maestro.load_ch(warehouses [, run_seconds])`.
    async fn call_load_ch(&self, args: &[String]) -> Result<Response, Box<ErrorInfo>> {
        let bad = || {
            error(
                errors::INVALID_PARAMETER_VALUE,
                "maestro.load_ch takes the warehouses (1 to 65535) and optionally the seconds \
                 of transactions to run first (0 to 86400), e.g. CALL maestro.load_ch(1) or \
                 CALL maestro.load_ch(1, 10)",
            )
        };
        let arg = |a: &String| a.trim_matches('\'').trim().to_string();
        let (w, secs) = match args {
            [w] => (arg(w), "0".to_string()),
            [w, s] => (arg(w), arg(s)),
            _ => return Err(bad()),
        };
        let w: u16 = w.parse().ok().filter(|&w| w > 0).ok_or_else(bad)?;
        let secs: f64 = secs
            .parse()
            .ok()
            .filter(|s: &f64| s.is_finite() && *s >= 0.0 && *s <= 86_400.0)
            .ok_or_else(bad)?;
        let engine = Arc::clone(&self.engine);
        on_session_thread(move || {
            engine
                .load_ch(w, Duration::from_secs_f64(secs))
                .map_err(|e| error(errors::INVALID_PARAMETER_VALUE, e))
        })?;
        Ok(Response::Execution(Tag::new("CALL")))
    }
}

#[async_trait]
impl SimpleQueryHandler for Session {
    async fn do_query<C>(&self, client: &mut C, query: &str) -> PgWireResult<Vec<Response>>
    where
        C: ClientInfo + ClientPortalStore + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::PortalStore: PortalStore,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        let pieces = statement::split(query);
        if pieces.is_empty() {
            return Ok(vec![Response::EmptyQuery]);
        }
        // As PostgreSQL: several statements in one Query without BEGIN,
        // COMMIT or ROLLBACK among them run as one implicit transaction —
        // all of them or none.
        let implicit = pieces.len() > 1
            && pieces.iter().all(|p| {
                !matches!(
                    statement::classify(p.text),
                    Command::Begin(_) | Command::Commit | Command::Rollback | Command::Copy
                )
            })
            && matches!(*txn::lock(&self.txn), TxnSlot::Idle);
        if implicit {
            let level = self.default_isolation(&*client).map_err(user_error)?;
            let t = self
                .engine
                .store
                .begin()
                .map_err(|e| user_error(errors::sql_error(&e, None)))?;
            *txn::lock(&self.txn) = TxnSlot::Open(t, level);
        }
        let mut out = Vec::with_capacity(pieces.len());
        for p in pieces {
            let command = statement::classify(p.text);
            match self
                .run(
                    &*client,
                    &command,
                    None,
                    query,
                    p.offset,
                    p.text,
                    Vec::new(),
                    &Format::UnifiedText,
                )
                .await
            {
                Ok(r) => out.push(r),
                Err(e) => {
                    // Like PostgreSQL: the statements after a failed one are
                    // not run.
                    out.push(Response::Error(e));
                    break;
                }
            }
        }
        if implicit {
            // A failed statement already aborted it (the slot is Failed).
            let taken = std::mem::take(&mut *txn::lock(&self.txn));
            if let TxnSlot::Open(t, _) = taken {
                let engine = Arc::clone(&self.engine);
                let committed = on_session_thread(move || {
                    engine
                        .commit(t)
                        .map_err(|e| errors::sql_error(&txn::commit_error(e), None))
                });
                if let Err(e) = committed {
                    out.push(Response::Error(e));
                }
            }
        }
        Ok(out)
    }
}

#[async_trait]
impl QueryParser for Parser {
    type Statement = Prepared;

    async fn parse_sql<C>(
        &self,
        _client: &C,
        sql: &str,
        types: &[Option<Type>],
    ) -> PgWireResult<Option<Prepared>>
    where
        C: ClientInfo + Unpin + Send + Sync,
    {
        let pieces = statement::split(sql);
        let text = match pieces.as_slice() {
            [] => return Ok(None),
            [p] => p.text,
            _ => {
                return Err(user_error(error(
                    errors::SYNTAX_ERROR,
                    "cannot insert multiple commands into a prepared statement",
                )));
            }
        };
        let command = statement::classify(text);
        let declared: Vec<Option<SqlType>> = types
            .iter()
            .map(|t| match t {
                Some(t) => params::declared_type(t),
                None => Ok(None),
            })
            .collect::<Result<_, _>>()
            .map_err(user_error)?;
        if command != Command::Sql && (!types.is_empty() || statement::has_parameters(text)) {
            return Err(user_error(error(
                errors::FEATURE_NOT_SUPPORTED,
                "parameters ($1, …) are only supported in queries (SELECT, WITH, EXPLAIN)",
            )));
        }
        let mut parsed = None;
        let (columns, param_sql_types) = match &command {
            Command::Sql => {
                let (d, stmt) = on_session_thread(|| {
                    let mut slot = txn::lock(&self.txn);
                    let stmt = maestro_sql::parse(text).map(Arc::new);
                    let described = stmt
                        .as_ref()
                        .map_err(Clone::clone)
                        .and_then(|stmt| self.engine.describe_parsed(stmt, &declared, &mut slot));
                    // As PostgreSQL: an error (here a failed Parse) fails
                    // the open transaction.
                    if described.is_err() && slot.in_block() {
                        *slot = TxnSlot::Failed;
                    }
                    described
                        .map_err(|e| {
                            let pos = e
                                .position
                                .map(|p| statement::char_position(text, 0, p.line, p.column));
                            errors::sql_error(&e, pos)
                        })
                        .map(|d| (d, stmt.ok()))
                })
                .map_err(user_error)?;
                parsed = stmt;
                (d.columns, d.param_types)
            }
            Command::Show(name) | Command::Function(name) => {
                (vec![(name.clone(), SqlType::Str)], Vec::new())
            }
            Command::CurrentSetting(_) => (
                vec![("current_setting".to_string(), SqlType::Str)],
                Vec::new(),
            ),
            _ => (Vec::new(), Vec::new()),
        };
        // The client's types where it gave them, else the inferred ones.
        let param_types = param_sql_types
            .iter()
            .enumerate()
            .map(|(i, t)| match types.get(i) {
                Some(Some(declared)) => declared.clone(),
                _ => params::pg_type(*t),
            })
            .collect();
        Ok(Some(Prepared {
            sql: text.to_string(),
            parsed,
            command,
            columns,
            param_types,
            param_sql_types,
        }))
    }

    fn get_parameter_types(&self, stmt: &Prepared) -> PgWireResult<Vec<Type>> {
        Ok(stmt.param_types.clone())
    }

    fn get_result_schema(
        &self,
        stmt: &Prepared,
        column_format: Option<&Format>,
    ) -> PgWireResult<Vec<FieldInfo>> {
        Ok(encode::fields(
            &stmt.columns,
            column_format.unwrap_or(&Format::UnifiedText),
        ))
    }
}

#[async_trait]
impl ExtendedQueryHandler for Session {
    type Statement = Prepared;
    type QueryParser = Parser;

    fn query_parser(&self) -> Arc<Parser> {
        Arc::clone(&self.parser)
    }

    /// A Describe of a statement that returns no rows but has parameters
    /// (`INSERT … VALUES ($1)`): ParameterDescription, then NoData, as
    /// PostgreSQL answers. pgwire's default sends an empty RowDescription
    /// instead, which pgJDBC takes for a result set ("A result was returned
    /// when none was expected" on `executeUpdate`).
    async fn on_describe<C>(&self, client: &mut C, message: Describe) -> PgWireResult<()>
    where
        C: ClientInfo + ClientPortalStore + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::PortalStore: PortalStore<Statement = Prepared>,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        if message.target_type == TARGET_TYPE_BYTE_STATEMENT {
            let name = message.name.as_deref().unwrap_or(DEFAULT_NAME);
            if let Some(Entry::Value(stmt)) = client.portal_store().get_statement(name)
                && stmt.statement.columns.is_empty()
            {
                let described = self.do_describe_statement(client, &stmt).await?;
                let oids = described.parameters.iter().map(Type::oid).collect();
                client
                    .send(PgWireBackendMessage::ParameterDescription(
                        ParameterDescription::new(oids),
                    ))
                    .await?;
                client
                    .send(PgWireBackendMessage::NoData(NoData::new()))
                    .await?;
                return Ok(());
            }
        }
        self._on_describe(client, message).await
    }

    async fn do_query<C>(
        &self,
        client: &mut C,
        portal: &Portal<Prepared>,
        _max_rows: usize,
    ) -> PgWireResult<Response>
    where
        C: ClientInfo + ClientPortalStore + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::PortalStore: PortalStore<Statement = Prepared>,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        let stmt = &portal.statement.statement;
        let values = bind_values(portal).map_err(user_error)?;
        self.run(
            &*client,
            &stmt.command,
            stmt.parsed.clone(),
            &stmt.sql,
            0,
            &stmt.sql,
            values,
            &portal.result_column_format,
        )
        .await
        .map_err(user_error)
    }
}

/// A write's RETURNING rows, completed by the write's tag (`INSERT 0 n`,
/// `UPDATE n`, `DELETE n`, and `SELECT n` for `SELECT … FOR UPDATE`: pgwire
/// adds the count of rows sent, which is the count of rows written).
fn returned_response(written: Written, returned: Returned, format: &Format) -> Response {
    let mut response = rows_response(&returned.columns, returned.rows, format);
    if let Response::Query(q) = &mut response {
        q.set_command_tag(match written {
            Written::Insert(_) => "INSERT 0",
            Written::Update(_) => "UPDATE",
            Written::Delete(_) => "DELETE",
            // SELECT … FOR UPDATE: its rows, counted as a SELECT's.
            Written::Select(_) => "SELECT",
            other => panic!("RETURNING rows from {other:?}"),
        });
    }
    response
}

/// The CommandComplete tag of a write.
fn written_tag(w: Written) -> Tag {
    let rows = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    match w {
        Written::CreateTable => Tag::new("CREATE TABLE"),
        Written::CreateTableAs(n) => Tag::new("SELECT").with_rows(rows(n)),
        Written::DropTable => Tag::new("DROP TABLE"),
        Written::CreateIndex => Tag::new("CREATE INDEX"),
        Written::DropIndex => Tag::new("DROP INDEX"),
        Written::AlterTable => Tag::new("ALTER TABLE"),
        Written::Insert(n) => Tag::new("INSERT").with_oid(0).with_rows(rows(n)),
        Written::Update(n) => Tag::new("UPDATE").with_rows(rows(n)),
        Written::Delete(n) => Tag::new("DELETE").with_rows(rows(n)),
        Written::Copy(n) => Tag::new("COPY").with_rows(rows(n)),
        Written::Select(n) => Tag::new("SELECT").with_rows(rows(n)),
    }
}

/// A portal's parameter values, decoded by their types and formats; as many
/// as the statement has parameters (else 08P01, as PostgreSQL).
fn bind_values(portal: &Portal<Prepared>) -> Result<Vec<ParamValue>, Box<ErrorInfo>> {
    let stmt = &portal.statement.statement;
    if portal.parameters.len() != stmt.param_types.len() {
        return Err(error(
            errors::PROTOCOL_VIOLATION,
            format!(
                "bind message supplies {} parameters, but prepared statement \"{}\" requires {}",
                portal.parameters.len(),
                portal.statement.id,
                stmt.param_types.len()
            ),
        ));
    }
    let binary = |i: usize| match &portal.parameter_format {
        Format::UnifiedText => false,
        Format::UnifiedBinary => true,
        // One code for all, or one per parameter (a missing one is text).
        Format::Individual(codes) => {
            let code = if codes.len() == 1 {
                codes[0]
            } else {
                codes.get(i).copied().unwrap_or(0)
            };
            code == 1
        }
    };
    portal
        .parameters
        .iter()
        .enumerate()
        .map(|(i, raw)| {
            params::decode(
                i + 1,
                &stmt.param_types[i],
                stmt.param_sql_types[i],
                raw.as_deref(),
                binary(i),
            )
        })
        .collect()
}
