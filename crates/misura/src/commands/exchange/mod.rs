//! `misura exchange`: seed 002's sequence on raw frames, a trigger and a
//! data frame each way. The method (the frames, the port, the initiator's
//! timed cycles, the responder, the results) is `misura-exchange`'s; here
//! the flags become a plan once, what the plan refuses becomes a sentence
//! that names the flags, and the responder is announced and the result
//! printed.

pub mod args;
pub use args::ExchangeArgs;

use crate::shared::exit::Failure;
use crate::shared::output::{Finished, Report};
use anyhow::Result;
use misura_exchange::{ExchangeError, ExchangePlan, Frame, Initiated, Knob, PlanError, Ready};
use misura_report::clock::human_ns;
use misura_report::exchange::{write_responder_text, write_text};
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// The flags, resolved once into the exchange's plan.
fn plan(a: &ExchangeArgs) -> ExchangePlan {
    ExchangePlan {
        interface: a.interface.clone(),
        peer: a.peer,
        respond: a.respond,
        trigger: a.trigger,
        data: a.data,
        count: a.count,
        period: a.period.span(),
        timeout: a.timeout.span(),
        threshold: a.threshold.span(),
        ethertype: a.ethertype.value,
        duration: a.duration.as_ref().map(|d| d.span()),
        busy_poll: a.busy_poll,
        cpu: a.cpu,
        netns: a.ns.netns.clone(),
    }
}

/// What the plan refused, in the flags' words.
fn flag_sentence(a: &ExchangeArgs, e: PlanError) -> Failure {
    Failure::Params(match e {
        PlanError::TooShort { knob, min } => {
            let (flag, value) = match knob {
                Knob::Period => ("--period", &a.period),
                Knob::Timeout => ("--timeout", &a.timeout),
            };
            format!(
                "{flag} {value} is too short: it must be at least {}",
                human_ns(min.as_ns() as f64)
            )
        }
        PlanError::FrameSize {
            frame,
            bytes,
            max,
            interface,
        } => {
            let flag = match frame {
                Frame::Trigger => "--trigger",
                Frame::Data => "--data",
            };
            format!("{flag} {bytes}: frame sizes run from 64 bytes to {max} (the MTU of {interface} plus header and FCS)")
        }
    })
}

/// The library's error with its exit class: a refused plan in the flags'
/// words, the host's error as it is (its class is what it carries).
fn in_flag_words(a: &ExchangeArgs, e: ExchangeError) -> anyhow::Error {
    match e {
        ExchangeError::Plan(p) => flag_sentence(a, p).into(),
        ExchangeError::Sys(s) => s.into(),
        ExchangeError::Hardware(h) => h.into(),
        e => e.into(),
    }
}

pub fn run(a: &ExchangeArgs, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    let plan = plan(a);
    plan.check().map_err(|e| flag_sentence(a, e))?;
    let target = format!("{} {}", a.interface, a.peer);
    if a.respond {
        let report = misura_exchange::respond(&plan, stop, &mut announce)
            .map_err(|e| in_flag_words(a, e))?;
        return Ok(Finished::ok(Report::new(
            report,
            "exchange-responder",
            target,
            write_responder_text,
        )));
    }
    let Initiated {
        report,
        cycles,
        completed,
        peer,
        mine,
    } = misura_exchange::initiate(&plan, stop).map_err(|e| in_flag_words(a, e))?;
    let report = Report::new(report, "exchange", target, write_text);
    if completed == 0 && cycles > 0 {
        eprintln!(
            "misura: error: no data frame came back from {peer} in {cycles} cycles: is `misura exchange --respond --peer {mine}` running on the peer?"
        );
        return Ok(Finished::with_code(report, crate::shared::exit::ERROR));
    }
    Ok(Finished::ok(report))
}

fn announce(r: &Ready<'_>) {
    eprintln!(
        "misura exchange: responding on {} to triggers from {} with {}-byte data frames",
        r.interface, r.peer, r.data_bytes
    );
}
