//! TPC-C consistency conditions 1–4 (clause 3.3.2), computed from the rows
//! themselves (table scans, not indexes) so a corrupted row is caught even when
//! the indexes still look right. Meant for a quiescent database: rows changed
//! during the scans may be seen half-way through a transaction.

use std::collections::BTreeMap;
use std::fmt;

use crate::db::Database;
use crate::schema::Money;

/// One violated condition with the numbers that disagree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Violation {
    /// 1: `W_YTD = sum(D_YTD)` over the warehouse's districts (`w_ytd` is
    /// `None` when districts exist for a missing warehouse row).
    WarehouseYtd {
        w_id: u16,
        w_ytd: Option<Money>,
        sum_d_ytd: Money,
    },
    /// 2: `D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)`; `max(NO_O_ID)` only
    /// when the district has new-order rows, and a missing order table part
    /// counts as `max(O_ID) = 0`.
    NextOrderId {
        w_id: u16,
        d_id: u8,
        d_next_o_id: Option<u32>,
        max_o_id: Option<u32>,
        max_no_o_id: Option<u32>,
    },
    /// 3: `max(NO_O_ID) - min(NO_O_ID) + 1` = number of new-order rows.
    NewOrderRange {
        w_id: u16,
        d_id: u8,
        min_no_o_id: u32,
        max_no_o_id: u32,
        new_orders: u64,
    },
    /// 4: `sum(O_OL_CNT)` = number of order-line rows.
    OrderLineCount {
        w_id: u16,
        d_id: u8,
        sum_o_ol_cnt: u64,
        order_lines: u64,
    },
}

impl Violation {
    /// The number of the clause 3.3.2 condition (1–4).
    pub fn condition(&self) -> u8 {
        match self {
            Violation::WarehouseYtd { .. } => 1,
            Violation::NextOrderId { .. } => 2,
            Violation::NewOrderRange { .. } => 3,
            Violation::OrderLineCount { .. } => 4,
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "consistency condition {}: ", self.condition())?;
        match self {
            Violation::WarehouseYtd {
                w_id,
                w_ytd,
                sum_d_ytd,
            } => write!(
                f,
                "warehouse {w_id}: w_ytd {w_ytd:?} != sum(d_ytd) {sum_d_ytd} (cents)"
            ),
            Violation::NextOrderId {
                w_id,
                d_id,
                d_next_o_id,
                max_o_id,
                max_no_o_id,
            } => write!(
                f,
                "district ({w_id}, {d_id}): d_next_o_id {d_next_o_id:?} - 1 vs \
                 max(o_id) {max_o_id:?}, max(no_o_id) {max_no_o_id:?}"
            ),
            Violation::NewOrderRange {
                w_id,
                d_id,
                min_no_o_id,
                max_no_o_id,
                new_orders,
            } => write!(
                f,
                "district ({w_id}, {d_id}): new-order ids {min_no_o_id}..={max_no_o_id} \
                 but {new_orders} rows"
            ),
            Violation::OrderLineCount {
                w_id,
                d_id,
                sum_o_ol_cnt,
                order_lines,
            } => write!(
                f,
                "district ({w_id}, {d_id}): sum(o_ol_cnt) {sum_o_ol_cnt} != \
                 {order_lines} order lines"
            ),
        }
    }
}

/// Per-district aggregates gathered in one pass per table.
#[derive(Default)]
struct DistrictState {
    d_next_o_id: Option<u32>,
    max_o_id: Option<u32>,
    sum_o_ol_cnt: u64,
    new_order_ids: Option<(u32, u32)>,
    new_orders: u64,
    order_lines: u64,
}

/// Checks conditions 1–4 on every warehouse and district; empty when consistent.
pub fn check_consistency(db: &Database) -> Vec<Violation> {
    let mut warehouses: BTreeMap<u16, (Option<Money>, Money)> = BTreeMap::new();
    let mut districts: BTreeMap<(u16, u8), DistrictState> = BTreeMap::new();
    db.warehouse.scan(|_, w| {
        warehouses.entry(w.w_id).or_default().0 = Some(w.w_ytd);
    });
    db.district.scan(|_, d| {
        warehouses.entry(d.d_w_id).or_default().1 += d.d_ytd;
        districts.entry((d.d_w_id, d.d_id)).or_default().d_next_o_id = Some(d.d_next_o_id);
    });
    db.orders.scan(|_, o| {
        let s = districts.entry((o.o_w_id, o.o_d_id)).or_default();
        s.max_o_id = s.max_o_id.max(Some(o.o_id));
        s.sum_o_ol_cnt += u64::from(o.o_ol_cnt);
    });
    db.new_order.scan(|_, no| {
        let s = districts.entry((no.no_w_id, no.no_d_id)).or_default();
        let id = no.no_o_id;
        s.new_order_ids = Some(
            s.new_order_ids
                .map_or((id, id), |(lo, hi)| (lo.min(id), hi.max(id))),
        );
        s.new_orders += 1;
    });
    db.order_line.scan(|_, ol| {
        districts
            .entry((ol.ol_w_id, ol.ol_d_id))
            .or_default()
            .order_lines += 1;
    });

    let mut violations = Vec::new();
    for (&w_id, &(w_ytd, sum_d_ytd)) in &warehouses {
        if w_ytd != Some(sum_d_ytd) {
            violations.push(Violation::WarehouseYtd {
                w_id,
                w_ytd,
                sum_d_ytd,
            });
        }
    }
    for (&(w_id, d_id), s) in &districts {
        // Compare `d_next_o_id` with max + 1 in u64, which cannot overflow.
        let next = s.d_next_o_id.map(u64::from);
        let after_orders = u64::from(s.max_o_id.unwrap_or(0)) + 1;
        let after_new_orders = s.new_order_ids.map(|(_, hi)| u64::from(hi) + 1);
        if next != Some(after_orders) || after_new_orders.is_some_and(|n| next != Some(n)) {
            violations.push(Violation::NextOrderId {
                w_id,
                d_id,
                d_next_o_id: s.d_next_o_id,
                max_o_id: s.max_o_id,
                max_no_o_id: s.new_order_ids.map(|(_, hi)| hi),
            });
        }
        if let Some((lo, hi)) = s.new_order_ids
            && u64::from(hi - lo) + 1 != s.new_orders
        {
            violations.push(Violation::NewOrderRange {
                w_id,
                d_id,
                min_no_o_id: lo,
                max_no_o_id: hi,
                new_orders: s.new_orders,
            });
        }
        if s.sum_o_ol_cnt != s.order_lines {
            violations.push(Violation::OrderLineCount {
                w_id,
                d_id,
                sum_o_ol_cnt: s.sum_o_ol_cnt,
                order_lines: s.order_lines,
            });
        }
    }
    violations
}
