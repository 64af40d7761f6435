//! The store on a data directory (issue 18, `maestro serve --data-dir`).
//!
//! A table's data is copy-on-write: a one-row INSERT builds a whole new
//! version. Logging that version would make the log volume of a statement
//! proportional to the table's size, so the catalog row is logged *without*
//! its data (name, columns, keys and `seq`, the count of changes made to
//! it), and the data lives in two more durable tables of the same
//! `maestro_txn::Database`:
//!
//! - `sql_bases`: one [`Base`] per table — its data as of change `seq`
//!   (written by CREATE, CTAS and `load_tpch`, then by a fold);
//! - `sql_changes`: one [`Change`] per write statement — the row positions
//!   it deleted and the rows it appended, keyed by (table, seq).
//!
//! A statement inserts its change in the transaction that updates the
//! catalog row, so the two commit (and are logged) atomically and the log
//! volume is the rows changed. Recovery reads the checkpoint and the log into
//! these tables, then rebuilds each table's data: its base, then its changes
//! in `seq` order, each exactly the `rebuild` the statement did.
//!
//! A *fold* (before each checkpoint) makes a table's current data its base
//! and deletes its changes once they are many or large
//! ([`FoldPolicy::Threshold`]), so the change table and recovery's replay
//! stay short. Folding logs the table once, which the checkpoint right
//! after makes removable: per checkpoint, not per statement.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use maestro_storage::column::{Keep, Table};
use maestro_txn::{
    CheckpointReport, DataDirState, Database, DurabilityConfig, DurableError, RecoveryReport, RowId,
};
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use super::codec::{decode_table, encode_table};
use super::defaults::{ColumnDefault, Defaults};
use super::index::IndexDecl;
use super::spec::{ColumnSpec, ColumnType};
use super::{Entry, Store, txn_error};

/// What `create_data_dir` stores as the directory's meta: recovering
/// another kind of directory (TPC-C's) is refused by its tables' names
/// first, this guards the format.
const META: &[u8] = b"maestro-sql-store 1";

/// A table's data as of its `seq`-th change.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Base {
    /// The table's catalog row.
    pub(crate) table: RowId,
    pub(crate) seq: u64,
    #[serde(with = "table_bytes")]
    pub(crate) data: Arc<Table>,
}

/// One write statement's change of a table: `rebuild(keep = all rows but
/// `deleted`, appended)` of the previous version.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Change {
    pub(crate) table: RowId,
    /// The table's version after this change (1 + the previous one's).
    pub(crate) seq: u64,
    /// Row positions in the previous version, strictly ascending.
    pub(crate) deleted: Vec<u32>,
    #[serde(with = "table_bytes")]
    pub(crate) appended: Arc<Table>,
}

/// The durable tables besides the catalog.
pub(crate) struct DurableTables {
    pub(crate) bases: Arc<maestro_txn::Table<Base>>,
    pub(crate) changes: Arc<maestro_txn::Table<Change>>,
}

/// A column table inside a postcard row: [`encode_table`]'s bytes.
mod table_bytes {
    use super::*;

    pub(super) fn serialize<S: Serializer>(t: &Arc<Table>, s: S) -> Result<S::Ok, S::Error> {
        let mut bytes = Vec::new();
        encode_table(t, &mut bytes);
        s.serialize_bytes(&bytes)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Arc<Table>, D::Error> {
        struct Bytes;
        impl<'de> Visitor<'de> for Bytes {
            type Value = Arc<Table>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an encoded column table")
            }
            fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Arc<Table>, E> {
                decode_table(v)
                    .map(Arc::new)
                    .map_err(|e| E::custom(format!("column table: {e}")))
            }
        }
        d.deserialize_bytes(Bytes)
    }
}

/// A catalog row as logged: everything but the data.
#[derive(Serialize)]
struct EntryMetaRef<'a> {
    name: &'a str,
    columns: &'a [ColumnSpec],
    unique_columns: &'a [String],
    seq: u64,
    indexes: &'a [IndexDecl],
    keys: &'a [Vec<String>],
    defaults: &'a [ColumnDefault],
    drawn: &'a [i64],
    unique_indexes: &'a [String],
}

/// [`EntryMetaRef`] read back (same field order and encodings).
struct EntryMeta {
    name: String,
    columns: Vec<ColumnSpec>,
    unique_columns: Vec<String>,
    seq: u64,
    indexes: Vec<IndexDecl>,
    keys: Vec<Vec<String>>,
    defaults: Vec<ColumnDefault>,
    drawn: Vec<i64>,
    unique_indexes: Vec<String>,
}

impl<'de> Deserialize<'de> for EntryMeta {
    /// By hand for the fields that came later: `indexes` with CREATE
    /// INDEX, `keys` with CREATE TABLE's composite keys, `defaults` and
    /// `drawn` with column defaults, `unique_indexes` with CREATE UNIQUE
    /// INDEX; a row logged before them ends after
    /// `seq` (or a later one of them) — the read of a missing field then
    /// fails at the row's end, and the row declares no index, no composite
    /// key, no default. (Any other failure there would be a
    /// damaged row, which the log's and the checkpoint's checksums reject
    /// before a row is decoded.)
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<EntryMeta, D::Error> {
        struct Fields;
        impl<'de> Visitor<'de> for Fields {
            type Value = EntryMeta;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a SQL catalog row")
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut s: A) -> Result<EntryMeta, A::Error> {
                let short = |i| de::Error::invalid_length(i, &"a SQL catalog row");
                Ok(EntryMeta {
                    name: s.next_element()?.ok_or_else(|| short(0))?,
                    columns: s.next_element()?.ok_or_else(|| short(1))?,
                    unique_columns: s.next_element()?.ok_or_else(|| short(2))?,
                    seq: s.next_element()?.ok_or_else(|| short(3))?,
                    indexes: s.next_element().ok().flatten().unwrap_or_default(),
                    keys: s.next_element().ok().flatten().unwrap_or_default(),
                    defaults: s.next_element().ok().flatten().unwrap_or_default(),
                    drawn: s.next_element().ok().flatten().unwrap_or_default(),
                    unique_indexes: s.next_element().ok().flatten().unwrap_or_default(),
                })
            }
        }
        const FIELDS: &[&str] = &[
            "name",
            "columns",
            "unique_columns",
            "seq",
            "indexes",
            "keys",
            "defaults",
            "drawn",
            "unique_indexes",
        ];
        d.deserialize_struct("EntryMeta", FIELDS, Fields)
    }
}

impl Serialize for Entry {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        EntryMetaRef {
            name: &self.name,
            columns: &self.columns,
            unique_columns: &self.unique_columns,
            seq: self.seq,
            indexes: &self.indexes,
            keys: &self.keys,
            defaults: self.defaults.declared(),
            drawn: &self.drawn,
            unique_indexes: &self.unique_indexes,
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Entry {
    /// The data is an empty placeholder until recovery rebuilds it from the
    /// table's base and changes.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Entry, D::Error> {
        let m = EntryMeta::deserialize(d)?;
        let data = Table::new(
            m.name.clone(),
            m.columns
                .iter()
                .map(|c| (c.name.clone(), c.ty.empty_column())),
        )
        .map_err(|e| de::Error::custom(format!("table {}: {e}", m.name)))?;
        let defaults = Defaults::new(m.defaults)
            .map_err(|e| de::Error::custom(format!("table {}: {e}", m.name)))?;
        Ok(Entry {
            name: m.name,
            columns: m.columns,
            unique_columns: m.unique_columns,
            keys: m.keys,
            indexes: m.indexes,
            unique_indexes: m.unique_indexes,
            defaults: Arc::new(defaults),
            drawn: m.drawn,
            seq: m.seq,
            data: Arc::new(data),
            null_masks: OnceLock::new(),
            def: OnceLock::new(),
            shape_token: OnceLock::new(),
            own_view: None,
            merged_from: None,
            plain: super::PlainSlot::default(),
            delta_indexes: Vec::new(),
            delta_flagged: None,
            delta: None,
        })
    }
}

/// Which tables a fold folds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FoldPolicy {
    /// Every table with changes.
    All,
    /// Tables whose changes are at least [`FOLD_CHANGES_MIN`] statements
    /// or touch at least a quarter of the table's rows.
    Threshold,
}

/// Pending changes of a table that make a fold worth its cost (logging and
/// checkpointing the whole table once). Guessed: recovery replays at most
/// this many rebuilds of a table, each a copy of it.
pub const FOLD_CHANGES_MIN: usize = 32;

/// What a fold did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FoldReport {
    pub tables: usize,
    pub changes_removed: usize,
    /// The fold lost a race with a concurrent DDL statement and was
    /// skipped (the changes stay; the next checkpoint folds them).
    pub skipped: Option<String>,
}

/// How [`Store::open_data_dir`] opened the directory.
#[derive(Debug)]
pub enum Opened {
    Created(CheckpointReport),
    Recovered {
        recovery: RecoveryReport,
        tables: usize,
        rows: u64,
        /// Changes replayed onto the tables' bases.
        changes: usize,
        /// Time rebuilding the tables' data took (after the log's replay).
        rebuild: Duration,
    },
}

/// Why a data directory did not open.
#[derive(Debug)]
pub enum OpenError {
    Durable(DurableError),
    /// The recovered tables do not fit together (a bug or a foreign
    /// directory): never repaired silently.
    Inconsistent(String),
    Sql(crate::SqlError),
}

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpenError::Durable(e) => write!(f, "{e}"),
            OpenError::Inconsistent(e) => write!(f, "inconsistent SQL store: {e}"),
            OpenError::Sql(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for OpenError {}

impl From<DurableError> for OpenError {
    fn from(e: DurableError) -> Self {
        OpenError::Durable(e)
    }
}

impl From<crate::SqlError> for OpenError {
    fn from(e: crate::SqlError) -> Self {
        OpenError::Sql(e)
    }
}

/// The rows of `rows` rows that survive deleting `deleted` (strictly
/// ascending, each below `rows`), or why `deleted` is not that.
pub(crate) fn kept(rows: usize, deleted: &[u32]) -> Result<Vec<u32>, String> {
    if deleted.windows(2).any(|w| w[0] >= w[1])
        || deleted.last().is_some_and(|&r| r as usize >= rows)
    {
        return Err(format!(
            "deleted positions not strictly ascending below {rows}"
        ));
    }
    let mut keep = Vec::with_capacity(rows - deleted.len());
    let mut d = deleted.iter().peekable();
    for r in 0..rows as u32 {
        if d.peek() == Some(&&r) {
            d.next();
        } else {
            keep.push(r);
        }
    }
    Ok(keep)
}

/// `data` after `deleted` and `appended` (what a write statement builds).
pub(crate) fn apply(data: &Table, deleted: &[u32], appended: &Table) -> Result<Table, String> {
    let keep = if deleted.is_empty() {
        None
    } else {
        Some(kept(data.num_rows(), deleted)?)
    };
    let keep = keep.as_deref().map_or(Keep::All, Keep::Rows);
    data.rebuild(keep, appended).map_err(|e| e.to_string())
}

impl Store {
    /// A store whose tables are registered durable in a new database (lock
    /// rows not yet made: recovery needs a database without commits).
    fn unopened(track_changes: bool) -> Result<Store, DurableError> {
        let db = maestro_txn::Database::default();
        let tables = maestro_txn::Table::new("sql_catalog");
        let bases = maestro_txn::Table::new("sql_bases");
        let changes = maestro_txn::Table::new("sql_changes");
        db.make_durable(&tables)?;
        db.make_durable(&bases)?;
        db.make_durable(&changes)?;
        Ok(Store {
            db,
            tables,
            name_locks: maestro_txn::Table::new("sql_name_locks"),
            lock_rows: Vec::new(),
            durable: Some(DurableTables { bases, changes }),
            track_changes,
            merge_wanted: Default::default(),
            pending: Default::default(),
            row_locks: Default::default(),
            sequences: Default::default(),
            plans: Default::default(),
        })
    }

    /// Opens the store in `dir`: recovers it if it holds one, else creates
    /// it with what `initial` puts into a new store (e.g. TPC-H) as the
    /// first checkpoint. Every commit is then logged per `config` (with
    /// [`maestro_txn::Durability::Off`] nothing after the first checkpoint
    /// survives a restart).
    pub fn open_data_dir(
        dir: &Path,
        config: DurabilityConfig,
        initial: &dyn Fn(&Store) -> crate::error::Result<()>,
    ) -> Result<(Store, Opened), OpenError> {
        let track = config.durability != maestro_txn::Durability::Off;
        let mut store = Store::unopened(track)?;
        match Database::data_dir_state(dir)? {
            DataDirState::Empty => {
                store.make_lock_rows()?;
                initial(&store)?;
                let report = store.db.create_data_dir(dir, config, META)?;
                Ok((store, Opened::Created(report)))
            }
            DataDirState::HoldsData => {
                let recovery = store.db.recover(dir, config)?;
                if recovery.meta != META {
                    return Err(OpenError::Inconsistent(format!(
                        "{} is not a SQL store's data directory (meta {:?})",
                        dir.display(),
                        String::from_utf8_lossy(&recovery.meta)
                    )));
                }
                let started = Instant::now();
                let (tables, rows, changes) = store.rebuild_tables()?;
                store.make_lock_rows()?;
                Ok((
                    store,
                    Opened::Recovered {
                        recovery,
                        tables,
                        rows,
                        changes,
                        rebuild: started.elapsed(),
                    },
                ))
            }
        }
    }

    /// After recovery: every catalog row's data from its base and changes
    /// (tables, rows, changes replayed).
    fn rebuild_tables(&self) -> Result<(usize, u64, usize), OpenError> {
        let d = self.durable.as_ref().expect("a durable store");
        let mut txn = self.begin()?;
        let mut entries = Vec::new();
        txn.scan(&self.tables, |row, e| entries.push((row, Arc::clone(e))));
        let mut bases = HashMap::new();
        let mut dup = None;
        txn.scan(&d.bases, |_, b| {
            if bases.insert(b.table, b.clone()).is_some() {
                dup = Some(b.table);
            }
        });
        if let Some(t) = dup {
            return Err(OpenError::Inconsistent(format!(
                "two bases of catalog row {t}"
            )));
        }
        let mut changes: HashMap<RowId, Vec<Change>> = HashMap::new();
        txn.scan(&d.changes, |_, c| {
            changes.entry(c.table).or_default().push(c.clone())
        });
        for (_, e) in &entries {
            if let Some(c) = e
                .columns
                .iter()
                .find(|c| matches!(c.ty, ColumnType::Float64Bits | ColumnType::Float32Bits))
            {
                return Err(OpenError::Inconsistent(format!(
                    "table {}: column {} is a {} stored as the double's own bits, as \
                     builds of 2026-11-28 before ordered bits wrote it; this build \
                     cannot read it (open the directory with such a build and copy \
                     the table out)",
                    e.name,
                    c.name,
                    c.ty.pg_name()
                )));
            }
        }
        let (mut rows, mut replayed) = (0u64, 0usize);
        for (row, entry) in &entries {
            let bad =
                |what: String| OpenError::Inconsistent(format!("table {}: {what}", entry.name));
            let base = bases
                .remove(row)
                .ok_or_else(|| bad("no base".to_string()))?;
            let mut data = base.data;
            let mut seq = base.seq;
            let mut mine = changes.remove(row).unwrap_or_default();
            mine.sort_by_key(|c| c.seq);
            for c in mine.iter().filter(|c| c.seq > base.seq) {
                if c.seq != seq + 1 {
                    return Err(bad(format!("change {} follows change {seq}", c.seq)));
                }
                data = Arc::new(
                    apply(&data, &c.deleted, &c.appended)
                        .map_err(|e| bad(format!("change {}: {e}", c.seq)))?,
                );
                seq = c.seq;
                replayed += 1;
            }
            if seq != entry.seq {
                return Err(bad(format!(
                    "the catalog is at change {} but the base and changes reach {seq}",
                    entry.seq
                )));
            }
            rows += data.num_rows() as u64;
            let rebuilt = Entry {
                name: entry.name.clone(),
                columns: entry.columns.clone(),
                unique_columns: entry.unique_columns.clone(),
                keys: entry.keys.clone(),
                indexes: entry.indexes.clone(),
                unique_indexes: entry.unique_indexes.clone(),
                defaults: Arc::clone(&entry.defaults),
                drawn: entry.drawn.clone(),
                seq,
                data,
                null_masks: OnceLock::new(),
                def: OnceLock::new(),
                shape_token: OnceLock::new(),
                own_view: None,
                merged_from: None,
                plain: super::PlainSlot::default(),
                delta_indexes: Vec::new(),
                delta_flagged: None,
                delta: None,
            };
            // Recovery pays the declared indexes' builds, not the first
            // queries.
            rebuilt.build_indexes(&rebuilt.data);
            // Logged without its data: a cheap put.
            txn.update(&self.tables, *row, Arc::new(rebuilt))
                .map_err(txn_error)?;
        }
        if let Some(t) = bases.keys().chain(changes.keys()).next() {
            return Err(OpenError::Inconsistent(format!(
                "a base or change of catalog row {t}, which holds no table"
            )));
        }
        self.commit(txn)?;
        Ok((entries.len(), rows, replayed))
    }

    /// Records a write statement's change of table `row` (durable stores
    /// that log; a no-op otherwise).
    pub(crate) fn log_change(
        &self,
        txn: &mut maestro_txn::Transaction,
        change: Change,
    ) -> crate::error::Result<()> {
        match &self.durable {
            Some(d) if self.track_changes => {
                txn.insert(&d.changes, change).map_err(txn_error)?;
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// A new table's base (`data` at seq 0).
    pub(crate) fn put_base(
        &self,
        txn: &mut maestro_txn::Transaction,
        table: RowId,
        data: &Arc<Table>,
    ) -> crate::error::Result<()> {
        if let Some(d) = &self.durable {
            let base = Base {
                table,
                seq: 0,
                data: Arc::clone(data),
            };
            txn.insert(&d.bases, base).map_err(txn_error)?;
        }
        Ok(())
    }

    /// A dropped table's base and changes, deleted with its catalog row.
    pub(crate) fn drop_data(
        &self,
        txn: &mut maestro_txn::Transaction,
        table: RowId,
    ) -> crate::error::Result<()> {
        let Some(d) = &self.durable else {
            return Ok(());
        };
        let mut base_rows = Vec::new();
        txn.scan(&d.bases, |row, b| {
            if b.table == table {
                base_rows.push(row);
            }
        });
        let mut change_rows = Vec::new();
        txn.scan(&d.changes, |row, c| {
            if c.table == table {
                change_rows.push(row);
            }
        });
        for row in base_rows {
            txn.delete(&d.bases, row).map_err(txn_error)?;
        }
        for row in change_rows {
            txn.delete(&d.changes, row).map_err(txn_error)?;
        }
        Ok(())
    }

    /// Makes the current data of tables with pending changes (per `policy`)
    /// their bases and deletes those changes, in one transaction. A table
    /// whose changes were not all recorded (a store without a log) is
    /// always folded.
    pub fn fold(&self, policy: FoldPolicy) -> crate::error::Result<FoldReport> {
        let Some(d) = &self.durable else {
            return Ok(FoldReport::default());
        };
        let mut txn = self.begin()?;
        let mut pending: HashMap<RowId, Vec<(RowId, usize)>> = HashMap::new();
        txn.scan(&d.changes, |row, c| {
            let touched = c.deleted.len() + c.appended.num_rows();
            pending.entry(c.table).or_default().push((row, touched));
        });
        let mut bases = HashMap::new();
        txn.scan(&d.bases, |row, b| {
            bases.insert(b.table, (row, b.seq));
        });
        let mut entries = Vec::new();
        txn.scan(&self.tables, |row, e| entries.push((row, Arc::clone(e))));
        let mut report = FoldReport::default();
        for (table, entry) in entries {
            let Some(&(base_row, base_seq)) = bases.get(&table) else {
                continue;
            };
            if base_seq == entry.seq {
                continue;
            }
            let changes = pending.remove(&table).unwrap_or_default();
            let recorded = changes.len() as u64 == entry.seq - base_seq;
            let touched: usize = changes.iter().map(|c| c.1).sum();
            let worth = !recorded
                || changes.len() >= FOLD_CHANGES_MIN
                || touched.saturating_mul(4) >= entry.num_rows();
            if policy == FoldPolicy::Threshold && !worth {
                continue;
            }
            let base = Base {
                table,
                seq: entry.seq,
                data: entry.materialized()?,
            };
            let write = |txn: &mut maestro_txn::Transaction| {
                txn.update(&d.bases, base_row, base)?;
                for (row, _) in &changes {
                    txn.delete(&d.changes, *row)?;
                }
                Ok::<_, maestro_txn::TxnError>(())
            };
            if let Err(e) = write(&mut txn) {
                txn.abort();
                return Ok(FoldReport {
                    skipped: Some(e.to_string()),
                    ..FoldReport::default()
                });
            }
            report.tables += 1;
            report.changes_removed += changes.len();
        }
        match txn.commit() {
            Ok(_) => Ok(report),
            Err(e) => Ok(FoldReport {
                skipped: Some(e.to_string()),
                ..FoldReport::default()
            }),
        }
    }

    /// Folds per `policy` and writes a checkpoint. Refused without a log
    /// (durability off): changes are not recorded then, so a write that
    /// commits between the fold and the checkpoint's snapshot would leave
    /// a catalog row ahead of its data in the checkpoint.
    pub fn checkpoint(
        &self,
        policy: FoldPolicy,
    ) -> Result<(FoldReport, CheckpointReport), OpenError> {
        if !self.track_changes {
            return Err(OpenError::Durable(DurableError::State {
                reason: "a checkpoint of the SQL store needs a log (durability sync or group)"
                    .into(),
            }));
        }
        let fold = self.fold(policy)?;
        let report = self.db.checkpoint()?;
        Ok((fold, report))
    }

    /// The log's counters (`None` without a log).
    pub fn log_stats(&self) -> Option<maestro_txn::LogStats> {
        self.db.log_stats()
    }

    /// Pending change records (what a fold would remove).
    pub fn changes_pending(&self) -> usize {
        let Some(d) = &self.durable else {
            return 0;
        };
        let Ok(mut txn) = self.begin() else {
            return 0;
        };
        let mut n = 0;
        txn.scan(&d.changes, |_, _| n += 1);
        txn.abort();
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A catalog row as logged before indexes existed.
    #[derive(Serialize)]
    struct OldMeta<'a> {
        name: &'a str,
        columns: &'a [ColumnSpec],
        unique_columns: &'a [String],
        seq: u64,
    }

    /// A catalog row as logged before composite keys were.
    #[derive(Serialize)]
    struct OldMetaWithIndexes<'a> {
        name: &'a str,
        columns: &'a [ColumnSpec],
        unique_columns: &'a [String],
        seq: u64,
        indexes: &'a [IndexDecl],
    }

    #[test]
    fn catalog_rows_round_trip_and_old_rows_declare_no_index_nor_key() {
        let columns = [ColumnSpec {
            name: "k".into(),
            ty: super::super::ColumnType::Int64,
        }];
        let old = postcard::to_allocvec(&OldMeta {
            name: "t",
            columns: &columns,
            unique_columns: &[],
            seq: 7,
        })
        .unwrap();
        let e: Entry = postcard::from_bytes(&old).unwrap();
        assert_eq!((e.name.as_str(), e.seq, e.indexes.len()), ("t", 7, 0));
        let decl = IndexDecl {
            name: "t_k".into(),
            column: "k".into(),
        };
        let with_index = Entry {
            indexes: vec![decl.clone()],
            ..e
        };
        // A row logged with indexes but before composite keys.
        let before_keys = postcard::to_allocvec(&OldMetaWithIndexes {
            name: "t",
            columns: &columns,
            unique_columns: &[],
            seq: 7,
            indexes: std::slice::from_ref(&decl),
        })
        .unwrap();
        let back: Entry = postcard::from_bytes(&before_keys).unwrap();
        assert_eq!((&back.indexes, back.keys.len()), (&vec![decl.clone()], 0));
        let key = vec!["k".to_string(), "j".to_string()];
        let new = Entry {
            keys: vec![key.clone()],
            ..with_index
        };
        let back: Entry = postcard::from_bytes(&postcard::to_allocvec(&new).unwrap()).unwrap();
        assert_eq!(
            (back.seq, back.indexes, back.keys),
            (7, vec![decl], vec![key])
        );
        // A row cut inside its known fields is still an error.
        assert!(postcard::from_bytes::<Entry>(&old[..old.len() - 1]).is_err());
    }

    #[test]
    fn doubles_stored_as_their_own_bits_are_refused_at_recovery() {
        let dir = std::env::temp_dir().join(format!("maestro-sql-legacy-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let config = || DurabilityConfig::new(maestro_txn::Durability::Sync);
        {
            // A catalog row as the raw-bit builds logged it.
            let (store, _) = Store::open_data_dir(&dir, config(), &|_| Ok(())).unwrap();
            let columns = vec![ColumnSpec {
                name: "x".into(),
                ty: ColumnType::Float64Bits,
            }];
            let data = Arc::new(
                Table::new("t", [("x", maestro_storage::column::Column::Int64(vec![]))]).unwrap(),
            );
            let mut txn = store.begin().unwrap();
            let row = txn
                .insert(
                    &store.tables,
                    Arc::new(Entry::first("t".into(), columns, Arc::clone(&data))),
                )
                .unwrap();
            store.put_base(&mut txn, row, &data).unwrap();
            store.commit(txn).unwrap();
        }
        let e = match Store::open_data_dir(&dir, config(), &|_| Ok(())) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("a raw-bit double column was read"),
        };
        assert!(
            e.contains("table t: column x is a double precision stored as the double's own bits"),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn legacy_double_columns_keep_their_variant_numbers() {
        use super::super::ColumnType;
        // The variant numbers the logs hold: the columns of doubles stored
        // as their own bits kept their places (recovery refuses them,
        // `rebuild_tables`), the ordered-bit ones came after.
        let tag = |ty| postcard::to_allocvec(&ty).unwrap();
        assert_eq!(tag(ColumnType::Float64Bits), [8]);
        assert_eq!(tag(ColumnType::Float32Bits), [9]);
        assert_eq!(tag(ColumnType::Float64), [10]);
        assert_eq!(tag(ColumnType::Float32), [11]);
    }
}
