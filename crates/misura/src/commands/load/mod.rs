//! `misura load HOST`: latency under load (issue 12), RRUL's shape. STAMP
//! probes run through three phases — idle, loaded, idle again — each a
//! `misura rtt` session on its own open-loop schedule; during the loaded
//! phase TCP streams (or paced UDP) run up and down through `misura serve`.
//! The clock offset of the first idle phase re-refers every phase's
//! one-way delays, so the direction whose queue grew shows.

pub mod args;
pub use args::LoadArgs;

mod flows;
mod iperf3;
mod phases;
mod preflight;
mod progress;
mod replies;
mod rr;

use crate::shared::exit::Failure;
use crate::shared::output::{Finished, Report};
use anyhow::Result;
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

/// Longest loaded phase.
const MAX_DURATION_NS: i64 = 3_600_000_000_000;
/// Idle phases: long enough for an offset, short enough to be a phase.
const MIN_IDLE_NS: i64 = 1_000_000_000;
const MAX_IDLE_NS: i64 = 600_000_000_000;
/// Streams per direction.
const MAX_STREAMS: u32 = 128;

fn check(a: &LoadArgs) -> Result<(), Failure> {
    let d = a.duration.ns;
    if !(2_000_000_000..=MAX_DURATION_NS).contains(&d) {
        return Err(Failure::Params(format!(
            "--duration {} is out of range: the loaded phase lasts 2 s to 1 h",
            a.duration
        )));
    }
    if !(MIN_IDLE_NS..=MAX_IDLE_NS).contains(&a.idle.ns) {
        return Err(Failure::Params(format!(
            "--idle {} is out of range: each idle phase lasts 1 s (enough probes for the clock offset) to 10 min",
            a.idle
        )));
    }
    if a.up > MAX_STREAMS || a.down > MAX_STREAMS {
        return Err(Failure::Params(format!(
            "--up {} / --down {}: at most {MAX_STREAMS} streams each way",
            a.up, a.down
        )));
    }
    if a.up == 0 && a.down == 0 && a.udp_up.is_none() && a.udp_down.is_none() {
        return Err(Failure::Usage(
            "no load: give --up N or --down N (TCP streams) or --udp-up/--udp-down RATE".into(),
        ));
    }
    if a.period.ns * 10 > a.idle.ns {
        return Err(Failure::Params(format!(
            "--period {} leaves fewer than 10 probes in an idle phase of {}: shorten the period or lengthen --idle",
            a.period, a.idle
        )));
    }
    if a.rr {
        rr::check(a)?;
    }
    a.cpu_load.check()
}

/// `misura load`.
pub fn run(a: &LoadArgs, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    check(a)?;
    flows::plan(a)?;
    preflight::check_peers(a, stop)?;
    let busy = a.cpu_load.start(a.cpu);
    let line = progress::LoadProgress::start(a);
    let measured = phases::measure(a, stop, &line);
    drop(line);
    let (mut report, failed) = measured?;
    for e in busy.iter().flat_map(|b| &b.pin_errors) {
        report
            .warnings
            .push(crate::shared::warnings::Warn::LoadThreadNotPinned { error: e.clone() }.into());
    }
    drop(busy);
    if let Some(url) = &a.server {
        report.config.server = url.clone(); // the load's server was another tool
    }
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
