//! Interoperability with implementations written by others, between two lab
//! hosts: scapy's STAMP layer (scapy.contrib.stamp) as Session-Sender against
//! `misura reflect`, and Wireshark's TWAMP-Test dissector (tshark) decoding
//! what `misura rtt` and `misura reflect` put on the wire. Needs root and the
//! tools (scripts/test.sh installs them: scapy in the venv at .tools/venv), so
//! a plain `cargo test` lists these as ignored; run, they fail if a tool is
//! missing.

#[macro_use]
mod common;

use common::*;
use serde_json::Value;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Run a command, killing it if it outlives `limit` (then panicking).
fn run_bounded(cmd: &mut Command, limit: Duration) -> Output {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let t_out = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let t_err = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        v
    });
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} still running after {limit:?}: killed");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: t_out.join().unwrap(),
        stderr: t_err.join().unwrap(),
    }
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// scapy's STAMP Session-Sender (tests/interop/scapy_stamp.py) against
/// `misura reflect`: 20 probes with and without TLVs, replies dissected with
/// scapy's Session-Reflector class and checked; short packets unanswered.
#[test]
#[ignore = "needs root and scapy in .tools/venv (python3 -m venv .tools/venv && .tools/venv/bin/pip install scapy)"]
fn scapy_stamp_sender_against_misura_reflect() {
    need_root!();
    const INSTALL: &str = "python3 -m venv .tools/venv && .tools/venv/bin/pip install scapy";
    let python = repo_root().join(".tools/venv/bin/python");
    assert!(
        python.is_file(),
        "this test needs scapy in a venv, and {} is missing: {INSTALL}",
        python.display()
    );
    let probe = run_bounded(
        Command::new(&python).args(["-c", "import scapy.contrib.stamp"]),
        Duration::from_secs(60),
    );
    assert!(
        probe.status.success(),
        "this test needs scapy with its STAMP layer, and \
         `import scapy.contrib.stamp` failed: {}; {INSTALL}",
        text(&probe).trim()
    );
    let script = repo_root().join("tests/interop/scapy_stamp.py");
    let mut h = Lab::up("io", "s", "hosts");
    h.reflector(&["--listen", "198.18.0.2", "--port", "8627"]);
    let o = run_bounded(
        Command::new("ip")
            .args(["netns", "exec", &h.ns(1)])
            .arg(&python)
            .arg(&script)
            .args(["198.18.0.2", "8627", "20"]),
        Duration::from_secs(90),
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with('{'));
    assert!(
        o.status.success(),
        "scapy_stamp.py failed ({:?}): {}",
        o.status.code(),
        text(&o)
    );
    let v: Value =
        serde_json::from_str(line.expect("a JSON line from scapy_stamp.py")).expect("JSON");
    eprintln!("scapy: {v}");
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["sent"], 20, "{v}");
    assert_eq!(v["received"], 20, "{v}");
    assert!(v["with_tlvs"].as_u64().unwrap() > 0, "{v}");
    assert!(v["unknown_tlvs"].as_u64().unwrap() > 0, "{v}");
    assert_eq!(v["failures"].as_array().map(Vec::len), Some(0), "{v}");
    assert_eq!(v["hostile_sent"], 2, "{v}");
    assert_eq!(
        v["hostile_replied"].as_array().map(Vec::len),
        Some(0),
        "{v}"
    );
}

/// One capture in h2 while `misura rtt` runs from h1; returns the pcap file and
/// the number of probes sent (measured + warm-up).
fn capture_rtt(h: &Lab, name: &str, rtt_extra: &[&str]) -> (PathBuf, usize, usize) {
    let pcap = h.path(name);
    let _ = std::fs::remove_file(&pcap);
    // Bounded by -a duration; stopped with SIGINT once misura rtt is done.
    let mut tshark = Command::new("ip")
        .args([
            "netns",
            "exec",
            &h.ns(2),
            "tshark",
            "-i",
            "m0",
            "-f",
            "udp port 8628",
            "-a",
            "duration:60",
            "-w",
        ])
        .arg(&pcap)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn tshark");
    let kill = |t: &mut Child| {
        let _ = t.kill();
        let _ = t.wait();
    };
    // dumpcap writes the file header once it is capturing.
    let t0 = Instant::now();
    while std::fs::metadata(&pcap).map(|m| m.len()).unwrap_or(0) == 0 {
        if t0.elapsed() > Duration::from_secs(15) || tshark.try_wait().unwrap().is_some() {
            kill(&mut tshark);
            let mut e = String::new();
            let _ = tshark.stderr.take().unwrap().read_to_string(&mut e);
            panic!("tshark did not start capturing: {e}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    let ns1 = h.ns(1);
    let mut args = vec![
        "rtt",
        "--netns",
        &ns1,
        "-q",
        "198.18.0.2:8628",
        "--count",
        "20",
        "--period",
        "5ms",
        "--json",
    ];
    args.extend_from_slice(rtt_extra);
    let o = run_bounded(misura().args(&args), Duration::from_secs(30));
    if !o.status.success() {
        kill(&mut tshark);
        panic!("misura rtt failed: {}", text(&o));
    }
    let v: Value = serde_json::from_slice(&o.stdout).expect("rtt JSON");
    assert_eq!(v["totals"]["received"], 20, "{v}");
    let warmup = v["timestamps"]["warmup_probes"].as_u64().unwrap_or(0) as usize;
    std::thread::sleep(Duration::from_millis(500));
    // SIGINT: tshark flushes the file and exits.
    let _ = Command::new("kill")
        .args(["-INT", &tshark.id().to_string()])
        .status();
    let t0 = Instant::now();
    while tshark.try_wait().unwrap().is_none() {
        if t0.elapsed() > Duration::from_secs(10) {
            kill(&mut tshark);
            panic!("tshark did not stop on SIGINT");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    (pcap, 20, warmup)
}

fn tshark_read(pcap: &Path, extra: &[&str]) -> String {
    let o = run_bounded(
        Command::new("tshark")
            .arg("-r")
            .arg(pcap)
            .args(["-d", "udp.port==8628,twamp.test"])
            .args(extra),
        Duration::from_secs(60),
    );
    assert!(o.status.success(), "tshark -r failed: {}", text(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Every frame of a capture decodes as TWAMP-Test (STAMP's unauthenticated
/// mode is wire-compatible), requests and replies pair up, nothing malformed.
fn check_capture(pcap: &Path, probes: usize, payload: usize) {
    let fields = tshark_read(
        pcap,
        &[
            "-T",
            "fields",
            "-E",
            "separator=;",
            "-e",
            "frame.number",
            "-e",
            "frame.protocols",
            "-e",
            "ip.src",
            "-e",
            "udp.length",
            "-e",
            "twamp.test.seq_number",
            "-e",
            "twamp.test.sender_seq_number",
            "-e",
            "twamp.test.sender_ttl",
            "-e",
            "_ws.malformed",
            "-e",
            "_ws.expert.severity",
        ],
    );
    let rows: Vec<Vec<&str>> = fields.lines().map(|l| l.split(';').collect()).collect();
    assert_eq!(
        rows.len(),
        2 * probes,
        "frames in {}:\n{fields}",
        pcap.display()
    );
    let (mut requests, mut replies) = (Vec::new(), Vec::new());
    for r in &rows {
        assert_eq!(r.len(), 9, "{r:?}");
        assert!(
            r[1].ends_with(":udp:twamp.test"),
            "frame {} not decoded as TWAMP-Test: {}",
            r[0],
            r[1]
        );
        assert_eq!(r[3], (8 + payload).to_string(), "frame {} UDP length", r[0]);
        let seq: u32 = r[4]
            .parse()
            .unwrap_or_else(|_| panic!("frame {} has no sequence number: {r:?}", r[0]));
        assert!(
            r[7].is_empty() && r[8].is_empty(),
            "frame {} malformed / expert info: {r:?}",
            r[0]
        );
        match r[2] {
            "198.18.0.1" => requests.push(seq),
            "198.18.0.2" => {
                // Stateless reflector: its sequence number is the sender's.
                assert_eq!(r[5], r[4], "frame {}: reply seq vs sender seq", r[0]);
                assert_eq!(r[6], "64", "frame {}: sender TTL", r[0]);
                replies.push(seq);
            }
            other => panic!("frame {} from {other}", r[0]),
        }
    }
    assert_eq!(requests.len(), probes, "requests");
    assert_eq!(replies.len(), probes, "replies");
    let (mut a, mut b) = (requests.clone(), replies.clone());
    a.sort_unstable();
    b.sort_unstable();
    assert_eq!(a, b, "replies answer the requests");
    // Nothing malformed, no expert info at all.
    let bad = tshark_read(
        pcap,
        &[
            "-Y",
            "_ws.malformed || _ws.expert",
            "-T",
            "fields",
            "-e",
            "frame.number",
        ],
    );
    assert!(bad.trim().is_empty(), "malformed or expert frames: {bad}");
    let expert = tshark_read(pcap, &["-q", "-z", "expert"]);
    for sev in ["Errors", "Warnings", "Malformed"] {
        assert!(!expert.contains(sev), "tshark expert info: {expert}");
    }
}

/// Wireshark's TWAMP-Test dissector decodes misura's STAMP requests (default
/// 72 bytes with TLVs, seen as padding; and the 44-byte minimum) and the
/// reflector's replies without a malformed packet.
#[test]
#[ignore = "needs root and tshark (apt-get install tshark)"]
fn tshark_decodes_misura_stamp_as_twamp_test() {
    need_root!();
    require_tool("tshark", "apt-get install tshark");
    let mut h = Lab::up("io", "t", "hosts");
    h.reflector(&["--listen", "198.18.0.2", "--port", "8628"]);
    for (name, extra, payload) in [
        ("default.pcap", &[][..], 72),
        ("req44.pcap", &["--request", "44"][..], 44),
    ] {
        let (pcap, n, warmup) = capture_rtt(&h, name, extra);
        eprintln!("{name}: {n} probes + {warmup} warm-up");
        check_capture(&pcap, n + warmup, payload);
    }
}
