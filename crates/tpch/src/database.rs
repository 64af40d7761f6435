//! `Database`: the eight loaded TPC-H tables.

use std::sync::Arc;

use maestro_storage::column::Table;

/// All eight TPC-H tables at one scale factor. Each table is shared: a
/// snapshot of [`crate::SharedDatabase`] is a `Database` whose tables are the
/// versions that snapshot sees, so cloning one is eight reference counts.
#[derive(Debug, Clone, PartialEq)]
pub struct Database {
    pub scale_factor: f64,
    pub region: Arc<Table>,
    pub nation: Arc<Table>,
    pub supplier: Arc<Table>,
    pub customer: Arc<Table>,
    pub part: Arc<Table>,
    pub partsupp: Arc<Table>,
    pub orders: Arc<Table>,
    pub lineitem: Arc<Table>,
}

impl Database {
    /// The tables, smallest first (the order of [`crate::TABLE_NAMES`]).
    pub fn tables(&self) -> [&Table; 8] {
        self.fields().map(|t| &**t)
    }

    /// The fields in [`crate::TABLE_NAMES`] order.
    fn fields(&self) -> [&Arc<Table>; 8] {
        [
            &self.region,
            &self.nation,
            &self.supplier,
            &self.customer,
            &self.part,
            &self.partsupp,
            &self.orders,
            &self.lineitem,
        ]
    }

    /// A database of `tables` in [`crate::TABLE_NAMES`] order.
    pub fn from_tables(scale_factor: f64, tables: [Arc<Table>; 8]) -> Database {
        let [
            region,
            nation,
            supplier,
            customer,
            part,
            partsupp,
            orders,
            lineitem,
        ] = tables;
        Database {
            scale_factor,
            region,
            nation,
            supplier,
            customer,
            part,
            partsupp,
            orders,
            lineitem,
        }
    }

    /// The tables in [`crate::TABLE_NAMES`] order, shared (reference counts).
    pub fn shared_tables(&self) -> [Arc<Table>; 8] {
        self.fields().map(Arc::clone)
    }

    /// The table called `name` (`"lineitem"`, …), if any.
    pub fn table(&self, name: &str) -> Option<&Table> {
        self.tables().into_iter().find(|t| t.name() == name)
    }

    pub fn total_rows(&self) -> usize {
        self.tables().iter().map(|t| t.num_rows()).sum()
    }

    /// Allocated bytes of all columns.
    pub fn heap_bytes(&self) -> usize {
        self.tables().iter().map(|t| t.heap_bytes()).sum()
    }
}
