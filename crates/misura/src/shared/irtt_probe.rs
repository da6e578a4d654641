//! `misura rtt HOST --peer irtt` and `misura load --reflector irtt://HOST`:
//! the glue. The method (rtt's flags as an irtt request, its one check,
//! the session, the grant's bounds, the result as an rtt result) is
//! `misura_irtt::probe`'s; here its errors get their flags and exit codes,
//! and the session's start and warnings are printed.

use crate::shared::exit::{Chain, Failure};
use crate::shared::output::{Finished, Report};
use anyhow::Result;
use misura_irtt::error::{Class, Error};
use misura_irtt::probe::{self, Plan, Request};
use misura_report::rtt::{write_csv, write_text};
use misura_report::StopReason;
use misura_wire::irtt::DEFAULT_PORT;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use misura_load::ProbeError;
use misura_rtt::{Measured, Peer, RttRequest};

/// rtt's request as an irtt request, checked into a plan.
fn plan(a: &RttRequest) -> Result<Plan> {
    let target =
        crate::shared::target::resolve(a.target.as_deref().unwrap_or_default(), DEFAULT_PORT)?;
    Plan::new(Request::from_rtt_request(a, target)).map_err(failure)
}

/// The library's error with the flag it concerns, in its exit class.
fn failure(e: Error) -> anyhow::Error {
    let flag = match &e {
        Error::PeriodOutOfRange { .. } => "--period/--rate: ",
        Error::DurationOutOfRange { .. } => "--count/--duration: ",
        Error::PacketTooLong { .. } => "--request: ",
        Error::KeyLength { .. } => "--irtt-hmac: ",
        Error::NoOpenReply { hint, .. } if hint.contains("key") => "(the key is --irtt-hmac KEY) ",
        _ => "",
    };
    match e.class() {
        Class::Usage => Failure::Usage(format!("{flag}{e}")).into(),
        Class::Params => Failure::Params(e.to_string()).into(),
        Class::Error if flag.is_empty() => e.into(),
        Class::Error => anyhow::Error::new(e).context(flag.trim().to_string()),
    }
}

fn session(a: &RttRequest, stop: &Arc<AtomicUsize>) -> Result<probe::Session> {
    let plan = plan(a)?;
    if !a.quiet {
        eprintln!(
            "misura rtt: irtt session with {}: {} probes every {:?} asked for",
            plan.target(),
            plan.count().map_or("-".into(), |c| c.to_string()),
            plan.interval().to_std()
        );
    }
    let s = probe::measure(&plan, stop).map_err(failure)?;
    // Warnings, not progress: printed with -q too.
    if let Some(why) = s.implausible() {
        eprintln!("misura: warning: {why}");
    }
    let signal = matches!(s.stop_reason, StopReason::Interrupted { .. });
    if !s.complete && !signal {
        eprintln!("misura: warning: {}", s.stop_reason);
    }
    Ok(s)
}

/// `misura rtt HOST --peer irtt`: an rtt result (`misura.rtt`, transport "irtt").
pub fn run(a: &RttRequest, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    let s = session(a, stop)?;
    let report = s.report();
    let (sent, answered) = (report.totals.sent, report.totals.received);
    let target = s.target;
    let report = Report::new(report, "rtt", target.to_string(), write_text).with_csv(write_csv);
    if answered == 0 && sent > 0 {
        eprintln!("misura: no reply to any of {sent} irtt probes from {target}");
        return Ok(Finished::with_code(report, crate::shared::exit::ERROR));
    }
    Ok(Finished::ok(report))
}

/// One session of `misura rtt`'s request as `misura load` runs one per
/// phase: an irtt server's (`--peer irtt`, as an rtt result), else the
/// STAMP session of `misura-rtt`.
pub fn measure(a: &RttRequest, stop: &Arc<AtomicUsize>) -> Result<Measured, ProbeError> {
    if a.peer != Some(Peer::Irtt) || a.l2 {
        return Ok(misura_rtt::measure(a, stop)?);
    }
    let report = session(a, stop).map_err(Chain)?.report();
    Ok(Measured {
        target_name: report.config.target.clone(),
        report,
        frames_error: None,
        series: Vec::new(),
    })
}
