//! Row types of the nine TPC-C tables (clause 1.3), with the spec's fields.
//!
//! Units and representations:
//! - money (`numeric(n, 2)`): [`Money`], an `i64` count of cents (`w_ytd`
//!   300 000.00 is `30_000_000`); exact, so sums in the consistency checks are too;
//! - rates (`numeric(4, 4)`: taxes, discounts): [`Rate`], an `i32` count of
//!   ten-thousandths (0.1234 is `1234`);
//! - dates and times: [`Timestamp`], seconds since the Unix epoch (UTC);
//! - nulls (`o_carrier_id`, `ol_delivery_d`): `Option`;
//! - identifiers: the narrowest unsigned type that holds the key field of
//!   [`crate::keys`] (`w_id: u16`, `d_id: u8`, `c_id: u16`, `o_id: u32`,
//!   `ol_number: u8`, `i_id: u32`);
//! - counters (`*_cnt`, `s_ytd`): `u32`, far above the spec's `numeric(4)`/`(8)`;
//!   transactions add to them with `saturating_add`;
//! - text: [`Text`], a shared `str` (ASCII; the loader draws letters and
//!   digits): copying a row — what every MVCC version of an updated row is —
//!   shares its texts instead of allocating each again; except the
//!   fixed 24-character district infos ([`DistInfo`]), kept inline because
//!   New-Order copies one into every order line it inserts.

use crate::error::TpccError;

/// Cents (scale 2).
pub type Money = i64;
/// Ten-thousandths (scale 4).
pub type Rate = i32;
/// Seconds since 1970-01-01T00:00:00Z.
pub type Timestamp = u64;

/// A row's text: immutable and shared, so a row's copy (each MVCC version
/// of an updated row is one) clones pointers, not strings — a Customer has
/// twelve. A changed text is a new one.
pub type Text = std::sync::Arc<str>;

/// `s_dist_xx` / `ol_dist_info`: 24 ASCII characters, inline.
pub type DistInfo = [u8; 24];

/// Decimal digits after the point of [`Money`] and [`Rate`].
pub const MONEY_SCALE: u32 = 2;
pub const RATE_SCALE: u32 = 4;

/// Districts per warehouse, customers per district, items (clause 1.2/4.3).
pub const DISTRICTS_PER_WAREHOUSE: u8 = 10;
pub const CUSTOMERS_PER_DISTRICT: u16 = 3000;
pub const ITEMS: u32 = 100_000;
/// Orders loaded per district; orders from [`FIRST_UNDELIVERED_O_ID`] on are
/// undelivered and have a new-order row.
pub const ORDERS_PER_DISTRICT: u32 = 3000;
pub const FIRST_UNDELIVERED_O_ID: u32 = 2101;

/// The table names in the order the spec lists them (`orders`, since `order`
/// is an SQL keyword); also the CSV file stems of the export.
pub const TABLE_NAMES: [&str; 9] = [
    "warehouse",
    "district",
    "customer",
    "history",
    "new_order",
    "orders",
    "order_line",
    "item",
    "stock",
];

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Warehouse {
    pub w_id: u16,
    pub w_name: Text,
    pub w_street_1: Text,
    pub w_street_2: Text,
    pub w_city: Text,
    pub w_state: Text,
    pub w_zip: Text,
    pub w_tax: Rate,
    pub w_ytd: Money,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct District {
    pub d_id: u8,
    pub d_w_id: u16,
    pub d_name: Text,
    pub d_street_1: Text,
    pub d_street_2: Text,
    pub d_city: Text,
    pub d_state: Text,
    pub d_zip: Text,
    pub d_tax: Rate,
    pub d_ytd: Money,
    pub d_next_o_id: u32,
}

impl District {
    /// Hands out `d_next_o_id` and advances it (New-Order); fails instead of
    /// wrapping once the id space of [`crate::keys::MAX_O_ID`] is used up.
    pub fn take_next_o_id(&mut self) -> Result<u32, TpccError> {
        let o_id = self.d_next_o_id;
        self.d_next_o_id = o_id.checked_add(1).ok_or(TpccError::KeyOutOfRange {
            field: "d_next_o_id",
            value: u64::from(o_id) + 1,
            max: u64::from(crate::keys::MAX_O_ID),
        })?;
        Ok(o_id)
    }
}

impl Stock {
    /// New-Order's update of one line's stock row (clause 2.4.2.2):
    /// quantity down by `quantity` (refilled by 91 when fewer than 10 would
    /// remain), year-to-date and order count up, and the remote count up for
    /// a supplying warehouse other than the order's.
    pub fn take(&mut self, quantity: u8, remote: bool) {
        let q = i32::from(quantity);
        self.s_quantity = if self.s_quantity >= q + 10 {
            self.s_quantity - q
        } else {
            self.s_quantity - q + 91
        };
        self.s_ytd = self.s_ytd.saturating_add(u32::from(quantity));
        self.s_order_cnt = self.s_order_cnt.saturating_add(1);
        if remote {
            self.s_remote_cnt = self.s_remote_cnt.saturating_add(1);
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Customer {
    pub c_id: u16,
    pub c_d_id: u8,
    pub c_w_id: u16,
    pub c_first: Text,
    pub c_middle: Text,
    pub c_last: Text,
    pub c_street_1: Text,
    pub c_street_2: Text,
    pub c_city: Text,
    pub c_state: Text,
    pub c_zip: Text,
    pub c_phone: Text,
    pub c_since: Timestamp,
    /// "GC" (good) or "BC" (bad credit).
    pub c_credit: Text,
    pub c_credit_lim: Money,
    pub c_discount: Rate,
    pub c_balance: Money,
    pub c_ytd_payment: Money,
    pub c_payment_cnt: u32,
    pub c_delivery_cnt: u32,
    pub c_data: Text,
}

/// History has no primary key in the spec and no index here.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct History {
    pub h_c_id: u16,
    pub h_c_d_id: u8,
    pub h_c_w_id: u16,
    pub h_d_id: u8,
    pub h_w_id: u16,
    pub h_date: Timestamp,
    pub h_amount: Money,
    pub h_data: Text,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NewOrder {
    pub no_o_id: u32,
    pub no_d_id: u8,
    pub no_w_id: u16,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Order {
    pub o_id: u32,
    pub o_d_id: u8,
    pub o_w_id: u16,
    pub o_c_id: u16,
    pub o_entry_d: Timestamp,
    /// 1..=10 once delivered, `None` before.
    pub o_carrier_id: Option<u8>,
    pub o_ol_cnt: u8,
    /// 1 when every line is supplied by the home warehouse, else 0.
    pub o_all_local: u8,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct OrderLine {
    pub ol_o_id: u32,
    pub ol_d_id: u8,
    pub ol_w_id: u16,
    pub ol_number: u8,
    pub ol_i_id: u32,
    pub ol_supply_w_id: u16,
    /// `None` until Delivery.
    pub ol_delivery_d: Option<Timestamp>,
    pub ol_quantity: u8,
    pub ol_amount: Money,
    pub ol_dist_info: DistInfo,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Item {
    pub i_id: u32,
    pub i_im_id: u32,
    pub i_name: Text,
    pub i_price: Money,
    pub i_data: Text,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Stock {
    pub s_i_id: u32,
    pub s_w_id: u16,
    /// Signed in the spec; New-Order keeps it in 10..=100 by adding 91.
    pub s_quantity: i32,
    /// `s_dist_01` .. `s_dist_10`: `s_dist[d_id - 1]`.
    /// Read-only after the load, so shared by the row's versions (a New-Order
    /// line's stock update would otherwise copy its 240 bytes).
    pub s_dist: std::sync::Arc<[DistInfo; 10]>,
    pub s_ytd: u32,
    pub s_order_cnt: u32,
    pub s_remote_cnt: u32,
    pub s_data: Text,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_order_id_fails_instead_of_wrapping() {
        let mut d = District {
            d_id: 1,
            d_w_id: 1,
            d_name: Text::from(""),
            d_street_1: Text::from(""),
            d_street_2: Text::from(""),
            d_city: Text::from(""),
            d_state: Text::from(""),
            d_zip: Text::from(""),
            d_tax: 0,
            d_ytd: 0,
            d_next_o_id: 3001,
        };
        assert_eq!(d.take_next_o_id().unwrap(), 3001);
        assert_eq!(d.d_next_o_id, 3002);
        d.d_next_o_id = u32::MAX;
        assert!(matches!(
            d.take_next_o_id(),
            Err(TpccError::KeyOutOfRange {
                field: "d_next_o_id",
                ..
            })
        ));
        assert_eq!(d.d_next_o_id, u32::MAX);
    }
}
