//! How a one-way run's report reaches main, for the commands that make one
//! (`oneway`, `calibrate`, `demo`): its exit code when the per-frame log
//! failed, a calibration printed with how to use the profile it saved, and
//! a request the library refused worded with the flags that asked for it.
//! The measurement is `misura_oneway`'s.

use crate::shared::exit::Failure;
use crate::shared::output::{Finished, Report, RunReport};
use misura_oneway::calibrate::CalibrationRun;
use misura_oneway::error::OnewayError;
use misura_oneway::plan::{RequestError, PTP_MIN_PAYLOAD};
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

/// What the library refused, as the flags `oneway`, `calibrate` and `demo`
/// share name it (exit 2 for a usage slip, 5 for a parameter).
pub fn request_sentence(e: &RequestError) -> Failure {
    use RequestError as E;
    match e {
        E::TimeoutNotPositive => Failure::Usage("--timeout must be positive".into()),
        E::OnePort { port } => Failure::Usage(format!(
            "--tx and --rx are both `{port}`: the method needs two ports (use the lab: misura lab up)"
        )),
        E::NoFrames => Failure::Usage("--count must be at least 1".into()),
        E::PtpPayloadTooSmall { .. } => Failure::Params(format!(
            "{e} (sizes from {PTP_MIN_PAYLOAD}; --frame-format misura keeps smaller frames, with software RX stamps where the NIC stamps only PTP)"
        )),
        E::TooFewSizes { .. } => Failure::Params(format!(
            "{e}: omit --sizes for the seven sizes of Cena et al.: {:?}",
            misura_oneway::SEED_SIZES
        )),
        E::NoLinkSpeed { .. } => {
            Failure::Params(format!("{e}: give it with --link-speed, e.g. --link-speed 1G"))
        }
        E::RateNotPositive { rate } => Failure::Params(format!(
            "--rate {rate} must be a positive number of frames per second"
        )),
        E::PeriodTooLong {
            period_ns,
            frames_per_period,
        } => Failure::Params(format!(
            "--period/--rate/--load give {:.3e} s between frames, more than the longest allowed (1 hour, {frames_per_period} frame(s) per hour)",
            *period_ns as f64 / 1e9
        )),
        E::OverLink { .. } => Failure::Params(format!("{e} (or --load 50%)")),
        E::BelowHeader { .. } | E::OverMtu { .. } | E::PeriodTooShort => {
            Failure::Params(e.to_string())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_request_is_worded_with_its_flags_and_class() {
        use RequestError as E;
        let cases = [
            (E::TimeoutNotPositive, 2, "--timeout must be positive"),
            (
                E::OnePort { port: "p1".into() },
                2,
                "--tx and --rx are both `p1`",
            ),
            (E::NoFrames, 2, "--count must be at least 1"),
            (
                E::PtpPayloadTooSmall { size: 50 },
                5,
                "--frame-format misura",
            ),
            (E::TooFewSizes { got: 2 }, 5, "omit --sizes"),
            (E::NoLinkSpeed { rx: "p2".into() }, 5, "--link-speed 1G"),
            (E::RateNotPositive { rate: 0.0 }, 5, "--rate 0 must be"),
            (
                E::PeriodTooLong {
                    period_ns: 7_200_000_000_000,
                    frames_per_period: 1,
                },
                5,
                "--period/--rate/--load give 7.200e3 s",
            ),
            (
                E::OverLink {
                    rate_fps: 2e6,
                    offered_load: 1.3,
                    link_bps: 1_000_000_000,
                    max_fps: 1_488_095.0,
                },
                5,
                "(or --load 50%)",
            ),
            (E::PeriodTooShort, 5, "the period must be at least 1 ns"),
        ];
        for (e, code, words) in cases {
            let f = request_sentence(&e);
            assert_eq!(f.code(), code, "{e:?}");
            assert!(f.to_string().contains(words), "{f}");
        }
    }
}
