//! The load of `misura load`'s loaded phase: one `misura tcp` or `misura
//! udp` test per direction against `misura serve`, each in its own thread,
//! from the same flags a user would give those commands (the binary parses
//! them: `plan::ParsedFlow`).

use crate::error::PlanError;
use crate::plan::{FlowFlags, LoadPlan};
use misura_cli::exit::BoxedError;
use misura_report::under_load::{FlowThroughput, ThroughputPoint};
use misura_throughput::error::Refusal;
use misura_throughput::{tcp, udp};
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::thread::JoinHandle;

/// One direction's test.
pub struct Flow {
    pub direction: &'static str,
    pub kind: &'static str,
    pub streams: u32,
    flags: Option<FlowFlags>,
    /// `--server iperf3://`: this flow's part of the one iperf3 test.
    iperf3: Option<crate::iperf3::Part>,
}

impl Flow {
    pub(crate) fn iperf3(
        direction: &'static str,
        kind: &'static str,
        streams: u32,
        part: crate::iperf3::Part,
    ) -> Flow {
        Flow {
            direction,
            kind,
            streams,
            flags: None,
            iperf3: Some(part),
        }
    }
}

/// The flows the plan asks for, each direction's flags as its command's
/// parser took them, before anything is measured.
pub fn plan(a: &LoadPlan) -> Result<Vec<Flow>, PlanError> {
    if let Some(url) = &a.server {
        let planned = crate::iperf3::plan(a, url)?;
        return Ok(planned
            .into_iter()
            .map(|(d, k, n, p)| Flow::iperf3(d, k, n, p))
            .collect());
    }
    let mut flows = Vec::new();
    for f in &a.flows {
        let flags = f.parsed.clone().map_err(|error| PlanError::Flow {
            direction: f.direction,
            error,
        })?;
        let (kind, streams) = match &flags {
            FlowFlags::Tcp { knobs, .. } => ("tcp", knobs.streams),
            FlowFlags::Udp { .. } => ("udp", 1),
        };
        flows.push(Flow {
            direction: f.direction,
            kind,
            streams,
            flags: Some(flags),
            iperf3: None,
        });
    }
    Ok(flows)
}

/// What a flow delivered.
pub struct FlowOutcome {
    pub throughput: FlowThroughput,
    /// Throughput intervals, s from the flow's start (TCP only).
    pub series: Vec<ThroughputPoint>,
    pub error: Option<String>,
}

impl FlowOutcome {
    /// What the test of `direction` measured, and why it did not complete.
    fn delivered(
        &mut self,
        direction: &str,
        bps: f64,
        complete: bool,
        why: &impl std::fmt::Display,
    ) {
        self.throughput.throughput_bps = bps;
        self.throughput.complete = complete;
        if !complete {
            self.error = Some(format!("the {direction} load did not complete: {why}"));
        }
    }
}

/// Start a flow in its own thread, unpinned (the probing loop may be
/// pinned; the load must not share its CPU by inheritance).
/// A refusal is said in `word`'s sentence.
pub fn start(
    f: Flow,
    word: fn(&Refusal) -> String,
    stop: &Arc<AtomicUsize>,
) -> JoinHandle<FlowOutcome> {
    let stop = stop.clone();
    std::thread::spawn(move || {
        let _ = misura_sys::sched::unpin();
        let mut out = FlowOutcome {
            throughput: FlowThroughput {
                direction: f.direction.into(),
                kind: f.kind.into(),
                streams: f.streams,
                throughput_bps: 0.0,
                complete: false,
            },
            series: Vec::new(),
            error: None,
        };
        let ran = if let Some(part) = &f.iperf3 {
            crate::iperf3::run(part, f.direction, &stop).map(|(bps, complete, error)| {
                out.throughput.throughput_bps = bps;
                out.throughput.complete = complete;
                out.error = error;
            })
        } else {
            match &f.flags {
                Some(FlowFlags::Tcp {
                    client,
                    knobs,
                    shape,
                }) => tcp::TcpPlan::new(client.clone(), knobs, shape)
                    .map_err(BoxedError::from)
                    .and_then(|plan| run_tcp(&f, &plan, &stop, &mut out)),
                Some(FlowFlags::Udp {
                    client,
                    knobs,
                    shape,
                }) => udp::UdpPlan::new(client.clone(), knobs, shape)
                    .map_err(BoxedError::from)
                    .and_then(|plan| run_udp(&f, &plan, &stop, &mut out)),
                None => Err("no flags for this flow".into()),
            }
        };
        if let Err(e) = ran {
            let e = crate::error::said(&*e, word);
            out.error = Some(format!("the {} load ({}): {e}", f.direction, f.kind));
        }
        out
    })
}

fn run_tcp(
    f: &Flow,
    plan: &tcp::TcpPlan,
    stop: &Arc<AtomicUsize>,
    out: &mut FlowOutcome,
) -> Result<(), BoxedError> {
    let r = tcp::measure(plan, stop)?;
    out.delivered(f.direction, r.throughput_bps, r.complete, &r.stop_reason);
    out.series = r
        .intervals
        .iter()
        .map(|l| ThroughputPoint {
            t_s: l.start_ns as f64 / 1e9,
            direction: f.direction.into(),
            throughput_bps: l.throughput_bps,
        })
        .collect();
    Ok(())
}

fn run_udp(
    f: &Flow,
    plan: &udp::UdpPlan,
    stop: &Arc<AtomicUsize>,
    out: &mut FlowOutcome,
) -> Result<(), BoxedError> {
    let r = udp::measure(plan, stop)?;
    out.delivered(f.direction, r.throughput_bps, r.complete, &r.stop_reason);
    Ok(())
}
