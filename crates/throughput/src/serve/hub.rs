//! The receiving side of a forward `misura tcp` test in one thread: the
//! first data connection's handler reads every stream of its test from
//! one poll(2) loop, as iperf3's server does, and the other handlers wait
//! for their stream to end.
//!
//! Why: with one blocked reader thread per stream, every segment that
//! lands on a stream whose reader sleeps wakes that thread, and on a VM
//! the sender's CPU pays for each wake-up (an IPI: a VM exit). One reader
//! that is already awake wakes nobody. Measured on the 2-vCPU lab, 4
//! streams on split CPUs: 58-62 Gbit/s with a thread per stream, 74-76
//! with this loop (`scripts/bench-throughput.sh`).
//!
//! With `--busy-poll WINDOW` (default 5 µs) the reader, before it sleeps,
//! keeps polling its sockets for up to WINDOW: data that comes in that time
//! is read at once and wakes nobody. On the 2-vCPU lab (the guest's halt
//! polling off), one stream on split CPUs: 22.7-23.2 Gbit/s sleeping at
//! once, 24.5-26.8 with 5 µs (47-49 % of the server's CPU instead of 33-36 %),
//! 30.7-32.9 with 20 µs (docs/own-cost.md).
//!
//! Each stream keeps what a per-stream reader gave it: its own byte count,
//! its own end (the client's FIN), its own errors and idle timeout, and
//! its connection closes as soon as it ends.

use super::limits::Limits;
use super::test::Test;
use std::io::{ErrorKind, Read};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// The longest one wait lasts, so idle timeouts and the test's end are
/// seen in time.
const TURN: Duration = Duration::from_millis(200);

/// One stream in the reader's hands.
struct Stream {
    index: usize,
    sock: TcpStream,
    bytes: u64,
    last: Instant,
}

/// Receives stream `index` of `t` until the client ends it: hands it to
/// the test's reader, becoming that reader if there is none, and returns
/// once the stream has ended (its bytes recorded, errors reported).
pub fn receive(t: &Test, stream: &TcpStream, index: usize, limits: &Limits) {
    let clone = match stream.try_clone() {
        Ok(c) => c,
        Err(e) => {
            // No descriptor to hand over (the process is at its limit).
            t.stream_failed(index, &e, "");
            return;
        }
    };
    let lead = {
        let mut s = t.hub.state.lock().unwrap();
        s.queue.push((index, clone));
        !std::mem::replace(&mut s.running, true)
    };
    if lead {
        read_all(t, limits.idle_timeout, limits.busy_poll);
    }
    let mut s = t.hub.state.lock().unwrap();
    while !s.done.contains(&index) {
        s = t.hub.ended.wait_timeout(s, TURN).unwrap().0;
    }
}

/// The reader: every stream handed over, until none is left and none is
/// waiting to be picked up.
fn read_all(t: &Test, idle: Duration, busy_poll: Duration) {
    let mut streams: Vec<Stream> = Vec::new();
    let mut set = misura_sys::poll::PollSet::new();
    let mut buf = t.read_buf();
    loop {
        {
            let mut s = t.hub.state.lock().unwrap();
            let queued = std::mem::take(&mut s.queue);
            for (index, sock) in queued {
                if let Err(e) = sock.set_nonblocking(true) {
                    t.stream_failed(index, &e, "");
                    s.done.push(index);
                    continue;
                }
                streams.push(Stream {
                    index,
                    sock,
                    bytes: 0,
                    last: Instant::now(),
                });
            }
            if streams.is_empty() {
                s.running = false;
                t.hub.ended.notify_all();
                return;
            }
        }
        turn(t, &mut streams, &mut set, &mut buf, idle, busy_poll);
    }
}

/// One wait and one read from each ready stream (iperf3 reads once too: a
/// reader that drains every socket sleeps, and is woken, more often);
/// ended streams leave `streams`.
fn turn(
    t: &Test,
    streams: &mut Vec<Stream>,
    set: &mut misura_sys::poll::PollSet,
    buf: &mut [u8],
    idle: Duration,
    busy_poll: Duration,
) {
    set.clear();
    for s in streams.iter() {
        set.push(&s.sock, true, false);
    }
    if let Err(e) = set.wait_spinning_first(busy_poll, TURN) {
        for s in streams.drain(..) {
            finish(t, s, Some(e.kind().into()));
        }
        return;
    }
    let now = Instant::now();
    // `i` walks the poll set, `k` the streams still open.
    let mut k = 0;
    for i in 0..set.len() {
        let r = set.ready(i);
        let end = if r.readable || r.hangup || r.error {
            read_once(t, &mut streams[k], buf)
        } else if now.duration_since(streams[k].last) >= idle {
            Some(Some(std::io::Error::from(ErrorKind::TimedOut)))
        } else {
            None
        };
        match end {
            Some(err) => finish(t, streams.remove(k), err),
            None => k += 1,
        }
    }
}

/// One read; `Some` once the stream has ended (with the error that ended
/// it, if any).
fn read_once(t: &Test, s: &mut Stream, buf: &mut [u8]) -> Option<Option<std::io::Error>> {
    match (&s.sock).read(buf) {
        Ok(0) => Some(None),
        Ok(n) => {
            s.bytes += n as u64;
            s.last = Instant::now();
            t.mark_rx(n as u64);
            None
        }
        Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => None,
        Err(e) => Some(Some(e)),
    }
}
/// A stream has ended: its bytes, its error, and its handler told.
fn finish(t: &Test, s: Stream, err: Option<std::io::Error>) {
    if let Some(e) = &err {
        t.stream_failed(s.index, e, "nothing received for the idle timeout");
    }
    t.record_stream_bytes(s.index, s.bytes);
    drop(s.sock);
    let mut st = t.hub.state.lock().unwrap();
    st.done.push(s.index);
    t.hub.ended.notify_all();
}
