//! CH-benCHmark's three tables beside TPC-C's nine: SUPPLIER (10 000 rows),
//! NATION (62 rows keyed by the ASCII codes of `0-9A-Za-z`) and REGION (5),
//! as the BenchBase implementation (which most published CH numbers use)
//! defines them. A stock row's supplier is `(s_w_id · s_i_id) mod 10000`
//! ([`supplier_of`]); a customer's nation is the ASCII code of the first
//! character of `c_state` ([`nation_of_state`]).
//!
//! The tables are read-only during a run (no transaction writes them), so
//! they are plain vectors indexed by key, not versioned tables.

use maestro_tpcc::Money;

pub const SUPPLIERS: u32 = 10_000;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Supplier {
    pub su_suppkey: u32,
    pub su_name: String,
    pub su_address: String,
    pub su_nationkey: u8,
    pub su_phone: String,
    pub su_acctbal: Money,
    pub su_comment: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nation {
    pub n_nationkey: u8,
    pub n_name: &'static str,
    pub n_regionkey: u8,
    pub n_comment: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    pub r_regionkey: u8,
    pub r_name: &'static str,
    pub r_comment: String,
}

/// (key, name, region) of the 62 nations, as BenchBase's `nation_gen.tbl`
/// lists them: keys 48–57, 65–90 and 97–122.
const NATIONS: [(u8, &str, u8); 62] = [
    (48, "Australia", 4),
    (49, "Belgium", 5),
    (50, "Cameroon", 1),
    (51, "Denmark", 5),
    (52, "Ecuador", 2),
    (53, "France", 5),
    (54, "Germany", 5),
    (55, "Hungary", 5),
    (56, "Italy", 5),
    (57, "Japan", 3),
    (65, "Kenya", 1),
    (66, "Lithuania", 5),
    (67, "Mexico", 2),
    (68, "Netherlands", 5),
    (69, "Oman", 1),
    (70, "Portugal", 5),
    (71, "Qatar", 1),
    (72, "Rwanda", 1),
    (73, "Serbia", 5),
    (74, "Togo", 1),
    (75, "United States", 2),
    (76, "Vietnam", 3),
    (77, "Singapore", 3),
    (78, "Cambodia", 3),
    (79, "Yemen", 1),
    (80, "Zimbabwe", 1),
    (81, "Argentina", 2),
    (82, "Bolivia", 2),
    (83, "Canada", 2),
    (84, "Dominican Republic", 2),
    (85, "Egypt", 1),
    (86, "Finnland", 5),
    (87, "Ghana", 1),
    (88, "Haiti", 2),
    (89, "India", 3),
    (90, "Jamaica", 4),
    (97, "Kazakhstan", 3),
    (98, "Luxembourg", 5),
    (99, "Morocco", 1),
    (100, "Norway", 5),
    (101, "Poland", 5),
    (102, "Peru", 2),
    (103, "Nicaragua", 2),
    (104, "Romania", 5),
    (105, "South Africa", 1),
    (106, "Thailand", 3),
    (107, "United Kingdom", 5),
    (108, "Venezuela", 2),
    (109, "Liechtenstein", 5),
    (110, "Austria", 5),
    (111, "Laos", 3),
    (112, "Zambia", 1),
    (113, "Switzerland", 5),
    (114, "China", 3),
    (115, "Papua New Guinea", 4),
    (116, "East Timor", 4),
    (117, "Bulgaria", 5),
    (118, "Brazil", 2),
    (119, "Albania", 5),
    (120, "Andorra", 5),
    (121, "Belize", 2),
    (122, "Botswana", 1),
];

const REGIONS: [(u8, &str); 5] = [
    (1, "Africa"),
    (2, "America"),
    (3, "Asia"),
    (4, "Australia"),
    (5, "Europe"),
];

/// The supplier of stock row `(s_w_id, s_i_id)`: `(s_w_id · s_i_id) mod 10000`
/// (0 is a key no supplier has, as in BenchBase, whose keys are 1–10000).
pub fn supplier_of(s_w_id: u16, s_i_id: u32) -> u32 {
    ((u64::from(s_w_id) * u64::from(s_i_id)) % u64::from(SUPPLIERS)) as u32
}

/// A customer's nation key: the ASCII code of `c_state`'s first character.
pub fn nation_of_state(c_state: &str) -> Option<u8> {
    c_state.bytes().next()
}

/// The three tables, generated from `seed` (names and regions are fixed; the
/// supplier columns and the comments are random, as in BenchBase).
pub struct ChTables {
    /// Index `k − 1` holds supplier `k`.
    pub suppliers: Vec<Supplier>,
    /// In key order.
    pub nations: Vec<Nation>,
    /// Index `k − 1` holds region `k`.
    pub regions: Vec<Region>,
    /// Nation key → index in `nations` (`u8::MAX` where there is none).
    nation_index: [u8; 256],
}

fn alnum(rng: &mut fastrand::Rng, min: usize, max: usize) -> String {
    let len = rng.usize(min..=max);
    (0..len).map(|_| rng.alphanumeric()).collect()
}

fn digits(rng: &mut fastrand::Rng, len: usize) -> String {
    (0..len).map(|_| rng.digit(10)).collect()
}

impl ChTables {
    pub fn generate(seed: u64) -> Self {
        let mut rng = fastrand::Rng::with_seed(seed ^ 0xC4_BE_AC_4A);
        let regions = REGIONS
            .iter()
            .map(|&(r_regionkey, r_name)| Region {
                r_regionkey,
                r_name,
                r_comment: alnum(&mut rng, 31, 115),
            })
            .collect();
        let nations: Vec<Nation> = NATIONS
            .iter()
            .map(|&(n_nationkey, n_name, n_regionkey)| Nation {
                n_nationkey,
                n_name,
                n_regionkey,
                n_comment: alnum(&mut rng, 31, 114),
            })
            .collect();
        let suppliers = (1..=SUPPLIERS)
            .map(|su_suppkey| Supplier {
                su_suppkey,
                su_name: alnum(&mut rng, 25, 25),
                su_address: alnum(&mut rng, 20, 40),
                su_nationkey: NATIONS[rng.usize(..NATIONS.len())].0,
                su_phone: digits(&mut rng, 15),
                // fixedPoint(2, 10000.00, 1000000000.00) in cents.
                su_acctbal: rng.i64(1_000_000..=100_000_000_000),
                su_comment: alnum(&mut rng, 51, 101),
            })
            .collect();
        let mut nation_index = [u8::MAX; 256];
        for (i, n) in nations.iter().enumerate() {
            nation_index[usize::from(n.n_nationkey)] = i as u8; // i < 62
        }
        ChTables {
            suppliers,
            nations,
            regions,
            nation_index,
        }
    }

    /// Supplier `key` (1–10000).
    pub fn supplier(&self, key: u32) -> Option<&Supplier> {
        self.suppliers.get((key as usize).checked_sub(1)?)
    }

    pub fn nation(&self, key: u8) -> Option<&Nation> {
        self.nations
            .get(usize::from(self.nation_index[usize::from(key)]))
    }

    pub fn region(&self, key: u8) -> Option<&Region> {
        self.regions.get(usize::from(key).checked_sub(1)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_lookups() {
        let t = ChTables::generate(1);
        assert_eq!(t.suppliers.len(), 10_000);
        assert_eq!(t.nations.len(), 62);
        assert_eq!(t.supplier(1).unwrap().su_suppkey, 1);
        assert_eq!(t.supplier(10_000).unwrap().su_suppkey, 10_000);
        assert!(t.supplier(0).is_none());
        assert_eq!(t.nation(b'F').unwrap().n_name, "Portugal");
        assert_eq!(t.nation(54).unwrap().n_name, "Germany");
        assert!(t.nation(b'#').is_none());
        assert_eq!(t.region(5).unwrap().r_name, "Europe");
        let keys: Vec<u8> = t.nations.iter().map(|n| n.n_nationkey).collect();
        let expected: Vec<u8> = (b'0'..=b'9')
            .chain(b'A'..=b'Z')
            .chain(b'a'..=b'z')
            .collect();
        assert_eq!(keys, expected);
        assert!(t.nations.iter().all(|n| t.region(n.n_regionkey).is_some()));
        assert_eq!(supplier_of(3, 5000), 5000);
        assert_eq!(supplier_of(2, 5000), 0);
        assert_eq!(nation_of_state("NY"), Some(b'N'));
        assert_eq!(
            ChTables::generate(1).suppliers,
            t.suppliers,
            "deterministic"
        );
    }
}
