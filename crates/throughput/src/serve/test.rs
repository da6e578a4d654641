//! One running test, shared by its control thread and its data threads.

use super::request::Spec;
use std::net::{IpAddr, Shutdown, SocketAddr, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// One running test, shared by its control thread and its data threads.
pub struct Test {
    pub id: u64,
    pub spec: Spec,
    pub peer_ip: IpAddr,
    pub peer: SocketAddr,
    pub start: Instant,
    pub started_at: String,
    pub cpu_shared: AtomicBool,
    pub(super) stop: AtomicBool,
    pub(super) partial: Mutex<Option<String>>,
    pub(super) control: TcpStream,
    /// Handles of the data connections whose handler is running (keyed by
    /// `data_seen` index), to wake them at the test's end; a handler takes
    /// its own out when it ends, so a finished connection closes at once.
    pub(super) socks: Mutex<Vec<(usize, TcpStream)>>,
    pub(super) data_seen: AtomicUsize,
    /// tcp/rr-tcp: which of the client's stream numbers a data connection
    /// holds (`claim_stream`).
    pub(super) claimed: Mutex<Vec<bool>>,
    pub(super) data_active: AtomicUsize,
    /// crr/setup: connections whose handler is running (the burst cap).
    pub(super) open: Mutex<usize>,
    pub(super) open_freed: Condvar,
    pub(super) bytes_rx: AtomicU64,
    pub(super) bytes_tx: AtomicU64,
    pub(super) transactions: AtomicU64,
    /// Monotonic ns since `start`; MAX / -1 until something happens.
    pub(super) first_rx: AtomicI64,
    pub(super) last_rx: AtomicI64,
    pub(super) first_tx: AtomicI64,
    pub(super) last_tx: AtomicI64,
    pub(super) stream_bytes: Mutex<Vec<u64>>,
    pub(super) sndbuf: AtomicU64,
    pub(super) rcvbuf: AtomicU64,
    pub(super) udp: Option<UdpSocket>,
    pub(super) udp_peer: Mutex<Option<SocketAddr>>,
    /// Forward tcp: the streams read by one handler (hub.rs).
    pub(super) hub: Hub,
}

/// The streams of a test handed to its one reader (hub.rs), and which
/// have ended.
#[derive(Default)]
pub(super) struct Hub {
    pub(super) state: Mutex<HubState>,
    pub(super) ended: Condvar,
}

#[derive(Default)]
pub(super) struct HubState {
    /// A handler is reading the test's streams.
    pub(super) running: bool,
    /// Streams handed over, not yet picked up by the reader.
    pub(super) queue: Vec<(usize, TcpStream)>,
    /// Indices of the streams the reader is done with.
    pub(super) done: Vec<usize>,
}

#[derive(Default)]
pub(super) struct UdpFigures {
    pub(super) received: u64,
    pub(super) bytes: u64,
    pub(super) duplicates: u64,
    pub(super) reordered: u64,
    pub(super) highest: Option<u64>,
    pub(super) jitter_ns: f64,
    pub(super) owd_min: Option<i64>,
    pub(super) owd_max: Option<i64>,
    pub(super) sent: u64,
    /// How the server paced its sending (reverse udp).
    pub(super) pacing: Option<misura_report::pacing::Pacing>,
}

impl Test {
    pub fn new(
        id: u64,
        spec: Spec,
        peer: SocketAddr,
        control: &TcpStream,
    ) -> std::io::Result<Test> {
        let udp = if spec.is_udp() {
            // On the address the client reached us at, so it is reachable
            // the same way; a v4-mapped address becomes plain IPv4.
            let local = control.local_addr()?.ip().to_canonical();
            let s = UdpSocket::bind(SocketAddr::new(local, 0))?;
            s.set_read_timeout(Some(Duration::from_millis(20)))?;
            let sr = socket2::SockRef::from(&s);
            let rcv = if spec.rcvbuf > 0 {
                spec.rcvbuf
            } else {
                4 << 20
            };
            let _ = sr.set_recv_buffer_size(rcv as usize);
            if spec.sndbuf > 0 {
                let _ = sr.set_send_buffer_size(spec.sndbuf as usize);
            }
            if spec.df {
                // The server's own datagrams (reverse, rr responses) must not
                // be fragmented either; above the path MTU they fail to send.
                misura_sys::tcpinfo::set_dont_fragment(&s, local.is_ipv6())
                    .map_err(|e| std::io::Error::other(format!("don't-fragment: {e}")))?;
            }
            Some(s)
        } else {
            None
        };
        let t = Test {
            id,
            peer_ip: peer.ip(),
            peer,
            start: Instant::now(),
            started_at: misura_cli::meta::now_rfc3339(),
            cpu_shared: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            partial: Mutex::new(None),
            control: control.try_clone()?,
            socks: Mutex::new(Vec::new()),
            data_seen: AtomicUsize::new(0),
            data_active: AtomicUsize::new(0),
            open: Mutex::new(0),
            open_freed: Condvar::new(),
            bytes_rx: AtomicU64::new(0),
            bytes_tx: AtomicU64::new(0),
            transactions: AtomicU64::new(0),
            first_rx: AtomicI64::new(i64::MAX),
            last_rx: AtomicI64::new(-1),
            first_tx: AtomicI64::new(i64::MAX),
            last_tx: AtomicI64::new(-1),
            stream_bytes: Mutex::new(vec![0; spec.streams as usize]),
            claimed: Mutex::new(vec![false; spec.streams as usize]),
            sndbuf: AtomicU64::new(0),
            rcvbuf: AtomicU64::new(0),
            udp,
            udp_peer: Mutex::new(None),
            hub: Hub::default(),
            spec,
        };
        if let Some(u) = &t.udp {
            let sr = socket2::SockRef::from(u);
            t.sndbuf
                .store(sr.send_buffer_size().unwrap_or(0) as u64, Ordering::Relaxed);
            t.rcvbuf
                .store(sr.recv_buffer_size().unwrap_or(0) as u64, Ordering::Relaxed);
        }
        Ok(t)
    }

    /// A stream's read or write failed: the test is partial (unless it
    /// was ending anyway), saying which stream and why; `silent` when the
    /// peer sent or read nothing for the idle timeout.
    pub(super) fn stream_failed(&self, index: usize, e: &std::io::Error, silent: &str) {
        if !self.stopped() {
            self.set_partial(if is_timeout(e) {
                format!("stream {index}: {silent}")
            } else {
                format!("stream {index}: {e}")
            });
        }
    }

    /// A tcp stream reader's buffer: the message size, within 64 KiB and
    /// 1 MiB.
    pub(super) fn read_buf(&self) -> Vec<u8> {
        vec![0u8; self.spec.msg_size.clamp(64 * 1024, 1 << 20) as usize]
    }

    /// The stream number a data connection takes: the one the client
    /// `asked` (its DATA's F_STREAM_INDEX) when it is in range and free,
    /// else the lowest free one (an older client, which sends none, gets
    /// arrival order). None when every stream is taken.
    pub(super) fn claim_stream(&self, asked: Option<u64>) -> Option<usize> {
        let mut claimed = self.claimed.lock().unwrap();
        let index = asked
            .and_then(|a| usize::try_from(a).ok())
            .filter(|&a| claimed.get(a) == Some(&false))
            .or_else(|| claimed.iter().position(|c| !c))?;
        claimed[index] = true;
        Some(index)
    }

    /// What stream `index` received, for the per-stream figures.
    pub(super) fn record_stream_bytes(&self, index: usize, bytes: u64) {
        if let Some(b) = self.stream_bytes.lock().unwrap().get_mut(index) {
            *b = bytes;
        }
    }

    pub(super) fn now(&self) -> i64 {
        self.start.elapsed().as_nanos() as i64
    }

    pub(super) fn mark_rx(&self, n: u64) {
        let now = self.now();
        self.bytes_rx.fetch_add(n, Ordering::Relaxed);
        self.first_rx.fetch_min(now, Ordering::Relaxed);
        self.last_rx.fetch_max(now, Ordering::Relaxed);
    }

    pub(super) fn mark_tx(&self, n: u64) {
        let now = self.now();
        self.bytes_tx.fetch_add(n, Ordering::Relaxed);
        self.first_tx.fetch_min(now, Ordering::Relaxed);
        self.last_tx.fetch_max(now, Ordering::Relaxed);
    }

    pub(super) fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    pub fn set_partial(&self, why: impl Into<String>) {
        let mut p = self.partial.lock().unwrap();
        if p.is_none() {
            *p = Some(why.into());
        }
    }

    pub(super) fn close_data(&self) {
        self.stop.store(true, Ordering::Relaxed);
        for (_, s) in self.socks.lock().unwrap().iter() {
            let _ = s.shutdown(Shutdown::Both);
        }
        // Wake crr/setup connections waiting for a slot.
        let _open = self.open.lock().unwrap();
        self.open_freed.notify_all();
    }

    /// crr/setup: take one of the `limit` slots, waiting up to `grace` for
    /// a running handler to end; false if none frees up (or the test ends).
    pub(super) fn take_slot(&self, limit: usize, grace: Duration) -> bool {
        let until = Instant::now() + grace;
        let mut open = self.open.lock().unwrap();
        loop {
            if self.stopped() {
                return false;
            }
            if *open < limit {
                *open += 1;
                return true;
            }
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            open = self.open_freed.wait_timeout(open, left).unwrap().0;
        }
    }

    pub(super) fn give_slot(&self) {
        let mut open = self.open.lock().unwrap();
        *open -= 1;
        self.open_freed.notify_one();
    }

    /// End the test now (server stop): data and control connections close.
    pub fn end(&self, why: &str) {
        self.set_partial(why);
        self.close_data();
        let _ = self.control.shutdown(Shutdown::Both);
    }

    /// Until when the server's own sending runs.
    pub(super) fn send_until(&self, from: Instant) -> Instant {
        from + self.spec.duration
    }
}

pub(super) struct Active<'a>(pub(super) &'a Test);
impl Drop for Active<'_> {
    fn drop(&mut self) {
        self.0.data_active.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A data connection's handler is running: on its end the connection's
/// handle leaves the test's list and its crr/setup slot is given back.
pub(super) struct Open<'a> {
    pub(super) t: &'a Test,
    pub(super) index: usize,
    pub(super) slot: bool,
    pub(super) listed: bool,
}

impl Drop for Open<'_> {
    fn drop(&mut self) {
        if self.listed {
            let removed = {
                let mut socks = self.t.socks.lock().unwrap();
                socks
                    .iter()
                    .position(|(i, _)| *i == self.index)
                    .map(|at| socks.swap_remove(at))
            };
            drop(removed);
        }
        if self.slot {
            self.t.give_slot();
        }
    }
}

/// A read or write that ran out of time (the socket's timeout).
fn is_timeout(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}
