//! How `misura rtt` waits (issue 10): without `--busy-poll`, a UDP session
//! blocks in the receive itself and a wake-up timer ends the wait. A reply
//! that never comes must not hold the next probe back, and the TX stamps
//! read after the replies must still reach every answered probe. Runs on
//! loopback, no root needed.

#[macro_use]
mod common;

use common::*;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// `misura reflect` on 127.0.0.1:`port`, answering `rate` requests per
/// second per source; killed when dropped.
struct Reflector(Child);

impl Reflector {
    fn start(port: u16, rate: u32) -> Reflector {
        Reflector::start_with(port, rate, &[])
    }

    fn start_with(port: u16, rate: u32, extra: &[&str]) -> Reflector {
        let child = misura()
            .args(["reflect", "--listen", "127.0.0.1", "--port"])
            .arg(port.to_string())
            .args(extra)
            .args(["--rate-limit", &rate.to_string(), "--no-store", "-q"])
            .args(["--duration", "30s"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting misura reflect");
        // Up once it answers: bounded by the rtt's own "no reply" error.
        std::thread::sleep(Duration::from_millis(300));
        Reflector(child)
    }
}

impl Drop for Reflector {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn udp_port() -> u16 {
    std::net::UdpSocket::bind("127.0.0.1:0")
        .and_then(|s| s.local_addr())
        .expect("binding 127.0.0.1:0")
        .port()
}

/// The reflector answers about one probe in five: the lost ones wait on
/// the timer, and still every probe leaves on the 10 ms grid.
#[test]
fn lost_replies_do_not_hold_the_next_probe_back() {
    let port = udp_port();
    let _r = Reflector::start(port, 20);
    let dir = TempDir::new("rtt-wait");
    let frames = dir.path("probes.csv");
    let t0 = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_misura"))
        .args(["rtt", &format!("127.0.0.1:{port}"), "--count", "100"])
        .args(["--period", "10ms", "--timeout", "300ms", "--json", "-q"])
        .args(["--no-store", "--frames", frames.to_str().unwrap()])
        .output()
        .expect("running misura rtt");
    let took = t0.elapsed();
    let v = json_of(&out);
    let t = &v["totals"];
    let lost = t["lost"].as_u64().unwrap();
    let received = t["received"].as_u64().unwrap();
    assert_eq!(t["sent"], 100, "{t}");
    assert!(lost >= 30, "the rate limit should drop many probes: {t}");
    assert!(received >= 5, "{t}");
    assert_eq!(
        t["tx_stamp_missing"], 0,
        "TX stamps read after the replies: {t}"
    );
    assert!(took < Duration::from_secs(10), "took {took:?}");

    let (h, rows) = read_csv(&frames);
    let (tx1, seq) = (col(&h, "tx1_ns"), col(&h, "seq"));
    // Measured probes are numbered after the warm-up's.
    let first = rows.iter().min_by_key(|r| r[seq]).expect("a probe row");
    let (start, seq0) = (first[tx1].unwrap(), first[seq].unwrap());
    let mut worst = 0i64;
    for r in &rows {
        let late = r[tx1].unwrap() - start - (r[seq].unwrap() - seq0) * 10_000_000;
        worst = worst.max(late.abs());
    }
    // The backstop alone (no timer) would make sends tens of ms late.
    assert!(
        worst < 20_000_000,
        "a probe left {:.1} ms off its 10 ms grid",
        worst as f64 / 1e6
    );
}

/// `--timestamps user` at both ends: the result says every stamp is the
/// user clock, gives the user RTT and no kernel or network RTT (nothing
/// made up), and reads no TX stamp.
#[test]
fn user_clock_stamps_give_the_user_rtt_only() {
    let port = udp_port();
    let _r = Reflector::start_with(port, 100_000, &["--timestamps", "user"]);
    let out = Command::new(env!("CARGO_BIN_EXE_misura"))
        .args(["rtt", &format!("127.0.0.1:{port}"), "--count", "50"])
        .args(["--period", "2ms", "--json", "-q", "--no-store"])
        .args(["--timestamps", "user"])
        .output()
        .expect("running misura rtt");
    let v = json_of(&out);
    let ts = &v["timestamps"];
    assert_eq!(ts["client_tx"], "user clock", "{ts}");
    assert_eq!(ts["client_rx"], "user clock", "{ts}");
    assert_eq!(ts["reflector_rx"], "control plane", "{ts}");
    assert_eq!(v["totals"]["received"], 50);
    assert_eq!(v["totals"]["follow_ups"], 0);
    let o = &v["overall"];
    assert!(o["user_rtt"]["median_ns"].as_i64().unwrap() > 0, "{o}");
    assert!(o["kernel_rtt"].is_null(), "{o}");
    assert!(o["network_rtt"].is_null(), "{o}");
    // The reflector's user-clock turnaround: its clock after the receive to
    // its clock before the reply, never 0 by construction.
    assert!(o["turnaround"]["min_ns"].as_i64().unwrap() > 0, "{o}");
    schema_check(&v, "rtt.schema.json");
}

/// Raw probes always take kernel stamps: the flag is refused by name.
#[test]
fn user_clock_stamps_are_refused_for_raw_probes() {
    let o = run(&[
        "rtt",
        "--l2",
        "--interface",
        "lo",
        "--peer",
        "02:00:00:00:00:01",
        "--timestamps",
        "user",
        "--no-store",
    ]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--timestamps user"), "{err}");
}
