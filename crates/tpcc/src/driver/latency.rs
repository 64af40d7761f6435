//! A log-linear latency histogram (HDR-style): fixed memory however long the
//! run, percentiles within [`RELATIVE_ERROR`] of the true value, exact max.

use std::time::Duration;

/// Sub-buckets per power of two: 2^4 = 16, so a bucket spans at most 1/16 of
/// its values (6.25 %) and its midpoint is within half of that.
const SUB_BITS: u32 = 4;
const SUB: usize = 1 << SUB_BITS;
/// Values below `SUB` ns get one bucket each; each further power of two 16.
const BUCKETS: usize = (64 - SUB_BITS as usize + 1) * SUB;

/// Worst relative error of a reported percentile (half a bucket).
pub const RELATIVE_ERROR: f64 = 1.0 / (2 * SUB) as f64;

/// Latencies in nanoseconds.
#[derive(Clone)]
pub struct Histogram {
    counts: Box<[u64]>,
    count: u64,
    sum_ns: u128,
    max_ns: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            counts: vec![0; BUCKETS].into_boxed_slice(),
            count: 0,
            sum_ns: 0,
            max_ns: 0,
        }
    }
}

fn bucket(ns: u64) -> usize {
    if ns < SUB as u64 {
        return ns as usize;
    }
    let exp = 63 - ns.leading_zeros(); // ≥ SUB_BITS
    let sub = (ns >> (exp - SUB_BITS)) as usize & (SUB - 1);
    (exp - SUB_BITS + 1) as usize * SUB + sub
}

/// The midpoint of a bucket's values.
fn value(bucket: usize) -> u64 {
    if bucket < SUB {
        return bucket as u64;
    }
    let exp = (bucket / SUB) as u32 + SUB_BITS - 1;
    let width = 1u64 << (exp - SUB_BITS);
    let low = (1u64 << exp) + (bucket % SUB) as u64 * width;
    low + width / 2
}

/// The percentiles a report shows.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LatencySummary {
    pub count: u64,
    pub mean: Duration,
    pub p50: Duration,
    pub p90: Duration,
    pub p99: Duration,
    pub max: Duration,
}

impl Histogram {
    pub fn record(&mut self, latency: Duration) {
        let ns = u64::try_from(latency.as_nanos()).unwrap_or(u64::MAX);
        self.counts[bucket(ns)] += 1;
        self.count += 1;
        self.sum_ns += u128::from(ns);
        self.max_ns = self.max_ns.max(ns);
    }

    pub fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(other.counts.iter()) {
            *a += b;
        }
        self.count += other.count;
        self.sum_ns += other.sum_ns;
        self.max_ns = self.max_ns.max(other.max_ns);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// The value at quantile `q` (0..=1), at most the exact maximum.
    pub fn quantile(&self, q: f64) -> Duration {
        if self.count == 0 {
            return Duration::ZERO;
        }
        // The rank of the q-quantile, 1-based: ⌈q·n⌉, at least 1.
        let rank = ((q.clamp(0.0, 1.0) * self.count as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (b, &n) in self.counts.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return Duration::from_nanos(value(b).min(self.max_ns));
            }
        }
        Duration::from_nanos(self.max_ns)
    }

    pub fn summary(&self) -> LatencySummary {
        let mean = match self.count {
            0 => Duration::ZERO,
            n => Duration::from_nanos((self.sum_ns / u128::from(n)) as u64),
        };
        LatencySummary {
            count: self.count,
            mean,
            p50: self.quantile(0.5),
            p90: self.quantile(0.9),
            p99: self.quantile(0.99),
            max: Duration::from_nanos(self.max_ns),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_monotone_and_tight() {
        let mut last = 0;
        for ns in (0..100_000u64).chain([u64::MAX / 2, u64::MAX]) {
            let b = bucket(ns);
            assert!(b >= last && b < BUCKETS, "{ns}");
            last = b;
            let v = value(b) as f64;
            assert!(
                (v - ns as f64).abs() <= ns as f64 * 2.0 * RELATIVE_ERROR + 1.0,
                "{ns} -> {v}"
            );
        }
    }

    #[test]
    fn percentiles_of_a_uniform_sample() {
        let mut h = Histogram::default();
        for us in 1..=1000 {
            h.record(Duration::from_micros(us));
        }
        let s = h.summary();
        let near =
            |d: Duration, us: f64| (d.as_secs_f64() * 1e6 - us).abs() <= us * 2.0 * RELATIVE_ERROR;
        assert!(
            near(s.p50, 500.0) && near(s.p90, 900.0) && near(s.p99, 990.0),
            "{s:?}"
        );
        assert_eq!(s.max, Duration::from_micros(1000));
        assert_eq!(s.count, 1000);
        let mut other = Histogram::default();
        other.record(Duration::from_secs(1));
        h.merge(&other);
        assert_eq!(h.summary().max, Duration::from_secs(1));
        assert_eq!(Histogram::default().summary(), LatencySummary::default());
    }
}
