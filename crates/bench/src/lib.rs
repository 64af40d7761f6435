//! Maestro's experiments. Each experiment runs its variants side by side in one
//! process and returns rows in the JSON shape all `maestro bench` experiments share:
//! `{"experiment":…,"contexts":…,"params":{…},"results":[{"case":…,"variant":…,
//! "metric":…,"value":…,"unit":…, …}]}`.

pub mod analytical;
pub mod cpu;
pub mod granularity;
pub mod latches;
pub mod mixed;
pub mod mixed_bench;
pub mod olc;
pub mod plot;
pub mod run_report;
pub mod scheduler;
pub mod tpch;

use serde::Serialize;

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
        let anchors: Vec<(String, String, f64)> = self
            .results
            .iter()
            .filter(|r| r.variant == "rayon")
            .map(|r| (r.case.clone(), r.metric.clone(), r.value))
            .collect();
        for r in &mut self.results {
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
            "experiment {} — {} contexts\n{:<14} {:<18} {:<22} {:>14} {:<10} {:>10}\n",
            self.experiment,
            self.contexts,
            "case",
            "variant",
            "metric",
            "value",
            "unit",
            "vs rayon"
        );
        for r in &self.results {
            let ratio = r
                .ratio_vs_rayon
                .map_or_else(|| "-".to_string(), |x| format!("{x:.2}×"));
            out.push_str(&format!(
                "{:<14} {:<18} {:<22} {:>14.4} {:<10} {:>10}\n",
                r.case, r.variant, r.metric, r.value, r.unit, ratio
            ));
        }
        out
    }
}

/// An SVG line chart of `metric` over the rows' extra key `x_key`, one line
/// per variant (in first-seen order), for a report's attachments.
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
        })
        .collect();
    plot::line_chart(title, x_desc, y_desc, &series)
}
