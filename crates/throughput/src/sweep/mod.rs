//! `misura sweep`: run `tcp`, `udp` or `rr` once per value of one
//! parameter and tabulate the headline figures (seed 001's curves:
//! throughput against message size, socket buffer, streams, TCP_NODELAY).
//!
//! A sweepable knob takes a list or a range (`values`, parsed once by the
//! binary); the test's plan is built once from the first values, and each run is that plan with the
//! swept field set to one value and checked again (`series`). `run` drives
//! the runs and assembles the report; the binary parses, prints and exits.

pub mod rr;
pub mod series;
pub mod tcp;
pub mod udp;
pub mod values;

use crate::client::{self, ClientPlan};
use crate::error::{Class, Refusal, ThroughputError};
use misura_cli::exit::one_line;
use misura_cli::warnings::Warn;
use misura_report::throughput::{SweepFigures, SweepPoint, SweepReport};
use misura_report::{LoopTuning, StopReason, Warning};
pub use series::Series;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
pub use values::{OnOff, ValueList};

/// A test's sweepable flags: the plans of its runs and how one is measured.
pub trait Sweepable {
    /// The test's plan.
    type Plan;
    /// The test's name ("tcp").
    const TEST: &'static str;
    /// The base plan on the client part `client` makes of a client count,
    /// and one checked plan per swept value.
    fn plans(
        &self,
        client: impl FnOnce(u32) -> Result<ClientPlan, Refusal>,
    ) -> Result<Series<Self::Plan>, Refusal>;
    /// One run's headline figures.
    fn measure(plan: &Self::Plan, stop: &Arc<AtomicUsize>) -> crate::error::Result<SweepFigures>;
}

/// `Sweepable` for a test's sweep flags, named by the test's module.
macro_rules! sweepable {
    ($test:ident, $sweep:ident, $plan:ident) => {
        impl Sweepable for $test::$sweep {
            type Plan = crate::$test::$plan;
            const TEST: &'static str = stringify!($test);
            fn plans(
                &self,
                client: impl FnOnce(u32) -> Result<ClientPlan, Refusal>,
            ) -> Result<Series<Self::Plan>, Refusal> {
                self.series(client)
            }
            fn measure(
                plan: &Self::Plan,
                stop: &Arc<AtomicUsize>,
            ) -> crate::error::Result<SweepFigures> {
                crate::$test::measure(plan, stop).map(|r| $test::figures(&r))
            }
        }
    };
}

sweepable!(tcp, TcpSweep, TcpPlan);
sweepable!(udp, UdpSweep, UdpPlan);
sweepable!(rr, RrSweep, RrPlan);

/// What a sweep records besides its runs: the arguments every run shared
/// (as written) and the namespace it ran in.
pub struct SweepRun {
    pub base_args: Vec<String>,
    pub netns: Option<String>,
}

/// Run every point of `series` (until `stop`) and tabulate them; `progress`
/// hears each value before its run. Bad parameters or an unwritable output
/// end the sweep; any other failure of a run is that point's error, a
/// refusal's in the words `word` gives it (the binary's, with its flags).
pub fn run<K: Sweepable>(
    series: Series<K::Plan>,
    given: SweepRun,
    stop: &Arc<AtomicUsize>,
    mut progress: impl FnMut(&str),
    word: impl Fn(&Refusal) -> String,
) -> Result<SweepReport, ThroughputError> {
    let started_at = misura_cli::meta::now_rfc3339();
    let mut points = Vec::new();
    for (value, plan) in &series.points {
        if client::interrupted(stop) {
            break;
        }
        progress(value);
        points.push(SweepPoint {
            parameter: series.parameter.to_string(),
            value: value.clone(),
            figures: point(K::measure(plan, stop), &word)?,
        });
    }
    let complete = !client::interrupted(stop)
        && points.len() == series.points.len()
        && points.iter().all(|p| p.figures.complete);
    // The point a signal cut short (the last one run) is partial, not
    // failed: no warning for it.
    let cut_short = client::interrupted(stop).then(|| points.len().saturating_sub(1));
    let warnings = points
        .iter()
        .enumerate()
        .filter(|(i, _)| Some(*i) != cut_short)
        .map(|(_, p)| p)
        .filter_map(|p| {
            p.figures.error.as_ref().map(|e| {
                Warning::from(Warn::SweepPointFailed {
                    parameter: p.parameter.clone(),
                    value: p.value.clone(),
                    error: e.clone(),
                })
            })
        })
        .collect();
    Ok(SweepReport {
        meta: misura_cli::meta::meta("misura.sweep", started_at),
        complete,
        stop_reason: client::run_reason(
            stop,
            complete,
            StopReason::other("some runs did not complete"),
        ),
        host: misura_run::host::fingerprint(LoopTuning {
            netns: given.netns,
            ..Default::default()
        }),
        test: K::TEST.into(),
        parameter: series.parameter.into(),
        base_args: given.base_args,
        points,
        warnings,
    })
}

/// One point's outcome: bad flags (a plan's usage refusal, a server
/// address or key file that cannot be used) are the whole sweep's
/// problem; anything else (refused, lost, above the server's
/// limits) is this point's error, and the sweep goes on.
fn point(
    measured: crate::error::Result<SweepFigures>,
    word: &impl Fn(&Refusal) -> String,
) -> crate::error::Result<SweepFigures> {
    match measured {
        Ok(f) => Ok(f),
        Err(e @ (ThroughputError::Target(_) | ThroughputError::Key(_))) => Err(e),
        Err(ThroughputError::Refusal(r)) if r.class() == Class::Usage => {
            Err(ThroughputError::Refusal(r))
        }
        Err(ThroughputError::Refusal(r)) => Ok(SweepFigures {
            error: Some(word(&r)),
            ..Default::default()
        }),
        Err(e) => Ok(SweepFigures {
            error: Some(one_line(&e)),
            ..Default::default()
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server address or key file misura-cli refused stops the whole
    /// sweep (as its usage `Failure` did); a run's own error is its row.
    #[test]
    fn a_refused_target_or_key_stops_the_sweep_and_a_run_error_is_a_row() {
        let word = |r: &Refusal| r.to_string();
        let target = misura_cli::target::resolve(":5862", 5862).unwrap_err();
        let key = misura_cli::keys::read_key(&Some("/nonexistent/k".into())).unwrap_err();
        for stop in [ThroughputError::from(target), ThroughputError::from(key)] {
            let words = stop.to_string();
            let e = point(Err(stop), &word).expect_err("the sweep stops");
            assert_eq!(e.to_string(), words);
        }
        let lost = ThroughputError::NoReply { secs: 2 };
        let row = point(Err(lost), &word).expect("the sweep goes on");
        assert_eq!(row.error.as_deref(), Some("no reply within 2 s"));
    }
}
