//! A result as one self-contained HTML page with SVG plots chosen by the kind
//! of run (`misura report`).
//!
//! The page reads the result as JSON rather than as its typed model: it must
//! show every format misura writes (and a generic page for the ones it has no
//! plots for), and it reads only the fields it draws. Nothing on the page
//! refers to anything outside it: no scripts, fonts, style sheets or images.
//! The plots are chosen in `figures`.

pub use crate::figure::Figure;
use crate::figure::{cell, f, ns_words, s, size_label};
pub use crate::figures::figures;
use crate::series::LatencySeries;
use crate::svg::esc;
use crate::svg::num;
use serde_json::Value;
use std::io::{self, Write};

/// The headless Chromium flags `misura report --png` renders the page with
/// (no first-run, network, update or sync work, no scroll bars);
/// `crates/misura/tests/report.rs` loads the page with the same flags to see
/// that it asks for nothing from outside.
pub const CHROMIUM_FLAGS: &[&str] = &[
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
];

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
        if let Some(c) = sut.get("consistency").filter(|x| !x.is_null()) {
            let words = |src: Option<&str>| match src {
                Some("hardware") => "NIC hardware stamps",
                Some("kernel") => "kernel stamps",
                _ => "user windows",
            };
            w.push(format!(
                "Verdict: {}, resting on the {} (SUT latency α' {} ± {} ns); {}.",
                s(c, "/verdict").unwrap_or("?").replace('_', "-"),
                words(s(c, "/rests_on")),
                num(f(c, "/latency/value").unwrap_or(f64::NAN)),
                num(f(c, "/latency/ci95").unwrap_or(f64::NAN)),
                match s(c, "/agreement") {
                    Some("inconsistent") => "the estimates disagree (see the warnings)",
                    Some("consistent") => "the estimates agree within their 95 % intervals",
                    _ => "the only estimate",
                }
            ));
        }
        if let Some(n) = s(sut, "/note") {
            w.push(format!("SUT fit: {n}."));
        }
    }
    w
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

pub const STYLE: &str = "body{font-family:sans-serif;max-width:1180px;margin:1em auto;padding:0 1em;color:#222}\
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
pub fn write_figures(figs: &[Figure], out: &mut dyn Write) -> io::Result<()> {
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
