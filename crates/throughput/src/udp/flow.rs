//! The datagrams of one `misura udp` client: paced sending, and receiving
//! with the receiver's bookkeeping (sequence, jitter, one-way delay).

use super::datagram::{emit_header, parse_header};
use crate::client;
use crate::error::{Result, ThroughputError};
use crate::pacing::{monotonic_at, PacedSender};
use misura_report::pacing::Pacing;
use misura_stats::{Arrival, Rfc3550Jitter, SequenceTracker};
use std::io::ErrorKind;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::AtomicUsize;
use std::time::{Duration, Instant};

/// After the sender's planned end, how long the receiver waits for stragglers.
const DRAIN: Duration = Duration::from_millis(300);

/// What the sender sent, the sends that failed, and how it kept pace.
#[derive(Default)]
pub(super) struct SendStats {
    pub(super) packets: u64,
    pub(super) bytes: u64,
    pub(super) errors: u64,
    pub(super) emsgsize: u64,
    pub(super) last_error: Option<String>,
    pub(super) pacing: Option<Pacing>,
}

/// Send `msg_size` datagrams at `rate_bps` from now until `end`, paced by
/// the shared pacer (sleeps until shortly before each burst).
pub(super) fn send_paced(
    sock: &UdpSocket,
    (msg_size, rate_bps, spin): (u64, u64, bool),
    test_id: u64,
    end: Instant,
    stop: &AtomicUsize,
) -> SendStats {
    let mut buf = vec![0u8; msg_size as usize];
    let mut st = SendStats::default();
    let mut pacer = PacedSender::new(msg_size, rate_bps, spin);
    let until = monotonic_at(end);
    while pacer.next(until, || client::interrupted(stop)) {
        emit_header(
            &mut buf,
            test_id,
            st.packets + st.errors,
            misura_sys::clock::realtime_ns(),
        );
        match sock.send(&buf) {
            Ok(_) => {
                st.packets += 1;
                st.bytes += msg_size;
            }
            Err(e) if e.raw_os_error() == Some(libc_emsgsize()) => {
                st.errors += 1;
                st.emsgsize += 1;
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => {}
            Err(e) => {
                // ECONNREFUSED from an ICMP port unreachable and the like:
                // count and go on, the receiver's count tells what arrived.
                st.errors += 1;
                st.last_error = Some(e.to_string());
            }
        }
    }
    st.pacing = Some(pacer.pacing("client"));
    st
}

const fn libc_emsgsize() -> i32 {
    90 // EMSGSIZE on Linux
}

/// What the receiver counted.
#[derive(Default)]
pub(super) struct RecvStats {
    pub(super) packets: u64,
    pub(super) bytes: u64,
    pub(super) seq: Option<SequenceTracker>,
    pub(super) jitter: Rfc3550Jitter,
    pub(super) owd_min: Option<i64>,
    pub(super) owd_max: Option<i64>,
    pub(super) first: Option<Instant>,
    pub(super) last: Option<Instant>,
}

/// Receive test `test_id`'s datagrams until the stream goes quiet after `end`.
pub(super) fn receive(
    sock: &UdpSocket,
    test_id: u64,
    msg_size: u64,
    end: Instant,
    stop: &AtomicUsize,
) -> RecvStats {
    let mut buf = vec![0u8; 65_536];
    let mut st = RecvStats {
        seq: Some(SequenceTracker::new()),
        ..Default::default()
    };
    sock.set_read_timeout(Some(Duration::from_millis(50))).ok();
    loop {
        let now = Instant::now();
        // Stop DRAIN after the planned end once the stream has gone quiet,
        // or END_GRACE after it whatever happens.
        let quiet_since = st.last.unwrap_or(end).max(end);
        if now >= quiet_since + DRAIN || now >= end + client::END_GRACE || client::interrupted(stop)
        {
            return st;
        }
        match sock.recv(&mut buf) {
            Ok(n) => {
                let rx = misura_sys::clock::realtime_ns();
                let Some((id, seq, tx)) = parse_header(&buf[..n]) else {
                    continue;
                };
                if id != test_id || seq == u64::MAX {
                    continue;
                }
                let t = Instant::now();
                st.first.get_or_insert(t);
                st.last = Some(t);
                let tracker = st.seq.as_mut().unwrap();
                if matches!(tracker.record(seq), Arrival::Duplicate) {
                    continue;
                }
                st.packets += 1;
                st.bytes += (n as u64).min(msg_size.max(n as u64));
                st.jitter.update(tx, rx);
                let owd = rx - tx;
                st.owd_min = Some(st.owd_min.map_or(owd, |m| m.min(owd)));
                st.owd_max = Some(st.owd_max.map_or(owd, |m| m.max(owd)));
            }
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                ) => {}
            Err(_) => std::thread::sleep(Duration::from_millis(10)), // ICMP errors and the like
        }
    }
}

/// The client's UDP socket, connected to the test's server port.
pub(super) fn data_socket(server: SocketAddr, df: bool) -> Result<UdpSocket> {
    let bind: SocketAddr = if server.is_ipv6() {
        "[::]:0".parse().unwrap()
    } else {
        "0.0.0.0:0".parse().unwrap()
    };
    let s = socket2::Socket::new(
        socket2::Domain::for_address(server),
        socket2::Type::DGRAM,
        Some(socket2::Protocol::UDP),
    )
    .map_err(ThroughputError::step("creating a UDP socket"))?;
    // Large buffers so the kernel, not the socket, is what limits the rate.
    let _ = s.set_send_buffer_size(4 << 20);
    let _ = s.set_recv_buffer_size(4 << 20);
    s.bind(&bind.into())
        .map_err(ThroughputError::step("binding a UDP socket"))?;
    let u: UdpSocket = s.into();
    u.connect(server)
        .map_err(|source| ThroughputError::ConnectUdp { server, source })?;
    if df {
        misura_sys::tcpinfo::set_dont_fragment(&u, server.is_ipv6())?;
    }
    Ok(u)
}
