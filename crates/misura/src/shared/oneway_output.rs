//! How a one-way run's report reaches main, for the commands that make one
//! (`oneway`, `calibrate`, `demo`): its exit code when the per-frame log
//! failed, a calibration printed with how to use the profile it saved, and
//! a request the library refused worded with the flags (`oneway_words.rs`).
//! The measurement is `misura_oneway`'s.

use crate::shared::oneway_words::request_sentence;
use crate::shared::output::{Finished, Report, RunReport};
use misura_oneway::calibrate::CalibrationRun;
use misura_oneway::error::OnewayError;
use misura_report::{text, OnewayReport};
use std::io::Write;

/// The report as `main` prints, exports and keeps it.
pub fn finished(report: OnewayReport) -> Finished {
    let mode = report.mode.clone();
    let target = format!("{}->{}", report.config.tx, report.config.rx);
    let log_failed = report
        .warnings
        .iter()
        .find(|w| w.code == "output.log-write-failed")
        .map(|w| w.text.clone());
    // A loop that failed mid-run: its figures up to then are the result,
    // and the exit status says it failed.
    let failed = match &report.stop_reason {
        misura_report::StopReason::Error(why) => Some(why.clone()),
        _ => None,
    };
    let report = Report::new(report, &mode, target, text::write_oneway)
        .with_csv(misura_report::csv::write_oneway_summary);
    match (failed, log_failed) {
        (Some(why), _) => {
            eprintln!("misura: error: {why}; the figures cover the frames measured until then");
            Finished::with_code(report, crate::shared::exit::ERROR)
        }
        (None, Some(why)) => {
            eprintln!("misura: error: {why}; the summary is complete, the log is not");
            Finished::with_code(report, crate::shared::exit::OUTPUT)
        }
        (None, None) => Finished::ok(report),
    }
}

impl RunReport for CalibrationRun {
    fn write_json(&self, w: &mut dyn Write) -> std::io::Result<()> {
        misura_report::write_json(&self.report, w)
    }
    fn write_text(&self, w: &mut dyn Write) -> std::io::Result<()> {
        misura_report::text::write_oneway(&self.report, w)?;
        match &self.saved {
            Some(p) => writeln!(
                w,
                "\nprofile saved: {}\nuse it: misura oneway {} --calibration {}",
                p.display(),
                self.ports,
                p.display()
            ),
            None => {
                eprintln!(
                    "no profile saved: {}",
                    if self.report.complete {
                        "the fit failed (see warnings)"
                    } else {
                        "the run did not complete"
                    }
                );
                Ok(())
            }
        }
    }
    fn write_csv(&self, w: &mut dyn Write) -> Option<std::io::Result<()>> {
        Some(misura_report::csv::write_oneway_summary(&self.report, w))
    }
    fn to_value(&self) -> serde_json::Result<serde_json::Value> {
        serde_json::to_value(&self.report)
    }
    fn store_key(&self) -> (&str, &str) {
        (&self.report.mode, &self.target)
    }
}

/// A one-way run's error, a refused request in the flags' words.
pub fn worded(e: OnewayError) -> anyhow::Error {
    match e {
        OnewayError::Request(r) => request_sentence(&r).into(),
        e => e.into(),
    }
}
