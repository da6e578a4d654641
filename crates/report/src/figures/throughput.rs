//! The figures of the throughput tests: the sweep's curves and the
//! per-interval rates of `tcp` and `udp`.

use crate::figure::{push, s, Figure};
use crate::svg::{Mark, Plot, Scale};
use serde_json::Value;

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

pub fn sweep_figures(v: &Value, out: &mut Vec<Figure>) {
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
        "Throughput at each point of the sweep (Alborghetti et al., INFN 1998).",
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

pub fn intervals_figure(v: &Value, out: &mut Vec<Figure>) {
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
