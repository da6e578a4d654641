//! The data connections of one `misura tcp` client with `--threads`: each
//! one's thread writes `--msg-size` chunks until the end, or reads until the
//! server closes, or both (bidir), counting bytes as they move. What a
//! stream reports, and the byte counting, are shared with the one-thread
//! loop (multiplex.rs).

use crate::client::{self, Direction};
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

#[derive(Default)]
pub(super) struct Counters {
    pub(super) sent: AtomicU64,
    pub(super) received: AtomicU64,
}

pub(super) struct StreamOutcome {
    pub(super) sent: u64,
    pub(super) received: u64,
    /// Instant of the last byte written / read.
    pub(super) last_io: Option<Instant>,
    pub(super) info: Option<misura_sys::tcpinfo::TcpInfo>,
    pub(super) error: Option<String>,
}

/// The longest a reader or writer waits before it looks at the clock and
/// the stop flag again.
pub(super) const POLL: Duration = Duration::from_millis(200);

/// One direction of a stream: the bytes it moved, when the last moved,
/// and why it ended early.
pub(super) struct Half<'a> {
    pub(super) bytes: u64,
    pub(super) last: Option<Instant>,
    pub(super) error: Option<String>,
    /// Shared with the watcher, which reads it while the stream runs.
    counter: &'a AtomicU64,
}

impl<'a> Half<'a> {
    pub(super) fn new(counter: &'a AtomicU64) -> Half<'a> {
        Half {
            bytes: 0,
            last: None,
            error: None,
            counter,
        }
    }

    /// Count `n` bytes moved now; returns now.
    pub(super) fn moved(&mut self, n: usize) -> Instant {
        self.bytes += n as u64;
        self.counter.fetch_add(n as u64, Ordering::Relaxed);
        let now = Instant::now();
        self.last = Some(now);
        now
    }

    fn ended(mut self, error: Option<String>) -> Half<'a> {
        self.error = error;
        self
    }
}

/// What one read or write did.
pub(super) enum Step {
    Moved(usize),
    /// Nothing yet (timeout, signal): look at the clock and go on.
    Again,
    Closed,
    Lost(std::io::Error),
}

pub(super) fn step(r: std::io::Result<usize>) -> Step {
    match r {
        Ok(0) => Step::Closed,
        Ok(n) => Step::Moved(n),
        Err(e)
            if matches!(
                e.kind(),
                ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
            ) =>
        {
            Step::Again
        }
        Err(e) => Step::Lost(e),
    }
}

/// Why a stream's sending ended early: its write returned 0.
pub(super) const SERVER_CLOSED: &str = "the server closed the data connection";
/// Why a stream's receiving ended early: no end of stream by the hard end.
pub(super) const SERVER_LATE: &str = "the server did not end its sending in time";

pub(super) fn lost_sending(e: &std::io::Error) -> String {
    format!("lost the data connection while sending: {e}")
}

pub(super) fn lost_receiving(e: &std::io::Error) -> String {
    format!("lost the data connection while receiving: {e}")
}

/// Write `msg_size` chunks until `end`.
fn send_until<'a>(
    s: &mut TcpStream,
    msg_size: usize,
    end: Instant,
    stop: &AtomicUsize,
    counter: &'a AtomicU64,
) -> Half<'a> {
    let buf = vec![0x5au8; msg_size];
    let mut off = 0usize;
    let mut half = Half::new(counter);
    s.set_write_timeout(Some(POLL)).ok();
    loop {
        if Instant::now() >= end || client::interrupted(stop) {
            return half;
        }
        match step(s.write(&buf[off..])) {
            Step::Moved(n) => {
                off = (off + n) % msg_size;
                half.moved(n);
            }
            Step::Again => {}
            Step::Closed => return half.ended(Some(SERVER_CLOSED.into())),
            Step::Lost(e) => return half.ended(Some(lost_sending(&e))),
        }
    }
}

/// Read until the peer closes, or `hard_end`.
fn receive_until<'a>(
    s: &mut TcpStream,
    hard_end: Instant,
    stop: &AtomicUsize,
    counter: &'a AtomicU64,
) -> Half<'a> {
    let mut buf = vec![0u8; 256 * 1024];
    let mut half = Half::new(counter);
    s.set_read_timeout(Some(POLL)).ok();
    loop {
        if Instant::now() >= hard_end {
            return half.ended(Some(SERVER_LATE.into()));
        }
        if client::interrupted(stop) {
            return half;
        }
        match step(s.read(&mut buf)) {
            Step::Moved(n) => {
                half.moved(n);
            }
            Step::Again => {}
            Step::Closed => return half,
            Step::Lost(e) => return half.ended(Some(lost_receiving(&e))),
        }
    }
}

/// One data connection's thread: send, receive or both, by `dir`; returns
/// what it moved and the CPU time of its thread(s).
pub(super) fn stream_worker(
    mut s: TcpStream,
    dir: Direction,
    msg_size: usize,
    end: Instant,
    stop: &AtomicUsize,
    ctr: &Counters,
) -> (StreamOutcome, (u64, u64)) {
    let cpu0 = client::thread_cpu();
    let mut cpu = (0, 0);
    let hard_end = end + client::END_GRACE;
    let mut o = StreamOutcome {
        sent: 0,
        received: 0,
        last_io: None,
        info: None,
        error: None,
    };
    match dir {
        Direction::Forward => {
            let h = send_until(&mut s, msg_size, end, stop, &ctr.sent);
            (o.sent, o.last_io, o.error) = (h.bytes, h.last, h.error);
            o.info = misura_sys::tcpinfo::tcp_info(&s).ok();
            let _ = s.shutdown(Shutdown::Write);
        }
        Direction::Reverse => {
            let h = receive_until(&mut s, hard_end, stop, &ctr.received);
            (o.received, o.last_io, o.error) = (h.bytes, h.last, h.error);
            o.info = misura_sys::tcpinfo::tcp_info(&s).ok();
        }
        Direction::Bidir => {
            let w = s.try_clone();
            let sent = std::thread::scope(|sc| {
                let h = w.ok().map(|mut w| {
                    sc.spawn(move || {
                        let c0 = client::thread_cpu();
                        let r = send_until(&mut w, msg_size, end, stop, &ctr.sent);
                        let _ = w.shutdown(Shutdown::Write);
                        (r, client::thread_cpu_since(c0))
                    })
                });
                let r = receive_until(&mut s, hard_end, stop, &ctr.received);
                (o.received, o.last_io, o.error) = (r.bytes, r.last, r.error);
                h.map(|h| h.join().expect("sender thread panicked"))
            });
            if let Some((h, sender_cpu)) = sent {
                o.sent = h.bytes;
                o.last_io = o.last_io.max(h.last);
                o.error = o.error.or(h.error);
                cpu = sender_cpu;
            }
            o.info = misura_sys::tcpinfo::tcp_info(&s).ok();
        }
    }
    let (u, sy) = client::thread_cpu_since(cpu0);
    (o, (cpu.0 + u, cpu.1 + sy))
}
