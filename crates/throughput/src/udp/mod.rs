//! `misura udp`: paced UDP against `misura serve` (seed 001's UDP and
//! don't-fragment studies, seed 004's iperf figures): received rate, loss,
//! duplicates, out-of-order, RFC 3550 jitter and one-way delay variation.

use crate::client;
use crate::error::Result;
use misura_cli::exit::one_line;
use misura_cli::warnings::Warn;
use misura_report::throughput::{UdpClientResult, UdpConfig, UdpReport};
use misura_report::Warning;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

mod datagram;
mod flow;
mod plan;
mod session;

pub use plan::{PacingMode, UdpKnobs, UdpPlan, UdpShape, DEFAULT_MSG_SIZE};

/// Run the test (in the current network namespace) and build the result.
pub fn measure(p: &UdpPlan, stop: &Arc<AtomicUsize>) -> Result<UdpReport> {
    let ran = client::run_all(p, &p.client, stop, session::one_client)?;
    let mut o = ran.outcome;
    let clients = &o.clients;
    let dropped: Vec<Warning> = clients
        .iter()
        .filter_map(|c| nothing_arrived(p, c))
        .collect();
    o.warnings.extend(dropped);
    // The server's figures that failed the check (issue 33, item 9), named.
    for c in &o.clients {
        let Some(sv) = &c.server else { continue };
        let forward = (c.receiver == "server").then_some((c.sent_packets, c.sent_bytes));
        let v = client::udp_server_figures(sv, forward, c.elapsed_ns);
        let who = format!("misura server (client {})", c.client);
        o.warnings
            .extend(crate::iperf3::report::implausible_warning(&who, &v.why));
    }
    let sent: u64 = o
        .clients
        .iter()
        .fold(0, |a, c| a.saturating_add(c.sent_packets));
    let lost: u64 = o.clients.iter().fold(0, |a, c| a.saturating_add(c.lost));
    Ok(UdpReport {
        meta: misura_cli::meta::meta("misura.udp", ran.started_at),
        complete: o.complete,
        stop_reason: o.stop_reason,
        throughput_bps: o.clients.iter().map(|c| c.throughput_bps).sum(),
        lost,
        loss_ratio: if sent > 0 {
            lost as f64 / sent as f64
        } else {
            0.0
        },
        host: p.client.fingerprint(),
        config: UdpConfig {
            endpoint: p.client.endpoint(&ran.server),
            direction: p.direction().as_str().into(),
            rate_bps: p.rate_bps(),
            msg_size: p.msg_size(),
            duration_ns: p.duration_ns(),
            df: p.df,
            pacing: p.pacing.as_str().into(),
        },
        clients: o.clients,
        warnings: o.warnings,
    })
}

/// With don't-fragment, datagrams above the path MTU never leave (every
/// send fails with EMSGSIZE) or are dropped on the way: the test measured
/// nothing, which is an error (exit 1), not a result of 0 bit/s. The
/// binary words it with its flags (`--msg-size`, `--df`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "{msg_size}-byte datagrams with don't-fragment: nothing arrived ({failed} sends failed with \
     EMSGSIZE): a {msg_size}-byte datagram is a {packet}-byte IPv4 packet, above the path MTU of \
     {mtu}, and don't-fragment forbids splitting it. Send datagrams of {fits}, or let them be \
     fragmented",
    packet = self.packet(),
    mtu = self.mtu_text(),
    fits = self.fits()
)]
pub struct BlockedByDf {
    /// The datagram size (bytes of UDP payload).
    pub msg_size: u64,
    /// Sends that failed with EMSGSIZE, all clients.
    pub failed: u64,
    /// The path MTU the kernel reported, if any.
    pub path_mtu: Option<u32>,
}

impl BlockedByDf {
    /// The IPv4 packet a datagram makes (UDP and IPv4 headers added).
    pub fn packet(&self) -> u64 {
        self.msg_size + 28
    }

    /// The path MTU as text (`1500 bytes`, or `unknown`).
    pub fn mtu_text(&self) -> String {
        self.path_mtu
            .map_or("unknown".into(), |m| format!("{m} bytes"))
    }

    /// The datagram sizes that fit (`1472 or less`, or `smaller`).
    pub fn fits(&self) -> String {
        self.path_mtu.map_or("smaller".into(), |m| {
            format!("{} or less", (m as u64).saturating_sub(28))
        })
    }
}

pub fn blocked_by_df(r: &UdpReport) -> Option<BlockedByDf> {
    let c = &r.config;
    let ran: Vec<_> = r.clients.iter().filter(|c| c.test_id.is_some()).collect();
    if !c.df || ran.is_empty() || ran.iter().any(|c| c.received_packets > 0) {
        return None;
    }
    let failed: u64 = ran.iter().map(|c| c.emsgsize_errors).sum();
    let mtu = ran.iter().find_map(|c| c.path_mtu);
    let packet = c.msg_size + 28;
    if failed == 0 && mtu.is_none_or(|m| packet <= m as u64) {
        return None;
    }
    Some(BlockedByDf {
        msg_size: c.msg_size,
        failed,
        path_mtu: mtu,
    })
}

/// A warning for a client whose datagrams all went missing, saying why
/// when don't-fragment explains it (Alborghetti et al., INFN 1998, Fig. 16).
fn nothing_arrived(p: &UdpPlan, c: &UdpClientResult) -> Option<Warning> {
    if c.test_id.is_none() || c.received_packets != 0 || c.sent_packets + c.send_errors == 0 {
        return None;
    }
    let size = p.msg_size();
    let w = if p.df && size + 28 > c.path_mtu.unwrap_or(u32::MAX) as u64 {
        Warn::AboveMtuWithDf {
            mtu: c.path_mtu.unwrap_or(0),
            msg_size: size,
            emsgsize: c.emsgsize_errors,
        }
    } else if p.df {
        Warn::NothingArrivedWithDf {
            client: c.client,
            mtu: c.path_mtu,
        }
    } else {
        Warn::NothingArrived { client: c.client }
    };
    Some(w.into())
}

/// The row of a client that could not run its test.
fn not_run(i: u32, e: &crate::error::ThroughputError) -> UdpClientResult {
    UdpClientResult {
        client: i,
        stop_reason: misura_report::StopReason::other(one_line(e)),
        ..session::not_run_row()
    }
}

client::client_result!(UdpClientResult, not_run);
