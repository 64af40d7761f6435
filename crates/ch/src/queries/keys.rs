//! What the hash joins of the queries share: TPC-C's composite keys packed
//! into one `u64`, a fast multiplicative hasher for them (the default
//! SipHash is built against adversarial keys, which these are not), and
//! lookups of nations and suppliers' nations.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

use crate::db::Snap;

/// `(w_id, d_id, o_id)` of an order (and of its lines and new-order row).
pub(super) fn order_key(w_id: u16, d_id: u8, o_id: u32) -> u64 {
    (u64::from(w_id) << 40) | (u64::from(d_id) << 32) | u64::from(o_id)
}

/// `(w_id, d_id, c_id)` of a customer.
pub(super) fn customer_key(w_id: u16, d_id: u8, c_id: u16) -> u64 {
    (u64::from(w_id) << 24) | (u64::from(d_id) << 16) | u64::from(c_id)
}

/// FxHash's step (one rotate, xor and multiply per word) and rustc-hash 2's
/// final rotation.
#[derive(Default, Clone, Copy)]
pub(super) struct KeyHasher(u64);

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl KeyHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        // A product's low bits depend only on the key's low bits, and the
        // table picks buckets by the low bits: without the rotation, the
        // orders of different districts with one o_id (and the customers
        // with one c_id) would all start probing at the same bucket.
        self.0.rotate_left(26)
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
    }

    fn write_u8(&mut self, v: u8) {
        self.add(u64::from(v));
    }

    fn write_u16(&mut self, v: u16) {
        self.add(u64::from(v));
    }

    fn write_u32(&mut self, v: u32) {
        self.add(u64::from(v));
    }

    fn write_u64(&mut self, v: u64) {
        self.add(v);
    }

    fn write_usize(&mut self, v: usize) {
        self.add(v as u64);
    }
}

pub(super) type KeyMap<K, V> = HashMap<K, V, BuildHasherDefault<KeyHasher>>;
pub(super) type KeySet<K> = HashSet<K, BuildHasherDefault<KeyHasher>>;

/// The key of the nation named `name` (the queries name nations by name).
pub(super) fn nation_named(s: &Snap, name: &str) -> Option<u8> {
    s.tables()
        .nations
        .iter()
        .find(|n| n.n_name == name)
        .map(|n| n.n_nationkey)
}

/// Per nation key (index 0–255): whether the nation exists and its region's
/// name satisfies `region`.
pub(super) fn nations_in_region(s: &Snap, region: impl Fn(&str) -> bool) -> [bool; 256] {
    let mut in_region = [false; 256];
    for n in &s.tables().nations {
        if s.tables()
            .region(n.n_regionkey)
            .is_some_and(|r| region(r.r_name))
        {
            in_region[usize::from(n.n_nationkey)] = true;
        }
    }
    in_region
}

/// Supplier key → its nation key (index 0, no supplier: 0, no nation's key).
pub(super) fn supplier_nations(s: &Snap) -> Vec<u8> {
    let suppliers = &s.tables().suppliers;
    let mut nation = vec![0u8; suppliers.len() + 1];
    for su in suppliers {
        nation[su.su_suppkey as usize] = su.su_nationkey;
    }
    nation
}
