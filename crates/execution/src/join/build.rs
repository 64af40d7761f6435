//! `JoinTable`: the build side of a hash join.

use std::sync::atomic::{AtomicU32, Ordering};

use crate::driver::OpRun;
use crate::error::ExecError;
use crate::executor::ExecContext;
use crate::expr::Expr;
use crate::input::Input;
use crate::keys::{KeyBuf, check_keys, hash_key, with_key_width};
use crate::profile::{OpId, OpKind};
use crate::select::concat;

/// End of a chain.
pub(super) const EMPTY: u32 = u32::MAX;

/// A built hash table: entry `i` has key `keys[i]` (flattened, `width` words)
/// and build position `rows[i]`; chains run from `heads[bucket]` through `next`.
pub struct JoinTable {
    pub(super) width: usize,
    pub(super) key_scales: Vec<u8>,
    pub(super) keys: Vec<i64>,
    pub(super) rows: Vec<u32>,
    pub(super) heads: Vec<u32>,
    pub(super) next: Vec<u32>,
    /// `bucket = hash >> shift`.
    pub(super) shift: u32,
}

impl JoinTable {
    /// Builds the table over the selected positions of `input`, keyed by `keys`
    /// (1 to [`crate::MAX_KEYS`] integer-valued expressions).
    pub fn build(
        ctx: &ExecContext,
        op: OpId,
        input: Input,
        keys: &[Expr],
    ) -> Result<JoinTable, ExecError> {
        input.check()?;
        let key_scales = check_keys(keys)?;
        if keys.is_empty() {
            return Err(ExecError::KeyMismatch(
                "a hash join needs at least one key".into(),
            ));
        }
        let run = OpRun::new(ctx, op, OpKind::JoinBuild, input.len());
        let table = with_key_width!(keys.len(), N => build_n::<N>(&run, input, keys, key_scales));
        run.charge(table.heap_bytes());
        run.set_rows_out(table.len());
        Ok(table)
    }

    /// Bytes the table holds on the heap.
    fn heap_bytes(&self) -> usize {
        4 * (self.rows.len() + self.heads.len() + self.next.len()) + 8 * self.keys.len()
    }

    /// Number of entries (selected build positions).
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The number of key columns.
    pub fn width(&self) -> usize {
        self.width
    }

    /// The build positions, in entry order (ascending).
    pub fn build_positions(&self) -> &[u32] {
        &self.rows
    }
}

fn build_n<const N: usize>(
    run: &OpRun,
    input: Input,
    keys: &[Expr],
    key_scales: Vec<u8>,
) -> JoinTable {
    let min_rows = run.ctx().min_rows_per_task();
    // Phase 1: the selected positions and their keys, per range, in order.
    let parts = run.map(input.len(), min_rows, |range| {
        let mut buf = KeyBuf::<N>::new();
        let (mut rows, mut flat) = (Vec::new(), Vec::new());
        input.for_each_vector(range, |pos| {
            rows.extend_from_slice(pos);
            flat.extend(buf.eval(keys, pos).iter().flatten());
        });
        (rows, flat)
    });
    let (rows, flat): (Vec<Vec<u32>>, Vec<Vec<i64>>) = parts.into_iter().unzip();
    let (rows, keys) = (concat(rows), concat(flat));
    let entries = rows.len();
    // Phase 2: insert every entry with one atomic swap of its bucket's head.
    let bits = entries.next_power_of_two().trailing_zeros().max(1);
    let shift = 64 - bits;
    let heads: Vec<AtomicU32> = (0..1usize << bits).map(|_| AtomicU32::new(EMPTY)).collect();
    let next: Vec<AtomicU32> = (0..entries).map(|_| AtomicU32::new(EMPTY)).collect();
    let packed: &[[i64; N]] = keys.as_chunks::<N>().0;
    run.map(entries, min_rows, |range| {
        for i in range {
            let b = (hash_key(&packed[i]) >> shift) as usize;
            let old = heads[b].swap(i as u32, Ordering::Relaxed);
            next[i].store(old, Ordering::Relaxed);
        }
    });
    // The tasks have been joined: plain loads from here on.
    JoinTable {
        width: N,
        key_scales,
        keys,
        rows,
        heads: heads.into_iter().map(AtomicU32::into_inner).collect(),
        next: next.into_iter().map(AtomicU32::into_inner).collect(),
        shift,
    }
}
