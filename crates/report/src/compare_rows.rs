//! `misura compare RUN RUN…`'s table: each run's main figure (median and
//! spread), its change against the first run, and whether the change is
//! beyond the runs' spread. Read from the stored results' JSON.

use crate::compare::{figure_text, load_figure, no_figure, not_comparable};
use serde_json::Value;
use std::io::{self, Write};

/// A run's main figure: its name, median, spread (the minimum to the 90th
/// percentile, or a set-up delay's min … max) and how many samples.
pub type MainFigure = (String, f64, f64, u64);

/// One stored run to compare: its id, command, target and result.
pub struct Stored<'a> {
    pub id: i64,
    pub subcommand: &'a str,
    pub target: &'a str,
    pub value: &'a Value,
}

/// One line of the table.
pub struct Row {
    pub id: i64,
    pub subcommand: String,
    pub target: String,
    pub figure: String,
    pub median: f64,
    pub spread: f64,
    pub delta: Option<f64>,
    pub verdict: String,
}

/// A run's main figure for comparison, the first its result has.
/// A result that has a latency distribution is judged by it alone (none
/// when it lacks a median); the others by a set-up delay, a rate, or the
/// loaded phase of `misura load`.
pub fn main_figure(v: &Value) -> Option<MainFigure> {
    let own = match distribution(v) {
        Some((s, name)) => distribution_figure(s, name),
        None => setup_figure(v).or_else(|| rate_figure(v)),
    };
    own.or_else(|| load_figure(v))
}

/// The first latency distribution the result has, and its name.
fn distribution(v: &Value) -> Option<(&Value, &'static str)> {
    let candidates: [(&str, &str); 6] = [
        ("/overall/network_rtt", "network RTT"),
        ("/overall/kernel_rtt", "kernel RTT"),
        ("/overall/msl", "SUT latency Msl"),
        ("/overall/mul", "Mul"),
        ("/latency", "timer wake-up latency"),
        ("/runs/0/steps", "clock read step"),
    ];
    candidates.into_iter().find_map(|(p, name)| {
        let s = v.pointer(p).filter(|s| !s.is_null())?;
        Some((s, name))
    })
}

fn distribution_figure(s: &Value, name: &str) -> Option<MainFigure> {
    let med = s.get("median_ns")?.as_f64()?;
    let p90 = s.get("p90_ns").and_then(|x| x.as_f64()).unwrap_or(med);
    let min = s.get("min_ns").and_then(|x| x.as_f64()).unwrap_or(med);
    let count = s.get("count").and_then(|x| x.as_u64()).unwrap_or(0);
    // Spread: the distance from the minimum to the 90th percentile, the
    // range most probes fall in.
    Some((name.to_string(), med, (p90 - min).max(0.0), count))
}

/// `setup`: the first gap's mean set-up delay, its spread min … max.
fn setup_figure(v: &Value) -> Option<MainFigure> {
    let g = v.pointer("/gaps/0")?;
    let mean = g.get("setup_mean_ns")?.as_f64()?;
    let lo = g.get("setup_min_ns")?.as_f64()?;
    let hi = g.get("setup_max_ns")?.as_f64()?;
    let n = g
        .get("samples")
        .and_then(|s| s.as_array())
        .map_or(0, |s| s.len());
    Some(("set-up delay".into(), mean, hi - lo, n as u64))
}

fn rate_figure(v: &Value) -> Option<MainFigure> {
    [
        ("throughput_bps", "throughput bit/s"),
        ("transactions_per_s", "transactions/s"),
    ]
    .into_iter()
    .find_map(|(k, name)| {
        let x = v.get(k)?.as_f64()?;
        Some((name.to_string(), x, 0.0, 1))
    })
}

/// The table's rows, the first run the baseline.
pub fn rows(runs: &[Stored]) -> Vec<Row> {
    let Some(first) = runs.first() else {
        return Vec::new();
    };
    let figures: Vec<Option<MainFigure>> = runs.iter().map(|r| main_figure(r.value)).collect();
    let base = figures[0].clone();
    let base_of = (first.subcommand, first.target);
    runs.iter()
        .zip(figures)
        .map(|(r, fig)| {
            let (name, med, spread, _) = fig.clone().unwrap_or(("-".into(), f64::NAN, f64::NAN, 0));
            let is_base = r.id == first.id;
            let other = not_comparable(base_of, (r.subcommand, r.target));
            let (delta, verdict) = match (&base, &fig) {
                (_, None) => (None, no_figure(r.subcommand)),
                _ if !is_base && other.is_some() => (None, other.unwrap_or_default()),
                (Some((bn, bm, bs, _)), Some(_)) if bn == &name && !is_base => {
                    let d = med - bm;
                    (Some(d), change_verdict(d, spread.max(*bs)).to_string())
                }
                (Some(_), Some(_)) if is_base => (None, "baseline".into()),
                _ => (None, "not comparable (different figures)".into()),
            };
            Row {
                id: r.id,
                subcommand: r.subcommand.into(),
                target: r.target.into(),
                figure: name,
                median: med,
                spread,
                delta,
                verdict,
            }
        })
        .collect()
}

/// A change of the median counts when it exceeds both runs' own spread.
fn change_verdict(d: f64, spread: f64) -> &'static str {
    if spread == 0.0 {
        // One value per run (throughput, transactions/s): no spread to
        // judge a change by.
        "no spread known (one value per run): repeat the runs to judge"
    } else if d.abs() > spread {
        "changed beyond the runs' spread"
    } else {
        "within the runs' spread"
    }
}

/// The rows as `--json` gives them.
pub fn rows_json(rows: &[Row]) -> Value {
    rows.iter()
        .map(|r| {
            serde_json::json!({"run": r.id, "subcommand": r.subcommand, "target": r.target, "figure": r.figure, "median": r.median, "spread": r.spread, "delta_median": r.delta, "verdict": r.verdict})
        })
        .collect()
}

/// The rows as a table.
pub fn write_table(rows: &[Row], out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "{:>6}  {:<12} {:<24} {:<18} {:>14} {:>14} {:>12}  verdict",
        "run", "command", "target", "figure", "median", "spread", "Δ median"
    )?;
    for r in rows {
        let unit = |x: f64| {
            if x.is_nan() {
                "-".into()
            } else {
                figure_text(&r.figure, x)
            }
        };
        writeln!(
            out,
            "{:>6}  {:<12} {:<24} {:<18} {:>14} {:>14} {:>12}  {}",
            r.id,
            r.subcommand,
            r.target,
            r.figure,
            unit(r.median),
            unit(r.spread),
            r.delta.map(unit).unwrap_or_else(|| "-".into()),
            r.verdict
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rtt(median: f64, min: f64, p90: f64) -> Value {
        json!({"overall": {"network_rtt": {"median_ns": median, "min_ns": min, "p90_ns": p90, "count": 100}}})
    }

    #[test]
    fn the_first_run_is_the_baseline_and_a_change_is_judged_by_the_spread() {
        let (a, b, c) = (
            rtt(1000.0, 900.0, 1100.0),
            rtt(1100.0, 1000.0, 1200.0),
            rtt(2000.0, 1900.0, 2100.0),
        );
        let stored = |id, value| Stored {
            id,
            subcommand: "rtt",
            target: "h",
            value,
        };
        let rows = rows(&[stored(1, &a), stored(2, &b), stored(3, &c)]);
        let verdicts: Vec<&str> = rows.iter().map(|r| r.verdict.as_str()).collect();
        assert_eq!(
            verdicts,
            [
                "baseline",
                "within the runs' spread",
                "changed beyond the runs' spread"
            ]
        );
        assert_eq!((rows[1].delta, rows[2].delta), (Some(100.0), Some(1000.0)));
        assert_eq!(rows[0].figure, "network RTT");
    }

    #[test]
    fn a_distribution_without_a_median_is_no_figure_and_rates_have_no_spread() {
        assert_eq!(
            main_figure(&json!({"overall": {"network_rtt": {"count": 3}}})),
            None
        );
        let tp = json!({"throughput_bps": 1e9});
        assert_eq!(
            main_figure(&tp),
            Some(("throughput bit/s".into(), 1e9, 0.0, 1))
        );
        let stored = |id, value| Stored {
            id,
            subcommand: "tcp",
            target: "h",
            value,
        };
        let rows = rows(&[stored(1, &tp), stored(2, &tp)]);
        assert!(rows[1].verdict.starts_with("no spread known"));
    }
}
