//! `misura rtt HOST --peer irtt` and `misura load --reflector irtt://HOST`:
//! the glue. The method (the target, rtt's request as an irtt request, its
//! one check, the session, the grant's bounds, the result as an rtt
//! result, its warnings) is `misura_irtt::probe::run`'s; here its errors
//! get their flags and exit codes, and the session's start and warnings
//! are printed.

use crate::shared::exit::{Chain, Class, Classed, Failure};
use crate::shared::output::{Finished, Report};
use anyhow::Result;
use misura_irtt::error::Error;
use misura_irtt::probe::{self, Session};
use misura_load::ProbeError;
use misura_report::rtt::{write_csv, write_text};
use misura_rtt::{Measured, Peer, RttRequest};
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// The library's error with the flag it concerns, in its exit class.
fn failure(e: Error) -> anyhow::Error {
    let e = match e {
        Error::Target(t) => return t.into(),
        e => e,
    };
    let flag = match &e {
        Error::PeriodOutOfRange { .. } => "--period/--rate: ",
        Error::DurationOutOfRange { .. } => "--count/--duration: ",
        Error::PacketTooLong { .. } => "--request: ",
        Error::KeyLength { .. } => "--irtt-hmac: ",
        Error::NoOpenReply { hint, .. } if hint.contains("key") => "(the key is --irtt-hmac KEY) ",
        _ => "",
    };
    match e.class() {
        Some(Class::Usage) => Failure::Usage(format!("{flag}{e}")).into(),
        Some(Class::Params) => Failure::Params(e.to_string()).into(),
        _ if flag.is_empty() => e.into(),
        _ => anyhow::Error::new(e).context(flag.trim().to_string()),
    }
}

/// The session, its start announced (unless quiet) and its warnings
/// printed (quiet or not: warnings, not progress).
fn session(a: &RttRequest, stop: &Arc<AtomicUsize>) -> Result<Session> {
    let s = probe::run(a, stop, &mut |plan| {
        if !a.quiet {
            eprintln!(
                "misura rtt: irtt session with {}: {} probes every {:?} asked for",
                plan.target(),
                plan.count().map_or("-".into(), |c| c.to_string()),
                plan.interval().to_std()
            );
        }
    })
    .map_err(failure)?;
    for why in s.warnings() {
        eprintln!("misura: warning: {why}");
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
    Ok(session(a, stop).map_err(Chain)?.measured())
}
