//! The transaction loops of `misura rr`: rr-tcp (one connection, `burst`
//! requests in flight), rr-udp (datagrams, lost after `--timeout`) and crr
//! (a new connection per transaction), each timing every transaction.

use super::plan::Transactions;
use crate::client::{self, TcpOpts};
use crate::error::{Result, ThroughputError};
use misura_cli::exit::one_line;
use misura_stats::Summary;
use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream, UdpSocket};
use std::sync::atomic::AtomicUsize;
use std::time::{Duration, Instant};

/// What one transaction loop measured.
#[derive(Default)]
pub(super) struct Loop {
    pub(super) transactions: u64,
    pub(super) lost: u64,
    pub(super) latency: Summary,
    pub(super) connect: Summary,
    pub(super) error: Option<String>,
    pub(super) cpu: (u64, u64),
}

impl Loop {
    /// A loop with nothing counted yet, and the request (0x5a bytes) and
    /// response buffers of `t`'s sizes for a TCP loop.
    fn start(t: &Transactions) -> (Loop, Vec<u8>, Vec<u8>) {
        let req = vec![0x5au8; t.request as usize];
        let resp = vec![0u8; t.response as usize];
        (Loop::default(), req, resp)
    }

    /// Add another loop's counts (crr's loops run side by side).
    pub(super) fn merge(&mut self, l: Loop) {
        self.transactions += l.transactions;
        self.lost += l.lost;
        self.latency.merge(&l.latency);
        self.connect.merge(&l.connect);
        self.error = self.error.take().or(l.error);
        self.cpu = (self.cpu.0 + l.cpu.0, self.cpu.1 + l.cpu.1);
    }
}

fn transient(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
    )
}

/// rr-tcp: one connection, `burst` requests in flight.
pub(super) fn tcp_loop(
    mut s: TcpStream,
    t: &Transactions,
    end: Instant,
    stop: &AtomicUsize,
) -> Loop {
    let (mut l, req, mut resp) = Loop::start(t);
    let mut inflight: VecDeque<Instant> = VecDeque::new();
    s.set_read_timeout(Some(client::END_GRACE)).ok();
    s.set_write_timeout(Some(client::END_GRACE)).ok();
    for _ in 0..t.burst {
        inflight.push_back(Instant::now());
        if let Err(e) = s.write_all(&req) {
            l.error = Some(format!("lost the data connection: {e}"));
            return l;
        }
    }
    while let Some(sent_at) = inflight.pop_front() {
        if let Err(e) = s.read_exact(&mut resp) {
            l.error = Some(if transient(&e) {
                "no response within 5 s: the server or the path is gone".into()
            } else {
                format!("lost the data connection: {e}")
            });
            return l;
        }
        let now = Instant::now();
        l.latency.record((now - sent_at).as_nanos() as i64);
        l.transactions += 1;
        if now < end && !client::interrupted(stop) {
            inflight.push_back(Instant::now());
            if let Err(e) = s.write_all(&req) {
                l.error = Some(format!("lost the data connection: {e}"));
                return l;
            }
        }
    }
    let _ = s.shutdown(Shutdown::Write);
    l
}

/// rr-udp: `burst` datagram transactions in flight, lost after `timeout`.
pub(super) fn udp_loop(
    sock: &UdpSocket,
    test_id: u64,
    t: &Transactions,
    end: Instant,
    stop: &AtomicUsize,
) -> Loop {
    let mut l = Loop::default();
    let mut req = vec![0x5au8; t.request as usize];
    let mut buf = vec![0u8; 65_536];
    let mut inflight: VecDeque<(u64, Instant)> = VecDeque::new();
    let mut seq = 0u64;
    let mut icmp_errors = 0u64;
    sock.set_read_timeout(Some(Duration::from_millis(10).min(t.timeout)))
        .ok();
    // Bare datagrams (under 16 bytes): no header; one transaction in flight.
    let bare = t.bare();
    let send = |seq: u64, req: &mut Vec<u8>| {
        if !bare {
            req[0..8].copy_from_slice(&test_id.to_be_bytes());
            req[8..16].copy_from_slice(&seq.to_be_bytes());
        }
        sock.send(req)
    };
    loop {
        let now = Instant::now();
        let sending = now < end && !client::interrupted(stop);
        while sending && inflight.len() < t.burst as usize {
            let sent_at = Instant::now();
            if send(seq, &mut req).is_ok() {
                inflight.push_back((seq, sent_at));
            }
            seq += 1;
        }
        if inflight.is_empty() {
            return l;
        }
        // Expire transactions whose response is overdue.
        while let Some(&(_, sent_at)) = inflight.front() {
            if now - sent_at > t.timeout {
                inflight.pop_front();
                l.lost += 1;
            } else {
                break;
            }
        }
        if !sending && now > end + t.timeout + Duration::from_millis(10) {
            l.lost += inflight.len() as u64;
            return l;
        }
        match sock.recv(&mut buf) {
            // The socket is connected to the test's own server port, so a
            // bare response can only be the answer to the one in flight.
            Ok(n) if bare && n as u64 == t.response => {
                let got_at = Instant::now();
                if let Some((_, sent_at)) = inflight.pop_front() {
                    l.latency.record((got_at - sent_at).as_nanos() as i64);
                    l.transactions += 1;
                }
            }
            Ok(n) if !bare && n >= 16 && buf[0..8] == test_id.to_be_bytes() => {
                let got_at = Instant::now();
                let got = u64::from_be_bytes(buf[8..16].try_into().unwrap());
                if let Some(k) = inflight.iter().position(|(s, _)| *s == got) {
                    let (_, sent_at) = inflight.remove(k).unwrap();
                    l.latency.record((got_at - sent_at).as_nanos() as i64);
                    l.transactions += 1;
                }
            }
            Ok(_) => {}
            Err(e) if transient(&e) => {}
            Err(e) => {
                // ECONNREFUSED: ICMP port unreachable — the server's socket is gone.
                icmp_errors += 1;
                if icmp_errors > 100 {
                    l.error = Some(format!("the server's UDP port does not answer: {e}"));
                    return l;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    }
}

/// crr: a new connection per transaction; the connect() time separately.
pub(super) fn crr_loop(
    data: SocketAddr,
    test_id: u64,
    t: &Transactions,
    end: Instant,
    stop: &AtomicUsize,
) -> Loop {
    let (mut l, req, mut resp) = Loop::start(t);
    let opts = TcpOpts {
        nodelay: true,
        ..Default::default()
    };
    let cpu0 = client::thread_cpu();
    let mut failures = 0u32;
    while Instant::now() < end && !client::interrupted(stop) {
        let t0 = Instant::now();
        let r = (|| -> Result<()> {
            let (mut s, connect_ns) = client::data_connection_timed(data, test_id, &opts)?;
            l.connect.record(connect_ns as i64);
            s.set_read_timeout(Some(client::END_GRACE)).ok();
            s.write_all(&req)
                .map_err(ThroughputError::step("sending the request"))?;
            s.read_exact(&mut resp)
                .map_err(ThroughputError::step("reading the response"))?;
            // The client closes first: TIME_WAIT stays here, as in netperf TCP_CRR.
            Ok(())
        })();
        if let Err(e) = r {
            // A transaction the server dropped (reset) is counted lost; only
            // a run of them ends the test.
            l.lost += 1;
            failures += 1;
            if failures >= 50 {
                l.error = Some(format!(
                    "50 connections in a row failed, the last with: {}",
                    one_line(&e)
                ));
                break;
            }
            continue;
        }
        failures = 0;
        l.latency.record((Instant::now() - t0).as_nanos() as i64);
        l.transactions += 1;
    }
    l.cpu = client::thread_cpu_since(cpu0);
    l
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tcp_loop_against_a_local_echo() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let a = l.local_addr().unwrap();
        let srv = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            let mut b = [0u8; 1];
            while s.read_exact(&mut b).is_ok() {
                s.write_all(&[1, 2]).unwrap();
            }
        });
        let s = TcpStream::connect(a).unwrap();
        s.set_nodelay(true).unwrap();
        let plan = Transactions {
            request: 1,
            response: 2,
            burst: 3,
            timeout: Duration::from_millis(200),
        };
        let r = tcp_loop(
            s,
            &plan,
            Instant::now() + Duration::from_millis(100),
            &AtomicUsize::new(0),
        );
        assert!(r.error.is_none(), "{:?}", r.error);
        assert!(r.transactions > 3);
        assert_eq!(r.latency.count(), r.transactions);
        srv.join().unwrap();
    }
}
