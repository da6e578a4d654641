//! `misura clock tsc`: against CLOCK_MONOTONIC_RAW on the plain host; seed
//! 003's NTP method against chrony serving from a lab namespace (needs root
//! and /usr/sbin/chronyd: ignored by a plain `cargo test`); and the specific messages
//! for servers that do not help (fake servers on 127.0.0.1, no root needed).

mod common;

use common::*;
use serde_json::Value;
use std::net::UdpSocket;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

#[test]
#[cfg_attr(
    not(target_arch = "x86_64"),
    ignore = "needs an x86-64 CPU: the TSC is x86's"
)]
fn monotonic_raw_estimate_is_sane() {
    let started = Instant::now();
    let v = json_of(&run(&[
        "clock",
        "tsc",
        "--duration",
        "2s",
        "--windows",
        "5",
        "--json",
        "-q",
    ]));
    assert!(started.elapsed() < Duration::from_secs(30));
    schema_check(&v, "clock-tsc.schema.json");
    let raw = &v["raw"];
    let f = raw["endpoints"]["frequency_hz"].as_f64().unwrap();
    assert!(f > 100e6 && f < 10e9, "TSC frequency {f} Hz");
    let fit = raw["fit"]["frequency_hz"].as_f64().unwrap();
    let bound = raw["endpoints"]["bound_hz"].as_f64().unwrap();
    assert!(
        (fit - f).abs() <= bound + 3.0 * raw["fit"]["ci95_hz"].as_f64().unwrap(),
        "fit {fit} vs endpoints {f} ± {bound}"
    );
    let stab = &raw["stability"];
    assert_eq!(stab["windows"], 5);
    assert!(
        stab["std_dev_ppm"].as_f64().unwrap().is_finite()
            && stab["spread_ppm"].as_f64().unwrap() < 1000.0
    );
    let span = raw["endpoints"]["span_s"].as_f64().unwrap();
    assert!((1.9..2.2).contains(&span), "span {span}");
    assert!(v["ntp"].is_null() && v["complete"] == true);
    // Human output names the flags and says whether the kernel's figure is known.
    let o = run(&["clock", "tsc", "--duration", "200ms", "-q"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success());
    assert!(
        text.contains("constant_tsc")
            && text.contains("kernel calibration:")
            && text.contains("stability over"),
        "{text}"
    );
}

/// A fake NTP server on 127.0.0.1 answering every datagram with `reply(request)`.
fn fake_server(reply: fn(&[u8]) -> Vec<u8>) -> (u16, std::thread::JoinHandle<()>) {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(8))).unwrap();
    let port = sock.local_addr().unwrap().port();
    let h = std::thread::spawn(move || {
        let mut buf = [0u8; 512];
        while let Ok((n, from)) = sock.recv_from(&mut buf) {
            let _ = sock.send_to(&reply(&buf[..n]), from);
        }
    });
    (port, h)
}

/// A server reply to `req` with the given first byte (LI/VN/mode) and stratum.
fn reply_with(req: &[u8], li_vn_mode: u8, stratum: u8, refid: [u8; 4]) -> Vec<u8> {
    let mut r = vec![0u8; 48];
    r[0] = li_vn_mode;
    r[1] = stratum;
    r[3] = 0xe6;
    r[12..16].copy_from_slice(&refid);
    r[24..32].copy_from_slice(&req[40..48]);
    r[32..40].copy_from_slice(&req[40..48]);
    r[40..48].copy_from_slice(&req[40..48]);
    r
}

fn ntp_failure(server: &str) -> (Option<i32>, String, String) {
    let o = run(&[
        "clock",
        "tsc",
        "--ntp",
        server,
        "--interval",
        "50ms",
        "--count",
        "4",
        "-q",
    ]);
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn servers_that_do_not_help_get_specific_messages() {
    type Reply = fn(&[u8]) -> Vec<u8>;
    let cases: [(Reply, &str); 4] = [
        (
            |_| b"hello, this is not NTP".to_vec(),
            "are not NTP server replies",
        ),
        (|q| reply_with(q, 0x24, 0, *b"RATE"), "Kiss-o'-Death `RATE`"),
        (
            |q| reply_with(q, 0xe4, 2, [10, 0, 0, 1]),
            "not synchronised",
        ),
        (
            |q| reply_with(q, 0x23, 2, [10, 0, 0, 1]),
            "are not NTP server replies",
        ),
    ];
    for (reply, expect) in cases {
        let (port, _h) = fake_server(reply);
        let (code, out, err) = ntp_failure(&format!("127.0.0.1:{port}"));
        assert_eq!(code, Some(1), "{expect}: {err}");
        assert!(err.contains(expect), "expected `{expect}` in: {err}");
        // The rest of the report is still printed.
        assert!(
            out.contains("Against CLOCK_MONOTONIC_RAW") && out.contains("error:"),
            "{out}"
        );
    }
    // Nothing listening: the port is closed.
    let closed = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let (code, _, err) = ntp_failure(&format!("127.0.0.1:{port}"));
    assert_eq!(code, Some(1));
    assert!(err.contains("no NTP server listens"), "{err}");
    // Listening but silent: a timeout.
    let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
    let (code, _, err) = ntp_failure(&format!(
        "127.0.0.1:{}",
        silent.local_addr().unwrap().port()
    ));
    assert_eq!(code, Some(1));
    assert!(
        err.contains("no answer from NTP server") && err.contains("4 requests"),
        "{err}"
    );
    // A name that does not resolve.
    let (code, _, err) = ntp_failure("no-such-host.invalid");
    assert_eq!(code, Some(5), "{err}");
    assert!(
        err.contains("cannot resolve NTP server `no-such-host.invalid`"),
        "{err}"
    );
}

/// The lab's two hosts with chronyd serving NTP from h2 (`local stratum 1`,
/// `-x`: it never touches the clock). Everything is torn down in Drop.
struct ChronyLab {
    prefix: String,
    dir: PathBuf,
    chronyd: Option<Child>,
}

impl ChronyLab {
    fn new() -> ChronyLab {
        let prefix = format!("misura-ts{}-", std::process::id() % 100_000);
        let dir = std::env::temp_dir().join(format!("misura-tsc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut lab = ChronyLab {
            prefix,
            dir,
            chronyd: None,
        };
        let o = run(&["lab", "up", "--topology", "hosts", "--prefix", &lab.prefix]);
        assert!(
            o.status.success(),
            "lab up: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let conf = chrony_conf(&lab.dir);
        let child = Command::new("ip")
            .args(["netns", "exec", &lab.ns(2), CHRONYD, "-d", "-x", "-f"])
            .arg(&conf)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting chronyd");
        lab.chronyd = Some(child);
        lab
    }
    fn ns(&self, i: u8) -> String {
        format!("{}h{i}", self.prefix)
    }

    /// `misura clock tsc --ntp` from h1 against chronyd in h2: COUNT
    /// requests INTERVAL apart, JSON on stdout.
    fn ntp_estimate(&self, interval: &str, count: &str) -> Output {
        let ns = self.ns(1);
        run(&[
            "clock",
            "tsc",
            "--netns",
            &ns,
            "--ntp",
            "198.18.0.2",
            "--interval",
            interval,
            "--count",
            count,
            "--json",
            "-q",
        ])
    }
}

impl Drop for ChronyLab {
    fn drop(&mut self) {
        if let Some(c) = &mut self.chronyd {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = run(&["lab", "down", "--prefix", &self.prefix]);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
#[ignore = "needs root and chronyd (apt-get install chrony)"]
fn ntp_estimate_agrees_with_monotonic_raw_in_the_lab() {
    require_root();
    require_file(CHRONYD, "apt-get install chrony");
    let lab = ChronyLab::new();
    // chronyd answers once it has bound its socket: wait for a stratum-1
    // reply (bounded), which also checks it serves as configured.
    let deadline = Instant::now() + Duration::from_secs(10);
    let ready = loop {
        let o = lab.ntp_estimate("100ms", "2");
        if o.status.success() {
            break serde_json::from_slice::<Value>(&o.stdout).ok();
        }
        if Instant::now() > deadline {
            break None;
        }
        std::thread::sleep(Duration::from_millis(300));
    };
    let ready = ready.expect("chronyd in the lab did not answer within 10 s");
    assert_eq!(
        ready["ntp"]["stratum"], 1,
        "chrony should serve stratum 1: {}",
        ready["ntp"]
    );

    let started = Instant::now();
    let o = lab.ntp_estimate("200ms", "40");
    assert!(started.elapsed() < Duration::from_secs(60));
    let v = json_of(&o);
    schema_check(&v, "clock-tsc.schema.json");
    let n = &v["ntp"];
    assert!(n["replies"].as_u64().unwrap() >= 30, "{n}");
    assert_eq!(n["stratum"], 1);
    let e = &n["estimate"];
    let f = e["frequency_hz"].as_f64().unwrap();
    let raw = n["raw_same_period"]["frequency_hz"].as_f64().unwrap();
    let c = &n["comparison"];
    let diff = c["difference_ppm"].as_f64().unwrap();
    let bound = c["combined_bound_ppm"].as_f64().unwrap();
    eprintln!(
        "NTP {f:.1} Hz ± {:.3} ppm, RAW {raw:.1} Hz, difference {diff:+.3} ppm (bound {bound:.3}), REALTIME vs RAW {} ppm",
        e["bound_ppm"], n["realtime_vs_raw_ppm"]
    );
    assert!(
        e["span_s"].as_f64().unwrap() > 3.0,
        "the chosen exchanges should be far apart: {e}"
    );
    assert!(bound < 200.0, "uncertainty implausibly large: {bound} ppm");
    assert_eq!(
        c["within_uncertainty"], true,
        "NTP and MONOTONIC_RAW disagree: {diff:+.3} ppm against ± {bound:.3} ppm"
    );
    assert!(diff.abs() <= bound);
}
