//! Lock names: what a lock protects, packed into one word, and transaction
//! timestamps (ages, which pick a deadlock's victim, plus an attempt number).

use std::fmt;

use crate::error::TpccError;
use crate::keys::*;

/// What a lock protects. A name is a space plus a packed key of
/// [`crate::keys`]; the transactions' locking rules (which space guards which
/// reads and writes) are in `txn/mod.rs`.
///
/// Locks name a row's *mutable* column group, not the whole row: columns that
/// no transaction ever updates (`w_tax`, names, addresses, `c_credit`,
/// `s_dist_xx`, the item table…) are read without locks, since any two reads
/// of them agree. The district row is split in two groups (`d_ytd` for
/// Payment, `d_next_o_id` for New-Order), so those two transactions do not
/// conflict on a district they share.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum LockSpace {
    /// `w_ytd` (Payment). Key: [`WarehouseKey`].
    WarehouseYtd = 1,
    /// `d_ytd` (Payment). Key: [`DistrictKey`].
    DistrictYtd = 2,
    /// `d_next_o_id`, and with it which orders of the district exist: while a
    /// reader holds it shared, every order below `d_next_o_id` is committed
    /// (New-Order exclusive, Stock-Level shared). Key: [`DistrictKey`].
    DistrictNextOId = 3,
    /// The head of a district's new-order queue (Delivery). Key: [`DistrictKey`].
    DeliveryQueue = 4,
    /// A customer's balance, counters and `c_data`. Key: [`CustomerKey`].
    Customer = 5,
    /// An order together with its order lines and its new-order row. Key: [`OrderKey`].
    Order = 6,
    /// A stock row's quantity and counters. Key: [`StockKey`].
    Stock = 7,
    /// Names for tests and tools; no transaction uses them.
    Other = 8,
}

impl LockSpace {
    const ALL: [LockSpace; 8] = [
        LockSpace::WarehouseYtd,
        LockSpace::DistrictYtd,
        LockSpace::DistrictNextOId,
        LockSpace::DeliveryQueue,
        LockSpace::Customer,
        LockSpace::Order,
        LockSpace::Stock,
        LockSpace::Other,
    ];
}

/// Bits of a [`LockName`] left for the key; the space takes the top byte. The
/// widest key locked, [`OrderKey`], uses 52.
pub const LOCK_KEY_BITS: u32 = 56;

/// A lock's name: `space << 56 | key`.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LockName(u64);

impl LockName {
    /// The name of `key` in `space`; fails if the key needs more than
    /// [`LOCK_KEY_BITS`] bits (never for the keys the transactions lock).
    pub fn new(space: LockSpace, key: u64) -> Result<Self, TpccError> {
        let max = (1u64 << LOCK_KEY_BITS) - 1;
        if key > max {
            return Err(TpccError::KeyOutOfRange {
                field: "lock key",
                value: key,
                max,
            });
        }
        Ok(LockName(((space as u64) << LOCK_KEY_BITS) | key))
    }

    pub fn space(self) -> LockSpace {
        let tag = (self.0 >> LOCK_KEY_BITS) as u8;
        // Names are only built by `new`, so the tag is one of the spaces.
        LockSpace::ALL[usize::from(tag) - 1]
    }

    pub fn key(self) -> u64 {
        self.0 & ((1u64 << LOCK_KEY_BITS) - 1)
    }

    /// The packed word (the lock table's hash key).
    pub(crate) fn word(self) -> u64 {
        self.0
    }

    pub fn warehouse_ytd(w_id: u16) -> Result<Self, TpccError> {
        Self::new(LockSpace::WarehouseYtd, WarehouseKey { w_id }.pack()?)
    }

    pub fn district_ytd(w_id: u16, d_id: u8) -> Result<Self, TpccError> {
        Self::new(LockSpace::DistrictYtd, DistrictKey { w_id, d_id }.pack()?)
    }

    pub fn district_next_o_id(w_id: u16, d_id: u8) -> Result<Self, TpccError> {
        Self::new(
            LockSpace::DistrictNextOId,
            DistrictKey { w_id, d_id }.pack()?,
        )
    }

    pub fn delivery_queue(w_id: u16, d_id: u8) -> Result<Self, TpccError> {
        Self::new(LockSpace::DeliveryQueue, DistrictKey { w_id, d_id }.pack()?)
    }

    pub fn customer(w_id: u16, d_id: u8, c_id: u16) -> Result<Self, TpccError> {
        Self::new(
            LockSpace::Customer,
            CustomerKey { w_id, d_id, c_id }.pack()?,
        )
    }

    pub fn order(w_id: u16, d_id: u8, o_id: u32) -> Result<Self, TpccError> {
        Self::new(LockSpace::Order, OrderKey { w_id, d_id, o_id }.pack()?)
    }

    pub fn stock(w_id: u16, i_id: u32) -> Result<Self, TpccError> {
        Self::new(LockSpace::Stock, StockKey { w_id, i_id }.pack()?)
    }
}

impl fmt::Debug for LockName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}({:#x})", self.space(), self.key())
    }
}

/// Shared (read) or exclusive (write).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockMode {
    Shared,
    Exclusive,
}

/// One attempt of a transaction: its age (`begin` order) in the high bits,
/// the attempt number in the low [`TxnTs::ATTEMPT_BITS`]. Smaller is older.
/// A deadlock's victim is its youngest member; a victim restarts with
/// [`TxnTs::retry`], which keeps its age, so it only gets older relative to
/// new transactions and eventually cannot be chosen. The attempt number makes
/// each attempt a new identity in the wait-for graph: an edge some waiter
/// still has to a victim's *previous* attempt (recorded before the victim
/// released its locks) leads nowhere and cannot close a phantom cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TxnTs(pub u64);

impl TxnTs {
    /// Bits of the attempt number: 2^20 − 1 restarts of one transaction
    /// (guessed far beyond any run: restarts need deadlocks in which it is
    /// the youngest, and it ages).
    pub const ATTEMPT_BITS: u32 = 20;

    /// The first attempt of the `age`-th transaction.
    pub fn first(age: u64) -> TxnTs {
        TxnTs(age << Self::ATTEMPT_BITS)
    }

    /// The transaction's age (equal for all its attempts).
    pub fn age(self) -> u64 {
        self.0 >> Self::ATTEMPT_BITS
    }

    /// The next attempt after a deadlock: same age, a new identity. Past
    /// the last attempt number it stays put (still correct; an old edge to it
    /// could then only cause a spurious deadlock).
    pub fn retry(self) -> TxnTs {
        let mask = (1u64 << Self::ATTEMPT_BITS) - 1;
        if self.0 & mask == mask {
            self
        } else {
            TxnTs(self.0 + 1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_reject_wide_keys() {
        let n = LockName::order(65_535, 15, u32::MAX).unwrap();
        assert_eq!(n.space(), LockSpace::Order);
        assert_eq!(OrderKey::unpack(n.key()).o_id, u32::MAX);
        assert_ne!(
            LockName::district_ytd(1, 1).unwrap(),
            LockName::district_next_o_id(1, 1).unwrap()
        );
        assert!(LockName::new(LockSpace::Other, 1 << LOCK_KEY_BITS).is_err());
        for space in LockSpace::ALL {
            assert_eq!(LockName::new(space, 7).unwrap().space(), space);
        }
    }

    #[test]
    fn a_retry_keeps_the_age_and_stays_older_than_later_transactions() {
        let (a, b) = (TxnTs::first(5), TxnTs::first(6));
        let r = a.retry().retry();
        assert!(a < r && r < b && r != a);
        assert_eq!((r.age(), b.age()), (5, 6));
        let last = TxnTs(a.0 | ((1 << TxnTs::ATTEMPT_BITS) - 1));
        assert_eq!(last.retry(), last);
    }
}
