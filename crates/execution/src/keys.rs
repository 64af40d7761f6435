//! Group and join keys: up to [`MAX_KEYS`] integer-valued expressions (ids,
//! dictionary codes, dates, years, decimals) packed into a fixed-size
//! `[i64; N]`, hashed with one multiply per word and a strong finalizer.
//! Kernels are generic over `N`; [`with_key_width!`] picks the instance.

use crate::error::ExecError;
use crate::expr::Expr;

/// The most key columns a group or join key may have.
pub const MAX_KEYS: usize = 4;

/// Checks the key expressions and returns their scales.
pub(crate) fn check_keys(keys: &[Expr]) -> Result<Vec<u8>, ExecError> {
    if keys.len() > MAX_KEYS {
        return Err(ExecError::TooManyKeys {
            given: keys.len(),
            max: MAX_KEYS,
        });
    }
    keys.iter().map(Expr::scale).collect()
}

/// Runs `$body` with `const $n: usize` equal to the runtime width `$w`
/// (0..=MAX_KEYS; checked by [`check_keys`]).
macro_rules! with_key_width {
    ($w:expr, $n:ident => $body:expr) => {
        match $w {
            0 => {
                const $n: usize = 0;
                $body
            }
            1 => {
                const $n: usize = 1;
                $body
            }
            2 => {
                const $n: usize = 2;
                $body
            }
            3 => {
                const $n: usize = 3;
                $body
            }
            4 => {
                const $n: usize = 4;
                $body
            }
            w => unreachable!("{w} key columns (checked against MAX_KEYS)"),
        }
    };
}
pub(crate) use with_key_width;

/// The hash of a key: FxHash-style combining, then murmur3's 64-bit finalizer
/// so that every output bit depends on every input bit (tables use high bits
/// for buckets and partitions, hashbrown uses the low ones).
#[inline]
pub(crate) fn hash_key<const N: usize>(key: &[i64; N]) -> u64 {
    let mut h: u64 = 0x243F_6A88_85A3_08D3;
    for &w in key {
        h = (h.rotate_left(5) ^ w as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    h ^= h >> 33;
    h = h.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    h ^ (h >> 33)
}

/// Scratch space that evaluates key expressions for one vector of positions.
pub(crate) struct KeyBuf<const N: usize> {
    cols: Vec<Vec<i64>>,
    keys: Vec<[i64; N]>,
}

impl<const N: usize> KeyBuf<N> {
    pub(crate) fn new() -> Self {
        KeyBuf {
            cols: (0..N).map(|_| Vec::new()).collect(),
            keys: Vec::new(),
        }
    }

    /// The packed keys at `pos`.
    pub(crate) fn eval(&mut self, exprs: &[Expr], pos: &[u32]) -> &[[i64; N]] {
        debug_assert_eq!(exprs.len(), N);
        for (e, col) in exprs.iter().zip(&mut self.cols) {
            e.eval(pos, col);
        }
        self.keys.clear();
        let cols = &self.cols;
        self.keys
            .extend((0..pos.len()).map(|i| std::array::from_fn(|k| cols[k][i])));
        &self.keys
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::col::Col;

    #[test]
    fn packs_and_hashes() {
        let a = [1i64, 2, 3];
        let b = [7i64, 7, 8];
        let exprs = [Expr::col(Col::i64(&a)), Expr::col(Col::i64(&b))];
        assert_eq!(check_keys(&exprs).unwrap(), [0, 0]);
        let mut buf = KeyBuf::<2>::new();
        let keys = buf.eval(&exprs, &[2, 0]);
        assert_eq!(keys, [[3, 8], [1, 7]]);
        assert_ne!(hash_key(&[1i64, 2]), hash_key(&[2i64, 1]));
        // Sequential keys spread over the high bits.
        let mut top: Vec<u64> = (0..1024i64).map(|k| hash_key(&[k]) >> 54).collect();
        top.sort_unstable();
        top.dedup();
        assert!(top.len() > 550, "{}", top.len());
        let five: Vec<Expr> = (0..5).map(|_| Expr::int(1)).collect();
        assert!(matches!(
            check_keys(&five),
            Err(ExecError::TooManyKeys { given: 5, .. })
        ));
        let w = with_key_width!(3, N => N * 10);
        assert_eq!(w, 30);
    }
}
