//! `misura rr`: request/response transactions against `misura serve`
//! (netperf TCP_RR, UDP_RR, TCP_CRR; seed 004): transactions per second,
//! latency per transaction, CPU and service demand per transaction.

use crate::commands::throughput::client;
use crate::shared::output::Finished;
use anyhow::Result;
use misura_report::throughput::{
    write_rr_csv, write_rr_text, CpuUse, RrClientResult, RrConfig, RrReport,
};
use misura_stats::Summary;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

mod loops;
mod plan;
mod session;

pub use plan::{RrArgs, RrKnobs, RrPlan, RrShape, DEFAULT_BURST};

/// Long help for the subcommand (shown by `--help`).
pub const LONG_ABOUT: &str = "Request/response transactions against `misura serve` (netperf TCP_RR, UDP_RR and \
TCP_CRR; seed 004).

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

/// `misura rr`: the report, exit code 1 when a client did not complete.
pub fn run(args: &RrArgs, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    let r = measure(&RrPlan::from_args(args)?, stop)?;
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

/// Run the test (in the current network namespace) and build the result.
pub fn measure(p: &RrPlan, stop: &Arc<AtomicUsize>) -> Result<RrReport> {
    let ran = client::run_all(p, &p.client, stop, session::one_client)?;
    let o = ran.outcome;
    Ok(RrReport {
        meta: crate::shared::meta::meta("misura.rr", ran.started_at),
        complete: o.complete,
        stop_reason: o.stop_reason,
        transactions_per_s: o.clients.iter().map(|c| c.transactions_per_s).sum(),
        host: p.client.fingerprint(),
        config: RrConfig {
            endpoint: p.client.endpoint(&ran.server),
            kind: p.kind.as_str().into(),
            request_size: p.t.request,
            response_size: p.t.response,
            burst: p.t.burst,
            duration_ns: p.duration_ns(),
            timeout_ns: p.t.timeout.as_nanos() as u64,
        },
        clients: o.clients,
        warnings: o.warnings,
    })
}

/// The row of a client that could not run its test.
fn not_run(i: u32, e: &anyhow::Error) -> RrClientResult {
    RrClientResult {
        client: i,
        test_id: None,
        complete: false,
        stop_reason: format!("{e:#}"),
        elapsed_ns: 0,
        transactions: 0,
        transactions_per_s: 0.0,
        lost: 0,
        latency: Summary::new().snapshot(),
        latency_hdr: Vec::new(),
        connect: None,
        cpu_local: CpuUse::default(),
        cpu_remote: None,
        service_demand_local_us_per_transaction: None,
        service_demand_remote_us_per_transaction: None,
        server: None,
    }
}

client::client_result!(RrClientResult, not_run);
