//! The SUT's estimates compared on the virtual lab: a calibration on the
//! cable, then a oneway run through the bridge whose result says whether
//! the user-window and kernel-stamp estimates agree, which one the verdict
//! rests on, and why they differ. Needs root (namespaces, raw sockets).

#[macro_use]
mod common;

use common::*;
use serde_json::Value;

/// The intervals `a ± ca` and `b ± cb` are apart by this much, or overlap.
fn gap(a: f64, ca: f64, b: f64, cb: f64) -> Option<f64> {
    let g = (a - b).abs() - (ca + cb);
    (g > 0.0).then_some(g)
}

/// A calibration line's 95 % half-width at payload `x`, from its points:
/// `t·s·√(1/n + (x − x̄)²/Sxx)`.
fn ci95_at(line: &Value, x: f64) -> f64 {
    let xs: Vec<f64> = line["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| f(&p["payload_bytes"]))
        .collect();
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let sxx: f64 = xs.iter().map(|v| (v - mean).powi(2)).sum();
    let fit = &line["fit"];
    f(&fit["t95"]) * (f(&fit["residual_variance"]) * (1.0 / n + (x - mean).powi(2) / sxx)).sqrt()
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
#[ignore = "needs root: network namespaces and raw sockets"]
fn the_bridges_result_says_whether_its_estimates_agree_and_what_the_verdict_rests_on() {
    need_root!();
    let lab = Lab::up("oc", "a", "direct");
    let profile = lab.path("cal.json");
    let profile = profile.to_str().unwrap();
    // Calibration and measurement alike, pinned as the guide says.
    let alike = ["--count", "2100", "--rate", "4000", "--cpu", "1"];
    let o = lab
        .between_ports("calibrate", &[&alike[..], &["--profile", profile]].concat())
        .output()
        .expect("running misura calibrate");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    lab.topology("switch");
    let json = lab.path("sut.json");
    let o = lab.oneway(
        &[
            &alike[..],
            &[
                "--calibration",
                profile,
                "--export-json",
                json.to_str().unwrap(),
            ],
        ]
        .concat(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    schema_check(&v, "oneway.schema.json");

    let sut = &v["sut"];
    let c = &sut["consistency"];
    // veth has kernel stamps and no NIC stamps: the verdict rests on the
    // kernel's, and is the kernel fit's.
    assert_eq!(c["rests_on"], "kernel", "{c}");
    assert_eq!(c["verdict"], sut["kernel_verdict"]);
    let (kfit, ufit) = (&sut["kernel"]["fit"], &sut["user"]["fit"]);
    // Each interval: the SUT fit's and the calibration line's, in
    // quadrature; α' at L = 0, that is at payload −18 for the calibration.
    let cal = &v["calibration"];
    let interval = |fit: &Value, cal: &Value, q: &str| match q {
        "alpha_ns" => f(&fit["a_ci95"]).hypot(ci95_at(cal, -18.0)),
        _ => f(&fit["b_ci95"]).hypot(f(&cal["fit"]["b_ci95"])),
    };
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * a.abs().max(1.0);
    assert_eq!(f(&c["latency"]["value"]), f(&kfit["a"]));
    let kci = interval(kfit, &cal["kernel"], "alpha_ns");
    assert!(
        close(f(&c["latency"]["ci95"]), kci),
        "{} against {kci}",
        c["latency"]
    );
    assert!(f(&c["latency"]["calibration_ci95"]) > 0.0);

    // The disagreements are exactly the pairs of intervals that are apart.
    let mut want = Vec::new();
    for (q, value) in [("alpha_ns", "a"), ("beta_ns_per_byte", "b")] {
        let k = (f(&kfit[value]), interval(kfit, &cal["kernel"], q));
        let u = (f(&ufit[value]), interval(ufit, &cal["user"], q));
        if let Some(g) = gap(k.0, k.1, u.0, u.1) {
            want.push((q, g, k, u));
        }
    }
    let got = c["disagreements"].as_array().unwrap();
    assert_eq!(got.len(), want.len(), "{got:?} against the fits' {want:?}");
    for (d, (q, g, k, u)) in got.iter().zip(&want) {
        assert_eq!(d["quantity"], *q);
        assert!(close(f(&d["gap"]), *g), "{d}: gap against {g}");
        for (e, source, (value, ci)) in [(&d["first"], "kernel", k), (&d["second"], "user", u)] {
            assert_eq!(e["source"], source, "{d}");
            assert_eq!(f(&e["value"]), *value, "{d}");
            assert!(
                close(f(&e["ci95"]), *ci),
                "{d}: {source} interval against {ci}"
            );
        }
    }

    // Agreement, warning and text line say the same.
    let apart = !want.is_empty();
    assert_eq!(
        c["agreement"],
        if apart { "inconsistent" } else { "consistent" }
    );
    let warning = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["code"] == "sut.estimates-disagree");
    assert_eq!(warning.is_some(), apart, "{:?}", v["warnings"]);
    let headline = text
        .lines()
        .find(|l| l.starts_with("verdict: "))
        .unwrap_or_else(|| panic!("no headline verdict in:\n{text}"));
    let word = sut["kernel_verdict"].as_str().unwrap().replace('_', "-");
    assert!(
        headline.starts_with(&format!("verdict: {word}, resting on the kernel stamps")),
        "{headline}"
    );
    assert_eq!(headline.contains("disagree"), apart, "{headline}");

    // What the run shows about why: on veth the frame crosses the bridge
    // inside send(), counted per frame.
    let inside = v["totals"]["rx_inside_send"].as_u64().unwrap();
    let received = v["totals"]["received"].as_u64().unwrap();
    assert!(inside <= received);
    let causes: Vec<&str> = c["causes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["code"].as_str().unwrap())
        .collect();
    if apart {
        let w = warning.unwrap()["text"].as_str().unwrap();
        for (_, _, k, u) in want.iter().filter(|w| w.0 == "alpha_ns") {
            for (value, ci) in [k, u] {
                let fig = format!("{:.3} ± {:.3} µs", value / 1000.0, ci / 1000.0);
                assert!(w.contains(&fig), "{fig} not in {w}");
            }
        }
        assert!(w.contains("the verdict rests on the kernel stamps"), "{w}");
        assert_eq!(
            causes.contains(&"received-inside-send"),
            inside > 0,
            "{causes:?}"
        );
        assert!(
            !causes.contains(&"loop-not-pinned"),
            "the loop was pinned: {causes:?}"
        );
    } else {
        assert!(causes.is_empty(), "{causes:?}");
    }
    eprintln!(
        "user α' {:.3} ± {:.3} µs, kernel α' {:.3} ± {:.3} µs, {} of {received} received inside send(): {}",
        f(&ufit["a"]) / 1000.0,
        interval(ufit, &cal["user"], "alpha_ns") / 1000.0,
        f(&kfit["a"]) / 1000.0,
        kci / 1000.0,
        inside,
        c["agreement"]
    );
}
