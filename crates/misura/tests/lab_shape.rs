//! `misura lab up --topology switch --shape RATE[,queue=BYTES]`: the SUT
//! bridge gets a known throughput limit (a tbf on its port towards p2). The
//! root test checks the qdisc the kernel holds, then sends real frames
//! through it and measures what comes out: the rate at p2 and the drops the
//! qdisc counts. Bad `--shape` values fail before anything is built.

#[macro_use]
mod common;

use common::*;
use serde_json::Value;
use std::process::Output;

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `tc -j -s qdisc show dev IFNAME` inside namespace `ns`: the root qdisc.
fn root_qdisc(ns: &str, ifname: &str) -> Value {
    let tc = require_tool("tc", "apt-get install iproute2");
    let o = std::process::Command::new("ip")
        .args(["netns", "exec", ns])
        .arg(tc)
        .args(["-j", "-s", "qdisc", "show", "dev", ifname])
        .output()
        .expect("running tc");
    assert!(o.status.success(), "tc qdisc show: {}", stderr(&o));
    let list: Value = serde_json::from_slice(&o.stdout).expect("tc -j prints JSON");
    list.as_array()
        .and_then(|l| l.iter().find(|q| q["root"] == true).cloned())
        .unwrap_or_else(|| panic!("no root qdisc on {ns}/{ifname}: {list}"))
}

fn up(lab: &Lab, topology: &str, shape: &str) -> Output {
    lab.bring_up(topology, &["--shape", shape])
}

fn status_shape(lab: &Lab) -> Value {
    json_of(&run(&["lab", "status", "--json", "--prefix", &lab.prefix]))["shape"].clone()
}

/// Bits per second at p2, from the kernel receive stamps of the frames that
/// arrived (counting what tbf counts: the frame without its FCS), and how
/// many arrived.
fn received_rate(csv: &std::path::Path) -> (f64, usize) {
    let (h, rows) = read_csv(csv);
    let (rx, p, lost) = (
        col(&h, "rx_kernel_ns"),
        col(&h, "payload_bytes"),
        col(&h, "lost"),
    );
    let mut got: Vec<(i64, i64)> = rows
        .iter()
        .filter(|r| r[lost] == Some(0))
        .map(|r| {
            (
                r[rx].expect("a received frame has an RX stamp"),
                14 + r[p].unwrap(),
            )
        })
        .collect();
    got.sort();
    assert!(got.len() > 10, "only {} frames arrived", got.len());
    let span_ns = got.last().unwrap().0 - got[0].0;
    let bits: i64 = got[1..].iter().map(|(_, b)| b * 8).sum();
    (bits as f64 * 1e9 / span_ns as f64, got.len())
}

#[test]
#[ignore = "needs root (network namespaces)"]
fn a_shaped_switch_passes_its_rate_and_drops_the_rest() {
    need_root!();
    let lab = Lab::new("sh", "r");
    let o = up(&lab, "switch", "20M,queue=24K");
    assert!(o.status.success(), "lab up --shape: {}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("shape: tbf on") && out.contains("rate 20 Mbit/s"),
        "lab up does not show the shape: {out}"
    );
    let sut = format!("{}sut", lab.prefix);

    // The kernel's view: a tbf at 2 500 000 bytes/s on s2 (towards p2) only.
    let q = root_qdisc(&sut, "s2");
    assert_eq!(q["kind"], "tbf", "{q}");
    assert_eq!(q["options"]["rate"], 2_500_000, "{q}");
    assert_eq!(q["options"]["burst"], 2500, "{q}");
    assert_ne!(root_qdisc(&sut, "s1")["kind"], "tbf", "s1 is shaped too");
    let s = status_shape(&lab);
    assert_eq!(s["rate_bps"], 20_000_000, "{s}");
    assert_eq!(s["queue_bytes"], 24 * 1024, "{s}");
    assert_eq!(s["burst_bytes"], 2500, "{s}");
    assert_eq!(
        (&s["qdisc"], &s["interface"]),
        (&"tbf".into(), &"s2".into())
    );
    assert_eq!(
        (&s["netns"], &s["towards"]),
        (&sut.clone().into(), &"p2".into())
    );

    // Real frames: 3000 × 1514 bytes at 10 000 frames/s offer about
    // 121 Mbit/s; the shape lets 20 Mbit/s through and drops the rest.
    let csv = lab.path("shaped.csv");
    let args = [
        "--count",
        "3000",
        "--rate",
        "10000",
        "--sizes",
        "1500",
        "--json",
        "--frames",
        csv.to_str().unwrap(),
    ];
    let v = json_of(&lab.oneway(&args));
    let (sent, lost) = (
        v["totals"]["sent"].as_u64().unwrap(),
        v["totals"]["lost"].as_u64().unwrap(),
    );
    let (rate, received) = received_rate(&csv);
    eprintln!("shaped: sent {sent}, received {received}, lost {lost}, rate at p2 {rate:.0} bit/s");
    assert!(
        (18e6..=21e6).contains(&rate),
        "frames reached p2 at {rate:.0} bit/s, not the shaped 20 Mbit/s"
    );
    assert!(lost * 2 > sent, "only {lost} of {sent} lost above the rate");
    let c = &status_shape(&lab)["counters"];
    eprintln!("tbf counters: {c}");
    let (tbf_sent, tbf_dropped) = (
        c["sent_packets"].as_u64().unwrap(),
        c["dropped"].as_u64().unwrap(),
    );
    assert!(
        tbf_dropped >= lost,
        "tbf dropped {tbf_dropped}, fewer than the {lost} frames lost"
    );
    assert!(
        tbf_sent >= received as u64,
        "tbf sent {tbf_sent}, fewer than the {received} frames received"
    );
    assert!(c["overlimits"].as_u64().unwrap() > 0, "{c}");

    // `--shape none` removes it: the same offer now arrives (nearly) whole.
    let o = up(&lab, "switch", "none");
    assert!(o.status.success(), "--shape none: {}", stderr(&o));
    assert_ne!(root_qdisc(&sut, "s2")["kind"], "tbf");
    assert_eq!(status_shape(&lab), Value::Null);
    let csv = lab.path("unshaped.csv");
    let mut args = args;
    args[8] = csv.to_str().unwrap();
    let v = json_of(&lab.oneway(&args));
    let free_lost = v["totals"]["lost"].as_u64().unwrap();
    let (free_rate, _) = received_rate(&csv);
    eprintln!("unshaped: lost {free_lost}, rate at p2 {free_rate:.0} bit/s");
    assert!(
        free_lost * 10 < lost,
        "unshaped still lost {free_lost} (shaped {lost})"
    );
    assert!(free_rate > 40e6, "unshaped only {free_rate:.0} bit/s");
}

#[test]
fn bad_shapes_fail_before_anything_is_built() {
    let lab = Lab::new("sh", "b");
    let cases: [(&str, &str, i32, &str); 9] = [
        ("switch", "0", 5, "below the lowest, 8 kbit/s"),
        ("switch", "5T", 5, "above the highest, 100 Gbit/s"),
        (
            "switch",
            "10M,queue=x",
            2,
            "queue `x` is not a size in bytes",
        ),
        (
            "switch",
            "10M,queue=100",
            5,
            "queue 100 bytes is below the lowest",
        ),
        ("switch", "10M,delay=5ms", 2, "unknown key `delay`"),
        ("hosts", "20M", 2, "the hosts topology has nothing to shape"),
        (
            "direct",
            "20M",
            2,
            "the direct topology has nothing to shape",
        ),
        (
            "switch",
            "20M,qdisc=fq_codel",
            2,
            "qdisc=fq_codel applies to --topology routed",
        ),
        ("routed", "20M,qdisc=red", 2, "unknown qdisc `red`"),
    ];
    for (topology, shape, code, says) in cases {
        let o = up(&lab, topology, shape);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(code), "{topology} {shape}: {err}");
        assert!(
            err.contains(says),
            "{topology} --shape {shape}: `{err}` does not say `{says}`"
        );
    }
    let o = std::process::Command::new("ip")
        .args(["netns", "list"])
        .output()
        .expect("ip netns list");
    let list = String::from_utf8_lossy(&o.stdout);
    assert!(
        !list.contains(&lab.prefix),
        "a refused --shape built namespaces: {list}"
    );
}
