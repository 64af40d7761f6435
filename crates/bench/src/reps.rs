//! Repetitions, shared by every experiment: each variant runs `reps` times, in
//! an order rotated per repetition (repetition k starts at variant k), and each
//! row reports the median of its per-repetition values with their min, max and
//! the samples themselves.
//!
//! Why rotate: the first run after a load pays for cold caches, fresh pages
//! and a machine still busy with the load; a fixed order hands that cost to the
//! same variant every time. Why the median: one noisy run moves it least, and
//! min–max shows how far the runs disagreed (the best of N hides that).

use serde::{Deserialize, Serialize};

use crate::ResultRow;

/// Repetitions when `--reps` is not given.
pub fn default_reps(quick: bool) -> usize {
    if quick { 1 } else { 3 }
}

/// More repetitions than this is a typo (e.g. an operation count), not a plan.
pub const REPS_MAX: usize = 100;

/// Checks a `--reps` value.
pub fn check_reps(reps: usize) -> Result<usize, String> {
    if (1..=REPS_MAX).contains(&reps) {
        Ok(reps)
    } else {
        Err(format!(
            "--reps must be in 1..={REPS_MAX} (repetitions of every variant), got {reps}"
        ))
    }
}

/// The spread of one value over the repetitions. The value itself is the median.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub min: f64,
    pub max: f64,
    pub reps: usize,
    /// Per repetition, in repetition order.
    pub samples: Vec<f64>,
}

impl Spread {
    /// The median and the spread of `samples`; `None` without samples. An even
    /// count's median is the mean of the two middle values.
    pub fn of(samples: &[f64]) -> Option<(f64, Spread)> {
        if samples.is_empty() {
            return None;
        }
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median = if n % 2 == 1 {
            sorted[n / 2]
        } else {
            (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
        };
        Some((
            median,
            Spread {
                min: sorted[0],
                max: sorted[n - 1],
                reps: n,
                samples: samples.to_vec(),
            },
        ))
    }

    /// `[min–max]` for tables.
    pub fn range(&self, precision: usize) -> String {
        format!("[{:.p$}–{:.p$}]", self.min, self.max, p = precision)
    }
}

/// The order of `n` variants in repetition `rep`: rep, rep + 1, … (mod n).
pub fn rotation(n: usize, rep: usize) -> impl Iterator<Item = usize> {
    (0..n).map(move |j| (j + rep) % n.max(1))
}

/// Runs `measure(variant, rep)` for every repetition and variant, rotating the
/// order per repetition. Returns, per repetition, the rows of all variants in
/// the order of `variants` (not the run order), so that rows derived across
/// variants — ratios — can be computed per repetition before [`aggregate`].
pub fn repeat<V>(
    variants: &[V],
    reps: usize,
    mut measure: impl FnMut(&V, usize) -> Result<Vec<ResultRow>, String>,
) -> Result<Vec<Vec<ResultRow>>, String> {
    let reps = check_reps(reps)?;
    let mut out = Vec::with_capacity(reps);
    for rep in 0..reps {
        let mut by_variant: Vec<Vec<ResultRow>> = vec![Vec::new(); variants.len()];
        for k in rotation(variants.len(), rep) {
            by_variant[k] = measure(&variants[k], rep)?;
        }
        out.push(by_variant.into_iter().flatten().collect());
    }
    Ok(out)
}

/// One row per (case, variant, metric), in first-seen order, from the
/// per-repetition rows: `value` the median with its [`Spread`];
/// `ratio_vs_rayon` and numeric extra keys the median of their per-repetition
/// values, with `<key>_min` and `<key>_max` beside them where those differ.
/// Rows missing from some repetitions aggregate the ones present (`reps` says
/// how many).
pub fn aggregate(per_rep: Vec<Vec<ResultRow>>) -> Vec<ResultRow> {
    let mut groups: Vec<Vec<ResultRow>> = Vec::new();
    for row in per_rep.into_iter().flatten() {
        match groups.iter_mut().find(|g| same_row(&g[0], &row)) {
            Some(g) => g.push(row),
            None => groups.push(vec![row]),
        }
    }
    groups.into_iter().map(merge).collect()
}

fn same_row(a: &ResultRow, b: &ResultRow) -> bool {
    a.case == b.case && a.variant == b.variant && a.metric == b.metric
}

fn merge(group: Vec<ResultRow>) -> ResultRow {
    let values: Vec<f64> = group.iter().map(|r| r.value).collect();
    let (value, spread) = Spread::of(&values).expect("a group has a row");
    let mut row = group[0].clone();
    row.value = value;
    row.spread = Some(spread);
    let ratios: Vec<f64> = group.iter().filter_map(|r| r.ratio_vs_rayon).collect();
    row.ratio_vs_rayon = median_into(&mut row.extra, "ratio_vs_rayon", &ratios);
    let keys: Vec<String> = row.extra.keys().cloned().collect();
    for key in keys {
        let numbers: Option<Vec<f64>> = group
            .iter()
            .map(|r| r.extra.get(&key).and_then(serde_json::Value::as_f64))
            .collect();
        if let Some(numbers) = numbers
            && let Some(m) = median_into(&mut row.extra, &key, &numbers)
            && numbers.iter().any(|x| *x != numbers[0])
        {
            row.extra.insert(key, serde_json::json!(m));
        }
    }
    row
}

/// The median of `numbers`; where they differ, also records `<key>_min` and
/// `<key>_max` in `extra`.
fn median_into(
    extra: &mut serde_json::Map<String, serde_json::Value>,
    key: &str,
    numbers: &[f64],
) -> Option<f64> {
    let (median, spread) = Spread::of(numbers)?;
    if spread.min != spread.max {
        extra.insert(format!("{key}_min"), serde_json::json!(spread.min));
        extra.insert(format!("{key}_max"), serde_json::json!(spread.max));
    }
    Some(median)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(variant: &str, metric: &str, value: f64) -> ResultRow {
        ResultRow {
            case: "c".into(),
            variant: variant.into(),
            metric: metric.into(),
            value,
            ..Default::default()
        }
    }

    #[test]
    fn median_min_max_of_odd_and_even_counts() {
        let (m, s) = Spread::of(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((m, s.min, s.max, s.reps), (2.0, 1.0, 3.0, 3));
        assert_eq!(s.samples, [3.0, 1.0, 2.0], "samples keep repetition order");
        let (m, _) = Spread::of(&[4.0, 1.0, 2.0, 3.0]).unwrap();
        assert_eq!(m, 2.5);
        assert!(Spread::of(&[]).is_none());
        assert_eq!(s.range(1), "[1.0–3.0]");
    }

    #[test]
    fn each_repetition_starts_one_variant_later() {
        let order: Vec<Vec<usize>> = (0..4).map(|r| rotation(3, r).collect()).collect();
        assert_eq!(order, [[0, 1, 2], [1, 2, 0], [2, 0, 1], [0, 1, 2]]);
        let mut runs = Vec::new();
        let per_rep = repeat(&["a", "b"], 2, |v, rep| {
            runs.push(format!("{v}{rep}"));
            Ok(vec![row(v, "m", rep as f64)])
        })
        .unwrap();
        assert_eq!(runs, ["a0", "b0", "b1", "a1"]);
        // Rows come back in variant order whatever the run order was.
        assert_eq!(per_rep[1][0].variant, "a");
    }

    #[test]
    fn bad_reps_and_measurement_errors_are_errors() {
        assert!(repeat(&["a"], 0, |_, _| Ok(vec![])).is_err());
        assert!(repeat(&["a"], REPS_MAX + 1, |_, _| Ok(vec![])).is_err());
        let e = repeat(&["a"], 2, |_, _| Err::<Vec<ResultRow>, _>("boom".into()));
        assert_eq!(e.unwrap_err(), "boom");
    }

    #[test]
    fn aggregate_takes_medians_and_keeps_the_spread() {
        let with_extra = |v: f64, ratio: f64, clients: u64| {
            let mut r = row("x", "seconds", v);
            r.ratio_vs_rayon = Some(ratio);
            r.extra.insert("clients".into(), serde_json::json!(clients));
            r.extra.insert("vs_alone".into(), serde_json::json!(ratio));
            r
        };
        let rows = aggregate(vec![
            vec![with_extra(5.0, 1.0, 4), row("y", "seconds", 1.0)],
            vec![with_extra(1.0, 3.0, 4)],
            vec![with_extra(2.0, 2.0, 4), row("y", "seconds", 3.0)],
        ]);
        assert_eq!(rows.len(), 2);
        let x = &rows[0];
        assert_eq!(x.value, 2.0);
        let s = x.spread.as_ref().unwrap();
        assert_eq!((s.min, s.max, s.reps), (1.0, 5.0, 3));
        assert_eq!(x.ratio_vs_rayon, Some(2.0));
        assert_eq!(x.extra["ratio_vs_rayon_min"], 1.0);
        assert_eq!(x.extra["vs_alone"], 2.0);
        assert_eq!(x.extra["vs_alone_max"], 3.0);
        assert_eq!(x.extra["clients"], 4);
        assert!(
            !x.extra.contains_key("clients_min"),
            "equal values: no spread"
        );
        let y = &rows[1];
        assert_eq!((y.value, y.spread.as_ref().unwrap().reps), (2.0, 2));
        let json = serde_json::to_value(x).unwrap();
        assert_eq!(json["value"], 2.0);
        assert_eq!(json["min"], 1.0);
        assert_eq!(json["max"], 5.0);
        assert_eq!(json["reps"], 3);
        assert_eq!(json["samples"], serde_json::json!([5.0, 1.0, 2.0]));
    }
}
