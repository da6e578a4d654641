//! The report page for each kind of result: one `<svg>` per expected plot,
//! and nothing that would reach outside the page.

use misura_report::html::{figures, write_html};
use misura_report::series::LatencySeries;
use serde_json::{json, Value};

fn fixture(name: &str) -> Value {
    let p = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap()
}

fn page(v: &Value, series: Option<&LatencySeries>) -> String {
    let mut out = Vec::new();
    write_html(v, series, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// The `data-plot` names of the page's plots, in order.
fn plots(html: &str) -> Vec<String> {
    html.match_indices("<svg ")
        .map(|(i, _)| {
            let rest = &html[i..];
            let a = rest.find("data-plot=\"").expect("every svg is named") + 11;
            rest[a..a + rest[a..].find('"').unwrap()].to_string()
        })
        .collect()
}

/// Self-contained: no scripts, no links, no remote or embedded resources.
fn assert_self_contained(html: &str) {
    let lower = html.to_lowercase();
    for bad in [
        "http://", "https://", "<script", "<link", "<img", "<iframe", "<object", "<embed",
        "url(http", "@import", "src=",
    ] {
        assert!(!lower.contains(bad), "the page contains {bad:?}");
    }
    // Any url() is an internal reference (the plots' clip paths).
    for (i, _) in lower.match_indices("url(") {
        assert!(
            lower[i + 4..].starts_with("#clip-"),
            "external url(): {}",
            &lower[i..i + 40]
        );
    }
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.trim_end().ends_with("</html>"));
}

/// A histogram and a percentile plot per size, the percentile plot across
/// sizes when there are several, and the CDF.
fn distribution_plots(n: usize) -> Vec<String> {
    let mut want: Vec<String> = (0..n)
        .flat_map(|i| [format!("histogram-{i}"), format!("percentiles-{i}")])
        .collect();
    if n > 1 {
        want.push("percentiles".into());
    }
    want.push("cdf".into());
    want
}

fn sizes(v: &Value) -> usize {
    v["per_size"].as_array().unwrap().len()
}

#[test]
fn oneway_with_a_calibration_has_histograms_cdf_and_the_sut_fits() {
    let v = fixture("oneway-sut.json");
    let html = page(&v, None);
    assert_self_contained(&html);
    let mut want = distribution_plots(sizes(&v));
    want.extend(["sut-fit-user", "sut-fit-kernel"].map(String::from));
    assert_eq!(plots(&html), want);
    // In words: the verdict, timestamp sources, host and warnings.
    assert!(html.contains("cut-through"));
    assert!(html.contains("kernel software"));
    assert!(html.contains("Host fingerprint") && html.contains("Intel(R) Xeon(R) Processor"));
    assert!(html.contains("running in a virtual machine"));
    assert!(html.contains("95 % confidence band"));
}

#[test]
fn a_calibration_run_shows_internal_latency_and_the_calibration_line() {
    let v = fixture("calibrate-run.json");
    let html = page(&v, None);
    assert_self_contained(&html);
    let mut want = distribution_plots(sizes(&v));
    want.extend(["calibration-fit-user", "calibration-fit-kernel"].map(String::from));
    assert_eq!(plots(&html), want);
    assert!(html.contains("Mil histogram, P = 46 B"));
    assert!(html.contains("Amil(P) = α + β·P"));
}

#[test]
fn rtt_results_have_a_histogram_per_size_and_a_cdf() {
    for name in ["rtt-small.json", "rtt-stampsuite.json"] {
        let v = fixture(name);
        let html = page(&v, None);
        assert_self_contained(&html);
        let want = distribution_plots(sizes(&v));
        assert_eq!(plots(&html), want, "{name}");
        assert!(html.contains("Clock offset"), "{name}");
    }
}

#[test]
fn clock_results_have_their_histograms_on_log_axes() {
    for name in [
        "clock-interference-compare.json",
        "clock-interference-tsc.json",
    ] {
        let v = fixture(name);
        let html = page(&v, None);
        assert_self_contained(&html);
        let runs = v["runs"].as_array().unwrap().len();
        let mut want: Vec<String> = (0..runs).map(|i| format!("interference-{i}")).collect();
        if runs > 1 {
            want.push("interference-all".into());
        }
        assert_eq!(plots(&html), want, "{name}");
    }
    for name in [
        "clock-timer-plain.json",
        "clock-timer-fifo.json",
        "clock-timer-interrupted.json",
    ] {
        let v = fixture(name);
        let html = page(&v, None);
        assert_self_contained(&html);
        assert_eq!(plots(&html), vec!["timer", "percentiles"], "{name}");
        // Log count axis: decade labels.
        assert!(html.contains(">100</text>"), "{name}");
    }
}

#[test]
fn a_sweep_gives_throughput_and_latency_curves() {
    let point = |v: &str, bps: f64, med: i64| json!({"parameter": "msg_size", "value": v, "figures": {"complete": true, "throughput_bps": bps, "latency_median_ns": med, "latency_p99_ns": med * 3}});
    let v = json!({
        "format": "misura.sweep", "format_version": 2, "tool": "misura", "tool_version": "0", "started_at": "2026-01-01T00:00:00Z",
        "command": ["misura"], "complete": true, "stop_reason": "finished", "host": {"hostname": "h"}, "test": "tcp",
        "parameter": "msg_size", "base_args": [], "warnings": [],
        "points": [point("64", 1e8, 20000), point("1K", 1e9, 25000), point("64K", 9e9, 90000)]
    });
    let html = page(&v, None);
    assert_self_contained(&html);
    assert_eq!(plots(&html), vec!["sweep-throughput", "sweep-latency"]);
    // 64 … 65 536 spans three decades: log x axis with decade ticks.
    assert!(html.contains(">1000</text>"));
}

#[test]
fn throughput_runs_plot_their_intervals_and_other_results_get_tables() {
    let v = fixture("throughput/tcp1.json");
    assert_eq!(plots(&page(&v, None)), vec!["throughput-intervals"]);
    let v = fixture("host-check-lab.json");
    let html = page(&v, None);
    assert_self_contained(&html);
    assert!(plots(&html).is_empty());
    assert!(html.contains("No plots for this kind of result"));
    assert!(html.contains("The result as JSON"));
}

#[test]
fn a_frames_csv_adds_the_time_series() {
    let v = fixture("oneway-plain.json");
    let mut csv = String::from(misura_report::frames::FRAMES_HEADER);
    csv.push('\n');
    for i in 0..5000i64 {
        let lat = 1000 + (i % 97) * 10 + if i % 1000 == 0 { 50_000 } else { 0 };
        csv.push_str(&format!(
            "{i},46,64,{},{},,,,,,,0,0,,,{lat},,\n",
            1_000_000 + i * 250_000,
            1_000_100 + i * 250_000
        ));
    }
    let s = LatencySeries::read(&mut csv.as_bytes()).unwrap();
    assert_eq!(s.quantity, "mul_ns");
    let html = page(&v, Some(&s));
    assert_self_contained(&html);
    assert_eq!(plots(&html).last().map(String::as_str), Some("time-series"));
    assert!(html.contains("moving median") && html.contains("moving p99"));
}

#[test]
fn hostile_text_is_escaped() {
    let mut v = fixture("clock-timer-plain.json");
    v["warnings"] = json!(["<script src=\"https://evil.example/x.js\"></script>"]);
    let html = page(&v, None);
    assert!(!html.contains("<script"));
    assert!(html.contains("&lt;script"));
}

#[test]
fn each_figure_is_also_a_standalone_svg() {
    let v = fixture("oneway-sut.json");
    for f in figures(&v, None) {
        let mut out = Vec::new();
        f.plot.write(&mut out, true).unwrap();
        let s = String::from_utf8(out).unwrap();
        assert!(s.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert_eq!(s.matches("<svg").count(), 1);
        assert!(s.trim_end().ends_with("</svg>"));
    }
}

/// A real rtt run (300 probes, 64 and 1400 B, through the routed lab)
/// that stores its full HDR histograms: the distribution figures are drawn
/// from them, binned from the data, on a percentile axis that stops at the
/// data's resolution, with the quoted percentiles ringed.
#[test]
fn full_histograms_give_percentile_plots_fd_bins_and_full_cdfs() {
    use misura_report::svg::{Mark, Scale};
    let v = fixture("rtt-hdr.json");
    let figs = figures(&v, None);
    let names: Vec<&str> = figs.iter().map(|f| f.plot.name.as_str()).collect();
    assert_eq!(names, distribution_plots(2));
    let fig = |n: &str| &figs.iter().find(|f| f.plot.name == n).unwrap().plot;
    // 150 probes a size: the axis ends at 1 − 1/150, so p99.9 is not
    // ringed, the median, p90 and p99 are, on the network RTT line.
    let p = fig("percentiles-0");
    assert_eq!(p.x_scale, Scale::Percentile);
    let (_, hi) = p.x_range.unwrap();
    assert!((hi - (1.0 - 1.0 / 150.0)).abs() < 1e-12, "{hi}");
    let tags: Vec<&str> = p
        .marks
        .iter()
        .filter_map(|(m, _)| match m {
            Mark::Tagged { points, series: 0 } => Some(points),
            _ => None,
        })
        .flatten()
        .map(|t| t.2.as_str())
        .collect();
    assert_eq!(tags, ["median", "p90", "p99"]);
    let lines = p
        .marks
        .iter()
        .filter(|(m, _)| matches!(m, Mark::Line { .. }))
        .count();
    assert_eq!(lines, 3, "network, user and kernel RTT");
    let note = p.note.as_deref().unwrap();
    assert!(note.starts_with("from the full HDR histogram"), "{note}");
    // The ringed median sits on the curve: the curve's value over p = 0.5
    // is the summary's median (both nearest rank at HDR resolution).
    let median = v["per_size"][0]["latency"]["network_rtt"]["median_ns"]
        .as_f64()
        .unwrap();
    let Mark::Line { points, .. } = &p.marks[0].0 else {
        panic!("first mark is the network RTT line")
    };
    let unit = if p.y_label.contains("(µs)") {
        1e3
    } else {
        1.0
    };
    let at_median = points
        .windows(2)
        .find(|w| w[0].0 < 0.5 && w[1].0 >= 0.5)
        .map(|w| w[1].1)
        .unwrap();
    assert!(
        (at_median * unit - median).abs() < 1e-6,
        "{at_median} vs {median}"
    );
    // Histogram: FD bins, what lies outside said.
    let h = fig("histogram-0");
    assert!(h
        .note
        .as_deref()
        .unwrap()
        .contains("Freedman–Diaconis on the central 99 %"));
    // CDF: every recorded bucket (two points each) of both sizes.
    let c = fig("cdf");
    let drawn: usize = c
        .marks
        .iter()
        .map(|(m, _)| match m {
            Mark::Line { points, .. } => points.len(),
            _ => 0,
        })
        .sum();
    let buckets: usize = (0..2)
        .map(|i| {
            v["per_size"][i]["hdr_network_rtt"]
                .as_array()
                .unwrap()
                .len()
        })
        .sum();
    assert_eq!(drawn, 2 * buckets);
    // One unit per figure kind across the page.
    let unit_of = |n: &str| {
        let l = &fig(n).y_label;
        l[l.rfind('(').unwrap()..].to_string()
    };
    assert_eq!(unit_of("percentiles-0"), unit_of("percentiles-1"));
    let x_unit = |n: &str| {
        let l = &fig(n).x_label;
        l[l.rfind('(').unwrap()..].to_string()
    };
    assert_eq!(x_unit("histogram-0"), x_unit("histogram-1"));
}
