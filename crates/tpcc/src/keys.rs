//! Order-preserving packing of TPC-C keys into one `u64`, the key type of
//! `maestro_storage::index::OlcBTree`.
//!
//! Fields are packed most significant first, so comparing words compares keys
//! lexicographically and a key prefix is a contiguous word range (all orders of
//! a district, all order lines of an order, all customers of a name). Layouts
//! (bits, most significant first):
//!
//! | key | fields |
//! |---|---|
//! | [`WarehouseKey`] | w 16 |
//! | [`DistrictKey`] | w 16, d 4 |
//! | [`CustomerKey`] | w 16, d 4, c 12 |
//! | [`CustomerNameKey`] | w 16, d 4, last-name number 10, c 12 |
//! | [`OrderKey`] (orders, new_order) | w 16, d 4, o 32 |
//! | [`CustomerOrderKey`] | w 16, d 4, c 12, o 32 |
//! | [`OrderLineKey`] | w 16, d 4, o 32, ol_number 4 |
//! | [`ItemKey`] | i 32 |
//! | [`StockKey`] | w 16, i 32 |
//!
//! Limits: w ≤ [`MAX_WAREHOUSES`] (65 535), d ≤ 15, c ≤ 4095, o ≤ [`MAX_O_ID`]
//! (2³² − 1 orders per district), ol_number ≤ 15, name number ≤ 1023, i ≤ 2³² − 1.
//! The TPC-C domains (10 districts, 3000 customers, 15 lines, names 0..=999,
//! 100 000 items) fit with room to spare; a field that does not fit makes
//! `pack` return [`TpccError::KeyOutOfRange`] rather than wrap into a
//! neighbouring field.

use crate::error::TpccError;

/// Largest warehouse id a key can hold.
pub const MAX_WAREHOUSES: u16 = u16::MAX;
/// Largest order id a key can hold (per district).
pub const MAX_O_ID: u32 = u32::MAX;
/// Largest district id, customer id and order-line number a key can hold.
pub const MAX_D_ID: u8 = 15;
pub const MAX_C_ID: u16 = 4095;
pub const MAX_OL_NUMBER: u8 = 15;

const fn mask(bits: u32) -> u64 {
    (1u64 << bits) - 1
}

fn field(name: &'static str, value: u64, bits: u32) -> Result<u64, TpccError> {
    if value > mask(bits) {
        return Err(TpccError::KeyOutOfRange {
            field: name,
            value,
            max: mask(bits),
        });
    }
    Ok(value)
}

macro_rules! packed_key {
    ($(#[$doc:meta])* $name:ident { $($f:ident : $t:ty = $bits:expr),+ $(,)? }) => {
        $(#[$doc])*
        /// The derived `Ord` (field by field) equals the order of packed words.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name {
            $(pub $f: $t),+
        }

        impl $name {
            /// Total bits used, counted from the least significant end.
            pub const BITS: u32 = 0 $(+ $bits)+;
            const FITS: () = assert!(Self::BITS <= 64);

            /// The packed word, or which field does not fit its bits.
            pub fn pack(self) -> Result<u64, TpccError> {
                let () = Self::FITS;
                let mut word = 0u64;
                $(word = (word << $bits) | field(stringify!($f), u64::from(self.$f), $bits)?;)+
                Ok(word)
            }

            /// The key of a packed word (exact inverse of `pack`).
            pub fn unpack(word: u64) -> Self {
                let mut shift = Self::BITS;
                $(
                    shift -= $bits;
                    // Masked to `$bits`, which is never wider than `$t`.
                    let $f = ((word >> shift) & mask($bits)) as $t;
                )+
                $name { $($f),+ }
            }
        }
    };
}

packed_key!(WarehouseKey { w_id: u16 = 16 });
packed_key!(DistrictKey {
    w_id: u16 = 16,
    d_id: u8 = 4
});
packed_key!(CustomerKey {
    w_id: u16 = 16,
    d_id: u8 = 4,
    c_id: u16 = 12
});
packed_key!(
    /// The last-name index: `name` is the number 0..=999 whose syllables spell
    /// `c_last`; the trailing `c_id` makes entries unique.
    CustomerNameKey { w_id: u16 = 16, d_id: u8 = 4, name: u16 = 10, c_id: u16 = 12 }
);
packed_key!(
    /// Orders and new-order rows.
    OrderKey { w_id: u16 = 16, d_id: u8 = 4, o_id: u32 = 32 }
);
packed_key!(
    /// Orders by customer: the last entry of a `(w, d, c)` prefix is the
    /// customer's latest order (Order-Status).
    CustomerOrderKey { w_id: u16 = 16, d_id: u8 = 4, c_id: u16 = 12, o_id: u32 = 32 }
);
packed_key!(OrderLineKey {
    w_id: u16 = 16,
    d_id: u8 = 4,
    o_id: u32 = 32,
    ol_number: u8 = 4
});
packed_key!(ItemKey { i_id: u32 = 32 });
packed_key!(StockKey {
    w_id: u16 = 16,
    i_id: u32 = 32
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip_and_preserve_order() {
        let mut rng = fastrand::Rng::with_seed(11);
        let mut keys: Vec<CustomerOrderKey> = (0..2000)
            .map(|_| CustomerOrderKey {
                w_id: rng.u16(..),
                d_id: rng.u8(..16),
                c_id: rng.u16(..4096),
                o_id: rng.u32(..),
            })
            .collect();
        keys.push(CustomerOrderKey {
            w_id: u16::MAX,
            d_id: 15,
            c_id: 4095,
            o_id: MAX_O_ID,
        });
        for k in &keys {
            assert_eq!(CustomerOrderKey::unpack(k.pack().unwrap()), *k);
        }
        for pair in keys.windows(2) {
            let (a, b) = (pair[0].pack().unwrap(), pair[1].pack().unwrap());
            assert_eq!(pair[0].cmp(&pair[1]), a.cmp(&b), "{pair:?}");
        }
        let ol = OrderLineKey {
            w_id: 2,
            d_id: 10,
            o_id: 3000,
            ol_number: 15,
        };
        assert_eq!(OrderLineKey::unpack(ol.pack().unwrap()), ol);
        let name = CustomerNameKey {
            w_id: 1,
            d_id: 3,
            name: 999,
            c_id: 3000,
        };
        assert_eq!(CustomerNameKey::unpack(name.pack().unwrap()), name);
        assert_eq!(StockKey::BITS, 48);
        assert_eq!(CustomerOrderKey::BITS, 64);
    }

    #[test]
    fn fields_that_do_not_fit_are_errors() {
        let err = CustomerKey {
            w_id: 1,
            d_id: 1,
            c_id: 4096,
        }
        .pack()
        .unwrap_err();
        assert!(matches!(
            err,
            TpccError::KeyOutOfRange {
                field: "c_id",
                value: 4096,
                max: 4095
            }
        ));
        let max = CustomerKey {
            w_id: MAX_WAREHOUSES,
            d_id: MAX_D_ID,
            c_id: MAX_C_ID,
        };
        assert_eq!(max.pack().unwrap(), u64::MAX >> (64 - CustomerKey::BITS));
        assert!(
            DistrictKey {
                w_id: 1,
                d_id: MAX_D_ID + 1
            }
            .pack()
            .is_err()
        );
        let ol = OrderLineKey {
            w_id: 1,
            d_id: 1,
            o_id: 1,
            ol_number: MAX_OL_NUMBER + 1,
        };
        assert!(ol.pack().is_err());
    }
}
