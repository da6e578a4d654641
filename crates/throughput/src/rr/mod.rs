//! `misura rr`: request/response transactions against `misura serve`
//! (netperf TCP_RR, UDP_RR, TCP_CRR; seed 004): transactions per second,
//! latency per transaction, CPU and service demand per transaction.

use crate::client;
use crate::error::Result;
use misura_cli::exit::one_line;
use misura_report::throughput::{CpuUse, RrClientResult, RrConfig, RrReport};
use misura_stats::Summary;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

mod loops;
mod plan;
mod session;

pub use plan::{RrKind, RrKnobs, RrPlan, RrProto, RrShape, DEFAULT_BURST};

/// Run the test (in the current network namespace) and build the result.
pub fn measure(p: &RrPlan, stop: &Arc<AtomicUsize>) -> Result<RrReport> {
    let ran = client::run_all(p, &p.client, stop, session::one_client)?;
    let o = ran.outcome;
    // As rtt and oneway: the host's load over the run and what on this host
    // spreads the figures (a VM's hypervisor above all), printed and kept.
    let host = p.client.fingerprint();
    let mut warnings = o.warnings;
    warnings.extend(misura_run::host::warnings_for(&host, false));
    Ok(RrReport {
        meta: misura_cli::meta::meta("misura.rr", ran.started_at),
        complete: o.complete,
        stop_reason: o.stop_reason,
        transactions_per_s: o.clients.iter().map(|c| c.transactions_per_s).sum(),
        host,
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
        warnings,
    })
}

/// The row of a client that could not run its test.
fn not_run(i: u32, e: &crate::error::ThroughputError) -> RrClientResult {
    RrClientResult {
        client: i,
        test_id: None,
        complete: false,
        stop_reason: misura_report::StopReason::other(one_line(e)),
        elapsed_ns: 0,
        transactions: 0,
        transactions_per_s: 0.0,
        lost: 0,
        latency: Summary::new().snapshot().into(),
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
