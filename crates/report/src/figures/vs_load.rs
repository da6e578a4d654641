//! Latency against the host's CPU load across stored runs (seed 003,
//! Fig. 6: RTT must stay flat while the measuring PC is loaded). Each run's
//! load is what its result recorded (`host.load`, the mean busy share of
//! the host's CPUs over the run); its latency is the median and p99 of the
//! figures the run kind has: network and user RTT for `rtt`, kernel and
//! user (Mul) one-way latency for `oneway`.

use crate::figure::Figure;
use crate::svg::{Mark, Plot};
use serde_json::Value;

/// One run's point: its name, mean busy share (0–1), and per figure
/// (label, median µs, p99 µs).
#[derive(Clone, Debug, PartialEq)]
pub struct LoadPoint {
    pub name: String,
    pub busy: f64,
    pub busy_threads: u64,
    pub figures: Vec<(&'static str, f64, f64)>,
}

/// The figures of a run kind: (label, JSON pointer of its summary).
fn figure_paths(format: &str) -> Option<&'static [(&'static str, &'static str)]> {
    match format {
        "misura.rtt" => Some(&[
            ("network RTT", "/overall/network_rtt"),
            ("user RTT", "/overall/user_rtt"),
        ]),
        "misura.oneway" => Some(&[
            ("kernel one-way", "/overall/kernel"),
            ("user one-way (Mul)", "/overall/mul"),
        ]),
        _ => None,
    }
}

/// The point of one run, or why it cannot be drawn.
pub fn point(name: &str, v: &Value) -> Result<LoadPoint, String> {
    let format = v.get("format").and_then(Value::as_str).unwrap_or("");
    let paths = figure_paths(format).ok_or_else(|| {
        format!("{name}: a {format} result has no latency to draw against load (use rtt or oneway runs)")
    })?;
    let load = v
        .pointer("/host/load")
        .filter(|l| !l.is_null())
        .ok_or_else(|| format!("{name}: no host load recorded (the run predates it)"))?;
    let busy = load
        .get("mean_busy")
        .and_then(Value::as_f64)
        .ok_or_else(|| format!("{name}: host.load.mean_busy missing"))?;
    let figures = paths
        .iter()
        .filter_map(|(label, p)| {
            let s = v.pointer(p)?;
            let med = s.get("median_ns")?.as_f64()? / 1000.0;
            let p99 = s.get("p99_ns")?.as_f64()? / 1000.0;
            Some((*label, med, p99))
        })
        .collect::<Vec<_>>();
    if figures.is_empty() {
        return Err(format!("{name}: no latency figures (no replies?)"));
    }
    Ok(LoadPoint {
        name: name.to_string(),
        busy,
        busy_threads: load
            .get("busy_threads")
            .and_then(Value::as_u64)
            .unwrap_or(0),
        figures,
    })
}

/// One plot per figure: median (points) and p99 (dashed) against the mean
/// busy share in %.
pub fn figures(points: &[LoadPoint]) -> Vec<Figure> {
    let mut pts: Vec<&LoadPoint> = points.iter().collect();
    pts.sort_by(|a, b| a.busy.total_cmp(&b.busy));
    let labels: Vec<&'static str> = pts
        .first()
        .map(|p| p.figures.iter().map(|f| f.0).collect())
        .unwrap_or_default();
    labels
        .iter()
        .enumerate()
        .map(|(i, label)| {
            let series = |pick: fn(&(&'static str, f64, f64)) -> f64| -> Vec<(f64, f64)> {
                pts.iter()
                    .filter_map(|p| {
                        let f = p.figures.iter().find(|f| f.0 == *label)?;
                        Some((p.busy * 100.0, pick(f)))
                    })
                    .collect()
            };
            let name = format!("vs-load-{}", label.split_whitespace().next().unwrap_or("x"));
            let mut plot = Plot::new(
                &name,
                &format!("{label} against host CPU load"),
                "mean busy share of the host's CPUs over the run (%)",
                &format!("{label} (µs)"),
            );
            plot.x_range = Some((0.0, 100.0));
            plot.mark(
                Mark::Points {
                    points: series(|f| f.1).into_iter().map(|(x, y)| (x, y, 0.0)).collect(),
                    series: i,
                },
                "median",
            );
            plot.mark(
                Mark::Line {
                    points: series(|f| f.2),
                    series: i,
                    dashed: true,
                    step: false,
                },
                "p99",
            );
            Figure {
                plot,
                caption: format!(
                    "{label} of {} runs against the CPU load each recorded (host.load.mean_busy, /proc/stat over the run): Fig. 6 of Li et al. (2006).",
                    pts.len()
                ),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(busy: f64, net: f64, user: f64) -> Value {
        json!({
            "format": "misura.rtt",
            "host": {"load": {"mean_busy": busy, "busy_threads": 1}},
            "overall": {
                "network_rtt": {"median_ns": net, "p99_ns": net * 2.0},
                "user_rtt": {"median_ns": user, "p99_ns": user * 3.0}
            }
        })
    }

    #[test]
    fn points_and_plots_come_from_the_recorded_load() {
        let a = point("a", &run(0.1, 1000.0, 20_000.0)).unwrap();
        let b = point("b", &run(0.9, 1100.0, 60_000.0)).unwrap();
        assert_eq!(a.figures[0], ("network RTT", 1.0, 2.0));
        let figs = figures(&[b, a]);
        assert_eq!(figs.len(), 2);
        let Mark::Points { points, .. } = &figs[1].plot.marks[0].0 else {
            panic!()
        };
        assert_eq!(points, &vec![(10.0, 20.0, 0.0), (90.0, 60.0, 0.0)]);
        let old = json!({"format": "misura.rtt", "host": {"load": null}});
        assert!(point("old", &old).unwrap_err().contains("predates"));
        let other = json!({"format": "misura.tcp"});
        assert!(point("t", &other).unwrap_err().contains("rtt or oneway"));
    }
}
