//! `misura rtt`: the STAMP Session-Sender. The method (request, plan,
//! probing client, result) is the `misura-rtt` library; here are its flags
//! (`args.rs`: the request they ask, refusals in their words), the
//! finished session is printed, exported and kept, and its exit code
//! chosen, and `--peer irtt` goes to the irtt client
//! (`shared/irtt_probe.rs`).

use crate::shared::output::{Finished, Report};
use anyhow::Result;
use misura_report::rtt::{write_csv, write_text};
mod args;
pub use args::RttArgs;
use misura_rtt::{measure, Measured, Peer};
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

pub fn run(a: &RttArgs, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    if a.peer == Some(Peer::Irtt) && !a.l2 {
        // The irtt client takes no STAMP key and checks its own plan.
        return crate::shared::irtt_probe::run(&a.unchecked(None), stop);
    }
    let Measured {
        report,
        frames_error,
        target_name,
        ..
    } = measure(&a.request()?, stop).map_err(|e| a.refusal(e))?;
    let sent = report.totals.sent;
    let no_reply = report.totals.received == 0 && sent > 0;
    let target = report.config.target.clone();
    let report = Report::new(report, "rtt", target, write_text).with_csv(write_csv);
    if no_reply {
        eprintln!("misura: no reply to any of {sent} probes from {target_name}");
        return Ok(Finished::with_code(report, crate::shared::exit::ERROR));
    }
    if let Some(e) = frames_error {
        eprintln!("misura: error: writing the per-probe log failed: {e}; the summary is complete, the log is not");
        return Ok(Finished::with_code(report, crate::shared::exit::OUTPUT));
    }
    Ok(Finished::ok(report))
}
