//! Line charts as SVG (plotters' SVG backend: no fonts or system libraries
//! needed), for the Markdown reports `--out` writes.

use maestro_scheduler::TimelineSample;
use plotters::prelude::*;

/// One named line: `(x, y)` points in x order, and `(x, min, max)` whiskers
/// where a point is the median of repetitions (empty: no whiskers).
#[derive(Default)]
pub struct Series<'a> {
    pub name: &'a str,
    pub points: Vec<(f64, f64)>,
    pub spread: Vec<(f64, f64, f64)>,
}

const COLORS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(127, 127, 127),
];

/// The scheduler's workers and hint over the samples, seconds from the first.
pub fn timeline_series(samples: &[TimelineSample]) -> Vec<Series<'static>> {
    let t0 = samples.first().map_or(0.0, |t| t.t_ms);
    let pts = |f: fn(&TimelineSample) -> usize| -> Vec<(f64, f64)> {
        samples
            .iter()
            .map(|t| ((t.t_ms - t0) / 1e3, f(t) as f64))
            .collect()
    };
    vec![
        Series {
            name: "active",
            points: pts(|t| t.active),
            spread: Vec::new(),
        },
        Series {
            name: "blocked",
            points: pts(|t| t.blocked),
            spread: Vec::new(),
        },
        Series {
            name: "parked",
            points: pts(|t| t.parked),
            spread: Vec::new(),
        },
        Series {
            name: "total",
            points: pts(|t| t.total),
            spread: Vec::new(),
        },
        Series {
            name: "hint",
            points: pts(|t| t.hint),
            spread: Vec::new(),
        },
    ]
}

/// A line chart of `series` as SVG text (800 × 400).
pub fn line_chart(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[Series],
) -> Result<String, String> {
    let mut svg = String::new();
    draw(&mut svg, title, x_desc, y_desc, series)?;
    Ok(svg)
}

fn draw(
    out: &mut String,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[Series],
) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| format!("plot {title:?}: {e}");
    let points = series.iter().flat_map(|s| s.points.iter().copied());
    let whisker_tops = series
        .iter()
        .flat_map(|s| s.spread.iter().map(|&(x, _, hi)| (x, hi)));
    let (mut x_max, mut y_max) = (0f64, 0f64);
    for (x, y) in points.chain(whisker_tops) {
        x_max = x_max.max(x);
        y_max = y_max.max(y);
    }
    let (x_max, y_max) = (x_max.max(1e-9), (y_max * 1.1).max(1e-9));
    let root = SVGBackend::with_string(out, (800, 400)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(64)
        .build_cartesian_2d(0f64..x_max, 0f64..y_max)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .draw()
        .map_err(|e| err(&e))?;
    for (i, s) in series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        chart
            .draw_series(LineSeries::new(
                s.points.iter().copied(),
                color.stroke_width(2),
            ))
            .map_err(|e| err(&e))?
            .label(s.name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
        // Whiskers: a vertical line from min to max with short caps.
        let cap = x_max / 150.0;
        chart
            .draw_series(s.spread.iter().flat_map(|&(x, lo, hi)| {
                [
                    PathElement::new(vec![(x, lo), (x, hi)], color.stroke_width(1)),
                    PathElement::new(vec![(x - cap, lo), (x + cap, lo)], color.stroke_width(1)),
                    PathElement::new(vec![(x - cap, hi), (x + cap, hi)], color.stroke_width(1)),
                ]
            }))
            .map_err(|e| err(&e))?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_an_svg_with_the_legend() {
        let s = [
            Series {
                name: "active",
                points: vec![(0.0, 1.0), (1.0, 2.0)],
                spread: Vec::new(),
            },
            Series {
                name: "hint",
                points: vec![(0.0, 2.0), (1.0, 1.0)],
                spread: Vec::new(),
            },
        ];
        let svg = line_chart("workers", "s", "count", &s).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("active") && svg.contains("hint"));
    }

    #[test]
    fn whiskers_add_one_path_per_bar_and_cap_and_raise_the_axis() {
        let plain = Series {
            name: "x",
            points: vec![(1.0, 2.0), (2.0, 2.0)],
            spread: Vec::new(),
        };
        let whiskered = Series {
            name: "x",
            points: plain.points.clone(),
            spread: vec![(1.0, 1.0, 3.0), (2.0, 1.5, 9.0)],
        };
        let a = line_chart("t", "x", "y", &[plain]).unwrap();
        let b = line_chart("t", "x", "y", &[whiskered]).unwrap();
        let paths = |svg: &str| svg.matches("<polyline").count() + svg.matches("<path").count();
        assert!(paths(&b) >= paths(&a) + 6, "{} vs {}", paths(&a), paths(&b));
        // The y axis reaches the highest whisker (9), beyond every point (2).
        assert!(b.contains("\n9.0\n"), "y axis should reach 9");
        assert!(!a.contains("\n9.0\n"), "without whiskers it stops near 2");
    }
}
