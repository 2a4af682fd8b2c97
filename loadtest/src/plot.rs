//! `--plot FILE.png`: the timeline as a chart: throughput, latency, then connections and the
//! target's memory, over the seconds of the run.
//!
//! Text needs a TrueType font. None is bundled: one is read from the usual system places at run
//! time; without one the chart is still drawn, without any text, and a warning says so.

use crate::timeline::Sample;
use plotters::coord::ranged1d::ValueFormatter;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use std::error::Error;
use std::path::Path;
use std::sync::OnceLock;

pub(crate) mod axis;
use axis::{LogAxis, ms, si};

/// Size of the picture, in pixels.
pub const WIDTH: u32 = 1200;
pub const HEIGHT: u32 = 1000;

/// Where Debian, Fedora, Arch, Alpine, macOS and Windows keep a plain sans-serif font.
const FONTS: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/usr/share/fonts/liberation-sans/LiberationSans-Regular.ttf",
    "/usr/share/fonts/truetype/noto/NotoSans-Regular.ttf",
    "/usr/share/fonts/noto/NotoSans-Regular.ttf",
    "/usr/share/fonts/truetype/freefont/FreeSans.ttf",
    "/System/Library/Fonts/Supplemental/Arial.ttf",
    "/Library/Fonts/Arial.ttf",
    "C:\\Windows\\Fonts\\arial.ttf",
];

/// The family name the font is registered under and every text style asks for.
pub(crate) const FAMILY: &str = "sans-serif";

const SENT: RGBColor = RGBColor(31, 119, 180);
const ANSWERED: RGBColor = RGBColor(44, 160, 44);
const OPEN: RGBColor = RGBColor(90, 90, 90);
const ERRORS: RGBColor = RGBColor(214, 39, 40);
const RSS: RGBColor = RGBColor(148, 103, 189);
const P50: RGBColor = RGBColor(31, 119, 180);
const P99: RGBColor = RGBColor(214, 39, 40);

/// Draws `samples` into a PNG at `path` (whatever its extension).
pub fn draw(path: &Path, title: &str, samples: &[Sample]) -> Result<(), String> {
    let fonts = fonts_or_warn();
    write_png(path, |pixels| render(pixels, title, samples, fonts))
}

/// Whether text can be drawn; says on stderr when it cannot.
pub(crate) fn fonts_or_warn() -> bool {
    let fonts = load_font();
    if !fonts {
        eprintln!(
            "cms-loadtest: warning: no TrueType font found (tried {}); the plot has no text",
            FONTS.join(", ")
        );
    }
    fonts
}

/// A picture of `WIDTH` × `HEIGHT` that `render` draws, written to `path` as a PNG.
pub(crate) fn write_png(
    path: &Path,
    render: impl FnOnce(&mut [u8]) -> Drawn,
) -> Result<(), String> {
    let mut pixels = vec![0u8; (WIDTH * HEIGHT * 3) as usize];
    render(&mut pixels).map_err(|e| format!("drawing failed: {e}"))?;
    image::save_buffer_with_format(
        path,
        &pixels,
        WIDTH,
        HEIGHT,
        image::ColorType::Rgb8,
        image::ImageFormat::Png,
    )
    .map_err(|e| e.to_string())
}

/// Registers the first system font found, once per process; says whether there is one.
pub(crate) fn load_font() -> bool {
    static LOADED: OnceLock<bool> = OnceLock::new();
    *LOADED.get_or_init(|| {
        FONTS.iter().any(|path| {
            let Ok(bytes) = std::fs::read(path) else {
                return false;
            };
            // plotters wants the font for the life of the process; the OnceLock makes this
            // leak (a few hundred KiB) happen once.
            let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
            plotters::style::register_font(FAMILY, FontStyle::Normal, bytes).is_ok()
        })
    })
}

type Area<'a> = DrawingArea<BitMapBackend<'a>, plotters::coord::Shift>;
pub(crate) type Drawn = Result<(), Box<dyn Error>>;

/// Three panels sharing the time axis: throughput, latency, connections (and the target's RSS).
fn render(pixels: &mut [u8], title: &str, samples: &[Sample], fonts: bool) -> Drawn {
    let root = BitMapBackend::with_buffer(pixels, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&WHITE)?;
    let body = if fonts {
        root.titled(title, (FAMILY, 26))?
    } else {
        root.clone()
    };
    let height = body.dim_in_pixel().1;
    let (top, rest) = body.split_vertically(height * 35 / 100);
    let (middle, bottom) = rest.split_vertically(height * 36 / 100);
    let end = samples.iter().map(|s| s.t).fold(1.0, f64::max).ceil();
    throughput(&top, samples, end, fonts)?;
    latency(&middle, samples, end, fonts)?;
    connections(&bottom, samples, end, fonts)?;
    root.present()?;
    Ok(())
}

/// Frames per second sent and answered. Sent is drawn wide and pale beneath answered, so both
/// show when they are equal (a gateway keeping up).
fn throughput(area: &Area, samples: &[Sample], end: f64, fonts: bool) -> Drawn {
    let top = samples.iter().map(|s| s.sent_per_s.max(s.answered_per_s));
    let mut chart = builder(area, fonts, "Throughput", false)
        .build_cartesian_2d(0.0..end, 0.0..headroom(top.fold(0.0, f64::max)))?;
    mesh(
        &mut chart,
        fonts,
        "frames per second",
        &|v| si(*v),
        10,
        false,
    )?;
    let sent = SENT.mix(0.45).stroke_width(6);
    chart
        .draw_series(LineSeries::new(
            samples.iter().map(|s| (s.t, s.sent_per_s)),
            sent,
        ))?
        .label("sent")
        .legend(move |(x, y)| PathElement::new([(x, y), (x + 24, y)], sent));
    let answered = ANSWERED.stroke_width(2);
    chart
        .draw_series(LineSeries::new(
            samples.iter().map(|s| (s.t, s.answered_per_s)),
            answered,
        ))?
        .label("answered")
        .legend(move |(x, y)| PathElement::new([(x, y), (x + 24, y)], answered));
    legend(&mut chart, fonts)
}

/// p50 and p99 of the calls answered in each second, on a log scale so that a slow second does
/// not flatten the rest; seconds without answers leave a gap.
fn latency(area: &Area, samples: &[Sample], end: f64, fonts: bool) -> Drawn {
    let values = samples.iter().flat_map(|s| [s.p50_ms, s.p99_ms]).flatten();
    let axis = LogAxis::spanning(values);
    let caption = "Answer latency per second (CALL sent to CALLRESULT)";
    let mut chart = builder(area, fonts, caption, false).build_cartesian_2d(0.0..end, axis)?;
    mesh(
        &mut chart,
        fonts,
        "latency (ms, log scale)",
        &|v| ms(*v),
        16,
        false,
    )?;
    for (name, color, value) in [
        (
            "p99",
            P99,
            (|s: &Sample| s.p99_ms) as fn(&Sample) -> Option<f64>,
        ),
        ("p50", P50, |s: &Sample| s.p50_ms),
    ] {
        let points: Vec<_> = samples.iter().map(|s| (s.t, value(s))).collect();
        dotted_line(&mut chart, &points, name, color, 3)?;
    }
    legend(&mut chart, fonts)
}

/// Open connections and errors so far; the target's RSS on the right axis when it was watched.
fn connections(area: &Area, samples: &[Sample], end: f64, fonts: bool) -> Drawn {
    let top = samples
        .iter()
        .map(|s| s.open.max(s.errors))
        .max()
        .unwrap_or(0);
    let rss_top = samples.iter().filter_map(|s| s.rss_kb).max().unwrap_or(0) as f64 / 1024.0;
    let mut chart = builder(area, fonts, "Connections and target memory", true)
        .build_cartesian_2d(0.0..end, 0.0..headroom(top as f64))?
        // RSS tops out lower than the connections so that the two lines, which often grow
        // together, stay apart.
        .set_secondary_coord(0.0..end, 0.0..headroom(rss_top) * 1.3);
    mesh(
        &mut chart,
        fonts,
        "connections, errors",
        &|v| si(*v),
        6,
        true,
    )?;
    if fonts && rss_top > 0.0 {
        chart
            .configure_secondary_axes()
            .y_desc("target RSS (MiB)")
            .y_label_formatter(&|v| format!("{v:.0}"))
            .label_style((FAMILY, 15))
            .axis_desc_style((FAMILY, 17))
            .draw()?;
    }
    for (name, color, value) in [
        (
            "open connections",
            OPEN,
            (|s: &Sample| s.open) as fn(&Sample) -> u64,
        ),
        ("errors so far", ERRORS, |s: &Sample| s.errors),
    ] {
        let style = color.stroke_width(2);
        chart
            .draw_series(LineSeries::new(
                samples.iter().map(|s| (s.t, value(s) as f64)),
                style,
            ))?
            .label(name)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 24, y)], style));
    }
    if rss_top > 0.0 {
        let style = RSS.stroke_width(2);
        let rss = samples
            .iter()
            .filter_map(|s| Some((s.t, s.rss_kb? as f64 / 1024.0)));
        chart
            .draw_secondary_series(DashedLineSeries::new(rss, 8, 5, style))?
            .label("target RSS (right axis)")
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 24, y)], style));
    }
    legend(&mut chart, fonts)
}

/// A panel's frame: its caption and room for the axes when there is text. Only the bottom panel
/// has a right-hand axis and names the time axis; the others keep as wide a right-hand margin so
/// that all time axes line up.
pub(crate) fn builder<'a, 'b>(
    area: &'a Area<'b>,
    fonts: bool,
    caption: &str,
    bottom: bool,
) -> ChartBuilder<'a, 'b, BitMapBackend<'b>> {
    let mut b = ChartBuilder::on(area);
    b.margin(10);
    let axis = if fonts { 80 } else { 10 };
    if fonts {
        b.caption(caption, (FAMILY, 19))
            .x_label_area_size(if bottom { 55 } else { 30 });
    } else {
        b.x_label_area_size(10);
    }
    b.y_label_area_size(axis);
    if bottom {
        b.right_y_label_area_size(axis);
    } else {
        b.margin_right(10 + axis);
    }
    b
}

/// Grid and axes; only the bottom panel names the time axis.
pub(crate) fn mesh<'a, Y>(
    chart: &mut ChartContext<'a, BitMapBackend<'a>, Cartesian2d<RangedCoordf64, Y>>,
    fonts: bool,
    y_desc: &str,
    y_label: &dyn Fn(&f64) -> String,
    y_labels: usize,
    time_desc: bool,
) -> Drawn
where
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let mut mesh = chart.configure_mesh();
    mesh.light_line_style(BLACK.mix(0.04))
        .bold_line_style(BLACK.mix(0.15))
        .y_labels(y_labels);
    if fonts {
        mesh.y_desc(y_desc)
            // Short runs get ticks between whole seconds: show them as such.
            .x_label_formatter(&|v| {
                if v.fract().abs() < 1e-9 {
                    format!("{v:.0}")
                } else {
                    format!("{v:.1}")
                }
            })
            .y_label_formatter(y_label)
            .label_style((FAMILY, 15))
            .axis_desc_style((FAMILY, 17));
        if time_desc {
            mesh.x_desc("seconds since start");
        }
    } else {
        mesh.disable_x_axis().disable_y_axis();
    }
    mesh.draw()?;
    Ok(())
}

pub(crate) fn legend<'a, CT: plotters::coord::CoordTranslate>(
    chart: &mut ChartContext<'a, BitMapBackend<'a>, CT>,
    fonts: bool,
) -> Drawn {
    if fonts {
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .label_font((FAMILY, 15))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.3))
            .draw()?;
    }
    Ok(())
}

/// The stretches of consecutive seconds that have a value, as lines to draw; a stretch shorter
/// than `shortest` seconds is left out (a dot shows it, where there are dots).
pub(crate) fn runs(
    points: impl IntoIterator<Item = (f64, Option<f64>)>,
    shortest: usize,
) -> Vec<Vec<(f64, f64)>> {
    let mut runs = vec![Vec::new()];
    for (t, value) in points {
        match value {
            Some(v) => runs.last_mut().expect("never empty").push((t, v)),
            None if runs.last().is_some_and(|r| !r.is_empty()) => runs.push(Vec::new()),
            None => {}
        }
    }
    runs.retain(|r| r.len() >= shortest.max(1));
    runs
}

pub(crate) type LogChart<'a, 'b> =
    ChartContext<'a, BitMapBackend<'b>, Cartesian2d<RangedCoordf64, LogAxis>>;

/// A percentile over the seconds on a log axis: its line, broken where a second has none, and
/// a dot at each second (so a lone one shows), in the legend as `name`.
pub(crate) fn dotted_line<'a>(
    chart: &mut LogChart<'a, 'a>,
    points: &[(f64, Option<f64>)],
    name: &str,
    color: RGBColor,
    dot: u32,
) -> Drawn {
    let line = color.stroke_width(2);
    chart.draw_series(
        runs(points.iter().copied(), 2)
            .into_iter()
            .map(|run| PathElement::new(run, line)),
    )?;
    let dots = points.iter().filter_map(|&(t, v)| Some((t, v?)));
    chart
        .draw_series(dots.map(|at| Circle::new(at, dot, color.filled())))?
        .label(name)
        .legend(move |(x, y)| {
            EmptyElement::at((x, y))
                + PathElement::new([(0, 0), (24, 0)], line)
                + Circle::new((12, 0), dot, color.filled())
        });
    Ok(())
}

/// The top of a linear axis: the highest value plus room for the legend (1 when all are 0).
pub(crate) fn headroom(top: f64) -> f64 {
    if top > 0.0 { top * 1.4 } else { 1.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 20 s run: a ramp, a steady rate, a slow second, and two seconds without answers.
    fn synthetic() -> Vec<Sample> {
        (1..=20)
            .map(|i| {
                let t = i as f64 + 0.003 * i as f64;
                let answered = if i == 12 || i == 13 { None } else { Some(1.0) };
                Sample {
                    t,
                    open: (i * 50).min(200),
                    established: (i * 50).min(200),
                    booted: (i * 50).min(200),
                    sent_per_s: 4000.0 + 10.0 * i as f64,
                    answered_per_s: answered.map_or(0.0, |_| 3990.0),
                    p50_ms: answered.map(|_| 0.3 + 0.01 * i as f64),
                    p99_ms: answered.map(|_| if i == 7 { 45.0 } else { 1.2 }),
                    rss_kb: Some(20_000 + i * 10),
                    ..Sample::default()
                }
            })
            .collect()
    }

    /// Width and height from a PNG's IHDR chunk, after checking the signature.
    fn png_size(bytes: &[u8]) -> (u32, u32) {
        assert!(
            bytes.len() > 33,
            "too short for a PNG: {} bytes",
            bytes.len()
        );
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "PNG signature");
        assert_eq!(&bytes[12..16], b"IHDR", "first chunk");
        let be = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
        (be(16), be(20))
    }

    #[test]
    fn draws_a_png_of_the_expected_size() {
        let dir = tempfile::tempdir().unwrap();
        // Not named .png: the file is a PNG whatever it is called.
        let path = dir.path().join("run.plot");
        draw(&path, "200 chargers against 127.0.0.1:9000", &synthetic()).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(png_size(&bytes), (WIDTH, HEIGHT));
    }

    #[test]
    fn draws_without_text_or_samples() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bare.png");
        write_png(&path, |p| render(p, "no font", &synthetic(), false)).unwrap();
        assert_eq!(png_size(&std::fs::read(&path).unwrap()), (WIDTH, HEIGHT));
        draw(&path, "nothing measured", &[]).unwrap();
        assert_eq!(png_size(&std::fs::read(&path).unwrap()), (WIDTH, HEIGHT));
    }

    #[test]
    fn an_unwritable_path_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing").join("plot.png");
        assert!(draw(&path, "x", &synthetic()).is_err());
    }

    #[test]
    fn gaps_split_the_lines() {
        let r = runs(synthetic().iter().map(|s| (s.t, s.p99_ms)), 2);
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].len(), 11);
        assert_eq!(r[1].len(), 7);
    }
}
