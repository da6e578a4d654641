//! `misura tcp`, `udp`, `rr`, `setup`, `sweep` and `--clients` against
//! `misura serve` on the lab hosts topology (issue 5, "Tests a client runs").

#[macro_use]
mod common;
use common::*;
use serde_json::Value;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// The server's address, host 2's.
const H2: &str = "198.18.0.2";

/// `misura serve --netns h2 --listen 198.18.0.2 --quiet EXTRA…` in the
/// background, killed with the lab.
fn serve(lab: &mut Lab, extra: &[&str]) {
    let ns2 = lab.ns(2);
    let child = misura()
        .args(["serve", "--netns", &ns2, "--listen", H2, "--quiet"])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    lab.children.push(child);
}

/// A lab with `misura serve` running in host 2 (198.18.0.2).
fn lab_with_server(tag: &str) -> Lab {
    let mut lab = Lab::up("tp", tag, "hosts");
    serve(&mut lab, &[]);
    // Wait until the port answers.
    let t = Instant::now();
    loop {
        let o = client(&lab, &["rr", "198.18.0.2", "--duration", "100ms", "--json"]);
        if o.status.success() {
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "misura serve did not come up: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    lab
}

fn client(lab: &Lab, args: &[&str]) -> std::process::Output {
    let ns1 = lab.ns(1);
    let mut v: Vec<&str> = args.to_vec();
    v.extend_from_slice(&["--netns", &ns1, "-q"]);
    if args[0] == "sweep" {
        // the sweep passes --netns on to its runs
    }
    run(&v)
}

/// `misura TEST 198.18.0.2 EXTRA… --json` from host 1: its result (misura
/// failing fails the test).
fn result(lab: &Lab, test: &str, extra: &[&str]) -> Value {
    let mut args = vec![test, H2];
    args.extend_from_slice(extra);
    args.push("--json");
    json_of(&client(lab, &args))
}

/// `misura sweep tcp 198.18.0.2 --netns h1 SWEPT VALUES --duration DURATION
/// EXTRA…`.
fn sweep(lab: &Lab, [swept, values, duration]: [&str; 3], extra: &[&str]) -> std::process::Output {
    let ns1 = lab.ns(1);
    let mut args = vec![
        "sweep",
        "tcp",
        H2,
        "--netns",
        &ns1,
        swept,
        values,
        "--duration",
        duration,
    ];
    args.extend_from_slice(extra);
    run(&args)
}

/// Its stderr, once `o`'s exit code is asserted to be `code`.
fn exited(o: &std::process::Output, code: i32) -> String {
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(code), "{err}");
    err
}

fn f(v: &Value, k: &str) -> f64 {
    v[k].as_f64()
        .unwrap_or_else(|| panic!("{k} missing in {v}"))
}

fn u(v: &Value, k: &str) -> u64 {
    v[k].as_u64()
        .unwrap_or_else(|| panic!("{k} missing in {v}"))
}

#[test]
#[ignore = "needs root: network namespaces"]
fn tcp_udp_rr_setup_sweep_and_clients() {
    need_root!();
    let lab = lab_with_server("a");

    // TCP forward: the server counted every byte the client sent.
    let t = result(&lab, "tcp", &["--duration", "1s", "--streams", "2"]);
    schema_check(&t, "tcp.schema.json");
    let c = &t["clients"][0];
    assert!(t["complete"].as_bool().unwrap(), "{t}");
    assert!(f(&t, "throughput_bps") > 0.0);
    assert_eq!(
        u(c, "receiver_bytes"),
        u(c, "sent_bytes"),
        "receiver figures match the sender's"
    );
    assert_eq!(c["streams"].as_array().unwrap().len(), 2);
    assert!(u(&c["streams"][0], "sndbuf_granted") > 0);
    // The server reads a forward test's streams in one loop (hub.rs): each
    // stream's own count still matches what was sent on it.
    for s in c["streams"].as_array().unwrap() {
        assert!(u(s, "sent_bytes") > 0, "{s}");
        assert_eq!(u(s, "receiver_bytes"), u(s, "sent_bytes"), "{s}");
    }

    // TCP reverse and bidir.
    let t = result(&lab, "tcp", &["--duration", "1s", "--reverse"]);
    schema_check(&t, "tcp.schema.json");
    let c = &t["clients"][0];
    assert_eq!(
        u(c, "received_bytes"),
        u(&c["server"], "bytes_sent"),
        "client received what the server sent"
    );
    let t = result(&lab, "tcp", &["--duration", "1s", "--bidir"]);
    schema_check(&t, "tcp.schema.json");
    assert!(f(&t["clients"][0], "forward_bps") > 0.0 && f(&t["clients"][0], "reverse_bps") > 0.0);

    // UDP at a modest rate: received = sent, no loss.
    let d = result(&lab, "udp", &["--rate", "20M", "--duration", "1s"]);
    schema_check(&d, "udp.schema.json");
    let c = &d["clients"][0];
    assert!(u(c, "sent_packets") > 1000);
    assert!(u(c, "received_packets") <= u(c, "sent_packets"));
    assert_eq!(
        u(c, "lost"),
        u(c, "sent_packets") - u(c, "received_packets")
    );
    assert_eq!(u(c, "lost"), 0, "{c}");
    assert!(f(&d, "throughput_bps") > 15e6);
    let d = result(
        &lab,
        "udp",
        &["--rate", "20M", "--duration", "1s", "--reverse"],
    );
    schema_check(&d, "udp.schema.json");
    assert_eq!(u(&d["clients"][0], "lost"), 0);

    // Don't fragment above the MTU: nothing arrives, and it is said.
    let df = [
        "udp",
        H2,
        "--rate",
        "10M",
        "--msg-size",
        "2000",
        "--df",
        "--duration",
        "1s",
    ];
    let o = client(&lab, &df);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("nothing arrives above the path MTU of 1500 bytes with don't-fragment set"),
        "{text}"
    );
    // Not a result of 0 bit/s that exits 0: an error naming the size, the
    // path MTU and what to do (issue 26).
    let err = exited(&o, 1);
    assert!(
        err.contains("--msg-size 2000 with --df")
            && err.contains("path MTU of 1500 bytes")
            && err.contains("Use --msg-size 1472 or less"),
        "{err}"
    );
    let o = client(&lab, &[&df[..], &["--json"]].concat());
    assert_eq!(o.status.code(), Some(1));
    let d: serde_json::Value = serde_json::from_slice(&o.stdout).expect("the result, written");
    schema_check(&d, "udp.schema.json");
    assert_eq!(u(&d["clients"][0], "received_packets"), 0);
    assert_eq!(u(&d["clients"][0], "path_mtu"), 1500);

    // rr: tcp, udp, crr.
    for extra in [&["--proto", "tcp"][..], &["--proto", "udp"], &["--connect"]] {
        let r = result(&lab, "rr", &[&["--duration", "1s"][..], extra].concat());
        schema_check(&r, "rr.schema.json");
        assert!(f(&r, "transactions_per_s") > 0.0, "{extra:?}: {r}");
        if extra == ["--connect"] {
            assert!(r["clients"][0]["connect"]["count"].as_u64().unwrap() > 0);
        }
    }

    // crr for 2 s: no connection refused or reset (lost), and the server
    // closes each connection after its transaction (its open fds do not
    // grow with the number of transactions).
    let pid = lab.children[0].id();
    let fds = move || {
        std::fs::read_dir(format!("/proc/{pid}/fd"))
            .map(|d| d.count())
            .unwrap_or(0)
    };
    let fds0 = fds();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sampler = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut max = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                max = fds().max(max);
                std::thread::sleep(Duration::from_millis(50));
            }
            max
        })
    };
    let r = result(
        &lab,
        "rr",
        &[
            "--proto",
            "tcp",
            "--connect",
            "--request",
            "1",
            "--response",
            "1",
            "--duration",
            "2s",
        ],
    );
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let max_fds = sampler.join().unwrap();
    let c = &r["clients"][0];
    assert_eq!(u(c, "lost"), 0, "crr connections lost: {r}");
    assert!(u(c, "transactions") > 100, "{r}");
    // A few in passing (a handler ending while the next is accepted);
    // holding them until the test's end made thousands.
    assert!(
        max_fds <= fds0 + 32,
        "server fds grew from {fds0} to {max_fds} over {} transactions",
        u(c, "transactions")
    );

    // Two clients at once: both complete, the sum is the sum.
    let t = result(&lab, "tcp", &["--duration", "1s", "--clients", "2"]);
    schema_check(&t, "tcp.schema.json");
    let cl = t["clients"].as_array().unwrap();
    assert_eq!(cl.len(), 2);
    assert!(cl.iter().all(|c| c["complete"].as_bool().unwrap()), "{t}");
    let sum: f64 = cl.iter().map(|c| f(c, "throughput_bps")).sum();
    assert!((sum - f(&t, "throughput_bps")).abs() < 1.0);
    for c in cl {
        assert_eq!(
            u(&c["server"], "bytes"),
            u(c, "sent_bytes"),
            "the server's RESULT for each client equals what it sent"
        );
    }

    // Sweep: one row per value.
    let csv = lab.path("sweep.csv");
    let o = sweep(
        &lab,
        ["--msg-size", "100,1000,10000", "500ms"],
        &["--json", "-q", "--export-csv", csv.to_str().unwrap()],
    );
    let s = json_of(&o);
    let pts = s["points"].as_array().unwrap();
    assert_eq!(pts.len(), 3);
    assert_eq!(pts[1]["parameter"], "msg-size");
    assert_eq!(pts[1]["value"], "1000");
    assert!(pts
        .iter()
        .all(|p| p["figures"]["throughput_bps"].as_f64().unwrap() > 0.0));
    let text = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(text.lines().count(), 4);
    let o = sweep(&lab, ["--streams", "1..2", "300ms"], &["-q"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).lines().count(),
        4,
        "title, header, 2 rows"
    );

    // Setup: a table per gap.
    let s = result(&lab, "setup", &["--idle", "0s,200ms", "--count", "2"]);
    assert_eq!(s["gaps"].as_array().unwrap().len(), 2);
    assert!(s["gaps"][0]["handshake_mean_ns"].as_f64().unwrap() > 0.0);
    assert!(s["gaps"][1]["samples"][0]["first_rtt_ns"].as_u64().unwrap() > 0);
}

#[test]
#[ignore = "needs root: network namespaces"]
fn unreachable_and_bad_input() {
    need_root!();
    let lab = Lab::up("tp", "b", "hosts");
    // Nobody listens: one clear line, exit 1.
    let o = client(&lab, &["tcp", "198.18.0.2", "--duration", "1s"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("cannot reach misura serve at 198.18.0.2:5862: connection refused"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    // Bad parameters: exit 5; usage: exit 2.
    for (args, code) in [
        (&["udp", H2, "--rate", "10M", "--msg-size", "10"][..], 5),
        (&["rr", H2, "--proto", "udp", "--connect"], 2),
        (&["tcp", H2, "--duration", "soon"], 2),
    ] {
        assert_eq!(client(&lab, args).status.code(), Some(code), "{args:?}");
    }
}

#[test]
#[ignore = "needs root: network namespaces"]
fn refusal_reason_reaches_the_user_and_a_lost_server_gives_partial_results() {
    need_root!();
    let mut lab = Lab::up("tp", "c", "hosts");
    serve(&mut lab, &["--max-duration", "5s"]);
    std::thread::sleep(Duration::from_millis(500));
    // Above the announced limit: exit 5 with the limit named.
    let o = client(&lab, &["tcp", H2, "--duration", "10s"]);
    assert!(exited(&o, 5).contains("limit of 5.0 s"));
    // The server dies mid-test: the client ends within its timeouts, partial.
    let ns1 = lab.ns(1);
    let t0 = Instant::now();
    let c = misura()
        .args([
            "tcp",
            "198.18.0.2",
            "--duration",
            "4s",
            "--json",
            "-q",
            "--netns",
            &ns1,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1000));
    for s in &mut lab.children {
        let _ = s.kill();
    }
    let o = c.wait_with_output().unwrap();
    assert!(t0.elapsed() < Duration::from_secs(25));
    exited(&o, 1);
    let v: Value = serde_json::from_slice(&o.stdout).expect("partial JSON");
    assert_eq!(v["complete"], false);
    schema_check(&v, "tcp.schema.json");
}
