//! What a new user meets in the first hour (issue 36): a duration without a
//! unit is refused, naming the reading and the fix; rtt's header shows the
//! schedule it runs; rtt against a port nothing listens on fails as soon as
//! the ICMP port unreachable comes back. On loopback, no root needed.

#[macro_use]
mod common;

use common::*;
use std::time::{Duration, Instant};

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A UDP port nothing listens on (bound, read, closed again).
fn closed_udp_port() -> u16 {
    std::net::UdpSocket::bind("127.0.0.1:0")
        .and_then(|s| s.local_addr())
        .expect("binding 127.0.0.1:0")
        .port()
}

#[test]
fn a_duration_without_a_unit_is_refused_by_every_command() {
    // One duration flag of several commands, each with a bare number.
    let cases: [&[&str]; 5] = [
        &["rtt", "127.0.0.1", "--period", "5"],
        &["rtt", "127.0.0.1", "--timeout", "2"],
        &["tcp", "127.0.0.1", "--duration", "10"],
        &["setup", "127.0.0.1", "--idle", "0s,1"],
        &["clock", "interference", "--duration", "3"],
    ];
    for args in cases {
        let o = run(args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("has no time unit"), "{args:?}: {err}");
        assert!(err.contains("ms` for"), "the fix is named: {args:?}: {err}");
    }
    // Zero needs no unit: it is zero in any.
    let o = run(&["rtt", "127.0.0.1:1", "--timeout", "0", "--count", "1"]);
    assert!(!stderr(&o).contains("has no time unit"), "{}", stderr(&o));
}

#[test]
fn rtt_fails_fast_on_port_unreachable() {
    let port = closed_udp_port();
    let t = Instant::now();
    let o = run(&[
        "rtt",
        &format!("127.0.0.1:{port}"),
        "--count",
        "3",
        "--no-store",
    ]);
    let took = t.elapsed();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("ICMP port unreachable"), "{err}");
    // Before: the 8 warm-up probes each waited out the 1 s timeout.
    assert!(took < Duration::from_secs(2), "took {took:?}: {err}");
}

#[test]
fn rtt_header_shows_the_schedule() {
    // A reflector on loopback for the run.
    let port = closed_udp_port();
    let mut r = misura()
        .args(["reflect", "--listen", "127.0.0.1", "--port"])
        .arg(port.to_string())
        .args(["--duration", "20s", "-q", "--no-store"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("starting misura reflect");
    std::thread::sleep(Duration::from_millis(300));
    let o = run(&[
        "rtt",
        &format!("127.0.0.1:{port}"),
        "--count",
        "20",
        "--period",
        "2ms",
        "--no-store",
    ]);
    let _ = r.kill();
    let _ = r.wait();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}{}", stderr(&o));
    let line = out
        .lines()
        .find(|l| l.starts_with("schedule:"))
        .unwrap_or_else(|| panic!("no schedule line in:\n{out}"));
    assert_eq!(
        line,
        "schedule: periodic, every 2.00 ms, 20 probes (about 40.00 ms); reply timeout 1.00 s"
    );
}

/// The `misura calibrate …` a calibration mismatch suggests, from stderr.
fn suggested_calibrate(stderr: &str) -> Vec<String> {
    let start = stderr
        .find("(misura calibrate")
        .unwrap_or_else(|| panic!("no suggested command in: {stderr}"));
    let rest = &stderr[start + 1..];
    let end = rest.find("), or pass").expect("the suggestion's end");
    rest[..end].split_whitespace().map(str::to_string).collect()
}

/// Every command a calibration mismatch suggests runs as pasted, on the
/// set-up that found the mismatch: swapped ports in the tester's namespace,
/// then a link speed given by hand. After each paste the run that
/// mismatched uses the new profile without complaint.
#[test]
#[ignore = "needs root: network namespaces and raw sockets"]
fn a_calibration_mismatch_suggests_a_command_that_runs_as_pasted() {
    need_root!();
    let lab = Lab::up("fh", "c", "direct");
    let t = lab.tester();
    let profile = lab.dir.join("cal.json");
    let p = profile.to_str().unwrap();
    // Short runs: the suggestion is the set-up; these only shorten it.
    let short = ["--count", "700", "--rate", "4000", "--no-store", "-q"];
    let o = misura()
        .args([
            "calibrate",
            "--netns",
            &t,
            "--tx",
            "p1",
            "--rx",
            "p2",
            "--profile",
            p,
        ])
        .args(short)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for setup in [
        &["--tx", "p2", "--rx", "p1"][..],
        &["--tx", "p1", "--rx", "p2", "--link-speed", "1G"][..],
    ] {
        let oneway = || {
            misura()
                .args(["oneway", "--netns", &t])
                .args(setup)
                .args(["--calibration", p, "--count", "20", "--no-store", "-q"])
                .output()
                .unwrap()
        };
        let o = oneway();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(7), "{setup:?}: {err}");
        let cmd = suggested_calibrate(&err);
        assert_eq!(&cmd[..2], ["misura", "calibrate"], "{cmd:?}");
        let pasted = misura().args(&cmd[1..]).args(short).output().unwrap();
        assert_eq!(
            pasted.status.code(),
            Some(0),
            "pasted {cmd:?}: {}",
            stderr(&pasted)
        );
        let again = oneway();
        assert_eq!(
            again.status.code(),
            Some(0),
            "{setup:?} after {cmd:?}: {}",
            stderr(&again)
        );
    }
}

/// Rewiring the lab from routed to hosts removes the router's namespace,
/// which the rewiring left without ports; `lab status` names the lab by its
/// namespaces' pattern, not by the bare prefix.
#[test]
#[ignore = "needs root: network namespaces"]
fn routed_to_hosts_leaves_no_router_namespace() {
    need_root!();
    let lab = Lab::new("fh", "r");
    let router = format!("{}r", lab.prefix);
    let exists = |ns: &str| std::path::Path::new("/run/netns").join(ns).exists();
    lab.topology("routed");
    assert!(exists(&router), "routed builds {router}");
    lab.topology("hosts");
    assert!(
        !exists(&router),
        "{router} stayed after lab up --topology hosts"
    );
    assert!(exists(&lab.ns(1)) && exists(&lab.ns(2)));
    let o = run(&["lab", "status", "--prefix", &lab.prefix]);
    let out = String::from_utf8_lossy(&o.stdout);
    let first = out.lines().next().unwrap_or_default().to_string();
    assert_eq!(
        first,
        format!(
            "lab, namespaces {0}*: tester not built; hosts cabled to each other ({0}h1 — {0}h2)",
            lab.prefix
        ),
        "{out}"
    );
}

/// A client that reads serve's HELLO and leaves (as `misura load` checks the
/// server before its first phase) is no malformed connection; one that sends
/// bytes that are no message still is.
#[test]
fn a_connection_that_only_looks_is_not_malformed() {
    use std::io::{Read, Write};
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free TCP port")
        .port();
    let serve = misura()
        .args([
            "serve",
            "--listen",
            &format!("127.0.0.1:{port}"),
            "-q",
            "--no-store",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("starting misura serve");
    let connect = || {
        for _ in 0..50 {
            if let Ok(s) = std::net::TcpStream::connect(("127.0.0.1", port)) {
                return s;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("misura serve did not listen on {port}");
    };
    let mut hello = [0u8; 16];
    let mut looks = connect();
    looks.read_exact(&mut hello).expect("serve's HELLO");
    drop(looks);
    let mut garbles = connect();
    garbles.read_exact(&mut hello).expect("serve's HELLO");
    garbles.write_all(&[0x5a; 64]).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    drop(garbles);
    std::thread::sleep(Duration::from_millis(300));
    // SIGTERM: serve prints its counts and exits.
    let _ = std::process::Command::new("kill")
        .arg(serve.id().to_string())
        .status();
    let out = serve.wait_with_output().expect("serve's output");
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &stderr(&out);
    let line = text
        .lines()
        .find(|l| l.starts_with("connections:"))
        .unwrap_or_else(|| panic!("no connections line in:\n{text}"));
    assert!(line.starts_with("connections: 2 accepted"), "{line}");
    assert!(line.contains(" 1 malformed"), "{line}");
}
