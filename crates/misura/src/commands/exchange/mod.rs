//! `misura exchange`: seed 002's sequence on raw frames, a trigger and a
//! data frame each way. The method (the plan's checks, the frames, the
//! port, the initiator's timed cycles, the responder, the results) is
//! `misura-exchange`'s, one call; here the flags become its plan
//! (`args.rs`, with the refusals in the flags' words), and the responder
//! is announced and the result printed.

pub mod args;
pub use args::ExchangeArgs;

use crate::shared::output::{Finished, Report};
use anyhow::Result;
use misura_exchange::{measure, Exchanged, Initiated, Ready};
use misura_report::exchange::{write_responder_text, write_text};
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

pub fn run(a: &ExchangeArgs, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    let plan = a.request();
    let target = plan.target();
    let done = measure(&plan, stop, &mut announce).map_err(|e| a.refusal(e))?;
    let Initiated {
        report,
        cycles,
        completed,
        peer,
        mine,
    } = match done {
        Exchanged::Responder(r) => {
            let text = write_responder_text;
            return Ok(Finished::ok(Report::new(
                *r,
                "exchange-responder",
                target,
                text,
            )));
        }
        Exchanged::Initiator(i) => *i,
    };
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
