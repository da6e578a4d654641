//! The frame engine through `misura oneway` on the lab's direct cable:
//! every load frame counted and kernel-RX-stamped, the latency stream
//! inside it, the tester's own limits named, the paths forced or refused
//! with a reason. Rates and bounds are generous: this is a 2-vCPU VM and
//! the assertions are about counts, not speed (speed is
//! scripts/bench-oneway.sh's).

#[macro_use]
mod common;

use common::*;
use serde_json::Value;

fn trial(v: &Value) -> &Value {
    &v["load"]["trial"]
}

fn flow(v: &Value) -> &Value {
    &v["load"]["trial"]["flows"][0]
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

#[test]
#[ignore = "needs root: network namespaces and raw sockets"]
fn every_load_frame_is_counted_and_stamped_and_the_latency_stream_is_windowed() {
    need_root!();
    let _one = one_at_a_time();
    let lab = Lab::up("en", "a", "direct");
    let v = json_of(&lab.oneway(&[
        "--engine",
        "mmap",
        "--rate",
        "100000",
        "--duration",
        "2s",
        "--latency-every",
        "100",
        "--sizes",
        "46,512",
        "--json",
    ]));
    schema_check(&v, "oneway.schema.json");
    assert_eq!(v["complete"], true, "{}", v["stop_reason"]);
    assert_eq!(v["load"]["engine"]["engine"], "mmap");
    assert_eq!(v["load"]["engine"]["rx_path"], "tpacket_v3");
    let f = flow(&v);
    let (sent, received, lost) = (u(&f["sent"]), u(&f["received"]), u(&f["lost"]));
    // 2 s at 99 000 load frames/s: most of them, whatever the VM does.
    assert!(sent > 100_000, "sent {sent}");
    assert_eq!(received + lost, sent, "counts add up exactly");
    assert_eq!(u(&f["duplicates"]), 0);
    // Every received load frame carries a kernel RX stamp from the ring.
    let t = trial(&v);
    assert_eq!(
        u(&t["stamped"]) + u(&t["hardware_stamped"]),
        received,
        "{t}"
    );
    assert_eq!(u(&t["unstamped"]), 0);
    assert!(u(&f["transit"]["count"]) > 0);
    // The latency stream: ~2000 frames with windows and kernel stamps.
    let lat = u(&v["totals"]["received"]);
    assert!(lat > 1000, "latency frames {lat}");
    assert_eq!(v["timestamps"]["kernel_software_tx"], true);
    let k = &v["overall"]["kernel"];
    assert!(u(&k["count"]) > 1000, "kernel latencies {k}");
    // On a busy 2-vCPU VM the tester may fall behind; if it did, it says
    // which part of it did.
    if let Some(w) = t["tester_limit"].as_str() {
        assert!(w.contains("transmit path") || w.contains("ring"), "{w}");
    }
}

#[test]
#[ignore = "needs root: network namespaces and raw sockets"]
fn near_line_rate_sends_the_best_the_tester_reaches_and_says_so() {
    need_root!();
    let _one = one_at_a_time();
    let lab = Lab::up("en", "b", "direct");
    // 99 % of the veth's nominal 10 Gb/s: 14.7 M frames/s, far above what
    // this host can send. Before the engine this sent 0 frames.
    let o = lab.oneway(&[
        "--sizes",
        "46",
        "--load",
        "99%",
        "--duration",
        "2s",
        "--json",
    ]);
    let v = json_of(&o);
    schema_check(&v, "oneway.schema.json");
    let f = flow(&v);
    assert!(u(&f["sent"]) > 100_000, "sent {}", f["sent"]);
    assert!(f["achieved_fps"].as_f64().unwrap() < f["offered_fps"].as_f64().unwrap());
    let limit = trial(&v)["tester_limit"]
        .as_str()
        .expect("the tester's limit is named");
    assert!(limit.contains("transmit path"), "{limit}");
    let codes = warning_codes(&v);
    assert!(codes.contains(&"load.tester-limited"), "{codes:?}");
    // 100 % is a feasible request now (the period rounds up).
    let o = lab.oneway(&[
        "--sizes",
        "46",
        "--load",
        "100%",
        "--duration",
        "1s",
        "--json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
#[ignore = "needs root: network namespaces and raw sockets"]
fn each_path_runs_or_is_refused_naming_why() {
    need_root!();
    let _one = one_at_a_time();
    let lab = Lab::up("en", "c", "direct");
    for engine in ["packet", "mmap", "xdp"] {
        let o = lab.oneway(&[
            "--engine",
            engine,
            "--rate",
            "50000",
            "--duration",
            "1s",
            "--sizes",
            "46",
            "--json",
        ]);
        if o.status.success() {
            let v = json_of(&o);
            assert_eq!(v["load"]["engine"]["engine"], engine);
            let f = flow(&v);
            assert_eq!(u(&f["received"]) + u(&f["lost"]), u(&f["sent"]));
            assert!(u(&f["sent"]) > 10_000, "{engine}: sent {}", f["sent"]);
        } else {
            let e = String::from_utf8_lossy(&o.stderr);
            assert!(e.contains(&format!("--engine {engine}")), "{engine}: {e}");
        }
    }
}

#[test]
#[ignore = "needs root: network namespaces and raw sockets"]
fn two_cores_merge_their_counts_exactly() {
    need_root!();
    let _one = one_at_a_time();
    let lab = Lab::up("en", "d", "direct");
    let v = json_of(&lab.oneway(&[
        "--engine",
        "mmap",
        "--cores",
        "2",
        "--rate",
        "100000",
        "--duration",
        "2s",
        "--sizes",
        "46",
        "--json",
    ]));
    assert_eq!(v["load"]["engine"]["cores"], 2);
    let f = flow(&v);
    assert_eq!(u(&f["received"]) + u(&f["lost"]), u(&f["sent"]));
    assert!(u(&f["sent"]) > 100_000);
}

#[test]
fn impossible_engine_requests_are_refused_with_the_fix() {
    // No root needed: refused before any socket is opened.
    let o = run(&["oneway", "--tx", "p1", "--rx", "p2", "--cores", "17"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--cores"));
    let o = run(&["oneway", "--tx", "p1", "--rx", "p2", "--latency-every", "1"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
#[ignore = "needs root: network namespaces and raw sockets"]
fn a_forced_loop_above_what_it_sustains_is_refused_with_the_figure() {
    need_root!();
    let _one = one_at_a_time();
    let lab = Lab::up("en", "e", "direct");
    let o = lab.oneway(&[
        "--engine",
        "loop",
        "--sizes",
        "46",
        "--load",
        "99%",
        "--duration",
        "1s",
    ]);
    assert_eq!(
        o.status.code(),
        Some(5),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("per-frame loop") && e.contains("--engine auto"),
        "{e}"
    );
}
