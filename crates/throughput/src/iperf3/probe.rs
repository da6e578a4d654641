//! `--peer auto`: which server listens on a port. `misura serve` greets
//! first (its HELLO); an iperf3 server says nothing until the client's
//! cookie. So the probe connects and waits for a greeting: one means
//! misura serve, silence (or a close without a word) means iperf3, and the
//! silent connection goes on as iperf3's control connection. iperf3's
//! cookie is never sent to misura serve's own port.

use crate::client::{CONNECT_TIMEOUT, DEFAULT_PORT};
use crate::error::{Iperf3PeerError, Result};
use misura_wire::iperf3 as wire;
use std::io::ErrorKind;
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// How long the probe waits for misura serve's HELLO (it is sent on
/// accept; the wait leaves room for a loaded server).
pub const GREETING_WAIT: Duration = Duration::from_secs(3);

/// The server the probe found.
#[derive(Debug)]
pub enum Found {
    /// misura serve at this address (the probe connection is closed; the
    /// test opens its own).
    Misura(SocketAddr),
    /// An iperf3 server; its control connection when the probe's is kept
    /// (None: the server closed it, so the test connects again).
    Iperf3(SocketAddr, Option<TcpStream>),
}

impl Found {
    pub fn name(&self) -> &'static str {
        match self {
            Found::Misura(_) => "misura",
            Found::Iperf3(..) => "iperf3",
        }
    }

    pub fn addr(&self) -> SocketAddr {
        match self {
            Found::Misura(a) | Found::Iperf3(a, _) => *a,
        }
    }
}

/// Probe HOST[:PORT]: with a port, that port; without, misura serve's
/// (5862), then iperf3's (5201). Each step within [`CONNECT_TIMEOUT`] and
/// [`GREETING_WAIT`]; an error naming what each address did when neither
/// server answered.
pub fn probe(host: &str) -> Result<Found> {
    let ours = misura_cli::target::resolve(host, DEFAULT_PORT)?;
    let theirs = misura_cli::target::resolve(host, wire::DEFAULT_PORT)?;
    let candidates = if ours == theirs {
        vec![ours]
    } else {
        vec![ours, theirs]
    };
    let mut tried = Vec::new();
    for addr in candidates {
        match probe_one(addr) {
            Ok(f) => return Ok(f),
            Err(why) => tried.push(format!("{addr}: {why}")),
        }
    }
    Err(Iperf3PeerError::NoPeer {
        tried: tried.join("; "),
    }
    .into())
}

fn probe_one(addr: SocketAddr) -> Result<Found, String> {
    let s = TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT).map_err(|e| match e.kind() {
        ErrorKind::TimedOut | ErrorKind::WouldBlock => {
            format!("no connection within {} s", CONNECT_TIMEOUT.as_secs())
        }
        _ => e.to_string(),
    })?;
    s.set_read_timeout(Some(GREETING_WAIT))
        .map_err(|e| e.to_string())?;
    let mine = addr.port() == DEFAULT_PORT;
    let silent = match s.peek(&mut [0u8; 1]) {
        Ok(n) if n > 0 => return Ok(Found::Misura(addr)),
        Ok(_) => false,
        Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => true,
        Err(e) => return Err(e.to_string()),
    };
    let what = if silent {
        format!("no greeting within {} s", GREETING_WAIT.as_secs())
    } else {
        "closed without a greeting".to_string()
    };
    if mine {
        return Err(format!(
            "{what}, not misura serve; iperf3's cookie is not sent to misura serve's port {DEFAULT_PORT}"
        ));
    }
    s.set_read_timeout(None).map_err(|e| e.to_string())?;
    Ok(Found::Iperf3(addr, silent.then_some(s)))
}
