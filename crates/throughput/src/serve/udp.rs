//! `misura serve`: the UDP socket of a test — counting a client's paced
//! datagrams (udp), echoing transactions (rr-udp, setup), and sending
//! paced datagrams itself (reverse udp).

use super::pacer::send_rate;
use super::state::Shared;
use super::test::*;
use crate::pacing::{monotonic_at, PacedSender};
use misura_stats::sequence::Arrival;
use misura_stats::{Rfc3550Jitter, SequenceTracker};
use std::sync::atomic::Ordering;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// UDP datagram header: test id | seq | sender CLOCK_REALTIME ns.
const UDP_HEADER: usize = 24;

/// The test's UDP socket: counts (udp), echoes (rr-udp, setup); in reverse
/// and bidir udp a second thread sends.
pub(super) fn udp_receiver(t: &Test, figures: &Mutex<UdpFigures>) {
    let Some(sock) = &t.udp else { return };
    let spec = &t.spec;
    let mut buf = vec![0u8; 65_536];
    let mut resp = vec![0u8; spec.response_size as usize];
    let mut tracker = SequenceTracker::new();
    let mut jitter = Rfc3550Jitter::new();
    let (mut owd_min, mut owd_max) = (None::<i64>, None::<i64>);
    let mut bytes = 0u64;
    let id = t.id.to_be_bytes();
    while !t.stopped() {
        let (n, src) = match sock.recv_from(&mut buf) {
            Ok(x) => x,
            Err(_) => continue, // timeout: look at the stop flag
        };
        let now_rt = misura_sys::clock::realtime_ns();
        // Only the client that asked for the test, with its test id (bare
        // rr-udp datagrams under 16 bytes carry none: the test's own port
        // and the client's address identify them).
        let bare = spec.kind == "rr-udp" && spec.request_size.min(spec.response_size) < 16;
        if src.ip().to_canonical() != t.peer_ip || (!bare && (n < 16 || buf[..8] != id)) {
            continue;
        }
        if spec.kind == "udp" {
            if n < UDP_HEADER {
                continue;
            }
            let seq = u64::from_be_bytes(buf[8..16].try_into().unwrap());
            {
                let mut p = t.udp_peer.lock().unwrap();
                if p.is_none() {
                    *p = Some(src);
                }
            }
            if seq == u64::MAX {
                continue; // reverse: the client's address announcement
            }
            let sent = i64::from_be_bytes(buf[16..24].try_into().unwrap());
            match tracker.record(seq) {
                Arrival::InOrder | Arrival::Reordered => {
                    bytes += n as u64;
                    t.mark_rx(n as u64);
                    jitter.update(sent, now_rt);
                    let owd = now_rt.saturating_sub(sent);
                    owd_min = Some(owd_min.map_or(owd, |m| m.min(owd)));
                    owd_max = Some(owd_max.map_or(owd, |m| m.max(owd)));
                }
                Arrival::Duplicate | Arrival::TooOld => {}
            }
        } else {
            // rr-udp / setup: echo the test id and transaction number.
            t.mark_rx(n as u64);
            if !bare {
                resp[..16].copy_from_slice(&buf[..16]);
            }
            if sock.send_to(&resp, src).is_ok() {
                t.mark_tx(resp.len() as u64);
                t.transactions.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
    let c = tracker.counts();
    let mut f = figures.lock().unwrap();
    f.received = c.received;
    f.bytes = bytes;
    f.duplicates = c.duplicates + c.too_old;
    f.reordered = c.reordered;
    f.highest = c.highest;
    f.jitter_ns = jitter.jitter_ns();
    f.owd_min = owd_min;
    f.owd_max = owd_max;
}

pub(super) fn udp_sender(shared: &Shared, t: &Test, figures: &Mutex<UdpFigures>) {
    let Some(sock) = &t.udp else { return };
    let spec = &t.spec;
    // The client's address: from its announcement (seq = u64::MAX) or its
    // first datagram.
    let wait_from = Instant::now();
    let dst = loop {
        if let Some(a) = *t.udp_peer.lock().unwrap() {
            break a;
        }
        if t.stopped() {
            return;
        }
        if wait_from.elapsed() > shared.limits.idle_timeout {
            t.set_partial("no datagram from the client: its UDP address is unknown");
            return;
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    let mut buf = vec![0u8; spec.msg_size as usize];
    buf[..8].copy_from_slice(&t.id.to_be_bytes());
    let rate = send_rate(shared, spec, 1);
    let mut pacer = PacedSender::new(buf.len() as u64, rate, spec.pacing_spin);
    let until = monotonic_at(t.send_until(Instant::now()));
    let mut seq = 0u64;
    while pacer.next(until, || t.stopped()) {
        buf[8..16].copy_from_slice(&seq.to_be_bytes());
        buf[16..24].copy_from_slice(&misura_sys::clock::realtime_ns().to_be_bytes());
        match sock.send_to(&buf, dst) {
            Ok(_) => {
                t.mark_tx(buf.len() as u64);
                seq += 1;
            }
            // ENOBUFS: the queue is full; the datagram is not sent and not counted.
            Err(_) => std::thread::yield_now(),
        }
    }
    let mut f = figures.lock().unwrap();
    f.sent = seq;
    f.pacing = Some(pacer.pacing("server"));
}
