//! `misura udp` against `misura serve` on loopback (no root needed): the
//! paced sender reaches the asked rate, reports its CPU use and how it kept
//! pace (issue 10, paced UDP), in both directions.

mod common;

use common::{json_of as json, misura, schema_check, LocalServe};
use serde_json::Value;

/// `misura udp` against `server`, not kept in any store.
fn udp(server: &LocalServe, extra: &[&str]) -> std::process::Output {
    misura()
        .args(["udp", &server.target(), "--no-store", "-q"])
        .args(extra)
        .output()
        .expect("running misura udp")
}

fn u(v: &Value, k: &str) -> u64 {
    v[k].as_u64()
        .unwrap_or_else(|| panic!("{k} missing in {v}"))
}

fn f(v: &Value, k: &str) -> f64 {
    v[k].as_f64()
        .unwrap_or_else(|| panic!("{k} missing in {v}"))
}

/// The checks both directions share: the rate reached within a generous
/// bound (a loaded test host may lose a little), the schedule's count,
/// the pacer's figures, the client's CPU.
fn check_paced(d: &Value, sender: &str, rate: f64, secs: f64) {
    schema_check(d, "udp.schema.json");
    let c = &d["clients"][0];
    assert_eq!(c["complete"], true, "{c}");
    let got = f(d, "throughput_bps");
    assert!(
        got > 0.7 * rate && got < 1.1 * rate,
        "received {got} bit/s for {rate} asked: {c}"
    );
    let p = &c["pacing"];
    assert_eq!(p["sender"], sender, "{p}");
    assert_eq!(p["method"], "clock_nanosleep");
    // 1472-byte datagrams: the schedule's gap, exactly.
    assert!(
        (f(p, "target_gap_ns") - 1472.0 * 8e9 / rate).abs() < 1.0,
        "{p}"
    );
    // What the schedule handed out over the run, within 10 % (the run's
    // ends are the sender's own measure of its duration).
    let expected = rate * secs / (1472.0 * 8.0);
    let scheduled = (u(p, "scheduled") + u(p, "skipped")) as f64;
    assert!(
        (scheduled - expected).abs() < 0.1 * expected,
        "scheduled {scheduled}, expected {expected}: {p}"
    );
    assert!(u(p, "wakeups") > 0 && u(p, "bursts") > 0, "{p}");
    assert!(u(p, "max_burst") >= 1);
    assert!(p["behind_p50_ns"].as_i64().unwrap() >= 0);
    assert!(p["gap_p50_ns"].as_i64().is_some() && p["gap_p99_ns"].as_i64().is_some());
    // The client's CPU over the test: some, and at most all of one CPU.
    let cpu = &c["cpu_local"];
    assert!(u(cpu, "user_ns") + u(cpu, "system_ns") > 0, "{cpu}");
    let pct = f(cpu, "utilisation_pct");
    assert!(pct > 0.0 && pct <= 110.0, "{cpu}");
}

#[test]
fn paced_udp_reaches_the_rate_and_reports_cpu_and_pacing() {
    let server = LocalServe::start(&[]);
    let d = json(&udp(
        &server,
        &["--rate", "200M", "--duration", "2s", "--json"],
    ));
    check_paced(&d, "client", 200e6, 2.0);
    let c = &d["clients"][0];
    assert_eq!(c["receiver"], "server");
    // The datagrams the pacer handed out are the ones sent (or failed).
    let p = &c["pacing"];
    assert_eq!(
        u(p, "scheduled"),
        u(c, "sent_packets") + u(c, "send_errors"),
        "{c}"
    );

    // The text says the same in words.
    let o = udp(&server, &["--rate", "50M", "--duration", "1s"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("pacing (client, clock_nanosleep): "),
        "{text}"
    );
    assert!(text.contains("wake-ups, margin "), "{text}");
    assert!(text.contains("spacing: gap p50 "), "{text}");
    assert!(text.contains("% of one CPU"), "{text}");

    // --pacing spin: every datagram at its own time, said in the result.
    let d = json(&udp(
        &server,
        &[
            "--rate",
            "20M",
            "--duration",
            "1s",
            "--pacing",
            "spin",
            "--json",
        ],
    ));
    schema_check(&d, "udp.schema.json");
    assert_eq!(d["config"]["pacing"], "spin");
    assert_eq!(d["clients"][0]["pacing"]["method"], "clock_nanosleep+spin");
}

#[test]
fn reverse_paced_udp_reports_the_servers_pacing() {
    let server = LocalServe::start(&[]);
    let d = json(&udp(
        &server,
        &["--rate", "200M", "--duration", "2s", "--reverse", "--json"],
    ));
    check_paced(&d, "server", 200e6, 2.0);
    assert_eq!(d["config"]["pacing"], "sleep");
    let c = &d["clients"][0];
    assert_eq!(c["receiver"], "client");
    // Sends the kernel refused (ENOBUFS) were scheduled but not counted sent.
    assert!(u(&c["pacing"], "scheduled") >= u(c, "sent_packets"), "{c}");
}
