//! The transactional store of SQL tables: one catalog of named column
//! tables, each a versioned row of a `maestro_txn::Table<Arc<Entry>>` in one
//! `maestro_txn::Database` — the pattern of `maestro_tpch::SharedDatabase`.
//!
//! A write builds the table's next version — its main shared, its delta
//! changed, or a merged table when the delta cannot hold the change
//! (`merge.rs`) — and its commit installs it with `update`; CREATE TABLE
//! inserts a catalog row and DROP TABLE deletes it, so DDL is transactional
//! too. A statement reads
//! the tables its transaction sees ([`View`]: its snapshot plus its own
//! writes), so no operator pays for versioning. The unit of versioning is the
//! table, but conflicts are per row: a transaction's writes wait beside its
//! snapshot (`pending.rs`) and are installed at its commit on the newest
//! version of each table, and only a row two transactions both changed gets
//! [`ErrorKind::SerializationFailure`] — first committer wins (`rebase.rs`).
//! (`maestro serve` runs an autocommitted [`is_row_write`] statement that
//! conflicts again on a fresh snapshot.)
//!
//! Names: a [`View`] is a scan of the catalog (the visible rows by name; the
//! catalog holds a few rows per table, so a scan per statement is cheap). Two
//! transactions creating or dropping one name serialize through a lock row
//! the name hashes to (first-updater-wins again), so two concurrent CREATEs
//! of one name cannot both commit.
//!
//! On a data directory ([`Store::open_data_dir`], `maestro serve
//! --data-dir`) the catalog is durable, and each write statement also
//! records its change (deleted positions, appended rows) so the log holds
//! the rows it changed, not its table: `durable.rs`.

mod alter;
mod codec;
pub(crate) mod convert;
mod copy;
mod ddl;
mod defaults;
mod dml;
mod durable;
mod for_update;
mod generated;
mod index;
mod keys;
mod merge;
mod nulls;
mod pending;
mod rebase;
mod refresh;
mod returning;
mod row_locks;
mod spec;
mod unique;
mod upsert;

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, OnceLock};

use maestro_storage::column::{Delta, DeltaIndex, FxHasher, Table};
use maestro_txn::{Isolation, RowId, Transaction, TxnError};
use sqlparser::ast::{ObjectType, Statement};

use crate::catalog::{Catalog, IndexInfo, TableDef, table_def};
use crate::error::{ErrorKind, Result, SqlError};
use crate::params::ParamValue;
use crate::plan_cache::{PlanCache, PlanCacheStats};

pub use copy::{CopyFormat, CopyFrom, copy_from};
pub use defaults::{ColumnDefault, Defaults};
pub use dml::{Executed, QueryRunner, Written};
pub use durable::{FOLD_CHANGES_MIN, FoldPolicy, FoldReport, OpenError, Opened};
pub use index::IndexDecl;
pub use merge::{DELTA_ROWS_MAX, MERGE_ROWS_MIN, MergeReport, MergeScope, merge_rows_min};
pub use rebase::WRITE_WAIT_MAX;
pub use refresh::{RefreshReaders, StoreRefresh};
pub use returning::Returned;
pub use row_locks::{ROW_LOCKS_PER_STATEMENT_MAX, ROW_WAIT_MAX};
pub use spec::{ColumnSpec, ColumnType};

/// Whether `stmt` is a write [`Store::execute`] runs (or COPY FROM STDIN):
/// it returns no rows.
pub fn is_write(stmt: &Statement) -> bool {
    matches!(
        stmt,
        Statement::CreateTable(_)
            | Statement::Drop {
                object_type: ObjectType::Table | ObjectType::Index,
                ..
            }
            | Statement::CreateIndex(_)
            | Statement::AlterTable(_)
            | Statement::Insert(_)
            | Statement::Update(_)
            | Statement::Delete(_)
            | Statement::Copy { .. }
    )
}

/// Whether `stmt` changes rows of one table and nothing else: INSERT,
/// UPDATE, DELETE (its whole input is the statement: COPY FROM STDIN
/// consumes the client's data). Such a statement, autocommitted, may run
/// again on a fresh snapshot after a write-write conflict.
pub fn is_row_write(stmt: &Statement) -> bool {
    matches!(
        stmt,
        Statement::Insert(_) | Statement::Update(_) | Statement::Delete(_)
    )
}

/// Lock rows that CREATE/DROP of a name update (names hash onto them).
/// More rows make spurious conflicts between DDL on different names rarer.
const NAME_LOCKS: usize = 64;

/// One table as the catalog stores it: its name, declared columns, key
/// columns (for join ordering) and its data.
#[derive(Debug)]
pub struct Entry {
    pub name: String,
    pub columns: Vec<ColumnSpec>,
    pub unique_columns: Vec<String>,
    /// Composite keys: column sets whose values together are unique (CH's
    /// `(o_w_id, o_d_id, o_id)` from `CALL maestro.load_ch`, a CREATE
    /// TABLE's `PRIMARY KEY (a, b)`: `keys.rs`), enforced on writes like
    /// the unique columns (`unique.rs`).
    pub keys: Vec<Vec<String>>,
    /// The indexes declared on the table (CREATE INDEX: `index.rs`).
    pub indexes: Vec<IndexDecl>,
    /// The indexes CREATE UNIQUE INDEX declared that made their column a
    /// key (in `unique_columns`); dropping one drops its key (`index.rs`).
    pub unique_indexes: Vec<String>,
    /// What an INSERT puts in a column it gives no value (`defaults.rs`);
    /// shared by the table's versions.
    pub defaults: Arc<Defaults>,
    /// Per column, the largest value its sequence handed to a write this
    /// version includes (0: none; empty: no column drew): where the
    /// sequence resumes after a restart (`defaults.rs`, "Sequences").
    pub drawn: Vec<i64>,
    /// Write statements applied to the table since it was created (the
    /// durable store's change sequence: `durable.rs`).
    pub seq: u64,
    /// The main part: immutable, read-optimized (what loads and merges
    /// build).
    pub data: Arc<Table>,
    /// The writes since the main was built (`None`: none), merged into a
    /// new main in the background (`merge.rs`) or, past
    /// [`merge::DELTA_ROWS_MAX`], by the write itself.
    pub delta: Option<Arc<Delta>>,
    /// Per declared column, where this version is NULL: computed from the
    /// hidden mask columns on first use ([`Entry::null_masks`], `nulls.rs`).
    pub(super) null_masks: OnceLock<Vec<Option<Arc<Vec<bool>>>>>,
    /// The planner's definition of this version ([`entry_def`]), computed
    /// on first use: a statement's binder and optimizer ask for it many
    /// times (every scan, every index choice), and each computation walks
    /// the columns' NULL flags and clones their names.
    pub(super) def: OnceLock<TableDef>,
    /// [`Entry::shape_token`], computed on first use: every statement
    /// planned through the plan cache asks it of every table it reads.
    pub(super) shape_token: OnceLock<u64>,
    /// Set on a version a transaction wrote over a newer one than its
    /// snapshot's: what that transaction itself reads (`rebase.rs`).
    pub(super) own_view: Option<rebase::OwnView>,
    /// The merge that built this version's main, if a background merge did:
    /// lets a transaction whose snapshot read the main before install its
    /// writes on this one (`rebase.rs`). Kept while the main stays.
    pub(super) merged_from: Option<Arc<rebase::MergeOrigin>>,
    /// Main and delta merged into one column table, built once per version
    /// for the readers that read plain column tables (the hand-written
    /// TPC-H plans: [`Entry::plain`]) and reused by the merge that swaps
    /// it in (`merge.rs`). Freed with the version. A scheduler-aware lock,
    /// not a `OnceLock`: a reader waiting for another's build counts as a
    /// *blocked* worker, so the builder's fork-join tasks get its context.
    pub(super) plain: PlainSlot,
    /// Per indexed column, the index of the delta's appended rows
    /// (`index.rs`, "The delta's index"): extended by each write from the
    /// version it wrote over; empty where a version did not come from a
    /// write (a merge, DDL), which a lookup then makes up by scanning.
    pub(super) delta_indexes: Vec<(usize, DeltaIndex)>,
    /// Per data column, whether it is a NULL-mask column flagging one of
    /// the delta's appended rows, carried from version to version by the
    /// writes (`nulls.rs`, `Entry::delta_flagged_after`); `None` where a
    /// version did not come from a write, which a reader then scans for.
    pub(super) delta_flagged: Option<Vec<bool>>,
}

impl Entry {
    /// A table's first version — a created, loaded or altered one: `data`
    /// as its main, no delta, change 0, and no keys, indexes, defaults or
    /// sequence draws (the caller sets those it has).
    fn first(name: String, columns: Vec<ColumnSpec>, data: Arc<Table>) -> Entry {
        Entry {
            name,
            columns,
            unique_columns: Vec::new(),
            keys: Vec::new(),
            indexes: Vec::new(),
            unique_indexes: Vec::new(),
            defaults: Arc::default(),
            drawn: Vec::new(),
            seq: 0,
            data,
            null_masks: OnceLock::new(),
            def: OnceLock::new(),
            shape_token: OnceLock::new(),
            own_view: None,
            merged_from: None,
            plain: PlainSlot::default(),
            delta_indexes: Vec::new(),
            delta_flagged: None,
            delta: None,
        }
    }

    /// The table's next version, holding `data` (same schema).
    fn with_data(&self, data: Table) -> Entry {
        self.with_data_of(Arc::new(data))
    }

    /// Records that a write drew `drawn` — (column, largest value) — from
    /// the table's sequences (`defaults.rs`).
    fn raise_drawn(&mut self, drawn: &[(usize, i64)]) {
        if !drawn.is_empty() {
            self.drawn = defaults::raised(&self.drawn, self.columns.len(), drawn);
        }
    }

    /// The delta, if it holds any write.
    pub fn live_delta(&self) -> Option<&Delta> {
        self.delta.as_deref().filter(|d| !d.is_empty())
    }

    /// Rows of the table (main and delta).
    pub fn num_rows(&self) -> usize {
        self.live_delta()
            .map_or(self.data.num_rows(), Delta::live_rows)
    }

    /// The combined ids of the table's rows, ascending (DML's row
    /// positions; without a delta, `0..num_rows`).
    pub fn live_ids(&self) -> Vec<u32> {
        match self.live_delta() {
            Some(d) => d.live_ids().to_vec(),
            None => (0..self.data.num_rows() as u32).collect(),
        }
    }

    /// The table as one column table: the main when there is no delta,
    /// else main and delta merged (O(table)).
    pub fn materialized(&self) -> Result<Arc<Table>> {
        match self.live_delta() {
            None => Ok(Arc::clone(&self.data)),
            Some(d) => d.merge(&self.data).map(Arc::new).map_err(SqlError::store),
        }
    }
}

/// [`Entry::plain`]'s table once built (or why it could not be).
pub(super) type PlainSlot =
    maestro_scheduler::sync::Mutex<Option<std::result::Result<Arc<Table>, String>>>;

/// The SQL tables, versioned. Shared by every session (behind an `Arc`).
pub struct Store {
    db: maestro_txn::Database,
    tables: Arc<maestro_txn::Table<Arc<Entry>>>,
    /// Not durable: recreated on every start (the counts only conflict).
    name_locks: Arc<maestro_txn::Table<u64>>,
    lock_rows: Vec<RowId>,
    /// The bases and changes of a store on a data directory.
    durable: Option<durable::DurableTables>,
    /// Whether write statements record their changes (a durable store
    /// whose commits are logged).
    track_changes: bool,
    /// A write left a delta past [`merge::merge_rows_min`]: a background
    /// merge is worth running ([`Store::take_merge_request`]).
    merge_wanted: std::sync::atomic::AtomicBool,
    /// Writes of running transactions, installed at their commit
    /// (`pending.rs`, `rebase.rs`).
    pending: pending::PendingWrites,
    /// Rows (and inserted key values) running transactions' writes and
    /// `SELECT … FOR UPDATE`s hold until they end (`row_locks.rs`).
    row_locks: row_locks::RowLocks,
    /// The serial and identity columns' counters (`defaults.rs`).
    sequences: defaults::Sequences,
    /// Plans kept across executions of a statement, for every session
    /// (`plan_cache.rs`); a view's [`Catalog::plan_token`]s say when a
    /// table changed under one.
    plans: Arc<PlanCache>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("table_versions", &self.tables.versions())
            .finish()
    }
}

/// A transaction error as a SQL error: a conflict is a serialization
/// failure (40001), as PostgreSQL reports it under REPEATABLE READ.
pub fn txn_error(e: TxnError) -> SqlError {
    match e {
        TxnError::WriteConflict { .. }
        | TxnError::SnapshotTooOld { .. }
        | TxnError::ReadValidation { .. }
        | TxnError::ScanValidation { .. } => SqlError::new(
            ErrorKind::SerializationFailure,
            "could not serialize access due to concurrent update",
        ),
        other => SqlError::new(ErrorKind::Store, other.to_string()),
    }
}

impl Default for Store {
    fn default() -> Store {
        Store::new()
    }
}

impl Store {
    /// An empty store in a database of its own.
    pub fn new() -> Store {
        let mut store = Store {
            db: maestro_txn::Database::default(),
            tables: maestro_txn::Table::new("sql_catalog"),
            name_locks: maestro_txn::Table::new("sql_name_locks"),
            lock_rows: Vec::new(),
            durable: None,
            track_changes: false,
            merge_wanted: Default::default(),
            pending: Default::default(),
            row_locks: Default::default(),
            sequences: Default::default(),
            plans: Default::default(),
        };
        store.make_lock_rows().expect("a new database commits");
        store
    }

    /// Creates the name lock rows. They exist before any transaction that
    /// could write them begins (a row created after a snapshot would
    /// conflict with it).
    fn make_lock_rows(&mut self) -> Result<()> {
        let mut t = self.begin()?;
        self.lock_rows = (0..NAME_LOCKS)
            .map(|_| t.insert(&self.name_locks, 0).map_err(txn_error))
            .collect::<Result<_>>()?;
        t.commit().map_err(txn_error)?;
        Ok(())
    }

    /// A transaction (snapshot isolation: PostgreSQL's REPEATABLE READ;
    /// READ COMMITTED moves its snapshot per statement,
    /// [`Store::refresh_snapshot`]).
    pub fn begin(&self) -> Result<Transaction> {
        self.pending.purge_finished();
        self.row_locks.purge_finished();
        self.db.begin(Isolation::Snapshot).map_err(txn_error)
    }

    /// Installs `txn`'s writes on the newest versions of their tables
    /// (`rebase.rs`: 40001 for a row another transaction changed since
    /// `txn`'s snapshot, 23505 for a key it inserted) and commits it, then
    /// frees the table versions no snapshot can see any more (they are
    /// whole tables: worth freeing now). On an error `txn` is aborted.
    pub fn commit(&self, mut txn: Transaction) -> Result<()> {
        let id = txn.id();
        let committed = self
            .install_all_pending(&mut txn)
            .and_then(|()| txn.commit().map_err(txn_error));
        // Waiters poll the transaction's end, which came first; this only
        // frees the entries.
        self.row_locks.release(id);
        let wrote = committed?.is_some();
        if wrote {
            self.db.collect(usize::MAX);
        }
        Ok(())
    }

    /// The tables `txn` sees: its snapshot plus its own writes.
    pub fn view(&self, txn: &mut Transaction) -> View {
        let mut tables = HashMap::new();
        let mut installed = HashMap::new();
        let me = txn.id();
        txn.scan(&self.tables, |row, entry| {
            let seen = match &entry.own_view {
                Some(own) if own.writer == me => {
                    installed.insert(entry.name.clone(), Arc::clone(entry));
                    Arc::clone(&own.view)
                }
                _ => Arc::clone(entry),
            };
            tables.insert(entry.name.clone(), (row, seen));
        });
        for (row, view) in self.pending.views(txn) {
            tables.insert(view.name.clone(), (row, view));
        }
        View {
            tables,
            installed,
            started_us: crate::types::epoch_us(txn.started_at()),
            give_up: None,
            plans: Arc::clone(&self.plans),
        }
    }

    /// How the statements planned on this store met its plan cache.
    pub fn plan_cache_stats(&self) -> PlanCacheStats {
        self.plans.stats()
    }

    /// Rows running transactions hold locks on now (tests; `row_locks.rs`).
    pub fn rows_locked(&self) -> usize {
        self.row_locks.held()
    }

    /// Transactions whose writes wait for their commit now (tests: an
    /// aborted one's are forgotten at the next `begin`).
    pub fn transactions_pending(&self) -> usize {
        self.pending.transactions()
    }

    /// Runs a write — CREATE TABLE, DROP TABLE, CREATE INDEX, DROP INDEX, INSERT, UPDATE, DELETE,
    /// COPY FROM a file — in `txn`; `None` for any other statement. On an
    /// error the caller aborts `txn` (a statement's partial writes are
    /// not undone one by one). A RETURNING list's rows are dropped: see
    /// [`Store::execute_returning`].
    pub fn execute(
        &self,
        txn: &mut Transaction,
        stmt: &Statement,
        params: &[ParamValue],
        run: QueryRunner,
    ) -> Option<Result<Written>> {
        self.execute_returning(txn, stmt, params, run)
            .map(|r| r.map(|e| e.written))
    }

    /// [`Store::execute`], with the rows a RETURNING list gives.
    pub fn execute_returning(
        &self,
        txn: &mut Transaction,
        stmt: &Statement,
        params: &[ParamValue],
        run: QueryRunner,
    ) -> Option<Result<Executed>> {
        self.execute_returning_until(txn, stmt, params, run, None)
    }

    /// [`Store::execute_returning`] of a statement that stops waiting for
    /// rows other transactions hold (`row_locks.rs`) once `give_up` says so
    /// — a cancel request or a statement timeout (57014).
    pub fn execute_returning_until(
        &self,
        txn: &mut Transaction,
        stmt: &Statement,
        params: &[ParamValue],
        run: QueryRunner,
        give_up: Option<GiveUp>,
    ) -> Option<Result<Executed>> {
        let view = |store: &Store, txn: &mut Transaction| View {
            give_up: give_up.clone(),
            ..store.view(txn)
        };
        let plain = |w: Written| Executed {
            written: w,
            returned: None,
        };
        let with_rows = |w: fn(u64) -> Written| {
            move |(n, returned): (u64, Option<Returned>)| Executed {
                written: w(n),
                returned,
            }
        };
        Some(match stmt {
            Statement::CreateTable(c) if c.query.is_some() => self
                .create_table_as(txn, c, params, run)
                .map(|n| plain(Written::CreateTableAs(n))),
            Statement::CreateTable(c) => self
                .create_table(txn, c, run)
                .map(|()| plain(Written::CreateTable)),
            Statement::Drop {
                object_type: ObjectType::Table,
                names,
                if_exists,
                ..
            } => self
                .drop_tables(txn, names, *if_exists)
                .map(|()| plain(Written::DropTable)),
            Statement::CreateIndex(c) => self
                .create_index(txn, c)
                .map(|()| plain(Written::CreateIndex)),
            Statement::AlterTable(a) => self
                .alter_table(txn, a, run)
                .map(|()| plain(Written::AlterTable)),
            Statement::Drop {
                object_type: ObjectType::Index,
                names,
                if_exists,
                ..
            } => self
                .drop_indexes(txn, names, *if_exists)
                .map(|()| plain(Written::DropIndex)),
            Statement::Insert(i) => {
                let view = view(self, txn);
                self.insert(txn, &view, i, params, run)
                    .map(with_rows(Written::Insert))
            }
            Statement::Query(q) if !q.locks.is_empty() => {
                let view = view(self, txn);
                self.select_for_update(txn, &view, q, params, run)
                    .map(|(n, rows)| Executed {
                        written: Written::Select(n),
                        returned: Some(rows),
                    })
            }
            Statement::Update(u) => {
                let view = view(self, txn);
                self.update(txn, &view, u, params, run)
                    .map(with_rows(Written::Update))
            }
            Statement::Delete(d) => {
                let view = view(self, txn);
                self.delete(txn, &view, d, params, run)
                    .map(with_rows(Written::Delete))
            }
            Statement::Copy { .. } => match copy_from(stmt)? {
                Ok(c) if c.file.is_some() => {
                    let view = self.view(txn);
                    self.copy_file(txn, &view, &c, run)
                        .map(|n| plain(Written::Copy(n)))
                }
                Ok(_) => Err(SqlError::unsupported(
                    "COPY FROM STDIN here (it needs a client connection)",
                )),
                Err(e) => Err(e),
            },
            _ => return None,
        })
    }

    /// Versions of tables stored now (old ones stay while a snapshot sees them).
    pub fn versions_stored(&self) -> usize {
        self.tables.versions()
    }

    /// Serializes DDL on `name` with every other transaction's.
    fn lock_name(&self, txn: &mut Transaction, name: &str) -> Result<()> {
        let mut h = DefaultHasher::new();
        name.hash(&mut h);
        let row = self.lock_rows[(h.finish() % NAME_LOCKS as u64) as usize];
        let n = txn.read(&self.name_locks, row).unwrap_or(0);
        txn.update(&self.name_locks, row, n.wrapping_add(1))
            .map_err(txn_error)
    }

    /// Puts the eight TPC-H tables of `db` (their primary keys as unique
    /// columns), replacing tables of those names, in one transaction of its
    /// own (statements already running finish on the old tables).
    pub fn put_tpch(&self, db: &maestro_tpch::Database) -> Result<()> {
        let tables = db
            .shared_tables()
            .into_iter()
            .map(|t| {
                let keys = crate::catalog::tpch_key(t.name())
                    .map(str::to_string)
                    .into_iter()
                    .collect();
                (t, keys)
            })
            .collect();
        let mut txn = self.begin()?;
        self.put_tables(&mut txn, tables)?;
        self.commit(txn)
    }

    /// Puts `tables` (name, data, key columns) into the catalog, replacing
    /// tables of the same names: what `CALL maestro.load_tpch(sf)` commits.
    pub fn put_tables(
        &self,
        txn: &mut Transaction,
        tables: Vec<(Arc<Table>, Vec<String>)>,
    ) -> Result<()> {
        let view = self.view(txn);
        for (data, unique_columns) in tables {
            let name = data.name().to_string();
            self.lock_name(txn, &name)?;
            if let Some((row, _)) = view.tables.get(&name) {
                // Replaced: its pending writes go with it.
                self.pending.take(txn, *row);
                txn.delete(&self.tables, *row).map_err(txn_error)?;
                self.drop_data(txn, *row)?;
            }
            let columns = data
                .schema()
                .fields()
                .iter()
                .map(|f| ColumnSpec {
                    name: f.name.clone(),
                    ty: ColumnType::of_data_type(f.data_type),
                })
                .collect();
            let entry = Entry {
                unique_columns,
                ..Entry::first(name, columns, Arc::clone(&data))
            };
            let row = txn
                .insert(&self.tables, Arc::new(entry))
                .map_err(txn_error)?;
            self.put_base(txn, row, &data)?;
        }
        Ok(())
    }
}

/// A table [`Store::put_loaded`] puts: its data, declared columns (SQL
/// types such as TIMESTAMP over the column store's), single-column keys and,
/// per column, where it is NULL. Cloning shares the data.
#[derive(Clone, Debug)]
pub struct LoadedTable {
    pub data: Arc<Table>,
    pub columns: Vec<ColumnSpec>,
    pub unique_columns: Vec<String>,
    /// Composite keys (column names), enforced on writes.
    pub keys: Vec<Vec<String>>,
    pub nulls: Vec<Option<Arc<Vec<bool>>>>,
}

impl Store {
    /// Puts `tables`, replacing tables of the same names, in one
    /// transaction of its own: what `CALL maestro.load_ch(w)` commits. A
    /// column with a mask becomes nullable (its mask a hidden column:
    /// `nulls.rs`).
    pub fn put_loaded(&self, tables: Vec<LoadedTable>) -> Result<()> {
        let mut txn = self.begin()?;
        let view = self.view(&mut txn);
        for t in tables {
            let name = t.data.name().to_string();
            if t.columns.len() != t.data.num_columns()
                || t.columns
                    .iter()
                    .zip(t.data.schema().fields())
                    .any(|(c, f)| c.name != f.name || !c.ty.stored_as(f.data_type))
                || t.nulls.len() > t.columns.len()
                || t.nulls
                    .iter()
                    .flatten()
                    .any(|m| m.len() != t.data.num_rows())
            {
                return Err(SqlError::invalid(format!(
                    "table {name}: its declared columns or NULL masks do not match its data"
                )));
            }
            if t.columns.iter().any(|c| nulls::is_mask(&c.name)) {
                return Err(SqlError::invalid(format!(
                    "table {name}: a column name with a NUL character"
                )));
            }
            let masks: Vec<(String, &[bool])> = t
                .columns
                .iter()
                .zip(&t.nulls)
                .filter_map(|(c, m)| Some((c.name.clone(), m.as_deref()?.as_slice())))
                .collect();
            let data = if masks.is_empty() {
                Arc::clone(&t.data)
            } else {
                Arc::new(nulls::with_masks(&t.data, &masks).map_err(SqlError::store)?)
            };
            self.lock_name(&mut txn, &name)?;
            if let Some((row, _)) = view.tables.get(&name) {
                txn.delete(&self.tables, *row).map_err(txn_error)?;
                self.drop_data(&mut txn, *row)?;
            }
            let entry = Entry {
                unique_columns: t.unique_columns,
                keys: t.keys,
                ..Entry::first(name, t.columns, Arc::clone(&data))
            };
            let row = txn
                .insert(&self.tables, Arc::new(entry))
                .map_err(txn_error)?;
            self.put_base(&mut txn, row, &data)?;
        }
        self.commit(txn)
    }
}

/// The tables one transaction sees, by name: a [`Catalog`] for binding and
/// running its statements.
/// A check a waiting statement makes: true once it should stop waiting
/// (cancelled, or past its timeout).
pub type GiveUp = Arc<dyn Fn() -> bool + Send + Sync>;

pub struct View {
    /// Each table as the transaction reads it.
    tables: HashMap<String, (RowId, Arc<Entry>)>,
    /// The versions this transaction wrote over a concurrent commit, where
    /// they differ from what it reads (`rebase.rs`).
    installed: HashMap<String, Arc<Entry>>,
    /// When the transaction began ([`Catalog::transaction_clock_us`]).
    started_us: i64,
    /// When a statement waiting for a row lock stops (`None`: never).
    give_up: Option<GiveUp>,
    /// The store's plan cache.
    plans: Arc<PlanCache>,
}

impl View {
    /// Whether a statement waiting on this view should stop now.
    pub(super) fn gives_up(&self) -> bool {
        self.give_up.as_ref().is_some_and(|g| g())
    }

    /// Table `name`'s catalog row and entry, or 42P01.
    pub fn entry(&self, name: &str) -> Result<(RowId, &Arc<Entry>)> {
        self.tables
            .get(name)
            .map(|(row, e)| (*row, e))
            .ok_or_else(|| unknown_table(name))
    }

    /// The version of `name` this transaction installed over a concurrent
    /// commit, when it differs from what the transaction reads.
    fn installed(&self, name: &str) -> Option<&Arc<Entry>> {
        self.installed.get(name)
    }

    /// 40001 when this transaction wrote `name` over a concurrent commit:
    /// DDL would build on what it reads and lose the committed rows.
    fn refuse_ddl_after_rebase(&self, name: &str) -> Result<()> {
        if self.installed.contains_key(name) {
            return Err(SqlError::new(
                ErrorKind::SerializationFailure,
                format!(
                    "could not serialize access: this transaction wrote table \"{name}\" over a \
                     concurrent write; change its definition in another transaction"
                ),
            ));
        }
        Ok(())
    }

    /// Table `name`'s rows as one column table (main and delta merged when
    /// it has a delta; [`Catalog::data`] is the main alone).
    pub fn materialized(&self, name: &str) -> Result<Arc<Table>> {
        self.entry(name)?.1.materialized()
    }
}

pub(crate) fn unknown_table(name: &str) -> SqlError {
    SqlError::new(
        ErrorKind::UnknownTable,
        format!("relation \"{name}\" does not exist"),
    )
}

/// How a table version presents itself to the binder: its declared
/// columns with their SQL types and whether this version holds NULLs in
/// them, its row count, and its keys over columns without NULLs.
impl Entry {
    /// The planner's definition of this version, cached ([`Entry::def`]).
    pub(crate) fn definition(&self) -> &TableDef {
        self.def.get_or_init(|| entry_def(self))
    }

    /// [`Catalog::plan_token`] of this version as a view reads it: its
    /// definition (columns, types, NULL flags, keys) but for the exact row
    /// count, whose bit length counts instead, and its declared indexes.
    pub(crate) fn plan_token(&self) -> u64 {
        let rows_bits = usize::BITS - self.num_rows().leading_zeros();
        token_as(self.shape_token(), &rows_bits)
    }

    /// [`Entry::plan_token`] without the rows: for a table whose plans do
    /// not depend on its size (the few rows a write returns). Hashed from
    /// the entry's fields, not from [`Entry::definition`] (every write
    /// makes a version, and a definition clones every column's name); the
    /// definition's keys and unique columns are these filtered by the NULL
    /// flags, which are hashed too.
    pub(crate) fn shape_token(&self) -> u64 {
        *self.shape_token.get_or_init(|| {
            let mut h = FxHasher::default();
            self.name.hash(&mut h);
            for (i, c) in self.columns.iter().enumerate() {
                (&c.name, c.ty.sql_type(), self.holds_nulls(i)).hash(&mut h);
            }
            (&self.unique_columns, &self.keys).hash(&mut h);
            for ix in &self.indexes {
                (&ix.name, &ix.column).hash(&mut h);
            }
            h.finish()
        })
    }
}

/// `token` of a table a wrapping catalog reads otherwise than its view
/// (`role` says how: its hidden row column, the rows a write appended), so
/// a plan kept under one is not used under the other.
pub(crate) fn token_as(token: u64, role: &(impl Hash + ?Sized)) -> u64 {
    let mut h = FxHasher::default();
    (token, role).hash(&mut h);
    h.finish()
}

fn entry_def(e: &Entry) -> TableDef {
    let mut def = table_def(&e.data);
    def.rows = e.num_rows();
    // The declared columns, not the hidden mask columns after them.
    def.columns.truncate(e.columns.len());
    // The declared types (a TIMESTAMP is an Int64 column underneath)
    // and which columns hold NULLs in this version.
    for (i, (c, spec)) in def.columns.iter_mut().zip(&e.columns).enumerate() {
        c.ty = spec.ty.sql_type();
        c.nullable = e.holds_nulls(i);
    }
    // A key over a column holding NULLs is no key: its NULL rows may
    // repeat (GROUP BY reading the others back at one of them would
    // fold them).
    let holds_nulls = |c: &String| {
        e.columns
            .iter()
            .position(|s| &s.name == c)
            .is_some_and(|i| e.holds_nulls(i))
    };
    def.unique_columns = e
        .unique_columns
        .iter()
        .filter(|c| !holds_nulls(c))
        .cloned()
        .collect();
    def.keys = e
        .keys
        .iter()
        .filter(|k| !k.iter().any(holds_nulls))
        .cloned()
        .collect();
    def
}

impl Catalog for View {
    fn table(&self, name: &str) -> Option<TableDef> {
        let (_, e) = self.tables.get(name)?;
        Some(e.definition().clone())
    }

    fn null_mask(&self, name: &str, column: usize) -> Option<Arc<Vec<bool>>> {
        let (_, e) = self.tables.get(name)?;
        e.null_masks().get(column)?.clone()
    }

    fn null_flags_at(&self, name: &str, column: usize, ids: &[u32]) -> Option<Vec<bool>> {
        self.tables.get(name)?.1.null_flags_at(column, ids)
    }

    fn plan_cache(&self) -> Option<&PlanCache> {
        Some(&self.plans)
    }

    fn plan_token(&self, name: &str) -> Option<u64> {
        Some(self.tables.get(name)?.1.plan_token())
    }

    fn transaction_clock_us(&self) -> Option<i64> {
        Some(self.started_us)
    }

    fn data(&self, name: &str) -> Option<&Table> {
        self.tables.get(name).map(|(_, e)| &*e.data)
    }

    fn delta(&self, name: &str) -> Option<&Delta> {
        self.tables.get(name)?.1.live_delta()
    }

    fn delta_index(&self, name: &str, column: usize) -> Option<&DeltaIndex> {
        self.tables.get(name)?.1.delta_index(column)
    }

    fn indexes(&self, name: &str) -> Vec<IndexInfo> {
        let Some((_, e)) = self.tables.get(name) else {
            return Vec::new();
        };
        e.indexes
            .iter()
            .filter_map(|d| {
                let column = e.data.column_index(&d.column).ok()?;
                Some(IndexInfo {
                    name: d.name.clone(),
                    column,
                })
            })
            .collect()
    }

    fn table_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.tables.keys().cloned().collect();
        names.sort();
        names
    }
}
