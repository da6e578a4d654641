//! The server a `tcp` or `udp` client speaks to (issue 28): misura serve,
//! an iperf3 server, or whichever of them a probe of the port finds; and
//! the test run against it, its result marked with what the probe found.

use crate::error::Result;
use crate::iperf3::probe::{self, Found};
use crate::iperf3::{self, Iperf3Plan, Iperf3TcpReport, Iperf3UdpReport};
use crate::tcp::TcpPlan;
use crate::udp::UdpPlan;
use misura_report::throughput::{TcpReport, UdpReport};
use std::net::TcpStream;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// Which server to speak to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Peer {
    /// misura serve.
    #[default]
    Misura,
    /// An iperf3 server (`iperf3 -s`).
    Iperf3,
    /// Probe the port: misura serve greets first, iperf3 waits.
    Auto,
}

/// The peer part of a tcp or udp plan.
#[derive(Clone, Debug, Default)]
pub struct PeerPlan {
    pub peer: Peer,
    /// The local port of the first iperf3 data stream.
    pub cport: Option<u16>,
    /// Parameters that only an iperf3 server takes were given: a probe
    /// that finds misura serve is then an error.
    pub iperf3_only: bool,
}

pub use crate::error::MisuraFound;

/// A test's result: against misura serve, or against an iperf3 server.
pub enum Measured<M, I> {
    Misura(M),
    Iperf3(I),
}

/// The server chosen: an iperf3 server with the probe's control connection
/// when kept, and whether a probe found it.
enum Chosen {
    Misura {
        probed: bool,
    },
    Iperf3 {
        conn: Option<TcpStream>,
        probed: bool,
    },
}

/// The server `p` names; `Auto` probes `host` and tells `found` what it
/// found.
fn choose(p: &PeerPlan, host: &str, found: impl FnOnce(&Found)) -> Result<Chosen> {
    match p.peer {
        Peer::Misura => Ok(Chosen::Misura { probed: false }),
        Peer::Iperf3 => Ok(Chosen::Iperf3 {
            conn: None,
            probed: false,
        }),
        Peer::Auto => {
            let f = probe::probe(host)?;
            found(&f);
            match f {
                Found::Misura(_) if p.iperf3_only => Err(MisuraFound { host: host.into() }.into()),
                Found::Misura(_) => Ok(Chosen::Misura { probed: true }),
                Found::Iperf3(_, conn) => Ok(Chosen::Iperf3 { conn, probed: true }),
            }
        }
    }
}

/// The result's note of a server found by probing.
fn probed(yes: bool, what: &str) -> Option<String> {
    yes.then(|| what.to_string())
}

/// A tcp test against the server `peer` names (`rate_bps`: iperf3's
/// per-stream pacing).
pub fn tcp(
    plan: &TcpPlan,
    peer: &PeerPlan,
    rate_bps: Option<u64>,
    stop: &Arc<AtomicUsize>,
    found: impl FnOnce(&Found),
) -> Result<Measured<TcpReport, Iperf3TcpReport>> {
    Ok(match choose(peer, &plan.client.host, found)? {
        Chosen::Misura { probed: p } => {
            let mut r = crate::tcp::measure(plan, stop)?;
            r.config.endpoint.found_by_probing = probed(p, "misura");
            Measured::Misura(r)
        }
        Chosen::Iperf3 { conn, probed: p } => {
            let i = Iperf3Plan::from_tcp(plan, peer.cport, rate_bps)?;
            let mut r =
                iperf3::tcp_report(&i, &iperf3::run_on(&i, conn, stop)?, &plan.client.netns);
            r.report.config.endpoint.found_by_probing = probed(p, "iperf3");
            Measured::Iperf3(r)
        }
    })
}

/// A udp test against the server `peer` names (`streams`: iperf3's
/// parallel streams).
pub fn udp(
    plan: &UdpPlan,
    peer: &PeerPlan,
    streams: u32,
    stop: &Arc<AtomicUsize>,
    found: impl FnOnce(&Found),
) -> Result<Measured<UdpReport, Iperf3UdpReport>> {
    let chosen = choose(peer, &plan.client.host, found)?;
    if let Chosen::Iperf3 { conn, probed: p } = chosen {
        let i = Iperf3Plan::from_udp(plan, peer.cport, streams)?;
        let mut r = iperf3::udp_report(&i, &iperf3::run_on(&i, conn, stop)?, &plan.client.netns);
        r.report.config.endpoint.found_by_probing = probed(p, "iperf3");
        return Ok(Measured::Iperf3(r));
    }
    let mut r = crate::udp::measure(plan, stop)?;
    r.config.endpoint.found_by_probing =
        probed(matches!(chosen, Chosen::Misura { probed: true }), "misura");
    Ok(Measured::Misura(r))
}
