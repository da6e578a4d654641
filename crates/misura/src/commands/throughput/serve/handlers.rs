//! `misura serve`: running one test — its control connection, its TCP data
//! connections and its UDP socket — and the RESULT with the receiver's
//! figures.

use super::request::Spec;
use super::state::{DeadlineReader, Shared};
use super::test::*;
use crate::commands::throughput::proto::{self, Fields};
use misura_report::serve::ServedTest;
use misura_stats::sequence::Arrival;
use misura_stats::{Rfc3550Jitter, SequenceTracker};
use misura_wire::control::{Message, Value};
use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// UDP datagram header: test id | seq | sender CLOCK_REALTIME ns.
const UDP_HEADER: usize = 24;
/// After DONE, UDP datagrams still in flight are read until this much quiet.
const UDP_DRAIN_QUIET: Duration = Duration::from_millis(100);
const UDP_DRAIN_MAX: Duration = Duration::from_secs(1);
/// crr/setup: a connection beyond the cap of `max(burst, streams)` open at
/// once waits this long for an open one's handler to end before it is
/// refused. The client opens its next connection right after closing the
/// previous one, which the server only sees end a moment later.
const CRR_SLOT_GRACE: Duration = Duration::from_millis(100);

fn span(first: i64, last: i64) -> i64 {
    if first == i64::MAX || last < first {
        0
    } else {
        last - first
    }
}

/// Paces a sender to `rate_bps`: sleeps while ahead; never catches up by a
/// burst longer than 10 ms.
struct Pacer {
    rate_bps: u64,
    start: Instant,
    credit_ns: i128,
}

impl Pacer {
    fn new(rate_bps: u64) -> Pacer {
        Pacer {
            rate_bps,
            start: Instant::now(),
            credit_ns: 0,
        }
    }

    /// Before sending `bytes`; returns when they may go.
    fn wait(&mut self, bytes: u64) {
        if self.rate_bps == 0 {
            return;
        }
        let el = self.start.elapsed().as_nanos() as i128;
        if el - self.credit_ns > 10_000_000 {
            self.credit_ns = el - 10_000_000;
        }
        let ahead = self.credit_ns - el;
        if ahead > 200_000 {
            std::thread::sleep(Duration::from_nanos((ahead - 100_000) as u64));
        } else {
            while (self.start.elapsed().as_nanos() as i128) < self.credit_ns {
                std::hint::spin_loop();
            }
        }
        self.credit_ns += bytes as i128 * 8 * 1_000_000_000 / self.rate_bps as i128;
    }
}

/// The rate the server's own sending is paced at.
fn send_rate(shared: &Shared, spec: &Spec, parts: u64) -> u64 {
    let r = if spec.rate_bps > 0 {
        spec.rate_bps.min(shared.limits.max_rate_bps)
    } else {
        shared.limits.max_rate_bps
    };
    (r / parts.max(1)).max(1)
}

fn is_timeout(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

/// Fill `buf`; Ok(false) on a clean end of stream before its first byte.
fn read_full(s: &mut &TcpStream, buf: &mut [u8]) -> std::io::Result<bool> {
    let mut at = 0;
    while at < buf.len() {
        match s.read(&mut buf[at..]) {
            Ok(0) if at == 0 => return Ok(false),
            Ok(0) => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => at += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

/// A data connection (its DATA message already read and matched).
pub fn data(shared: &Shared, t: &Arc<Test>, stream: TcpStream) {
    let spec = &t.spec;
    if t.stopped() {
        return;
    }
    let index = t.data_seen.fetch_add(1, Ordering::Relaxed);
    let per_transaction = matches!(spec.kind.as_str(), "crr" | "setup");
    let limit = if per_transaction {
        spec.burst.max(spec.streams) as usize
    } else {
        spec.streams as usize
    };
    if spec.kind == "udp" || spec.kind == "rr-udp" {
        return; // no TCP data connections in these tests
    }
    t.data_active.fetch_add(1, Ordering::Relaxed);
    let _active = Active(t);
    if !per_transaction && index >= limit {
        return;
    }
    // crr/setup: at most `limit` connections whose handler still runs; one
    // beyond waits a moment for the previous to end (see CRR_SLOT_GRACE).
    if per_transaction && !t.take_slot(limit, CRR_SLOT_GRACE) {
        return;
    }
    let mut open = Open {
        t,
        index,
        slot: per_transaction,
        listed: false,
    };
    let idle = shared.limits.idle_timeout;
    let _ = stream.set_read_timeout(Some(idle));
    let _ = stream.set_write_timeout(Some(idle));
    let sr = socket2::SockRef::from(&stream);
    if spec.sndbuf > 0 {
        let _ = sr.set_send_buffer_size(spec.sndbuf as usize);
    }
    if spec.rcvbuf > 0 {
        let _ = sr.set_recv_buffer_size(spec.rcvbuf as usize);
    }
    // rr and crr time single messages: Nagle would only delay them.
    let _ = stream.set_nodelay(spec.nodelay || spec.kind != "tcp");
    if index == 0 || t.sndbuf.load(Ordering::Relaxed) == 0 {
        t.sndbuf
            .store(sr.send_buffer_size().unwrap_or(0) as u64, Ordering::Relaxed);
        t.rcvbuf
            .store(sr.recv_buffer_size().unwrap_or(0) as u64, Ordering::Relaxed);
    }
    if let Ok(c) = stream.try_clone() {
        t.socks.lock().unwrap().push((index, c));
        open.listed = true;
    }
    if !t.stopped() {
        match spec.kind.as_str() {
            "tcp" => tcp_stream(shared, t, &stream, index),
            "rr-tcp" => rr_stream(t, &stream, index),
            _ => crr_connection(t, &stream),
        }
    }
    // Close the connection, then count it as no longer open.
    drop(stream);
    drop(open);
}

fn tcp_stream(shared: &Shared, t: &Test, stream: &TcpStream, index: usize) {
    let spec = &t.spec;
    std::thread::scope(|sc| {
        if spec.server_sends() {
            let writer = sc.spawn(|| {
                let mut buf = vec![0u8; spec.msg_size as usize];
                for (i, b) in buf.iter_mut().enumerate() {
                    *b = i as u8;
                }
                let until = t.send_until(Instant::now());
                let mut pacer = Pacer::new(send_rate(shared, spec, spec.streams));
                let mut s = stream;
                while !t.stopped() && Instant::now() < until {
                    pacer.wait(buf.len() as u64);
                    match s.write_all(&buf) {
                        Ok(()) => t.mark_tx(buf.len() as u64),
                        Err(e) => {
                            if !t.stopped() {
                                t.set_partial(if is_timeout(&e) {
                                    format!("stream {index}: the client read nothing for the idle timeout")
                                } else {
                                    format!("stream {index}: {e}")
                                });
                            }
                            return;
                        }
                    }
                }
                let _ = stream.shutdown(Shutdown::Write);
            });
            if !spec.server_receives() {
                let _ = writer.join();
                // Wait for the client's close (it has read everything),
                // discarding anything it sends.
                let mut sink = [0u8; 4096];
                let mut s = stream;
                while !t.stopped() {
                    match s.read(&mut sink) {
                        Ok(0) | Err(_) => break,
                        Ok(_) => {}
                    }
                }
                return;
            }
        }
        let mut buf = vec![0u8; spec.msg_size.clamp(64 * 1024, 1 << 20) as usize];
        let mut mine = 0u64;
        let mut s = stream;
        loop {
            match s.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    mine += n as u64;
                    t.mark_rx(n as u64);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    if !t.stopped() {
                        t.set_partial(if is_timeout(&e) {
                            format!("stream {index}: nothing received for the idle timeout")
                        } else {
                            format!("stream {index}: {e}")
                        });
                    }
                    break;
                }
            }
        }
        if let Some(b) = t.stream_bytes.lock().unwrap().get_mut(index) {
            *b = mine;
        }
    });
}

fn rr_stream(t: &Test, stream: &TcpStream, index: usize) {
    let spec = &t.spec;
    let mut req = vec![0u8; spec.request_size as usize];
    let resp = vec![0u8; spec.response_size as usize];
    let mut s = stream;
    let mut mine = 0u64;
    while !t.stopped() {
        match read_full(&mut s, &mut req) {
            Ok(false) => break,
            Ok(true) => {
                t.mark_rx(req.len() as u64);
                mine += req.len() as u64;
                if let Err(e) = s.write_all(&resp) {
                    if !t.stopped() {
                        t.set_partial(format!("stream {index}: {e}"));
                    }
                    break;
                }
                t.mark_tx(resp.len() as u64);
                t.transactions.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => {
                if !t.stopped() {
                    t.set_partial(if is_timeout(&e) {
                        format!("stream {index}: no request for the idle timeout")
                    } else {
                        format!("stream {index}: {e}")
                    });
                }
                break;
            }
        }
    }
    if let Some(b) = t.stream_bytes.lock().unwrap().get_mut(index) {
        *b = mine;
    }
}

fn crr_connection(t: &Test, stream: &TcpStream) {
    let spec = &t.spec;
    let mut req = vec![0u8; spec.request_size as usize];
    let mut s = stream;
    if let Ok(true) = read_full(&mut s, &mut req) {
        t.mark_rx(req.len() as u64);
        if s.write_all(&vec![0u8; spec.response_size as usize]).is_ok() {
            t.mark_tx(spec.response_size);
            t.transactions.fetch_add(1, Ordering::Relaxed);
        }
        // The client closes first (netperf TCP_CRR does the same), so the
        // TIME_WAIT state stays on its side.
        let mut sink = [0u8; 64];
        let _ = s.read(&mut sink);
    }
}

/// The test's UDP socket: counts (udp), echoes (rr-udp, setup); in reverse
/// and bidir udp a second thread sends.
fn udp_receiver(t: &Test, figures: &Mutex<UdpFigures>) {
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

fn udp_sender(shared: &Shared, t: &Test, figures: &Mutex<UdpFigures>) {
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
    let mut pacer = Pacer::new(send_rate(shared, spec, 1));
    let until = t.send_until(Instant::now());
    let mut seq = 0u64;
    while !t.stopped() && Instant::now() < until {
        pacer.wait(buf.len() as u64);
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
    figures.lock().unwrap().sent = seq;
}

/// The control connection of an accepted test: ACCEPT, wait for DONE, RESULT.
pub fn run_control(shared: &Shared, t: &Arc<Test>, stream: TcpStream) {
    let spec = &t.spec;
    let cpu0 = misura_sys::rusage::process_cpu();
    let data_port = match &t.udp {
        Some(u) => u.local_addr().map(|a| a.port()).unwrap_or(0),
        None => stream.local_addr().map(|a| a.port()).unwrap_or(0),
    };
    let _ = stream.set_write_timeout(Some(shared.limits.idle_timeout));
    let accept = Message::new(proto::ACCEPT)
        .with(proto::F_TEST_ID, Value::U64(t.id))
        .with(proto::F_DATA_PORT, Value::U64(data_port as u64));
    if proto::write_message(&mut &stream, &accept).is_err() {
        t.end("the client left before ACCEPT");
        return;
    }
    let figures = Mutex::new(UdpFigures::default());
    let mut done: Option<Message> = None;
    std::thread::scope(|sc| {
        let mut receiver = None;
        let mut sender = None;
        if t.udp.is_some() {
            receiver = Some(sc.spawn(|| udp_receiver(t, &figures)));
            if spec.kind == "udp" && spec.server_sends() {
                sender = Some(sc.spawn(|| udp_sender(shared, t, &figures)));
            }
        }
        // The client has the test's duration, then the idle timeout, to
        // send DONE; a vanished client makes the result partial.
        let until = t.start + spec.duration + shared.limits.idle_timeout + Duration::from_secs(1);
        match proto::read_message(&mut DeadlineReader {
            stream: &stream,
            until,
        }) {
            Ok(m) if m.typ == proto::DONE => {
                if m.opt_bool(proto::F_PARTIAL) == Some(true) {
                    t.set_partial("the client ended early (its DONE says partial)");
                }
                done = Some(m);
            }
            Ok(m) if m.typ == proto::ERROR => {
                t.set_partial(format!(
                    "client error: {}",
                    m.str(proto::F_REASON).unwrap_or("(no reason)")
                ));
            }
            Ok(m) => t.set_partial(format!(
                "unexpected control message type {} instead of DONE",
                m.typ
            )),
            Err(e) => {
                if super::state::timed_out(&e) {
                    t.set_partial(
                        "no DONE from the client within the duration plus the idle timeout",
                    );
                } else {
                    t.set_partial("the client's control connection closed before DONE");
                }
            }
        }
        // Forward and bidir TCP: the client closed its data connections
        // before DONE; read them to the end (bounded by the idle timeout).
        if spec.kind == "tcp" && spec.server_receives() && done.is_some() {
            let w = Instant::now();
            while t.data_active.load(Ordering::Relaxed) > 0
                && w.elapsed() < shared.limits.idle_timeout
                && !t.stopped()
            {
                std::thread::sleep(Duration::from_millis(2));
            }
            if t.data_active.load(Ordering::Relaxed) > 0 {
                t.set_partial("data connections still open after DONE");
            }
        }
        if spec.kind == "udp" && spec.server_receives() && done.is_some() {
            let w = Instant::now();
            while w.elapsed() < UDP_DRAIN_MAX && !t.stopped() {
                let last = t.last_rx.load(Ordering::Relaxed);
                if t.now() - last.max(0) >= UDP_DRAIN_QUIET.as_nanos() as i64 {
                    break;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        t.close_data();
        if let Some(h) = sender {
            let _ = h.join();
        }
        if let Some(h) = receiver {
            let _ = h.join();
        }
    });
    // Wait for the data threads to record their figures.
    let w = Instant::now();
    while t.data_active.load(Ordering::Relaxed) > 0 && w.elapsed() < Duration::from_secs(1) {
        std::thread::sleep(Duration::from_millis(1));
    }
    let cpu1 = misura_sys::rusage::process_cpu();
    let (cpu_user, cpu_system) = (cpu1.0.saturating_sub(cpu0.0), cpu1.1.saturating_sub(cpu0.1));
    let f = figures.into_inner().unwrap();
    let done = done.unwrap_or_else(|| Message::new(proto::DONE));
    let record = figures_of(t, &f, &done, cpu_user, cpu_system);

    let packets_rx = if spec.kind == "udp" {
        f.received
    } else {
        t.transactions.load(Ordering::Relaxed)
    };
    let mut packed = Vec::with_capacity(8 * record.stream_bytes.len());
    for b in &record.stream_bytes {
        packed.extend_from_slice(&b.to_be_bytes());
    }
    let server_elapsed = if spec.server_receives() {
        span(
            t.first_rx.load(Ordering::Relaxed),
            t.last_rx.load(Ordering::Relaxed),
        )
    } else {
        span(
            t.first_tx.load(Ordering::Relaxed),
            t.last_tx.load(Ordering::Relaxed),
        )
    };
    let mut result = Message::new(proto::RESULT)
        .with(proto::F_TEST_ID, Value::U64(t.id))
        .with(proto::F_BYTES, Value::U64(record.bytes_received))
        .with(proto::F_PACKETS, Value::U64(packets_rx))
        .with(proto::F_BYTES_SENT, Value::U64(record.bytes_sent))
        .with(proto::F_PACKETS_SENT, Value::U64(record.packets_sent))
        .with(
            proto::F_ELAPSED_NS,
            Value::U64(server_elapsed.max(0) as u64),
        )
        .with(proto::F_STREAM_BYTES, Value::Bytes(packed))
        .with(proto::F_CPU_USER_NS, Value::U64(cpu_user))
        .with(proto::F_CPU_SYSTEM_NS, Value::U64(cpu_system))
        .with(proto::F_TRANSACTIONS, Value::U64(record.transactions))
        .with(proto::F_PARTIAL, Value::Bool(record.partial));
    if let Some(v) = record.sndbuf_granted {
        result = result.with(proto::F_SNDBUF, Value::U64(v));
    }
    if let Some(v) = record.rcvbuf_granted {
        result = result.with(proto::F_RCVBUF, Value::U64(v));
    }
    if spec.kind == "udp" && spec.server_receives() {
        result = result
            .with(proto::F_LOST, Value::U64(record.lost.unwrap_or(0)))
            .with(proto::F_DUPLICATES, Value::U64(f.duplicates))
            .with(proto::F_REORDERED, Value::U64(f.reordered))
            .with(proto::F_JITTER_NS, Value::U64(f.jitter_ns.round() as u64));
        if let (Some(a), Some(b)) = (f.owd_min, f.owd_max) {
            result = result
                .with(proto::F_OWD_MIN_NS, Value::I64(a))
                .with(proto::F_OWD_MAX_NS, Value::I64(b));
        }
    }
    if let Some(why) = &record.partial_reason {
        result = result.with(proto::F_REASON, Value::Str(why.chars().take(512).collect()));
    }
    let _ = proto::write_message(&mut &stream, &result);
    let _ = stream.shutdown(Shutdown::Write);
    if !shared.quiet {
        eprintln!("{}", misura_report::serve::test_line(&record));
    }
    shared.results.lock().unwrap().push(record);
}

fn figures_of(
    t: &Test,
    f: &UdpFigures,
    done: &Message,
    cpu_user: u64,
    cpu_system: u64,
) -> ServedTest {
    let spec = &t.spec;
    let udp = spec.kind == "udp";
    let bytes_received = if udp {
        f.bytes
    } else {
        t.bytes_rx.load(Ordering::Relaxed)
    };
    let bytes_sent = t.bytes_tx.load(Ordering::Relaxed);
    let transactions = t.transactions.load(Ordering::Relaxed);
    let rx_span = span(
        t.first_rx.load(Ordering::Relaxed),
        t.last_rx.load(Ordering::Relaxed),
    );
    let bps = |bytes: u64, ns: i64| (ns > 0).then(|| bytes as f64 * 8.0 * 1e9 / ns as f64);
    // Receiver truth: the server for what it received, the client (its
    // DONE) for what it received.
    let client_rx = done.opt_u64(proto::F_BYTES).filter(|_| spec.server_sends());
    let client_elapsed = done.opt_u64(proto::F_ELAPSED_NS).map(|v| v as i64);
    let server_bps = if spec.server_receives() {
        bps(bytes_received, rx_span)
    } else {
        None
    };
    let client_bps = match (client_rx, client_elapsed) {
        (Some(b), Some(ns)) => bps(b, ns),
        _ => None,
    };
    let throughput_bps = match spec.direction.as_str() {
        "forward" => server_bps,
        "reverse" => client_bps,
        _ => match (server_bps, client_bps) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        },
    };
    let elapsed_ns = match spec.direction.as_str() {
        "reverse" => client_elapsed.unwrap_or(0),
        _ => rx_span,
    };
    // The client's own count of what it sent (forward udp): F_PACKETS_SENT,
    // or F_PACKETS from a client that only sends.
    let (lost, loss_ratio) = if udp && spec.server_receives() {
        let sent = done.opt_u64(proto::F_PACKETS_SENT).or_else(|| {
            done.opt_u64(proto::F_PACKETS)
                .filter(|_| spec.direction == "forward")
        });
        let expected = sent.unwrap_or_else(|| f.highest.map_or(0, |h| h + 1));
        let lost = expected.saturating_sub(f.received);
        (
            Some(lost),
            (expected > 0).then(|| lost as f64 / expected as f64),
        )
    } else if udp {
        let lost = done.opt_u64(proto::F_LOST);
        (
            lost,
            lost.filter(|_| f.sent > 0)
                .map(|l| l as f64 / f.sent as f64),
        )
    } else {
        (None, None)
    };
    let partial_reason = t.partial.lock().unwrap().clone();
    let txn_span = span(
        t.first_rx.load(Ordering::Relaxed),
        t.last_tx.load(Ordering::Relaxed),
    );
    ServedTest {
        test_id: t.id,
        client: t.peer.ip().to_string(),
        client_name: spec.client_name.clone(),
        kind: spec.kind.clone(),
        direction: spec.direction.clone(),
        streams: spec.streams,
        msg_size: spec.msg_size,
        request_size: spec.request_size,
        response_size: spec.response_size,
        started_at: t.started_at.clone(),
        requested_duration_ns: spec.duration.as_nanos() as i64,
        elapsed_ns: if transactions > 0 && !udp && spec.kind != "tcp" {
            txn_span
        } else {
            elapsed_ns
        },
        bytes_received,
        bytes_sent,
        client_bytes_received: client_rx,
        packets_received: if udp { f.received } else { 0 },
        packets_sent: if udp { f.sent } else { 0 },
        throughput_bps,
        transactions,
        transactions_per_s: (transactions > 0 && txn_span > 0)
            .then(|| transactions as f64 * 1e9 / txn_span as f64),
        lost,
        loss_ratio,
        duplicates: udp.then_some(f.duplicates),
        reordered: udp.then_some(f.reordered),
        jitter_ns: (udp && spec.server_receives()).then_some(f.jitter_ns),
        owd_min_ns: f.owd_min,
        owd_max_ns: f.owd_max,
        stream_bytes: t.stream_bytes.lock().unwrap().clone(),
        sndbuf_granted: Some(t.sndbuf.load(Ordering::Relaxed)).filter(|v| *v > 0),
        rcvbuf_granted: Some(t.rcvbuf.load(Ordering::Relaxed)).filter(|v| *v > 0),
        cpu_user_ns: cpu_user,
        cpu_system_ns: cpu_system,
        cpu_shared: t.cpu_shared.load(Ordering::Relaxed),
        partial: partial_reason.is_some(),
        partial_reason,
    }
}
