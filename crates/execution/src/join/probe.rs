//! Probing a [`JoinTable`].

use std::ops::ControlFlow;

use super::build::{EMPTY, JoinTable};
use super::{JoinKind, JoinOutput, JoinPairs, NO_ROW, Residual};
use crate::bitmap::{Bitmap, SharedBitmap};
use crate::driver::OpRun;
use crate::error::ExecError;
use crate::executor::ExecContext;
use crate::expr::Expr;
use crate::input::Input;
use crate::keys::{KeyBuf, check_keys, hash_key, with_key_width};
use crate::profile::{OpId, OpKind};
use crate::select::concat;

impl JoinTable {
    /// Probes with the selected positions of `input`, keyed by `keys` (as many
    /// as the build keys, of the same scales), keeping only matches for which
    /// `residual(probe position, build position)` holds, if given.
    pub fn probe(
        &self,
        ctx: &ExecContext,
        op: OpId,
        kind: JoinKind,
        input: Input,
        keys: &[Expr],
        residual: Option<&Residual>,
    ) -> Result<JoinOutput, ExecError> {
        input.check()?;
        let scales = check_keys(keys)?;
        if scales != self.key_scales {
            return Err(ExecError::KeyMismatch(format!(
                "probe key scales {scales:?}, build key scales {:?}",
                self.key_scales
            )));
        }
        let run = OpRun::new(ctx, op, OpKind::JoinProbe, input.len());
        let out =
            with_key_width!(self.width, N => self.probe_n::<N>(&run, kind, input, keys, residual));
        run.charge(match &out {
            JoinOutput::Pairs(p) => 8 * p.len(),
            JoinOutput::Positions(p) => 4 * p.len(),
            JoinOutput::Marks(b) => b.len().div_ceil(8),
        });
        run.set_rows_out(match &out {
            JoinOutput::Pairs(p) => p.len(),
            JoinOutput::Positions(p) => p.len(),
            JoinOutput::Marks(b) => b.count(),
        });
        Ok(out)
    }

    /// Inner join: every matching pair.
    pub fn inner(
        &self,
        ctx: &ExecContext,
        op: OpId,
        input: Input,
        keys: &[Expr],
    ) -> Result<JoinPairs, ExecError> {
        match self.probe(ctx, op, JoinKind::Inner, input, keys, None)? {
            JoinOutput::Pairs(p) => Ok(p),
            _ => unreachable!("an inner join yields pairs"),
        }
    }

    /// Left outer join: pairs, and `(probe, NO_ROW)` for unmatched probe positions.
    pub fn left_outer(
        &self,
        ctx: &ExecContext,
        op: OpId,
        input: Input,
        keys: &[Expr],
    ) -> Result<JoinPairs, ExecError> {
        match self.probe(ctx, op, JoinKind::LeftOuter, input, keys, None)? {
            JoinOutput::Pairs(p) => Ok(p),
            _ => unreachable!("an outer join yields pairs"),
        }
    }

    /// Semi join: the probe positions with a match.
    pub fn semi(
        &self,
        ctx: &ExecContext,
        op: OpId,
        input: Input,
        keys: &[Expr],
    ) -> Result<Vec<u32>, ExecError> {
        match self.probe(ctx, op, JoinKind::Semi, input, keys, None)? {
            JoinOutput::Positions(p) => Ok(p),
            _ => unreachable!("a semi join yields positions"),
        }
    }

    /// Anti join: the probe positions without a match.
    pub fn anti(
        &self,
        ctx: &ExecContext,
        op: OpId,
        input: Input,
        keys: &[Expr],
    ) -> Result<Vec<u32>, ExecError> {
        match self.probe(ctx, op, JoinKind::Anti, input, keys, None)? {
            JoinOutput::Positions(p) => Ok(p),
            _ => unreachable!("an anti join yields positions"),
        }
    }

    /// Mark join: a bitmap over `0..input.len()`, set where a match exists.
    pub fn mark(
        &self,
        ctx: &ExecContext,
        op: OpId,
        input: Input,
        keys: &[Expr],
    ) -> Result<Bitmap, ExecError> {
        match self.probe(ctx, op, JoinKind::Mark, input, keys, None)? {
            JoinOutput::Marks(b) => Ok(b),
            _ => unreachable!("a mark join yields a bitmap"),
        }
    }

    /// Calls `f` with the build position of every entry matching `key` (and
    /// the residual) until it breaks.
    #[inline]
    fn for_each_match<const N: usize>(
        &self,
        packed: &[[i64; N]],
        key: &[i64; N],
        p: u32,
        residual: Option<&Residual>,
        mut f: impl FnMut(u32) -> ControlFlow<()>,
    ) {
        let mut e = self.heads[(hash_key(key) >> self.shift) as usize];
        while e != EMPTY {
            let b = self.rows[e as usize];
            if packed[e as usize] == *key && residual.is_none_or(|r| r(p, b)) && f(b).is_break() {
                return;
            }
            e = self.next[e as usize];
        }
    }

    fn probe_n<const N: usize>(
        &self,
        run: &OpRun,
        kind: JoinKind,
        input: Input,
        keys: &[Expr],
        residual: Option<&Residual>,
    ) -> JoinOutput {
        let packed: &[[i64; N]] = self.keys.as_chunks::<N>().0;
        let min_rows = run.ctx().min_rows_per_task();
        match kind {
            JoinKind::Inner | JoinKind::LeftOuter => {
                let parts = run.map(input.len(), min_rows, |range| {
                    let mut buf = KeyBuf::<N>::new();
                    let mut out = JoinPairs::default();
                    input.for_each_vector(range, |pos| {
                        for (&p, k) in pos.iter().zip(buf.eval(keys, pos)) {
                            let before = out.len();
                            self.for_each_match(packed, k, p, residual, |b| {
                                out.probe.push(p);
                                out.build.push(b);
                                ControlFlow::Continue(())
                            });
                            if kind == JoinKind::LeftOuter && out.len() == before {
                                out.probe.push(p);
                                out.build.push(NO_ROW);
                            }
                        }
                    });
                    (out.probe, out.build)
                });
                let (probe, build): (Vec<Vec<u32>>, Vec<Vec<u32>>) = parts.into_iter().unzip();
                JoinOutput::Pairs(JoinPairs {
                    probe: concat(probe),
                    build: concat(build),
                })
            }
            JoinKind::Semi | JoinKind::Anti => {
                let want = kind == JoinKind::Semi;
                let parts = run.map(input.len(), min_rows, |range| {
                    let mut buf = KeyBuf::<N>::new();
                    let mut out = Vec::new();
                    input.for_each_vector(range, |pos| {
                        for (&p, k) in pos.iter().zip(buf.eval(keys, pos)) {
                            if self.has_match(packed, k, p, residual) == want {
                                out.push(p);
                            }
                        }
                    });
                    out
                });
                JoinOutput::Positions(concat(parts))
            }
            JoinKind::Mark => {
                let bits = SharedBitmap::new(input.len());
                run.map(input.len(), min_rows, |range| {
                    let mut buf = KeyBuf::<N>::new();
                    let mut hits = Vec::new();
                    input.for_each_vector(range, |pos| {
                        hits.clear();
                        for (&p, k) in pos.iter().zip(buf.eval(keys, pos)) {
                            if self.has_match(packed, k, p, residual) {
                                hits.push(p);
                            }
                        }
                        bits.set_sorted(&hits);
                    });
                });
                JoinOutput::Marks(bits.into_bitmap())
            }
        }
    }

    fn has_match<const N: usize>(
        &self,
        packed: &[[i64; N]],
        key: &[i64; N],
        p: u32,
        residual: Option<&Residual>,
    ) -> bool {
        let mut found = false;
        self.for_each_match(packed, key, p, residual, |_| {
            found = true;
            ControlFlow::Break(())
        });
        found
    }
}
