//! The one text form of a workload class ([`ClassSpec`]), shared by every
//! command that takes one (`maestro serve --class`, `tpch`/`tpcc --class`,
//! `MAESTRO_OMP_CLASS`):
//!
//! ```text
//! SPEC  := NAME [ ':' KEY '=' VALUE { ',' KEY '=' VALUE } ]
//! KEY   := weight              1..=10000 (default 1)
//!        | priority            low | normal | high | a level number (default normal)
//!        | max-parallelism     tasks per operator of one statement, ≥ 1
//!        | timeout-ms          statement timeout, ≥ 1
//!        | statement-memory-mb per-statement memory limit in MiB (fractions allowed)
//!        | memory-mb           limit of the class's running statements together, in MiB
//!        | admission           RUNNING[/QUEUE[/WAIT_MS]]: admission control, at most
//!                              RUNNING statements at once, QUEUE waiting (default 64)
//!                              for WAIT_MS at most (default 5000)
//!        | queue-load          load above which statements queue (needs admission; default 1.0)
//!        | reject-load         load above which they are rejected (needs admission; default 4.0)
//! ```
//!
//! e.g. `olap:weight=1,priority=normal,max-parallelism=1,timeout-ms=5000,admission=2/8/10000`.
//! A key given twice, an unknown key or a bad value is an error naming the
//! key. Parsing checks what needs no scheduler; the priority's range (the
//! scheduler's levels) is checked when the class is defined.

use std::str::FromStr;
use std::time::Duration;

use crate::admission::AdmissionLimits;
use crate::class::{CLASS_WEIGHT_MAX, ClassSpec};

/// A class spec that does not parse: the key (or `name`) at fault and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassSpecError {
    pub key: String,
    pub why: String,
}

impl std::fmt::Display for ClassSpecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "workload class spec: bad {}: {}", self.key, self.why)
    }
}

impl std::error::Error for ClassSpecError {}

const MIB: u64 = 1 << 20;

fn bad<T>(key: &str, why: impl Into<String>) -> Result<T, ClassSpecError> {
    Err(ClassSpecError {
        key: key.to_string(),
        why: why.into(),
    })
}

fn positive(key: &str, value: &str) -> Result<u64, ClassSpecError> {
    match value.parse::<u64>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => bad(key, format!("{value:?} is not a whole number ≥ 1")),
    }
}

fn load(key: &str, value: &str) -> Result<f64, ClassSpecError> {
    match value.parse::<f64>() {
        Ok(x) if x > 0.0 && x.is_finite() => Ok(x),
        _ => bad(key, format!("{value:?} is not a positive number")),
    }
}

/// MiB, fractions allowed (`0.5`), at least one byte.
fn mebibytes(key: &str, value: &str) -> Result<u64, ClassSpecError> {
    let bytes = match value.parse::<f64>() {
        Ok(mb) if mb > 0.0 && mb.is_finite() => mb * MIB as f64,
        _ => return bad(key, format!("{value:?} is not a positive number of MiB")),
    };
    if bytes < 1.0 || bytes >= u64::MAX as f64 {
        return bad(key, format!("{value} MiB is out of range"));
    }
    Ok(bytes as u64)
}

fn admission(value: &str) -> Result<AdmissionLimits, ClassSpecError> {
    let key = "admission";
    let parts: Vec<&str> = value.split('/').collect();
    if parts.len() > 3 {
        return bad(key, format!("{value:?}: RUNNING[/QUEUE[/WAIT_MS]]"));
    }
    let running = positive(key, parts[0])?;
    let mut limits = AdmissionLimits::new(usize::try_from(running).unwrap_or(usize::MAX));
    if let Some(q) = parts.get(1) {
        // 0 is allowed: no queue, reject whatever cannot run at once.
        limits.queue_max = q
            .parse()
            .or_else(|_| bad(key, format!("queue length {q:?} is not a whole number")))?;
    }
    if let Some(w) = parts.get(2) {
        limits.queue_wait_max = Duration::from_millis(positive(key, w)?);
    }
    Ok(limits)
}

impl FromStr for ClassSpec {
    type Err = ClassSpecError;

    fn from_str(s: &str) -> Result<ClassSpec, ClassSpecError> {
        let (name, rest) = match s.split_once(':') {
            Some((n, r)) => (n.trim(), Some(r)),
            None => (s.trim(), None),
        };
        let name_ok = !name.is_empty()
            && name.len() <= 64
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c));
        if !name_ok {
            return bad(
                "name",
                format!("{name:?}: 1-64 characters of [A-Za-z0-9_.-]"),
            );
        }
        let mut spec = ClassSpec::new(name, 1);
        let mut seen: Vec<&str> = Vec::new();
        let (mut queue_load, mut reject_load) = (None, None);
        for item in rest.into_iter().flat_map(|r| r.split(',')) {
            let item = item.trim();
            let Some((key, value)) = item.split_once('=') else {
                return bad(item, "expected KEY=VALUE");
            };
            let (key, value) = (key.trim(), value.trim());
            if seen.contains(&key) {
                return bad(key, "given twice");
            }
            seen.push(key);
            match key {
                "weight" => {
                    let w = positive(key, value)?;
                    if w > u64::from(CLASS_WEIGHT_MAX) {
                        return bad(key, format!("{w} above {CLASS_WEIGHT_MAX}"));
                    }
                    spec.weight = w as u32;
                }
                "priority" => {
                    spec.priority = match value {
                        "low" => crate::DEFAULT_PRIORITY - 1,
                        "normal" => crate::DEFAULT_PRIORITY,
                        "high" => crate::DEFAULT_PRIORITY + 1,
                        n => n.parse().or_else(|_| {
                            bad(key, format!("{n:?}: low, normal, high or a level number"))
                        })?,
                    }
                }
                "max-parallelism" => {
                    spec.max_parallelism =
                        Some(usize::try_from(positive(key, value)?).unwrap_or(usize::MAX));
                }
                "timeout-ms" => spec.timeout = Some(Duration::from_millis(positive(key, value)?)),
                "statement-memory-mb" => {
                    spec.statement_memory_limit = Some(mebibytes(key, value)?);
                }
                "memory-mb" => spec.memory_limit = Some(mebibytes(key, value)?),
                "admission" => spec.admission = Some(admission(value)?),
                "queue-load" => queue_load = Some(load(key, value)?),
                "reject-load" => reject_load = Some(load(key, value)?),
                _ => {
                    return bad(
                        key,
                        "unknown key (weight, priority, max-parallelism, timeout-ms, \
                         statement-memory-mb, memory-mb, admission, queue-load, reject-load)",
                    );
                }
            }
        }
        if queue_load.is_some() || reject_load.is_some() {
            let Some(limits) = spec.admission.as_mut() else {
                let key = if queue_load.is_some() {
                    "queue-load"
                } else {
                    "reject-load"
                };
                return bad(key, "needs admission=RUNNING[/QUEUE[/WAIT_MS]]");
            };
            if let Some(q) = queue_load {
                limits.queue_above_load = q;
            }
            if let Some(r) = reject_load {
                limits.reject_above_load = r;
            }
            if limits.queue_above_load > limits.reject_above_load {
                return bad(
                    "queue-load",
                    format!(
                        "{} above reject-load {}",
                        limits.queue_above_load, limits.reject_above_load
                    ),
                );
            }
        }
        Ok(spec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key_of(s: &str) -> String {
        s.parse::<ClassSpec>().expect_err(s).key
    }

    #[test]
    fn parses_every_key() {
        let spec: ClassSpec = "olap:weight=3,priority=high,max-parallelism=2,timeout-ms=5000,\
                               statement-memory-mb=256,memory-mb=1024,admission=2/8/10000,\
                               queue-load=1.5,reject-load=6"
            .parse()
            .unwrap();
        let mut admission = AdmissionLimits::new(2);
        admission.queue_max = 8;
        admission.queue_wait_max = Duration::from_secs(10);
        admission.queue_above_load = 1.5;
        admission.reject_above_load = 6.0;
        assert_eq!(
            spec,
            ClassSpec {
                priority: crate::DEFAULT_PRIORITY + 1,
                max_parallelism: Some(2),
                timeout: Some(Duration::from_secs(5)),
                statement_memory_limit: Some(256 * MIB),
                memory_limit: Some(1024 * MIB),
                admission: Some(admission),
                ..ClassSpec::new("olap", 3)
            }
        );
        assert_eq!("oltp".parse::<ClassSpec>(), Ok(ClassSpec::new("oltp", 1)));
        let small = "x:statement-memory-mb=0.5".parse::<ClassSpec>().unwrap();
        assert_eq!(small.statement_memory_limit, Some(MIB / 2));
        let a = "x:admission=1/0".parse::<ClassSpec>().unwrap().admission;
        assert_eq!(a.map(|a| (a.max_running, a.queue_max)), Some((1, 0)));
        assert_eq!(
            "x:priority=0".parse::<ClassSpec>().unwrap().priority,
            0,
            "a level number"
        );
    }

    #[test]
    fn a_bad_spec_names_its_key() {
        for (spec, key) in [
            ("", "name"),
            ("a b:weight=1", "name"),
            ("x:weight=0", "weight"),
            ("x:weight=10001", "weight"),
            ("x:weight=1,weight=2", "weight"),
            ("x:priority=urgent", "priority"),
            ("x:max-parallelism=0", "max-parallelism"),
            ("x:timeout-ms=soon", "timeout-ms"),
            ("x:statement-memory-mb=-1", "statement-memory-mb"),
            ("x:memory-mb=99999999999999999", "memory-mb"),
            ("x:memory-mb=0", "memory-mb"),
            ("x:memory-mb=1e-9", "memory-mb"),
            ("x:admission=0", "admission"),
            ("x:admission=1/2/3/4", "admission"),
            ("x:admission=1/x", "admission"),
            ("x:queue-load=2", "queue-load"),
            ("x:admission=1,reject-load=nan", "reject-load"),
            ("x:admission=1,queue-load=5,reject-load=2", "queue-load"),
            ("x:colour=red", "colour"),
            ("x:weight", "weight"),
        ] {
            assert_eq!(key_of(spec), key, "{spec}");
        }
        let e = "x:colour=red".parse::<ClassSpec>().unwrap_err();
        assert!(e.to_string().contains("bad colour"), "{e}");
    }
}
