//! The reflector's UDP loop: receive with the kernel's (and the NIC's) RX
//! stamp, let the core decide, send, then read the reply's TX stamps back
//! from the error queue for the next reply's Follow-Up Telemetry TLV and
//! the turnaround on the reflector's own stamps.

use super::clock::{reply_timestamp, rx_stamp};
use super::turn::Loop;
use crate::error::{Result, RttError};
use misura_measure::reflector::{Decision, Peer, RequestMeta, Stamp};
use misura_measure::TimestampSource;
use misura_report::BusyPoll;
use misura_run::stamping::{Hardware, Timestamps};
use misura_sys::clock::realtime;
use misura_sys::packet::TimestampingGranted;
use misura_sys::udp::{ReceiveInfo, UdpTsSocket};
use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use super::turn::{BUF_LEN, STOP_CHECK};

/// Replies whose TX stamp may still be pending, matched by OPT_ID.
const TX_RING: usize = 256;
/// The UDP socket's receive queue (SO_RCVBUF), in bytes.
const RECV_BUFFER: usize = 8 << 20;

/// The socket on `ip:port`, with the kernel's stamps and, when `hw`
/// enabled them on the interface, the NIC's.
pub fn open(
    ip: IpAddr,
    port: u16,
    stamps: Timestamps,
    hw: &Hardware,
) -> Result<(UdpTsSocket, TimestampingGranted)> {
    let addr = SocketAddr::new(ip, port);
    let sock =
        UdpTsSocket::bind(addr).map_err(RttError::setup(format!("listening on UDP {addr}")))?;
    // The reflector reports each request's TTL. On the wildcard address it
    // answers from the address the request came to (pktinfo); bound to one
    // address it answers from that one, so it does not ask (a control
    // message less copied out on every receive).
    let info = ReceiveInfo {
        ttl: true,
        pktinfo: ip.is_unspecified(),
    };
    let granted =
        misura_run::stamping::enable(&sock, stamps, hw, info).map_err(RttError::setup(format!(
            "setting up the stamps and control messages on UDP {addr}"
        )))?;
    // A deep queue rides out a flood's bursts (and moments the loop is off
    // the CPU) instead of dropping real requests with the flood's.
    if let Err(e) = sock.set_recv_buffer(RECV_BUFFER) {
        log::warn!("misura reflect: note: {e}; the default receive queue is used");
    }
    Ok((sock, granted))
}

/// How the UDP loop waits for a request: blocking in the receive (woken
/// by the kernel, with a timeout so the stop flag is seen), or spinning on
/// non-blocking receives with `SO_BUSY_POLL` asked for when `busy_poll`.
pub fn wait_mode(sock: &UdpTsSocket, busy_poll: bool) -> Result<Option<BusyPoll>> {
    if busy_poll {
        return Ok(Some(misura_run::busy_poll::ask(sock)));
    }
    sock.set_nonblocking(false)?;
    sock.set_recv_timeout(STOP_CHECK)?;
    Ok(None)
}

/// A sent reply whose TX stamps are awaited, by OPT_ID.
#[derive(Copy, Clone)]
struct Pending {
    id: u32,
    peer: Peer,
    reply_seq: u32,
    /// The request's RX stamp: the TX stamp used is on the same clock.
    rx: Stamp,
    /// Stamp reports still to come for this send (kernel, NIC).
    left: usize,
    /// A TX stamp on the RX stamp's clock was used.
    used: bool,
}

/// The loop's TX-stamp bookkeeping.
struct TxStamps {
    ring: Vec<Option<Pending>>,
    /// OPT_ID numbers datagrams from 0 in send order (timestamping was
    /// enabled on this fresh socket just before).
    next_id: u32,
    /// Stamp reports not read yet.
    unread: usize,
    /// Reports each send gets (0: no TX stamps; 2: the kernel's and the NIC's).
    per_send: usize,
}

/// Whether a sleeping loop yields its CPU after a reply, before it reads
/// the reply's TX stamp. On a CPU it shares with the client the reply's
/// wake-up does not preempt the loop (its slice is short), so without a
/// yield the client waits for the stamp's read and the loop's next
/// receive (about 1.2 µs of its round trip on a VM, docs/own-cost.md);
/// with it the client finishes first (the yield takes 8–16 µs) and the
/// loop reads the stamp after. A peer that never blocks (a spinning
/// client, a CPU hog) shows as yields that mostly return at once (the
/// scheduler picks the loop again) and now and then keep it off the CPU
/// for milliseconds, so that its next request waits too: in each window
/// of yields where that is seen, the loop stops yielding for a while.
struct Yield {
    /// The loop spins (`--busy-poll`): it never yields.
    never: bool,
    /// Yields in this window, those that returned at once, those that
    /// took long.
    seen: u32,
    quick: u32,
    long: u32,
    /// Not before this.
    paused_until: Option<Instant>,
}

/// Yields per window.
const YIELD_WINDOW: u32 = 32;
/// A yield this short gave the CPU to no one.
const YIELD_QUICK: Duration = Duration::from_micros(4);
/// A yield this long held the loop off its CPU.
const YIELD_LONG: Duration = Duration::from_micros(200);
/// How long the loop stops yielding after a window that saw a peer that
/// never blocks.
const YIELD_PAUSE: Duration = Duration::from_secs(2);

impl Yield {
    fn new(never: bool) -> Yield {
        Yield {
            never,
            seen: 0,
            quick: 0,
            long: 0,
            paused_until: None,
        }
    }

    fn before_stamp_read(&mut self) {
        if self.never || self.paused_until.is_some_and(|t| Instant::now() < t) {
            return;
        }
        let t0 = Instant::now();
        std::thread::yield_now();
        let now = Instant::now();
        self.record(now - t0, now);
    }

    /// One yield that took `took`, ended at `now`.
    fn record(&mut self, took: Duration, now: Instant) {
        self.seen += 1;
        self.quick += u32::from(took < YIELD_QUICK);
        self.long += u32::from(took > YIELD_LONG);
        if self.seen >= YIELD_WINDOW {
            if self.long > 0 && self.quick * 2 > self.seen {
                self.paused_until = Some(now + YIELD_PAUSE);
            }
            (self.seen, self.quick, self.long) = (0, 0, 0);
        }
    }
}

/// The UDP loop. Without `--busy-poll` it blocks in the receive itself
/// (one system call per request, no poll(2) in front of it); with it, it
/// spins on non-blocking receives. After each reply it reads that reply's
/// TX stamps and nothing more: no look at an empty queue sits between a
/// reply and the next receive.
pub fn run(lp: &mut Loop<'_>, sock: &UdpTsSocket, g: &TimestampingGranted) {
    let mut buf = vec![0u8; BUF_LEN];
    let mut out = vec![0u8; BUF_LEN];
    let mut tx = TxStamps {
        ring: vec![None; TX_RING],
        next_id: 0,
        unread: 0,
        per_send: usize::from(g.software_tx) + usize::from(g.hardware_tx),
    };
    let hw_rx = g.hardware_rx;
    let wildcard = sock.local_addr().ip().is_unspecified();
    let mut yld = Yield::new(lp.busy_poll);
    while !lp.should_stop() {
        lp.clocks.refresh();
        let got = sock.recv_from(&mut buf);
        // The user RX stamp when the kernel gave none, and "now".
        let after_recv = realtime();
        let m = match got {
            Ok(Some(m)) => m,
            Ok(None) => continue,
            Err(_) => {
                lp.io.recv_errors += 1;
                // A persistent error must not turn the loop into a spin.
                std::thread::sleep(Duration::from_millis(1));
                continue;
            }
        };
        if tx.unread > 0 {
            // A stamp that came late (the NIC's do, after the send
            // returned): read it before this reply, which carries it as a
            // follow-up.
            drain(lp, sock, &mut tx);
        }
        if hw_rx && m.hardware.is_none() {
            lp.io.rx_hw_stamp_missing += 1;
        }
        let meta = RequestMeta {
            src: Peer::Udp(m.src),
            dst: m.dst,
            ttl: m.ttl_or_hoplimit,
            rx: rx_stamp(m.software, m.hardware, after_recv),
            truncated: m.truncated(buf.len()),
        };
        let request = &buf[..m.len.min(buf.len())];
        // The reply's transmit stamp: with a kernel RX stamp, the clock
        // read above (the kernel's TX stamp follows up). Without one that
        // read is the RX stamp, so the clock is read again here, just
        // before the reply is built: else the turnaround was 0 by
        // construction (`--timestamps user`). On the NIC's clock when the
        // RX stamp is the NIC's.
        let now = if m.software.is_some() {
            after_recv
        } else {
            realtime()
        };
        let now = reply_timestamp(&meta.rx, m.software, now);
        let clock = *lp.clocks.for_stamp(&meta.rx);
        let Decision::Reply { len, reply_seq } =
            lp.reflector.handle(request, &meta, now, &clock, &mut out)
        else {
            continue;
        };
        // The reply leaves from the address the request came to: only a
        // socket on the wildcard address needs IP_PKTINFO to say which (it
        // costs the send about a µs).
        let from = if wildcard { m.dst } else { None };
        match sock.send_to_from(&out[..len], m.src, from) {
            Ok(true) => {
                let slot = &mut tx.ring[tx.next_id as usize % TX_RING];
                if let Some(old) = slot.take() {
                    // Its reports are not coming any more.
                    tx.unread = tx.unread.saturating_sub(old.left);
                    never_stamped(lp, &old);
                }
                *slot = Some(Pending {
                    id: tx.next_id,
                    peer: meta.src,
                    reply_seq,
                    rx: meta.rx,
                    left: tx.per_send,
                    used: false,
                });
                tx.next_id = tx.next_id.wrapping_add(1);
                tx.unread = (tx.unread + tx.per_send).min(TX_RING * 2);
            }
            Ok(false) => lp.io.send_busy += 1,
            Err(_) => lp.io.send_errors += 1,
        }
        // The stamp of a software-stamped send is queued by the time send
        // returns on most paths: read it now so the very next reply to
        // this source can carry it.
        if tx.unread > 0 {
            yld.before_stamp_read();
            drain(lp, sock, &mut tx);
        }
    }
    tx.unread = TX_RING * 2;
    drain(lp, sock, &mut tx);
    for p in tx.ring.iter().flatten() {
        never_stamped(lp, p);
    }
}

/// A reply whose request the NIC stamped, but whose NIC TX stamp never came.
fn never_stamped(lp: &mut Loop<'_>, p: &Pending) {
    if !p.used && p.rx.source == TimestampSource::NicHardware {
        lp.io.tx_hw_stamp_missing += 1;
    }
}

/// Reads up to `tx.unread` TX stamp reports (fewer when the queue runs dry).
fn drain(lp: &mut Loop<'_>, sock: &UdpTsSocket, tx: &mut TxStamps) {
    let mut read = 0;
    while read < tx.unread {
        match sock.recv_tx_timestamp() {
            Ok(Some(st)) => {
                read += 1;
                let slot = &mut tx.ring[st.id as usize % TX_RING];
                let Some(p) = slot.as_mut().filter(|p| p.id == st.id) else {
                    lp.io.tx_stamps_unmatched += 1;
                    continue;
                };
                p.left = p.left.saturating_sub(1);
                // Only a TX stamp on the clock of the request's RX stamp
                // makes a turnaround (and a follow-up the sender can use).
                let (at, source) = match p.rx.source {
                    TimestampSource::NicHardware => (st.hardware, TimestampSource::NicHardware),
                    _ => (st.software, TimestampSource::KernelSoftware),
                };
                if let (Some(tx), false) = (at, p.used) {
                    p.used = true;
                    lp.reflector.on_tx_stamp(p.peer, p.reply_seq, tx, source);
                    lp.io.tx_stamps_matched += 1;
                    lp.turnaround(source, (tx - p.rx.at).as_ns());
                }
                if p.left == 0 {
                    let done = *p;
                    *slot = None;
                    never_stamped(lp, &done);
                }
            }
            Ok(None) => break,
            Err(_) => {
                lp.io.tx_stamp_errors += 1;
                break;
            }
        }
    }
    tx.unread -= read.min(tx.unread);
    lp.io.icmp_errors += sock.take_icmp_errors();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(y: &mut Yield, took_us: impl Fn(u32) -> u64, now: Instant) {
        for i in 0..YIELD_WINDOW {
            y.record(Duration::from_micros(took_us(i)), now);
        }
    }

    #[test]
    fn a_client_that_blocks_keeps_the_yields() {
        let now = Instant::now();
        let mut y = Yield::new(false);
        // 8-16 µs each, and one long one (the client's own start).
        window(&mut y, |i| if i == 3 { 900 } else { 12 }, now);
        assert!(y.paused_until.is_none());
    }

    #[test]
    fn a_peer_that_never_blocks_pauses_them() {
        let now = Instant::now();
        let mut y = Yield::new(false);
        // Mostly back at once, now and then milliseconds behind a spinner.
        window(&mut y, |i| if i % 20 == 7 { 2_000 } else { 1 }, now);
        assert_eq!(y.paused_until, Some(now + YIELD_PAUSE));
        // A CPU of its own: every yield back at once, none long.
        let mut y = Yield::new(false);
        window(&mut y, |_| 1, now);
        assert!(y.paused_until.is_none());
    }
}
