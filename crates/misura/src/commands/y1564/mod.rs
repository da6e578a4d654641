//! `misura y1564`: ITU-T Y.1564 service activation on the frame engine.
//! The method (the ports and services checked, the frame format settled,
//! the engine, steps, trials, verdicts at the rate the tester sent, the
//! run's verdict, the result) is `misura_bench::y1564`'s; here are its
//! flags (`args.rs`: the request they ask, refusals in their words), the
//! printing and the verdict's exit code (0 PASS, 9 FAIL, 8 inconclusive).

pub mod args;

pub use args::Y1564Args;

use crate::shared::output::{Finished, Report};
use anyhow::Result;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// `misura y1564`.
pub fn run(a: &Y1564Args, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    let request = a.request()?;
    let status = misura_cli::status_line::StatusLine::new(a.out.quiet);
    let report = misura_bench::y1564::request::measure(&request, &status, stop);
    drop(status);
    let report = report.map_err(|e| a.refusal(e))?;
    let target = format!("{}->{}", a.p.tx, a.p.rx);
    let code = if report.pass || !report.complete {
        crate::shared::exit::OK
    } else if report.inconclusive {
        crate::shared::exit::INCONCLUSIVE
    } else {
        // The SUT's own failure: the tool worked (exit 9, not 1).
        crate::shared::exit::FAIL
    };
    Ok(Finished::with_code(
        Report::new(report, "y1564", target, misura_report::y1564::write_text),
        code,
    ))
}
