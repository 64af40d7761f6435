//! `Granularity`: how many tasks a partitionable operator creates — the policies
//! the papers compare (`../shared/papers/README.md` §1, §2), as one value so that
//! one process can run them side by side.

use std::fmt;
use std::str::FromStr;

/// The task-count policy of partitionable operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Granularity {
    /// Always `n` tasks (`fixed:N`).
    Fixed(usize),
    /// One task per hardware context of the scheduler (`static`): MonetDB's
    /// default and HANA before the hint.
    Static,
    /// The scheduler's concurrency hint when the operator starts, and splitting
    /// of running pieces when the hint rises (`hint`, ADMS 2013 §6).
    Hint,
    /// A degree of parallelism per (query template, operator) learned from the
    /// measured run times (`adaptive`, DaMoN 2016); see [`crate::AdaptiveState`].
    Adaptive,
}

/// Why a string is not a [`Granularity`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseGranularityError {
    pub input: String,
    pub reason: &'static str,
}

impl fmt::Display for ParseGranularityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid granularity {:?}: {} (expected fixed:N, static, hint or adaptive)",
            self.input, self.reason
        )
    }
}

impl std::error::Error for ParseGranularityError {}

impl FromStr for Granularity {
    type Err = ParseGranularityError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = |reason| ParseGranularityError {
            input: s.to_string(),
            reason,
        };
        match s {
            "static" => Ok(Granularity::Static),
            "hint" => Ok(Granularity::Hint),
            "adaptive" => Ok(Granularity::Adaptive),
            "fixed" => Err(err("fixed needs a task count, as in fixed:4")),
            _ => match s.strip_prefix("fixed:") {
                Some(n) => match n.parse::<usize>() {
                    Ok(0) => Err(err("fixed needs at least 1 task")),
                    Ok(n) => Ok(Granularity::Fixed(n)),
                    Err(_) => Err(err("the task count of fixed:N must be a positive integer")),
                },
                None => Err(err("unknown policy")),
            },
        }
    }
}

impl fmt::Display for Granularity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Granularity::Fixed(n) => write!(f, "fixed:{n}"),
            Granularity::Static => f.write_str("static"),
            Granularity::Hint => f.write_str("hint"),
            Granularity::Adaptive => f.write_str("adaptive"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_round_trips() {
        for (s, g) in [
            ("fixed:1", Granularity::Fixed(1)),
            ("fixed:16", Granularity::Fixed(16)),
            ("static", Granularity::Static),
            ("hint", Granularity::Hint),
            ("adaptive", Granularity::Adaptive),
        ] {
            assert_eq!(s.parse::<Granularity>().unwrap(), g);
            assert_eq!(g.to_string(), s);
        }
    }

    #[test]
    fn clear_errors() {
        for (s, reason) in [
            ("fixed:0", "at least 1"),
            ("fixed:-2", "positive integer"),
            ("fixed:x", "positive integer"),
            ("fixed:", "positive integer"),
            ("fixed", "task count"),
            ("Static", "unknown"),
            ("", "unknown"),
        ] {
            let e = s.parse::<Granularity>().unwrap_err();
            assert!(e.reason.contains(reason), "{s:?}: {e}");
            let msg = e.to_string();
            assert!(msg.contains("expected fixed:N, static, hint or adaptive"));
            assert!(msg.contains(&format!("{s:?}")), "{msg}");
        }
    }
}
