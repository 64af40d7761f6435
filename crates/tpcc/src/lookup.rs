//! Typed index lookups for the transactions: each packs its key (failing with
//! [`TpccError::KeyOutOfRange`] for ids beyond the key layout) and returns row
//! ids; rows are then latched through the tables. Lookups take no logical
//! locks: under 2PL the caller locks the key first, then looks it up.

use std::ops::RangeInclusive;

use crate::db::Database;
use crate::error::TpccError;
use crate::keys::*;
use crate::table::RowId;

impl Database {
    pub fn warehouse_row(&self, w_id: u16) -> Result<Option<RowId>, TpccError> {
        Ok(self.index.warehouse.lookup(WarehouseKey { w_id }.pack()?))
    }

    pub fn district_row(&self, w_id: u16, d_id: u8) -> Result<Option<RowId>, TpccError> {
        Ok(self
            .index
            .district
            .lookup(DistrictKey { w_id, d_id }.pack()?))
    }

    pub fn customer_row(&self, w_id: u16, d_id: u8, c_id: u16) -> Result<Option<RowId>, TpccError> {
        let key = CustomerKey { w_id, d_id, c_id }.pack()?;
        Ok(self.index.customer.lookup(key))
    }

    /// The customers whose `c_last` is the name of number `name` (0..=999), as
    /// `(c_id, row)` in `c_id` order. Clause 2.5.2.2/2.6.2.2 then wants them
    /// sorted by `c_first` and the one at position ⌈n/2⌉ (1-based) picked.
    pub fn customers_by_last_name(
        &self,
        w_id: u16,
        d_id: u8,
        name: u16,
    ) -> Result<Vec<(u16, RowId)>, TpccError> {
        let key = |c_id| CustomerNameKey {
            w_id,
            d_id,
            name,
            c_id,
        };
        let range = key(0).pack()?..=key(MAX_C_ID).pack()?;
        let mut found = Vec::new();
        self.index.customer_name.range(range, |k, row| {
            found.push((CustomerNameKey::unpack(k).c_id, row));
            true
        });
        Ok(found)
    }

    pub fn item_row(&self, i_id: u32) -> Result<Option<RowId>, TpccError> {
        Ok(self.index.item.lookup(ItemKey { i_id }.pack()?))
    }

    pub fn stock_row(&self, w_id: u16, i_id: u32) -> Result<Option<RowId>, TpccError> {
        Ok(self.index.stock.lookup(StockKey { w_id, i_id }.pack()?))
    }

    pub fn order_row(&self, w_id: u16, d_id: u8, o_id: u32) -> Result<Option<RowId>, TpccError> {
        Ok(self
            .index
            .orders
            .lookup(OrderKey { w_id, d_id, o_id }.pack()?))
    }

    pub fn new_order_row(
        &self,
        w_id: u16,
        d_id: u8,
        o_id: u32,
    ) -> Result<Option<RowId>, TpccError> {
        Ok(self
            .index
            .new_order
            .lookup(OrderKey { w_id, d_id, o_id }.pack()?))
    }

    /// The customer's order with the largest `o_id`, as `(o_id, row)`
    /// (Order-Status).
    pub fn latest_order(
        &self,
        w_id: u16,
        d_id: u8,
        c_id: u16,
    ) -> Result<Option<(u32, RowId)>, TpccError> {
        let key = |o_id| CustomerOrderKey {
            w_id,
            d_id,
            c_id,
            o_id,
        };
        // The tree scans upwards only; a customer has few orders, so keep the last.
        let mut latest = None;
        let range = key(0).pack()?..=key(MAX_O_ID).pack()?;
        self.index.orders_by_customer.range(range, |k, row| {
            latest = Some((CustomerOrderKey::unpack(k).o_id, row));
            true
        });
        Ok(latest)
    }

    /// The district's undelivered order with the smallest `o_id`, as
    /// `(o_id, new_order row)` (Delivery). Remove it with
    /// `Database::delete::<NewOrder>(row)`.
    pub fn oldest_new_order(&self, w_id: u16, d_id: u8) -> Result<Option<(u32, RowId)>, TpccError> {
        let key = |o_id| OrderKey { w_id, d_id, o_id };
        let mut oldest = None;
        let range = key(0).pack()?..=key(MAX_O_ID).pack()?;
        self.index.new_order.range(range, |k, row| {
            oldest = Some((OrderKey::unpack(k).o_id, row));
            false
        });
        Ok(oldest)
    }

    /// Calls `f(o_id, ol_number, row)` for the order lines of the district's
    /// orders with ids in `o_ids`, ascending, until it returns false (one order
    /// for Order-Status/Delivery, the last 20 for Stock-Level).
    pub fn order_lines(
        &self,
        w_id: u16,
        d_id: u8,
        o_ids: RangeInclusive<u32>,
        mut f: impl FnMut(u32, u8, RowId) -> bool,
    ) -> Result<(), TpccError> {
        let key = |o_id, ol_number| OrderLineKey {
            w_id,
            d_id,
            o_id,
            ol_number,
        };
        let range = key(*o_ids.start(), 0).pack()?..=key(*o_ids.end(), MAX_OL_NUMBER).pack()?;
        self.index.order_line.range(range, |k, row| {
            let k = OrderLineKey::unpack(k);
            f(k.o_id, k.ol_number, row)
        });
        Ok(())
    }
}
