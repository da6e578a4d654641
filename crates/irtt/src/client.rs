//! The irtt client's I/O: the open handshake (irtt's retries, bounded),
//! probes at the granted interval on a connected, kernel-stamped UDP
//! socket, the replies matched in [`crate::tally`], a bounded wait for the
//! last replies, and the close. A grant outside the request
//! ([`crate::grant`]) ends the session before a probe is sent.

use crate::error::{socket as sockerr, Error};
use crate::tally::Tally;
use misura_measure::time::{Instant, Span};
use misura_sys::clock::{monotonic, realtime_ns};
use misura_sys::udp::UdpTsSocket;
use misura_wire::irtt::{self, Echo, IrttError, Layout, Packet, MAX_PACKET_LEN};
use misura_wire::irtt_params::Params;
use std::net::SocketAddr;

type Result<T> = std::result::Result<T, Error>;

/// irtt's open retries: a request, then waits of 1, 2 and 4 s (7 s in all).
pub const OPEN_WAITS: [Span; 3] = [Span::from_secs(1), Span::from_secs(2), Span::from_secs(4)];
/// Longest wait for the last replies after the last probe.
pub const MAX_FINAL_WAIT: Span = Span::from_secs(4);
/// Longest single wait on the socket, so a stop is seen within it.
const POLL: Span = Span::from_millis(100);
/// Sent-probe ids whose kernel TX stamp may still come.
const ID_RING: usize = 4096;

/// What the client is asked for.
#[derive(Debug, Clone)]
pub struct Options {
    pub target: SocketAddr,
    pub key: Option<Vec<u8>>,
    /// The wanted parameters (the server may restrict them).
    pub params: Params,
    /// Stop after this many probes (else the granted duration).
    pub count: Option<u64>,
}

/// A finished (or stopped) client run.
pub struct Run {
    pub local: SocketAddr,
    pub granted: Params,
    pub tally: Tally,
    /// From the first probe to the end of the final wait.
    pub elapsed: Span,
    /// The final wait's length.
    pub final_wait: Span,
    /// Stopped by the caller before the end.
    pub interrupted: bool,
    /// The grant means fewer probes than asked: why, in words.
    pub short: Option<String>,
}

fn socket(target: SocketAddr) -> Result<UdpTsSocket> {
    let any: SocketAddr = if target.is_ipv4() {
        (std::net::Ipv4Addr::UNSPECIFIED, 0).into()
    } else {
        (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
    };
    let mut sock = UdpTsSocket::bind(any).map_err(sockerr("binding the irtt client socket"))?;
    sock.connect(target)
        .map_err(sockerr("connecting the irtt client socket"))?;
    sock.enable_stamps(false)
        .map_err(sockerr("enabling kernel stamps on the irtt client socket"))?;
    sock.set_nonblocking(false)
        .map_err(sockerr("making the irtt client socket blocking"))?;
    Ok(sock)
}

/// The handshake: the granted parameters and the token, or a clear error.
fn open(
    sock: &UdpTsSocket,
    o: &Options,
    stop: &dyn Fn() -> bool,
    bad: &mut (u64, u64),
    sends: &mut u32,
) -> Result<(u64, Params)> {
    let key = o.key.as_deref();
    let mut out = [0u8; 512];
    let n = irtt::emit_open(None, &o.params, false, key, &mut out)?;
    let mut buf = vec![0u8; MAX_PACKET_LEN + 1];
    for wait in OPEN_WAITS {
        if sock
            .send_to(&out[..n], o.target)
            .map_err(sockerr("sending the irtt open request"))?
        {
            *sends += 1;
        }
        let until = monotonic() + wait;
        while let Some(left) = left_until(until) {
            if stop() {
                return Err(Error::Stopped { target: o.target });
            }
            sock.set_recv_timeout(left.min(POLL).to_std())
                .map_err(sockerr("setting the irtt client's receive timeout"))?;
            let m = match sock.recv_from(&mut buf) {
                Ok(Some(m)) => m,
                Ok(None) => continue,
                // An ICMP port unreachable: nobody listens there.
                Err(source) => {
                    return Err(Error::Unreachable {
                        target: o.target,
                        source,
                    })
                }
            };
            match irtt::parse(&buf[..m.len.min(buf.len())], key, true) {
                Ok(Packet::Open {
                    close: true,
                    params,
                    ..
                }) => {
                    return Err(Error::Refused {
                        target: o.target,
                        version: params.protocol_version,
                        ours: irtt::PROTOCOL_VERSION,
                    })
                }
                Ok(Packet::Open {
                    token: Some(t),
                    params,
                    ..
                }) => return Ok((t, params)),
                Err(
                    IrttError::HmacMismatch | IrttError::HmacMissing | IrttError::HmacUnexpected,
                ) => bad.1 += 1,
                _ => bad.0 += 1,
            }
        }
    }
    let total = OPEN_WAITS.iter().fold(Span::ZERO, |a, &w| a + w);
    let hint = if bad.1 > 0 {
        format!(
            "; {} replies failed the HMAC check: give the server's HMAC key",
            bad.1
        )
    } else if bad.0 > 0 {
        format!("; {} malformed datagrams came back", bad.0)
    } else if key.is_some() {
        "; an irtt server with another --hmac key drops the requests unanswered: check the key"
            .into()
    } else {
        "; an irtt server started with --hmac=KEY drops requests without its key: give its key"
            .into()
    };
    Err(Error::NoOpenReply {
        target: o.target,
        waited_s: total.to_std().as_secs(),
        sent: OPEN_WAITS.len(),
        hint,
    })
}

/// Runs one irtt session against `o.target` until the granted duration
/// (or `o.count` probes) has passed, or `stop()`.
pub fn run(o: &Options, stop: &dyn Fn() -> bool) -> Result<Run> {
    let sock = socket(o.target)?;
    let local = sock.local_addr();
    let mut bad = (0, 0);
    // Datagrams sent so far: the kernel numbers their TX stamps (OPT_ID) from 0.
    let mut next_id: u32 = 0;
    let (token, granted) = open(&sock, o, stop, &mut bad, &mut next_id)?;
    let key = o.key.as_deref();
    let mut out = vec![0u8; MAX_PACKET_LEN];
    if let Err(e) = crate::grant::check(o.target, &o.params, &granted) {
        // Nothing is sent at the grant: the session is closed at once.
        let n = irtt::emit_close(token, key, &mut out)?;
        let _ = sock.send_to(&out[..n], o.target);
        return Err(e);
    }
    let short = crate::grant::shortfall(&o.params, &granted, o.count);
    let layout = Layout::new(&granted, key.is_some());
    let len = layout.packet_len(granted.length.max(0) as usize);
    let mut tally = Tally::new(layout);
    tally.counts.malformed += bad.0;
    tally.counts.hmac_failures += bad.1;
    let interval = Span::from_ns(granted.interval_ns.max(1));
    let duration = Span::from_ns(granted.duration_ns.max(0));
    let mut buf = vec![0u8; MAX_PACKET_LEN + 1];
    let start = monotonic();
    // The schedule's origin: moved forward when the client falls more than
    // an interval behind, so it never sends a catch-up burst (irtt's server
    // drops packets that come faster than its minimum interval).
    let mut origin = start;
    let mut seq: u32 = 0;
    let mut interrupted = false;
    let mut io = Io {
        sock: &sock,
        key,
        layout: &layout,
        token,
        id_seq: vec![None; ID_RING],
    };
    loop {
        if stop() {
            interrupted = true;
            break;
        }
        let offset = interval.saturating_mul(i64::from(seq));
        // The granted duration in probes: the schedule's shifts do not shorten it.
        if offset >= duration || o.count.is_some_and(|c| u64::from(seq) >= c) {
            break;
        }
        let mut due = origin.saturating_add(offset);
        let late = monotonic() - due;
        if late > interval {
            origin += late;
            due += late;
        }
        // Receive until this probe is due.
        io.receive_until(due, &mut buf, &mut tally, stop)?;
        let e = Echo {
            token,
            seqno: seq,
            ..Echo::default()
        };
        let n = irtt::emit_echo(&layout, &e, false, len, key, &mut out)?;
        let tx = realtime_ns();
        if sock
            .send_to(&out[..n], o.target)
            .map_err(sockerr("sending an irtt probe"))?
        {
            tally.sent(seq, Instant::from_ns(tx));
            io.id_seq[next_id as usize % ID_RING] = Some(seq);
            next_id = next_id.wrapping_add(1);
        }
        io.tx_stamps(&mut tally);
        seq = seq.wrapping_add(1);
    }
    // The last replies: three times the largest RTT seen, at least
    // 200 ms, at most 4 s (half a second when stopped), so the probes in
    // flight are not counted lost.
    let max = Span::from_ns(tally.rtt.max().unwrap_or(0).max(0));
    let cap = if interrupted {
        Span::from_millis(500)
    } else {
        MAX_FINAL_WAIT
    };
    let final_wait = max.saturating_mul(3).max(Span::from_millis(200)).min(cap);
    io.receive_until(monotonic() + final_wait, &mut buf, &mut tally, &|| false)?;
    io.tx_stamps(&mut tally);
    let n = irtt::emit_close(token, key, &mut out)?;
    let _ = sock.send_to(&out[..n], o.target);
    tally.finish();
    Ok(Run {
        local,
        granted,
        tally,
        elapsed: monotonic() - start,
        final_wait,
        interrupted: interrupted || stop(),
        short,
    })
}

/// The time left until `until` on the monotonic clock, while some is.
fn left_until(until: Instant) -> Option<Span> {
    Some(until - monotonic()).filter(|left| left.is_positive())
}

struct Io<'a> {
    sock: &'a UdpTsSocket,
    key: Option<&'a [u8]>,
    layout: &'a Layout,
    token: u64,
    /// The probe of each sent datagram, by OPT_ID.
    id_seq: Vec<Option<u32>>,
}

impl Io<'_> {
    /// Receives replies until `until` (or `stop()`).
    fn receive_until(
        &mut self,
        until: Instant,
        buf: &mut [u8],
        tally: &mut Tally,
        stop: &dyn Fn() -> bool,
    ) -> Result<()> {
        while let Some(left) = left_until(until) {
            if stop() {
                return Ok(());
            }
            // ppoll(2): woken on time for the next probe (a receive
            // timeout would round up to the kernel's tick).
            let ready = self
                .sock
                .wait(left.min(POLL).to_std())
                .map_err(sockerr("waiting for irtt replies"))?;
            if ready.error_queue {
                self.tx_stamps(tally);
            }
            if !ready.data {
                continue;
            }
            let m = match self.sock.recv_from_nowait(buf) {
                Ok(Some(m)) => m,
                Ok(None) => continue,
                Err(_) => {
                    // An ICMP error (e.g. port unreachable): counted by the
                    // missing replies; do not spin.
                    std::thread::sleep(Span::from_millis(1).min(left).to_std());
                    continue;
                }
            };
            let user_rx = realtime_ns();
            let rx = m.software.map(Instant::as_ns).unwrap_or_else(|| {
                tally.counts.rx_user_clock += 1;
                user_rx
            });
            let d = &buf[..m.len.min(buf.len())];
            match irtt::parse(d, self.key, true) {
                Ok(Packet::Echo { token }) if token == self.token => {
                    match irtt::parse_echo(d, self.layout) {
                        Ok(e) => tally.reply(&e, Instant::from_ns(rx), Instant::from_ns(user_rx)),
                        Err(_) => tally.counts.malformed += 1,
                    }
                }
                Err(
                    IrttError::HmacMismatch | IrttError::HmacMissing | IrttError::HmacUnexpected,
                ) => tally.counts.hmac_failures += 1,
                _ => tally.counts.malformed += 1,
            }
        }
        Ok(())
    }

    /// Reads the kernel TX stamps queued so far.
    fn tx_stamps(&mut self, tally: &mut Tally) {
        for _ in 0..64 {
            match self.sock.recv_tx_timestamp() {
                Ok(Some(st)) => {
                    if let Some(at) = st.software {
                        if let Some(seq) = self.id_seq[st.id as usize % ID_RING].take() {
                            tally.tx_stamp(seq, at);
                        }
                    }
                }
                _ => break,
            }
        }
    }
}
