//! `misura setup`: the set-up delay of a path (seed 001's SVC set-up
//! method, generalised): after an idle gap, the RTT of the first packet
//! minus the RTT of the next one; plus the TCP handshake time.
//!
//! The flags and their glue; the test is `misura_throughput::setup`'s.

use crate::shared::client_flags::{self as client, ClientArgs, ClientsArg};
use crate::shared::exit::Failure;
use crate::shared::output::Finished;
use crate::shared::throughput_words::{self, sentence};
use crate::shared::units::DurationArg;
use anyhow::Result;
use misura_report::throughput::{write_setup_csv, write_setup_text};
pub use misura_throughput::setup::*;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// Long help for the subcommand (shown by `--help`).
pub const LONG_ABOUT: &str = "Set-up delay of a path after idle gaps (the method of Alborghetti et al., INFN 1998, generalised), and the TCP handshake time.

For every --idle gap, --count times: misura asks `misura serve` for a UDP request/response test \
(rr-udp, 16-byte datagrams), sends nothing to the server for the gap, then times two transactions \
back to back. The first pays for whatever the path has to set up again after being idle \
(neighbour-cache resolution, a switched virtual circuit, a radio bearer, a firewall state); the \
second does not. set-up = first RTT − second RTT. Right after, the duration of connect() to the \
serve port (the TCP handshake, SYN → SYN-ACK) is measured once. The control connection stays open \
and silent during the gap, so a gap longer than the server's --idle-timeout ends that sample \
with a clear error.

On Linux the neighbour entry of a peer goes STALE after about 30 s (base_reachable_time) but is \
still used at once, so expect a set-up delay near 0 on a plain LAN; a positive one shows a path \
element that really sets something up.

Exit codes: 0 done, 1 server unreachable / refused (its reason is printed), 2 usage, 5 gaps above \
the server's test duration limit, 6 output file, 130/143 interrupted.

Examples:
  misura setup 198.18.0.2
  misura setup 198.18.0.2 --idle 0s,1s,5s,30s --count 5 --json";

#[derive(clap::Args, Debug, Clone)]
pub struct SetupArgs {
    #[command(flatten)]
    pub c: ClientArgs,
    #[command(flatten)]
    pub clients: ClientsArg,
    /// Idle gaps before the first packet (comma-separated durations).
    #[arg(
        long,
        default_value = "0s,1s,5s,30s",
        value_delimiter = ',',
        value_name = "LIST"
    )]
    pub idle: Vec<DurationArg>,
    /// Samples per gap.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub count: u32,
}

/// The flags checked into a plan.
pub fn plan(a: &SetupArgs) -> Result<SetupPlan, Failure> {
    let gaps: Vec<u64> = a.idle.iter().map(|g| g.ns as u64).collect();
    SetupPlan::check_samples(&gaps, a.count).map_err(|NothingToMeasure| {
        Failure::Params("give at least one --idle gap and --count ≥ 1".into())
    })?;
    Ok(SetupPlan {
        client: client::plan(&a.c, a.clients.clients).map_err(|r| sentence(&r))?,
        gaps,
        count: a.count,
    })
}

/// `misura setup`: the report, exit code 1 when a sample failed.
pub fn run(args: &SetupArgs, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    let r = measure(&plan(args)?, stop).map_err(throughput_words::error)?;
    let (text, csv) = (write_setup_text, write_setup_csv);
    Ok(client::finished(
        r.complete,
        r,
        "setup",
        &args.c.host,
        text,
        csv,
    ))
}
