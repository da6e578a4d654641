//! `misura load --server iperf3://HOST[:PORT]`: the loaded phase's load
//! from an iperf3 server (issue 28). iperf3 runs one test at a time, so up
//! and down are one iperf3 test (--bidir when both, with the larger stream
//! count both ways); its up figure reaches the down flow through a channel.

use crate::error::PlanError;
use crate::plan::LoadPlan;
use misura_cli::exit::BoxedError;
use misura_throughput::iperf3::{self, Iperf3Plan};
use misura_wire::iperf3::{Params, Protocol};
use std::sync::atomic::AtomicUsize;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A flow's part of the one iperf3 test (a handful per run: the plan is
/// kept inline, not boxed).
#[allow(clippy::large_enum_variant)]
pub enum Part {
    /// Runs the test; sends the other direction's figure, if any.
    Lead(Iperf3Plan, Option<Sender<(f64, bool)>>),
    /// Waits for the lead's figure of this direction.
    /// (the receiver, how long to wait for it, s).
    Follow(Mutex<Receiver<(f64, bool)>>, u64),
}

/// A flow of the iperf3 load: direction, kind, streams, its part.
pub type Planned = (&'static str, &'static str, u32, Part);

/// The flows of an iperf3 load: `url` is iperf3://HOST[:PORT].
pub fn plan(a: &LoadPlan, url: &str) -> Result<Vec<Planned>, PlanError> {
    let host = url
        .strip_prefix("iperf3://")
        .ok_or_else(|| PlanError::ServerUrl {
            url: url.to_string(),
        })?;
    let udp = a.udp_up.is_some() || a.udp_down.is_some();
    let rate = |r: &Option<String>| r.as_deref().map(misura_cli::units::link_rate).transpose();
    let (up_rate, down_rate) = (rate(&a.udp_up)?, rate(&a.udp_down)?);
    let (up, down) = if udp {
        (up_rate.is_some(), down_rate.is_some())
    } else {
        (a.up > 0, a.down > 0)
    };
    if !up && !down {
        return Err(PlanError::Iperf3NoLoad);
    }
    let streams = if udp { 1 } else { a.up.max(a.down) };
    let params = Params {
        protocol: if udp { Protocol::Udp } else { Protocol::Tcp },
        time: (a.duration.ns as u64).div_ceil(1_000_000_000).max(1),
        parallel: streams,
        reverse: !up,
        bidirectional: up && down,
        bandwidth: up_rate.or(down_rate),
        len: udp.then_some(1460),
        client_version: Some(format!("misura-{}", env!("CARGO_PKG_VERSION"))),
        ..Default::default()
    };
    let p = Iperf3Plan {
        host: host.to_string(),
        params,
        cport: None,
    };
    let wait = p.params.time + 60;
    let kind = if udp { "udp" } else { "tcp" };
    let (tx, rx) = channel();
    let lead_dir = if up { "up" } else { "down" };
    let mut flows = vec![(
        lead_dir,
        kind,
        streams,
        Part::Lead(p, (up && down).then_some(tx)),
    )];
    if up && down {
        // The lead's test, its set-up and results exchange (10 s a step).
        flows.push(("down", kind, streams, Part::Follow(Mutex::new(rx), wait)));
    }
    Ok(flows)
}

/// What a flow's part delivered: receiver bit/s, complete, why not.
pub type Delivered = (f64, bool, Option<String>);

/// Run a flow's part (`direction`): the lead runs the iperf3 test.
pub fn run(part: &Part, direction: &str, stop: &Arc<AtomicUsize>) -> Result<Delivered, BoxedError> {
    let mut error = None;
    let (bps, complete) = match part {
        Part::Lead(p, tx) => {
            let r = iperf3::run(p, stop)?;
            // The tcp result's per-direction split (receiver counts of the
            // streams) holds for UDP streams too.
            let rep = iperf3::tcp_report(p, &r, &None);
            let row = &rep.report.clients[0];
            let (own, other) = match (row.forward_bps, row.reverse_bps) {
                (Some(f), Some(r)) => (f, Some(r)),
                _ => (row.throughput_bps, None),
            };
            if let (Some(tx), Some(o)) = (tx, other) {
                let _ = tx.send((o, r.complete));
            }
            if !r.complete {
                error = Some(format!(
                    "the iperf3 load did not complete: {}",
                    r.stop_reason
                ));
            }
            (own, r.complete)
        }
        Part::Follow(rx, wait_s) => {
            let wait = Duration::from_secs(*wait_s);
            rx.lock()
                .unwrap()
                .recv_timeout(wait)
                .map_err(|_| format!("the iperf3 test gave no {direction} figure"))?
        }
    };
    Ok((bps, complete, error))
}
