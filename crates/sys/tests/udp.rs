//! Real UDP sockets on loopback (127.0.0.1 and ::1): loopback gives
//! software timestamps on receive and transmit.  Every loop is bounded.
//!
//! Observations (Linux 6.18, 2-core VM; printed by the tests with
//! `--nocapture`):
//! * warm-up: datagrams received right after the first socket of the
//!   host enables RX stamps arrive unstamped until the kernel's
//!   `netstamp_needed` static key is switched on by deferred work (a few
//!   hundred µs to ~1 ms here).  Seen: 0 unstamped in most runs (the key
//!   was already on: another test's socket, or a recent process), 1 when
//!   warm-up datagrams are spaced by 100 µs–1 ms, and 50 out of 50 in a
//!   first version of this test that sent its warm-up burst back to back
//!   in well under 1 ms.  Hence the time-bounded warm-up below, which
//!   waits for 5 stamped receives in a row; the OPT_ID counter keeps
//!   counting through it.
//! * TX stamps on loopback are taken inside the `sendmsg` call
//!   (`skb_tx_timestamp` in `loopback_xmit`, run synchronously because
//!   `lo` has no qdisc): realtime-before-send <= TX stamp <=
//!   realtime-after-send held for every datagram, and the stamp was
//!   already on the error queue when `send_to` returned.

use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use misura_sys::clock::realtime_ns;
use misura_sys::udp::{UdpRecvMeta, UdpTsSocket, UdpTxStamp};
use misura_sys::SysError;

const WARMUP_MAX: usize = 2000;
const WARMUP_TIME: Duration = Duration::from_secs(3);
const ROUNDS: u32 = 200;

/// A socket with its expected next OPT_ID.
struct Side {
    s: UdpTsSocket,
    next_id: u32,
}

impl Side {
    fn new(addr: &str) -> Side {
        let addr: SocketAddr = addr.parse().unwrap();
        let s = UdpTsSocket::bind(addr).unwrap_or_else(|e| {
            panic!(
                "bind {addr}: {e}{}",
                if addr.is_ipv6() {
                    " (IPv6 off on loopback? sysctl net.ipv6.conf.lo.disable_ipv6=0)"
                } else {
                    ""
                }
            )
        });
        let g = s.enable_timestamping(false).expect("timestamping");
        assert!(
            g.software_tx && g.software_rx && !g.hardware_tx && !g.hardware_rx,
            "{g:?}"
        );
        Side { s, next_id: 0 }
    }

    fn addr(&self) -> SocketAddr {
        self.s.local_addr()
    }

    /// Sends and returns (realtime before, realtime after, whether the TX
    /// stamp was queued by the time send returned, the stamp).
    fn send(
        &mut self,
        buf: &[u8],
        dst: SocketAddr,
        src: Option<IpAddr>,
    ) -> (i64, i64, bool, UdpTxStamp) {
        let before = realtime_ns();
        assert!(
            self.s.send_to_from(buf, dst, src).expect("send"),
            "EAGAIN on an idle socket"
        );
        let after = realtime_ns();
        let immediate = self.s.recv_tx_timestamp().expect("errqueue");
        let st = match immediate {
            Some(st) => st,
            None => wait_tx(&self.s),
        };
        assert_eq!(st.id, self.next_id, "OPT_ID counter");
        self.next_id = self.next_id.wrapping_add(1);
        (before, after, immediate.is_some(), st)
    }
}

fn wait_tx(s: &UdpTsSocket) -> UdpTxStamp {
    let end = Instant::now() + Duration::from_secs(2);
    loop {
        if let Some(st) = s.recv_tx_timestamp().expect("errqueue") {
            return st;
        }
        assert!(Instant::now() < end, "no TX stamp within 2 s");
        std::thread::sleep(Duration::from_micros(100));
    }
}

/// Receives one datagram (waiting up to 2 s); returns it with the realtime
/// right after the receive.
fn recv(s: &UdpTsSocket, buf: &mut [u8]) -> (UdpRecvMeta, i64) {
    let end = Instant::now() + Duration::from_secs(2);
    loop {
        if let Some(m) = s.recv_from(buf).expect("recv") {
            return (m, realtime_ns());
        }
        let left = end.saturating_duration_since(Instant::now());
        assert!(!left.is_zero(), "no datagram within 2 s");
        s.wait_readable(left).expect("poll");
    }
}

/// Nothing more on the error queue (no second stamp for any datagram).
fn assert_errqueue_empty(s: &UdpTsSocket) {
    std::thread::sleep(Duration::from_millis(20));
    let extra = s.recv_tx_timestamp().expect("errqueue");
    assert!(extra.is_none(), "unexpected extra TX stamp {extra:?}");
}

#[derive(Debug)]
struct Stats {
    tx_outside_bracket: u32,
    tx_late: u32,
    max_tx_after_send_ns: i64,
}

/// Warm-up then `ROUNDS` ping-pongs A->B->A with every check.  Returns the
/// number of unstamped datagrams seen during warm-up.
fn ping_pong(a_addr: &str, b_addr: &str, ttl: u8, rounds: u32) -> usize {
    let mut a = Side::new(a_addr);
    let mut b = Side::new(b_addr);
    let (aa, ba) = (a.addr(), b.addr());
    let mut buf = [0u8; 256];

    // Warm-up: until 5 stamped receives in a row (bounded in time and
    // count; unstamped ones are spaced by 100 µs to give the kernel's
    // deferred static-key work time to run).
    let (mut unstamped, mut in_row) = (0, 0);
    let started = Instant::now();
    for i in 0..WARMUP_MAX {
        a.send(&(i as u32).to_be_bytes(), ba, None);
        let (m, _) = recv(&b.s, &mut buf);
        if m.software.is_some() {
            in_row += 1;
        } else {
            unstamped += 1;
            in_row = 0;
            std::thread::sleep(Duration::from_micros(100));
        }
        if in_row == 5 || started.elapsed() > WARMUP_TIME {
            break;
        }
    }
    assert_eq!(
        in_row,
        5,
        "RX stamps never became regular ({unstamped} unstamped in {:?})",
        started.elapsed()
    );
    eprintln!(
        "{a_addr}: {unstamped} unstamped datagram(s) in {:?} of warm-up; A's OPT_ID now {}",
        started.elapsed(),
        a.next_id
    );

    let mut st = Stats {
        tx_outside_bracket: 0,
        tx_late: 0,
        max_tx_after_send_ns: i64::MIN,
    };
    for i in 0..rounds {
        let payload = [i.to_be_bytes(), *b"STMP"].concat();
        // A -> B
        let (t0, t1, immediate, tx) = a.send(&payload, ba, None);
        let tx_sw = tx.software.expect("A's TX software stamp").as_ns();
        assert!(tx.hardware.is_none());
        if !(t0 <= tx_sw && tx_sw <= t1) {
            st.tx_outside_bracket += 1;
        }
        st.max_tx_after_send_ns = st.max_tx_after_send_ns.max(tx_sw - t1);
        st.tx_late += u32::from(!immediate);
        let (m, t2) = recv(&b.s, &mut buf);
        assert_eq!(&buf[..m.len], &payload[..]);
        assert_eq!(m.src, aa);
        let rx = m.software.expect("B's RX software stamp").as_ns();
        assert!(rx <= t2, "RX stamp {rx} after the receive returned {t2}");
        assert!(rx >= tx_sw, "RX stamp {rx} before the TX stamp {tx_sw}");
        assert_eq!(m.ttl_or_hoplimit, Some(ttl));
        assert_eq!(m.dst, Some(ba.ip()));

        // B -> A, from the address the request was sent to.
        let (t0, t1, immediate, tx) = b.send(&buf[..m.len], m.src, m.dst);
        let tx_sw = tx.software.expect("B's TX software stamp").as_ns();
        if !(t0 <= tx_sw && tx_sw <= t1) {
            st.tx_outside_bracket += 1;
        }
        st.max_tx_after_send_ns = st.max_tx_after_send_ns.max(tx_sw - t1);
        st.tx_late += u32::from(!immediate);
        let (m, t2) = recv(&a.s, &mut buf);
        assert_eq!(&buf[..m.len], &payload[..]);
        assert_eq!(m.src, ba);
        let rx = m.software.expect("A's RX software stamp").as_ns();
        assert!(tx_sw <= rx && rx <= t2);
        assert_eq!(m.ttl_or_hoplimit, Some(ttl));
        assert_eq!(m.dst, Some(aa.ip()));
    }
    eprintln!("{a_addr}: {rounds} rounds, {st:?}");
    // Loopback stamps inside sendmsg: measured to hold on every datagram.
    assert_eq!(st.tx_outside_bracket, 0, "{st:?}");
    assert_errqueue_empty(&a.s);
    assert_errqueue_empty(&b.s);
    assert!(a.s.recv_from(&mut buf).unwrap().is_none());
    assert!(b.s.recv_from(&mut buf).unwrap().is_none());
    assert_eq!(a.s.take_icmp_errors() + b.s.take_icmp_errors(), 0);
    unstamped
}

#[test]
fn ipv4_loopback_stamps() {
    ping_pong("127.0.0.1:0", "127.0.0.1:0", 64, ROUNDS);
}

#[test]
fn ipv6_loopback_stamps() {
    ping_pong("[::1]:0", "[::1]:0", 64, ROUNDS);
}

#[test]
fn truncated_datagram_reports_real_length() {
    let a = UdpTsSocket::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let b = UdpTsSocket::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    b.enable_timestamping(false).unwrap();
    let payload = [0xA5u8; 300];
    assert!(a.send_to(&payload, b.local_addr()).unwrap());
    let mut small = [0u8; 16];
    let (m, _) = recv(&b, &mut small);
    assert_eq!(m.len, 300);
    assert!(m.truncated(small.len()));
    assert_eq!(small, [0xA5; 16]);
    assert_eq!(m.src, a.local_addr());
}

#[test]
fn wildcard_reflector_replies_from_the_request_address() {
    // lo holds 127.0.0.0/8: ask 127.0.0.2, expect the answer from it.
    let refl = Side::new("0.0.0.0:0");
    let port = refl.addr().port();
    let client = UdpTsSocket::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let to: SocketAddr = format!("127.0.0.2:{port}").parse().unwrap();
    assert!(client.send_to(b"req", to).unwrap());
    let mut buf = [0u8; 64];
    let (m, _) = recv(&refl.s, &mut buf);
    assert_eq!(m.dst, Some("127.0.0.2".parse().unwrap()));
    assert_eq!(m.src, client.local_addr());
    assert!(refl.s.send_to_from(b"rep", m.src, m.dst).unwrap());
    let (r, _) = recv(&client, &mut buf);
    assert_eq!(r.src, to);
    // Without pktinfo the kernel picks the route's source, 127.0.0.1.
    assert!(refl.s.send_to(b"rep", m.src).unwrap());
    let (r, _) = recv(&client, &mut buf);
    assert_eq!(r.src.ip(), "127.0.0.1".parse::<IpAddr>().unwrap());
}

#[test]
fn icmp_unreachable_is_counted_not_raised() {
    let mut a = Side::new("127.0.0.1:0");
    // A port nobody listens on: bind one, note it, close it.
    let closed = UdpTsSocket::bind("127.0.0.1:0".parse().unwrap())
        .unwrap()
        .local_addr();
    let b = Side::new("127.0.0.1:0");
    let mut icmp = 0;
    for _ in 0..3 {
        a.send(b"nobody", closed, None);
    }
    // Ordinary traffic still works, with the ICMP errors pending.
    let mut buf = [0u8; 64];
    let (_, _, _, _) = a.send(b"hello", b.addr(), None);
    let (m, _) = recv(&b.s, &mut buf);
    assert_eq!(&buf[..m.len], b"hello");
    assert!(a.s.recv_from(&mut buf).unwrap().is_none());
    // Drain: the ICMP entries are consumed silently and counted.
    let end = Instant::now() + Duration::from_secs(2);
    while icmp < 3 && Instant::now() < end {
        assert!(a.s.recv_tx_timestamp().unwrap().is_none());
        icmp += a.s.take_icmp_errors();
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(icmp, 3);
    // And the OPT_ID counter carries on.
    a.send(b"again", b.addr(), None);
    recv(&b.s, &mut buf);
}

#[test]
fn wait_readable_times_out() {
    let a = UdpTsSocket::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let t = Instant::now();
    assert!(!a.wait_readable(Duration::from_millis(30)).unwrap());
    assert!(t.elapsed() >= Duration::from_millis(29));
    let b = UdpTsSocket::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    assert!(b.send_to(b"x", a.local_addr()).unwrap());
    assert!(a.wait_readable(Duration::from_secs(2)).unwrap());
    // Blocking mode: recv_from waits for the datagram instead of None.
    a.set_nonblocking(false).unwrap();
    let mut buf = [0u8; 8];
    assert_eq!(a.recv_from(&mut buf).unwrap().unwrap().len, 1);
    a.set_nonblocking(true).unwrap();
    assert!(a.recv_from(&mut buf).unwrap().is_none());
}

#[test]
fn stamp_port_862() {
    let addr: SocketAddr = "127.0.0.1:862".parse().unwrap();
    match UdpTsSocket::bind(addr) {
        Ok(s) => {
            assert!(misura_sys::host::is_root() || unprivileged_start() <= 862);
            assert_eq!(s.local_addr(), addr);
        }
        Err(e @ SysError::PrivilegedPort { port }) => {
            assert!(!misura_sys::host::is_root());
            assert_eq!(port, 862);
            assert!(e.to_string().contains("CAP_NET_BIND_SERVICE"), "{e}");
        }
        // The kernel checks the privilege before whether the port is free:
        // in use means the bind was allowed.
        Err(SysError::PortInUse { source, .. })
            if source.raw_os_error() == Some(libc_eaddrinuse()) =>
        {
            assert!(misura_sys::host::is_root() || unprivileged_start() <= 862);
        }
        Err(e) => panic!("{e}"),
    }
}

fn unprivileged_start() -> u32 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_unprivileged_port_start")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(1024)
}

fn libc_eaddrinuse() -> i32 {
    98 // EADDRINUSE on Linux
}
