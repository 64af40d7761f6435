//! The database: the nine tables and their OLC B+-tree indexes, with inserts
//! and deletes that keep both in step.
//!
//! Every index maps a packed key ([`crate::keys`]) to a [`RowId`]. [`Row`]
//! tells, per table, which index entries a row has, so [`Database::insert`],
//! [`Database::delete`] and [`Database::undelete`] are generic: the transaction
//! layer can undo an insert with `delete` and a delete with `undelete`.

use maestro_storage::index::OlcBTree;

use crate::error::TpccError;
use crate::schema::*;
use crate::table::{RowId, Table};

/// An index: packed key → row id.
pub type Index = OlcBTree<u64, RowId>;

/// Names the indexes, so rows can list their entries without borrowing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexId {
    Warehouse,
    District,
    Customer,
    CustomerName,
    Orders,
    OrdersByCustomer,
    NewOrder,
    OrderLine,
    Item,
    Stock,
}

/// The indexes; `new_order` doubles as each district's queue of undelivered
/// orders (its smallest key in a district is the oldest).
#[derive(Default)]
pub struct Indexes {
    pub warehouse: Index,
    pub district: Index,
    pub customer: Index,
    pub customer_name: Index,
    pub orders: Index,
    pub orders_by_customer: Index,
    pub new_order: Index,
    pub order_line: Index,
    pub item: Index,
    pub stock: Index,
}

impl Indexes {
    pub fn get(&self, id: IndexId) -> &Index {
        match id {
            IndexId::Warehouse => &self.warehouse,
            IndexId::District => &self.district,
            IndexId::Customer => &self.customer,
            IndexId::CustomerName => &self.customer_name,
            IndexId::Orders => &self.orders,
            IndexId::OrdersByCustomer => &self.orders_by_customer,
            IndexId::NewOrder => &self.new_order,
            IndexId::OrderLine => &self.order_line,
            IndexId::Item => &self.item,
            IndexId::Stock => &self.stock,
        }
    }
}

/// The index entries of one row: primary key first, then a secondary one.
pub type IndexEntries = [Option<(IndexId, u64)>; 2];

/// A row type with its table and index entries (implemented in `row_keys.rs`).
pub trait Row: Sized + Send + Sync + 'static {
    fn table(db: &Database) -> &Table<Self>;
    /// The row's index entries, or why its keys cannot be packed.
    fn index_entries(&self) -> Result<IndexEntries, TpccError>;
}

/// The nine tables and their indexes. Fields are public so the transaction
/// layer can latch rows directly; use [`Database::insert`] and friends to add
/// or remove rows so indexes stay in step.
pub struct Database {
    warehouses: u16,
    pub warehouse: Table<Warehouse>,
    pub district: Table<District>,
    pub customer: Table<Customer>,
    pub history: Table<History>,
    pub new_order: Table<NewOrder>,
    pub orders: Table<Order>,
    pub order_line: Table<OrderLine>,
    pub item: Table<Item>,
    pub stock: Table<Stock>,
    pub index: Indexes,
}

/// Live rows per table.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TableCounts {
    pub warehouse: u64,
    pub district: u64,
    pub customer: u64,
    pub history: u64,
    pub new_order: u64,
    pub orders: u64,
    pub order_line: u64,
    pub item: u64,
    pub stock: u64,
}

impl TableCounts {
    /// `(table name, rows)` in the order of [`TABLE_NAMES`].
    pub fn by_table(&self) -> [(&'static str, u64); 9] {
        let counts = [
            self.warehouse,
            self.district,
            self.customer,
            self.history,
            self.new_order,
            self.orders,
            self.order_line,
            self.item,
            self.stock,
        ];
        std::array::from_fn(|i| (TABLE_NAMES[i], counts[i]))
    }

    pub fn total(&self) -> u64 {
        self.by_table().iter().map(|(_, n)| n).sum()
    }
}

impl Database {
    /// An empty database for `warehouses` (1..=[`MAX_WAREHOUSES`](crate::keys::MAX_WAREHOUSES)).
    pub fn new(warehouses: u16) -> Result<Self, TpccError> {
        if warehouses == 0 {
            return Err(TpccError::InvalidOption {
                option: "warehouses",
                reason: "at least one warehouse is needed".into(),
            });
        }
        Ok(Database {
            warehouses,
            warehouse: Table::new("warehouse"),
            district: Table::new("district"),
            customer: Table::new("customer"),
            history: Table::new("history"),
            new_order: Table::new("new_order"),
            orders: Table::new("orders"),
            order_line: Table::new("order_line"),
            item: Table::new("item"),
            stock: Table::new("stock"),
            index: Indexes::default(),
        })
    }

    /// The scale: warehouses have ids `1..=warehouses()`.
    pub fn warehouses(&self) -> u16 {
        self.warehouses
    }

    pub fn counts(&self) -> TableCounts {
        TableCounts {
            warehouse: self.warehouse.live(),
            district: self.district.live(),
            customer: self.customer.live(),
            history: self.history.live(),
            new_order: self.new_order.live(),
            orders: self.orders.live(),
            order_line: self.order_line.live(),
            item: self.item.live(),
            stock: self.stock.live(),
        }
    }

    /// Appends `row` and enters it into its indexes. A key that is already
    /// indexed makes it fail with [`TpccError::DuplicateKey`] after restoring
    /// the old entry and deleting the new row (a concurrent reader may glimpse
    /// the new row id meanwhile; under 2PL a duplicate is a bug anyway).
    pub fn insert<R: Row>(&self, row: R) -> Result<RowId, TpccError> {
        let entries = row.index_entries()?;
        let table = R::table(self);
        let id = table.append(row)?;
        for (done, entry) in entries.iter().enumerate() {
            let Some((index, key)) = *entry else {
                continue;
            };
            if let Some(previous) = self.index.get(index).insert(key, id) {
                self.index.get(index).insert(key, previous);
                for &(index, key) in entries[..done].iter().flatten() {
                    self.index.get(index).remove(key);
                }
                table.delete(id);
                return Err(TpccError::DuplicateKey {
                    table: table.name(),
                    key,
                });
            }
        }
        Ok(id)
    }

    /// Removes a live row's index entries (those still pointing at it) and
    /// marks it deleted; `Ok(false)` if it was not live.
    pub fn delete<R: Row>(&self, id: RowId) -> Result<bool, TpccError> {
        let table = R::table(self);
        let Some(entries) = table.read(id).map(|r| r.index_entries()).transpose()? else {
            return Ok(false);
        };
        for (index, key) in entries.into_iter().flatten() {
            let index = self.index.get(index);
            if index.lookup(key) == Some(id) {
                index.remove(key);
            }
        }
        Ok(table.delete(id))
    }

    /// Revives a deleted row and re-enters its index entries (undo of
    /// [`Database::delete`]); `Ok(false)` if it was not deleted.
    pub fn undelete<R: Row>(&self, id: RowId) -> Result<bool, TpccError> {
        let table = R::table(self);
        if !table.undelete(id) {
            return Ok(false);
        }
        let entries = table.read(id).map(|r| r.index_entries()).transpose()?;
        for (index, key) in entries.into_iter().flatten().flatten() {
            self.index.get(index).insert(key, id);
        }
        Ok(true)
    }
}
