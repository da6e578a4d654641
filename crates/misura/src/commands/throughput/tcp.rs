//! `misura tcp`: TCP bulk throughput against `misura serve` (seed 001's
//! TCP studies): streams, direction, message size, socket buffers,
//! TCP_NODELAY; per-stream and aggregate throughput, retransmits and RTT
//! from TCP_INFO, buffers actually granted, CPU utilisation of both ends
//! and service demand.
//!
//! The flags and their glue; the test is `misura_throughput::tcp`'s.

use super::peer;
use crate::shared::client_flags::{self as client, ClientArgs, ClientsArg};
use crate::shared::client_flags::{TcpKnobsArgs, TcpShapeArgs};
use crate::shared::exit::Failure;
use crate::shared::output::Finished;
use crate::shared::throughput_words::sentence;
use anyhow::Result;
use misura_report::throughput::{write_tcp_csv, write_tcp_text};
use misura_throughput::peer::Measured;
pub use misura_throughput::tcp::*;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// Long help for the subcommand (shown by `--help`).
pub const LONG_ABOUT: &str = "TCP throughput against `misura serve` (the TCP studies of Alborghetti et al., INFN 1998).

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

#[derive(clap::Args, Debug, Clone)]
pub struct TcpArgs {
    #[command(flatten)]
    pub c: ClientArgs,
    #[command(flatten)]
    pub clients: ClientsArg,
    #[command(flatten)]
    pub knobs: TcpKnobsArgs,
    #[command(flatten)]
    pub shape: TcpShapeArgs,
    #[command(flatten)]
    pub peer: super::peer::PeerArgs,
    #[command(flatten)]
    pub peer_rate: super::peer::TcpPeerRate,
}

/// The flags checked into a plan.
pub fn plan(a: &TcpArgs) -> Result<TcpPlan, Failure> {
    client::plan(&a.c, a.clients.clients)
        .and_then(|c| TcpPlan::new(c, &(&a.knobs).into(), &(&a.shape).into()))
        .map_err(|r| sentence(&r))
}

/// `misura tcp`: the report, exit code 1 when a client did not complete.
pub fn run(args: &TcpArgs, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    let plan = plan(args)?;
    let (peer, only) = peer::plan(&args.peer, args.peer_rate.rate.as_ref().map(|_| "--rate"));
    let measured = misura_throughput::peer::tcp(
        &plan,
        &peer,
        args.peer_rate.rate.as_ref().map(|r| r.bps),
        stop,
        peer::say_found,
    );
    let host = &args.c.host;
    Ok(match measured.map_err(|e| peer::sentence(e, only))? {
        Measured::Misura(r) => {
            client::finished(r.complete, r, "tcp", host, write_tcp_text, write_tcp_csv)
        }
        Measured::Iperf3(r) => client::finished(
            r.report.complete,
            r,
            "tcp",
            host,
            peer::tcp_text,
            peer::tcp_csv,
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::throughput::parsed::Parsed;
    use misura_throughput::client::Direction;

    type W = Parsed<TcpKnobsArgs, TcpShapeArgs>;

    fn plan(args: &[&str]) -> Result<TcpPlan, Failure> {
        W::plan(args, TcpPlan::new)
    }

    #[test]
    fn flags_resolve_into_a_plan() {
        let p = plan(&[
            "t",
            "198.18.0.2",
            "--bidir",
            "--msg-size",
            "64K",
            "--sndbuf",
            "256K",
            "--interval",
            "1s",
        ])
        .unwrap();
        assert_eq!(p.direction, Direction::Bidir);
        assert_eq!(
            (p.msg_size.bytes, p.msg_size.to_string()),
            (65536, "64K".into())
        );
        assert_eq!(p.opts().sndbuf, Some(262144));
        assert_eq!(p.opts().rcvbuf, None);
        assert_eq!(p.interval_ns(), Some(1_000_000_000));
        assert_eq!(p.duration_ns(), 10_000_000_000, "the default --duration");
        assert_eq!((p.streams, p.client.clients), (1, 1));
        assert_eq!(
            p.threads,
            Threads::One,
            "one thread drives the streams by default"
        );
        let t = plan(&["t", "h", "--streams", "4", "--threads"]).unwrap();
        assert_eq!(
            (t.threads, t.threads.as_str()),
            (Threads::PerStream, "per-stream")
        );
        assert!(W::of(&["t", "h", "--reverse", "--bidir"]).is_err());
        assert!(W::of(&["t", "h", "--duration", "soon"]).is_err());
    }

    #[test]
    fn bounds_name_their_flag() {
        let e = |args: &[&str]| match plan(args) {
            Err(Failure::Params(m)) => m,
            other => panic!("{:?}", other.map(|p| p.streams)),
        };
        assert_eq!(
            e(&["t", "h", "--streams", "0"]),
            "--streams must be between 1 and 1024"
        );
        assert!(e(&["t", "h", "--streams", "1025"]).starts_with("--streams"));
        assert!(e(&["t", "h", "--msg-size", "0"]).starts_with("--msg-size 0 "));
        assert!(e(&["t", "h", "--msg-size", "65M"]).starts_with("--msg-size 65M "));
        assert!(e(&["t", "h", "--duration", "0s"]).starts_with("--duration 0s"));
        assert!(e(&["t", "h", "--interval", "0ms"]).starts_with("--interval 0ms"));
        assert!(e(&["t", "h", "--clients", "0"]).starts_with("--clients 0 is out of range"));
        assert!(e(&["t", "h", "--clients", "257"]).contains("between 1 and 256"));
        assert!(plan(&["t", "h", "--streams", "1024", "--msg-size", "64M"]).is_ok());
    }
}
