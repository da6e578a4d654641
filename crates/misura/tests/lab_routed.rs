//! `misura lab up --topology routed --shape …` (issue 12): host 1 — router
//! — host 2 with the bottleneck on the router. Under a UDP overload from h1,
//! a large tbf queue adds its drain time to the round trip; a small queue
//! keeps it to a few milliseconds. (Which direction grew needs the clock
//! offset from an idle phase: that is `misura load`'s part, not this test's.)
//! fq_codel is used where the kernel has it and refused by name where not.

#[macro_use]
mod common;

use common::*;
use serde_json::Value;
use std::process::{Command, Stdio};

const H2: &str = "198.18.1.2";

fn up(lab: &Lab, shape: &str) -> std::process::Output {
    lab.routed(shape)
}

/// The network RTT median (µs) of `misura rtt` from h1 while h1 overloads
/// the path towards h2 with 40 Mbit/s of UDP.
fn loaded_rtt(lab: &mut Lab) -> f64 {
    // The server may still be starting: a client that ends at once (refused)
    // is tried again.
    let ns1 = lab.ns(1);
    let mut tries = 0;
    loop {
        let mut udp = misura()
            .args(["--no-store", "udp", H2, "--netns", &ns1, "--rate", "40M"])
            .args(["--duration", "6s", "-q"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(1500));
        match udp.try_wait().unwrap() {
            None => {
                lab.children.push(udp);
                break;
            }
            Some(st) => {
                let mut e = String::new();
                let _ = std::io::Read::read_to_string(&mut udp.stderr.take().unwrap(), &mut e);
                tries += 1;
                assert!(tries < 5, "the UDP load did not start ({st}): {e}");
            }
        }
    }
    let o = misura()
        .args(["--no-store", "rtt", H2, "--netns", &ns1, "--count", "40"])
        .args(["--period", "50ms", "--timeout", "2s", "--json", "-q"])
        .output()
        .unwrap();
    let v: Value = json_of(&o);
    v["overall"]["network_rtt"]["median_ns"]
        .as_f64()
        .unwrap_or(f64::NAN)
        / 1000.0
}

#[test]
#[ignore = "needs root: network namespaces"]
fn a_bloated_router_queue_adds_its_drain_time_and_a_small_one_does_not() {
    need_root!();
    let _one = one_at_a_time();
    let mut lab = Lab::new("routed", "q");
    let o = up(&lab, "20M,queue=500K");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let status = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        status.contains("routed") && status.contains("204.8 ms"),
        "{status}"
    );
    let r = lab.ns(1).replace("h1", "r");
    for server in ["serve", "reflect"] {
        lab.server(2, server);
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    // 500 KB at 20 Mbit/s drains in 205 ms: the overloaded queue adds that.
    let rtt = loaded_rtt(&mut lab);
    assert!(rtt > 150_000.0 && rtt < 260_000.0, "network RTT {rtt} µs");
    // A 16 KB queue: 6.6 ms at most.
    let o = up(&lab, "20M,queue=16K");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rtt = loaded_rtt(&mut lab);
    assert!(rtt < 15_000.0, "network RTT {rtt} µs behind a 16 KB queue");
    // fq_codel: built where the kernel has it, refused by name where not.
    let o = up(&lab, "20M,qdisc=fq_codel");
    let tc = Command::new("ip")
        .args(["netns", "exec", &r, "tc", "qdisc", "show", "dev", "r2"])
        .output()
        .unwrap();
    let qdiscs = String::from_utf8_lossy(&tc.stdout).to_string();
    if o.status.success() {
        assert!(qdiscs.contains("fq_codel"), "{qdiscs}");
        let rtt = loaded_rtt(&mut lab);
        assert!(rtt < 20_000.0, "network RTT {rtt} µs behind fq_codel");
    } else {
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(e.contains("no fq_codel queueing discipline"), "{e}");
        assert!(!qdiscs.contains("tbf"), "a half shape was left: {qdiscs}");
    }
}
