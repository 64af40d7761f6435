//! Which index entries each table's rows have: the [`Row`] implementations
//! that let `Database::insert`/`delete`/`undelete` keep indexes in step.

use crate::db::{Database, IndexEntries, IndexId, Row};
use crate::error::TpccError;
use crate::keys::*;
use crate::random::parse_last_name;
use crate::schema::*;
use crate::table::Table;

impl Row for Warehouse {
    fn table(db: &Database) -> &Table<Self> {
        &db.warehouse
    }
    fn index_entries(&self) -> Result<IndexEntries, TpccError> {
        let key = WarehouseKey { w_id: self.w_id }.pack()?;
        Ok([Some((IndexId::Warehouse, key)), None])
    }
}

impl Row for District {
    fn table(db: &Database) -> &Table<Self> {
        &db.district
    }
    fn index_entries(&self) -> Result<IndexEntries, TpccError> {
        let (w_id, d_id) = (self.d_w_id, self.d_id);
        let key = DistrictKey { w_id, d_id }.pack()?;
        Ok([Some((IndexId::District, key)), None])
    }
}

impl Row for Customer {
    fn table(db: &Database) -> &Table<Self> {
        &db.customer
    }
    fn index_entries(&self) -> Result<IndexEntries, TpccError> {
        let (w_id, d_id, c_id) = (self.c_w_id, self.c_d_id, self.c_id);
        let name = parse_last_name(&self.c_last).ok_or_else(|| TpccError::InvalidRow {
            table: "customer",
            reason: format!("c_last {:?} is not spelled by a name number", self.c_last),
        })?;
        let key = CustomerKey { w_id, d_id, c_id }.pack()?;
        let by_name = CustomerNameKey {
            w_id,
            d_id,
            name,
            c_id,
        };
        Ok([
            Some((IndexId::Customer, key)),
            Some((IndexId::CustomerName, by_name.pack()?)),
        ])
    }
}

/// History has no primary key, hence no index.
impl Row for History {
    fn table(db: &Database) -> &Table<Self> {
        &db.history
    }
    fn index_entries(&self) -> Result<IndexEntries, TpccError> {
        Ok([None, None])
    }
}

impl Row for NewOrder {
    fn table(db: &Database) -> &Table<Self> {
        &db.new_order
    }
    fn index_entries(&self) -> Result<IndexEntries, TpccError> {
        let (w_id, d_id, o_id) = (self.no_w_id, self.no_d_id, self.no_o_id);
        let key = OrderKey { w_id, d_id, o_id }.pack()?;
        Ok([Some((IndexId::NewOrder, key)), None])
    }
}

impl Row for Order {
    fn table(db: &Database) -> &Table<Self> {
        &db.orders
    }
    fn index_entries(&self) -> Result<IndexEntries, TpccError> {
        let (w_id, d_id, o_id, c_id) = (self.o_w_id, self.o_d_id, self.o_id, self.o_c_id);
        let key = OrderKey { w_id, d_id, o_id }.pack()?;
        let by_customer = CustomerOrderKey {
            w_id,
            d_id,
            c_id,
            o_id,
        };
        Ok([
            Some((IndexId::Orders, key)),
            Some((IndexId::OrdersByCustomer, by_customer.pack()?)),
        ])
    }
}

impl Row for OrderLine {
    fn table(db: &Database) -> &Table<Self> {
        &db.order_line
    }
    fn index_entries(&self) -> Result<IndexEntries, TpccError> {
        let key = OrderLineKey {
            w_id: self.ol_w_id,
            d_id: self.ol_d_id,
            o_id: self.ol_o_id,
            ol_number: self.ol_number,
        };
        Ok([Some((IndexId::OrderLine, key.pack()?)), None])
    }
}

impl Row for Item {
    fn table(db: &Database) -> &Table<Self> {
        &db.item
    }
    fn index_entries(&self) -> Result<IndexEntries, TpccError> {
        let key = ItemKey { i_id: self.i_id }.pack()?;
        Ok([Some((IndexId::Item, key)), None])
    }
}

impl Row for Stock {
    fn table(db: &Database) -> &Table<Self> {
        &db.stock
    }
    fn index_entries(&self) -> Result<IndexEntries, TpccError> {
        let (w_id, i_id) = (self.s_w_id, self.s_i_id);
        let key = StockKey { w_id, i_id }.pack()?;
        Ok([Some((IndexId::Stock, key)), None])
    }
}
