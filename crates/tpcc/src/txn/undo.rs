//! The undo log: before-images of the columns a transaction updated in place,
//! and inverse actions for its inserts and deletes.
//!
//! Before-images cover exactly the columns of one lock's column group (see
//! `lock::LockSpace`), never a whole row: two transactions may update
//! different groups of one district row at once (New-Order `d_next_o_id`,
//! Payment `d_ytd`), and restoring a whole-row image would undo the other's
//! committed update. Entries are applied newest first, while the transaction
//! still holds every lock (strict 2PL), each under the row's latch.

use crate::db::Database;
use crate::error::TpccError;
use crate::schema::*;
use crate::table::{RowId, Table};

/// Tables a transaction inserts into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Inserted {
    History,
    NewOrder,
    Orders,
    OrderLine,
}

#[derive(Debug)]
pub(crate) enum Undo {
    WarehouseYtd {
        row: RowId,
        w_ytd: Money,
    },
    DistrictYtd {
        row: RowId,
        d_ytd: Money,
    },
    DistrictNextOId {
        row: RowId,
        d_next_o_id: u32,
    },
    CustomerPayment {
        row: RowId,
        c_balance: Money,
        c_ytd_payment: Money,
        c_payment_cnt: u32,
    },
    /// The whole old `c_data` (moved out, not copied).
    CustomerData {
        row: RowId,
        c_data: crate::schema::Text,
    },
    CustomerDelivery {
        row: RowId,
        c_balance: Money,
        c_delivery_cnt: u32,
    },
    Stock {
        row: RowId,
        s_quantity: i32,
        s_ytd: u32,
        s_order_cnt: u32,
        s_remote_cnt: u32,
    },
    OrderCarrier {
        row: RowId,
        o_carrier_id: Option<u8>,
    },
    OrderLineDelivery {
        row: RowId,
        ol_delivery_d: Option<Timestamp>,
    },
    /// Undone by deleting the row (and its index entries).
    Insert {
        table: Inserted,
        row: RowId,
    },
    /// Delivery's removal of a new-order row; undone by reviving it.
    DeleteNewOrder {
        row: RowId,
    },
}

/// The latch of a row the transaction holds a lock on; missing means a
/// broken invariant, reported rather than ignored.
pub(crate) fn live<R>(table: &Table<R>, row: RowId) -> Result<&parking_lot::RwLock<R>, TpccError> {
    table.get(row).ok_or_else(|| TpccError::NotFound {
        table: table.name(),
        key: format!("row id {row} (locked, yet not live)"),
    })
}

fn changed(done: bool, table: &'static str, row: RowId) -> Result<(), TpccError> {
    if done {
        Ok(())
    } else {
        Err(TpccError::NotFound {
            table,
            key: format!("row id {row} (undo found it already in the target state)"),
        })
    }
}

impl Undo {
    /// What this entry holds in memory (charged to the transaction's
    /// statement account, issue 13 part 3).
    pub(crate) fn bytes(&self) -> u64 {
        let heap = match self {
            Undo::CustomerData { c_data, .. } => c_data.len(),
            _ => 0,
        };
        (std::mem::size_of::<Undo>() + heap) as u64
    }

    /// Restores the state before the logged action.
    pub(crate) fn apply(self, db: &Database) -> Result<(), TpccError> {
        match self {
            Undo::WarehouseYtd { row, w_ytd } => live(&db.warehouse, row)?.write().w_ytd = w_ytd,
            Undo::DistrictYtd { row, d_ytd } => live(&db.district, row)?.write().d_ytd = d_ytd,
            Undo::DistrictNextOId { row, d_next_o_id } => {
                live(&db.district, row)?.write().d_next_o_id = d_next_o_id;
            }
            Undo::CustomerPayment {
                row,
                c_balance,
                c_ytd_payment,
                c_payment_cnt,
            } => {
                let mut c = live(&db.customer, row)?.write();
                c.c_balance = c_balance;
                c.c_ytd_payment = c_ytd_payment;
                c.c_payment_cnt = c_payment_cnt;
            }
            Undo::CustomerData { row, c_data } => live(&db.customer, row)?.write().c_data = c_data,
            Undo::CustomerDelivery {
                row,
                c_balance,
                c_delivery_cnt,
            } => {
                let mut c = live(&db.customer, row)?.write();
                c.c_balance = c_balance;
                c.c_delivery_cnt = c_delivery_cnt;
            }
            Undo::Stock {
                row,
                s_quantity,
                s_ytd,
                s_order_cnt,
                s_remote_cnt,
            } => {
                let mut s = live(&db.stock, row)?.write();
                s.s_quantity = s_quantity;
                s.s_ytd = s_ytd;
                s.s_order_cnt = s_order_cnt;
                s.s_remote_cnt = s_remote_cnt;
            }
            Undo::OrderCarrier { row, o_carrier_id } => {
                live(&db.orders, row)?.write().o_carrier_id = o_carrier_id;
            }
            Undo::OrderLineDelivery { row, ol_delivery_d } => {
                live(&db.order_line, row)?.write().ol_delivery_d = ol_delivery_d;
            }
            Undo::Insert { table, row } => {
                let (done, name) = match table {
                    Inserted::History => (db.delete::<History>(row)?, "history"),
                    Inserted::NewOrder => (db.delete::<NewOrder>(row)?, "new_order"),
                    Inserted::Orders => (db.delete::<Order>(row)?, "orders"),
                    Inserted::OrderLine => (db.delete::<OrderLine>(row)?, "order_line"),
                };
                changed(done, name, row)?;
            }
            Undo::DeleteNewOrder { row } => {
                changed(db.undelete::<NewOrder>(row)?, "new_order", row)?;
            }
        }
        Ok(())
    }
}
