//! Line charts as SVG (plotters' SVG backend: no fonts or system libraries
//! needed), for the Markdown reports `--out` writes.

use maestro_scheduler::TimelineSample;
use plotters::prelude::*;

/// One named line: `(x, y)` points in x order.
pub struct Series<'a> {
    pub name: &'a str,
    pub points: Vec<(f64, f64)>,
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
        },
        Series {
            name: "blocked",
            points: pts(|t| t.blocked),
        },
        Series {
            name: "parked",
            points: pts(|t| t.parked),
        },
        Series {
            name: "total",
            points: pts(|t| t.total),
        },
        Series {
            name: "hint",
            points: pts(|t| t.hint),
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
    let points = series.iter().flat_map(|s| s.points.iter());
    let (mut x_max, mut y_max) = (0f64, 0f64);
    for &(x, y) in points {
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
            },
            Series {
                name: "hint",
                points: vec![(0.0, 2.0), (1.0, 1.0)],
            },
        ];
        let svg = line_chart("workers", "s", "count", &s).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("active") && svg.contains("hint"));
    }
}
