//! `misura oneway` as one call: the run's request (the measurement's
//! [`Request`], the calibration profile to read, the busy threads
//! `--cpu-load` adds) taken to its report: the profile read, the load
//! checked, the per-frame log opened (and so checked writable) before
//! anything is measured, the busy threads run until the result is made.

use crate::error::{OnewayError, Result};
use crate::{measure, Calibration, Mode, Outputs, Request};
use misura_cli::warnings::Warn;
use misura_report::OnewayReport;
use misura_run::cpuload::CpuLoad;
use std::path::PathBuf;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// What a `misura oneway` run is asked, in plain values.
#[derive(Debug, Clone)]
pub struct OnewayRequest {
    /// The measurement (its `load` the engine mode's options, if any).
    pub request: Request,
    /// The calibration profile to correct the latencies with.
    pub calibration: Option<PathBuf>,
    /// Use the profile even where it does not match these ports.
    pub accept_profile_mismatch: bool,
    /// Busy threads beside the run.
    pub cpu_load: CpuLoad,
}

/// Run one `misura oneway`: its report even when interrupted (then
/// `complete` is false); a refused request is `OnewayError::Request`.
pub fn oneway(r: &OnewayRequest, stop: &Arc<AtomicUsize>) -> Result<OnewayReport> {
    let req = &r.request;
    let cal = r
        .calibration
        .as_ref()
        .map(|p| Calibration::read(p, r.accept_profile_mismatch))
        .transpose()?;
    r.cpu_load.check().map_err(OnewayError::CpuLoad)?;
    let mut outputs = Outputs::open(req)?;
    // The busy threads run until the result (and its host load) is made.
    let busy = r.cpu_load.start(req.tuning.cpu);
    let mut report = measure(req, Mode::Oneway, cal.as_ref(), &mut outputs, stop)?;
    for e in busy.iter().flat_map(|b| &b.pin_errors) {
        report
            .warnings
            .push(Warn::LoadThreadNotPinned { error: e.clone() }.into());
    }
    drop(busy);
    Ok(report)
}
