//! The plots drawn from a result's histograms: a histogram with its core
//! range, the fit of latency against size, and the time series from a
//! `--frames` CSV.

use crate::distribution::Bin;
use crate::figure::{f, ns_words, s, time_unit};
use crate::series::{moving_percentiles, LatencySeries};
use crate::svg::{num, Mark, Plot, Scale};
use serde_json::Value;

/// The range holding all but the outer `tail` share of the values at each
/// end, in bucket edges; `(lo, hi, values outside)`.
pub fn core_range(sets: &[&[Bin]], tail: f64) -> Option<(f64, f64, f64)> {
    let main = sets.first()?;
    let total: f64 = main.iter().map(|b| b.2).sum();
    if total <= 0.0 {
        return None;
    }
    let mut sorted: Vec<Bin> = main.to_vec();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (mut lo, mut hi) = (sorted[0].0, sorted[sorted.len() - 1].1);
    let (mut cum, mut below, mut above) = (0.0, 0.0, 0.0);
    let mut lo_set = false;
    for b in &sorted {
        if !lo_set && cum + b.2 > total * tail {
            lo = b.0;
            below = cum;
            lo_set = true;
        }
        cum += b.2;
        if cum >= total * (1.0 - tail) {
            hi = b.1;
            above = total - cum;
            break;
        }
    }
    // The other sets are drawn over the same range, widened to hold their
    // bulk as well.
    // Only while the main set keeps most of the frame.
    for set in &sets[1..] {
        if let Some((l, h, _)) = core_range(&[set], tail) {
            let (nl, nh) = (lo.min(l), hi.max(h));
            let wide = if lo > 0.0 && nl > 0.0 {
                (nh / nl).log10() > 3.0 * (hi / lo).log10().max(0.5)
            } else {
                nh - nl > 3.0 * (hi - lo)
            };
            if !wide {
                lo = nl;
                hi = nh;
            }
        }
    }
    Some((lo, hi, below + above))
}

/// A histogram of one or more bucket sets over a common axis: the first set
/// as bars, the others as outlines. Log x when every shown value is
/// positive (the buckets are log-spaced), linear otherwise.
pub fn histogram_plot(
    name: &str,
    title: &str,
    quantity: &str,
    sets: &[(&str, Vec<Bin>)],
    log_y: bool,
    unit: Option<(f64, &str)>,
) -> Option<Plot> {
    let refs: Vec<&[Bin]> = sets
        .iter()
        .map(|s| s.1.as_slice())
        .filter(|b| !b.is_empty())
        .collect();
    // Latency histograms show the central 98 % (a few preempted frames would
    // squeeze the rest into one bar); log-count histograms are about the
    // tail and show everything.
    let (lo, hi, outside) = core_range(&refs, if log_y { 0.0 } else { 0.01 })?;
    // The page's unit for this figure kind when the caller chose one.
    let (d, unit) = unit.unwrap_or_else(|| time_unit(lo.abs().max(hi.abs())));
    let mut p = Plot::new(
        name,
        title,
        &format!("{quantity} ({unit})"),
        "values per bucket",
    );
    p.x_scale = if lo > 0.0 { Scale::Log } else { Scale::Linear };
    p.y_scale = if log_y { Scale::Log } else { Scale::Linear };
    p.x_range = Some((lo / d, hi / d));
    for (i, (label, b)) in sets.iter().enumerate() {
        if b.is_empty() {
            continue;
        }
        if i == 0 {
            p.mark(
                Mark::Bars {
                    bins: b.iter().map(|x| (x.0 / d, x.1 / d, x.2)).collect(),
                    series: 0,
                },
                label,
            );
        } else {
            let mut pts = Vec::new();
            for x in b {
                pts.extend([
                    (x.0 / d, 0.0),
                    (x.0 / d, x.2),
                    (x.1 / d, x.2),
                    (x.1 / d, 0.0),
                ]);
            }
            p.mark(
                Mark::Line {
                    points: pts,
                    series: i,
                    dashed: false,
                    step: false,
                },
                label,
            );
        }
    }
    if outside > 0.0 {
        let total: f64 = sets[0].1.iter().map(|b| b.2).sum();
        let min = sets[0].1.iter().map(|b| b.0).fold(f64::INFINITY, f64::min);
        let max = sets[0]
            .1
            .iter()
            .map(|b| b.1)
            .fold(f64::NEG_INFINITY, f64::max);
        p.note = Some(format!(
            "{} of {} values lie outside the range shown (all lie in {} … {})",
            outside,
            total,
            ns_words(min),
            ns_words(max)
        ));
    }
    Some(p)
}

/// A least-squares line with its 95 % confidence band for the mean and its
/// points (mean ± standard error), as in seed 000 Figs. 5 and 6.
/// `reference`: a slope drawn dashed through the fit's centre, with a name.
pub fn fit_plot(
    name: &str,
    title: &str,
    line: &Value,
    y_label: &str,
    reference: Option<(f64, &str)>,
) -> Option<Plot> {
    let x_key = s(line, "/x").unwrap_or("payload_bytes");
    let (a, b) = (f(line, "/alpha_ns")?, f(line, "/beta_ns_per_byte")?);
    let pts: Vec<(f64, f64, f64)> = line
        .get("points")?
        .as_array()?
        .iter()
        .filter_map(|p| {
            let n = p.get("count")?.as_f64()?.max(1.0);
            Some((
                p.get(x_key)?.as_f64()?,
                p.get("mean_ns")?.as_f64()?,
                p.get("std_dev_ns").and_then(Value::as_f64).unwrap_or(0.0) / n.sqrt(),
            ))
        })
        .collect();
    if pts.is_empty() {
        return None;
    }
    let n = pts.len() as f64;
    let xbar = pts.iter().map(|p| p.0).sum::<f64>() / n;
    let sxx: f64 = pts.iter().map(|p| (p.0 - xbar).powi(2)).sum();
    let var = f(line, "/fit/residual_variance").unwrap_or(0.0);
    let t95 = f(line, "/fit/t95").unwrap_or(0.0);
    let (xmin, xmax) = pts
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), p| {
            (l.min(p.0), h.max(p.0))
        });
    let grid: Vec<f64> = (0..=60)
        .map(|i| xmin + (xmax - xmin) * i as f64 / 60.0)
        .collect();
    let half = |x: f64| {
        if sxx > 0.0 {
            t95 * (var * (1.0 / n + (x - xbar).powi(2) / sxx)).sqrt()
        } else {
            0.0
        }
    };
    let ymax = pts
        .iter()
        .map(|p| p.1.abs() + p.2)
        .chain(grid.iter().map(|&x| (a + b * x).abs() + half(x)))
        .fold(0.0, f64::max);
    let (d, unit) = time_unit(ymax);
    let xl = if x_key == "frame_bytes" {
        "frame length L (bytes)"
    } else {
        "payload P (bytes)"
    };
    let mut p = Plot::new(name, title, xl, &format!("{y_label} ({unit})"));
    let pad = (xmax - xmin).max(1.0) * 0.04;
    p.x_range = Some((xmin - pad, xmax + pad));
    p.mark(
        Mark::Band {
            x: grid.clone(),
            lower: grid.iter().map(|&x| (a + b * x - half(x)) / d).collect(),
            upper: grid.iter().map(|&x| (a + b * x + half(x)) / d).collect(),
            series: 0,
        },
        "95 % confidence band",
    );
    p.mark(
        Mark::Line {
            points: grid.iter().map(|&x| (x, (a + b * x) / d)).collect(),
            series: 0,
            dashed: false,
            step: false,
        },
        &format!("fit α + β·x, β = {} ns/B", num(b)),
    );
    if let Some((slope, label)) = reference {
        let yc = a + b * xbar;
        p.mark(
            Mark::Line {
                points: vec![
                    (xmin, (yc + slope * (xmin - xbar)) / d),
                    (xmax, (yc + slope * (xmax - xbar)) / d),
                ],
                series: 1,
                dashed: true,
                step: false,
            },
            label,
        );
    }
    p.mark(
        Mark::Points {
            points: pts.iter().map(|q| (q.0, q.1 / d, q.2 / d)).collect(),
            series: 6,
        },
        "per-size mean ± std. error",
    );
    if let (Some(ac), Some(bc)) = (f(line, "/fit/a_ci95"), f(line, "/fit/b_ci95")) {
        p.note = Some(format!(
            "α = {} ± {} ns, β = {} ± {} ns/B (95 % CI), r² = {}",
            num(a),
            num(ac),
            num(b),
            num(bc),
            num(f(line, "/fit/r_squared").unwrap_or(f64::NAN))
        ));
    }
    Some(p)
}

pub fn time_series_plot(name: &str, series: &LatencySeries) -> Option<Plot> {
    let w = moving_percentiles(series, 400, 20);
    if w.is_empty() {
        return None;
    }
    let ymax = w
        .iter()
        .map(|x| x.p99_ns.abs().max(x.min_ns.abs()))
        .max()
        .unwrap_or(0) as f64;
    let (d, unit) = time_unit(ymax);
    let q = match series.quantity.as_str() {
        "msl_ns" => "SUT latency Msl".to_string(),
        "mul_ns" => "mean user latency Mul".to_string(),
        "kernel_ns" => "kernel-stamp latency".to_string(),
        other => other.trim_end_matches("_ns").replace('_', " "),
    };
    let per = (series.samples.len() / 400)
        .max(20)
        .min(series.samples.len());
    let mut p = Plot::new(
        name,
        &format!("{q} over time (moving windows of {per} frames)"),
        "time since the first frame (s)",
        &format!("{q} ({unit})"),
    );
    let x: Vec<f64> = w.iter().map(|x| x.at_ns as f64 / 1e9).collect();
    p.mark(
        Mark::Band {
            x: x.clone(),
            lower: w.iter().map(|x| x.min_ns as f64 / d).collect(),
            upper: w.iter().map(|x| x.p99_ns as f64 / d).collect(),
            series: 5,
        },
        "min … p99",
    );
    p.mark(
        Mark::Line {
            points: x
                .iter()
                .zip(&w)
                .map(|(t, x)| (*t, x.median_ns as f64 / d))
                .collect(),
            series: 0,
            dashed: false,
            step: false,
        },
        "moving median",
    );
    p.mark(
        Mark::Line {
            points: x
                .iter()
                .zip(&w)
                .map(|(t, x)| (*t, x.p99_ns as f64 / d))
                .collect(),
            series: 1,
            dashed: false,
            step: false,
        },
        "moving p99",
    );
    let max = w.iter().map(|x| x.max_ns).max().unwrap_or(0);
    p.note = Some(format!(
        "{} frames, {} lost; largest value {} (the band stops at p99)",
        series.samples.len(),
        series.lost,
        ns_words(max as f64)
    ));
    Some(p)
}
