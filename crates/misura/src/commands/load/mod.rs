//! `misura load HOST`: latency under load (issue 12), RRUL's shape. STAMP
//! probes run through three phases — idle, loaded, idle again — each a
//! `misura rtt` session on its own open-loop schedule; during the loaded
//! phase TCP streams (or paced UDP) run up and down through `misura serve`.
//! The clock offset of the first idle phase re-refers every phase's
//! one-way delays, so the direction whose queue grew shows. The method
//! (the plan's checks, the peers' check, the phases, the flows, the
//! report) is `misura-load`'s, one call; here the flags become its plan
//! (`args.rs`, the flows' flags parsed by `flows.rs`), a refusal is worded
//! with them, and the result printed.

pub mod args;
mod flows;
pub use args::{LoadArgs, LONG_ABOUT};

use crate::shared::output::{Finished, Report};
use anyhow::Result;
use misura_report::under_load::write_text;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// `misura load`.
pub fn run(a: &LoadArgs, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    let probe = crate::shared::irtt_probe::measure;
    let (report, failed) =
        misura_load::measure(&a.request(), probe, stop).map_err(|e| a.refusal(e))?;
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
