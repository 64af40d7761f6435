//! Scalar expressions over positions, evaluated vector-at-a-time in exact `i64`
//! fixed-point arithmetic with tracked scales: `+`/`-` align their operands to
//! the larger scale, `*` adds the scales. So `l_extendedprice * (1 - l_discount)`
//! (scales 2 and 2) has scale 4, and `... * (1 + l_tax)` scale 6 — exact, as SQL
//! decimals are. Values must fit an `i64` (TPC-H's per-row values do by far;
//! aggregates sum into `i128`).

use std::fmt;
use std::ops::{Add, Mul, Sub};
use std::sync::Arc;

use maestro_storage::column::{Date, Decimal, MAX_SCALE};

use crate::col::{Col, Data};
use crate::error::ExecError;
use crate::pred::Pred;

/// A closure expression on a position.
pub type ValueFn<'a> = dyn Fn(u32) -> i64 + Send + Sync + 'a;

/// An expression; combine with `+`, `-`, `*`.
#[derive(Clone)]
pub struct Expr<'a>(Node<'a>);

#[derive(Clone)]
enum Node<'a> {
    Col(Col<'a>),
    Lit {
        value: i64,
        scale: u8,
    },
    Bin(BinOp, Box<Expr<'a>>, Box<Expr<'a>>),
    Year(Col<'a>),
    Case {
        when: Box<Pred<'a>>,
        then: Box<Expr<'a>>,
        otherwise: Box<Expr<'a>>,
    },
    Func {
        f: Arc<ValueFn<'a>>,
        scale: u8,
    },
    /// The remainder of an integer expression by a positive constant.
    RemLit(Box<Expr<'a>>, i64),
    /// The IEEE bits of the doubles an integer expression holds as ordered
    /// bits ([`Expr::double_bits_of_ordered`]).
    DoubleBits(Box<Expr<'a>>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BinOp {
    Add,
    Sub,
    Mul,
}

impl fmt::Debug for Expr<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Node::Col(c) => write!(f, "Col({})", c.data().type_name()),
            Node::Lit { value, scale } => write!(
                f,
                "{}",
                Decimal {
                    value: *value,
                    scale: *scale
                }
            ),
            Node::Bin(op, a, b) => write!(f, "({a:?} {op:?} {b:?})"),
            Node::Year(_) => write!(f, "Year"),
            Node::Case {
                then, otherwise, ..
            } => write!(f, "Case({then:?}, {otherwise:?})"),
            Node::Func { scale, .. } => write!(f, "Func(scale {scale})"),
            Node::RemLit(a, k) => write!(f, "({a:?} % {k})"),
            Node::DoubleBits(a) => write!(f, "double_bits({a:?})"),
        }
    }
}

impl<'a> Expr<'a> {
    /// A numeric, date or dictionary-code column (scale of the column).
    pub fn col(col: Col<'a>) -> Expr<'a> {
        Expr(Node::Col(col))
    }

    /// An integer constant (scale 0).
    pub fn int(value: i64) -> Expr<'a> {
        Expr(Node::Lit { value, scale: 0 })
    }

    /// A decimal constant.
    pub fn dec(value: Decimal) -> Expr<'a> {
        Expr(Node::Lit {
            value: value.value,
            scale: value.scale,
        })
    }

    /// `EXTRACT(YEAR FROM col)` of a date column (scale 0).
    pub fn year(col: Col<'a>) -> Expr<'a> {
        Expr(Node::Year(col))
    }

    /// `CASE WHEN when THEN then ELSE otherwise END` (scale of the larger branch).
    pub fn case(when: Pred<'a>, then: Expr<'a>, otherwise: Expr<'a>) -> Expr<'a> {
        Expr(Node::Case {
            when: Box::new(when),
            then: Box::new(then),
            otherwise: Box::new(otherwise),
        })
    }

    /// Any value computed from a position, at `scale`.
    pub fn func(scale: u8, f: impl Fn(u32) -> i64 + Send + Sync + 'a) -> Expr<'a> {
        Expr(Node::Func {
            f: Arc::new(f),
            scale,
        })
    }

    /// `self % divisor` (SQL's `MOD`: the sign of `self`, as Rust's `%`)
    /// of an integer expression (scale 0, checked by [`Self::scale`]) by a
    /// non-zero constant; `None` for a zero divisor, which is an error per
    /// row, not a kernel.
    pub fn rem_const(self, divisor: i64) -> Option<Expr<'a>> {
        (divisor != 0).then(|| {
            Expr(Node::RemLit(
                Box::new(self),
                divisor.unsigned_abs().min(i64::MAX as u64) as i64,
            ))
        })
    }

    /// For an integer expression whose values are doubles' *ordered bits*
    /// (`o` = the double's bits, with the bits after the sign flipped for
    /// negative numbers, so that integer order is the doubles' order — how
    /// the SQL store keeps REAL and DOUBLE PRECISION columns): each
    /// double's own bits, as `AggFunc::SumDouble` adds them. The map is its
    /// own inverse.
    pub fn double_bits_of_ordered(self) -> Expr<'a> {
        Expr(Node::DoubleBits(Box::new(self)))
    }

    /// The constant, if this is one.
    fn as_lit(&self) -> Option<i64> {
        match self.0 {
            Node::Lit { value, .. } => Some(value),
            _ => None,
        }
    }

    /// Checks operand types and returns the result's scale.
    pub fn scale(&self) -> Result<u8, ExecError> {
        let s = match &self.0 {
            Node::Col(c) => {
                c.expect_narrow("expression operand")?;
                c.scale()
            }
            Node::Lit { scale, .. } | Node::Func { scale, .. } => *scale,
            Node::Bin(op, a, b) => {
                let (sa, sb) = (a.scale()?, b.scale()?);
                match op {
                    BinOp::Mul => sa + sb,
                    BinOp::Add | BinOp::Sub => sa.max(sb),
                }
            }
            Node::Year(c) => match c.data() {
                Data::Date(_) => 0,
                other => {
                    return Err(ExecError::Type {
                        context: "EXTRACT(YEAR)".into(),
                        expected: "a date column",
                        found: other.type_name(),
                    });
                }
            },
            Node::Case {
                then, otherwise, ..
            } => then.scale()?.max(otherwise.scale()?),
            Node::RemLit(a, _) | Node::DoubleBits(a) => match a.scale()? {
                0 => 0,
                s => {
                    return Err(ExecError::Type {
                        context: match self.0 {
                            Node::RemLit(..) => "MOD",
                            _ => "a double's bits",
                        }
                        .into(),
                        expected: "an integer operand",
                        found: format!("scale {s}"),
                    });
                }
            },
        };
        if s > MAX_SCALE {
            return Err(ExecError::Type {
                context: format!("expression {self:?}"),
                expected: "a scale of at most 18",
                found: format!("scale {s}"),
            });
        }
        Ok(s)
    }

    /// The scale of a checked expression.
    fn scale_unchecked(&self) -> u8 {
        self.scale()
            .expect("expressions are checked before evaluation")
    }

    /// The values at `pos` (distinct positions) into `out`, at [`Self::scale`].
    /// The expression must have been checked with [`Self::scale`].
    pub fn eval(&self, pos: &[u32], out: &mut Vec<i64>) {
        out.clear();
        match &self.0 {
            Node::Col(c) => c.gather_i64(pos, out),
            Node::Lit { value, .. } => out.resize(pos.len(), *value),
            Node::Func { f, .. } => out.extend(pos.iter().map(|&p| f(p))),
            Node::Year(c) => {
                c.gather_i64(pos, out);
                for v in out.iter_mut() {
                    *v = i64::from(Date(*v as i32).year());
                }
            }
            Node::Bin(op, a, b) => eval_bin(*op, a, b, pos, out),
            Node::RemLit(a, k) => {
                a.eval(pos, out);
                out.iter_mut().for_each(|x| *x %= *k);
            }
            Node::DoubleBits(a) => {
                a.eval(pos, out);
                out.iter_mut()
                    .for_each(|o| *o ^= (((*o >> 63) as u64) >> 1) as i64);
            }
            Node::Case {
                when,
                then,
                otherwise,
            } => {
                let s = self.scale_unchecked();
                then.eval(pos, out);
                rescale(out, s - then.scale_unchecked());
                let mut other = Vec::with_capacity(pos.len());
                otherwise.eval(pos, &mut other);
                rescale(&mut other, s - otherwise.scale_unchecked());
                let mut matched = pos.to_vec();
                when.refine(&mut matched);
                let mut j = 0;
                for (i, &p) in pos.iter().enumerate() {
                    if j < matched.len() && matched[j] == p {
                        j += 1;
                    } else {
                        out[i] = other[i];
                    }
                }
            }
        }
    }
}

fn pow10(d: u8) -> i64 {
    10i64.pow(u32::from(d))
}

fn rescale(v: &mut [i64], by: u8) {
    if by > 0 {
        let f = pow10(by);
        v.iter_mut().for_each(|x| *x *= f);
    }
}

fn eval_bin(op: BinOp, a: &Expr, b: &Expr, pos: &[u32], out: &mut Vec<i64>) {
    let (sa, sb) = (a.scale_unchecked(), b.scale_unchecked());
    let (fa, fb) = match op {
        BinOp::Mul => (1, 1),
        BinOp::Add | BinOp::Sub => {
            let s = sa.max(sb);
            (pow10(s - sa), pow10(s - sb))
        }
    };
    match (a.as_lit(), b.as_lit()) {
        (_, Some(k)) => {
            a.eval(pos, out);
            let k = k * fb;
            match op {
                BinOp::Add => out.iter_mut().for_each(|x| *x = *x * fa + k),
                BinOp::Sub => out.iter_mut().for_each(|x| *x = *x * fa - k),
                BinOp::Mul => out.iter_mut().for_each(|x| *x *= k),
            }
        }
        (Some(k), None) => {
            b.eval(pos, out);
            let k = k * fa;
            match op {
                BinOp::Add => out.iter_mut().for_each(|x| *x = k + *x * fb),
                BinOp::Sub => out.iter_mut().for_each(|x| *x = k - *x * fb),
                BinOp::Mul => out.iter_mut().for_each(|x| *x *= k),
            }
        }
        (None, None) => {
            a.eval(pos, out);
            let mut rhs = Vec::with_capacity(pos.len());
            b.eval(pos, &mut rhs);
            let pairs = out.iter_mut().zip(&rhs);
            match op {
                BinOp::Add => pairs.for_each(|(x, y)| *x = *x * fa + y * fb),
                BinOp::Sub => pairs.for_each(|(x, y)| *x = *x * fa - y * fb),
                BinOp::Mul => pairs.for_each(|(x, y)| *x *= y),
            }
        }
    }
}

impl<'a> From<Col<'a>> for Expr<'a> {
    fn from(c: Col<'a>) -> Self {
        Expr::col(c)
    }
}

impl<'a> Add for Expr<'a> {
    type Output = Expr<'a>;
    fn add(self, rhs: Expr<'a>) -> Expr<'a> {
        Expr(Node::Bin(BinOp::Add, Box::new(self), Box::new(rhs)))
    }
}

impl<'a> Sub for Expr<'a> {
    type Output = Expr<'a>;
    fn sub(self, rhs: Expr<'a>) -> Expr<'a> {
        Expr(Node::Bin(BinOp::Sub, Box::new(self), Box::new(rhs)))
    }
}

impl<'a> Mul for Expr<'a> {
    type Output = Expr<'a>;
    fn mul(self, rhs: Expr<'a>) -> Expr<'a> {
        Expr(Node::Bin(BinOp::Mul, Box::new(self), Box::new(rhs)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pred::CmpOp;
    use maestro_storage::column::StrHeap;

    fn run(e: &Expr, n: u32) -> Vec<i64> {
        e.scale().unwrap();
        let pos: Vec<u32> = (0..n).collect();
        let mut out = Vec::new();
        e.eval(&pos, &mut out);
        out
    }

    #[test]
    fn remainder_by_a_constant_keeps_the_dividends_sign_and_wants_integers() {
        let v = [7i64, -7, 20_000, 0];
        let c = Col::decimal_raw(&v, 0);
        let e = (Expr::col(c) * Expr::int(3)).rem_const(10_000).unwrap();
        assert_eq!(run(&e, 4), [21, -21, 0, 0]);
        assert_eq!(run(&Expr::col(c).rem_const(-3).unwrap(), 4), [1, -1, 2, 0]);
        assert!(Expr::col(c).rem_const(0).is_none());
        let money = Col::decimal_raw(&v, 2);
        assert!(Expr::col(money).rem_const(3).unwrap().scale().is_err());
    }

    #[test]
    fn doubles_bits_come_back_from_their_ordered_bits() {
        let ds = [-2.5f64, -0.0, 0.0, 1e-300, 3.0, f64::NEG_INFINITY, f64::NAN];
        // The order-preserving map, as the SQL store writes it.
        let ordered: Vec<i64> = ds
            .iter()
            .map(|d| {
                let b = d.to_bits() as i64;
                b ^ (((b >> 63) as u64) >> 1) as i64
            })
            .collect();
        let mut sorted = ordered.clone();
        sorted.sort_unstable();
        assert_eq!(sorted[0], ordered[5], "-Infinity orders first");
        let e = Expr::col(Col::i64(&ordered)).double_bits_of_ordered();
        let bits: Vec<u64> = run(&e, ds.len() as u32).iter().map(|&b| b as u64).collect();
        let want: Vec<u64> = ds.iter().map(|d| d.to_bits()).collect();
        assert_eq!(bits, want);
        let money = [1i64];
        assert!(
            Expr::col(Col::decimal_raw(&money, 2))
                .double_bits_of_ordered()
                .scale()
                .is_err()
        );
    }

    #[test]
    fn fixed_point_scales() {
        let price = [10000i64, 2550]; // 100.00, 25.50
        let disc = [5i64, 10]; // 0.05, 0.10
        let tax = [8i64, 0]; // 0.08, 0.00
        let (p, d, t) = (
            Col::decimal_raw(&price, 2),
            Col::decimal_raw(&disc, 2),
            Col::decimal_raw(&tax, 2),
        );
        let disc_price = Expr::col(p) * (Expr::int(1) - Expr::col(d));
        assert_eq!(disc_price.scale().unwrap(), 4);
        assert_eq!(run(&disc_price, 2), [950000, 229500]); // 95.0000, 22.9500
        let charge = disc_price.clone() * (Expr::int(1) + Expr::col(t));
        assert_eq!(charge.scale().unwrap(), 6);
        assert_eq!(run(&charge, 2), [102600000, 22950000]);
        let mixed = Expr::col(p) + Expr::dec(Decimal { value: 5, scale: 3 });
        assert_eq!(run(&mixed, 2), [100005, 25505]);
        let minus = Expr::col(d) - Expr::col(t);
        assert_eq!(run(&minus, 2), [-3, 10]);
        let twice = Expr::int(2) * Expr::col(p);
        assert_eq!(run(&twice, 2), [20000, 5100]);
    }

    #[test]
    fn year_case_func_and_errors() {
        let days = [
            Date::parse("1995-03-15").unwrap().0,
            Date::parse("1996-12-31").unwrap().0,
        ];
        assert_eq!(run(&Expr::year(Col::date(&days)), 2), [1995, 1996]);
        let v = [1i64, 7];
        let c = Col::decimal_raw(&v, 1);
        let when = Pred::cmp(c, CmpOp::Gt, 2i64).unwrap(); // 0.7 > 2? no; values 0.1, 0.7
        let case = Expr::case(when, Expr::col(c), Expr::int(0));
        assert_eq!(case.scale().unwrap(), 1);
        assert_eq!(run(&case, 2), [0, 0]);
        let when = Pred::cmp(c, CmpOp::Gt, Decimal { value: 5, scale: 1 }).unwrap();
        let case = Expr::case(when, Expr::col(c), Expr::int(1));
        assert_eq!(run(&case, 2), [10, 7]);
        assert_eq!(run(&Expr::func(0, |p| i64::from(p) * 3), 2), [0, 3]);
        let h = StrHeap::from_strs(["a", "b"]);
        assert!(Expr::col(Col::heap(&h)).scale().is_err());
        assert!(Expr::year(Col::i64(&v)).scale().is_err());
        let deep = Expr::col(c) * Expr::col(Col::decimal_raw(&v, 18));
        assert!(deep.scale().is_err());
    }
}
