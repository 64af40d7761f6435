//! The concurrency hint (paper §6), as a pure function of samples so that it can be
//! tested deterministically; the watchdog feeds it.
//!
//! ```text
//! free = max(0, contexts - active)
//! hint = a * free + (1 - a) * previous        (sampled every period, a = 0.5)
//! if hint > reset_fraction * contexts { hint = contexts }
//! ```
//! Operators read the rounded value, never below 1.

/// The EMA state of the hint.
#[derive(Clone, Debug)]
pub struct HintEstimator {
    contexts: usize,
    alpha: f64,
    reset_fraction: f64,
    value: f64,
}

impl HintEstimator {
    /// Starts at `contexts` (an idle machine).
    pub fn new(contexts: usize, alpha: f64, reset_fraction: f64) -> Self {
        HintEstimator {
            contexts,
            alpha,
            reset_fraction,
            value: contexts as f64,
        }
    }

    /// Feeds one sample of the active concurrency level; returns the new hint.
    pub fn sample(&mut self, active_level: usize) -> usize {
        let free = self.contexts.saturating_sub(active_level) as f64;
        self.value = self.alpha * free + (1.0 - self.alpha) * self.value;
        if self.value > self.reset_fraction * self.contexts as f64 {
            self.value = self.contexts as f64;
        }
        self.current()
    }

    /// The hint as a task count: rounded, at least 1, at most `contexts`.
    pub fn current(&self) -> usize {
        (self.value.round() as usize).clamp(1, self.contexts)
    }

    /// The unrounded EMA (for the timeline).
    pub fn raw(&self) -> f64 {
        self.value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn falls_under_saturation_and_recovers_when_idle() {
        let mut h = HintEstimator::new(16, 0.5, 0.9);
        assert_eq!(h.current(), 16);
        let mut seen = vec![];
        for _ in 0..8 {
            seen.push(h.sample(16));
        }
        assert_eq!(seen, vec![8, 4, 2, 1, 1, 1, 1, 1]);
        assert!(h.raw() < 0.1);
        // Idle: free = 16 every sample; the EMA climbs and resets at 90 %.
        let mut steps = 0;
        while h.current() < 16 {
            h.sample(0);
            steps += 1;
            assert!(steps < 10, "hint did not recover: {h:?}");
        }
        assert_eq!(
            steps, 4,
            "0.06 -> 8.03 -> 12.02 -> 14.01 -> reset at > 14.4"
        );
    }

    #[test]
    fn partial_load_settles_at_free_contexts() {
        let mut h = HintEstimator::new(8, 0.5, 0.9);
        for _ in 0..30 {
            h.sample(5);
        }
        assert_eq!(h.current(), 3);
    }

    #[test]
    fn reset_happens_only_above_threshold() {
        let mut h = HintEstimator::new(10, 0.5, 0.9);
        for _ in 0..20 {
            h.sample(10);
        }
        // 9 free out of 10 converges to 9.0, which is not above 90 %: no reset.
        for _ in 0..40 {
            h.sample(1);
        }
        assert_eq!(h.current(), 9);
        assert!((h.raw() - 9.0).abs() < 1e-6);
    }
}
