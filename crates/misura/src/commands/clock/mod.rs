//! `misura clock`: know the instrument's clocks. The method (the plans,
//! the reads, the loops, the TSC's estimates, the reports) is
//! `misura-clock`'s, one call per subcommand; here the flags become its
//! request (`args.rs`, with the refusals in the flags' words) and the
//! result is printed, exported and kept.

pub mod args;
pub use args::ClockCommand;

use crate::shared::output::{Finished, Report};
use anyhow::Result;
use misura_clock::TscMeasured;
use misura_report::clock::{write_interference_text, write_sources_text, write_timer_text};
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// Run one `misura clock` subcommand to its report.
pub fn run(c: &ClockCommand, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    use misura_clock::{measure_interference, measure_sources, measure_timer};
    match c {
        ClockCommand::Sources(a) => {
            let r = measure_sources(&a.request(), stop, a.out.quiet).map_err(|e| c.refusal(e))?;
            Ok(this_host(r, "clock-sources", write_sources_text))
        }
        ClockCommand::Interference(a) => {
            let r = measure_interference(&a.request(), stop, a.out.quiet);
            let r = r.map_err(|e| c.refusal(e))?;
            Ok(this_host(r, "clock-interference", write_interference_text))
        }
        ClockCommand::Timer(a) => {
            let r = measure_timer(&a.request(), stop, a.out.quiet).map_err(|e| c.refusal(e))?;
            Ok(this_host(r, "clock-timer", write_timer_text))
        }
        ClockCommand::Tsc(a) => {
            let TscMeasured { measured, target } =
                misura_clock::measure_tsc(&a.request(), stop, a.out.quiet)
                    .map_err(|e| c.refusal(e))?;
            let write = misura_report::tsc::write_text;
            let report = Report::new(measured.report, "clock-tsc", target, write);
            Ok(match measured.error {
                // A failure after a complete run (the NTP server stopped
                // answering at the end) still shows what was measured, then
                // fails the run.
                Some(e) if report.value.complete => {
                    eprintln!("misura: error: {e}");
                    Finished::with_code(report, crate::shared::exit::ERROR)
                }
                _ => Finished::ok(report),
            })
        }
    }
}

/// A finished measurement of this host's clocks.
fn this_host<T: serde::Serialize + 'static>(
    report: T,
    subcommand: &str,
    text: fn(&T, &mut dyn std::io::Write) -> std::io::Result<()>,
) -> Finished {
    Finished::ok(Report::new(report, subcommand, "this host", text))
}
