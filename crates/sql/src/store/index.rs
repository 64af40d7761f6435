//! CREATE INDEX and DROP INDEX: an index is a declaration in its table's
//! [`Entry`] (name and column), so it is transactional like the rest of
//! DDL (a rolled-back CREATE INDEX leaves nothing), logged with the catalog
//! row on a data directory (`durable.rs`), and carried to every next
//! version of the table, merged ones included.
//!
//! The index itself is the main's [`maestro_storage::column::SortedIndex`],
//! cached in the immutable main ([`Table::sorted_index`]): it never goes
//! stale. The declaration says which columns' indexes are built *eagerly*
//! — by CREATE INDEX for the current main, by a merge for the new one (in
//! the background task, or by a write that merges itself) — so no reader
//! pays for a build, and which columns the planner may choose an index
//! scan on.
//!
//! ## The delta's index
//! The delta's appended rows have their own index per declared column, a
//! [`DeltaIndex`] in the version (`Entry::delta_indexes`): a write builds
//! its version's from the version it wrote over — the same runs plus one
//! for its rows (`merge::next_version`, the one place writes make deltas)
//! — so a write pays for its own rows, not for the delta. The invariant a
//! lookup relies on: a version's delta index covers a prefix of *that
//! version's* appended rows. It holds because a write's delta is the
//! previous delta with the write's rows appended (appended rows are never
//! removed while the main stays), and every other way a version is made
//! (a merge's swap, DDL, recovery) starts with no delta index. A lookup
//! (`lower::index`) takes the index's hits below `covered` and scans the
//! appended rows from `covered` on, so an index that covers less, or none,
//! costs time, never rows.
//!
//! Index names share the tables' namespace (as in PostgreSQL): a name taken
//! by a table or another index is 42P07.

use std::sync::{Arc, OnceLock};

use maestro_storage::column::{Delta, DeltaIndex, Table};
use maestro_txn::Transaction;
use sqlparser::ast::{CreateIndex, Expr as AstExpr, ObjectName};

use super::ddl::table_name;
use super::{Entry, Store, View, txn_error, unique};
use crate::bind::scope::normalize;
use crate::error::{ErrorKind, Result, SqlError};

/// An index a table declares (serde: the durable store's catalog rows).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct IndexDecl {
    pub name: String,
    /// The indexed column's name (names, unlike positions, say what a
    /// reader of the log means).
    pub column: String,
}

impl Entry {
    /// The index of this version's delta in column `column`, if the column
    /// is indexed and the version has a delta.
    pub(super) fn delta_index(&self, column: usize) -> Option<&DeltaIndex> {
        self.live_delta()?;
        self.delta_indexes
            .iter()
            .find(|(c, _)| *c == column)
            .map(|(_, ix)| ix)
    }

    /// The delta indexes of the version a write of this one makes with
    /// delta `next` (this version's delta plus the write's rows): each
    /// declared column's index extended by the rows appended since.
    pub(super) fn extended_delta_indexes(&self, next: &Delta) -> Vec<(usize, DeltaIndex)> {
        let empty = DeltaIndex::default();
        self.indexes
            .iter()
            .filter_map(|d| self.data.column_index(&d.column).ok())
            .map(|column| {
                // Only this version's own index covers a prefix of `next`
                // (none without a delta: `next` is the write's rows alone).
                let prev = self.delta_index(column).unwrap_or(&empty);
                let ix = prev.extended(next.appended().column_at(column));
                (column, ix)
            })
            .collect()
    }

    /// Builds the main's index of every declared column that lacks one
    /// (cached in `data`: a no-op for the built ones).
    pub(super) fn build_indexes(&self, data: &Table) {
        for d in &self.indexes {
            if let Ok(i) = data.column_index(&d.column) {
                data.sorted_index(i);
            }
        }
    }

    /// This version with `indexes` declared instead; same data, delta and
    /// change sequence (an index changes no row).
    pub(super) fn with_indexes(&self, indexes: Vec<IndexDecl>) -> Entry {
        Entry {
            name: self.name.clone(),
            columns: self.columns.clone(),
            unique_columns: self.unique_columns.clone(),
            keys: self.keys.clone(),
            indexes,
            unique_indexes: self.unique_indexes.clone(),
            defaults: Arc::clone(&self.defaults),
            drawn: self.drawn.clone(),
            seq: self.seq,
            data: Arc::clone(&self.data),
            delta: self.delta.clone(),
            null_masks: OnceLock::new(),
            def: OnceLock::new(),
            shape_token: OnceLock::new(),
            own_view: None,
            merged_from: self.merged_from.clone(),
            plain: super::PlainSlot::default(),
            delta_indexes: Vec::new(),
            delta_flagged: None,
        }
    }
}

impl View {
    /// Whether a table or an index is called `name`.
    pub(super) fn name_taken(&self, name: &str) -> bool {
        self.tables.contains_key(name)
            || self
                .tables
                .values()
                .any(|(_, e)| e.indexes.iter().any(|d| d.name == name))
    }
}

impl Store {
    /// `CREATE [UNIQUE] INDEX [IF NOT EXISTS] [name] ON t (col)`:
    /// single-column (no USING, INCLUDE, WHERE, WITH or expressions). A
    /// UNIQUE index makes its column a key, enforced like a declared one
    /// (`unique.rs`), once the rows hold no duplicate (23505 otherwise);
    /// dropping the index drops that key. On a column that is a key
    /// already, it is a plain index.
    pub(crate) fn create_index(&self, txn: &mut Transaction, c: &CreateIndex) -> Result<()> {
        let refuse = |what: &str| Err(SqlError::unsupported(format!("{what} in CREATE INDEX")));
        if c.concurrently || c.r#async {
            return refuse("CONCURRENTLY");
        }
        if c.using.is_some() {
            return refuse("USING (the one index kind is a sorted index)");
        }
        if !c.include.is_empty() {
            return refuse("INCLUDE");
        }
        if c.predicate.is_some() {
            return refuse("WHERE (partial indexes)");
        }
        if !c.with.is_empty() || !c.index_options.is_empty() || !c.alter_options.is_empty() {
            return refuse("index options");
        }
        if c.nulls_distinct.is_some() {
            return refuse("NULLS [NOT] DISTINCT");
        }
        let [col] = c.columns.as_slice() else {
            return refuse("more than one column (indexes are single-column)");
        };
        if col.operator_class.is_some() || col.column.with_fill.is_some() {
            return refuse("an operator class");
        }
        // ASC/DESC and NULLS FIRST/LAST are accepted: a sorted index serves
        // either direction, and stored columns hold no NULLs.
        let AstExpr::Identifier(ident) = &col.column.expr else {
            return refuse("an expression (indexes are on a column)");
        };
        let column = normalize(ident);
        let table = table_name(&c.table_name)?;
        // DDL builds on the table's version with this transaction's writes.
        if let Ok((row, _)) = self.view(txn).entry(&table) {
            self.install_pending(txn, row)?;
        }
        let view = self.view(txn);
        let (_, entry) = view.entry(&table)?;
        match entry.columns.iter().find(|s| s.name == column) {
            None => {
                return Err(SqlError::new(
                    ErrorKind::UnknownColumn,
                    format!("column \"{column}\" does not exist"),
                ));
            }
            // A key's checks compare stored values, and a double's -0 and
            // +0 are two of them that SQL calls equal.
            Some(s) if c.unique && s.ty.is_encoded() => {
                return refuse(&format!("UNIQUE on a {} column", s.ty.pg_name()));
            }
            Some(_) => {}
        }
        let name = match &c.name {
            Some(n) => table_name(n)?,
            None => free_name(&format!("{table}_{column}_idx"), |n| view.name_taken(n)),
        };
        self.lock_name(txn, &name)?;
        // After the lock: a concurrent CREATE of this name that committed
        // first is either visible now or made the lock conflict.
        let view = self.view(txn);
        if view.name_taken(&name) {
            if c.if_not_exists {
                return Ok(());
            }
            return Err(SqlError::new(
                ErrorKind::DuplicateTable,
                format!("relation \"{name}\" already exists"),
            ));
        }
        view.refuse_ddl_after_rebase(&table)?;
        let (row, entry) = view.entry(&table)?;
        let makes_key = c.unique && !entry.unique_columns.contains(&column);
        if makes_key {
            refuse_duplicates(entry, &column, &name)?;
        }
        let mut indexes = entry.indexes.clone();
        indexes.push(IndexDecl {
            name: name.clone(),
            column: column.clone(),
        });
        let mut next = entry.with_indexes(indexes);
        if makes_key {
            next.unique_columns.push(column);
            next.unique_indexes.push(name);
        }
        // The statement pays the build, not the first query.
        next.build_indexes(&next.data);
        txn.update(&self.tables, row, Arc::new(next))
            .map_err(txn_error)
    }

    /// `DROP INDEX [IF EXISTS] name, …`.
    pub(crate) fn drop_indexes(
        &self,
        txn: &mut Transaction,
        names: &[ObjectName],
        if_exists: bool,
    ) -> Result<()> {
        for n in names {
            let name = table_name(n)?;
            self.lock_name(txn, &name)?;
            let view = self.view(txn);
            let owner = view
                .tables
                .values()
                .find(|(_, e)| e.indexes.iter().any(|d| d.name == name));
            match owner {
                Some((row, entry)) => {
                    let (row, entry) = (*row, Arc::clone(entry));
                    self.install_pending(txn, row)?;
                    let view = self.view(txn);
                    let entry = view.entry(&entry.name)?.1;
                    view.refuse_ddl_after_rebase(&entry.name)?;
                    let indexes = entry
                        .indexes
                        .iter()
                        .filter(|d| d.name != name)
                        .cloned()
                        .collect();
                    let mut next = entry.with_indexes(indexes);
                    // A UNIQUE index's key goes with it.
                    if let Some(at) = next.unique_indexes.iter().position(|n| *n == name) {
                        next.unique_indexes.remove(at);
                        let column = &entry
                            .indexes
                            .iter()
                            .find(|d| d.name == name)
                            .expect("found above")
                            .column;
                        next.unique_columns.retain(|c| c != column);
                    }
                    txn.update(&self.tables, row, Arc::new(next))
                        .map_err(txn_error)?;
                }
                None if if_exists => {}
                None => {
                    return Err(SqlError::new(
                        ErrorKind::UndefinedObject,
                        format!("index \"{name}\" does not exist"),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// 23505 when two live rows of `entry` share a value of `column` (NULLs
/// repeat nothing), naming the index CREATE UNIQUE INDEX was to build.
fn refuse_duplicates(entry: &Entry, column: &str, index: &str) -> Result<()> {
    let rows = entry.materialized()?;
    // The table's rows as the appended rows of an empty version that
    // declares the one key: the write check finds a repeat among them.
    let mut probe = entry.with_data_of(Arc::new(entry.data.empty_like()));
    probe.unique_columns = vec![column.to_string()];
    probe.keys = Vec::new();
    unique::check_unique(&probe, &[], &rows).map_err(|e| {
        SqlError::new(
            ErrorKind::UniqueViolation,
            format!("could not create unique index \"{index}\": {}", e.message),
        )
    })
}

/// `base`, or `base1`, `base2`, … — the first name that is not `taken`
/// (PostgreSQL's naming of an unnamed index or key).
pub(super) fn free_name(base: &str, taken: impl Fn(&str) -> bool) -> String {
    std::iter::once(base.to_string())
        .chain((1..).map(|i| format!("{base}{i}")))
        .find(|n| !taken(n))
        .expect("some suffix is free")
}
