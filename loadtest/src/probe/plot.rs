//! The probe's `--plot FILE.png`: four panels over the seconds of the run, in the load tester's
//! style: frames in and records materialised per second, the consumers' lag, freshness (p50
//! and p99 of the worst replica), and each watched process's RSS.

use super::record::Sample;
use crate::plot::axis::{LogAxis, ms, si};
use crate::plot::{
    Drawn, FAMILY, HEIGHT, WIDTH, builder, dotted_line, fonts_or_warn, headroom, legend, mesh,
    runs, write_png,
};
use plotters::prelude::*;
use std::path::Path;

type Area<'a> = DrawingArea<BitMapBackend<'a>, plotters::coord::Shift>;
type Value = fn(&Sample) -> Option<f64>;

const PALETTE: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(90, 90, 90),
];

pub fn draw(path: &Path, title: &str, samples: &[Sample]) -> Result<(), String> {
    let fonts = fonts_or_warn();
    write_png(path, |pixels| render(pixels, title, samples, fonts))
}

fn render(pixels: &mut [u8], title: &str, samples: &[Sample], fonts: bool) -> Drawn {
    let root = BitMapBackend::with_buffer(pixels, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&WHITE)?;
    let body = if fonts {
        root.titled(title, (FAMILY, 26))?
    } else {
        root.clone()
    };
    let panels = body.split_evenly((4, 1));
    let end = samples.iter().map(|s| s.t).fold(1.0, f64::max).ceil();
    let rates: [(&str, Value); 2] = [
        ("frames in /s", |s| s.frames_in_per_s),
        ("materialised /s", |s| s.materialised_per_s),
    ];
    let caption = "Throughput (gateways' frames in, records materialised)";
    linear(
        &panels[0],
        samples,
        end,
        fonts,
        caption,
        "per second",
        &rates,
        false,
    )?;
    let lag: [(&str, Value); 1] = [("consumer lag", |s| s.lag)];
    let caption = "Consumer lag (records, summed over partitions and replicas)";
    linear(
        &panels[1], samples, end, fonts, caption, "records", &lag, false,
    )?;
    freshness(&panels[2], samples, end, fonts)?;
    memory(&panels[3], samples, end, fonts)?;
    root.present()?;
    Ok(())
}

/// Lines on a linear axis from 0, one per value; seconds without a value leave a gap.
#[allow(clippy::too_many_arguments)]
fn linear(
    area: &Area,
    samples: &[Sample],
    end: f64,
    fonts: bool,
    caption: &str,
    y_desc: &str,
    lines: &[(&str, Value)],
    bottom: bool,
) -> Drawn {
    let top = lines
        .iter()
        .flat_map(|(_, v)| samples.iter().filter_map(v))
        .fold(0.0, f64::max);
    let mut chart =
        builder(area, fonts, caption, bottom).build_cartesian_2d(0.0..end, 0.0..headroom(top))?;
    mesh(&mut chart, fonts, y_desc, &|v| si(*v), 6, bottom)?;
    for (n, (name, value)) in lines.iter().enumerate() {
        let style = PALETTE[n % PALETTE.len()].stroke_width(2);
        chart
            .draw_series(
                value_runs(samples, *value)
                    .into_iter()
                    .map(|r| PathElement::new(r, style)),
            )?
            .label(*name)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 24, y)], style));
    }
    legend(&mut chart, fonts)
}

/// The worst replica's p50 and p99 of each second, on a log scale.
fn freshness(area: &Area, samples: &[Sample], end: f64, fonts: bool) -> Drawn {
    let values = samples
        .iter()
        .flat_map(|s| [s.freshness_p50_ms, s.freshness_p99_ms])
        .flatten();
    let axis = LogAxis::spanning(values);
    let caption = "Freshness: a reading sent to readable on every replica (worst replica)";
    let mut chart = builder(area, fonts, caption, false).build_cartesian_2d(0.0..end, axis)?;
    mesh(&mut chart, fonts, "ms (log scale)", &|v| ms(*v), 12, false)?;
    let lines: [(&str, RGBColor, Value); 2] = [
        ("p99", PALETTE[2], |s| s.freshness_p99_ms),
        ("p50", PALETTE[0], |s| s.freshness_p50_ms),
    ];
    for (name, color, value) in lines {
        let points: Vec<_> = samples.iter().map(|s| (s.t, value(s))).collect();
        dotted_line(&mut chart, &points, name, color, 2)?;
    }
    legend(&mut chart, fonts)
}

/// Each watched process's RSS, in MiB.
fn memory(area: &Area, samples: &[Sample], end: f64, fonts: bool) -> Drawn {
    let names: Vec<&String> = samples.iter().flat_map(|s| s.processes.keys()).collect();
    let mut names: Vec<String> = names.into_iter().cloned().collect();
    names.sort();
    names.dedup();
    let mib = |s: &Sample, name: &str| Some(s.processes.get(name)?.rss_kb? as f64 / 1024.0);
    let top = names
        .iter()
        .flat_map(|n| samples.iter().filter_map(|s| mib(s, n)))
        .fold(0.0, f64::max);
    let mut chart = builder(area, fonts, "Memory of the watched processes", true)
        .build_cartesian_2d(0.0..end, 0.0..headroom(top))?;
    mesh(&mut chart, fonts, "RSS (MiB)", &|v| si(*v), 6, true)?;
    for (n, name) in names.iter().enumerate() {
        let style = PALETTE[n % PALETTE.len()].stroke_width(2);
        let points = samples.iter().filter_map(|s| Some((s.t, mib(s, name)?)));
        chart
            .draw_series(LineSeries::new(points, style))?
            .label(name.as_str())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 24, y)], style));
    }
    legend(&mut chart, fonts)
}

/// The stretches of consecutive seconds where `value` has a value (a lone second too).
fn value_runs(samples: &[Sample], value: Value) -> Vec<Vec<(f64, f64)>> {
    runs(samples.iter().map(|s| (s.t, value(s))), 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::watch::ProcessSample;

    #[test]
    fn draws_a_png_with_gaps_and_missing_metrics() {
        let samples: Vec<Sample> = (0..30)
            .map(|t| Sample {
                t: t as f64,
                freshness_p50_ms: (t % 5 != 0).then_some(3.0),
                freshness_p99_ms: (t % 5 != 0).then_some(20.0 + t as f64),
                frames_in_per_s: Some(5000.0),
                processes: [(
                    "cms".to_string(),
                    ProcessSample {
                        rss_kb: Some(200_000 + t * 100),
                        ..ProcessSample::default()
                    },
                )]
                .into(),
                ..Sample::default()
            })
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("probe.png");
        draw(&path, "probe", &samples).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        assert_eq!(value_runs(&samples, |s| s.freshness_p99_ms).len(), 6);
        assert_eq!(value_runs(&samples, |s| s.lag).len(), 0);
    }
}
