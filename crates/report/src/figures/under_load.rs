//! The pictures of a `misura load` result, RRUL-style: throughput per
//! direction and latency (network RTT, forward, backward) over one time
//! axis with the loaded phase shaded, and each phase's latency
//! distribution side by side.

use crate::figure::{push, Figure};
use crate::svg::{Mark, Plot};
use serde_json::Value;

fn arr<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map_or(&[], |a| a.as_slice())
}

/// The loaded phase's span, s.
fn loaded_span(v: &Value) -> Option<(f64, f64)> {
    let p = arr(v, "phases").iter().find(|p| p["name"] == "loaded")?;
    let start = p["start_s"].as_f64()?;
    Some((start, start + p["duration_s"].as_f64()?))
}

/// A shaded band over `span` from 0 to `top`.
fn shade(span: (f64, f64), top: f64) -> Mark {
    Mark::Band {
        x: vec![span.0, span.1],
        lower: vec![0.0, 0.0],
        upper: vec![top, top],
        series: 6,
    }
}

fn throughput(v: &Value) -> Option<Plot> {
    let pts = arr(v, "throughput_series");
    let mut plot = Plot::new(
        "load-throughput",
        "Throughput over time",
        "time since the start (s)",
        "throughput (Mbit/s)",
    );
    let mut top = 0.0f64;
    for (i, dir) in ["up", "down"].iter().enumerate() {
        let line: Vec<(f64, f64)> = pts
            .iter()
            .filter(|p| p["direction"] == *dir)
            .filter_map(|p| Some((p["t_s"].as_f64()?, p["throughput_bps"].as_f64()? / 1e6)))
            .collect();
        top = line.iter().map(|p| p.1).fold(top, f64::max);
        if !line.is_empty() {
            plot.mark(
                Mark::Line {
                    points: line,
                    series: i,
                    dashed: false,
                    step: true,
                },
                dir,
            );
        }
    }
    on_run_axis(v, plot, top)
}

/// The plot on the run's time axis with the loaded phase shaded; `None`
/// when it has nothing to draw.
fn on_run_axis(v: &Value, mut plot: Plot, top: f64) -> Option<Plot> {
    if plot.marks.is_empty() {
        return None;
    }
    if let Some(span) = loaded_span(v) {
        plot.marks
            .insert(0, (shade(span, top * 1.05), "loaded phase".into()));
    }
    plot.x_range = Some((0.0, total_s(v)));
    Some(plot)
}

fn total_s(v: &Value) -> f64 {
    arr(v, "latency_series")
        .iter()
        .filter_map(|p| p["t_s"].as_f64())
        .fold(1.0, f64::max)
}

fn latency(v: &Value) -> Option<Plot> {
    let pts = arr(v, "latency_series");
    let mut plot = Plot::new(
        "load-latency",
        "Latency over time (medians per 500 ms)",
        "time since the start (s)",
        "latency (ms)",
    );
    let mut top = 0.0f64;
    for (i, (key, label)) in [
        ("network_rtt_ns", "network RTT"),
        ("forward_ns", "forward"),
        ("backward_ns", "backward"),
    ]
    .iter()
    .enumerate()
    {
        // One segment per phase and per run of intervals with replies, so
        // no line is drawn across a gap.
        let mut segments: Vec<Vec<(f64, f64)>> = Vec::new();
        let mut phase = "";
        for p in pts {
            let (Some(t), Some(y)) = (p["t_s"].as_f64(), p[*key].as_f64()) else {
                segments.push(Vec::new());
                continue;
            };
            let ph = p["phase"].as_str().unwrap_or("");
            if ph != phase || segments.is_empty() {
                segments.push(Vec::new());
                phase = ph;
            }
            top = top.max(y / 1e6);
            segments.last_mut().unwrap().push((t, y / 1e6));
        }
        let mut first = true;
        for seg in segments.into_iter().filter(|s| !s.is_empty()) {
            plot.mark(
                Mark::Line {
                    points: seg,
                    series: i,
                    dashed: i > 0,
                    step: false,
                },
                if first { label } else { "" },
            );
            first = false;
        }
    }
    on_run_axis(v, plot, top)
}

/// Each phase's network RTT distribution from its percentiles (min, p50,
/// p90, p99, max): a coarse CDF, said so.
fn phases_cdf(v: &Value) -> Option<Plot> {
    let mut plot = Plot::new(
        "load-phases",
        "Network RTT by phase",
        "network RTT (ms)",
        "share of probes",
    );
    for (i, p) in arr(v, "phases").iter().enumerate() {
        let n = &p["network_rtt"];
        let pts: Vec<(f64, f64)> = [
            ("min_ns", 0.0),
            ("median_ns", 0.5),
            ("p90_ns", 0.9),
            ("p99_ns", 0.99),
            ("max_ns", 1.0),
        ]
        .iter()
        .filter_map(|(k, q)| Some((n[*k].as_f64()? / 1e6, *q)))
        .collect();
        if pts.len() >= 2 {
            plot.mark(
                Mark::Line {
                    points: pts,
                    series: i,
                    dashed: false,
                    step: false,
                },
                p["name"].as_str().unwrap_or("phase"),
            );
        }
    }
    (!plot.marks.is_empty()).then_some(plot)
}

pub fn under_load_figures(v: &Value, out: &mut Vec<Figure>) {
    push(
        out,
        throughput(v),
        "Throughput of the load's TCP flows per second, up and down; the loaded phase is shaded.",
    );
    push(
        out,
        latency(v),
        "Network RTT and the forward and backward one-way delays (with the idle phase's clock offset) over the whole run, on the same time axis: the direction whose queue grew is the one that rises.",
    );
    // A result with the phases' full histograms gets their CDF from every
    // recorded bucket (the latency figures); only older ones need this.
    let full = arr(v, "phases").iter().any(|p| {
        p["hdr_network_rtt"]
            .as_array()
            .is_some_and(|b| !b.is_empty())
    });
    push(
        out,
        phases_cdf(v).filter(|_| !full),
        "Network RTT distribution of each phase, drawn through its minimum, median, p90, p99 and maximum (the result keeps these, not every probe).",
    );
}
