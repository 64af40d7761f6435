//! The TPC-C database on maestro-txn: the nine tables as versioned
//! `maestro_txn::Table`s and the same ten indexes as the 2PL path (same
//! packed keys, from each row's [`Row::index_entries`]) as [`OrderedIndex`]es.
//!
//! Loading reuses the 2PL loader: [`load_mvcc`] generates the data into a
//! 2PL [`Database`] (same generator, same seed → same rows) and copies every
//! table into the MVCC tables in one committed transaction per table.

use std::sync::Arc;

use maestro_txn::{Database as TxnDatabase, DatabaseConfig, Isolation, RowId, Table, Transaction};

use super::index::OrderedIndex;
use crate::db::{Database, IndexId, Row};
use crate::error::TpccError;
use crate::load::{LoadConfig, LoadProgress, LoadReport, load};
use crate::schema::*;

/// The ten indexes, in [`IndexId`] order.
pub struct MvccIndexes([OrderedIndex; 10]);

impl MvccIndexes {
    pub fn get(&self, id: IndexId) -> &OrderedIndex {
        let i = match id {
            IndexId::Warehouse => 0,
            IndexId::District => 1,
            IndexId::Customer => 2,
            IndexId::CustomerName => 3,
            IndexId::Orders => 4,
            IndexId::OrdersByCustomer => 5,
            IndexId::NewOrder => 6,
            IndexId::OrderLine => 7,
            IndexId::Item => 8,
            IndexId::Stock => 9,
        };
        &self.0[i]
    }
}

pub struct MvccDatabase {
    warehouses: u16,
    pub txn: TxnDatabase,
    pub warehouse: Arc<Table<Warehouse>>,
    pub district: Arc<Table<District>>,
    pub customer: Arc<Table<Customer>>,
    pub history: Arc<Table<History>>,
    pub new_order: Arc<Table<NewOrder>>,
    pub orders: Arc<Table<Order>>,
    pub order_line: Arc<Table<OrderLine>>,
    pub item: Arc<Table<Item>>,
    pub stock: Arc<Table<Stock>>,
    pub index: MvccIndexes,
}

/// A row type's MVCC table.
pub trait MvccRow: Row + Clone {
    fn mvcc_table(db: &MvccDatabase) -> &Arc<Table<Self>>;
}

macro_rules! mvcc_row {
    ($($ty:ty => $field:ident),* $(,)?) => {$(
        impl MvccRow for $ty {
            fn mvcc_table(db: &MvccDatabase) -> &Arc<Table<Self>> {
                &db.$field
            }
        }
    )*};
}

mvcc_row!(
    Warehouse => warehouse,
    District => district,
    Customer => customer,
    History => history,
    NewOrder => new_order,
    Order => orders,
    OrderLine => order_line,
    Item => item,
    Stock => stock,
);

impl MvccDatabase {
    /// An empty database of `warehouses` warehouses.
    pub fn new(warehouses: u16, config: DatabaseConfig) -> Self {
        MvccDatabase {
            warehouses,
            txn: TxnDatabase::new(config),
            warehouse: Table::new("warehouse"),
            district: Table::new("district"),
            customer: Table::new("customer"),
            history: Table::new("history"),
            new_order: Table::new("new_order"),
            orders: Table::new("orders"),
            order_line: Table::new("order_line"),
            item: Table::new("item"),
            stock: Table::new("stock"),
            index: MvccIndexes(Default::default()),
        }
    }

    pub fn warehouses(&self) -> u16 {
        self.warehouses
    }

    /// Inserts `row` in `txn` and adds its index entries (visible to others
    /// once `txn` commits; see [`OrderedIndex`]).
    pub fn insert<R: MvccRow>(&self, txn: &mut Transaction, row: R) -> Result<RowId, TpccError> {
        let entries = row.index_entries()?;
        let id = txn.insert(R::mvcc_table(self), row)?;
        for (index, key) in entries.into_iter().flatten() {
            self.index.get(index).insert(key, id);
        }
        Ok(id)
    }

    /// The visible row under the unique `key` of `index`, with its id.
    pub fn lookup<R: MvccRow>(
        &self,
        txn: &mut Transaction,
        index: IndexId,
        key: u64,
    ) -> Result<Option<(RowId, R)>, TpccError> {
        let Some(id) = self.index.get(index).get(key) else {
            return Ok(None);
        };
        Ok(txn.read(R::mvcc_table(self), id).map(|r| (id, r)))
    }

    /// Copies every row of `source` into this database, one committed
    /// transaction per table.
    pub fn copy_from(&self, source: &Database) -> Result<(), TpccError> {
        self.copy_table(&source.item)?;
        self.copy_table(&source.warehouse)?;
        self.copy_table(&source.district)?;
        self.copy_table(&source.customer)?;
        self.copy_table(&source.history)?;
        self.copy_table(&source.orders)?;
        self.copy_table(&source.new_order)?;
        self.copy_table(&source.order_line)?;
        self.copy_table(&source.stock)?;
        Ok(())
    }

    fn copy_table<R: MvccRow>(&self, source: &crate::table::Table<R>) -> Result<(), TpccError> {
        let mut rows = Vec::new();
        source.scan(|_, row| rows.push(row.clone()));
        let mut txn = self.txn.begin(Isolation::Snapshot)?;
        for row in rows {
            self.insert(&mut txn, row)?;
        }
        txn.commit()?;
        Ok(())
    }
}

/// Generates a database with the 2PL loader and copies it into an MVCC one.
pub fn load_mvcc(
    config: &LoadConfig,
    progress: &(dyn Fn(&LoadProgress) + Sync),
) -> Result<(MvccDatabase, LoadReport), TpccError> {
    let (source, report) = load(config, progress)?;
    let db = MvccDatabase::new(config.warehouses, DatabaseConfig::default());
    db.copy_from(&source)?;
    Ok((db, report))
}
