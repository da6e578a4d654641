//! `misura tcp`: TCP bulk throughput against `misura serve` (seed 001's
//! TCP studies): streams, direction, message size, socket buffers,
//! TCP_NODELAY; per-stream and aggregate throughput, retransmits and RTT
//! from TCP_INFO, buffers actually granted, CPU utilisation of both ends
//! and service demand.

use crate::client::{self, Direction};
use crate::error::Result;
use misura_cli::exit::one_line;
use misura_cli::warnings::Warn;
use misura_report::throughput::{CpuUse, IntervalLine, TcpClientResult, TcpConfig, TcpReport};
use misura_report::Warning;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};

mod multiplex;
mod plan;
mod session;
mod streams;

pub use plan::{TcpKnobs, TcpPlan, TcpShape, Threads, DEFAULT_MSG_SIZE, DEFAULT_STREAMS};

/// Run the test (in the current network namespace) and build the result.
pub fn measure(p: &TcpPlan, stop: &Arc<AtomicUsize>) -> Result<TcpReport> {
    let intervals = Mutex::new(Vec::new());
    let ran = client::run_all(p, &p.client, stop, |i, run| {
        session::one_client(i, run, &intervals)
    })?;
    let mut o = ran.outcome;
    o.warnings.extend(warnings(p, &o.clients));
    let mut iv = intervals.into_inner().unwrap();
    iv.sort_by_key(|l: &IntervalLine| (l.start_ns, l.client));
    Ok(TcpReport {
        meta: misura_cli::meta::meta("misura.tcp", ran.started_at),
        complete: o.complete,
        stop_reason: o.stop_reason,
        throughput_bps: o.clients.iter().map(|c| c.throughput_bps).sum(),
        retransmits: o.clients.iter().map(|c| c.retransmits).sum(),
        host: p.client.fingerprint(),
        config: TcpConfig {
            endpoint: p.client.endpoint(&ran.server),
            streams: p.streams,
            direction: p.direction.as_str().into(),
            msg_size: p.msg_size.bytes,
            sndbuf_requested: p.sndbuf.as_ref().map(|b| b.bytes),
            rcvbuf_requested: p.rcvbuf.as_ref().map(|b| b.bytes),
            nodelay: p.nodelay,
            duration_ns: p.duration_ns(),
            interval_ns: p.interval_ns(),
            threads: p.threads.as_str().into(),
            // The window is used only by the one-thread loop, and only
            // while it receives.
            busy_poll_ns: match (p.threads, p.direction) {
                (plan::Threads::PerStream, _) | (_, Direction::Forward) => 0,
                (plan::Threads::One, _) => p.busy_poll.as_nanos() as u64,
            },
        },
        clients: o.clients,
        intervals: iv,
        warnings: o.warnings,
    })
}

/// What the reader of a tcp result should know about its figures.
fn warnings(p: &TcpPlan, clients: &[TcpClientResult]) -> Vec<Warning> {
    let mut w = Vec::new();
    if p.direction == Direction::Reverse {
        w.push(Warn::ReverseSenderUnseen.into());
    }
    if clients
        .iter()
        .any(|c| c.receiver_bytes < c.sent_bytes && p.direction == Direction::Forward && c.complete)
    {
        w.push(Warn::BytesLostAtEnd.into());
    }
    // The server's figures that failed the check against this side's
    // counts (issue 33, item 9), named: the headline left them out.
    for c in clients {
        let Some(sv) = &c.server else { continue };
        let sent: Vec<u64> = c.streams.iter().map(|s| s.sent_bytes).collect();
        let v = client::received_by_server(sv, c.sent_bytes, &sent, c.elapsed_ns);
        let who = format!("misura server (client {})", c.client);
        w.extend(crate::iperf3::report::implausible_warning(&who, &v.why));
    }
    w
}

/// The row of a client that could not run its test.
fn not_run(i: u32, e: &crate::error::ThroughputError) -> TcpClientResult {
    TcpClientResult {
        client: i,
        test_id: None,
        complete: false,
        stop_reason: misura_report::StopReason::other(one_line(e)),
        elapsed_ns: 0,
        sent_bytes: 0,
        received_bytes: 0,
        receiver_bytes: 0,
        throughput_bps: 0.0,
        forward_bps: None,
        reverse_bps: None,
        retransmits: 0,
        rtt_us_mean: None,
        streams: vec![],
        cpu_local: CpuUse::default(),
        cpu_remote: None,
        service_demand_local_us_per_kb: None,
        service_demand_remote_us_per_kb: None,
        server: None,
    }
}

client::client_result!(TcpClientResult, not_run);
