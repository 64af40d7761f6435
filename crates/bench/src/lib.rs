//! Maestro's experiments. Each experiment runs its variants side by side in one
//! process and returns rows in the JSON shape all `maestro bench` experiments share:
//! `{"experiment":…,"contexts":…,"params":{…},"results":[{"case":…,"variant":…,
//! "metric":…,"value":…,"unit":…,"min":…,"max":…,"reps":…,"samples":[…], …}]}`:
//! `value` is the median over the repetitions ([`reps`]), `min`/`max` their range.

pub mod analytical;
pub mod class_run;
pub mod cpu;
pub mod granularity;
pub mod latches;
pub mod mixed;
pub mod mixed_bench;
pub mod olc;
pub mod plot;
pub mod reps;
pub mod run_report;
pub mod scheduler;
pub mod tpch;
pub mod tpch_delta;
pub mod workload;

use serde::Serialize;

pub use reps::Spread;

/// One measured value.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct ResultRow {
    pub case: String,
    pub variant: String,
    pub metric: String,
    pub value: f64,
    pub unit: String,
    /// Ours ÷ rayon for the same case and metric (None for the anchor itself or
    /// metrics rayon does not have).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ratio_vs_rayon: Option<f64>,
    /// Whether a larger value is better (throughput) or a smaller one (time).
    pub higher_is_better: bool,
    /// Experiment-specific keys printed beside the others (e.g. `"clients": 16`).
    #[serde(flatten, skip_serializing_if = "serde_json::Map::is_empty")]
    pub extra: serde_json::Map<String, serde_json::Value>,
    /// `min`, `max`, `reps` and `samples` over the repetitions (`value` is their
    /// median); `None` for a row measured once outside the harness.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub spread: Option<Spread>,
}

/// A whole experiment's output.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub experiment: String,
    pub contexts: usize,
    pub params: serde_json::Value,
    pub results: Vec<ResultRow>,
    /// Per-variant attachments written beside the report by `--out` (file name,
    /// content), e.g. each scheduler's counters and watchdog timeline as JSON. Not
    /// part of the stdout JSON.
    #[serde(skip)]
    pub attachments: Vec<(String, String)>,
}

impl Report {
    /// Fills `ratio_vs_rayon` for every row whose case and metric rayon also has.
    pub fn fill_ratios(&mut self) {
        fill_ratios(&mut self.results);
    }

    /// A Markdown report: the parameters, the table, and every SVG
    /// attachment as an image (the files `--out` writes beside it).
    pub fn markdown(&self) -> String {
        let mut md = format!(
            "# Maestro: `{}` experiment\n\n{} contexts. Parameters: `{}`.\n\n```\n{}```\n",
            self.experiment,
            self.contexts,
            self.params,
            self.table()
        );
        for (file, _) in self.attachments.iter().filter(|(f, _)| f.ends_with(".svg")) {
            md.push_str(&format!("\n![{file}]({file})\n"));
        }
        md
    }

    /// A plain-text table for people.
    pub fn table(&self) -> String {
        let mut out = format!(
            "experiment {} — {} contexts; value: median over the repetitions [min–max]\n\
             {:<14} {:<18} {:<22} {:>14} {:<27} {:<10} {:>20}\n",
            self.experiment,
            self.contexts,
            "case",
            "variant",
            "metric",
            "value",
            "[min–max] (reps)",
            "unit",
            "vs rayon [min–max]"
        );
        for r in &self.results {
            let spread = r
                .spread
                .as_ref()
                .map_or_else(String::new, |s| format!("{} ({})", s.range(4), s.reps));
            let ratio = r.ratio_vs_rayon.map_or_else(
                || "-".to_string(),
                |x| match (
                    r.extra.get("ratio_vs_rayon_min").and_then(|v| v.as_f64()),
                    r.extra.get("ratio_vs_rayon_max").and_then(|v| v.as_f64()),
                ) {
                    (Some(lo), Some(hi)) => format!("{x:.2}× [{lo:.2}–{hi:.2}]"),
                    _ => format!("{x:.2}×"),
                },
            );
            out.push_str(&format!(
                "{:<14} {:<18} {:<22} {:>14.4} {:<27} {:<10} {:>20}\n",
                r.case, r.variant, r.metric, r.value, spread, r.unit, ratio
            ));
        }
        out
    }
}

/// Fills `ratio_vs_rayon` in `rows` (one repetition's, so that the ratio's
/// median and spread are over per-repetition ratios).
pub fn fill_ratios(rows: &mut [ResultRow]) {
    let anchors: Vec<(String, String, f64)> = rows
        .iter()
        .filter(|r| r.variant == "rayon")
        .map(|r| (r.case.clone(), r.metric.clone(), r.value))
        .collect();
    for r in rows.iter_mut() {
        if r.variant == "rayon" {
            continue;
        }
        if let Some((_, _, v)) = anchors
            .iter()
            .find(|(c, m, _)| *c == r.case && *m == r.metric)
            && *v > 0.0
        {
            r.ratio_vs_rayon = Some(r.value / v);
        }
    }
}

/// An SVG line chart of `metric` over the rows' extra key `x_key`, one line
/// per variant (in first-seen order), with each point's min–max as a whisker,
/// for a report's attachments.
pub(crate) fn chart_of(
    rows: &[ResultRow],
    metric: &str,
    x_key: &str,
    title: &str,
    x_desc: &str,
    y_desc: &str,
) -> Result<String, String> {
    let mut variants: Vec<&str> = Vec::new();
    for r in rows.iter().filter(|r| r.metric == metric) {
        if !variants.contains(&r.variant.as_str()) {
            variants.push(&r.variant);
        }
    }
    let series: Vec<plot::Series> = variants
        .iter()
        .map(|v| plot::Series {
            name: v,
            points: rows
                .iter()
                .filter(|r| r.metric == metric && r.variant == *v)
                .filter_map(|r| Some((r.extra.get(x_key)?.as_f64()?, r.value)))
                .collect(),
            spread: rows
                .iter()
                .filter(|r| r.metric == metric && r.variant == *v)
                .filter_map(|r| {
                    let s = r.spread.as_ref()?;
                    Some((r.extra.get(x_key)?.as_f64()?, s.min, s.max))
                })
                .collect(),
        })
        .collect();
    plot::line_chart(title, x_desc, y_desc, &series)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(with_spread: bool) -> Vec<ResultRow> {
        (1..=3)
            .map(|clients| {
                let samples = [1.0, 2.0 * clients as f64, 3.0 * clients as f64];
                let (value, spread) = Spread::of(&samples).unwrap();
                let mut extra = serde_json::Map::new();
                extra.insert("clients".into(), serde_json::json!(clients));
                ResultRow {
                    case: format!("clients={clients}"),
                    variant: "v".into(),
                    metric: "seconds".into(),
                    value,
                    extra,
                    spread: with_spread.then_some(spread),
                    ..Default::default()
                }
            })
            .collect()
    }

    #[test]
    fn charts_draw_whiskers_and_tables_print_the_range_of_repeated_rows() {
        let chart = |r: &[ResultRow]| chart_of(r, "seconds", "clients", "t", "x", "y").unwrap();
        let paths = |svg: &str| svg.matches("<polyline").count() + svg.matches("<path").count();
        assert!(paths(&chart(&rows(true))) >= paths(&chart(&rows(false))) + 9);
        let report = Report {
            experiment: "e".into(),
            contexts: 2,
            params: serde_json::json!({}),
            results: rows(true),
            attachments: Vec::new(),
        };
        assert!(
            report.table().contains("[1.0000–9.0000] (3)"),
            "{}",
            report.table()
        );
    }
}
