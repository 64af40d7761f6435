//! Line charts as SVG (plotters' SVG backend: no fonts or system libraries
//! needed), for the Markdown reports `--out` writes.

use std::path::Path;

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

/// Writes a line chart of `series` to `path` (SVG, 800 × 400).
pub fn line_chart(
    path: &Path,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[Series],
) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| format!("plot {}: {e}", path.display());
    let points = series.iter().flat_map(|s| s.points.iter());
    let (mut x_max, mut y_max) = (0f64, 0f64);
    for &(x, y) in points {
        x_max = x_max.max(x);
        y_max = y_max.max(y);
    }
    let (x_max, y_max) = (x_max.max(1e-9), (y_max * 1.1).max(1e-9));
    let root = SVGBackend::new(path, (800, 400)).into_drawing_area();
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
    fn writes_an_svg_with_the_legend() {
        let path = std::env::temp_dir().join(format!("maestro-plot-{}.svg", std::process::id()));
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
        line_chart(&path, "workers", "s", "count", &s).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("active") && svg.contains("hint"));
        std::fs::remove_file(&path).unwrap();
    }
}
