//! A result as one self-contained HTML page with SVG plots chosen by the kind
//! of run (`misura report`).
//!
//! The page reads the result as JSON rather than as its typed model: it must
//! show every format misura writes (and a generic page for the ones it has no
//! plots for), and it reads only the fields it draws. Nothing on the page
//! refers to anything outside it: no scripts, fonts, style sheets or images.
//!
//! Long: the page for every kind of result, and `figures` (one arm per result
//! format) choosing its plots; the split of `report` into models and rendering
//! (issue 27 part 2) takes it apart.

use crate::latency_figures::{
    cdf_extent, cdf_plot, fd_histogram_plot, page_unit, percentile_plot, percentile_unit, Dist,
};
use crate::series::{moving_percentiles, LatencySeries};
use crate::svg::{esc, num, Mark, Plot, Scale};
use serde_json::Value;
use std::io::{self, Write};

/// A histogram bucket `(lower_ns, upper_ns, count)`.
type Bin = (f64, f64, f64);

pub(crate) fn bins(v: Option<&Value>) -> Vec<Bin> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|b| {
                    Some((
                        b.get("lower_ns")?.as_f64()?,
                        b.get("upper_ns")?.as_f64()?,
                        b.get("count")?.as_f64()?,
                    ))
                })
                .collect()
        })
        .unwrap_or_default()
}

pub(crate) fn f(v: &Value, ptr: &str) -> Option<f64> {
    v.pointer(ptr).and_then(Value::as_f64)
}

pub(crate) fn s<'a>(v: &'a Value, ptr: &str) -> Option<&'a str> {
    v.pointer(ptr).and_then(Value::as_str)
}

/// A divisor and unit name that keep nanosecond values readable.
pub(crate) fn time_unit(max_abs_ns: f64) -> (f64, &'static str) {
    if max_abs_ns >= 5e6 {
        (1e6, "ms")
    } else if max_abs_ns >= 5e3 {
        (1e3, "µs")
    } else {
        (1.0, "ns")
    }
}

pub(crate) fn ns_words(ns: f64) -> String {
    let (d, u) = time_unit(ns.abs());
    format!("{} {u}", num(ns / d))
}

/// The range holding all but the outer `tail` share of the values at each
/// end, in bucket edges; `(lo, hi, values outside)`.
fn core_range(sets: &[&[Bin]], tail: f64) -> Option<(f64, f64, f64)> {
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
fn histogram_plot(
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
fn fit_plot(
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

fn time_series_plot(name: &str, series: &LatencySeries) -> Option<Plot> {
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

/// A figure on the page: the plot and a sentence saying what it shows.
#[derive(Clone, Debug)]
pub struct Figure {
    pub plot: Plot,
    pub caption: String,
}

pub(crate) fn push(out: &mut Vec<Figure>, plot: Option<Plot>, caption: &str) {
    if let Some(plot) = plot {
        out.push(Figure {
            plot,
            caption: caption.to_string(),
        });
    }
}

/// The figures for a result, by its `format`; `series` adds the time series
/// from a `--frames` CSV.
pub fn figures(v: &Value, series: Option<&LatencySeries>) -> Vec<Figure> {
    let mut out = Vec::new();
    let format = s(v, "/format").unwrap_or("");
    match format {
        "misura.oneway" | "misura.calibration-run" => oneway_figures(v, &mut out),
        "misura.rtt" => rtt_figures(v, &mut out),
        "misura.clock-interference" => {
            let runs = v
                .get("runs")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let mut cdf = Vec::new();
            // One unit for every run's histogram: the one the widest needs.
            let unit = page_unit(
                runs.iter()
                    .flat_map(|r| bins(r.get("histogram")))
                    .map(|b| b.1),
            );
            for (i, r) in runs.iter().enumerate() {
                let label = r
                    .get("label")
                    .and_then(Value::as_str)
                    .unwrap_or("run")
                    .to_string();
                let b = bins(r.get("histogram"));
                push(
                    &mut out,
                    histogram_plot(&format!("interference-{i}"), &format!("Clock read steps, {label}"), "step between reads", &[(&label, b.clone())], true, Some(unit)),
                    &format!("Time between consecutive clock reads, {label} (seed 000 Fig. 2): the spike is the read cost, the long tail is interference (interrupts, preemption, the hypervisor)."),
                );
                cdf.push((label, b));
            }
            if cdf.len() > 1 {
                let sets: Vec<(&str, Vec<Bin>)> =
                    cdf.iter().map(|(l, b)| (l.as_str(), b.clone())).collect();
                push(
                    &mut out,
                    histogram_plot(
                        "interference-all",
                        "Clock read steps, all runs",
                        "step between reads",
                        &sets,
                        true,
                        Some(unit),
                    ),
                    "The runs on one axis: the first as bars, the others as outlines.",
                );
            }
        }
        "misura.clock-timer" => {
            push(
                &mut out,
                histogram_plot(
                    "timer",
                    "Timer wake-up latency",
                    "wake-up latency",
                    &[("wake-ups", bins(v.get("histogram")))],
                    true,
                    None,
                ),
                "How late the thread woke after each timer expiry (seed 000 Fig. 2).",
            );
            let d: Vec<Dist> = Dist::of(
                "wake-up latency",
                v,
                "hdr",
                "histogram",
                v.get("latency"),
                0.0,
            )
            .into_iter()
            .collect();
            let refs: Vec<&Dist> = d.iter().collect();
            push(
                &mut out,
                percentile_plot("percentiles", "Timer wake-up latency percentile distribution", "wake-up latency", &refs, percentile_unit(&refs)),
                "Wake-up latency against percentile (HdrHistogram style); the rings mark the median, p90, p99 and p99.9 the text output quotes.",
            );
        }
        "misura.sweep" => sweep_figures(v, &mut out),
        "misura.exchange" => {
            let dists: Vec<Dist> = [
                ("t3", "t3: peer's data frame received"),
                ("t3_kernel", "t3 from kernel stamps"),
                ("t2", "t2: own data frame sent"),
                ("t1", "t1: trigger sent"),
            ]
            .iter()
            .filter_map(|(k, l)| {
                let p = v.get(*k).filter(|x| !x.is_null())?;
                Dist::of(l, p, "hdr", "", p.get("summary"), 0.0)
            })
            .collect();
            crate::latency_figures::set_figures(
                &mut out,
                "Exchange",
                "time from the trigger's send()",
                &dists,
                "Each phase is timed from the trigger's send() call (seed 002)",
            );
        }
        "misura.rr" => {
            let dists: Vec<Dist> = v
                .get("clients")
                .and_then(Value::as_array)
                .map(|c| {
                    c.iter()
                        .filter_map(|x| {
                            let id = x.get("client").and_then(Value::as_u64).unwrap_or(0);
                            Dist::of(
                                &format!("client {id}"),
                                x,
                                "latency_hdr",
                                "",
                                x.get("latency"),
                                0.0,
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            crate::latency_figures::set_figures(&mut out, "Transaction latency", "request written → response read", &dists, "Each transaction's time from writing the request to reading the response, by the user clock");
        }
        "misura.tcp" | "misura.udp" => intervals_figure(v, &mut out),
        "misura.rfc2544" => {
            crate::load_figures::rfc2544_figures(v, &mut out);
            let dists: Vec<Dist> = array(v, "sizes")
                .iter()
                .filter_map(|z| {
                    let l = z.get("latency").filter(|x| !x.is_null())?;
                    let key = if s(l, "/source") == Some("kernel") {
                        "kernel"
                    } else {
                        "mul"
                    };
                    let bytes = z.get("frame_bytes").map(cell).unwrap_or_default();
                    Dist::of(
                        &format!("{bytes} B frames, {key}"),
                        l,
                        "",
                        "",
                        l.get(key),
                        0.0,
                    )
                })
                .collect();
            quantile_percentiles(&mut out, &dists, "Latency at the throughput rate", "latency", "The latency trial's stored quantiles per frame size against percentile (RFC 2544 §26.2; the result keeps no histogram, so nothing is drawn between the points).");
        }
        "misura.load" => {
            crate::under_load_figures::under_load_figures(v, &mut out);
            let dists: Vec<Dist> = array(v, "phases")
                .iter()
                .filter_map(|ph| {
                    let name = s(ph, "/name").unwrap_or("phase");
                    let (k, what) = match ph.get("network_rtt").filter(|x| !x.is_null()) {
                        Some(_) => ("network_rtt", "network RTT"),
                        None => ("user_rtt", "user RTT"),
                    };
                    Dist::of(
                        &format!("{name}, {what}"),
                        ph,
                        &format!("hdr_{k}"),
                        "",
                        ph.get(k),
                        0.0,
                    )
                })
                .collect();
            quantile_percentiles(&mut out, &dists, "RTT per phase", "round-trip time", "Each phase's RTT against percentile, one line per phase (results from before the full histograms were stored show their quantiles as points only): how far the loaded phase's tail moves.");
            let refs: Vec<&Dist> = dists.iter().filter(|d| !d.bins.is_empty()).collect();
            push(
                &mut out,
                cdf_plot(
                    "cdf",
                    "RTT CDF per phase",
                    "round-trip time",
                    &refs,
                    page_unit(cdf_extent(&refs).map(|r| r.1)),
                ),
                "Cumulative distribution of each phase's RTT from every recorded bucket.",
            );
        }
        _ => {}
    }
    if let Some(series) = series {
        push(&mut out, time_series_plot("time-series", series), "Latency over the run from the per-frame CSV: the moving median and 99th percentile of consecutive windows.");
    }
    out
}

fn array(v: &Value, k: &str) -> Vec<Value> {
    v.get(k)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// A percentile plot of distributions known only by their quantiles.
fn quantile_percentiles(
    out: &mut Vec<Figure>,
    dists: &[Dist],
    q: &str,
    quantity: &str,
    caption: &str,
) {
    let refs: Vec<&Dist> = dists.iter().collect();
    let unit = percentile_unit(&refs);
    push(
        out,
        percentile_plot(
            "percentiles",
            &format!("{q}: percentiles"),
            quantity,
            &refs,
            unit,
        ),
        caption,
    );
}

fn size_label(p: &Value) -> String {
    if let Some(x) = p.get("payload_bytes").and_then(Value::as_u64) {
        format!("P = {x} B")
    } else if let Some(x) = p.get("request_bytes").and_then(Value::as_u64) {
        format!("{x} B request")
    } else {
        "all".into()
    }
}

fn oneway_figures(v: &Value, out: &mut Vec<Figure>) {
    let calibrating =
        s(v, "/format") == Some("misura.calibration-run") || s(v, "/mode") == Some("calibrate");
    let sizes = v
        .get("per_size")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    // A calibration run's histograms are Mul; internal latency is Mul − C
    // and C is one number per size, so the buckets move by exactly C.
    let (q, kl, quantity, what) = if calibrating {
        ("Mil", "kernel − C", "internal latency", "Mil = Mul − C is the tester's internal latency, the wire time C removed; kernel − C the same from the kernel software stamps")
    } else {
        ("Mul", "kernel", "one-way latency", "Mul is the mean of the best- and worst-case user latency (seed 000); kernel is the kernel software stamps' RX − TX")
    };
    let groups: Vec<(String, Vec<Dist>)> = sizes
        .iter()
        .map(|p| {
            let c = if calibrating {
                p.get("wire_time_ns").and_then(Value::as_f64).unwrap_or(0.0)
            } else {
                0.0
            };
            let lat = p.get("latency");
            let pick = |k: &str| lat.and_then(|l| l.get(k)).filter(|x| !x.is_null());
            // The quoted percentiles: Mil's own summary when there is one.
            let (user_summary, user_shift) = match pick("mil") {
                Some(m) if calibrating => (Some(m), 0.0),
                _ => (pick("mul"), c),
            };
            let (kernel_summary, kernel_shift) = match pick("kernel_internal") {
                Some(m) if calibrating => (Some(m), 0.0),
                _ => (pick("kernel"), c),
            };
            // The buckets move by C; the quoted percentiles are already
            // Mil's when the result has Mil's own summary.
            let mut d = Vec::new();
            d.extend(
                Dist::of(q, p, "hdr_mul", "histogram_mul", user_summary, c).map(|mut x| {
                    shift_marks(&mut x, user_shift - c);
                    x
                }),
            );
            d.extend(
                Dist::of(kl, p, "hdr_kernel", "histogram_kernel", kernel_summary, c).map(
                    |mut x| {
                        shift_marks(&mut x, kernel_shift - c);
                        x
                    },
                ),
            );
            (size_label(p), d)
        })
        .collect();
    latency_distribution_figures(out, &groups, q, quantity, what);
    for (k, what) in [("user", "user windows"), ("kernel", "kernel stamps")] {
        if let Some(line) = v
            .pointer(&format!("/internal_fit/{k}"))
            .filter(|l| !l.is_null())
        {
            push(
                out,
                fit_plot(&format!("calibration-fit-{k}"), &format!("Calibration Amil(P) = α + β·P ({what})"), line, "mean internal latency Amil", None),
                "The tester's internal latency per payload size and its least-squares line with the 95 % confidence band (seed 000 Fig. 5).",
            );
        }
    }
    let byte_time = f(v, "/sut/byte_time_ns").unwrap_or(0.0);
    for (k, what) in [("user", "user windows"), ("kernel", "kernel stamps")] {
        if let Some(line) = v.pointer(&format!("/sut/{k}")).filter(|l| !l.is_null()) {
            let verdict = s(v, &format!("/sut/{k}_verdict"))
                .unwrap_or("no verdict")
                .replace('_', "-");
            push(
                out,
                fit_plot(&format!("sut-fit-{k}"), &format!("SUT latency over frame length ({what}): {verdict}"), line, "mean SUT latency Msl", Some((byte_time, "slope 8/R: store-and-forward"))),
                "The SUT's latency per frame length with its fitted line; a store-and-forward device follows the dashed slope of one byte time per byte, a cut-through one stays flat (seed 000 Fig. 6).",
            );
        }
    }
}

fn rtt_figures(v: &Value, out: &mut Vec<Figure>) {
    let sizes = v
        .get("per_size")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let groups: Vec<(String, Vec<Dist>)> = sizes
        .iter()
        .map(|p| {
            let summary = |k: &str| p.pointer(&format!("/latency/{k}")).filter(|x| !x.is_null());
            let mut d = Vec::new();
            for (label, k) in [
                ("network RTT", "network_rtt"),
                ("user RTT", "user_rtt"),
                ("kernel RTT", "kernel_rtt"),
            ] {
                // Kernel RTT has no display histogram: it is drawn only
                // from the full one.
                d.extend(Dist::of(
                    label,
                    p,
                    &format!("hdr_{k}"),
                    &format!("histogram_{k}"),
                    summary(k),
                    0.0,
                ));
            }
            (size_label(p), d)
        })
        .collect();
    latency_distribution_figures(out, &groups, "RTT", "round-trip time", "network RTT is the user RTT less the reflector's turnaround (STAMP timestamps T2, T3); user RTT is taken by misura's own clock reads around send and receive; kernel RTT from the kernel's software stamps");
}

/// The per-size histogram and percentile plot (every figure of the size
/// as a line), the percentile plot and CDF of the first figure across
/// sizes; each figure kind in one unit for the page.
fn latency_distribution_figures(
    out: &mut Vec<Figure>,
    groups: &[(String, Vec<Dist>)],
    q: &str,
    quantity: &str,
    what: &str,
) {
    let mains: Vec<&Dist> = groups.iter().filter_map(|g| g.1.first()).collect();
    let all: Vec<&Dist> = groups.iter().flat_map(|g| g.1.iter()).collect();
    let hist_unit = page_unit(
        mains
            .iter()
            .filter_map(|d| crate::distribution::freedman_diaconis(&d.bins))
            .map(|b| b.hi),
    );
    let pct_unit = percentile_unit(&all);
    let cdf_unit = page_unit(cdf_extent(&mains).map(|r| r.1));
    for (i, (label, d)) in groups.iter().enumerate() {
        let Some((main, rest)) = d.split_first() else {
            continue;
        };
        let others: Vec<&Dist> = rest.iter().take(1).collect();
        push(
            out,
            fd_histogram_plot(&format!("histogram-{i}"), &format!("{q} histogram, {label}"), quantity, main, &others, hist_unit),
            &format!("Distribution of the {} for {label} (bars) and of the {} (outline), bin width from the data. {what}.", main.label, others.first().map_or("—", |o| o.label.as_str())),
        );
        let refs: Vec<&Dist> = d.iter().collect();
        push(
            out,
            percentile_plot(&format!("percentiles-{i}"), &format!("{q} percentile distribution, {label}"), quantity, &refs, pct_unit),
            &format!("{quantity} against percentile for {label}, one line per figure (HdrHistogram style: 90 %, 99 %, 99.9 % … equally spaced); the rings mark the median, p90, p99 and p99.9 the text output quotes."),
        );
    }
    // The first figure of every size, named by its size.
    let per_size: Vec<Dist> = groups
        .iter()
        .filter_map(|(l, d)| {
            d.first().map(|x| Dist {
                label: l.clone(),
                ..x.clone()
            })
        })
        .collect();
    let refs: Vec<&Dist> = per_size.iter().collect();
    if mains.len() > 1 {
        push(
            out,
            percentile_plot("percentiles", &format!("{} percentile distribution per size", mains[0].label), quantity, &refs, pct_unit),
            &format!("The {} of every size against percentile, one line per size; rings mark each size's quoted percentiles.", mains[0].label),
        );
    }
    push(
        out,
        cdf_plot(
            "cdf",
            &format!(
                "{} CDF per size",
                mains.first().map_or(q, |m| m.label.as_str())
            ),
            quantity,
            &refs,
            cdf_unit,
        ),
        "Cumulative distribution, one line per size, from every recorded bucket.",
    );
}

fn shift_marks(d: &mut Dist, by: f64) {
    for m in &mut d.quoted {
        m.1 -= by;
    }
}

/// A sweep's parameter value as a number ("64", "1.5", "64K" as 65 536).
fn sweep_x(s: &str) -> Option<f64> {
    let t = s.trim();
    let (n, m) = match t.chars().last()? {
        'k' | 'K' => (&t[..t.len() - 1], 1024.0),
        'm' | 'M' => (&t[..t.len() - 1], 1024.0 * 1024.0),
        'g' | 'G' => (&t[..t.len() - 1], 1024.0 * 1024.0 * 1024.0),
        _ => (t, 1.0),
    };
    n.parse::<f64>().ok().map(|x| x * m)
}

fn sweep_figures(v: &Value, out: &mut Vec<Figure>) {
    let points = v
        .get("points")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if points.is_empty() {
        return;
    }
    let param = s(v, "/parameter").unwrap_or("parameter").to_string();
    let vals: Vec<String> = points
        .iter()
        .map(|p| {
            p.get("value")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| p["value"].to_string())
        })
        .collect();
    let numeric: Option<Vec<f64>> = vals.iter().map(|x| sweep_x(x)).collect();
    let (xs, x_label, note) = match &numeric {
        Some(x) => (x.clone(), param.clone(), None),
        None => (
            (0..vals.len()).map(|i| i as f64).collect(),
            format!("{param} (point number)"),
            Some(
                vals.iter()
                    .enumerate()
                    .map(|(i, v)| format!("{i}: {v}"))
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
        ),
    };
    let log_x = numeric.is_some()
        && xs.iter().all(|&x| x > 0.0)
        && xs.iter().cloned().fold(0.0, f64::max)
            / xs.iter().cloned().fold(f64::INFINITY, f64::min)
            >= 50.0;
    let test = s(v, "/test").unwrap_or("");
    let curve =
        |name: &str, title: &str, y_label: &str, keys: &[(&str, &str, f64)]| -> Option<Plot> {
            let mut p = Plot::new(name, title, &x_label, y_label);
            p.x_scale = if log_x { Scale::Log } else { Scale::Linear };
            p.note = note.clone();
            let mut any = false;
            for (i, (key, label, div)) in keys.iter().enumerate() {
                let pts: Vec<(f64, f64)> = xs
                    .iter()
                    .zip(&points)
                    .filter_map(|(x, p)| {
                        Some((*x, p.pointer(&format!("/figures/{key}"))?.as_f64()? / div))
                    })
                    .collect();
                if pts.is_empty() {
                    continue;
                }
                any = true;
                p.mark(
                    Mark::Line {
                        points: pts.clone(),
                        series: i,
                        dashed: false,
                        step: false,
                    },
                    label,
                );
                p.mark(
                    Mark::Points {
                        points: pts.iter().map(|q| (q.0, q.1, 0.0)).collect(),
                        series: i,
                    },
                    "",
                );
            }
            any.then_some(p)
        };
    push(
        out,
        curve(
            "sweep-throughput",
            &format!("{test} throughput against {param}"),
            "throughput (Gbit/s)",
            &[("throughput_bps", "throughput", 1e9)],
        ),
        "Throughput at each point of the sweep (seed 001).",
    );
    push(
        out,
        curve(
            "sweep-transactions",
            &format!("{test} transactions against {param}"),
            "transactions per second",
            &[("transactions_per_s", "transactions/s", 1.0)],
        ),
        "Request/response transactions per second at each point of the sweep.",
    );
    push(
        out,
        curve(
            "sweep-latency",
            &format!("{test} latency against {param}"),
            "latency (µs)",
            &[
                ("latency_median_ns", "median", 1e3),
                ("latency_p99_ns", "p99", 1e3),
            ],
        ),
        "Latency at each point of the sweep.",
    );
}

fn intervals_figure(v: &Value, out: &mut Vec<Figure>) {
    let Some(iv) = v.get("intervals").and_then(Value::as_array) else {
        return;
    };
    let mut by_client: std::collections::BTreeMap<u64, Vec<(f64, f64)>> = Default::default();
    for i in iv {
        if let (Some(e), Some(t)) = (
            i.get("end_ns").and_then(Value::as_f64),
            i.get("throughput_bps").and_then(Value::as_f64),
        ) {
            by_client
                .entry(i.get("client").and_then(Value::as_u64).unwrap_or(0))
                .or_default()
                .push((e / 1e9, t / 1e9));
        }
    }
    if by_client.is_empty() {
        return;
    }
    let mut p = Plot::new(
        "throughput-intervals",
        "Throughput over time",
        "time since the start (s)",
        "throughput (Gbit/s)",
    );
    for (k, pts) in by_client {
        p.mark(
            Mark::Line {
                points: pts.clone(),
                series: k as usize,
                dashed: false,
                step: false,
            },
            &format!("client {k}"),
        );
        p.mark(
            Mark::Points {
                points: pts.iter().map(|q| (q.0, q.1, 0.0)).collect(),
                series: k as usize,
            },
            "",
        );
    }
    push(
        out,
        Some(p),
        "Throughput of each reporting interval, per client.",
    );
}

// ---------------------------------------------------------------- words

fn words(v: &Value) -> Vec<String> {
    let mut w = Vec::new();
    let format = s(v, "/format").unwrap_or("an unknown format");
    let complete = v.get("complete").and_then(Value::as_bool);
    w.push(format!(
        "A {} result (format version {}) written by {} {}, started {}{}.",
        format,
        v.get("format_version")
            .map(|x| x.to_string())
            .unwrap_or("?".into()),
        s(v, "/tool").unwrap_or("?"),
        s(v, "/tool_version").unwrap_or("?"),
        s(v, "/started_at").unwrap_or("at an unknown time"),
        match complete {
            Some(false) => format!(
                ": the run did NOT complete ({}), figures cover what was measured until then",
                s(v, "/stop_reason").unwrap_or("?")
            ),
            _ => String::new(),
        }
    ));
    if let Some(t) = v.get("totals") {
        let g = |k: &str| t.get(k).and_then(Value::as_u64).unwrap_or(0);
        w.push(format!(
            "{} sent, {} received, {} lost, {} duplicated, {} reordered, {} late.",
            g("sent"),
            g("received"),
            g("lost"),
            g("duplicates"),
            g("reordered"),
            g("late")
        ));
    }
    for (k, name) in [
        ("mul", "mean user latency Mul"),
        ("mil", "internal latency Mil"),
        ("msl", "SUT latency Msl"),
        ("kernel", "kernel-stamp latency"),
        ("network_rtt", "network RTT"),
        ("user_rtt", "user RTT"),
    ] {
        if let Some(m) = v.pointer(&format!("/overall/{k}")).filter(|x| !x.is_null()) {
            if let (Some(med), Some(p99)) = (f(m, "/median_ns"), f(m, "/p99_ns")) {
                w.push(format!(
                    "Overall {name}: median {}, 99th percentile {}, over {} values.",
                    ns_words(med),
                    ns_words(p99),
                    m.get("count").unwrap_or(&Value::Null)
                ));
            }
        }
    }
    if let Some(line) = v.pointer("/internal_fit/user").filter(|x| !x.is_null()) {
        w.push(format!(
            "Calibration: Amil(P) = {} ns + {} ns/B · P (user windows).",
            num(f(line, "/alpha_ns").unwrap_or(f64::NAN)),
            num(f(line, "/beta_ns_per_byte").unwrap_or(f64::NAN))
        ));
    }
    if let Some(c) = v.get("calibration").filter(|x| !x.is_null()) {
        w.push(format!(
            "Calibration applied: profile {} made {}.",
            s(c, "/profile").unwrap_or("?"),
            s(c, "/created_at").unwrap_or("?")
        ));
    }
    if let Some(sut) = v.get("sut").filter(|x| !x.is_null()) {
        let bt = f(sut, "/byte_time_ns").unwrap_or(f64::NAN);
        for k in ["user", "kernel"] {
            if let (Some(b), Some(verdict)) = (
                f(sut, &format!("/{k}/beta_ns_per_byte")),
                s(sut, &format!("/{k}_verdict")),
            ) {
                let ci = f(sut, &format!("/{k}/fit/b_ci95")).unwrap_or(f64::NAN);
                w.push(format!(
                    "SUT ({k}): β' = {} ± {} ns/B against a byte time of {} ns/B: {}.",
                    num(b),
                    num(ci),
                    num(bt),
                    match verdict {
                        "store_and_forward" =>
                            "store-and-forward (the whole frame is received before it is sent on)",
                        "cut_through" =>
                            "cut-through (forwarding starts before the frame has fully arrived)",
                        _ => "inconclusive (the slope is consistent with both or neither)",
                    }
                ));
            }
        }
        if let Some(n) = s(sut, "/note") {
            w.push(format!("SUT fit: {n}."));
        }
    }
    w
}

// ---------------------------------------------------------------- tables

fn cell(v: &Value) -> String {
    match v {
        Value::Null => "—".into(),
        Value::Bool(true) => "yes".into(),
        Value::Bool(false) => "no".into(),
        Value::String(s) => s.clone(),
        Value::Array(a) if a.iter().all(|x| !x.is_object() && !x.is_array()) => {
            if a.is_empty() {
                "none".into()
            } else {
                a.iter().map(cell).collect::<Vec<_>>().join(", ")
            }
        }
        other => other.to_string(),
    }
}

fn kv_table(out: &mut dyn Write, v: Option<&Value>) -> io::Result<()> {
    let Some(Value::Object(m)) = v else {
        return writeln!(out, "<p>Not recorded in this result.</p>");
    };
    writeln!(out, "<table class=\"kv\">")?;
    for (k, x) in m {
        if let Value::Object(inner) = x {
            for (k2, y) in inner {
                writeln!(
                    out,
                    "<tr><th>{} {}</th><td>{}</td></tr>",
                    esc(&k.replace('_', " ")),
                    esc(&k2.replace('_', " ")),
                    esc(&cell(y))
                )?;
            }
        } else {
            writeln!(
                out,
                "<tr><th>{}</th><td>{}</td></tr>",
                esc(&k.replace('_', " ")),
                esc(&cell(x))
            )?;
        }
    }
    writeln!(out, "</table>")
}

/// Every latency summary in the result, found by its shape (an object with
/// `count` and `median_ns`), named by where it sits.
fn summaries(v: &Value, path: &str, rows: &mut Vec<(String, Value)>) {
    match v {
        Value::Object(m) => {
            if m.contains_key("median_ns") && m.contains_key("count") {
                rows.push((path.trim_start_matches(" · ").to_string(), v.clone()));
                return;
            }
            for (k, x) in m {
                if k.starts_with("histogram") {
                    continue;
                }
                summaries(x, &format!("{path} · {}", k.replace('_', " ")), rows);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                let label = if x.get("payload_bytes").is_some() || x.get("request_bytes").is_some()
                {
                    size_label(x)
                } else if let Some(l) = x.get("label").and_then(Value::as_str) {
                    l.to_string()
                } else {
                    format!("#{i}")
                };
                summaries(x, &format!("{path} {label}"), rows);
            }
        }
        _ => {}
    }
}

fn summary_table(out: &mut dyn Write, v: &Value) -> io::Result<()> {
    let mut rows = Vec::new();
    summaries(v, "", &mut rows);
    if rows.is_empty() {
        return Ok(());
    }
    writeln!(out, "<h2>Summaries</h2>\n<table class=\"num\"><tr><th>quantity</th><th>count</th><th>min</th><th>median</th><th>p90</th><th>p99</th><th>p99.9</th><th>max</th><th>mean</th><th>std. dev.</th></tr>")?;
    for (name, x) in rows.iter().take(400) {
        let c = |k: &str| {
            x.get(k)
                .and_then(Value::as_f64)
                .map(ns_words)
                .unwrap_or_else(|| "—".into())
        };
        writeln!(
            out,
            "<tr><th>{}</th><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(name),
            x.get("count").map(cell).unwrap_or_default(),
            c("min_ns"),
            c("median_ns"),
            c("p90_ns"),
            c("p99_ns"),
            c("p999_ns"),
            c("max_ns"),
            c("mean_ns"),
            c("std_dev_ns")
        )?;
    }
    writeln!(out, "</table>")
}

pub(crate) const STYLE: &str = "body{font-family:sans-serif;max-width:1180px;margin:1em auto;padding:0 1em;color:#222}\
h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc;margin-top:1.6em}\
.figs{display:flex;flex-wrap:wrap;gap:12px}figure{margin:0;width:560px}figcaption{font-size:.85em;color:#444}\
table{border-collapse:collapse;font-size:.85em}td,th{border:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top}\
table.num td{text-align:right;white-space:nowrap}th{background:#f4f4f4;font-weight:normal}\
.warn li{color:#8a3b00}pre{font-size:.75em;background:#f8f8f8;padding:.5em;overflow:auto}";

/// Write the page for a result. `series` adds the time-series plot from a
/// `--frames` CSV.
pub fn write_html(
    v: &Value,
    series: Option<&LatencySeries>,
    out: &mut dyn Write,
) -> io::Result<()> {
    write_page(v, &figures(v, series), out)
}

/// The figures under a "Plots" heading, each with its caption.
pub(crate) fn write_figures(figs: &[Figure], out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "<h2>Plots</h2>\n<div class=\"figs\">")?;
    for fig in figs {
        writeln!(out, "<figure id=\"fig-{}\">", esc(&fig.plot.name))?;
        fig.plot.write(out, false)?;
        writeln!(
            out,
            "<figcaption>{}</figcaption></figure>",
            esc(&fig.caption)
        )?;
    }
    writeln!(out, "</div>")
}

/// Write the page with figures already made (so a caller that also writes
/// them as files makes them once).
pub fn write_page(v: &Value, figs: &[Figure], out: &mut dyn Write) -> io::Result<()> {
    let format = s(v, "/format").unwrap_or("result");
    let title = format!(
        "misura {} — {}",
        format.trim_start_matches("misura."),
        s(v, "/started_at").unwrap_or("")
    );
    writeln!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
    )?;
    writeln!(out, "<meta name=\"viewport\" content=\"width=device-width\"><title>{}</title><style>{STYLE}</style></head><body>", esc(&title))?;
    writeln!(out, "<h1>{}</h1>", esc(&title))?;
    writeln!(out, "<section id=\"words\">")?;
    for w in words(v) {
        writeln!(out, "<p>{}</p>", esc(&w))?;
    }
    writeln!(out, "</section>")?;
    writeln!(out, "<h2>Warnings</h2>")?;
    match v.get("warnings").and_then(Value::as_array) {
        Some(ws) if !ws.is_empty() => {
            writeln!(out, "<ul class=\"warn\">")?;
            for x in ws {
                // Coded warnings (format 2) show their text and code; older
                // results carry bare sentences.
                let line = match (x.get("text").and_then(Value::as_str), x.get("code")) {
                    (Some(t), Some(c)) => format!("{t} [{}]", cell(c)),
                    _ => cell(x),
                };
                writeln!(out, "<li>{}</li>", esc(&line))?;
            }
            writeln!(out, "</ul>")?;
        }
        _ => writeln!(out, "<p>No warnings.</p>")?,
    }
    if !figs.is_empty() {
        write_figures(figs, out)?;
    } else {
        writeln!(
            out,
            "<p>No plots for this kind of result; its figures are in the tables below.</p>"
        )?;
    }
    summary_table(out, v)?;
    writeln!(out, "<h2>Configuration</h2>")?;
    kv_table(out, v.get("config"))?;
    if let Some(cmd) = v.get("command").and_then(Value::as_array) {
        writeln!(
            out,
            "<p>Command: <code>{}</code></p>",
            esc(&cmd.iter().map(cell).collect::<Vec<_>>().join(" "))
        )?;
    }
    writeln!(out, "<h2>Timestamp sources</h2>")?;
    kv_table(out, v.get("timestamps"))?;
    if let Some(c) = v.get("clock_offset").filter(|x| !x.is_null()) {
        writeln!(out, "<h3>Clock offset</h3>")?;
        kv_table(out, Some(c))?;
    }
    writeln!(out, "<h2>Host fingerprint</h2>")?;
    kv_table(out, v.get("host"))?;
    if let Some(ports) = v.get("ports").and_then(Value::as_array) {
        for p in ports {
            writeln!(
                out,
                "<h3>Port {}</h3>",
                esc(&cell(p.get("role").unwrap_or(&Value::Null)))
            )?;
            kv_table(out, Some(p))?;
        }
    }
    writeln!(
        out,
        "<h2>The result as JSON</h2>\n<details><summary>show</summary><pre>{}</pre></details>",
        esc(&serde_json::to_string_pretty(v).unwrap_or_default())
    )?;
    writeln!(out, "</body></html>")
}
