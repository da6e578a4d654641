//! Round trips between two lab hosts: `misura reflect` in one namespace,
//! `misura rtt` in the other, over UDP (STAMP), raw Ethernet probes and the
//! authenticated mode; and against another implementation (stamp-suite).
//! Needs root (and stamp-suite): a plain `cargo test` lists these as ignored.

#[macro_use]
mod common;

use common::*;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Every probe: network < kernel < user RTT, positive turnaround, forward +
/// backward = network RTT, and precise follow-up stamps for all but the last.
fn check_probes(csv: &Path, expect_follow_up: bool) -> usize {
    let (h, rows) = read_csv(csv);
    let (user, kernel, net, turn) = (
        col(&h, "user_rtt_ns"),
        col(&h, "kernel_rtt_ns"),
        col(&h, "network_rtt_ns"),
        col(&h, "turnaround_ns"),
    );
    let (fwd, back, lost, precise) = (
        col(&h, "forward_ns"),
        col(&h, "backward_ns"),
        col(&h, "lost"),
        col(&h, "reflector_tx_precise"),
    );
    for c in ["seq", "request_bytes", "response_bytes"] {
        col(&h, c);
    }
    let n = rows.len();
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r[lost], Some(0), "probe {i} lost");
        let (u, k, nw, t) = (
            r[user].unwrap(),
            r[kernel].unwrap(),
            r[net].unwrap(),
            r[turn].unwrap(),
        );
        assert!(t > 0, "turnaround {t} in {r:?}");
        assert!(
            nw < k && k < u,
            "expected network < kernel < user: {nw} {k} {u}"
        );
        if let (Some(f), Some(b)) = (r[fwd], r[back]) {
            // The offset cancels in the sum: exact up to rounding.
            assert!(
                (f + b - nw).abs() <= 1,
                "forward {f} + backward {b} != network {nw}"
            );
        }
        if expect_follow_up && i + 1 < n {
            assert_eq!(r[precise], Some(1), "probe {i} has no follow-up stamp");
        }
    }
    n
}

/// `misura rtt ARGS --count COUNT --period 5ms --json` from host 1: its
/// result (misura failing fails the test).
fn probe(h: &Lab, count: &str, args: &[&str]) -> serde_json::Value {
    probe_every(h, "5ms", count, args)
}

/// `misura rtt ARGS --count COUNT --period PERIOD --json` from host 1.
fn probe_every(h: &Lab, period: &str, count: &str, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["--count", count, "--period", period, "--json"];
    all.extend_from_slice(args);
    json_of(&h.rtt(&all))
}

/// `misura reflect --listen 198.18.0.2 --port PORT EXTRA…` in host 2, up.
fn reflector_on(h: &mut Lab, port: &str, extra: &[&str]) {
    let mut args = vec!["--listen", "198.18.0.2", "--port", port];
    args.extend_from_slice(extra);
    h.reflector(&args);
}

/// A key file `name` in the lab's directory holding `hex`.
fn key_file(h: &Lab, name: &str, hex: &str) -> std::path::PathBuf {
    let key = h.path(name);
    std::fs::write(&key, format!("{hex}\n")).unwrap();
    key
}

/// stamp-suite (at `ss`) in host `host` with ARGS (its reflector:
/// [`stamp_suite_reflector`]).
fn stamp_suite(h: &Lab, ss: &Path, host: u8, args: &[&str]) -> Command {
    let mut c = Command::new("ip");
    c.args(["netns", "exec", &h.ns(host)]).arg(ss).args(args);
    c
}

/// stamp-suite reflecting on 198.18.0.2:PORT in host 2 (EXTRA… for its
/// authenticated mode), killed with the lab.
fn stamp_suite_reflector(h: &mut Lab, ss: &Path, port: &str, extra: &[&str]) {
    let mut argv = vec![ss.to_str().unwrap(), "-i", "-S", "198.18.0.2", "-o", port];
    argv.extend_from_slice(extra);
    h.peer(2, &argv);
    std::thread::sleep(Duration::from_millis(500));
}

/// stamp-suite sending 10 packets to 198.18.0.2:PORT from host 1: whether
/// it succeeded, and what it printed (stdout, then stderr).
fn stamp_suite_sender(h: &Lab, ss: &Path, port: &str, extra: &[&str]) -> (bool, String) {
    let o = stamp_suite(
        h,
        ss,
        1,
        &["-r", "198.18.0.2", "-p", port, "-c", "10", "-d", "10"],
    )
    .args(extra)
    .output()
    .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (o.status.success(), text)
}

#[test]
#[ignore = "needs root: network namespaces and raw sockets"]
fn udp_round_trips_between_lab_hosts() {
    need_root!();
    let mut h = Lab::up("rt", "u", "hosts");
    reflector_on(&mut h, "8620", &[]);
    let csv = h.path("probes.csv");
    let v = probe(
        &h,
        "200",
        &["198.18.0.2:8620", "--frames", csv.to_str().unwrap()],
    );
    assert_eq!(v["totals"]["received"], 200);
    assert_eq!(v["timestamps"]["client_tx"], "kernel software");
    assert_eq!(v["timestamps"]["reflector_two_step"], true);
    assert!(v["clock_offset"]["uncertainty_ns"].as_f64().unwrap() > 0.0);
    assert_eq!(check_probes(&csv, true), 200);
    schema_check(&v, "rtt.schema.json");
    // IPv6 too.
    h.reflector(&["--listen", "2001:2::2", "--port", "8621"]);
    let csv6 = h.path("probes6.csv");
    let v = probe(
        &h,
        "20",
        &["[2001:2::2]:8621", "--frames", csv6.to_str().unwrap()],
    );
    assert_eq!(v["totals"]["received"], 20);
    check_probes(&csv6, true);
}

#[test]
#[ignore = "needs root: network namespaces and raw sockets"]
fn raw_ethernet_round_trips() {
    need_root!();
    let mut h = Lab::up("rt", "l", "hosts");
    h.reflector(&["--l2", "m0"]);
    // misura's frames (auto on veth, which has no NIC stamps), then
    // PTP-wrapped ones: the same reflector (auto) answers each in its format.
    for (format, want) in [("auto", "misura"), ("ptp", "ptp")] {
        let csv = h.path(&format!("l2-{format}.csv"));
        let v = probe(
            &h,
            "100",
            &[
                "--l2",
                "--interface",
                "m0",
                "--peer",
                "02:6d:73:00:02:02",
                "--frame-format",
                format,
                "--frames",
                csv.to_str().unwrap(),
            ],
        );
        assert_eq!(v["config"]["transport"], "l2-probe");
        assert_eq!(v["config"]["frame_format"], want);
        assert_eq!(v["totals"]["received"], 100, "{format}: {}", v["totals"]);
        assert_eq!(v["totals"]["malformed_replies"], 0);
        check_probes(&csv, true);
        // The reflector's stamp source, as each raw reply stated it (issue
        // 36 item 11): on veth its kernel's, for every probe, counted.
        let t = &v["timestamps"];
        let n = v["totals"]["received"].clone();
        assert_eq!(t["reflector_rx"], "software", "{format}: {t}");
        assert_eq!(t["reflector_tx"], "software", "{format}: {t}");
        assert_eq!(
            t["reflector_rx_methods"],
            serde_json::json!({ "software": n }),
            "{t}"
        );
        assert_eq!(
            t["reflector_tx_methods"],
            serde_json::json!({ "software": n }),
            "{t}"
        );
        assert_eq!(t["reflector_two_step"], true, "{t}");
        schema_check(&v, "rtt.schema.json");
    }
}

#[test]
#[ignore = "needs root: network namespaces and raw sockets"]
fn authenticated_mode_and_wrong_key() {
    need_root!();
    let mut h = Lab::up("rt", "a", "hosts");
    let key = key_file(&h, "stamp.key", "00112233445566778899aabbccddeeff");
    let bad = key_file(&h, "bad.key", "ffeeddccbbaa99887766554433221100");
    reflector_on(&mut h, "8622", &["--key-file", key.to_str().unwrap()]);
    let v = probe(
        &h,
        "20",
        &["198.18.0.2:8622", "--key-file", key.to_str().unwrap()],
    );
    assert_eq!(v["config"]["authenticated"], true);
    assert_eq!(v["totals"]["received"], 20);
    let o = h.rtt(&[
        "198.18.0.2:8622",
        "--count",
        "5",
        "--period",
        "5ms",
        "--key-file",
        bad.to_str().unwrap(),
    ]);
    assert_ne!(o.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("no reply"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
#[ignore = "needs root: network namespaces and raw sockets"]
fn unreachable_reflector_is_named() {
    need_root!();
    let h = Lab::up("rt", "n", "hosts");
    let t = Instant::now();
    let o = h.rtt(&["198.18.0.2:8699", "--count", "3"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("port unreachable") || err.contains("no reply"),
        "{err}"
    );
    assert!(t.elapsed() < Duration::from_secs(10));
}

/// Another implementation (scripts/test.sh installs it):
/// stamp-suite as reflector for misura rtt, and as sender against misura reflect.
#[test]
#[ignore = "needs root and stamp-suite (cargo install --locked --root .tools stamp-suite)"]
fn interoperates_with_stamp_suite() {
    need_root!();
    let ss = require_tool(
        "stamp-suite",
        "cargo install --locked --root .tools stamp-suite",
    );
    let mut h = Lab::up("rt", "s", "hosts");
    // stamp-suite reflects for misura rtt.
    stamp_suite_reflector(&mut h, &ss, "8623", &[]);
    let v = probe(&h, "20", &["198.18.0.2:8623"]);
    assert_eq!(v["totals"]["received"], 20);
    assert!(v["overall"]["network_rtt"]["median_ns"].as_i64().unwrap() > 0);
    // stamp-suite sends to misura reflect.
    reflector_on(&mut h, "8624", &[]);
    let (ok, text) = stamp_suite_sender(&h, &ss, "8624", &[]);
    assert!(ok, "stamp-suite sender failed: {text}");
    assert!(text.contains("Packets received: 10"), "{text}");

    // Authenticated mode, both ways, with the same key.
    let hex = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
    let key = key_file(&h, "k.key", hex);
    stamp_suite_reflector(&mut h, &ss, "8625", &["-A", "A", "--hmac-key", hex]);
    let v = probe(
        &h,
        "10",
        &["198.18.0.2:8625", "--key-file", key.to_str().unwrap()],
    );
    assert_eq!(v["totals"]["received"], 10);
    reflector_on(&mut h, "8626", &["--key-file", key.to_str().unwrap()]);
    let (_, text) = stamp_suite_sender(&h, &ss, "8626", &["-A", "A", "--hmac-key", hex]);
    assert!(
        text.contains("Packets received: 10"),
        "authenticated stamp-suite sender: {text}"
    );
}

#[test]
#[ignore = "needs root: network namespaces and raw sockets"]
fn exchange_sequence_completes_every_cycle() {
    need_root!();
    let mut h = Lab::up("rt", "x", "hosts");
    let mut responder = h
        .exchange(2, &["--respond", "--duration", "30s"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let o = h
        .exchange(
            1,
            &[
                "--count",
                "200",
                "--period",
                "2ms",
                "--timeout",
                "50ms",
                "--json",
            ],
        )
        .output()
        .expect("running misura exchange");
    let _ = Command::new("kill")
        .arg(responder.id().to_string())
        .status();
    let _ = responder.wait();
    let v = json_of(&o);
    assert_eq!(v["completed"], 200, "{v}");
    let mean = |p: &str| v[p]["summary"]["mean_ns"].as_f64().unwrap();
    let min = |p: &str| v[p]["summary"]["min_ns"].as_i64().unwrap();
    assert!(min("t1") > 0 && mean("t1") <= mean("t2") && mean("t2") <= mean("t3"));
    assert!(v["t3_kernel"]["summary"]["count"].as_u64().unwrap() > 150);
    // The seed's counter is there.
    assert!(v["t3"]["summary"]["over_threshold"].is_u64());
    h.children.clear();
}

#[test]
#[ignore = "needs root: network namespaces and raw sockets"]
fn reflector_rate_limit_holds_per_source() {
    need_root!();
    let mut h = Lab::up("rt", "r", "hosts");
    reflector_on(&mut h, "8629", &["--rate-limit", "100"]);
    // 2000 probes/s for 0.25 s from one source: at most 100/s plus a burst of 10 pass.
    let v = json_of(&h.rtt(&[
        "198.18.0.2:8629",
        "--count",
        "500",
        "--rate",
        "2000",
        "--timeout",
        "200ms",
        "--json",
    ]));
    let received = v["totals"]["received"].as_u64().unwrap();
    assert!(
        (10..=10 + 100 + 10).contains(&received),
        "received {received} replies"
    );
    assert_eq!(v["totals"]["sent"], 500);
}

/// `--busy-poll` on both ends: every probe still complete with its
/// follow-up, and both results say that the loop spun (and what the kernel
/// said to SO_BUSY_POLL).
#[test]
#[ignore = "needs root: network namespaces"]
fn busy_polling_both_ends_is_measured_and_recorded() {
    need_root!();
    let mut h = Lab::up("rt", "b", "hosts");
    let refl_json = h.path("reflect.json");
    let json = refl_json.to_str().unwrap();
    reflector_on(
        &mut h,
        "8622",
        &[
            "--busy-poll",
            "--duration",
            "6s",
            "--no-store",
            "--export-json",
            json,
        ],
    );
    let csv = h.path("busy.csv");
    let v = probe(
        &h,
        "100",
        &[
            "198.18.0.2:8622",
            "--busy-poll",
            "--frames",
            csv.to_str().unwrap(),
        ],
    );
    assert_eq!(v["totals"]["received"], 100);
    assert_eq!(check_probes(&csv, true), 100);
    let bp = &v["host"]["tuning"]["busy_poll"];
    assert!(
        bp.is_object(),
        "rtt result says nothing of busy polling: {v}"
    );
    assert!(
        bp["so_busy_poll_us"].is_u64() != bp["so_busy_poll_error"].is_string(),
        "either SO_BUSY_POLL was set or why not: {bp}"
    );
    schema_check(&v, "rtt.schema.json");
    // The reflector ends at its --duration and writes its result.
    let r = reflector_result(&refl_json, Instant::now());
    assert!(r["host"]["tuning"]["busy_poll"].is_object(), "{r}");
    // Spinning, it asks for no scheduler slice.
    assert!(r["sched_slice_ns"].is_null(), "{r}");
    assert!(r["counters"]["replied"].as_u64().unwrap() >= 100, "{r}");
    schema_check(&r, "reflect.schema.json");
}

/// Without --busy-poll the reflector blocks in its receive (woken by the
/// kernel, giving up every 100 ms to look at the clock): it answers every
/// probe and still ends at its --duration.
#[test]
#[ignore = "needs root: network namespaces"]
fn a_blocking_reflector_sleeps_between_requests_and_ends_on_time() {
    need_root!();
    let mut h = Lab::up("rt", "s", "hosts");
    let refl_json = h.path("reflect.json");
    let json = refl_json.to_str().unwrap();
    let t0 = Instant::now();
    reflector_on(
        &mut h,
        "8623",
        &["--duration", "3s", "--no-store", "--export-json", json],
    );
    let v = probe_every(&h, "20ms", "50", &["198.18.0.2:8623"]);
    assert_eq!(v["totals"]["received"], 50);
    let r = reflector_result(&refl_json, t0);
    let ended = t0.elapsed();
    assert!(
        ended < Duration::from_secs(10),
        "reflector ended after {ended:?}"
    );
    assert!(r["host"]["tuning"]["busy_poll"].is_null(), "{r}");
    assert!(r["counters"]["replied"].as_u64().unwrap() >= 50);
    // Sleeping, it asked for a short scheduler slice: kept from Linux 6.12.
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    let mut v = release
        .trim()
        .split(['.', '-'])
        .map(|p| p.parse::<u32>().unwrap_or(0));
    let (major, minor) = (v.next().unwrap_or(0), v.next().unwrap_or(0));
    if (major, minor) >= (6, 12) {
        assert_eq!(r["sched_slice_ns"], 100_000, "{r}");
    } else {
        assert!(r["sched_slice_ns"].is_null(), "{r}");
    }
}

/// The JSON result a reflector with --export-json writes when it ends
/// (waited for at most 20 s after `t0`).
fn reflector_result(path: &Path, t0: Instant) -> serde_json::Value {
    loop {
        if let Ok(text) = std::fs::read_to_string(path) {
            if let Ok(v) = serde_json::from_str(&text) {
                return v;
            }
        }
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "no reflector result in {path:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
