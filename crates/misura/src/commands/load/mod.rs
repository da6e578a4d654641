//! `misura load HOST`: latency under load (issue 12), RRUL's shape. STAMP
//! probes run through three phases — idle, loaded, idle again — each a
//! `misura rtt` session on its own open-loop schedule; during the loaded
//! phase TCP streams (or paced UDP) run up and down through `misura serve`.
//! The clock offset of the first idle phase re-refers every phase's
//! one-way delays, so the direction whose queue grew shows.

pub mod args;
mod flows;
pub use args::LoadArgs;

use crate::shared::exit::Failure;
use crate::shared::output::{Finished, Report};
use anyhow::Result;
use misura_load::{LoadPlan, PlanError};
use misura_report::under_load::write_text;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// Long help for the subcommand (shown by `--help`).
pub const LONG_ABOUT: &str = "\
Measure what happens to latency when the path is busy (bufferbloat; flent's
RRUL test, the IETF responsiveness draft). STAMP probes go to a reflector
through three phases: --idle seconds idle, --duration seconds loaded, --idle
seconds idle again. During the loaded phase --up N and --down N TCP streams
(default 4 each) run through `misura serve` on HOST, or paced UDP with
--udp-up RATE / --udp-down RATE.

Per phase: throughput per flow and in total; network, user and kernel RTT;
forward and backward one-way delay, with the clock offset estimated in the
first idle phase so the direction whose queue grew shows; loss and jitter of
the probes (and, with --rr, of UDP request/response transactions through
`misura serve`). Then the inflation (loaded − idle medians) with its uncertainty,
and responsiveness in round trips per minute (60 s over the loaded median
RTT; computed from misura's probes, not the draft's HTTP procedure).

HOST runs `misura serve` (the load) and, by default, `misura reflect` on port
862 (the probes; --reflector to name another). The probes' timeout (--timeout,
default 2 s) must exceed the loaded queue's delay, or they count as lost.

Examples:
  misura load 198.18.1.2
  misura load 198.18.1.2 --up 1 --down 0 --duration 20s --idle 5s
  misura load 198.18.1.2 --udp-up 40M --period 20ms --json
  misura load 198.18.1.2 --rr --up 2 --down 2";

/// The flags resolved into the plan, checked; its errors in the flags' words.
fn plan(a: &LoadArgs) -> Result<LoadPlan, Failure> {
    let mut p = LoadPlan {
        host: a.host.clone(),
        reflector: a.reflector.clone(),
        server: a.server.clone(),
        up: a.up,
        down: a.down,
        udp_up: a.udp_up.clone(),
        udp_down: a.udp_down.clone(),
        duration: a.duration.clone(),
        idle: a.idle.clone(),
        period: a.period.clone(),
        timeout: a.timeout.clone(),
        rr: a.rr,
        cpu: a.cpu,
        cpu_load: (&a.cpu_load).into(),
        key_file: a.key_file.clone(),
        quiet: a.out.quiet || a.out.json,
        netns: a.ns.netns.clone(),
        flows: vec![],
        transactions: None,
        refusal_words: crate::shared::throughput_words::words,
    };
    p.flows = flows::flows(&p);
    p.transactions = p.rr.then(|| flows::transactions(&p));
    p.check().map_err(flag_sentence)?;
    Ok(p)
}

/// A plan error as the sentence that names the flags, with its exit class.
fn flag_sentence(e: PlanError) -> Failure {
    use PlanError::*;
    match e {
        LoadedPhase { duration } => Failure::Params(format!(
            "--duration {duration} is out of range: the loaded phase lasts 2 s to 1 h"
        )),
        IdlePhase { idle } => Failure::Params(format!(
            "--idle {idle} is out of range: each idle phase lasts 1 s (enough probes for the clock offset) to 10 min"
        )),
        Streams { up, down, max } => Failure::Params(format!(
            "--up {up} / --down {down}: at most {max} streams each way"
        )),
        NoLoad => Failure::Usage(
            "no load: give --up N or --down N (TCP streams) or --udp-up/--udp-down RATE".into(),
        ),
        FewIdleProbes { period, idle } => Failure::Params(format!(
            "--period {period} leaves fewer than 10 probes in an idle phase of {idle}: shorten the period or lengthen --idle"
        )),
        ServerUrl { url } => Failure::Usage(format!(
            "--server {url}: give iperf3://HOST[:PORT] (an iperf3 -s)"
        )),
        Iperf3NoLoad => {
            Failure::Usage("--server iperf3://: no load asked for (--up/--down 0)".into())
        }
        Flow { direction, error } => Failure::Usage(format!("the {direction} load: {error}")),
        Transactions { error } => Failure::Usage(format!("--rr: {error}")),
        UdpRate(e) => e.into(),
        Refusal(r) => crate::shared::throughput_words::sentence(&r),
        CpuLoad(t) => Failure::Params(crate::shared::words::said(&t)),
    }
}

/// `misura load`.
pub fn run(a: &LoadArgs, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    let plan = plan(a)?;
    let (report, failed) = misura_load::measure(&plan, crate::shared::irtt_probe::measure, stop)?;
    let target = report.config.server.clone();
    let report = Report::new(report, "load", target, write_text);
    Ok(match failed {
        Some(why) => {
            eprintln!("misura: error: {why}");
            Finished::with_code(report, crate::shared::exit::ERROR)
        }
        None => Finished::ok(report),
    })
}
