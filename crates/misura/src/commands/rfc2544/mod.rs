//! `misura rfc2544`: RFC 2544's four tests per frame size on the frame
//! engine. The method (the ports and sizes checked, the link speed, the
//! engine, the search, the latency trial, frame loss, back-to-back, each
//! trial classified at the rate the tester sent, the result) is
//! `misura_bench::rfc2544`'s; here are its flags (`args.rs`, `sizes.rs`:
//! the request they ask, refusals in their words), the printing and the
//! exit code.

pub mod args;
pub mod sizes;

pub use args::Rfc2544Args;

use crate::shared::output::{Finished, Report};
use anyhow::Result;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// `misura rfc2544`.
pub fn run(a: &Rfc2544Args, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    let request = a.request()?;
    let status = misura_cli::status_line::StatusLine::new(a.out.quiet);
    let report = misura_bench::rfc2544::request::measure(&request, &status, stop);
    drop(status);
    let report = report.map_err(|e| a.refusal(e))?;
    let target = format!("{}->{}", a.p.tx, a.p.rx);
    // A result that rests on the tester's limit is no verdict on the SUT.
    let code = if report.inconclusive.is_empty() || !report.complete {
        crate::shared::exit::OK
    } else {
        crate::shared::exit::INCONCLUSIVE
    };
    Ok(Finished::with_code(
        Report::new(
            report,
            "rfc2544",
            target,
            misura_report::rfc2544::write_text,
        ),
        code,
    ))
}
