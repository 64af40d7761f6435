//! TPC-C's random functions (clauses 2.1.5, 2.1.6, 4.3.2): uniform numbers,
//! NURand with its run-time constants, customer last names, a-/n-strings, zip
//! codes and the "ORIGINAL" marker. Everything is drawn from one seeded
//! `fastrand::Rng`, so a seed reproduces a load or a terminal's input stream.

/// The ten syllables of clause 4.3.2.3; the digits of a number 0..=999 pick three.
pub const LAST_NAME_SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

/// Characters of a-strings. Clause 4.3.2.2 asks for a character set able to
/// represent 128 characters; like most kits we draw from letters and digits,
/// which keeps the CSV export free of quoting and the strings ASCII.
const ALPHANUMERIC: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// The marker of clause 4.3.3.1 put into 10 % of `i_data` and `s_data`.
pub const ORIGINAL: &str = "ORIGINAL";

/// Which NURand: each has its `A` (clause 2.1.5) and its own constant `C`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NuRand {
    /// `NURand(255, 0, 999)`: customer last-name numbers.
    CLast,
    /// `NURand(1023, 1, 3000)`: customer ids.
    CId,
    /// `NURand(8191, 1, 100000)`: item ids.
    OlIId,
}

impl NuRand {
    pub const fn a(self) -> u64 {
        match self {
            NuRand::CLast => 255,
            NuRand::CId => 1023,
            NuRand::OlIId => 8191,
        }
    }
}

/// The run-time constants `C` of clause 2.1.6, each in `0..=A`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NuRandConstants {
    pub c_last: u64,
    pub c_id: u64,
    pub ol_i_id: u64,
}

impl NuRandConstants {
    /// Constants for the initial population, drawn uniformly.
    pub fn for_load(rng: &mut fastrand::Rng) -> Self {
        NuRandConstants {
            c_last: rng.u64(0..=NuRand::CLast.a()),
            c_id: rng.u64(0..=NuRand::CId.a()),
            ol_i_id: rng.u64(0..=NuRand::OlIId.a()),
        }
    }

    /// Constants for a measurement run after a load with `load`: `c_last`
    /// satisfies clause 2.1.6.1 (see [`valid_c_last_delta`]); the other two are
    /// drawn freely (the clause constrains only C_LAST).
    pub fn for_run(load: &NuRandConstants, rng: &mut fastrand::Rng) -> Self {
        // Some candidate always exists: a load constant below 65 can add 65, one
        // above 190 can subtract it.
        let candidates: Vec<u64> = (0..=NuRand::CLast.a())
            .filter(|&c| valid_c_last_delta(load.c_last, c))
            .collect();
        NuRandConstants {
            c_last: candidates[rng.usize(..candidates.len())],
            c_id: rng.u64(0..=NuRand::CId.a()),
            ol_i_id: rng.u64(0..=NuRand::OlIId.a()),
        }
    }

    fn get(&self, kind: NuRand) -> u64 {
        match kind {
            NuRand::CLast => self.c_last,
            NuRand::CId => self.c_id,
            NuRand::OlIId => self.ol_i_id,
        }
    }
}

/// Clause 2.1.6.1: `delta = |C_load - C_run|` must lie in `65..=119` and differ
/// from 96 and 112 (so that run-time names hit the loaded ones only partially).
pub fn valid_c_last_delta(c_load: u64, c_run: u64) -> bool {
    let delta = c_load.abs_diff(c_run);
    (65..=119).contains(&delta) && delta != 96 && delta != 112
}

/// The last name of number `num` (clause 4.3.2.3), e.g. 371 → "PRICALLYOUGHT".
/// Numbers above 999 use their last three digits.
pub fn last_name(num: u16) -> String {
    let digits = [num / 100 % 10, num / 10 % 10, num % 10];
    digits
        .iter()
        .map(|&d| LAST_NAME_SYLLABLES[usize::from(d)])
        .collect()
}

/// The number whose syllables spell `name` (inverse of [`last_name`] on
/// 0..=999). The syllables form a prefix code, so a greedy parse is exact.
pub fn parse_last_name(name: &str) -> Option<u16> {
    let mut rest = name;
    let mut num = 0u16;
    for _ in 0..3 {
        let (digit, syllable) = (0u16..)
            .zip(LAST_NAME_SYLLABLES)
            .find(|(_, s)| rest.starts_with(s))?;
        num = num * 10 + digit;
        rest = &rest[syllable.len()..];
    }
    rest.is_empty().then_some(num)
}

/// A seeded generator of TPC-C values with the run-time constants it uses.
#[derive(Debug, Clone)]
pub struct TpccRng {
    rng: fastrand::Rng,
    constants: NuRandConstants,
}

impl TpccRng {
    pub fn new(seed: u64, constants: NuRandConstants) -> Self {
        TpccRng {
            rng: fastrand::Rng::with_seed(seed),
            constants,
        }
    }

    pub fn constants(&self) -> NuRandConstants {
        self.constants
    }

    /// The underlying generator, for draws this type does not name.
    pub fn rng(&mut self) -> &mut fastrand::Rng {
        &mut self.rng
    }

    /// Uniform in `lo..=hi` (clause 2.1.4's `random(x, y)`); `lo > hi` yields `lo`.
    pub fn uniform(&mut self, lo: u64, hi: u64) -> u64 {
        if lo >= hi { lo } else { self.rng.u64(lo..=hi) }
    }

    /// True with probability `percent` / 100.
    pub fn percent(&mut self, percent: u64) -> bool {
        self.rng.u64(0..100) < percent
    }

    /// `NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x`.
    pub fn nurand(&mut self, kind: NuRand, x: u64, y: u64) -> u64 {
        if x >= y {
            return x;
        }
        let a = self.uniform(0, kind.a());
        let b = self.uniform(x, y);
        (((a | b) + self.constants.get(kind)) % (y - x + 1)) + x
    }

    /// A last-name number, `NURand(255, 0, 999)`.
    pub fn last_name_number(&mut self) -> u16 {
        // ≤ 999, so the narrowing is exact.
        self.nurand(NuRand::CLast, 0, 999) as u16
    }

    /// A customer id, `NURand(1023, 1, 3000)`.
    pub fn customer_id(&mut self) -> u16 {
        self.nurand(NuRand::CId, 1, 3000) as u16
    }

    /// An item id, `NURand(8191, 1, 100000)`.
    pub fn item_id(&mut self) -> u32 {
        self.nurand(NuRand::OlIId, 1, 100_000) as u32
    }

    /// An a-string (alphanumeric) of uniform length in `min..=max`.
    pub fn a_string(&mut self, min: usize, max: usize) -> String {
        let len = self.uniform(min as u64, max as u64) as usize;
        (0..len)
            .map(|_| char::from(ALPHANUMERIC[self.rng.usize(..ALPHANUMERIC.len())]))
            .collect()
    }

    /// An a-string of exactly `N` characters, inline (`s_dist_xx`, `ol_dist_info`).
    pub fn a_bytes<const N: usize>(&mut self) -> [u8; N] {
        std::array::from_fn(|_| ALPHANUMERIC[self.rng.usize(..ALPHANUMERIC.len())])
    }

    /// An n-string (digits) of uniform length in `min..=max`.
    pub fn n_string(&mut self, min: usize, max: usize) -> String {
        let len = self.uniform(min as u64, max as u64) as usize;
        (0..len).map(|_| self.rng.digit(10)).collect()
    }

    /// Two random upper-case letters (the `*_state` columns).
    pub fn state(&mut self) -> String {
        (0..2).map(|_| self.rng.uppercase()).collect()
    }

    /// A zip code: four random digits followed by "11111" (clause 4.3.2.7).
    pub fn zip(&mut self) -> String {
        let mut zip = self.n_string(4, 4);
        zip.push_str("11111");
        zip
    }

    /// An a-string of length `min..=max` (`min` ≥ 8) that holds "ORIGINAL" at a
    /// random position in 10 % of the calls (`i_data`, `s_data`).
    pub fn data_with_original(&mut self, min: usize, max: usize) -> String {
        let mut data = self.a_string(min.max(ORIGINAL.len()), max);
        if self.percent(10) {
            let at = self.rng.usize(..=data.len() - ORIGINAL.len());
            // Alphanumeric strings are ASCII, so every index is a char boundary.
            data.replace_range(at..at + ORIGINAL.len(), ORIGINAL);
        }
        data
    }

    /// A random permutation of `1..=n` (the loader's `o_c_id`s).
    pub fn permutation(&mut self, n: u16) -> Vec<u16> {
        let mut ids: Vec<u16> = (1..=n).collect();
        self.rng.shuffle(&mut ids);
        ids
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_names_follow_the_syllables_and_are_distinct() {
        assert_eq!(last_name(0), "BARBARBAR");
        assert_eq!(last_name(371), "PRICALLYOUGHT");
        assert_eq!(last_name(999), "EINGEINGEING");
        let names: std::collections::HashSet<String> = (0..1000).map(last_name).collect();
        assert_eq!(names.len(), 1000);
        for n in 0..1000 {
            assert_eq!(parse_last_name(&last_name(n)), Some(n));
        }
        for bad in ["", "BAR", "BARBARBARX", "BARBARBA", "SMITH"] {
            assert_eq!(parse_last_name(bad), None, "{bad}");
        }
    }

    #[test]
    fn nurand_stays_in_range_and_is_skewed() {
        let c = NuRandConstants::for_load(&mut fastrand::Rng::with_seed(7));
        let mut r = TpccRng::new(7, c);
        let mut hits = vec![0u32; 1000];
        for _ in 0..200_000 {
            hits[usize::from(r.last_name_number())] += 1;
            assert!((1..=3000).contains(&r.customer_id()));
            assert!((1..=100_000).contains(&r.item_id()));
        }
        // Uniform would give ~200 per number; NURand's OR makes some far hotter.
        assert!(*hits.iter().max().unwrap() > 2 * 200);
        assert_eq!(r.nurand(NuRand::CId, 5, 5), 5);
    }

    #[test]
    fn run_constants_satisfy_the_delta_rule_for_every_load_constant() {
        let mut rng = fastrand::Rng::with_seed(1);
        for c_load in 0..=255 {
            let load = NuRandConstants {
                c_last: c_load,
                c_id: 0,
                ol_i_id: 0,
            };
            for _ in 0..20 {
                let run = NuRandConstants::for_run(&load, &mut rng);
                assert!(valid_c_last_delta(c_load, run.c_last), "{c_load} {run:?}");
                assert!(run.c_last <= 255 && run.c_id <= 1023 && run.ol_i_id <= 8191);
            }
        }
        assert!(!valid_c_last_delta(0, 96) && !valid_c_last_delta(200, 88));
        assert!(!valid_c_last_delta(10, 74) && valid_c_last_delta(10, 75));
        assert!(!valid_c_last_delta(0, 120) && valid_c_last_delta(119, 0));
    }

    #[test]
    fn strings_have_the_requested_shape() {
        let mut r = TpccRng::new(3, NuRandConstants::for_load(&mut fastrand::Rng::new()));
        for _ in 0..1000 {
            let a = r.a_string(6, 10);
            assert!((6..=10).contains(&a.len()) && a.bytes().all(|b| b.is_ascii_alphanumeric()));
            let fixed: [u8; 24] = r.a_bytes();
            assert!(fixed.iter().all(u8::is_ascii_alphanumeric));
            let n = r.n_string(16, 16);
            assert!(n.len() == 16 && n.bytes().all(|b| b.is_ascii_digit()));
            let zip = r.zip();
            assert!(zip.len() == 9 && zip.ends_with("11111"));
            assert!(r.state().bytes().all(|b| b.is_ascii_uppercase()));
        }
        let originals = (0..10_000)
            .filter(|_| {
                let d = r.data_with_original(26, 50);
                assert!((26..=50).contains(&d.len()));
                d.contains(ORIGINAL)
            })
            .count();
        assert!((800..=1200).contains(&originals), "{originals}");
        let mut p = r.permutation(3000);
        p.sort_unstable();
        assert_eq!(p, (1..=3000).collect::<Vec<u16>>());
    }
}
