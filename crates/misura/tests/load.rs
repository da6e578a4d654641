//! `misura load` (issue 12) on the routed lab with a bottleneck on the
//! router: a bloated tbf queue inflates the loaded direction only, a small
//! queue keeps the inflation to milliseconds, and a missing server or
//! reflector is named before anything is measured.

#[macro_use]
mod common;

use common::*;

fn routed(lab: &Lab, shape: &str) {
    let o = lab.routed(shape);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

fn servers(lab: &mut Lab, which: &[&str]) {
    for server in which {
        lab.server(2, server);
    }
    std::thread::sleep(std::time::Duration::from_millis(800));
}

fn load(lab: &Lab, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["--period", "20ms", "--json"];
    args.extend_from_slice(extra);
    lab.load(&args)
}

#[test]
#[ignore = "needs root: network namespaces"]
fn a_bloated_queue_inflates_the_loaded_direction_and_a_small_one_does_not() {
    need_root!();
    let _one = one_at_a_time();
    let mut lab = Lab::new("load", "q");
    routed(&lab, "20M,queue=500K");
    servers(&mut lab, &["serve", "reflect"]);
    // 40 Mbit/s of UDP up into a 20 Mbit/s bottleneck with a 205 ms queue.
    let o = load(
        &lab,
        &[
            "--udp-up",
            "40M",
            "--up",
            "0",
            "--down",
            "0",
            "--duration",
            "4s",
            "--rr",
        ],
    );
    let v = json_of(&o);
    schema_check(&v, "load.schema.json");
    // --rr: UDP transactions in every phase; the overloaded queue holds each
    // loaded one for its drain time (it never empties under UDP overload).
    for p in v["phases"].as_array().unwrap() {
        let rr = &p["rr"];
        assert!(rr["transactions"].as_u64().unwrap() > 0, "{p}");
        assert!(rr["error"].is_null(), "{rr}");
        let median = ms(&rr["latency"]["median_ns"]);
        if p["name"] == "loaded" {
            assert!(median > 100.0, "loaded transaction p50 {median} ms");
        } else {
            assert!(median < 5.0, "{} transaction p50 {median} ms", p["name"]);
        }
    }
    let names: Vec<&str> = v["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["idle", "loaded", "idle after"]);
    let i = &v["inflation"];
    assert!(
        ms(&i["forward_ns"]) > 150.0,
        "forward inflation {} ms",
        ms(&i["forward_ns"])
    );
    assert!(
        ms(&i["backward_ns"]).abs() < 10.0,
        "backward inflation {} ms",
        ms(&i["backward_ns"])
    );
    assert!(ms(&i["network_rtt_ns"]) > 150.0);
    assert!(ms(&v["phases"][0]["network_rtt"]["median_ns"]) < 5.0);
    assert!(
        ms(&v["phases"][2]["network_rtt"]["median_ns"]) < 5.0,
        "the queue drained"
    );
    let rpm = v["responsiveness"]["rpm_network"].as_f64().unwrap();
    assert!(rpm > 200.0 && rpm < 400.0, "RPM {rpm}");
    let flow = &v["phases"][1]["flows"][0];
    assert_eq!(flow["kind"], "udp");
    assert!(flow["throughput_bps"].as_f64().unwrap() < 21e6, "{flow}");
    // TCP both ways behind a 16 KB queue: a few ms of inflation at most.
    routed(&lab, "20M,queue=16K");
    let o = load(&lab, &["--up", "2", "--down", "2", "--duration", "4s"]);
    let v = json_of(&o);
    schema_check(&v, "load.schema.json");
    let flows = v["phases"][1]["flows"].as_array().unwrap();
    assert_eq!(flows.len(), 2);
    let total = v["phases"][1]["total_bps"].as_f64().unwrap();
    assert!(total > 20e6 && total < 45e6, "total {total} bit/s");
    let infl = ms(&v["inflation"]["network_rtt_ns"]);
    assert!(
        infl < 15.0,
        "network RTT inflation {infl} ms behind a 16 KB queue"
    );
    assert!(!v["throughput_series"].as_array().unwrap().is_empty());
    // The RRUL picture: throughput and latency over one time axis, and the
    // phases side by side.
    let json = lab.path("load.json");
    std::fs::write(&json, serde_json::to_vec(&v).unwrap()).unwrap();
    let html = lab.path("load.html");
    let o = run(&[
        "--no-store",
        "report",
        json.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let page = std::fs::read_to_string(&html).unwrap();
    // The phases' CDF is drawn from their full histograms ("cdf"), so the
    // coarse one through five quantiles ("load-phases") is left out.
    assert!(!page.contains("data-plot=\"load-phases\""));
    for plot in ["load-throughput", "load-latency", "cdf"] {
        assert!(
            page.contains(&format!("data-plot=\"{plot}\"")),
            "{plot} missing"
        );
    }
}

/// `misura load` with one of its peers missing: it fails within a few
/// seconds, before any phase, with no result and `want` in its message.
fn refused_before_measuring(lab: &Lab, want: &[&str]) {
    let t = std::time::Instant::now();
    let o = load(lab, &["--up", "1", "--down", "0", "--duration", "2s"]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(want.iter().all(|w| e.contains(w)), "{want:?}: {e}");
    assert!(t.elapsed().as_secs_f64() < 10.0, "{:?}", t.elapsed());
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.is_empty(), "a result was written: {out}");
}

#[test]
#[ignore = "needs root: network namespaces"]
fn a_missing_server_or_reflector_is_named_before_anything_is_measured() {
    need_root!();
    let _one = one_at_a_time();
    let mut lab = Lab::new("load", "s");
    routed(&lab, "none");
    // Only the reflector: the server's absence is found before the first
    // phase (it used to show after all three, as `up 0.00 Mbit/s`).
    servers(&mut lab, &["reflect"]);
    refused_before_measuring(
        &lab,
        &["198.18.1.2:5862", "Start `misura serve` on 198.18.1.2"],
    );
    // Only the server: the reflector's absence is named the same way.
    for c in &mut lab.children {
        let _ = c.kill();
        let _ = c.wait();
    }
    servers(&mut lab, &["serve"]);
    refused_before_measuring(
        &lab,
        &["reflector 198.18.1.2", "Start `misura reflect` there"],
    );
}
