//! `misura rfc2544` results: the fixture (a run against a lab switch shaped
//! to 100 Mbit/s, `--link-speed 1G`) against schema/rfc2544.schema.json and
//! the Rust model, its figures hang together as RFC 2544 defines them, and
//! the report page draws the four RFC 2544 figures from it, or fewer
//! without a crash when tests were not run.

mod common;
use common::*;

use misura_report::html::{figures, write_html, Figure};
use misura_report::rfc2544::Rfc2544Report;
use misura_report::svg::Mark;
use serde_json::{json, Value};

const FIXTURE: &str = "rfc2544-shaped.json";
const SCHEMA: &str = "rfc2544";
/// The lab switch's shaper (tbf on the skb, i.e. the frame less its FCS).
const SHAPED_BPS: f64 = 100e6;

fn page(v: &Value) -> String {
    let mut out = Vec::new();
    write_html(v, None, &mut out).expect("the page writes");
    String::from_utf8(out).expect("the page is UTF-8")
}

fn names(figs: &[Figure]) -> Vec<&str> {
    figs.iter().map(|f| f.plot.name.as_str()).collect()
}

fn fig<'a>(figs: &'a [Figure], name: &str) -> &'a Figure {
    figs.iter()
        .find(|f| f.plot.name == name)
        .unwrap_or_else(|| panic!("no figure {name} in {:?}", names(figs)))
}

/// The `(x, y)` of the line with legend `legend`.
fn line(f: &Figure, legend: &str) -> Vec<(f64, f64)> {
    f.plot
        .marks
        .iter()
        .find_map(|(m, l)| match m {
            Mark::Line { points, .. } if l == legend => Some(points.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("{}: no line {legend:?}", f.plot.name))
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs().max(1e-12)
}

#[test]
fn fixture_validates_against_the_schema() {
    assert_valid(SCHEMA, FIXTURE, &fixture(FIXTURE));
}

#[test]
fn fixture_round_trips_through_the_model() {
    let v = fixture(FIXTURE);
    // Unchanged through the model, and what the model writes fits the schema too.
    assert_valid_and_modelled::<Rfc2544Report>(SCHEMA, FIXTURE, &v);
    let r: Rfc2544Report = serde_json::from_value(v).unwrap();
    assert_eq!(r.meta.format, "misura.rfc2544");
    assert_eq!(r.sizes.len(), 3);
    assert!(r.sizes.iter().all(|s| s.throughput.is_some()
        && s.latency.is_some()
        && s.frame_loss.is_some()
        && s.back_to_back.is_some()));
}

/// The fixture's host, summaries and load trials are checked against the
/// rfc2544 schema's copies of oneway.schema.json's definitions; they must
/// be the same, or the fixture would check something else.
#[test]
fn shared_definitions_are_oneways() {
    let oneway = load_json(&schema_path("oneway"));
    let rfc = load_json(&schema_path(SCHEMA));
    let defs = rfc["$defs"]
        .as_object()
        .expect("rfc2544.schema.json has $defs");
    let mut shared = 0;
    for (name, def) in defs {
        if let Some(o) = oneway["$defs"].get(name) {
            assert_eq!(def, o, "$defs/{name} differs from oneway.schema.json");
            shared += 1;
        }
    }
    assert!(shared >= 5, "only {shared} shared definitions");
}

#[test]
fn the_schema_rejects_a_broken_fixture() {
    let v = fixture(FIXTURE);
    for (what, bad) in [
        ("no ndr", without(&v, "/sizes/0/throughput/ndr")),
        (
            "unknown field",
            with(&v, "/sizes/0/latency/jitter_ns", json!(1)),
        ),
        (
            "string for a rate",
            with(&v, "/sizes/1/line_rate_fps", json!("fast")),
        ),
        (
            "source neither kernel nor user",
            with(&v, "/sizes/0/latency/source", json!("nic")),
        ),
        (
            "a trial row without tester_limit",
            without(&v, "/sizes/2/frame_loss/0/tester_limit"),
        ),
    ] {
        assert_invalid(SCHEMA, what, &bad);
    }
}

/// The hand-written numbers obey the definitions of RFC 2544 / RFC 9004
/// and the lab's shaping, so the figures drawn from them mean something.
#[test]
fn fixture_is_consistent() {
    let r: Rfc2544Report = serde_json::from_value(fixture(FIXTURE)).unwrap();
    let link = r.config.link_rate_bps as f64;
    for s in &r.sizes {
        let frame = s.frame_bytes[0] as f64;
        let what = format!("frame {}", s.label);
        assert!(
            close(s.line_rate_fps, link / ((frame + 20.0) * 8.0), 1e-9),
            "{what}: line rate"
        );
        let t = s.throughput.as_ref().unwrap();
        let shaped = SHAPED_BPS / ((frame - 4.0) * 8.0);
        assert!(
            close(t.ndr.lower_fps, shaped, 0.02),
            "{what}: NDR {} vs shaped {shaped}",
            t.ndr.lower_fps
        );
        for b in [&t.ndr, &t.pdr] {
            assert!(b.found && b.lower_fps < b.upper_fps, "{what}: bound {b:?}");
            assert!(
                close(b.lower_load, b.lower_fps / s.line_rate_fps, 1e-9),
                "{what}: load"
            );
            assert!(
                close(b.lower_bps, b.lower_fps * frame * 8.0, 1e-9),
                "{what}: bps"
            );
        }
        assert!(t.pdr.lower_fps >= t.ndr.lower_fps, "{what}: PDR below NDR");
        let loss = s.frame_loss.as_ref().unwrap();
        let b2b = s.back_to_back.as_ref().unwrap();
        for row in t.trials.iter().chain(loss).chain(&b2b.bursts) {
            let ratio = (row.sent - row.received) as f64 / row.sent as f64;
            assert!(
                close(row.loss_ratio, ratio, 1e-12) || row.loss_ratio == ratio,
                "{what}: {row:?}"
            );
        }
        // Every passing trial of the search is at or below the NDR, every
        // trial above the upper bound lost frames.
        for row in t.trials.iter().filter(|r| r.phase == "final") {
            if row.loss_ratio == 0.0 {
                assert!(row.offered_fps <= t.ndr.lower_fps + 0.1, "{what}: {row:?}");
            }
        }
        // §26.3 steps of 10 % of the line rate, loss ≈ 1 − throughput / sent.
        for (i, row) in loss.iter().enumerate() {
            let pct = 100 - 10 * i;
            assert_eq!(row.phase, format!("{pct}%"), "{what}");
            assert!(
                close(row.offered_fps, s.line_rate_fps * pct as f64 / 100.0, 1e-5),
                "{what}: {row:?}"
            );
            let expect = (1.0 - shaped / row.achieved_fps).max(0.0);
            assert!(
                (row.loss_ratio - expect).abs() < 0.01,
                "{what} {pct}%: loss {} vs {expect}",
                row.loss_ratio
            );
        }
        let l = s.latency.as_ref().unwrap();
        assert_eq!(
            l.rate_fps, t.ndr.lower_fps,
            "{what}: latency at the throughput rate"
        );
        let k = l.kernel.as_ref().unwrap();
        assert_eq!(
            (l.min_ns, l.median_ns, l.p999_ns),
            (k.min_ns, k.median_ns, k.p999_ns)
        );
        assert_eq!(l.pdv_ns, Some(k.p999_ns.unwrap() - k.min_ns.unwrap()));
        assert!(
            l.tagged_frames >= 500,
            "{what}: RFC 8219's 500 tagged frames"
        );
        let implied = b2b.mean_frames / b2b.burst_fps;
        assert!(
            close(b2b.implied_buffer_s, implied, 1e-9),
            "{what}: implied buffer"
        );
        let thr = b2b.throughput_fps.unwrap();
        assert_eq!(thr, t.ndr.lower_fps);
        let corrected = implied * (1.0 - thr / b2b.burst_fps);
        assert!(
            close(b2b.corrected_buffer_s.unwrap(), corrected, 1e-9),
            "{what}: corrected buffer"
        );
        assert_eq!(b2b.trials, 2);
        assert!(
            b2b.min_frames as f64 <= b2b.mean_frames && b2b.mean_frames <= b2b.max_frames as f64
        );
        // The tester's limit is named where it set one, and only there.
        let limited = t
            .trials
            .iter()
            .chain(loss)
            .any(|r| r.tester_limit.is_some());
        assert_eq!(
            limited,
            s.tester_max_fps.is_some(),
            "{what}: tester_max_fps"
        );
        if let Some(m) = s.tester_max_fps {
            assert!(m < s.line_rate_fps);
            assert!(b2b.tester_limit.is_some() && b2b.burst_fps < s.line_rate_fps);
        }
    }
}

#[test]
fn the_page_has_the_four_rfc2544_figures_and_no_script() {
    let v = fixture(FIXTURE);
    let html = page(&v);
    for id in [
        "fig-rfc2544-throughput",
        "fig-rfc2544-throughput-load",
        "fig-rfc2544-frame-loss",
        "fig-rfc2544-latency",
        "fig-rfc2544-back-to-back",
    ] {
        assert!(html.contains(&format!("<figure id=\"{id}\">")), "no {id}");
    }
    for title in [
        "Throughput (RFC 2544 §26.1) against frame size",
        "Frame loss rate (RFC 2544 §26.3) against offered load",
        "Latency at the throughput rate (RFC 2544 §26.2)",
        "Back-to-back frames (RFC 2544 §26.4, RFC 9004)",
    ] {
        assert!(html.contains(title), "no title {title:?}");
    }
    let lower = html.to_lowercase();
    for bad in ["<script", "http://", "https://", "<link", "<img", "src="] {
        assert!(!lower.contains(bad), "the page contains {bad:?}");
    }
}

#[test]
fn the_figures_draw_the_results_numbers() {
    let v = fixture(FIXTURE);
    let r: Rfc2544Report = serde_json::from_value(v.clone()).unwrap();
    let figs = figures(&v, None);
    let tp = fig(&figs, "rfc2544-throughput");
    let ndr: Vec<(f64, f64)> = r
        .sizes
        .iter()
        .map(|s| {
            (
                s.frame_bytes[0] as f64,
                s.throughput.as_ref().unwrap().ndr.lower_fps,
            )
        })
        .collect();
    assert_eq!(line(tp, "NDR (no loss)"), ndr);
    assert_eq!(line(tp, "line rate").len(), 3);
    assert!(tp.caption.contains("64 B (reached"), "{}", tp.caption);
    assert!(!tp.caption.contains("512 B (reached"), "{}", tp.caption);
    let load = fig(&figs, "rfc2544-throughput-load");
    let pdr = line(load, "PDR (loss ≤ 1 %)");
    for (p, s) in pdr.iter().zip(&r.sizes) {
        let b = &s.throughput.as_ref().unwrap().pdr;
        assert!(close(p.1, 100.0 * b.lower_load, 1e-12));
    }
    let loss = fig(&figs, "rfc2544-frame-loss");
    let l64 = line(loss, "64 B");
    assert_eq!(l64.len(), 10);
    // x ascending 10 … 100 %, y in %.
    assert!(
        close(l64[0].0, 10.0, 1e-6) && close(l64[9].0, 100.0, 1e-6),
        "{l64:?}"
    );
    assert_eq!(l64[0].1, 0.0);
    assert!(l64[9].1 > 70.0, "{l64:?}");
    assert!(
        loss.caption
            .contains("tester itself limited the frame loss steps at 64 B"),
        "{}",
        loss.caption
    );
    let lat = fig(&figs, "rfc2544-latency");
    assert!(lat.plot.y_label.contains("µs"), "{}", lat.plot.y_label);
    let med: Vec<f64> = line(lat, "median").iter().map(|p| p.1 * 1e3).collect();
    let want: Vec<f64> = r
        .sizes
        .iter()
        .map(|s| s.latency.as_ref().unwrap().median_ns.unwrap() as f64)
        .collect();
    for (a, b) in med.iter().zip(&want) {
        assert!(close(*a, *b, 1e-9), "{med:?} vs {want:?}");
    }
    assert!(
        lat.caption.contains("kernel TX and RX stamps"),
        "{}",
        lat.caption
    );
    assert!(
        !lat.plot
            .marks
            .iter()
            .any(|(_, l)| l.starts_with("SUT latency")),
        "no Msl without calibration"
    );
    let b2b = fig(&figs, "rfc2544-back-to-back");
    assert!(
        b2b.caption.contains("implied buffer time") && b2b.caption.contains("corrected"),
        "{}",
        b2b.caption
    );
    assert!(
        b2b.caption.contains("[tester: bursts left at"),
        "{}",
        b2b.caption
    );
}

/// The result with only `--tests throughput`: the other entries are null.
fn throughput_only() -> Value {
    let mut v = fixture(FIXTURE);
    v["config"]["tests"] = json!(["throughput"]);
    for s in v["sizes"].as_array_mut().unwrap() {
        for k in ["latency", "frame_loss", "back_to_back"] {
            s[k] = Value::Null;
        }
    }
    v
}

#[test]
fn a_throughput_only_result_renders_its_throughput_figures() {
    let v = throughput_only();
    // Still a valid result.
    if let Err(e) = check(SCHEMA, &v) {
        panic!("throughput-only result fails the schema: {e:?}");
    }
    let figs = figures(&v, None);
    assert_eq!(
        names(&figs),
        ["rfc2544-throughput", "rfc2544-throughput-load"]
    );
    let html = page(&v);
    assert!(html.contains("fig-rfc2544-throughput") && !html.contains("fig-rfc2544-latency"));
    assert!(!html.to_lowercase().contains("<script"));
}

#[test]
fn partial_and_odd_results_do_not_crash() {
    let base = fixture(FIXTURE);
    let mut cases = vec![
        ("no sizes", with(&base, "/sizes", json!([]))),
        ("sizes not a list", with(&base, "/sizes", json!("x"))),
        (
            "size without frames",
            with(&base, "/sizes", json!([{"label": "64"}])),
        ),
        (
            "line rate null",
            with(&base, "/sizes/0/line_rate_fps", Value::Null),
        ),
        (
            "NDR not found",
            with(&base, "/sizes/0/throughput/ndr/found", json!(false)),
        ),
        (
            "latency figures null",
            with_all(
                &base,
                &[
                    ("/sizes/0/latency/min_ns", Value::Null),
                    ("/sizes/0/latency/median_ns", Value::Null),
                    ("/sizes/0/latency/p999_ns", Value::Null),
                ],
            ),
        ),
        ("no config", without(&base, "/config")),
        (
            "interrupted in the first size",
            with_all(
                &base,
                &[
                    ("/complete", json!(false)),
                    (
                        "/sizes",
                        json!([{"label": "64", "frame_bytes": [64], "line_rate_fps": 1488095.2,
                "tester_max_fps": null, "throughput": null, "latency": null,
                "frame_loss": null, "back_to_back": null}]),
                    ),
                ],
            ),
        ),
    ];
    let mut imix = base.clone();
    imix["sizes"][1]["label"] = json!("imix");
    imix["sizes"][1]["frame_bytes"] = json!([64, 64, 64, 64, 64, 64, 64, 570, 570, 570, 570, 1518]);
    cases.push(("imix", imix));
    cases.push(("only throughput", throughput_only()));
    for (what, v) in &cases {
        let figs = figures(v, None);
        let html = page(v);
        assert!(html.ends_with("</body></html>\n"), "{what}: page cut short");
        assert!(!html.to_lowercase().contains("<script"), "{what}");
        match *what {
            "no sizes"
            | "sizes not a list"
            | "size without frames"
            | "interrupted in the first size" => {
                assert!(figs.is_empty(), "{what}: {:?}", names(&figs))
            }
            "NDR not found" => {
                let tp = fig(&figs, "rfc2544-throughput");
                assert_eq!(line(tp, "NDR (no loss)").len(), 2, "{what}");
                assert!(
                    tp.caption.contains("Not found (no trial passed): NDR 64 B"),
                    "{}",
                    tp.caption
                );
            }
            "imix" => {
                let tp = fig(&figs, "rfc2544-throughput");
                assert!(tp
                    .plot
                    .note
                    .as_deref()
                    .unwrap_or("")
                    .contains("imix drawn at its mean frame"));
            }
            "latency figures null" => {
                assert_eq!(
                    line(fig(&figs, "rfc2544-latency"), "median").len(),
                    2,
                    "{what}"
                );
            }
            _ => assert!(figs.len() >= 2, "{what}: {:?}", names(&figs)),
        }
    }
}
