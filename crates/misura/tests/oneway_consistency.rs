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
    let o = lab
        .between_ports(
            "calibrate",
            &[
                "--count",
                "2100",
                "--rate",
                "4000",
                "--cpu",
                "1",
                "--profile",
                profile,
            ],
        )
        .output()
        .expect("running misura calibrate");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    lab.topology("switch");
    let json = lab.path("sut.json");
    let o = lab.oneway(&[
        "--count",
        "2100",
        "--rate",
        "4000",
        "--cpu",
        "1",
        "--calibration",
        profile,
        "--export-json",
        json.to_str().unwrap(),
    ]);
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
    assert_eq!(f(&c["latency"]["value"]), f(&kfit["a"]));
    assert_eq!(f(&c["latency"]["ci95"]), f(&kfit["a_ci95"]));

    // The disagreements are exactly the pairs of intervals that are apart.
    let mut want = Vec::new();
    for (q, a, b) in [
        ("alpha_ns", "a", "a_ci95"),
        ("beta_ns_per_byte", "b", "b_ci95"),
    ] {
        if let Some(g) = gap(f(&kfit[a]), f(&kfit[b]), f(&ufit[a]), f(&ufit[b])) {
            want.push((q.to_string(), g));
        }
    }
    let got: Vec<(String, f64)> = c["disagreements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            assert_eq!(d["first"]["source"], "kernel", "{d}");
            assert_eq!(d["second"]["source"], "user", "{d}");
            (d["quantity"].as_str().unwrap().to_string(), f(&d["gap"]))
        })
        .collect();
    assert_eq!(got.len(), want.len(), "{got:?} against the fits' {want:?}");
    for ((q, g), (wq, wg)) in got.iter().zip(&want) {
        assert_eq!(q, wq);
        assert!(
            (g - wg).abs() < 1e-6 * wg.max(1.0),
            "{q}: gap {g} against {wg}"
        );
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
        if want.iter().any(|(q, _)| q == "alpha_ns") {
            for fit in [kfit, ufit] {
                let fig = format!(
                    "{:.3} ± {:.3} µs",
                    f(&fit["a"]) / 1000.0,
                    f(&fit["a_ci95"]) / 1000.0
                );
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
        f(&ufit["a_ci95"]) / 1000.0,
        f(&kfit["a"]) / 1000.0,
        f(&kfit["a_ci95"]) / 1000.0,
        inside,
        c["agreement"]
    );
}
