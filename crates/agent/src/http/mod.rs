//! The agent's HTTP endpoint: `GET`/`HEAD` of `/metrics` and `/healthz`,
//! nothing else. One thread drives every connection through `ppoll`, so a
//! new connection is taken the moment it arrives (no accept polling) and a
//! slow client never blocks another.
//!
//! A new connection's request is read (and answered) the moment it is
//! accepted: a client that sends its request with the handshake, as a
//! scraper does, is served whatever else is waiting. Answered connections
//! need no admission; they stay only to finish their answer, at most
//! [`MAX_ANSWERING`] of them.
//!
//! Admission, so that no client can hold the endpoint: at most
//! [`MAX_CONNS`] connections waiting for a request, at most
//! [`PER_ADDRESS`] from one address.
//! A connection beyond either cap takes the place of the one (of that
//! address, or of all) that has waited longest for its request (every one
//! has had its request looked for at accept, so one sent with the
//! handshake was answered then); with none waiting it is answered 503 and
//! closed. Each request must arrive whole within
//! [`conn::REQUEST_DEADLINE`], however its bytes are spread.

mod conn;
mod request;

use conn::{Conn, State};
use misura_sys::poll::PollSet;
use std::net::{IpAddr, TcpListener};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Connections served at once (each holds at most one 8 KiB head and one
/// response).
pub const MAX_CONNS: usize = 128;
/// Connections one address may hold at once.
pub const PER_ADDRESS: usize = 16;
/// Answered connections still writing or draining (bounds descriptors).
pub const MAX_ANSWERING: usize = 128;
/// Connections taken from the backlog per turn.
const ACCEPT_BATCH: usize = 64;

/// Serve until `stop` is non-zero. `metrics` renders the exposition.
pub fn serve(
    listener: TcpListener,
    stop: &AtomicUsize,
    metrics: &dyn Fn() -> Vec<u8>,
) -> std::io::Result<()> {
    listener.set_nonblocking(true)?;
    let mut conns: Vec<Conn> = Vec::new();
    let mut set = PollSet::new();
    // After an accept error (out of descriptors), the listener is left out
    // of the poll for a moment rather than spinning on it.
    let mut accept_after = Instant::now();
    while stop.load(Ordering::Relaxed) == 0 {
        let now = Instant::now();
        set.clear();
        let listening = now >= accept_after;
        if listening {
            set.push(&listener, true, false);
        }
        for c in &conns {
            let (r, w) = c.wants();
            set.push(&c.stream, r, w);
        }
        let next = conns.iter().map(Conn::deadline).min();
        let mut wait = Duration::from_millis(100);
        if let Some(d) = next {
            wait = wait.min(d.saturating_duration_since(now));
        }
        if !listening {
            wait = wait.min(accept_after.saturating_duration_since(now));
        }
        set.wait(wait)?;
        let now = Instant::now();
        let base = usize::from(listening);
        for (i, c) in conns.iter_mut().enumerate() {
            let r = set.ready(base + i);
            let hung = r.hangup || r.error;
            c.turn(r.readable || hung, r.writable || hung, now, metrics);
        }
        conns.retain(|c| c.state != State::Closed);
        if listening && set.ready(0).readable {
            if let Err(e) = accept(&listener, &mut conns, now, metrics) {
                if e.kind() != std::io::ErrorKind::Interrupted {
                    accept_after = now + Duration::from_millis(100);
                }
            }
        }
    }
    Ok(())
}

fn accept(
    listener: &TcpListener,
    conns: &mut Vec<Conn>,
    now: Instant,
    metrics: &dyn Fn() -> Vec<u8>,
) -> std::io::Result<()> {
    for _ in 0..ACCEPT_BATCH {
        let (stream, addr) = match listener.accept() {
            Ok(a) => a,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(()),
            Err(e) => return Err(e),
        };
        let Ok(mut c) = Conn::new(stream, addr.ip(), now) else {
            continue;
        };
        // Its request may have come with the handshake: answer it now.
        c.turn(true, false, now, metrics);
        match c.state {
            State::Closed => continue,
            State::Writing | State::Draining => {
                let answering = conns.iter().filter(|c| c.state != State::Reading).count();
                if answering < MAX_ANSWERING {
                    conns.push(c);
                }
                // Else it is dropped, closed with its answer written as far
                // as its socket took it.
                continue;
            }
            State::Reading => {}
        }
        if admit(conns, c.peer) {
            conns.push(c);
        } else {
            c.refuse(&request::refusal(
                "503 Service Unavailable",
                "too many connections waiting; try again\n",
            ));
        }
    }
    Ok(())
}

/// Make room for a connection from `peer`; false if there is none to make.
fn admit(conns: &mut [Conn], peer: IpAddr) -> bool {
    let same = conns
        .iter()
        .filter(|c| c.peer == peer && c.state == State::Reading)
        .count();
    let live = conns.iter().filter(|c| c.state == State::Reading).count();
    if same >= PER_ADDRESS {
        return displace(conns, Some(peer));
    }
    if live >= MAX_CONNS {
        return displace(conns, None);
    }
    true
}

/// Close the connection (of `peer`, or of anyone) that has waited longest
/// for its request.
fn displace(conns: &mut [Conn], peer: Option<IpAddr>) -> bool {
    let oldest = conns
        .iter_mut()
        .filter(|c| c.state == State::Reading && peer.is_none_or(|p| c.peer == p))
        .min_by_key(|c| c.since);
    match oldest {
        Some(c) => {
            c.refuse(&request::refusal(
                "408 Request Timeout",
                "request not sent in time; the connection was needed\n",
            ));
            true
        }
        None => false,
    }
}

#[cfg(test)]
mod tests;
