//! `--peer iperf3|auto` of `misura tcp` and `misura udp`: the flags, and
//! the glue to `misura_throughput::iperf3` (issue 28).

use crate::shared::client_flags as client;
use crate::shared::exit::Failure;
use crate::shared::output::Finished;
use anyhow::Result;
use misura_report::throughput::{write_tcp_csv, write_tcp_text, write_udp_csv, write_udp_text};
use misura_run::units::LinkRate;
use misura_throughput::iperf3::probe::{self, Found};
use misura_throughput::iperf3::{self, Iperf3Plan, Iperf3TcpReport, Iperf3UdpReport};
use misura_throughput::tcp::TcpPlan;
use misura_throughput::udp::UdpPlan;
use std::io::Write;
use std::net::TcpStream;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

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

/// The server `--peer` chose.
pub enum Chosen {
    /// misura serve (`probed`: found by `--peer auto`).
    Misura { probed: bool },
    /// An iperf3 server, with the probe's control connection when kept.
    Iperf3 {
        conn: Option<TcpStream>,
        probed: bool,
    },
}

/// `--peer` resolved: none is misura serve, `auto` probes HOST (and says
/// on stderr what it found). `iperf3_only`: an iperf3-only flag given,
/// refused when the probe finds misura serve.
pub fn choose(a: &PeerArgs, host: &str, iperf3_only: Option<&str>) -> Result<Chosen> {
    match a.peer.as_deref() {
        None => Ok(Chosen::Misura { probed: false }),
        Some("iperf3") => Ok(Chosen::Iperf3 {
            conn: None,
            probed: false,
        }),
        _ => {
            let f = probe::probe(host)?;
            eprintln!(
                "misura: peer found by probing: {} at {}",
                f.name(),
                f.addr()
            );
            match f {
                Found::Misura(_) => match iperf3_only.or(a.cport.map(|_| "--cport")) {
                    Some(flag) => Err(Failure::Usage(format!(
                        "{flag} is for iperf3 servers, and --peer auto found misura serve at {host}"
                    ))
                    .into()),
                    None => Ok(Chosen::Misura { probed: true }),
                },
                Found::Iperf3(_, conn) => Ok(Chosen::Iperf3 { conn, probed: true }),
            }
        }
    }
}

fn probed(yes: bool, what: &str) -> Option<String> {
    yes.then(|| what.to_string())
}

fn tcp_text(r: &Iperf3TcpReport, w: &mut dyn Write) -> std::io::Result<()> {
    write_tcp_text(&r.report, w)?;
    r.peer.write_text(w)
}

fn tcp_csv(r: &Iperf3TcpReport, w: &mut dyn Write) -> std::io::Result<()> {
    write_tcp_csv(&r.report, w)
}

fn udp_text(r: &Iperf3UdpReport, w: &mut dyn Write) -> std::io::Result<()> {
    write_udp_text(&r.report, w)?;
    r.peer.write_text(w)
}

fn udp_csv(r: &Iperf3UdpReport, w: &mut dyn Write) -> std::io::Result<()> {
    write_udp_csv(&r.report, w)
}

/// `misura tcp --peer iperf3`, on the tcp flags' plan.
pub fn tcp(
    plan: &TcpPlan,
    a: &PeerArgs,
    rate: &TcpPeerRate,
    (conn, found): (Option<TcpStream>, bool),
    stop: &Arc<AtomicUsize>,
) -> Result<Finished> {
    let p = Iperf3Plan::from_tcp(plan, a.cport, rate.rate.as_ref().map(|r| r.bps))?;
    let r = iperf3::run_on(&p, conn, stop)?;
    let mut rep = iperf3::tcp_report(&p, &r, &plan.client.netns);
    rep.report.config.endpoint.found_by_probing = probed(found, "iperf3");
    let host = plan.client.host.clone();
    Ok(client::finished(
        rep.report.complete,
        rep,
        "tcp",
        &host,
        tcp_text,
        tcp_csv,
    ))
}

/// `misura udp --peer iperf3`, on the udp flags' plan.
pub fn udp(
    plan: &UdpPlan,
    a: &PeerArgs,
    streams: &UdpPeerStreams,
    (conn, found): (Option<TcpStream>, bool),
    stop: &Arc<AtomicUsize>,
) -> Result<Finished> {
    let p = Iperf3Plan::from_udp(plan, a.cport, streams.streams.unwrap_or(1))?;
    let r = iperf3::run_on(&p, conn, stop)?;
    let mut rep = iperf3::udp_report(&p, &r, &plan.client.netns);
    rep.report.config.endpoint.found_by_probing = probed(found, "iperf3");
    let host = plan.client.host.clone();
    Ok(client::finished(
        rep.report.complete,
        rep,
        "udp",
        &host,
        udp_text,
        udp_csv,
    ))
}

/// The result's note of a misura serve found by `--peer auto`.
pub fn misura_found(found: bool) -> Option<String> {
    probed(found, "misura")
}
