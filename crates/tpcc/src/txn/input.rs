//! The transactions' inputs and their generation by clauses 2.4.1, 2.5.1,
//! 2.6.1, 2.7.1 and 2.8.1, with the standard mix of clause 5.2.3
//! (45/43/4/4/4). Inputs are plain values, so a test can build one by hand
//! and a retried transaction reuses its input unchanged.

use crate::random::TpccRng;
use crate::schema::{DISTRICTS_PER_WAREHOUSE, ITEMS, Money};

/// The five transaction types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TxnKind {
    NewOrder,
    Payment,
    OrderStatus,
    Delivery,
    StockLevel,
}

impl TxnKind {
    pub const ALL: [TxnKind; 5] = [
        TxnKind::NewOrder,
        TxnKind::Payment,
        TxnKind::OrderStatus,
        TxnKind::Delivery,
        TxnKind::StockLevel,
    ];

    /// Snake-case name, as used in reports and JSON metric names.
    pub fn name(self) -> &'static str {
        match self {
            TxnKind::NewOrder => "new_order",
            TxnKind::Payment => "payment",
            TxnKind::OrderStatus => "order_status",
            TxnKind::Delivery => "delivery",
            TxnKind::StockLevel => "stock_level",
        }
    }

    /// Position in [`TxnKind::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// Share of the mix in percent (clause 5.2.3: Payment ≥ 43 %, the three
    /// others ≥ 4 % each, New-Order the rest).
    pub const fn mix_percent(self) -> u64 {
        match self {
            TxnKind::NewOrder => 45,
            TxnKind::Payment => 43,
            TxnKind::OrderStatus | TxnKind::Delivery | TxnKind::StockLevel => 4,
        }
    }
}

/// Order lines of a New-Order: 5..=15 (clause 2.4.1.3).
pub const MAX_ORDER_LINES: usize = 15;
/// Order lines a New-Order has at least (clause 2.4.1.3).
pub const MIN_ORDER_LINES: usize = 5;

/// The item id New-Order's 1 % rollback uses: one past the last item, so it
/// is "an unused value" (clause 2.4.1.4).
pub const UNUSED_ITEM_ID: u32 = ITEMS + 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NewOrderLine {
    pub i_id: u32,
    pub supply_w_id: u16,
    pub quantity: u8,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewOrderInput {
    pub w_id: u16,
    pub d_id: u8,
    pub c_id: u16,
    /// The first `ol_cnt` entries are the order's lines, in order.
    pub lines: [NewOrderLine; MAX_ORDER_LINES],
    pub ol_cnt: u8,
}

impl NewOrderInput {
    pub fn lines(&self) -> &[NewOrderLine] {
        &self.lines[..usize::from(self.ol_cnt).min(MAX_ORDER_LINES)]
    }
}

/// How Payment and Order-Status name their customer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CustomerSelector {
    Id(u16),
    /// The number (0..=999) whose syllables spell `c_last`.
    LastName(u16),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaymentInput {
    pub w_id: u16,
    pub d_id: u8,
    pub c_w_id: u16,
    pub c_d_id: u8,
    pub customer: CustomerSelector,
    pub h_amount: Money,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderStatusInput {
    pub w_id: u16,
    pub d_id: u8,
    pub customer: CustomerSelector,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryInput {
    pub w_id: u16,
    pub o_carrier_id: u8,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StockLevelInput {
    pub w_id: u16,
    pub d_id: u8,
    pub threshold: i32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TxnInput {
    NewOrder(NewOrderInput),
    Payment(PaymentInput),
    OrderStatus(OrderStatusInput),
    Delivery(DeliveryInput),
    StockLevel(StockLevelInput),
}

impl TxnInput {
    pub fn kind(&self) -> TxnKind {
        match self {
            TxnInput::NewOrder(_) => TxnKind::NewOrder,
            TxnInput::Payment(_) => TxnKind::Payment,
            TxnInput::OrderStatus(_) => TxnKind::OrderStatus,
            TxnInput::Delivery(_) => TxnKind::Delivery,
            TxnInput::StockLevel(_) => TxnKind::StockLevel,
        }
    }
}

/// A terminal's input stream: its home warehouse, its fixed Stock-Level
/// district (clause 2.8.1.1) and a seeded generator with the run's NURand
/// constants.
#[derive(Debug, Clone)]
pub struct InputGenerator {
    rng: TpccRng,
    warehouses: u16,
    w_id: u16,
    stock_level_d_id: u8,
}

impl InputGenerator {
    /// `w_id` in `1..=warehouses`, `stock_level_d_id` in 1..=10.
    pub fn new(rng: TpccRng, warehouses: u16, w_id: u16, stock_level_d_id: u8) -> Self {
        InputGenerator {
            rng,
            warehouses,
            w_id,
            stock_level_d_id,
        }
    }

    /// The next transaction of the mix.
    pub fn next_input(&mut self) -> TxnInput {
        let kind = self.next_kind();
        self.input(kind)
    }

    /// A type drawn with the mix's weights.
    pub fn next_kind(&mut self) -> TxnKind {
        let mut draw = self.rng.uniform(0, 99);
        for kind in TxnKind::ALL {
            if draw < kind.mix_percent() {
                return kind;
            }
            draw -= kind.mix_percent();
        }
        TxnKind::NewOrder
    }

    /// An input of type `kind`.
    pub fn input(&mut self, kind: TxnKind) -> TxnInput {
        match kind {
            TxnKind::NewOrder => TxnInput::NewOrder(self.new_order()),
            TxnKind::Payment => TxnInput::Payment(self.payment()),
            TxnKind::OrderStatus => TxnInput::OrderStatus(OrderStatusInput {
                w_id: self.w_id,
                d_id: self.district(),
                customer: self.customer(),
            }),
            TxnKind::Delivery => TxnInput::Delivery(DeliveryInput {
                w_id: self.w_id,
                o_carrier_id: self.rng.uniform(1, 10) as u8,
            }),
            TxnKind::StockLevel => TxnInput::StockLevel(StockLevelInput {
                w_id: self.w_id,
                d_id: self.stock_level_d_id,
                threshold: self.rng.uniform(10, 20) as i32,
            }),
        }
    }

    fn district(&mut self) -> u8 {
        self.rng.uniform(1, u64::from(DISTRICTS_PER_WAREHOUSE)) as u8
    }

    /// A warehouse other than the home one, uniformly (the home one if W = 1).
    fn remote_warehouse(&mut self) -> u16 {
        if self.warehouses <= 1 {
            return self.w_id;
        }
        let w = self.rng.uniform(1, u64::from(self.warehouses) - 1) as u16;
        if w >= self.w_id { w + 1 } else { w }
    }

    /// 60 % by last name, else by id (clauses 2.5.1.2, 2.6.1.2).
    fn customer(&mut self) -> CustomerSelector {
        if self.rng.percent(60) {
            CustomerSelector::LastName(self.rng.last_name_number())
        } else {
            CustomerSelector::Id(self.rng.customer_id())
        }
    }

    fn new_order(&mut self) -> NewOrderInput {
        let d_id = self.district();
        let c_id = self.rng.customer_id();
        let ol_cnt = self
            .rng
            .uniform(MIN_ORDER_LINES as u64, MAX_ORDER_LINES as u64) as u8;
        let rollback = self.rng.uniform(1, 100) == 1;
        let mut lines = [NewOrderLine::default(); MAX_ORDER_LINES];
        for (n, line) in lines.iter_mut().take(usize::from(ol_cnt)).enumerate() {
            let last = n + 1 == usize::from(ol_cnt);
            line.i_id = if last && rollback {
                UNUSED_ITEM_ID
            } else {
                self.rng.item_id()
            };
            // 1 % of the lines are supplied by a remote warehouse (if any).
            line.supply_w_id = if self.rng.uniform(1, 100) == 1 {
                self.remote_warehouse()
            } else {
                self.w_id
            };
            line.quantity = self.rng.uniform(1, 10) as u8;
        }
        NewOrderInput {
            w_id: self.w_id,
            d_id,
            c_id,
            lines,
            ol_cnt,
        }
    }

    fn payment(&mut self) -> PaymentInput {
        let d_id = self.district();
        // 85 % home, 15 % a remote warehouse's customer (clause 2.5.1.2).
        let (c_w_id, c_d_id) = if self.rng.uniform(1, 100) <= 85 {
            (self.w_id, d_id)
        } else {
            (self.remote_warehouse(), self.district())
        };
        PaymentInput {
            w_id: self.w_id,
            d_id,
            c_w_id,
            c_d_id,
            customer: self.customer(),
            h_amount: self.rng.uniform(100, 500_000) as Money,
        }
    }
}
