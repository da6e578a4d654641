//! `misura load HOST`: latency under load (issue 12), RRUL's shape. STAMP
//! probes run through three phases — idle, loaded, idle again — each a
//! `misura rtt` session on its own open-loop schedule; during the loaded
//! phase TCP streams (or paced UDP) run up and down through `misura serve`.
//! The clock offset of the first idle phase re-refers every phase's
//! one-way delays, so the direction whose queue grew shows.
//!
//! The binary resolves its flags into a [`LoadPlan`] once, checks it
//! ([`PlanError`] names no flag) and calls [`measure`]; it prints the
//! report and why a flow failed, and exits.
#![forbid(unsafe_code)]

mod check;
mod error;
mod exit_class;
mod flows;
mod iperf3;
mod phases;
mod plan;
mod preflight;
mod progress;
mod replies;
mod rr;

pub use error::{LoadError, PlanError, ProbeError, ProbePlanError, ReflectorWhy};
pub use plan::{FlowFlags, LoadPlan, ParsedFlow, RrFlags};

use misura_report::under_load::UnderLoadReport;
use misura_rtt::{Measured, RttRequest};
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// How the probes of a phase run: `misura rtt`'s session for its request
/// (the binary's, which also speaks to an irtt server).
pub type Probe = fn(&RttRequest, &Arc<AtomicUsize>) -> Result<Measured, ProbeError>;

/// Check the plan and both peers, run the three phases and return the
/// report and, if a flow of the load failed, why (the report is complete
/// otherwise).
pub fn measure(
    plan: &LoadPlan,
    probe: Probe,
    stop: &Arc<AtomicUsize>,
) -> Result<(UnderLoadReport, Option<String>), LoadError> {
    plan.check()?;
    preflight::check_peers(plan, probe, stop)?;
    let busy = plan.cpu_load.start(plan.cpu);
    let line = progress::LoadProgress::start(plan);
    let measured = phases::measure(plan, probe, stop, &line);
    drop(line);
    let (mut report, failed) = measured?;
    for e in busy.iter().flat_map(|b| &b.pin_errors) {
        report
            .warnings
            .push(misura_cli::warnings::Warn::LoadThreadNotPinned { error: e.clone() }.into());
    }
    drop(busy);
    if let Some(url) = &plan.server {
        report.config.server = url.clone(); // the load's server was another tool
    }
    Ok((report, failed))
}
