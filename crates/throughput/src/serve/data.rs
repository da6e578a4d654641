//! `misura serve`: the TCP data connections of a test — bulk streams (tcp),
//! request/response (rr-tcp) and one transaction per connection (crr).

use super::pacer::send_rate;
use super::state::Shared;
use super::test::*;
use crate::pacing::{monotonic_at, PacedSender};
use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// crr/setup: a connection beyond the cap of `max(burst, streams)` open at
/// once waits this long for an open one's handler to end before it is
/// refused. The client opens its next connection right after closing the
/// previous one, which the server only sees end a moment later.
const CRR_SLOT_GRACE: Duration = Duration::from_millis(100);

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

/// A data connection (its DATA message already read and matched; `asked`:
/// its F_STREAM_INDEX, the client's number for it).
pub fn connection(shared: &Shared, t: &Arc<Test>, stream: TcpStream, asked: Option<u64>) {
    let spec = &t.spec;
    if t.stopped() {
        return;
    }
    let seen = t.data_seen.fetch_add(1, Ordering::Relaxed);
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
    if !per_transaction && seen >= limit {
        return;
    }
    // A stream's figures go under the client's number for it, whatever
    // order the handlers got here in.
    let index = if per_transaction {
        seen
    } else {
        match t.claim_stream(asked) {
            Some(i) => i,
            None => return,
        }
    };
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
    if !spec.server_sends() {
        // Forward: one handler reads every stream of the test (hub.rs).
        super::hub::receive(t, stream, index, &shared.limits);
        return;
    }
    std::thread::scope(|sc| {
        let writer = sc.spawn(|| {
            let mut buf = vec![0u8; spec.msg_size as usize];
            for (i, b) in buf.iter_mut().enumerate() {
                *b = i as u8;
            }
            let until = monotonic_at(t.send_until(Instant::now()));
            let rate = send_rate(shared, spec, spec.streams);
            let mut pacer = PacedSender::new(buf.len() as u64, rate, false);
            let mut s = stream;
            while pacer.next(until, || t.stopped()) {
                match s.write_all(&buf) {
                    Ok(()) => t.mark_tx(buf.len() as u64),
                    Err(e) => {
                        t.stream_failed(index, &e, "the client read nothing for the idle timeout");
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
        let mut buf = t.read_buf();
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
                    t.stream_failed(index, &e, "nothing received for the idle timeout");
                    break;
                }
            }
        }
        t.record_stream_bytes(index, mine);
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
                t.stream_failed(index, &e, "no request for the idle timeout");
                break;
            }
        }
    }
    t.record_stream_bytes(index, mine);
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
