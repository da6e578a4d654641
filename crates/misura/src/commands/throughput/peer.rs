//! `--peer iperf3|auto` of `misura tcp` and `misura udp`: the flags, the
//! line saying what a probe found, the error naming a flag and the output
//! of a test against iperf3; the test is `misura_throughput::peer`'s
//! (issue 28).

use crate::shared::exit::Failure;
use misura_cli::units::LinkRate;
use misura_report::throughput::{write_tcp_csv, write_tcp_text, write_udp_csv, write_udp_text};
use misura_throughput::error::ThroughputError;
use misura_throughput::iperf3::probe::Found;
use misura_throughput::iperf3::{Iperf3TcpReport, Iperf3UdpReport};
use misura_throughput::peer::{MisuraFound, Peer, PeerPlan};
use std::io::Write;

/// Speaking another tool's protocol to the server.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct PeerArgs {
    /// The server is another tool: `iperf3` (an `iperf3 -s`, default port
    /// 5201). The result is the usual one, with the peer's own figures in
    /// `peer` (docs/guide/throughput.md). `auto` probes the port: misura
    /// serve greets first, an iperf3 server waits for the client (without
    /// a port: misura serve's 5862, then iperf3's 5201); the result's
    /// `config.found_by_probing` names what it found.
    #[arg(long, value_name = "TOOL", value_parser = ["iperf3", "auto"])]
    pub peer: Option<String>,
    /// With --peer iperf3: the local port of the first data stream (as
    /// iperf3's --cport); the next streams take the next ports.
    #[arg(long, value_name = "PORT", requires = "peer")]
    pub cport: Option<u16>,
}

/// `misura tcp`'s pacing for `--peer iperf3` (iperf3's `-b`).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct TcpPeerRate {
    /// With --peer iperf3: pace each stream's sends at RATE (e.g. 50M,
    /// 1 Mbit/s to 1.6 Tbit/s), per stream as `iperf3 -c -b` does; sent to
    /// the server as iperf3's `bandwidth`. Without it the streams send as
    /// fast as they go.
    #[arg(long, value_name = "RATE", requires = "peer")]
    pub rate: Option<LinkRate>,
}

/// `misura udp`'s parallel streams for `--peer iperf3` (iperf3's `-P`).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct UdpPeerStreams {
    /// With --peer iperf3: UDP streams at once (iperf3's -P, 1 to 128),
    /// each opened with iperf3's UDP connect handshake and sent at --rate
    /// (per stream, as iperf3's -b).
    #[arg(long, value_name = "N", requires = "peer")]
    pub streams: Option<u32>,
}

/// `--peer` and `--cport` as the library's plan; `iperf3_only`: the
/// iperf3-only flag given besides (`--rate`, `--streams`), if any.
pub fn plan(a: &PeerArgs, iperf3_only: Option<&'static str>) -> (PeerPlan, Option<&'static str>) {
    let only = iperf3_only.or(a.cport.map(|_| "--cport"));
    let peer = match a.peer.as_deref() {
        None => Peer::Misura,
        Some("iperf3") => Peer::Iperf3,
        _ => Peer::Auto,
    };
    let p = PeerPlan {
        peer,
        cport: a.cport,
        iperf3_only: only.is_some(),
    };
    (p, only)
}

/// What `--peer auto` found, on stderr.
pub fn say_found(f: &Found) {
    eprintln!(
        "misura: peer found by probing: {} at {}",
        f.name(),
        f.addr()
    );
}

/// A probe that found misura serve where an iperf3-only flag was given is
/// a usage error naming that flag.
pub fn sentence(e: ThroughputError, only: Option<&str>) -> anyhow::Error {
    match (e, only) {
        (ThroughputError::MisuraFound(MisuraFound { host }), Some(flag)) => Failure::Usage(
            format!("{flag} is for iperf3 servers, and --peer auto found misura serve at {host}"),
        )
        .into(),
        (e, _) => crate::shared::throughput_words::error(e),
    }
}

/// `misura tcp --peer iperf3`'s output.
pub fn tcp_text(r: &Iperf3TcpReport, w: &mut dyn Write) -> std::io::Result<()> {
    write_tcp_text(&r.report, w)?;
    r.peer.write_text(w)
}

/// `misura tcp --peer iperf3`'s CSV.
pub fn tcp_csv(r: &Iperf3TcpReport, w: &mut dyn Write) -> std::io::Result<()> {
    write_tcp_csv(&r.report, w)
}

/// `misura udp --peer iperf3`'s output.
pub fn udp_text(r: &Iperf3UdpReport, w: &mut dyn Write) -> std::io::Result<()> {
    write_udp_text(&r.report, w)?;
    r.peer.write_text(w)
}

/// `misura udp --peer iperf3`'s CSV.
pub fn udp_csv(r: &Iperf3UdpReport, w: &mut dyn Write) -> std::io::Result<()> {
    write_udp_csv(&r.report, w)
}
