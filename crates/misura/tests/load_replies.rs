//! Issue 29, item 10: `misura load` counts and warns about replies it did
//! not ask for, as `misura rtt` does. A UDP proxy between the probes and a
//! loopback reflector sends every reply three times and, beside each, a
//! forged one for a sequence number never sent; the result counts the
//! duplicates and the unknown replies per phase and warns. (Loopback, no
//! privileges.)

mod common;

use common::*;
use serde_json::Value;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Where an unauthenticated STAMP reply carries the sender's sequence
/// number (RFC 8762 §4.3.1).
const SENDER_SEQ: std::ops::Range<usize> = 24..28;

/// Forwards requests to `reflector` and each reply back 3 times plus one
/// forged reply; returns its port and a flag that stops it.
fn hostile_proxy(reflector: SocketAddr) -> (u16, Arc<AtomicBool>, std::thread::JoinHandle<u64>) {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let port = sock.local_addr().unwrap().port();
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let t = std::thread::spawn(move || {
        let (mut client, mut buf, mut forged) = (None, [0u8; 2048], 0u64);
        // Bounded: the test stops it, and at most 10 min in any case.
        let end = std::time::Instant::now() + Duration::from_secs(600);
        while !flag.load(Ordering::Relaxed) && std::time::Instant::now() < end {
            let Ok((n, from)) = sock.recv_from(&mut buf) else {
                continue;
            };
            if from != reflector {
                client = Some(from);
                let _ = sock.send_to(&buf[..n], reflector);
                continue;
            }
            let Some(c) = client else { continue };
            for _ in 0..3 {
                let _ = sock.send_to(&buf[..n], c);
            }
            if n >= SENDER_SEQ.end {
                let mut f = buf[..n].to_vec();
                f[SENDER_SEQ].copy_from_slice(&(0x7fff_0000u32 + forged as u32).to_be_bytes());
                let _ = sock.send_to(&f, c);
                forged += 1;
            }
        }
        forged
    });
    (port, stop, t)
}

#[test]
fn duplicated_and_forged_replies_are_counted_and_warned() {
    let serve = LocalServe::start(&[]);
    let reflector = LocalReflector::start(60);
    let (port, stop, proxy) = hostile_proxy(reflector.target().parse().unwrap());
    let o = run(&[
        "--no-store",
        "load",
        &serve.target(),
        "--reflector",
        &format!("127.0.0.1:{port}"),
        "--up",
        "1",
        "--down",
        "0",
        "--udp-up",
        "5M",
        "--duration",
        "2s",
        "--idle",
        "1s",
        "--period",
        "20ms",
        "--json",
    ]);
    stop.store(true, Ordering::Relaxed);
    let forged = proxy.join().unwrap();
    let v: Value = json_of(&o);
    schema_check(&v, "load.schema.json");
    assert!(forged > 20, "the proxy forged only {forged} replies");
    let phases = v["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 3);
    for p in phases {
        let (rx, dup, unk) = (
            p["received"].as_u64().unwrap(),
            p["duplicates"].as_u64().unwrap(),
            p["unknown"].as_u64().unwrap(),
        );
        assert!(rx > 0, "{p}");
        // Two copies after each reply (some may arrive after the phase).
        assert!(
            dup >= rx,
            "phase {}: {dup} duplicates for {rx} replies",
            p["name"]
        );
        assert!(
            unk >= rx / 2,
            "phase {}: {unk} unknown for {rx} replies",
            p["name"]
        );
    }
    let codes = warning_codes(&v);
    for c in ["load.duplicate-replies", "load.unknown-replies"] {
        assert!(codes.contains(&c), "no {c} in {codes:?}");
    }
}
