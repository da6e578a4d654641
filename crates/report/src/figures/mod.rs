//! The figures for a result, chosen by its `format`: one module per kind of
//! run, the plots they share in `plots` and `latency`.

pub mod latency;
pub mod oneway;
pub mod plots;
pub mod rfc2544;
pub mod throughput;
pub mod under_load;
pub mod vs_load;

use crate::distribution::Bin;
use crate::figure::{array, bins, cell, push, s, Figure};
use crate::series::LatencySeries;
use latency::{cdf_extent, cdf_plot, page_unit, percentile_plot, percentile_unit, Dist};
use plots::{histogram_plot, time_series_plot};
use serde_json::Value;

/// The figures for a result, by its `format`; `series` adds the time series
/// from a `--frames` CSV.
pub fn figures(v: &Value, series: Option<&LatencySeries>) -> Vec<Figure> {
    let mut out = Vec::new();
    let format = s(v, "/format").unwrap_or("");
    match format {
        "misura.oneway" | "misura.calibration-run" => oneway::oneway_figures(v, &mut out),
        "misura.rtt" => oneway::rtt_figures(v, &mut out),
        "misura.clock-interference" => interference(v, &mut out),
        "misura.clock-timer" => timer(v, &mut out),
        "misura.sweep" => throughput::sweep_figures(v, &mut out),
        "misura.exchange" => exchange(v, &mut out),
        "misura.rr" => rr(v, &mut out),
        "misura.tcp" | "misura.udp" => throughput::intervals_figure(v, &mut out),
        "misura.rfc2544" => rfc2544_latency(v, &mut out),
        "misura.load" => load(v, &mut out),
        _ => {}
    }
    if let Some(series) = series {
        push(&mut out, time_series_plot("time-series", series), "Latency over the run from the per-frame CSV: the moving median and 99th percentile of consecutive windows.");
    }
    out
}

fn interference(v: &Value, out: &mut Vec<Figure>) {
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
            out,
            histogram_plot(&format!("interference-{i}"), &format!("Clock read steps, {label}"), "step between reads", &[(&label, b.clone())], true, Some(unit)),
            &format!("Time between consecutive clock reads, {label} (Cena, Cibrario Bertolotti and Valenzano, Fig. 2): the spike is the read cost, the long tail is interference (interrupts, preemption, the hypervisor)."),
        );
        cdf.push((label, b));
    }
    if cdf.len() > 1 {
        let sets: Vec<(&str, Vec<Bin>)> =
            cdf.iter().map(|(l, b)| (l.as_str(), b.clone())).collect();
        push(
            out,
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

fn timer(v: &Value, out: &mut Vec<Figure>) {
    push(
        out,
        histogram_plot(
            "timer",
            "Timer wake-up latency",
            "wake-up latency",
            &[("wake-ups", bins(v.get("histogram")))],
            true,
            None,
        ),
        "How late the thread woke after each timer expiry (Cena, Cibrario Bertolotti and Valenzano, Fig. 2).",
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
        out,
        percentile_plot("percentiles", "Timer wake-up latency percentile distribution", "wake-up latency", &refs, percentile_unit(&refs)),
        "Wake-up latency against percentile (HdrHistogram style); the rings mark the median, p90, p99 and p99.9 the text output quotes.",
    );
}

fn exchange(v: &Value, out: &mut Vec<Figure>) {
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
    latency::set_figures(
        out,
        "Exchange",
        "time from the trigger's send()",
        &dists,
        "Each phase is timed from the trigger's send() call (Ichiki, 2022)",
    );
}

fn rr(v: &Value, out: &mut Vec<Figure>) {
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
    latency::set_figures(out, "Transaction latency", "request written → response read", &dists, "Each transaction's time from writing the request to reading the response, by the user clock");
}

fn rfc2544_latency(v: &Value, out: &mut Vec<Figure>) {
    rfc2544::rfc2544_figures(v, out);
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
    quantile_percentiles(out, &dists, "Latency at the throughput rate", "latency", "The latency trial's stored quantiles per frame size against percentile (RFC 2544 §26.2; the result keeps no histogram, so nothing is drawn between the points).");
}

fn load(v: &Value, out: &mut Vec<Figure>) {
    under_load::under_load_figures(v, out);
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
    quantile_percentiles(out, &dists, "RTT per phase", "round-trip time", "Each phase's RTT against percentile, one line per phase (results from before the full histograms were stored show their quantiles as points only): how far the loaded phase's tail moves.");
    let refs: Vec<&Dist> = dists.iter().filter(|d| !d.bins.is_empty()).collect();
    push(
        out,
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
