//! The load of `misura load`'s loaded phase: one `misura tcp` or `misura
//! udp` test per direction against `misura serve`, each in its own thread,
//! built from the same flags a user would give those commands.

use crate::error::PlanError;
use crate::plan::LoadPlan;
use clap::Parser;
use misura_cli::exit::one_line;
use misura_cli::exit::BoxedError;
use misura_report::under_load::{FlowThroughput, ThroughputPoint};
use misura_throughput::client::ClientPlan;
use misura_throughput::{tcp, udp};
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::thread::JoinHandle;

/// The target flags a flow or a transactions' test is given (the flags of
/// `misura serve`'s clients it uses): one client, quiet.
#[derive(clap::Args)]
pub(crate) struct Target {
    #[arg(value_name = "HOST[:PORT]")]
    host: String,
    #[arg(long, value_name = "FILE")]
    key_file: Option<std::path::PathBuf>,
    #[arg(short, long)]
    quiet: bool,
}

impl Target {
    /// The one client's plan.
    pub(crate) fn client(&self) -> ClientPlan {
        ClientPlan {
            host: self.host.clone(),
            key_file: self.key_file.clone(),
            netns: None,
            clients: 1,
            quiet: self.quiet,
        }
    }
}

/// `misura tcp`'s flags but --clients (one client).
#[derive(Parser)]
struct TcpCli {
    #[command(flatten)]
    c: Target,
    #[command(flatten)]
    knobs: tcp::TcpKnobs,
    #[command(flatten)]
    shape: tcp::TcpShape,
}

/// `misura udp`'s flags but --clients (one client).
#[derive(Parser)]
struct UdpCli {
    #[command(flatten)]
    c: Target,
    #[command(flatten)]
    knobs: udp::UdpKnobs,
    #[command(flatten)]
    shape: udp::UdpShape,
}

/// One direction's test, as flags.
pub struct Flow {
    pub direction: &'static str,
    pub kind: &'static str,
    pub streams: u32,
    argv: Vec<String>,
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
            argv: vec![],
            iperf3: Some(part),
        }
    }
}

/// The flows the flags ask for, checked by the commands' own parsers
/// before anything is measured.
pub fn plan(a: &LoadPlan) -> Result<Vec<Flow>, PlanError> {
    if let Some(url) = &a.server {
        let planned = crate::iperf3::plan(a, url)?;
        return Ok(planned
            .into_iter()
            .map(|(d, k, n, p)| Flow::iperf3(d, k, n, p))
            .collect());
    }
    let secs = format!("{}ms", a.duration.ns / 1_000_000);
    let mut flows = Vec::new();
    for (direction, udp_rate, streams) in [("up", &a.udp_up, a.up), ("down", &a.udp_down, a.down)] {
        let mut argv: Vec<String> = Vec::new();
        let kind = match udp_rate {
            Some(rate) => {
                argv.extend(["udp", &a.host, "--rate", rate].map(String::from));
                "udp"
            }
            None if streams > 0 => {
                argv.extend(["tcp", &a.host, "--streams"].map(String::from));
                argv.extend([streams.to_string(), "--interval".into(), "1s".into()]);
                "tcp"
            }
            None => continue,
        };
        argv.extend(["--duration".to_string(), secs.clone(), "-q".into()]);
        if direction == "down" {
            argv.push("--reverse".into());
        }
        if let Some(k) = &a.key_file {
            argv.extend(["--key-file".to_string(), k.display().to_string()]);
        }
        let checked = if kind == "tcp" {
            TcpCli::try_parse_from(&argv).map(drop)
        } else {
            UdpCli::try_parse_from(&argv).map(drop)
        };
        checked.map_err(|e| PlanError::Flow {
            direction,
            error: e.to_string(),
        })?;
        flows.push(Flow {
            direction,
            kind,
            streams: if kind == "udp" { 1 } else { streams },
            argv,
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
pub fn start(f: Flow, stop: &Arc<AtomicUsize>) -> JoinHandle<FlowOutcome> {
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
        } else if f.kind == "tcp" {
            run_tcp(&f, &stop, &mut out)
        } else {
            run_udp(&f, &stop, &mut out)
        };
        if let Err(e) = ran {
            let e = one_line(&*e);
            out.error = Some(format!("the {} load ({}): {e}", f.direction, f.kind));
        }
        out
    })
}

fn run_tcp(f: &Flow, stop: &Arc<AtomicUsize>, out: &mut FlowOutcome) -> Result<(), BoxedError> {
    let a = TcpCli::try_parse_from(&f.argv)?;
    let plan = tcp::TcpPlan::new(a.c.client(), &a.knobs, &a.shape)?;
    let r = tcp::measure(&plan, stop)?;
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

fn run_udp(f: &Flow, stop: &Arc<AtomicUsize>, out: &mut FlowOutcome) -> Result<(), BoxedError> {
    let a = UdpCli::try_parse_from(&f.argv)?;
    let plan = udp::UdpPlan::new(a.c.client(), &a.knobs, &a.shape)?;
    let r = udp::measure(&plan, stop)?;
    out.delivered(f.direction, r.throughput_bps, r.complete, &r.stop_reason);
    Ok(())
}
