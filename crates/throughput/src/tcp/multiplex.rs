//! All data connections of one `misura tcp` client driven by one thread,
//! the default: the sockets are non-blocking and one ppoll(2) loop writes
//! `--msg-size` chunks to (and, reverse and bidir, reads from) whichever
//! sockets are ready, as iperf3 3.12+ and nuttcp do. Every stream counts
//! its bytes, its last I/O and its end exactly as a `--threads` stream does
//! (streams.rs); the stop checks run every turn and no wait is longer than
//! [`POLL`]; the CPU time is that of this one thread.

use super::streams::{
    lost_receiving, lost_sending, step, Counters, Half, Step, StreamOutcome, POLL, SERVER_CLOSED,
    SERVER_LATE,
};
use crate::client::{self, Direction};
use misura_sys::poll::PollSet;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::AtomicUsize;
use std::time::{Duration, Instant};

/// The most writes (or reads) to one ready socket in one turn, so that a
/// socket whose peer drains as fast as it is fed does not starve the others
/// (iperf3 writes up to 10 blocks a turn). On loopback, 16 kept the streams
/// within 2 % of each other where writing until EAGAIN let one take twice
/// another's share.
const BURST: usize = 16;

/// The read buffer (as a `--threads` reader's).
const READ_BUF: usize = 256 * 1024;

/// One data connection: its socket and what each direction has done.
struct Conn<'a> {
    s: TcpStream,
    tx: Half<'a>,
    rx: Half<'a>,
    sending: bool,
    receiving: bool,
    /// Where in the chunk the next write starts (after a short write).
    off: usize,
    info: Option<misura_sys::tcpinfo::TcpInfo>,
}

impl<'a> Conn<'a> {
    fn new(s: TcpStream, dir: Direction, ctr: &'a Counters) -> Conn<'a> {
        Conn {
            s,
            tx: Half::new(&ctr.sent),
            rx: Half::new(&ctr.received),
            sending: dir != Direction::Reverse,
            receiving: dir != Direction::Forward,
            off: 0,
            info: None,
        }
    }

    fn active(&self) -> bool {
        self.sending || self.receiving
    }

    /// TCP_INFO once the connection has done all it had to.
    fn read_info_when_done(&mut self) {
        if !self.active() {
            self.info = misura_sys::tcpinfo::tcp_info(&self.s).ok();
        }
    }

    /// Stop sending (the end, a signal, or an error) and send FIN.
    fn end_send(&mut self, error: Option<String>) {
        self.sending = false;
        self.tx.error = error;
        self.read_info_when_done();
        let _ = self.s.shutdown(Shutdown::Write);
    }

    fn end_receive(&mut self, error: Option<String>) {
        self.receiving = false;
        self.rx.error = error;
        self.read_info_when_done();
    }

    /// The end, the hard end and the stop flag, looked at every turn.
    fn check_ends(&mut self, now: Instant, end: Instant, hard_end: Instant, stopped: bool) {
        if self.sending && (now >= end || stopped) {
            self.end_send(None);
        }
        if self.receiving && now >= hard_end {
            self.end_receive(Some(SERVER_LATE.into()));
        } else if self.receiving && stopped {
            self.end_receive(None);
        }
    }

    /// Write up to `max` chunks, until the socket is full or `end`; true
    /// while the socket may take more.
    fn send_burst(&mut self, chunk: &[u8], end: Instant, max: usize) -> bool {
        for _ in 0..max {
            match step(self.s.write(&chunk[self.off..])) {
                Step::Moved(n) => {
                    self.off = (self.off + n) % chunk.len();
                    if self.tx.moved(n) >= end {
                        return false;
                    }
                }
                Step::Again => return false,
                Step::Closed => {
                    self.end_send(Some(SERVER_CLOSED.into()));
                    return false;
                }
                Step::Lost(e) => {
                    self.end_send(Some(lost_sending(&e)));
                    return false;
                }
            }
        }
        self.sending
    }

    /// Read up to [`BURST`] times, until nothing is left or the server's end.
    fn receive_burst(&mut self, buf: &mut [u8]) {
        for _ in 0..BURST {
            match step(self.s.read(buf)) {
                Step::Moved(n) => {
                    self.rx.moved(n);
                }
                Step::Again => return,
                Step::Closed => return self.end_receive(None),
                Step::Lost(e) => return self.end_receive(Some(lost_receiving(&e))),
            }
        }
    }

    fn outcome(self) -> StreamOutcome {
        StreamOutcome {
            sent: self.tx.bytes,
            received: self.rx.bytes,
            last_io: self.tx.last.max(self.rx.last),
            info: self.info,
            error: self.rx.error.or(self.tx.error),
        }
    }
}

/// One turn's writes to the sockets found writable: one chunk to each in
/// turn, up to [`BURST`] rounds, dropping a socket once it is full. Not
/// [`BURST`] chunks to one socket and then the next: a socket left alone
/// while another takes 2 MB has its ACKs answered by the kernel from the
/// softirq, on whichever CPU the ACK came in, and on veth that reorders the
/// stream (out-of-order queue at the receiver, spurious fast retransmits).
/// Measured with 4 streams on split CPUs: 22 Gbit/s with 16-chunk bursts
/// per socket, 26-31 Gbit/s round robin.
fn send_round_robin(conns: &mut [Conn], writable: &mut Vec<usize>, chunk: &[u8], end: Instant) {
    for _ in 0..BURST {
        writable.retain(|&k| conns[k].send_burst(chunk, end, 1));
        if writable.is_empty() {
            break;
        }
    }
}

/// How long the next wait may be: until the end while a stream sends,
/// until the watcher's next line, and never more than [`POLL`].
fn wait_for(now: Instant, end: Option<Instant>, due: Option<Instant>) -> Duration {
    let mut w = POLL;
    for t in [end, due].into_iter().flatten() {
        w = w.min(t.saturating_duration_since(now));
    }
    w
}

/// Drive every stream from this thread until each has ended; `watch` is
/// called every turn (it returns when it next has something to do). While
/// a stream receives, each wait first polls for up to `busy_poll`.
/// Returns the streams' outcomes in order and this thread's CPU time.
#[allow(clippy::too_many_arguments)] // one call site, each argument a knob of the test
pub(super) fn drive_all(
    socks: Vec<TcpStream>,
    dir: Direction,
    msg_size: usize,
    busy_poll: Duration,
    end: Instant,
    stop: &AtomicUsize,
    counters: &[Counters],
    mut watch: impl FnMut() -> Option<Instant>,
) -> (Vec<StreamOutcome>, (u64, u64)) {
    let cpu0 = client::thread_cpu();
    let hard_end = end + client::END_GRACE;
    let chunk = vec![0x5au8; msg_size];
    let mut buf = vec![0u8; READ_BUF];
    let mut conns: Vec<Conn> = socks
        .into_iter()
        .zip(counters)
        .map(|(s, ctr)| Conn::new(s, dir, ctr))
        .collect();
    for c in &mut conns {
        if let Err(e) = c.s.set_nonblocking(true) {
            let why = format!("could not make the data connection non-blocking: {e}");
            c.end_send(Some(why.clone()));
            c.end_receive(Some(why));
        }
    }
    let mut set = PollSet::new();
    let mut polled: Vec<usize> = Vec::with_capacity(conns.len());
    let mut writable: Vec<usize> = Vec::with_capacity(conns.len());
    loop {
        let now = Instant::now();
        let stopped = client::interrupted(stop);
        for c in &mut conns {
            c.check_ends(now, end, hard_end, stopped);
        }
        let due = watch();
        set.clear();
        polled.clear();
        let mut receiving = false;
        for (k, c) in conns.iter().enumerate().filter(|(_, c)| c.active()) {
            set.push(&c.s, c.receiving, c.sending);
            polled.push(k);
            receiving |= c.receiving;
        }
        if set.is_empty() {
            break;
        }
        let sending = conns.iter().any(|c| c.sending);
        // Poll before sleeping only while some stream receives.
        let spin = if receiving { busy_poll } else { Duration::ZERO };
        if let Err(e) = set.wait_spinning_first(spin, wait_for(now, sending.then_some(end), due)) {
            for &k in &polled {
                let c = &mut conns[k];
                let why = format!("waiting for the data connections (poll): {e}");
                if c.sending {
                    c.end_send(Some(why.clone()));
                }
                if c.receiving {
                    c.end_receive(Some(why));
                }
            }
            break;
        }
        writable.clear();
        for (i, &k) in polled.iter().enumerate() {
            let r = set.ready(i);
            let c = &mut conns[k];
            // A hang-up or an error shows in the next read or write.
            let any = r.hangup || r.error;
            if c.receiving && (r.readable || any) {
                c.receive_burst(&mut buf);
            }
            if c.sending && (r.writable || any) {
                writable.push(k);
            }
        }
        send_round_robin(&mut conns, &mut writable, &chunk, end);
    }
    let outcomes = conns.into_iter().map(Conn::outcome).collect();
    (outcomes, client::thread_cpu_since(cpu0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_are_bounded_by_the_end_the_watcher_and_poll() {
        let now = Instant::now();
        let ms = Duration::from_millis;
        assert_eq!(wait_for(now, None, None), POLL);
        assert_eq!(wait_for(now, Some(now + ms(30)), None), ms(30));
        assert_eq!(wait_for(now, Some(now + ms(30)), Some(now + ms(5))), ms(5));
        assert_eq!(wait_for(now, None, Some(now + ms(900))), POLL);
        assert_eq!(wait_for(now + ms(10), Some(now), None), Duration::ZERO);
    }
}
