//! Issue 33's attacks on misura's own inputs and protocol, one regression
//! test each: a calibration profile beyond physics (item 10), a FIFO given
//! as an input file (item 11), a misura server that drips its messages
//! (item 7) or reports impossible figures (item 9), and a results store
//! with huge rows (item 13).

mod common;

use common::misura;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// A scratch directory of this test, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let d = std::env::temp_dir().join(format!(
            "misura-input-attacks-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Scratch(d)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn fixture_profile() -> serde_json::Value {
    let p = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../report/tests/fixtures/profile.json"
    );
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// Item 10: a profile whose values no cable and PC can give is refused
/// with exit 7 naming the field, before anything is opened or measured.
#[test]
fn calibration_values_beyond_a_cable_are_refused_naming_the_field() {
    let d = Scratch::new("profile");
    type Mutation = fn(&mut serde_json::Value);
    let cases: [(&str, Mutation); 5] = [
        ("user.alpha_ns", |p| p["user"]["alpha_ns"] = 1e308.into()),
        ("kernel.beta_ns_per_byte", |p| {
            p["kernel"]["beta_ns_per_byte"] = 1e15.into()
        }),
        ("user.points[0].mean_ns", |p| {
            p["user"]["points"][0]["mean_ns"] = (-1e300).into()
        }),
        ("link.rate_bps", |p| p["link"]["rate_bps"] = 0.into()),
        ("sizes[1]", |p| p["sizes"][1] = 1_000_000_000u64.into()),
    ];
    for (field, spoil) in cases {
        let mut p = fixture_profile();
        spoil(&mut p);
        let path = d.0.join("p.json");
        std::fs::write(&path, p.to_string()).unwrap();
        let o = oneway_with(&path);
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(7), "{field}: {e}");
        assert!(
            e.contains(&format!("{field} = ")) && e.contains("outside what a cable"),
            "{field}: {e}"
        );
    }
    // The fixture itself, a real calibration, passes this check (it fails
    // later, on the loopback ports it does not fit, or for want of root).
    let path = d.0.join("good.json");
    std::fs::write(&path, fixture_profile().to_string()).unwrap();
    let o = oneway_with(&path);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!e.contains("outside what a cable"), "{e}");
}

/// `misura oneway` on loopback with `profile` as its calibration.
fn oneway_with(profile: &std::path::Path) -> std::process::Output {
    misura()
        .args([
            "--no-store",
            "oneway",
            "--tx",
            "lo",
            "--rx",
            "lo",
            "--calibration",
        ])
        .arg(profile)
        .output()
        .unwrap()
}

/// Item 11: a FIFO given as a calibration profile (or as any file misura
/// reads) is refused at once; it blocked in open() before, deaf to SIGTERM.
#[test]
fn a_fifo_as_an_input_file_is_refused_at_once() {
    let d = Scratch::new("fifo");
    let fifo = d.0.join("fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo failed");
    let f = fifo.to_str().unwrap();
    for args in [
        &["oneway", "--tx", "lo", "--rx", "lo", "--calibration", f][..],
        &["rtt", "127.0.0.1", "--key-file", f],
        &["agent", "--config", f],
        &["report", f, "--html", "/dev/null"],
    ] {
        let t = Instant::now();
        let mut c = misura();
        c.arg("--no-store").args(args);
        let (code, e) = within(c, Duration::from_secs(20));
        assert!(code.is_some_and(|c| c != 0), "{args:?}: {code:?} {e}");
        assert!(e.contains("FIFO"), "{args:?}: {e}");
        assert!(t.elapsed() < Duration::from_secs(10), "{args:?}");
    }
}

/// Run `c` for at most `limit`; its exit code (None when it had to be
/// killed) and its stderr.
fn within(mut c: std::process::Command, limit: Duration) -> (Option<i32>, String) {
    let mut child = c
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    let code = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s.code();
        }
        if t.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut e = String::new();
    if let Some(mut s) = child.stderr.take() {
        use std::io::Read;
        let _ = s.read_to_string(&mut e);
    }
    (code, e)
}

/// A fake misura server on loopback that drips a valid HELLO one byte every
/// `every`; its address.
fn dripping_server(every: Duration) -> std::net::SocketAddr {
    use misura_wire::control::{Message, Value};
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let hello = Message::new(misura_wire::test_control::HELLO)
        .with(misura_wire::test_control::F_VERSION, Value::U64(1))
        .with(
            misura_wire::test_control::F_NONCE,
            Value::Bytes(vec![0; 16]),
        );
    let mut bytes = Vec::new();
    hello.emit(&mut bytes).unwrap();
    std::thread::spawn(move || {
        for c in l.incoming().take(4) {
            let Ok(mut c) = c else { continue };
            let bytes = bytes.clone();
            std::thread::spawn(move || {
                use std::io::Write;
                for b in bytes {
                    if c.write_all(&[b]).is_err() {
                        return;
                    }
                    std::thread::sleep(every);
                }
            });
        }
    });
    addr
}

/// Item 7: a server dripping HELLO a byte at a time held `misura tcp` past
/// 70 s, deaf to SIGTERM. Now a control message has one deadline for the
/// whole of it (10 s), and SIGTERM ends the wait at once.
#[test]
fn a_dripping_server_holds_no_client() {
    let addr = dripping_server(Duration::from_secs(1)).to_string();
    let t = Instant::now();
    let mut c = misura();
    c.args(["--no-store", "tcp", &addr, "--duration", "1s"]);
    let (code, e) = within(c, Duration::from_secs(40));
    assert!(code.is_some_and(|c| c != 0), "{code:?}: {e}");
    assert!(e.contains("did not arrive within 10.0 s"), "{e}");
    let took = t.elapsed();
    assert!(took < Duration::from_secs(15), "{took:?}");

    // SIGTERM 2 s into the drip: the client ends within a second of it.
    let addr = dripping_server(Duration::from_secs(1)).to_string();
    let mut child = misura()
        .args(["--no-store", "tcp", &addr, "--duration", "1s"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(2));
    let sent = Instant::now();
    let _ = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if sent.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let after = sent.elapsed();
    assert!(status.is_some(), "still running 20 s after SIGTERM");
    assert!(after < Duration::from_secs(1), "{after:?} after SIGTERM");
}

/// A fake misura server that takes a tcp test honestly and answers DONE
/// with `result`'s fields; its address.
fn lying_server(result: misura_wire::control::Message) -> std::net::SocketAddr {
    use misura_wire::control::{Message, Value};
    use misura_wire::test_control as tc;
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        for c in l.incoming().take(16) {
            let Ok(mut c) = c else { continue };
            let result = result.clone();
            std::thread::spawn(move || {
                let hello = Message::new(tc::HELLO)
                    .with(tc::F_VERSION, Value::U64(tc::PROTOCOL_VERSION))
                    .with(tc::F_NONCE, Value::Bytes(vec![0; 16]));
                common::control_send(&mut c, &hello);
                match common::control_read(&mut c) {
                    Some(m) if m.typ == tc::REQUEST => {
                        let acc = Message::new(tc::ACCEPT)
                            .with(tc::F_TEST_ID, Value::U64(7))
                            .with(tc::F_DATA_PORT, Value::U64(addr.port() as u64));
                        common::control_send(&mut c, &acc);
                        if common::control_read(&mut c).is_some_and(|m| m.typ == tc::DONE) {
                            common::control_send(&mut c, &result);
                        }
                    }
                    Some(m) if m.typ == tc::DATA => {
                        let _ = std::io::copy(&mut c, &mut std::io::sink());
                    }
                    _ => {}
                }
            });
        }
    });
    addr
}

/// Item 9: a misura server's RESULT claiming 2^63 bytes in 1 ns (1.48e29
/// bit/s before), and stream counts whose sum wraps past 2^64 (`--bidir`
/// wrapped), is named in a peer.implausible warning and kept out of the
/// headline figures, which rest on this client's own counts.
#[test]
fn a_misura_servers_impossible_figures_stay_out_of_the_headline() {
    use misura_wire::control::{Message, Value};
    use misura_wire::test_control as tc;
    let mut huge = Vec::new();
    for _ in 0..2 {
        huge.extend_from_slice(&(u64::MAX - 5).to_be_bytes());
    }
    let result = Message::new(tc::RESULT)
        .with(tc::F_BYTES, Value::U64(1 << 63))
        .with(tc::F_ELAPSED_NS, Value::U64(1))
        .with(tc::F_STREAM_BYTES, Value::Bytes(huge));
    for direction in [&[][..], &["--bidir"]] {
        let addr = lying_server(result.clone()).to_string();
        let mut c = misura();
        c.args([
            "--no-store",
            "tcp",
            "--json",
            &addr,
            "--duration",
            "1s",
            "--streams",
            "2",
        ])
        .args(direction);
        let o = c.output().unwrap();
        let e = String::from_utf8_lossy(&o.stderr);
        let j: serde_json::Value = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|_| panic!("{direction:?}: no JSON: {e}"));
        let tput = j["throughput_bps"].as_f64().unwrap();
        assert!(tput > 0.0 && tput < 1.6e12, "{direction:?}: {tput}");
        let client = &j["clients"][0];
        let rx = client["receiver_bytes"].as_u64().unwrap();
        let moved =
            client["sent_bytes"].as_u64().unwrap() + client["received_bytes"].as_u64().unwrap();
        assert!(rx <= moved, "{direction:?}: {rx} > {moved}");
        for s in client["streams"].as_array().unwrap() {
            assert!(s["throughput_bps"].as_f64().unwrap() < 1.6e12, "{s}");
        }
        let w = j["warnings"].to_string();
        assert!(
            w.contains("peer.implausible") && w.contains("bytes received 9223372036854775808"),
            "{direction:?}: {w}"
        );
    }
}
