//! iperf3's data streams, either end: one thread per stream that sends
//! (TCP: `len`-byte writes; UDP: `len`-byte datagrams with iperf3's header,
//! paced to the stream's rate) or receives and counts (UDP: iperf3's loss,
//! out-of-order and RFC 1889 jitter arithmetic on its sequence numbers).

use misura_sys::tcpinfo::TcpInfo;
use misura_wire::iperf3::UdpHeader;
use std::io::{ErrorKind, Read, Write};
use std::net::{TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How often a blocked stream thread looks at its stop flag.
const TICK: Duration = Duration::from_millis(50);

/// A data connection.
pub enum Sock {
    Tcp(TcpStream),
    Udp(UdpSocket),
}

/// How one stream runs.
#[derive(Clone, Copy, Debug)]
pub struct StreamSpec {
    pub sender: bool,
    pub len: usize,
    /// Bit/s for this stream; 0 = as fast as it goes (TCP only).
    pub rate_bps: u64,
    pub counters64: bool,
}

/// What a stream moved, as this end counted it.
#[derive(Clone, Debug, Default)]
pub struct StreamOutcome {
    pub sender: bool,
    pub bytes: u64,
    /// UDP: datagrams sent, or the highest sequence number received.
    pub packets: u64,
    /// UDP receiver: datagrams received.
    pub received_packets: u64,
    /// UDP receiver: lost (sequence gaps less out-of-order), iperf3's count.
    pub lost: u64,
    pub out_of_order: u64,
    /// UDP receiver: RFC 1889 jitter, seconds (sender's clock vs ours).
    pub jitter_s: f64,
    pub send_errors: u64,
    pub elapsed: Duration,
    /// TCP_INFO at the stream's end (this end's socket).
    pub info: Option<TcpInfo>,
    /// Why the stream ended early, if it did.
    pub error: Option<String>,
}

/// A running stream: its thread gives back the socket (kept open until the
/// results are exchanged) and what it moved.
pub type Running = JoinHandle<(Sock, StreamOutcome)>;

/// Start a stream's thread; it runs until `stop` (senders) or the peer's
/// end of stream / `stop` (receivers). `stop` is seen within one read or
/// write (at most [`TICK`]), whatever the peer sends: a trickle or an
/// endless stream cannot keep the thread. Every byte moved is added to
/// `moved`, shared by the test's streams, so the caller sees the data go
/// idle.
pub fn start(
    sock: Sock,
    spec: StreamSpec,
    stop: Arc<AtomicBool>,
    moved: Arc<AtomicU64>,
) -> std::io::Result<Running> {
    std::thread::Builder::new()
        .name("iperf3-stream".into())
        .spawn(move || {
            let t0 = Instant::now();
            let mut o = StreamOutcome {
                sender: spec.sender,
                ..Default::default()
            };
            let mut sock = sock;
            let r = match (&mut sock, spec.sender) {
                (Sock::Tcp(s), true) => tcp_send(s, &spec, &stop, &mut o, &moved),
                (Sock::Tcp(s), false) => tcp_recv(s, &spec, &stop, &mut o, &moved),
                (Sock::Udp(s), true) => udp_send(s, &spec, &stop, &mut o, &moved),
                (Sock::Udp(s), false) => udp_recv(s, &spec, &stop, &mut o, &moved),
            };
            o.elapsed = t0.elapsed();
            if let Sock::Tcp(s) = &sock {
                o.info = misura_sys::tcpinfo::tcp_info(s).ok();
            }
            if let Err(e) = r {
                o.error = Some(e.to_string());
            }
            (sock, o)
        })
}

fn transient(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
    )
}

/// Sleep until the bytes sent are within the stream's rate (token bucket
/// from `t0`); false when stopped meanwhile.
fn pace(spec: &StreamSpec, t0: Instant, bytes: u64, stop: &AtomicBool) -> bool {
    if spec.rate_bps == 0 {
        return !stop.load(Ordering::Relaxed);
    }
    loop {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        let due = Duration::from_secs_f64(bytes as f64 * 8.0 / spec.rate_bps as f64);
        let now = t0.elapsed();
        if now >= due {
            return true;
        }
        let wait = due - now;
        if wait > Duration::from_micros(200) {
            std::thread::sleep(wait.min(TICK));
        } else {
            std::hint::spin_loop();
        }
    }
}

fn payload(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i % 251) as u8).collect()
}

fn tcp_send(
    s: &mut TcpStream,
    spec: &StreamSpec,
    stop: &AtomicBool,
    o: &mut StreamOutcome,
    moved: &AtomicU64,
) -> std::io::Result<()> {
    s.set_write_timeout(Some(TICK))?;
    let buf = payload(spec.len);
    let t0 = Instant::now();
    while pace(spec, t0, o.bytes, stop) {
        match s.write(&buf) {
            Ok(n) => {
                o.bytes += n as u64;
                moved.fetch_add(n as u64, Ordering::Relaxed);
            }
            Err(e) if transient(&e) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn tcp_recv(
    s: &mut TcpStream,
    spec: &StreamSpec,
    stop: &AtomicBool,
    o: &mut StreamOutcome,
    moved: &AtomicU64,
) -> std::io::Result<()> {
    s.set_read_timeout(Some(TICK))?;
    let mut buf = vec![0u8; spec.len.max(64 * 1024)];
    // The flag is looked at before every read, not only when one times
    // out: a peer sending a byte every 30 ms never lets a read time out.
    // Once it is set, what the peer sent before its end is still in the
    // socket: read on until a read finds nothing for a tick, but never
    // beyond DRAIN (a trickle or an endless sender cannot keep the thread).
    let mut drain_until: Option<Instant> = None;
    loop {
        if stop.load(Ordering::Relaxed) {
            let until = *drain_until.get_or_insert_with(|| Instant::now() + DRAIN);
            if Instant::now() >= until {
                return Ok(());
            }
        }
        match s.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => {
                o.bytes += n as u64;
                moved.fetch_add(n as u64, Ordering::Relaxed);
            }
            Err(e) if transient(&e) => {
                if drain_until.is_some() {
                    return Ok(());
                }
            }
            Err(e) if e.kind() == ErrorKind::ConnectionReset => return Ok(()),
            Err(e) => return Err(e),
        }
    }
}

/// The longest a TCP receiver reads on after its stop flag is set: what
/// the peer had sent before its end is in the socket's buffer (read in a
/// few ms even at 10 Gbit/s); a sender that goes on past its end is cut
/// here, and a signal ends the run at most this much later.
const DRAIN: Duration = Duration::from_millis(250);

fn wall_clock() -> (u32, u32) {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    (d.as_secs() as u32, d.subsec_micros())
}

fn udp_send(
    s: &mut UdpSocket,
    spec: &StreamSpec,
    stop: &AtomicBool,
    o: &mut StreamOutcome,
    moved: &AtomicU64,
) -> std::io::Result<()> {
    s.set_write_timeout(Some(TICK))?;
    let mut buf = payload(spec.len.max(UdpHeader::len(spec.counters64)));
    let t0 = Instant::now();
    while pace(spec, t0, o.bytes, stop) {
        let (sec, usec) = wall_clock();
        let h = UdpHeader {
            sec,
            usec,
            seq: o.packets + 1,
        };
        h.emit(&mut buf, spec.counters64)
            .expect("the buffer holds the header");
        match s.send(&buf) {
            Ok(n) => {
                o.bytes += n as u64;
                o.packets += 1;
                moved.fetch_add(n as u64, Ordering::Relaxed);
            }
            Err(e) if transient(&e) => {}
            // ENOBUFS / ECONNREFUSED from a receiver gone: counted, not fatal.
            Err(_) => {
                o.send_errors += 1;
                o.bytes += spec.len as u64; // keep the schedule
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    }
    Ok(())
}

fn udp_recv(
    s: &mut UdpSocket,
    spec: &StreamSpec,
    stop: &AtomicBool,
    o: &mut StreamOutcome,
    moved: &AtomicU64,
) -> std::io::Result<()> {
    s.set_read_timeout(Some(TICK))?;
    let mut buf = vec![0u8; 65_536];
    let mut prev_transit: Option<f64> = None;
    // As tcp_recv: the flag before every datagram (an endless flood never
    // lets a read time out).
    while !stop.load(Ordering::Relaxed) {
        match s.recv(&mut buf) {
            Ok(n) => {
                let Ok(h) = UdpHeader::parse(&buf[..n], spec.counters64) else {
                    continue; // a stray connect message, too short for data
                };
                o.bytes += n as u64;
                o.received_packets += 1;
                moved.fetch_add(n as u64, Ordering::Relaxed);
                if h.seq > o.packets {
                    o.lost += h.seq - o.packets - 1;
                    o.packets = h.seq;
                } else {
                    o.out_of_order += 1;
                    o.lost = o.lost.saturating_sub(1);
                }
                let (sec, usec) = wall_clock();
                let transit = (sec as f64 - h.sec as f64) + (usec as f64 - h.usec as f64) / 1e6;
                if let Some(p) = prev_transit {
                    o.jitter_s += ((transit - p).abs() - o.jitter_s) / 16.0;
                }
                prev_transit = Some(transit);
            }
            Err(e) if transient(&e) => {}
            Err(e) if e.kind() == ErrorKind::ConnectionRefused => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
