//! `misura rr`: request/response transactions against `misura serve`
//! (netperf TCP_RR, UDP_RR, TCP_CRR; seed 004): transactions per second,
//! latency per transaction, CPU and service demand per transaction.
//!
//! The flags and their glue; the test is `misura_throughput::rr`'s.

use crate::shared::client_flags::{self as client, ClientArgs, ClientsArg};
use crate::shared::client_flags::{RrKnobsArgs, RrShapeArgs};
use crate::shared::exit::Failure;
use crate::shared::output::Finished;
use crate::shared::throughput_words::{self, sentence};
use anyhow::Result;
use misura_report::throughput::{write_rr_csv, write_rr_text};
pub use misura_throughput::rr::*;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// Long help for the subcommand (shown by `--help`).
pub const LONG_ABOUT: &str = "Request/response transactions against `misura serve` (netperf TCP_RR, UDP_RR and \
TCP_CRR; the benchmark of Gupta and Dave).

The client writes a --request byte request, the server answers with --response bytes, and so on for \
--duration, with --burst transactions in flight. Reported: transactions per second \
(`transactions_per_s` in the JSON, the sum over clients), the latency of every transaction (request \
written → response read, user clock, CLOCK_MONOTONIC) as percentiles, CPU of both ends in % of one \
CPU and the service demand in µs of CPU per transaction.

--proto udp: requests and responses are datagrams (16 bytes or more carry the test id and transaction \
number, echoed); a transaction whose response does not come within --timeout is counted lost and \
another is sent. --connect (TCP only, netperf TCP_CRR): a new TCP connection per transaction \
(connect, request, response, close); the connect() time (the TCP handshake) is reported separately \
and is part of the transaction's latency; --burst N runs N such loops at once.

Exit codes: 0 done, 1 server unreachable / refused (its reason is printed) / lost during the test \
(partial result written), 2 usage, 5 above the server's limits, 6 output file, 130/143 interrupted.

Examples:
  misura rr 198.18.0.2 --proto tcp
  misura rr 198.18.0.2 --proto udp --request 64 --response 1024 --burst 4
  misura rr 198.18.0.2 --proto tcp --connect --duration 5s --json";

#[derive(clap::Args, Debug, Clone)]
pub struct RrArgs {
    #[command(flatten)]
    pub c: ClientArgs,
    #[command(flatten)]
    pub clients: ClientsArg,
    #[command(flatten)]
    pub knobs: RrKnobsArgs,
    #[command(flatten)]
    pub shape: RrShapeArgs,
}

/// The flags checked into a plan.
pub fn plan(a: &RrArgs) -> Result<RrPlan, Failure> {
    client::plan(&a.c, a.clients.clients)
        .and_then(|c| RrPlan::new(c, &(&a.knobs).into(), &(&a.shape).into()))
        .map_err(|r| sentence(&r))
}

/// `misura rr`: the report, exit code 1 when a client did not complete.
pub fn run(args: &RrArgs, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    let r = measure(&plan(args)?, stop).map_err(throughput_words::error)?;
    let (text, csv) = (write_rr_text, write_rr_csv);
    Ok(client::finished(
        r.complete,
        r,
        "rr",
        &args.c.host,
        text,
        csv,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::throughput::parsed::Parsed;
    use std::time::Duration;

    type W = Parsed<RrKnobsArgs, RrShapeArgs>;

    fn plan(args: &[&str]) -> Result<RrPlan, Failure> {
        W::plan(args, RrPlan::new)
    }

    #[test]
    fn kinds_and_sizes() {
        let p = plan(&["t", "h"]).unwrap();
        assert_eq!((p.kind, p.t.request, p.t.response), (RrKind::Tcp, 1, 1));
        assert_eq!(p.t.timeout, Duration::from_millis(200));
        let u = plan(&["t", "h", "--proto", "udp"]).unwrap();
        assert_eq!(
            (u.kind.as_str(), u.t.request, u.t.response),
            ("rr-udp", 16, 16)
        );
        // Bare datagrams under 16 bytes: fine with one in flight, refused with more.
        let bare = plan(&[
            "t",
            "h",
            "--proto",
            "udp",
            "--request",
            "1",
            "--response",
            "1",
        ]);
        assert_eq!(bare.unwrap().t.request, 1);
        assert!(matches!(
            plan(&["t", "h", "--proto", "udp", "--request", "1", "--burst", "2"]),
            Err(Failure::Params(_))
        ));
        assert_eq!(plan(&["t", "h", "--connect"]).unwrap().kind, RrKind::Crr);
        assert!(matches!(
            plan(&["t", "h", "--proto", "udp", "--connect"]),
            Err(Failure::Usage(_))
        ));
        assert!(W::of(&["t", "h", "--proto", "sctp"]).is_err());
        // A zero timeout is raised to 1 ms, as before.
        let z = plan(&["t", "h", "--timeout", "0s"]).unwrap();
        assert_eq!(z.t.timeout, Duration::from_millis(1));
    }

    #[test]
    fn bounds_name_their_flag() {
        let e = |args: &[&str]| match plan(args) {
            Err(Failure::Params(m)) => m,
            other => panic!("{:?}", other.map(|p| p.t)),
        };
        assert_eq!(
            e(&["t", "h", "--burst", "0"]),
            "--burst must be between 1 and 1024"
        );
        assert_eq!(
            e(&["t", "h", "--proto", "udp", "--response", "65508"]),
            "--response 65508 is out of range (1 … 65507 bytes)"
        );
        assert!(e(&["t", "h", "--request", "0"]).starts_with("--request 0"));
        assert!(e(&["t", "h", "--duration", "0s"]).starts_with("--duration"));
    }
}
