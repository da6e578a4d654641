//! Reading the results store back: `misura history`, `misura show`,
//! `misura compare`.

pub mod args;

use crate::shared::exit::Failure;
use crate::shared::store::{open_for_reading, store_failure};
use anyhow::Result;
pub use args::{CompareArgs, HistoryArgs, ShowArgs};
use misura_store::Filter;
use serde_json::Value;
use std::io::Write;

/// `misura history`.
pub fn history(a: &HistoryArgs) -> Result<i32> {
    let s = open_for_reading()?;
    let runs = s
        .list(&Filter {
            subcommand: a.subcommand.clone(),
            target: a.target.clone(),
            since: a.since.clone(),
            until: a.until.clone(),
            limit: Some(a.limit),
        })
        .map_err(store_failure)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if a.json {
        let rows: Vec<Value> = runs
            .iter()
            .map(|r| {
                serde_json::json!({
                    "id": r.id, "started_at": r.facts.started_at, "subcommand": r.facts.subcommand,
                    "target": r.facts.target, "sizes": r.facts.sizes, "timestamp_source": r.facts.timestamp_source,
                    "host": r.facts.host, "complete": r.facts.complete, "headline": r.headline,
                })
            })
            .collect();
        writeln!(out, "{}", serde_json::to_string_pretty(&rows)?)?;
    } else {
        // As wide as the longest command listed (clock-interference, 18,
        // overflowed a fixed 12).
        let cw = runs
            .iter()
            .map(|r| r.facts.subcommand.chars().count())
            .chain([7])
            .max()
            .unwrap_or(7);
        writeln!(
            out,
            "{:>6}  {:<27} {:<cw$} {:<24} {:<10} {}",
            "run", "started (UTC)", "command", "target", "host", "headline"
        )?;
        for r in &runs {
            writeln!(
                out,
                "{:>6}  {:<27} {:<cw$} {:<24} {:<10} {}{}",
                r.id,
                r.facts.started_at,
                r.facts.subcommand,
                column(&r.facts.target, 24),
                column(&r.facts.host, 10),
                r.headline.as_deref().unwrap_or("-"),
                if r.facts.complete { "" } else { "  [partial]" }
            )?;
        }
        if runs.is_empty() {
            writeln!(out, "(no runs match in {})", s.path().display())?;
        }
    }
    Ok(crate::shared::exit::OK)
}

/// `text` cut to `width` characters (its end replaced by "…") so that a
/// long value (a calibration's ports and namespace) keeps the columns;
/// `--json` has it whole.
fn column(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut t: String = text.chars().take(width - 1).collect();
    t.push('…');
    t
}

/// Render a stored result as it was printed then.
fn render(v: &Value, out: &mut dyn Write) -> Result<()> {
    let format = v.get("format").and_then(|f| f.as_str()).unwrap_or("");
    let newer = v
        .get("format_version")
        .and_then(|f| f.as_u64())
        .unwrap_or(0)
        > misura_report::FORMAT_VERSION as u64;
    if newer {
        return Err(Failure::Profile(format!(
            "this result was written by a newer misura (format {format} version {}): upgrade to show it",
            v["format_version"]
        ))
        .into());
    }
    use misura_report::{
        clock, exchange, host, reflect, rfc2544, rtt, serve, text, throughput as tp, tsc,
        under_load, y1564,
    };
    match format {
        "misura.oneway" | "misura.calibration-run" => as_text(v, format, text::write_oneway, out),
        "misura.rtt" => as_text(v, format, rtt::write_text, out),
        "misura.exchange" => as_text(v, format, exchange::write_text, out),
        "misura.exchange-responder" => as_text(v, format, exchange::write_responder_text, out),
        "misura.tcp" => as_text(v, format, tp::write_tcp_text, out),
        "misura.udp" => as_text(v, format, tp::write_udp_text, out),
        "misura.rr" => as_text(v, format, tp::write_rr_text, out),
        "misura.setup" => as_text(v, format, tp::write_setup_text, out),
        "misura.sweep" => as_text(v, format, tp::write_sweep_text, out),
        "misura.serve" => as_text(v, format, serve::write_text, out),
        "misura.clock-sources" => as_text(v, format, clock::write_sources_text, out),
        "misura.clock-interference" => as_text(v, format, clock::write_interference_text, out),
        "misura.clock-timer" => as_text(v, format, clock::write_timer_text, out),
        "misura.clock-tsc" => as_text(v, format, tsc::write_text, out),
        "misura.host-check" => as_text(v, format, host::write_check_text, out),
        "misura.host-tune" => as_text(v, format, host::write_tune_text, out),
        "misura.reflect" => as_text(v, format, reflect::write_summary, out),
        "misura.rfc2544" => as_text(v, format, rfc2544::write_text, out),
        "misura.y1564" => as_text(v, format, y1564::write_text, out),
        "misura.load" => as_text(v, format, under_load::write_text, out),
        _ => {
            // A format without a text form here is shown as its JSON.
            writeln!(out, "{}", serde_json::to_string_pretty(v)?)?;
            Ok(())
        }
    }
}

/// Read a stored result back into its type and print it with `text`.
fn as_text<T: serde::de::DeserializeOwned>(
    v: &Value,
    format: &str,
    text: fn(&T, &mut dyn Write) -> std::io::Result<()>,
    out: &mut dyn Write,
) -> Result<()> {
    let r: T = serde_json::from_value(v.clone())
        .map_err(|e| Failure::Profile(format!("stored {format} result does not read back: {e}")))?;
    text(&r, out)?;
    Ok(())
}

/// `misura show RUN`.
pub fn show(a: &ShowArgs) -> Result<i32> {
    let s = open_for_reading()?;
    let (_, v) = s.get(a.run).map_err(store_failure)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if a.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
    } else {
        render(&v, &mut out)?;
    }
    Ok(crate::shared::exit::OK)
}

/// A run's main figure for comparison: (name, median, spread as p90 − p10 or
/// the interquartile-like width available, count).
fn main_figure(v: &Value) -> Option<(String, f64, f64, u64)> {
    let candidates: [(&str, &str); 6] = [
        ("/overall/network_rtt", "network RTT"),
        ("/overall/kernel_rtt", "kernel RTT"),
        ("/overall/msl", "SUT latency Msl"),
        ("/overall/mul", "Mul"),
        ("/latency", "timer wake-up latency"),
        ("/runs/0/steps", "clock read step"),
    ];
    for (p, name) in candidates {
        if let Some(s) = v.pointer(p).filter(|s| !s.is_null()) {
            let med = s.get("median_ns")?.as_f64()?;
            let p90 = s.get("p90_ns").and_then(|x| x.as_f64()).unwrap_or(med);
            let min = s.get("min_ns").and_then(|x| x.as_f64()).unwrap_or(med);
            let count = s.get("count").and_then(|x| x.as_u64()).unwrap_or(0);
            // Spread: the distance from the minimum to the 90th percentile,
            // the range most probes fall in.
            return Some((name.to_string(), med, (p90 - min).max(0.0), count));
        }
    }
    // `setup`: the first gap's mean set-up delay, its spread min … max.
    if let Some(g) = v.pointer("/gaps/0") {
        let mean = g.get("setup_mean_ns").and_then(|x| x.as_f64());
        let lo = g.get("setup_min_ns").and_then(|x| x.as_f64());
        let hi = g.get("setup_max_ns").and_then(|x| x.as_f64());
        if let (Some(m), Some(lo), Some(hi)) = (mean, lo, hi) {
            let n = g
                .get("samples")
                .and_then(|s| s.as_array())
                .map_or(0, |s| s.len());
            return Some(("set-up delay".into(), m, hi - lo, n as u64));
        }
    }
    for (k, name) in [
        ("throughput_bps", "throughput bit/s"),
        ("transactions_per_s", "transactions/s"),
    ] {
        if let Some(x) = v.get(k).and_then(|x| x.as_f64()) {
            return Some((name.to_string(), x, 0.0, 1));
        }
    }
    None
}

/// `misura compare RUN RUN…`.
pub fn compare(a: &CompareArgs) -> Result<i32> {
    if a.runs.len() < 2 {
        return Err(Failure::Usage(
            "compare needs at least two run ids (see misura history)".into(),
        )
        .into());
    }
    let s = open_for_reading()?;
    let mut rows = Vec::new();
    let mut values = Vec::new();
    for &id in &a.runs {
        let (f, v) = s.get(id).map_err(store_failure)?;
        let fig = main_figure(&v).or_else(|| misura_report::compare::load_figure(&v));
        rows.push((id, f, fig));
        values.push((id, v));
    }
    if let Some(path) = &a.html {
        let runs: Vec<misura_report::compare::Run> = values
            .iter()
            .map(|(id, v)| misura_report::compare::Run { id: *id, value: v })
            .collect();
        let mut page = Vec::new();
        misura_report::compare::write_compare_html(&runs, &mut page)?;
        if path.as_os_str() == "-" {
            std::io::stdout().lock().write_all(&page)?;
            return Ok(crate::shared::exit::OK);
        }
        crate::shared::outfile::replace(path, |w| w.write_all(&page))
            .map_err(|e| Failure::Output(format!("cannot write {}: {e}", path.display())))?;
        eprintln!("wrote {} ({} bytes)", path.display(), page.len());
    }
    let base = rows[0].2.clone();
    let mut json_rows = Vec::new();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if !a.json {
        writeln!(
            out,
            "{:>6}  {:<12} {:<24} {:<18} {:>14} {:>14} {:>12}  verdict",
            "run", "command", "target", "figure", "median", "spread", "Δ median"
        )?;
    }
    let base_of = (rows[0].1.subcommand.as_str(), rows[0].1.target.as_str());
    for (id, f, fig) in &rows {
        let (name, med, spread, _) = fig.clone().unwrap_or(("-".into(), f64::NAN, f64::NAN, 0));
        let other = misura_report::compare::not_comparable(base_of, (&f.subcommand, &f.target));
        let (delta, verdict) = match (&base, fig) {
            (_, None) => (None, misura_report::compare::no_figure(&f.subcommand)),
            _ if *id != rows[0].0 && other.is_some() => (None, other.unwrap_or_default()),
            (Some((bn, bm, bs, _)), Some(_)) if bn == &name && *id != rows[0].0 => {
                let d = med - bm;
                // A change counts when it exceeds both runs' own spread.
                let v = if spread.max(*bs) == 0.0 {
                    // One value per run (throughput, transactions/s): no
                    // spread to judge a change by.
                    "no spread known (one value per run): repeat the runs to judge"
                } else if d.abs() > spread.max(*bs) {
                    "changed beyond the runs' spread"
                } else {
                    "within the runs' spread"
                };
                (Some(d), v.to_string())
            }
            (Some(_), Some(_)) if *id == rows[0].0 => (None, "baseline".into()),
            _ => (None, "not comparable (different figures)".into()),
        };
        let unit = |x: f64| {
            if x.is_nan() {
                "-".into()
            } else {
                misura_report::compare::figure_text(&name, x)
            }
        };
        if a.json {
            json_rows.push(serde_json::json!({"run": id, "subcommand": f.subcommand, "target": f.target, "figure": name, "median": med, "spread": spread, "delta_median": delta, "verdict": verdict}));
        } else {
            writeln!(
                out,
                "{:>6}  {:<12} {:<24} {:<18} {:>14} {:>14} {:>12}  {}",
                id,
                f.subcommand,
                f.target,
                name,
                unit(med),
                unit(spread),
                delta.map(unit).unwrap_or_else(|| "-".into()),
                verdict
            )?;
        }
    }
    if a.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&json_rows)?)?;
    }
    Ok(crate::shared::exit::OK)
}
