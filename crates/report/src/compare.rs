//! `misura compare RUN RUN… --html`: the runs' latency distributions on the
//! same axes (percentile distribution and CDF) and, against the first run,
//! the change of the median and of the 99th percentile with whether it is
//! beyond the runs' spread.
//!
//! Spread, stated on the page: each run's distribution-free 95 % confidence
//! interval of the quantile (order statistics,
//! [`crate::distribution::quantile_ci95`]); a change is "beyond the
//! spread" when the two runs' intervals do not overlap. The interval
//! assumes independent samples, which consecutive probes only approximately
//! are, so it is a guide; each run's interquartile range is shown beside it
//! for how much single probes vary.

use crate::distribution::{normalised, quantile, quantile_ci95, Bin};
use crate::figure::s;
use crate::figures::latency::{cdf_plot, percentile_plot, percentile_unit, Dist};
use crate::svg::esc;
use serde_json::Value;
use std::io::{self, Write};

/// The figure a run is compared by: its name and the run's distribution of
/// it (every size pooled), or `None` for a kind with no stored distribution.
pub fn run_distribution(v: &Value, label: &str) -> Option<(String, Dist)> {
    let arr = |k: &str| -> Vec<&Value> {
        v.get(k)
            .and_then(Value::as_array)
            .map(|a| a.iter().collect())
            .unwrap_or_default()
    };
    let at = |k: &str| v.pointer(k).filter(|x| !x.is_null());
    // (figure, its groups, full key, display key, summary quoted)
    type Candidate<'v> = (
        &'static str,
        Vec<&'v Value>,
        &'static str,
        &'static str,
        Option<&'v Value>,
    );
    let candidates: Vec<Candidate> = match s(v, "/format").unwrap_or("") {
        "misura.rtt" => vec![
            (
                "network RTT",
                arr("per_size"),
                "hdr_network_rtt",
                "histogram_network_rtt",
                at("/overall/network_rtt"),
            ),
            (
                "user RTT",
                arr("per_size"),
                "hdr_user_rtt",
                "histogram_user_rtt",
                at("/overall/user_rtt"),
            ),
        ],
        "misura.oneway" | "misura.calibration-run" => {
            vec![(
                "Mul",
                arr("per_size"),
                "hdr_mul",
                "histogram_mul",
                at("/overall/mul"),
            )]
        }
        "misura.rr" => {
            let clients = arr("clients");
            // The quoted percentiles are one client's; several are pooled.
            let summary = (clients.len() == 1)
                .then(|| clients[0].get("latency"))
                .flatten();
            vec![("transaction latency", clients, "latency_hdr", "", summary)]
        }
        "misura.exchange" => vec![(
            "exchange t3",
            at("/t3").into_iter().collect(),
            "hdr",
            "",
            at("/t3/summary"),
        )],
        "misura.clock-timer" => vec![(
            "timer wake-up latency",
            vec![v],
            "hdr",
            "histogram",
            at("/latency"),
        )],
        "misura.load" => {
            let loaded: Vec<&Value> = arr("phases")
                .into_iter()
                .filter(|p| s(p, "/name") == Some("loaded"))
                .collect();
            let summary = loaded.first().and_then(|p| p.get("network_rtt"));
            vec![(
                "loaded-phase network RTT",
                loaded,
                "hdr_network_rtt",
                "",
                summary,
            )]
        }
        _ => return None,
    };
    for (name, groups, hdr, display, summary) in candidates {
        let mut bins: Vec<Bin> = Vec::new();
        let mut full = true;
        for g in groups {
            if let Some(d) = Dist::of(name, g, hdr, display, None, 0.0) {
                full &= d.full;
                bins.extend(d.bins);
            }
        }
        if bins.is_empty() {
            continue;
        }
        return Some((
            name.to_string(),
            Dist {
                label: label.to_string(),
                bins: normalised(&bins),
                full,
                quoted: crate::figures::latency::quoted(summary, 0.0),
            },
        ));
    }
    None
}

/// One quantile of a run against the baseline's.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    pub value: f64,
    pub ci: (f64, f64),
    /// `value − baseline value`.
    pub delta: f64,
    /// The two 95 % intervals do not overlap.
    pub beyond_spread: bool,
}

/// Quantile `q` of `run` against `base`.
pub fn change(base: &[Bin], run: &[Bin], q: f64) -> Option<Change> {
    let (b, r) = (quantile(base, q)?, quantile(run, q)?);
    let (bc, rc) = (quantile_ci95(base, q)?, quantile_ci95(run, q)?);
    Some(Change {
        value: r,
        ci: rc,
        delta: r - b,
        beyond_spread: rc.0 > bc.1 || rc.1 < bc.0,
    })
}

/// A run on the page: its id and stored result.
pub struct Run<'a> {
    pub id: i64,
    pub value: &'a Value,
}

/// The runs' distributions on common axes; runs whose figure differs from
/// the first run's are listed and left out.
pub fn figures(runs: &[Run]) -> (Option<String>, Vec<Dist>, Vec<i64>) {
    let mut name: Option<String> = None;
    let mut dists = Vec::new();
    let mut left_out = Vec::new();
    for r in runs {
        let label = format!(
            "run {} ({})",
            r.id,
            s(r.value, "/started_at")
                .unwrap_or("?")
                .get(..19)
                .unwrap_or("?")
        );
        match run_distribution(r.value, &label) {
            Some((n, d)) if name.as_ref().is_none_or(|x| *x == n) => {
                name = Some(n);
                dists.push(d);
            }
            _ => left_out.push(r.id),
        }
    }
    (name, dists, left_out)
}

/// Where a run's times came from, in a few words.
fn timestamps(v: &Value) -> String {
    let mut w: Vec<String> = Vec::new();
    if let Some(t) = s(v, "/timestamps/timescale") {
        w.push(t.to_string());
    }
    for (k, name) in [
        ("/timestamps/client_tx", "TX"),
        ("/timestamps/client_rx", "RX"),
        ("/timestamps/reflector_rx", "reflector RX"),
        ("/timestamps/reflector_tx", "reflector TX"),
    ] {
        if let Some(x) = s(v, k) {
            w.push(format!("{name} {x}"));
        }
    }
    if let Some(a) = v
        .pointer("/timestamps/sources_used")
        .and_then(Value::as_array)
    {
        let used: Vec<&str> = a.iter().filter_map(Value::as_str).collect();
        w.push(format!("sources {}", used.join(", ")));
    }
    if v.pointer("/host/virtualized").and_then(Value::as_bool) == Some(true) {
        w.push("virtual machine".into());
    }
    if w.is_empty() {
        "—".into()
    } else {
        w.join("; ")
    }
}

/// The command line a run was started with, program path left out (what
/// differs between runs is usually there).
fn command_line(v: &Value) -> String {
    v.get("command")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .skip(1)
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|| "—".into())
}

/// Write the comparison page.
pub fn write_compare_html(runs: &[Run], out: &mut dyn Write) -> io::Result<()> {
    let (name, dists, left_out) = figures(runs);
    let title = format!(
        "misura compare — runs {}",
        runs.iter()
            .map(|r| r.id.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    writeln!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\"><title>{}</title><style>{}</style></head><body>\n<h1>{}</h1>",
        esc(&title),
        crate::html::STYLE,
        esc(&title)
    )?;
    writeln!(out, "<h2>Runs</h2>\n<table><tr><th>run</th><th>command</th><th>started (UTC)</th><th>target</th><th>host</th><th>complete</th><th>timestamps</th><th>command line</th></tr>")?;
    for r in runs {
        let v = r.value;
        let target = s(v, "/config/target")
            .or(s(v, "/config/interface"))
            .or(s(v, "/config/tx"))
            .unwrap_or("—");
        writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code></td></tr>",
            r.id,
            esc(s(v, "/format").unwrap_or("?").trim_start_matches("misura.")),
            esc(s(v, "/started_at").unwrap_or("?")),
            esc(target),
            esc(s(v, "/host/hostname").unwrap_or("?")),
            match v.get("complete").and_then(Value::as_bool) {
                Some(false) => "no (partial)",
                _ => "yes",
            },
            esc(&timestamps(v)),
            esc(&command_line(v))
        )?;
    }
    writeln!(out, "</table>")?;
    if !left_out.is_empty() {
        writeln!(
            out,
            "<p>Left out (no stored distribution of the {} the first run is compared by): runs {}.</p>",
            esc(name.as_deref().unwrap_or("figure")),
            left_out.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", ")
        )?;
    }
    let Some(name) = name.filter(|_| !dists.is_empty()) else {
        writeln!(out, "<p>None of these runs stores a latency distribution (rtt, oneway, calibrate, rr, exchange, load and clock timer runs do, since misura stores full histograms): nothing to draw.</p></body></html>")?;
        return Ok(());
    };
    writeln!(out, "<h2>{} against the first run</h2>", esc(&name))?;
    writeln!(out, "<p>Every size of a run pooled. Median and p99 from the stored histograms (the full HDR histogram, ≤ 0.1 % wide buckets, where the run has it), each with its distribution-free 95 % confidence interval from order statistics (ranks n·q ∓ 1.96·√(n·q·(1 − q)), Conover 1999). <b>Spread</b> here is that interval: a change is beyond the runs' spread when the two runs' intervals do not overlap. The interval assumes independent probes, which consecutive probes only approximately are, so read it as a guide. The IQR (p75 − p25) shows how much single probes of each run vary. (The table <code>misura compare</code> prints without --html judges by a looser spread, each run's minimum to p90, so it can call within the spread a change this page calls beyond it.)</p>")?;
    writeln!(out, "<table class=\"num\"><tr><th>run</th><th>values</th><th>median [95 % CI]</th><th>Δ median</th><th>median change</th><th>p99 [95 % CI]</th><th>Δ p99</th><th>p99 change</th><th>IQR</th></tr>")?;
    let base = &dists[0].bins;
    // One unit for the whole page, table and plots: the one the largest
    // value drawn needs.
    let page = percentile_unit(&dists.iter().collect::<Vec<_>>());
    let (div, unit) = page;
    let w = |ns: f64| format!("{} {unit}", crate::svg::num(ns / div));
    for (i, d) in dists.iter().enumerate() {
        let cell = |c: Option<Change>, first: bool| match c {
            Some(c) => (
                format!("{} [{} … {}]", w(c.value), w(c.ci.0), w(c.ci.1)),
                if first {
                    "—".to_string()
                } else {
                    format!("{}{}", if c.delta > 0.0 { "+" } else { "" }, w(c.delta))
                },
                if first {
                    "baseline".to_string()
                } else if c.beyond_spread {
                    "beyond the spread".to_string()
                } else {
                    "within the spread".to_string()
                },
            ),
            None => ("—".into(), "—".into(), "too few values".into()),
        };
        let m = cell(change(base, &d.bins, 0.5), i == 0);
        let p = cell(change(base, &d.bins, 0.99), i == 0);
        let iqr = quantile(&d.bins, 0.75)
            .zip(quantile(&d.bins, 0.25))
            .map(|(a, b)| a - b);
        writeln!(
            out,
            "<tr><th>{}</th><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&d.label),
            d.count(),
            esc(&m.0),
            esc(&m.1),
            esc(&m.2),
            esc(&p.0),
            esc(&p.1),
            esc(&p.2),
            iqr.map(w).unwrap_or_else(|| "—".into())
        )?;
    }
    writeln!(out, "</table>")?;
    let refs: Vec<&Dist> = dists.iter().collect();
    let mut figs = Vec::new();
    crate::figure::push(
        &mut figs,
        percentile_plot(
            "compare-percentiles",
            &format!("{name} percentile distribution, runs compared"),
            &name,
            &refs,
            page,
        ),
        "Each run's distribution against percentile on one axis (1/(1 − p): 90 %, 99 %, 99.9 % … equally spaced), each line up to its own resolution 1 − 1/n; rings mark each run's median, p90, p99 and p99.9 as its text output quotes them (named on the first run's line).",
    );
    crate::figure::push(
        &mut figs,
        cdf_plot(
            "compare-cdf",
            &format!("{name} CDF, runs compared"),
            &name,
            &refs,
            page,
        ),
        "Each run's cumulative distribution from every recorded bucket, on one axis.",
    );
    crate::html::write_figures(&figs, out)?;
    writeln!(out, "</body></html>")
}

/// Why a run cannot be compared figure by figure with the baseline run:
/// another kind of measurement (tcp against udp), or another target (an
/// RTT to one host says nothing about one to another). `None` when it can.
pub fn not_comparable(
    (base_kind, base_target): (&str, &str),
    (kind, target): (&str, &str),
) -> Option<String> {
    if kind != base_kind {
        Some(format!(
            "not comparable: another kind of run ({kind} against the baseline's {base_kind})"
        ))
    } else if target != base_target {
        Some(format!(
            "not comparable: another target ({target} against the baseline's {base_target})"
        ))
    } else {
        None
    }
}

/// What to say of a run that has no figure `compare` judges.
pub fn no_figure(kind: &str) -> String {
    match kind {
        "rfc2544" | "y1564" => {
            format!("{kind} runs cannot be compared here yet: read each with misura show RUN")
        }
        _ => format!("no figure to compare in a {kind} run"),
    }
}

/// A `misura load` run's figure: the loaded phase's network RTT (else its
/// user RTT) median, spread from its minimum to its 90th percentile, and
/// the probes' count.
pub fn load_figure(v: &Value) -> Option<(String, f64, f64, u64)> {
    let loaded = v
        .get("phases")?
        .as_array()?
        .iter()
        .find(|p| p.get("name").and_then(Value::as_str) == Some("loaded"))?;
    for (k, name) in [
        ("network_rtt", "loaded network RTT"),
        ("user_rtt", "loaded user RTT"),
    ] {
        let Some(p) = loaded.get(k).filter(|p| !p.is_null()) else {
            continue;
        };
        let f = |k: &str| p.get(k).and_then(Value::as_f64);
        let Some(med) = f("median_ns") else { continue };
        let spread = f("p90_ns").unwrap_or(med) - f("min_ns").unwrap_or(med);
        let count = p.get("count").and_then(Value::as_u64).unwrap_or(0);
        return Some((name.into(), med, spread.max(0.0), count));
    }
    None
}

/// A figure's value as people read it: a time (ns) in the unit that suits
/// it, a rate in bit/s scaled, other counts as they are.
pub fn figure_text(name: &str, x: f64) -> String {
    let time = ["RTT", "Msl", "latency", "step", "delay"]
        .iter()
        .any(|k| name.contains(k))
        || name == "Mul";
    if time {
        crate::figure::human_ns(x)
    } else if name.contains("bit/s") {
        crate::figure::human_bps(x)
    } else {
        format!("{x:.0}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exact(values: impl Iterator<Item = i64>) -> Vec<Bin> {
        values.map(|v| (v as f64, v as f64 + 1.0, 1.0)).collect()
    }

    #[test]
    fn a_run_is_compared_by_its_sizes_pooled_from_the_full_histograms() {
        let b =
            |l: i64, u: i64, c: u64| serde_json::json!({"lower_ns": l, "upper_ns": u, "count": c});
        let v = serde_json::json!({
            "format": "misura.rtt",
            "overall": {"network_rtt": {"count": 6, "median_ns": 1000, "p90_ns": 2000}},
            "per_size": [
                {"hdr_network_rtt": [b(1000, 1001, 2), b(5000, 5005, 1)], "histogram_network_rtt": [b(1000, 1259, 2)]},
                {"hdr_network_rtt": [b(1000, 1001, 1), b(2000, 2001, 2)], "histogram_network_rtt": []}
            ]
        });
        let (name, d) = run_distribution(&v, "run 1").unwrap();
        assert_eq!(name, "network RTT");
        assert!(d.full);
        assert_eq!(
            d.bins,
            vec![
                (1000.0, 1001.0, 3.0),
                (2000.0, 2001.0, 2.0),
                (5000.0, 5005.0, 1.0)
            ]
        );
        // p90 is beyond 1 − 1/6 and is not marked.
        assert_eq!(d.quoted, vec![(0.5, 1000.0)]);
        // A kind without distributions is not compared.
        assert!(run_distribution(&serde_json::json!({"format": "misura.tcp"}), "x").is_none());
    }

    #[test]
    fn a_shift_beyond_the_intervals_counts_and_one_within_does_not() {
        let base = exact(1000..2000);
        let far = exact(1500..2500);
        let near = exact(1010..2010);
        let c = change(&base, &far, 0.5).unwrap();
        assert_eq!(c.delta, 500.0);
        assert!(c.beyond_spread);
        let c = change(&base, &near, 0.5).unwrap();
        assert_eq!(c.delta, 10.0);
        assert!(!c.beyond_spread, "{c:?}");
    }

    #[test]
    fn runs_of_another_kind_or_target_are_not_compared() {
        assert_eq!(not_comparable(("rtt", "a"), ("rtt", "a")), None);
        let t = not_comparable(("rtt", "198.18.0.2"), ("rtt", "10.0.0.1")).unwrap();
        assert!(t.contains("another target (10.0.0.1"), "{t}");
        let k = not_comparable(("tcp", "h"), ("udp", "h")).unwrap();
        assert!(k.contains("udp against the baseline's tcp"), "{k}");
        assert!(no_figure("rfc2544").contains("cannot be compared here yet"));
    }

    #[test]
    fn a_load_run_is_compared_by_its_loaded_phase() {
        let v = serde_json::json!({"phases": [
            {"name": "idle", "network_rtt": {"count": 5, "min_ns": 1.0, "median_ns": 2.0, "p90_ns": 3.0}},
            {"name": "loaded", "network_rtt": null, "user_rtt": {"count": 9, "min_ns": 1e6, "median_ns": 2e8, "p90_ns": 2.5e8}}
        ]});
        let (name, med, spread, n) = load_figure(&v).unwrap();
        assert_eq!(
            (name.as_str(), med, spread, n),
            ("loaded user RTT", 2e8, 2.49e8, 9)
        );
        assert_eq!(figure_text(&name, med), "200.00 ms");
        assert_eq!(figure_text("network RTT", 15_800.0), "15.80 µs");
        assert_eq!(
            figure_text("throughput bit/s", 19_131_409.0),
            crate::figure::human_bps(19_131_409.0)
        );
    }
}
