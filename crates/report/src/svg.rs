//! Plots as SVG, written by hand: axes with ticks, bars, lines, confidence
//! bands and points. No fonts, scripts or links are referenced, so a plot
//! embedded in a page needs nothing from the network.
//!
//! A [`Plot`] holds data in the units its axes show (the caller scales
//! nanoseconds to µs, bit/s to Gbit/s); the writer only maps and draws.
//!
//! Long: the plot writer; `render` maps data to the page once and draws axes,
//! bands, bars, lines and points with that one mapping.

use std::fmt::Write as _;
use std::io::{self, Write};

/// How an axis maps values to positions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    Linear,
    /// Base 10; only positive values are drawn.
    Log,
    /// A quantile `p` in `[0, 1)` placed at `log10(1 / (1 − p))`, so that
    /// 90 %, 99 %, 99.9 % … are equally spaced (HdrHistogram's percentile
    /// distribution); ticks are labelled in percent.
    Percentile,
}

/// What a plot draws; `series` picks the colour from [`PALETTE`].
#[derive(Clone, Debug)]
pub enum Mark {
    /// Histogram bars `(x_from, x_to, height)`.
    Bars {
        bins: Vec<(f64, f64, f64)>,
        series: usize,
    },
    /// A polyline; `step` draws it as a staircase (a CDF).
    Line {
        points: Vec<(f64, f64)>,
        series: usize,
        dashed: bool,
        step: bool,
    },
    /// A filled band between `lower` and `upper` at the same x values.
    Band {
        x: Vec<f64>,
        lower: Vec<f64>,
        upper: Vec<f64>,
        series: usize,
    },
    /// Points `(x, y, error)` with a vertical ±error bar.
    Points {
        points: Vec<(f64, f64, f64)>,
        series: usize,
    },
    /// Marked points `(x, y, tag)`: a ring with its tag written beside it
    /// (e.g. the percentiles a text output quotes, on their curve).
    Tagged {
        points: Vec<(f64, f64, String)>,
        series: usize,
    },
}

/// Colour-blind-safe colours (Okabe–Ito).
pub const PALETTE: [&str; 8] = [
    "#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000", "#f0e442",
];

/// One plot: what to draw, how to scale it and what to call it.
#[derive(Clone, Debug)]
pub struct Plot {
    /// Unique within a page and safe in a file name: it names the `<svg>`
    /// (`data-plot`) and the file `--svg DIR` writes.
    pub name: String,
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub x_scale: Scale,
    pub y_scale: Scale,
    /// Fixed ranges; `None` fits the data.
    pub x_range: Option<(f64, f64)>,
    pub y_range: Option<(f64, f64)>,
    /// `(mark, legend text)`; an empty legend text is not listed.
    pub marks: Vec<(Mark, String)>,
    /// A line under the plot (e.g. what was left out of the range).
    pub note: Option<String>,
    pub width: f64,
    pub height: f64,
    /// The legend top left instead of top right (for curves that rise to
    /// the right, such as percentile distributions).
    pub legend_left: bool,
}

impl Plot {
    pub fn new(name: &str, title: &str, x_label: &str, y_label: &str) -> Plot {
        Plot {
            name: name.to_string(),
            title: title.to_string(),
            x_label: x_label.to_string(),
            y_label: y_label.to_string(),
            x_scale: Scale::Linear,
            y_scale: Scale::Linear,
            x_range: None,
            y_range: None,
            marks: Vec::new(),
            note: None,
            width: 560.0,
            height: 330.0,
            legend_left: false,
        }
    }

    pub fn mark(&mut self, mark: Mark, legend: &str) -> &mut Plot {
        self.marks.push((mark, legend.to_string()));
        self
    }

    /// Write the plot. `standalone` adds the XML namespace a `.svg` file
    /// needs; inside HTML5 the element is recognised without it.
    pub fn write(&self, out: &mut dyn Write, standalone: bool) -> io::Result<()> {
        out.write_all(self.render(standalone).as_bytes())
    }

    fn data_extent(&self, axis_x: bool) -> Option<(f64, f64)> {
        let scale = if axis_x { self.x_scale } else { self.y_scale };
        let mut lo = f64::INFINITY;
        let mut hi = f64::NEG_INFINITY;
        let mut take = |v: f64| {
            if v.is_finite()
                && match scale {
                    Scale::Linear => true,
                    Scale::Log => v > 0.0,
                    Scale::Percentile => (0.0..1.0).contains(&v),
                }
            {
                lo = lo.min(v);
                hi = hi.max(v);
            }
        };
        for (m, _) in &self.marks {
            match m {
                Mark::Bars { bins, .. } => {
                    for &(a, b, h) in bins {
                        if axis_x {
                            take(a);
                            take(b);
                        } else {
                            take(h);
                            if self.y_scale == Scale::Linear {
                                take(0.0);
                            }
                        }
                    }
                }
                Mark::Line { points, .. } => points
                    .iter()
                    .for_each(|&(x, y)| take(if axis_x { x } else { y })),
                Mark::Band {
                    x, lower, upper, ..
                } => {
                    if axis_x {
                        x.iter().for_each(|&v| take(v));
                    } else {
                        lower.iter().chain(upper).for_each(|&v| take(v));
                    }
                }
                Mark::Points { points, .. } => points.iter().for_each(|&(x, y, e)| {
                    if axis_x {
                        take(x)
                    } else {
                        take(y - e);
                        take(y + e);
                    }
                }),
                Mark::Tagged { points, .. } => points
                    .iter()
                    .for_each(|(x, y, _)| take(if axis_x { *x } else { *y })),
            }
        }
        (lo <= hi).then_some((lo, hi))
    }

    fn render(&self, standalone: bool) -> String {
        let (w, h) = (self.width, self.height);
        // About 5.6 px per character of the 11 px font.
        let note = self
            .note
            .as_deref()
            .map(|n| wrap(n, ((w - 80.0) / 5.6) as usize, 3))
            .unwrap_or_default();
        let (ml, mr, mt, mb) = (70.0, 16.0, 30.0, 46.0 + 14.0 * note.len() as f64);
        let (pw, ph) = (w - ml - mr, h - mt - mb);
        let xr = range_for(
            self.x_range.or_else(|| self.data_extent(true)),
            self.x_scale,
            false,
        );
        let yr = range_for(
            self.y_range.or_else(|| self.data_extent(false)),
            self.y_scale,
            true,
        );
        let xs = Map {
            scale: self.x_scale,
            lo: xr.0,
            hi: xr.1,
            from: ml,
            to: ml + pw,
        };
        let ys = Map {
            scale: self.y_scale,
            lo: yr.0,
            hi: yr.1,
            from: mt + ph,
            to: mt,
        };
        let mut s = String::new();
        let ns = if standalone {
            " xmlns=\"http://www.w3.org/2000/svg\""
        } else {
            ""
        };
        let _ = writeln!(
            s,
            "<svg{ns} class=\"plot\" data-plot=\"{}\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" role=\"img\" aria-label=\"{}\" font-family=\"sans-serif\" font-size=\"11\">",
            esc(&self.name),
            esc(&self.title)
        );
        let _ = writeln!(s, "<title>{}</title>", esc(&self.title));
        let _ = writeln!(
            s,
            "<rect x=\"0\" y=\"0\" width=\"{w}\" height=\"{h}\" fill=\"#fff\"/>"
        );
        let _ = writeln!(s, "<text x=\"{}\" y=\"18\" font-size=\"13\" font-weight=\"bold\" text-anchor=\"middle\">{}</text>", w / 2.0, esc(&self.title));
        let clip = format!("clip-{}", self.name);
        let _ = writeln!(s, "<defs><clipPath id=\"{}\"><rect x=\"{ml}\" y=\"{mt}\" width=\"{pw}\" height=\"{ph}\"/></clipPath></defs>", esc(&clip));
        // Grid and ticks.
        s.push_str("<g class=\"axes\" stroke=\"#ccc\" stroke-width=\"0.5\">\n");
        let xt = ticks(xr, self.x_scale);
        let yt = ticks(yr, self.y_scale);
        for &t in &xt {
            let x = xs.at(t);
            let _ = writeln!(
                s,
                "<line x1=\"{x:.1}\" y1=\"{mt}\" x2=\"{x:.1}\" y2=\"{:.1}\"/>",
                mt + ph
            );
        }
        for &t in &yt {
            let y = ys.at(t);
            let _ = writeln!(
                s,
                "<line x1=\"{ml}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\"/>",
                ml + pw
            );
        }
        s.push_str("</g>\n<g class=\"ticks\" fill=\"#333\">\n");
        for &t in &xt {
            let _ = writeln!(
                s,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                xs.at(t),
                mt + ph + 14.0,
                esc(&tick_label(t, self.x_scale))
            );
        }
        for &t in &yt {
            let _ = writeln!(
                s,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                ml - 5.0,
                ys.at(t) + 4.0,
                esc(&tick_label(t, self.y_scale))
            );
        }
        s.push_str("</g>\n");
        let _ = writeln!(
            s,
            "<text class=\"xlabel\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            ml + pw / 2.0,
            mt + ph + 32.0,
            esc(&self.x_label)
        );
        let _ = writeln!(
            s,
            "<text class=\"ylabel\" transform=\"translate(14,{:.1}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
            mt + ph / 2.0,
            esc(&self.y_label)
        );
        for (i, n) in note.iter().enumerate() {
            let _ = writeln!(
                s,
                "<text class=\"note\" x=\"{}\" y=\"{:.1}\" fill=\"#555\">{}</text>",
                ml - 60.0,
                h - 8.0 - 14.0 * (note.len() - 1 - i) as f64,
                esc(n)
            );
        }
        // Data.
        let _ = writeln!(s, "<g class=\"data\" clip-path=\"url(#{})\">", esc(&clip));
        for (m, _) in &self.marks {
            draw(&mut s, m, &xs, &ys);
        }
        s.push_str("</g>\n");
        let _ = writeln!(s, "<rect x=\"{ml}\" y=\"{mt}\" width=\"{pw}\" height=\"{ph}\" fill=\"none\" stroke=\"#333\" stroke-width=\"1\"/>");
        // Legend, top right inside the frame.
        let legend: Vec<_> = self.marks.iter().filter(|(_, l)| !l.is_empty()).collect();
        if !legend.is_empty() {
            let lw = legend
                .iter()
                .map(|(_, l)| l.chars().count())
                .max()
                .unwrap_or(0) as f64
                * 6.2
                + 30.0;
            let lx = if self.legend_left {
                ml + 6.0
            } else {
                ml + pw - lw - 6.0
            };
            let ly = mt + 6.0;
            let _ = writeln!(
                s,
                "<g class=\"legend\"><rect x=\"{lx:.1}\" y=\"{ly:.1}\" width=\"{lw:.1}\" height=\"{:.1}\" fill=\"#fff\" fill-opacity=\"0.85\" stroke=\"#999\" stroke-width=\"0.5\"/>",
                legend.len() as f64 * 15.0 + 4.0
            );
            for (i, (m, l)) in legend.iter().enumerate() {
                let y = ly + 12.0 + i as f64 * 15.0;
                let (c, dashed) = style(m);
                let dash = if dashed {
                    " stroke-dasharray=\"5,3\""
                } else {
                    ""
                };
                match m {
                    Mark::Bars { .. } | Mark::Band { .. } => {
                        let op = if matches!(m, Mark::Band { .. }) {
                            0.25
                        } else {
                            0.7
                        };
                        let _ = writeln!(s, "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"16\" height=\"8\" fill=\"{c}\" fill-opacity=\"{op}\"/>", lx + 5.0, y - 7.0);
                    }
                    Mark::Tagged { .. } | Mark::Points { .. } => {
                        let _ = writeln!(s, "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"4\" fill=\"#fff\" stroke=\"{c}\" stroke-width=\"1.5\"/>", lx + 13.0, y - 3.0);
                    }
                    _ => {
                        let _ = writeln!(s, "<line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"{c}\" stroke-width=\"2\"{dash}/>", lx + 5.0, y - 3.0, lx + 21.0, y - 3.0);
                    }
                }
                let _ = writeln!(
                    s,
                    "<text x=\"{:.1}\" y=\"{y:.1}\">{}</text>",
                    lx + 25.0,
                    esc(l)
                );
            }
            s.push_str("</g>\n");
        }
        s.push_str("</svg>\n");
        s
    }
}

fn style(m: &Mark) -> (&'static str, bool) {
    match m {
        Mark::Bars { series, .. }
        | Mark::Band { series, .. }
        | Mark::Points { series, .. }
        | Mark::Tagged { series, .. } => (PALETTE[series % PALETTE.len()], false),
        Mark::Line { series, dashed, .. } => (PALETTE[series % PALETTE.len()], *dashed),
    }
}

fn draw(s: &mut String, m: &Mark, xs: &Map, ys: &Map) {
    let (c, dashed) = style(m);
    match m {
        Mark::Bars { bins, .. } => {
            let base = ys.from;
            let _ = writeln!(s, "<g class=\"bars\" fill=\"{c}\" fill-opacity=\"0.7\">");
            for &(a, b, hgt) in bins {
                // NaN heights are skipped with the empty ones.
                if hgt.is_nan() || hgt <= 0.0 || !xs.drawable(a.max(b)) {
                    continue;
                }
                let (x0, x1) = (xs.at(a), xs.at(b));
                let y = ys.at(hgt);
                let _ = writeln!(
                    s,
                    "<rect x=\"{:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{:.1}\"/>",
                    x0.min(x1),
                    (x1 - x0).abs().max(0.8),
                    (base - y).max(0.0)
                );
            }
            s.push_str("</g>\n");
        }
        Mark::Line { points, step, .. } => {
            let mut d = String::new();
            let mut prev: Option<(f64, f64)> = None;
            for &(x, y) in points {
                if !xs.drawable(x) || !ys.drawable(y) {
                    prev = None;
                    continue;
                }
                let (px, py) = (xs.at(x), ys.at(y));
                match prev {
                    None => {
                        let _ = write!(d, "M{px:.1},{py:.1}");
                    }
                    Some((_, qy)) if *step => {
                        let _ = write!(d, "L{px:.1},{qy:.1}L{px:.1},{py:.1}");
                    }
                    Some(_) => {
                        let _ = write!(d, "L{px:.1},{py:.1}");
                    }
                }
                prev = Some((px, py));
            }
            let dash = if dashed {
                " stroke-dasharray=\"5,3\""
            } else {
                ""
            };
            let _ = writeln!(s, "<path class=\"line\" d=\"{d}\" fill=\"none\" stroke=\"{c}\" stroke-width=\"1.8\"{dash}/>");
        }
        Mark::Band {
            x, lower, upper, ..
        } => {
            let mut d = String::new();
            let pts: Vec<_> = x
                .iter()
                .zip(upper)
                .filter(|(a, b)| xs.drawable(**a) && ys.drawable(**b))
                .map(|(a, b)| (xs.at(*a), ys.at(*b)))
                .collect();
            let low: Vec<_> = x
                .iter()
                .zip(lower)
                .filter(|(a, b)| xs.drawable(**a) && ys.drawable(**b))
                .map(|(a, b)| (xs.at(*a), ys.at(*b)))
                .collect();
            for (i, (px, py)) in pts.iter().chain(low.iter().rev()).enumerate() {
                let _ = write!(d, "{}{px:.1},{py:.1}", if i == 0 { "M" } else { "L" });
            }
            if !d.is_empty() {
                let _ = writeln!(s, "<path class=\"band\" d=\"{d}Z\" fill=\"{c}\" fill-opacity=\"0.25\" stroke=\"none\"/>");
            }
        }
        Mark::Points { points, .. } => {
            let _ = writeln!(s, "<g class=\"points\" fill=\"{c}\" stroke=\"{c}\">");
            for &(x, y, e) in points {
                if !xs.drawable(x) || !ys.drawable(y) {
                    continue;
                }
                let (px, py) = (xs.at(x), ys.at(y));
                if e > 0.0 {
                    let (y0, y1) = (ys.at(y - e), ys.at(y + e));
                    let _ = writeln!(s, "<line x1=\"{px:.1}\" y1=\"{y0:.1}\" x2=\"{px:.1}\" y2=\"{y1:.1}\" stroke-width=\"1\"/>");
                }
                let _ = writeln!(s, "<circle cx=\"{px:.1}\" cy=\"{py:.1}\" r=\"3.2\"/>");
            }
            s.push_str("</g>\n");
        }
        Mark::Tagged { points, .. } => {
            let _ = writeln!(s, "<g class=\"tagged\" stroke=\"{c}\">");
            for (x, y, tag) in points {
                if !xs.drawable(*x) || !ys.drawable(*y) {
                    continue;
                }
                let (px, py) = (xs.at(*x), ys.at(*y));
                // The tag above left of its ring, or right of it near the
                // frame's left edge, below it near the top.
                let (tx, anchor) = if px < xs.from + 40.0 {
                    (px + 5.0, "start")
                } else {
                    (px - 5.0, "end")
                };
                let ty = if py < ys.to + 14.0 {
                    py + 14.0
                } else {
                    py - 6.0
                };
                let _ = writeln!(s, "<circle cx=\"{px:.1}\" cy=\"{py:.1}\" r=\"4\" fill=\"#fff\" stroke-width=\"1.5\"/><text x=\"{tx:.1}\" y=\"{ty:.1}\" stroke=\"none\" fill=\"{c}\" font-size=\"10\" text-anchor=\"{anchor}\">{}</text>", esc(tag));
            }
            s.push_str("</g>\n");
        }
    }
}

/// Data value to pixel along one axis.
struct Map {
    scale: Scale,
    lo: f64,
    hi: f64,
    from: f64,
    to: f64,
}

impl Map {
    fn t(&self, v: f64) -> f64 {
        match self.scale {
            Scale::Linear => v,
            Scale::Log => v.max(f64::MIN_POSITIVE).log10(),
            Scale::Percentile => percentile_position(v),
        }
    }
    fn at(&self, v: f64) -> f64 {
        let (a, b) = (self.t(self.lo), self.t(self.hi));
        let f = if b > a {
            (self.t(v) - a) / (b - a)
        } else {
            0.5
        };
        // Far-off values are pinned well outside the frame, where the clip
        // path hides them, so no coordinate becomes huge.
        let f = f.clamp(-10.0, 11.0);
        self.from + f * (self.to - self.from)
    }
    fn drawable(&self, v: f64) -> bool {
        v.is_finite()
            && match self.scale {
                Scale::Linear => true,
                Scale::Log => v > 0.0,
                Scale::Percentile => (0.0..1.0).contains(&v),
            }
    }
}

/// The drawn range: the data's, widened to whole decades (log) or padded
/// (linear), never empty.
fn range_for(r: Option<(f64, f64)>, scale: Scale, pad: bool) -> (f64, f64) {
    let (lo, hi) = r.unwrap_or(match scale {
        Scale::Linear => (0.0, 1.0),
        Scale::Log => (1.0, 10.0),
        Scale::Percentile => (0.0, 0.9),
    });
    match scale {
        // From the median or below to the data's last percentile, never
        // beyond it (that would promise a resolution the data lacks).
        Scale::Percentile => (lo.clamp(0.0, 0.5), hi.clamp(0.5, 1.0 - 1e-12)),
        Scale::Log => {
            let (lo, hi) = (lo.max(1e-12), hi.max(1e-12));
            if hi / lo < 30.0 {
                // Less than about a decade and a half: snapping to whole
                // decades would leave most of the frame empty.
                let m = if hi > lo { (hi / lo).powf(0.05) } else { 2.0 };
                return (lo / m, hi * m);
            }
            let a = 10f64.powf(lo.log10().floor());
            let mut b = 10f64.powf(hi.log10().ceil());
            if b <= a {
                b = a * 10.0;
            }
            (a, b)
        }
        Scale::Linear => {
            if hi <= lo {
                let d = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
                return (lo - d, hi + d);
            }
            if pad {
                let d = (hi - lo) * 0.05;
                (if lo == 0.0 { 0.0 } else { lo - d }, hi + d)
            } else {
                (lo, hi)
            }
        }
    }
}

/// Tick positions: decades (log) or steps of 1, 2 or 5 × 10^k (linear).
fn ticks((lo, hi): (f64, f64), scale: Scale) -> Vec<f64> {
    match scale {
        Scale::Percentile => percentile_ticks(lo, hi),
        Scale::Log => {
            let (a, b) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
            let every = ((b - a) / 8 + 1).max(1);
            let within = |v: &f64| *v >= lo * 0.999 && *v <= hi * 1.001;
            let decades: Vec<f64> = (a..=b)
                .filter(|k| (k - a) % every == 0)
                .map(|k| 10f64.powi(k))
                .filter(within)
                .collect();
            if decades.len() >= 3 {
                return decades;
            }
            let mults: &[f64] = if hi / lo > 8.0 {
                &[1.0, 2.0, 5.0]
            } else {
                &[1.0, 1.5, 2.0, 3.0, 5.0, 7.0]
            };
            (a..=b)
                .flat_map(|k| mults.iter().map(move |m| m * 10f64.powi(k)))
                .filter(within)
                .collect()
        }
        Scale::Linear => {
            let raw = (hi - lo) / 6.0;
            if raw.is_nan() || raw <= 0.0 || !raw.is_finite() {
                return vec![lo];
            }
            let mag = 10f64.powf(raw.log10().floor());
            let step = [1.0, 2.0, 5.0, 10.0]
                .iter()
                .map(|m| m * mag)
                .find(|s| *s >= raw)
                .unwrap_or(10.0 * mag);
            let mut t = (lo / step).ceil() * step;
            let mut out = Vec::new();
            while t <= hi + step * 1e-9 && out.len() < 20 {
                out.push(if t.abs() < step * 1e-9 { 0.0 } else { t });
                t += step;
            }
            out
        }
    }
}

/// Where quantile `p` sits on a [`Scale::Percentile`] axis:
/// `log10(1 / (1 − p))`, i.e. the number of nines (0.9 → 1, 0.99 → 2).
pub fn percentile_position(p: f64) -> f64 {
    -(1.0 - p.clamp(0.0, 1.0 - 1e-15)).log10()
}

/// The ticks of a percentile axis from `lo` to `hi`: 0 %, 50 %, then 90 %,
/// 99 %, 99.9 % … as far as `hi` reaches (a tick a hair beyond `hi`, from
/// rounding, still counts).
pub fn percentile_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let top = percentile_position(hi) + 1e-9;
    let mut t: Vec<f64> = [0.0, 0.5]
        .into_iter()
        .filter(|p| *p >= lo - 1e-12 && percentile_position(*p) <= top)
        .collect();
    for k in 1..=15 {
        let p = 1.0 - 10f64.powi(-k);
        if percentile_position(p) > top {
            break;
        }
        if p >= lo {
            t.push(p);
        }
    }
    t
}

/// A percentile tick's label in percent, with as many decimals as it has
/// nines after the second ("99.99", not "100").
pub fn percent_label(p: f64) -> String {
    let nines = percentile_position(p);
    let decimals = if nines > 2.0 {
        (nines.round() as usize).saturating_sub(2).min(12)
    } else {
        0
    };
    format!("{:.*}", decimals, p * 100.0)
}

fn tick_label(v: f64, scale: Scale) -> String {
    match scale {
        Scale::Percentile => percent_label(v),
        _ => num(v),
    }
}

/// A tick label: at most four significant digits, k/M/G for large values.
pub fn num(v: f64) -> String {
    let a = v.abs();
    let (x, suffix) = if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e4 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let s = if x == x.round() {
        format!("{x:.0}")
    } else if x.abs() >= 100.0 {
        format!("{x:.1}")
    } else if x.abs() >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    };
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    format!("{s}{suffix}")
}

/// `text` broken at spaces into lines of at most `width` characters, at
/// most `lines` of them (the last one cut with "…" when more is left).
fn wrap(text: &str, width: usize, lines: usize) -> Vec<String> {
    let mut out: Vec<String> = vec![String::new()];
    for word in text.split(' ') {
        let cur = out.last_mut().expect("never empty");
        if cur.is_empty() || cur.chars().count() + 1 + word.chars().count() <= width {
            if !cur.is_empty() {
                cur.push(' ');
            }
            cur.push_str(word);
        } else {
            out.push(word.to_string());
        }
    }
    if out.len() > lines {
        out.truncate(lines);
        let last = &mut out[lines - 1];
        let keep: String = last.chars().take(width.saturating_sub(1)).collect();
        *last = format!("{keep}…");
    }
    out
}

/// Escape text for XML and HTML.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            _ => o.push(c),
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_ticks_are_round() {
        assert_eq!(
            ticks((0.0, 10.0), Scale::Linear),
            vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
        );
        assert_eq!(ticks((10.0, 1000.0), Scale::Log), vec![10.0, 100.0, 1000.0]);
    }

    #[test]
    fn percentile_ticks_stop_at_the_data() {
        // 5000 values: the last percentile shown is 1 − 1/5000 = 99.98 %.
        assert_eq!(
            percentile_ticks(0.0, 1.0 - 1.0 / 5000.0),
            vec![0.0, 0.5, 0.9, 0.99, 0.999]
        );
        assert_eq!(
            percentile_ticks(0.0, 0.999),
            vec![0.0, 0.5, 0.9, 0.99, 0.999]
        );
        assert_eq!(percentile_ticks(0.0, 0.95), vec![0.0, 0.5, 0.9]);
        let labels: Vec<String> = [0.0, 0.5, 0.9, 0.99, 0.999, 0.99999]
            .iter()
            .map(|p| percent_label(*p))
            .collect();
        assert_eq!(labels, ["0", "50", "90", "99", "99.9", "99.999"]);
        assert!((percentile_position(0.999) - 3.0).abs() < 1e-9);
    }

    #[test]
    fn notes_wrap_at_spaces() {
        assert_eq!(wrap("aa bb cc dd", 5, 3), ["aa bb", "cc dd"]);
        assert_eq!(wrap("aa bb cc dd ee ff gg", 5, 2), ["aa bb", "cc d…"]);
        assert_eq!(wrap("short", 40, 3), ["short"]);
    }

    #[test]
    fn labels_are_short() {
        assert_eq!(num(1500.0), "1500");
        assert_eq!(num(25000.0), "25k");
        assert_eq!(num(2.5e9), "2.5G");
        assert_eq!(num(0.25), "0.25");
    }

    #[test]
    fn a_plot_is_one_svg_element_with_its_marks() {
        let mut p = Plot::new("h", "A <histogram>", "x", "y");
        p.x_scale = Scale::Log;
        p.mark(
            Mark::Bars {
                bins: vec![(10.0, 20.0, 3.0), (20.0, 40.0, 5.0)],
                series: 0,
            },
            "Mul",
        );
        p.mark(
            Mark::Line {
                points: vec![(10.0, 1.0), (40.0, 5.0)],
                series: 1,
                dashed: true,
                step: true,
            },
            "",
        );
        let mut out = Vec::new();
        p.write(&mut out, false).unwrap();
        let s = String::from_utf8(out).unwrap();
        assert!(s.starts_with("<svg class=\"plot\" data-plot=\"h\""));
        let bars = &s[s.find("<g class=\"bars\"").unwrap()..];
        let bars = &bars[..bars.find("</g>").unwrap()];
        assert_eq!(bars.matches("<rect ").count(), 2, "{s}");
        assert_eq!(s.matches("<path class=\"line\"").count(), 1);
        assert!(s.contains("A &lt;histogram&gt;"));
        assert!(!s.contains("http"));
        let mut out = Vec::new();
        p.write(&mut out, true).unwrap();
        assert!(String::from_utf8(out)
            .unwrap()
            .contains("xmlns=\"http://www.w3.org/2000/svg\""));
    }
}
