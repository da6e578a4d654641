//! One client connection of the agent's endpoint: a non-blocking socket
//! moved through reading a request, writing its answer and, after an answer
//! that closes, draining what the client still sends (so a 431 arrives
//! rather than a reset). Every state has a deadline counted from its start,
//! not from the last byte, so a client dripping bytes cannot hold it.

use crate::http::request::{self, Parse, MAX_HEAD};
use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, Shutdown, TcpStream};
use std::time::{Duration, Instant};

/// A whole request head must arrive within this of the connection's start
/// or of the previous answer (keep-alive idle time included).
pub const REQUEST_DEADLINE: Duration = Duration::from_secs(2);
/// An answer must be taken by the client within this.
const WRITE_DEADLINE: Duration = Duration::from_secs(2);
/// After a closing answer, what the client still sends is read and thrown
/// away for at most this long and this much.
const DRAIN_DEADLINE: Duration = Duration::from_millis(500);
const DRAIN_MAX: usize = 256 * 1024;
/// Requests answered on one connection before it is closed.
const MAX_REQUESTS: u32 = 10_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Reading,
    Writing,
    Draining,
    Closed,
}

pub struct Conn {
    pub stream: TcpStream,
    pub peer: IpAddr,
    pub state: State,
    /// When the current state's wait began (the request's start while
    /// reading).
    pub since: Instant,
    deadline: Instant,
    inbuf: Vec<u8>,
    out: Vec<u8>,
    written: usize,
    close_after: bool,
    drained: usize,
    requests: u32,
}

impl Conn {
    pub fn new(stream: TcpStream, peer: IpAddr, now: Instant) -> std::io::Result<Conn> {
        stream.set_nonblocking(true)?;
        let _ = stream.set_nodelay(true);
        Ok(Conn {
            stream,
            peer,
            state: State::Reading,
            since: now,
            deadline: now + REQUEST_DEADLINE,
            inbuf: Vec::new(),
            out: Vec::new(),
            written: 0,
            close_after: false,
            drained: 0,
            requests: 0,
        })
    }

    /// (read, write) readiness to wait for.
    pub fn wants(&self) -> (bool, bool) {
        match self.state {
            State::Reading | State::Draining => (true, false),
            State::Writing => (false, true),
            State::Closed => (false, false),
        }
    }

    pub fn deadline(&self) -> Instant {
        self.deadline
    }

    /// Tell a refused or displaced client why, as far as its socket takes
    /// it without waiting, and close.
    pub fn refuse(&mut self, response: &[u8]) {
        let _ = self.stream.write(response);
        let _ = self.stream.shutdown(Shutdown::Both);
        self.close();
    }

    /// One turn after the poll: read or write what is ready, parse what
    /// was read, and close on a passed deadline.
    pub fn turn(
        &mut self,
        readable: bool,
        writable: bool,
        now: Instant,
        metrics: &dyn Fn() -> Vec<u8>,
    ) {
        match self.state {
            State::Reading if readable => self.on_readable(now, metrics),
            State::Writing if writable => self.on_writable(now),
            State::Draining if readable => self.drain(now),
            _ => {}
        }
        if self.state == State::Reading {
            self.advance(now, metrics);
        }
        if self.state != State::Closed && now >= self.deadline {
            self.close();
        }
    }

    fn on_readable(&mut self, now: Instant, metrics: &dyn Fn() -> Vec<u8>) {
        let mut chunk = [0u8; 4096];
        // Never hold more than one head (plus the leading blank lines a
        // client may send) in the buffer.
        while self.inbuf.len() < MAX_HEAD + 4 {
            match self.stream.read(&mut chunk) {
                Ok(0) => return self.close(),
                Ok(n) => self.inbuf.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return self.close(),
            }
        }
        self.advance(now, metrics);
    }

    /// Answer the whole requests in the buffer (pipelined ones in order)
    /// until one is incomplete or an answer waits for the client.
    fn advance(&mut self, now: Instant, metrics: &dyn Fn() -> Vec<u8>) {
        while self.state == State::Reading {
            match request::parse(&self.inbuf) {
                Parse::Incomplete => return,
                Parse::TooLarge => self.start_write(
                    request::refusal(
                        "431 Request Header Fields Too Large",
                        "request head longer than 8 KiB\n",
                    ),
                    true,
                    now,
                ),
                Parse::Bad => self.start_write(
                    request::refusal("400 Bad Request", "not an HTTP/1.x request\n"),
                    true,
                    now,
                ),
                Parse::Request { head, used } => {
                    self.inbuf.drain(..used);
                    self.requests += 1;
                    let (response, keep) = request::respond(&head, metrics);
                    let last = !keep || self.requests >= MAX_REQUESTS;
                    self.start_write(response, last, now);
                }
            }
            self.on_writable(now);
        }
    }

    fn start_write(&mut self, response: Vec<u8>, close_after: bool, now: Instant) {
        self.out = response;
        self.written = 0;
        self.close_after = close_after;
        self.state = State::Writing;
        self.since = now;
        self.deadline = now + WRITE_DEADLINE;
    }

    fn on_writable(&mut self, now: Instant) {
        while self.written < self.out.len() {
            match self.stream.write(&self.out[self.written..]) {
                Ok(0) => return self.close(),
                Ok(n) => self.written += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return self.close(),
            }
        }
        self.out = Vec::new();
        self.since = now;
        if self.close_after {
            let _ = self.stream.shutdown(Shutdown::Write);
            self.inbuf = Vec::new();
            self.state = State::Draining;
            self.deadline = now + DRAIN_DEADLINE;
        } else {
            // The next request's deadline starts now; a pipelined one may
            // already be in the buffer (the caller parses it).
            self.state = State::Reading;
            self.deadline = now + REQUEST_DEADLINE;
        }
    }

    fn drain(&mut self, _now: Instant) {
        let mut chunk = [0u8; 4096];
        loop {
            match self.stream.read(&mut chunk) {
                Ok(0) => return self.close(),
                Ok(n) => {
                    self.drained += n;
                    if self.drained >= DRAIN_MAX {
                        return self.close();
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return self.close(),
            }
        }
    }

    fn close(&mut self) {
        self.state = State::Closed;
        self.inbuf = Vec::new();
        self.out = Vec::new();
    }
}
