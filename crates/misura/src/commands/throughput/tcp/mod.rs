//! `misura tcp`: TCP bulk throughput against `misura serve` (seed 001's
//! TCP studies): streams, direction, message size, socket buffers,
//! TCP_NODELAY; per-stream and aggregate throughput, retransmits and RTT
//! from TCP_INFO, buffers actually granted, CPU utilisation of both ends
//! and service demand.

use crate::commands::throughput::client::{self, Direction};
use crate::shared::output::Finished;
use crate::shared::warnings::Warn;
use anyhow::Result;
use misura_report::throughput::{
    write_tcp_csv, write_tcp_text, CpuUse, IntervalLine, TcpClientResult, TcpConfig, TcpReport,
};
use misura_report::Warning;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};

/// Long help for the subcommand (shown by `--help`).
pub const LONG_ABOUT: &str = "TCP throughput against `misura serve` (seed 001's TCP studies).

The client opens --streams data connections to the server and, for --duration, writes --msg-size \
chunks (forward), or reads what the server writes (--reverse), or both at once on every connection \
(--bidir, full duplex). The throughput at the top (`throughput_bps` in the JSON) is the one the \
receiver measured: the server's count for forward, the client's for reverse, their sum for bidir.

One thread drives all of a client's streams: non-blocking sockets and one poll(2) loop that \
writes to (and reads from) whichever sockets are ready, as iperf3 3.12+ and nuttcp do, so streams \
that share a CPU do not time-share it between threads. --threads runs one blocking thread per \
stream instead (two for --bidir), for hosts where the streams can spread over several CPUs. The \
result says which ran (`config.threads`: \"one\" or \"per-stream\"). While the client \
receives (--reverse, --bidir) that loop polls for --busy-poll (default 5us) before it sleeps, \
so data that comes within it wakes nobody (`config.busy_poll_ns`).

Per stream: bytes, throughput, the socket buffers the kernel actually granted (Linux doubles a \
--sndbuf/--rcvbuf request and caps it at net.core.[wr]mem_max), and from TCP_INFO the retransmitted \
segments, smoothed RTT, congestion window and path MTU (of the client's sockets: in a reverse test \
the server's retransmits are not seen). CPU: user + system time of the client's test thread(s) and of \
the server (from its RESULT), in % of one CPU, and the service demand in µs of CPU per KB moved \
(netperf's figure, KB = 1024 bytes).

--clients N runs N such clients at once from this machine, each with its own control connection; \
the table lists each and the sum. Exit codes: 0 done, 1 server unreachable / refused (its reason \
is printed) / lost during the test (partial result written), 2 usage, 5 above the limits the \
server announced, 6 output file, 130/143 interrupted.

Examples:
  misura tcp 198.18.0.2
  misura tcp 198.18.0.2 --streams 4 --duration 10s --interval 1s
  misura tcp 198.18.0.2 --reverse --msg-size 64K --rcvbuf 256K --json
  misura tcp 198.18.0.2 --bidir --clients 2 --export-csv tcp.csv";

mod multiplex;
mod plan;
mod session;
mod streams;

pub use plan::{TcpArgs, TcpKnobs, TcpPlan, TcpShape, DEFAULT_MSG_SIZE, DEFAULT_STREAMS};

/// `misura tcp`: the report, exit code 1 when a client did not complete.
pub fn run(args: &TcpArgs, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    let r = measure(&TcpPlan::from_args(args)?, stop)?;
    let (text, csv) = (write_tcp_text, write_tcp_csv);
    Ok(client::finished(
        r.complete,
        r,
        "tcp",
        &args.c.host,
        text,
        csv,
    ))
}

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
        meta: crate::shared::meta::meta("misura.tcp", ran.started_at),
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
    w
}

/// The row of a client that could not run its test.
fn not_run(i: u32, e: &anyhow::Error) -> TcpClientResult {
    TcpClientResult {
        client: i,
        test_id: None,
        complete: false,
        stop_reason: format!("{e:#}"),
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
