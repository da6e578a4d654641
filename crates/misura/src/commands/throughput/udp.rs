//! `misura udp`: paced UDP against `misura serve` (seed 001's UDP and
//! don't-fragment studies, seed 004's iperf figures): received rate, loss,
//! duplicates, out-of-order, RFC 3550 jitter and one-way delay variation.
//!
//! The flags and their glue; the test is `misura_throughput::udp`'s.

use super::peer;
use crate::shared::client_flags::{self as client, ClientArgs, ClientsArg};
use crate::shared::client_flags::{UdpKnobsArgs, UdpShapeArgs};
use crate::shared::exit::Failure;
use crate::shared::output::Finished;
use crate::shared::throughput_words::{self, sentence};
use anyhow::Result;
use misura_report::throughput::{write_udp_csv, write_udp_text};
use misura_throughput::peer::Measured;
pub use misura_throughput::udp::*;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// Long help for the subcommand (shown by `--help`).
pub const LONG_ABOUT: &str = "Paced UDP against `misura serve` (the UDP studies of Alborghetti et al., INFN 1998; the iperf figures of Gupta and Dave).

The sender (the client; the server with --reverse) sends --msg-size datagrams (UDP payload, at \
least 24 bytes) at --rate for --duration, each carrying the test id, a sequence number and its send \
time (CLOCK_REALTIME). The receiver counts them: received rate (`throughput_bps` in the JSON, as the \
receiver measured it), loss = sent − received, duplicates, out-of-order arrivals, RFC 3550 \
interarrival jitter, and the one-way delay's extremes and their difference (its variation; the \
delays themselves include the two clocks' offset unless both ends share a clock). The rate counts \
UDP payload bytes.

Pacing (both ends, the same code): datagram k is due at start + k·msg-size·8/rate, exactly and \
open-loop. The sender sleeps (absolute clock_nanosleep on CLOCK_MONOTONIC, timer slack 1 ns) until \
a margin before the next send, the margin being the p99 of how late its recent wake-ups were \
(measured as it runs), and spins only that remainder. When datagrams are closer than a sleep can \
resolve (about 8 margins; at 1 Gbit/s they are 12 µs apart), those due together go back to back, \
one wake-up per burst, at most 1 ms apart. A sender that falls behind catches up for at most 10 ms, \
then drops the backlog (counted as skipped). The result's `pacing` says how it went: bursts, \
wake-ups, the margin, time spun, the gap between sends (p50/p99 against the target) and how far \
behind schedule datagrams left; `cpu_local` is the client's CPU time (user + system) over the test. \
SO_TXTIME is not used. --pacing spin instead sends every datagram at its own time, spinning up to a \
whole CPU, for the most even spacing.

--df sets don't-fragment (IP_MTU_DISCOVER = IP_PMTUDISC_DO): a datagram above the path MTU then \
cannot leave (EMSGSIZE) or is dropped on the way, so nothing arrives (Alborghetti et al., INFN 1998, Fig. 16). misura \
says so plainly and reports the path MTU the kernel holds (IP_MTU).

Exit codes: 0 done, 1 server unreachable / refused (its reason is printed) / lost during the test \
(partial result written) / nothing arrived because --df datagrams exceed the path MTU, 2 usage, 5 above the server's limits or a datagram below 24 bytes, 6 \
output file, 130/143 interrupted.

Examples:
  misura udp 198.18.0.2 --rate 100M
  misura udp 198.18.0.2 --rate 1G --msg-size 1472 --duration 10s --json
  misura udp 198.18.0.2 --rate 10M --msg-size 2000 --df
  misura udp 198.18.0.2 --rate 50M --reverse --clients 2";

#[derive(clap::Args, Debug, Clone)]
pub struct UdpArgs {
    #[command(flatten)]
    pub c: ClientArgs,
    #[command(flatten)]
    pub clients: ClientsArg,
    #[command(flatten)]
    pub knobs: UdpKnobsArgs,
    #[command(flatten)]
    pub shape: UdpShapeArgs,
    #[command(flatten)]
    pub peer: super::peer::PeerArgs,
    #[command(flatten)]
    pub peer_streams: super::peer::UdpPeerStreams,
}

/// The flags checked into a plan.
pub fn plan(a: &UdpArgs) -> Result<UdpPlan, Failure> {
    client::plan(&a.c, a.clients.clients)
        .and_then(|c| UdpPlan::new(c, &(&a.knobs).into(), &(&a.shape).into()))
        .map_err(|r| sentence(&r))
}

/// `misura udp`: the report, exit code 1 when a client did not complete
/// (or nothing arrived because --df datagrams exceed the path MTU).
pub fn run(args: &UdpArgs, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    let plan = plan(args)?;
    let (peer, only) = peer::plan(&args.peer, args.peer_streams.streams.map(|_| "--streams"));
    let measured = misura_throughput::peer::udp(
        &plan,
        &peer,
        args.peer_streams.streams.unwrap_or(1),
        stop,
        peer::say_found,
    );
    let host = &args.c.host;
    Ok(match measured.map_err(|e| peer::sentence(e, only))? {
        Measured::Misura(r) => {
            let blocked = blocked_by_df(&r);
            if let Some(why) = &blocked {
                eprintln!("misura: error: {}", throughput_words::blocked_by_df(why));
            }
            let complete = r.complete && blocked.is_none();
            client::finished(complete, r, "udp", host, write_udp_text, write_udp_csv)
        }
        Measured::Iperf3(r) => client::finished(
            r.report.complete,
            r,
            "udp",
            host,
            peer::udp_text,
            peer::udp_csv,
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::throughput::parsed::Parsed;
    use misura_throughput::client::Direction;

    type W = Parsed<UdpKnobsArgs, UdpShapeArgs>;

    fn plan(args: &[&str]) -> Result<UdpPlan, Failure> {
        W::plan(args, UdpPlan::new)
    }

    #[test]
    fn flags_resolve_into_a_plan() {
        let p = plan(&["t", "h", "--rate", "10M", "--df", "--reverse"]).unwrap();
        assert_eq!(
            (p.rate_bps(), p.msg_size(), p.duration_ns()),
            (10_000_000, 1472, 10_000_000_000)
        );
        assert_eq!(p.direction(), Direction::Reverse);
        assert!(p.df);
        assert_eq!(p.pacing, PacingMode::Sleep);
        let p = plan(&["t", "h", "--rate", "10M", "--pacing", "spin"]).unwrap();
        assert_eq!(p.pacing.as_str(), "spin");
        assert!(W::of(&["t", "h", "--rate", "1M", "--pacing", "nap"]).is_err());
        assert!(W::of(&["t", "h"]).is_err(), "--rate is required");
        assert!(W::of(&["t", "h", "--rate", "fast"]).is_err());
    }

    #[test]
    fn bounds_name_their_flag() {
        let e = |args: &[&str]| match plan(args) {
            Err(Failure::Params(m)) => m,
            other => panic!("{:?}", other.map(|p| p.msg_size)),
        };
        assert_eq!(
            e(&["t", "h", "--rate", "10M", "--msg-size", "23"]),
            "--msg-size 23 must be between 24 and 65507 bytes (the UDP payload limit)"
        );
        assert!(e(&["t", "h", "--rate", "10M", "--msg-size", "65508"]).starts_with("--msg-size"));
        assert!(e(&["t", "h", "--rate", "10M", "--duration", "0s"]).starts_with("--duration"));
        assert!(plan(&["t", "h", "--rate", "10M", "--msg-size", "24"]).is_ok());
    }
}
