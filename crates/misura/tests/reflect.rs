//! `misura reflect` on the lab's hosts topology: a real reflector process in
//! `{prefix}h2` answering STAMP requests crafted here, from a thread that
//! entered `{prefix}h1`. Needs root: a plain `cargo test` lists these as
//! ignored. Every loop is bounded in count and time.

mod common;

use common::{misura, require_root, run};
use misura_measure::auth::{hmac16, StampKey};
use misura_wire::stamp::{
    emit_tlvs, from_wire, timestamp_method, ErrorEstimate, Mode, ReflectorRepr, SenderRepr,
    StampReflectorPacket, StampTimestampFormat, TimestampInfo, TlvFlags, TlvRepr, Tlvs,
};
use serde_json::Value;
use std::net::{SocketAddr, UdpSocket};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const H2: &str = "198.18.0.2";

/// The hosts lab with a unique prefix, taken down on drop.
struct Lab {
    prefix: String,
}

impl Lab {
    fn up(tag: &str) -> Lab {
        let prefix = format!("misura-rf{}{tag}-", std::process::id());
        let lab = Lab { prefix };
        let o = run(&["lab", "up", "--topology", "hosts", "--prefix", &lab.prefix]);
        assert!(
            o.status.success(),
            "lab up: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        lab
    }
    fn ns(&self, h: &str) -> String {
        format!("{}{h}", self.prefix)
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        let _ = run(&["lab", "down", "--prefix", &self.prefix]);
    }
}

/// A reflector child, killed on drop if the test did not stop it.
struct Reflector {
    child: Option<Child>,
}

impl Reflector {
    fn start(lab: &Lab, port: u16, extra: &[&str]) -> Reflector {
        let ns = lab.ns("h2");
        let port = port.to_string();
        let child = misura()
            .args([
                "reflect", "--netns", &ns, "--listen", H2, "--port", &port, "--quiet", "--json",
            ])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starting misura reflect");
        Reflector { child: Some(child) }
    }

    /// SIGTERM; the exit code, how long it took, the counters it printed.
    fn terminate(&mut self) -> (Option<i32>, Duration, Value, String) {
        let child = self.child.take().unwrap();
        let pid = child.id();
        let t0 = Instant::now();
        assert!(Command::new("kill")
            .arg("-15")
            .arg(pid.to_string())
            .status()
            .unwrap()
            .success());
        let deadline = t0 + Duration::from_secs(10);
        let mut child = child;
        loop {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "misura reflect did not stop after SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        let took = t0.elapsed();
        let o = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&o.stdout).to_string();
        let v: Value = serde_json::from_str(&stdout)
            .unwrap_or_else(|e| panic!("counters JSON: {e}\n{stdout}"));
        (
            o.status.code(),
            took,
            v,
            String::from_utf8_lossy(&o.stderr).to_string(),
        )
    }
}

impl Drop for Reflector {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Runs `f` on a thread inside `ns` (namespaces are per thread).
fn in_netns<T: Send + 'static>(ns: String, f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::spawn(move || {
        misura_sys::netns::enter(&ns).expect("entering the h1 namespace");
        f()
    })
    .join()
    .expect("the test thread panicked")
}

fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as i64
}

/// A Session-Sender packet with Timestamp Information and Follow-Up
/// Telemetry TLVs (and an HMAC TLV in authenticated mode), signed with `key`.
fn request(seq: u32, mode: Mode, key: Option<&StampKey>) -> Vec<u8> {
    let mut buf = vec![0u8; 512];
    let fmt = StampTimestampFormat::Ntp;
    let n = SenderRepr {
        seq,
        timestamp: misura_wire::stamp::to_wire(now_ns(), fmt),
        error_estimate: ErrorEstimate::new(false, fmt, 0, 1),
        ssid: 7,
        hmac: (mode == Mode::Authenticated).then_some([0; 16]),
    }
    .emit(&mut buf)
    .unwrap();
    let mut tlvs = vec![
        TlvRepr::TimestampInformation {
            flags: TlvFlags::SENDER,
            info: TimestampInfo::default(),
            sub_tlvs: &[],
        },
        TlvRepr::FollowUpTelemetry {
            flags: TlvFlags::SENDER,
            seq: 0,
            timestamp: [0; 8],
            mode: 0,
        },
    ];
    if mode == Mode::Authenticated {
        tlvs.push(TlvRepr::Hmac {
            flags: TlvFlags::SENDER,
            hmac: [0; 16],
        });
    }
    let len = n + emit_tlvs(&tlvs, &mut buf[n..]).unwrap();
    buf.truncate(len);
    if let Some(key) = key {
        if let Some(c) = misura_wire::stamp::tlv_hmac_covered(&buf, mode) {
            let tag = hmac16(key, &[&buf[c.seq.clone()], &buf[c.tlvs.clone()]]);
            buf[c.hmac].copy_from_slice(&tag);
        }
        let tag = hmac16(key, &[&buf[..96]]);
        buf[96..112].copy_from_slice(&tag);
    }
    buf
}

fn socket(port: u16) -> UdpSocket {
    let s = UdpSocket::bind(("198.18.0.1", port)).expect("binding in h1");
    s.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    s
}

/// Sends `req` and waits up to `wait` for one reply.
fn exchange(s: &UdpSocket, to: SocketAddr, req: &[u8], wait: Duration) -> Option<Vec<u8>> {
    s.send_to(req, to).unwrap();
    let deadline = Instant::now() + wait;
    let mut buf = [0u8; 2048];
    while Instant::now() < deadline {
        if let Ok((n, from)) = s.recv_from(&mut buf) {
            assert_eq!(from, to, "reply from the address the request went to");
            return Some(buf[..n].to_vec());
        }
    }
    None
}

/// Waits until the reflector answers (it starts asynchronously); returns
/// how many requests that took.
fn wait_ready(s: &UdpSocket, to: SocketAddr, mode: Mode, key: Option<&StampKey>) -> u64 {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut sent = 0;
    while Instant::now() < deadline {
        sent += 1;
        if exchange(s, to, &request(1, mode, key), Duration::from_millis(200)).is_some() {
            return sent;
        }
    }
    panic!("the reflector did not answer within 10 s");
}

fn tlvs(reply: &[u8], mode: Mode) -> Vec<TlvRepr<'_>> {
    let p = StampReflectorPacket::new_checked(reply, mode).unwrap();
    let base = p.mode().base_len();
    Tlvs::new(&reply[base..]).map(Result::unwrap).collect()
}

#[test]
#[ignore = "needs root: network namespaces"]
fn reflector_on_the_hosts_lab() {
    require_root();
    let lab = Lab::up("");
    let mut refl = Reflector::start(&lab, 8620, &[]);
    let to: SocketAddr = format!("{H2}:8620").parse().unwrap();

    let sent = in_netns(lab.ns("h1"), move || {
        let mut total = 0u64;
        let mut valid = 0u64;
        let ready = socket(0);
        // Probes sent before the socket was bound are not received (and not
        // counted); the one answered is.
        let _ = wait_ready(&ready, to, Mode::Unauthenticated, None);
        total += 1;
        valid += 1;

        // A fresh source: its first reply has no follow-up, every later one
        // carries the previous reply's sequence number and TX stamp.
        let s = socket(0);
        let mut prev: Option<(u32, i64)> = None;
        for k in 0..50u32 {
            let req = request(1000 + k, Mode::Unauthenticated, None);
            let reply = exchange(&s, to, &req, Duration::from_secs(2))
                .unwrap_or_else(|| panic!("no reply to {k}"));
            total += 1;
            valid += 1;
            assert_eq!(reply.len(), req.len(), "symmetric size");
            let r = ReflectorRepr::parse(&reply, Mode::Unauthenticated).unwrap();
            assert_eq!(r.seq, 1000 + k, "stateless: the sender's seq");
            assert_eq!(r.sender_seq, 1000 + k);
            assert_eq!(r.ssid, 7);
            assert_eq!(r.sender_ttl, 64, "one hop on a veth");
            let fmt = r.error_estimate.format();
            assert_eq!(fmt, StampTimestampFormat::Ntp);
            let rx = from_wire(r.receive_timestamp, fmt);
            let tx = from_wire(r.timestamp, fmt);
            assert!(rx <= tx, "receive {rx} after transmit {tx}");
            assert!(tx - rx < 1_000_000_000, "turnaround {} ns", tx - rx);
            let t = tlvs(&reply, Mode::Unauthenticated);
            let TlvRepr::TimestampInformation { info, flags, .. } = t[0] else {
                panic!("{t:?}")
            };
            assert!(!flags.contains(TlvFlags::U) && !flags.contains(TlvFlags::M));
            assert_eq!(
                info.timestamp_in,
                timestamp_method::SW_LOCAL,
                "kernel software RX stamp"
            );
            let TlvRepr::FollowUpTelemetry {
                seq,
                timestamp,
                mode,
                ..
            } = t[1]
            else {
                panic!("{t:?}")
            };
            match prev {
                None => assert_eq!(mode, 0, "first reply: no follow-up"),
                Some((pseq, prx)) => {
                    assert_eq!(
                        mode,
                        timestamp_method::SW_LOCAL,
                        "reply {k} lacks a follow-up"
                    );
                    assert_eq!(seq, pseq);
                    let ftx = from_wire(timestamp, fmt);
                    assert!(ftx >= prx, "follow-up TX {ftx} before its RX {prx}");
                }
            }
            prev = Some((r.seq, rx));
        }

        // Garbage: 3 bytes, then 10 000 random datagrams shorter than a
        // STAMP packet (any 44 bytes are a valid unauthenticated request).
        let g = socket(0);
        g.send_to(&[1, 2, 3], to).unwrap();
        total += 1;
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut dgram = [0u8; 43];
        for i in 0..10_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = (x % 44) as usize;
            for b in dgram.iter_mut() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *b = x as u8;
            }
            g.send_to(&dgram[..len], to).unwrap();
            total += 1;
            // Pace bursts so the reflector's socket buffer does not overflow
            // and every datagram is counted.
            if i % 100 == 99 {
                std::thread::sleep(Duration::from_millis(2));
            }
        }
        let mut buf = [0u8; 64];
        g.set_read_timeout(Some(Duration::from_millis(500)))
            .unwrap();
        assert!(g.recv_from(&mut buf).is_err(), "garbage got a reply");

        // From the reflector's own port: looks like another reflector.
        let same_port = socket(8620);
        assert!(exchange(
            &same_port,
            to,
            &request(5, Mode::Unauthenticated, None),
            Duration::from_millis(300)
        )
        .is_none());
        total += 1;

        // Still serving.
        let after = exchange(
            &s,
            to,
            &request(2000, Mode::Unauthenticated, None),
            Duration::from_secs(2),
        );
        assert!(after.is_some(), "no reply after the garbage");
        total += 1;
        valid += 1;
        (total, valid)
    });

    let (code, took, v, stderr) = refl.terminate();
    assert_eq!(code, Some(143), "{stderr}");
    assert!(took < Duration::from_secs(2), "stopping took {took:?}");
    let c = &v["counters"];
    let (total, valid) = sent;
    assert_eq!(c["received"].as_u64(), Some(total), "{v}");
    assert_eq!(c["replied"].as_u64(), Some(valid), "{v}");
    assert_eq!(c["too_short"].as_u64(), Some(10_001), "{v}");
    assert_eq!(c["looks_like_reply"].as_u64(), Some(1), "{v}");
    assert_eq!(v["dropped"].as_u64(), Some(total - valid), "{v}");
    assert_eq!(v["rx_timestamps"], "kernel software");
}

#[test]
#[ignore = "needs root: network namespaces"]
fn authenticated_reflector_on_the_hosts_lab() {
    require_root();
    let lab = Lab::up("a");
    let dir = std::env::temp_dir().join(format!("misura-rf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let key_path = dir.join("stamp.key");
    std::fs::write(&key_path, "00112233445566778899aabbccddeeff\n").unwrap();
    let key = StampKey::from_file_contents(b"00112233445566778899aabbccddeeff").unwrap();
    let mut refl = Reflector::start(&lab, 8621, &["--key-file", key_path.to_str().unwrap()]);
    let to: SocketAddr = format!("{H2}:8621").parse().unwrap();

    let k2 = key.clone();
    in_netns(lab.ns("h1"), move || {
        let s = socket(0);
        let _ = wait_ready(&s, to, Mode::Authenticated, Some(&k2));
        // Wrong key: no reply.
        let wrong = StampKey::new(b"not the key").unwrap();
        assert!(exchange(
            &s,
            to,
            &request(10, Mode::Authenticated, Some(&wrong)),
            Duration::from_millis(500)
        )
        .is_none());
        // Unauthenticated packet to an authenticated reflector: no reply.
        assert!(exchange(
            &s,
            to,
            &request(11, Mode::Unauthenticated, None),
            Duration::from_millis(300)
        )
        .is_none());
        // Right key: a reply whose HMACs verify.
        let req = request(12, Mode::Authenticated, Some(&k2));
        let reply =
            exchange(&s, to, &req, Duration::from_secs(2)).expect("no reply to a signed request");
        assert_eq!(reply.len(), req.len());
        let r = ReflectorRepr::parse(&reply, Mode::Authenticated).unwrap();
        assert_eq!(r.sender_seq, 12);
        assert_eq!(hmac16(&k2, &[&reply[..96]]), reply[96..112], "base HMAC");
        let c =
            misura_wire::stamp::tlv_hmac_covered(&reply, Mode::Authenticated).expect("HMAC TLV");
        assert_eq!(
            hmac16(&k2, &[&reply[c.seq.clone()], &reply[c.tlvs.clone()]]),
            reply[c.hmac.clone()],
            "TLV HMAC"
        );
        assert!(tlvs(&reply, Mode::Authenticated)
            .iter()
            .all(|t| !t.flags().contains(TlvFlags::I)));
    });

    let (code, _, v, stderr) = refl.terminate();
    assert_eq!(code, Some(143), "{stderr}");
    let c = &v["counters"];
    assert_eq!(c["auth_failed"].as_u64(), Some(2), "{v}");
    assert_eq!(c["replied"].as_u64(), Some(2), "{v}");
    assert_eq!(c["received"].as_u64(), Some(1 + 3), "{v}");
    assert_eq!(v["mode"], "authenticated");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--timestamps hardware` where no NIC can stamp: refused before anything
/// listens, naming what to do (a wildcard address names no interface; lo
/// has no hardware stamps). No root needed.
#[test]
fn hardware_stamps_without_a_nic_that_has_them_are_refused_clearly() {
    let refused = |args: &[&str]| {
        let o = misura()
            .args([
                "--no-store",
                "reflect",
                "--port",
                "8697",
                "--duration",
                "1s",
            ])
            .args(args)
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (code, err) = refused(&["--timestamps", "hardware"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--interface IF"), "{err}");
    let (code, err) = refused(&["--listen", "127.0.0.1", "--timestamps", "hardware"]);
    assert_ne!(code, Some(0), "{err}");
    assert!(
        err.contains("`lo`") && err.contains("--timestamps kernel"),
        "{err}"
    );
}
