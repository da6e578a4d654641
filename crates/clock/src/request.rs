//! Each `misura clock` subcommand as one call: its request of plain values
//! is checked into its plan ([`PlanError`]) and measured ([`MeasureError`]),
//! both as one [`ClockError`]; the binary words a refused plan with its
//! flags' names and prints the report.

use crate::error::{ClockError, MeasureError, PlanError};
use crate::interference::{InterferencePlan, InterferenceRequest};
use crate::sources::SourcesPlan;
use crate::timer::{TimerPlan, TimerRequest};
use crate::tsc::{Measured, TscPlan};
use misura_measure::time::Span;
use misura_report::clock::{InterferenceReport, SourcesReport, TimerReport};
use std::sync::atomic::AtomicUsize;

/// What `misura clock sources` asks, before it is checked.
#[derive(Debug, Clone)]
pub struct SourcesRequest {
    /// Reads per source.
    pub reads: u64,
    /// Time allowed for the whole table.
    pub budget: Span,
}

/// What `misura clock tsc` asks, before it is checked.
#[derive(Debug, Clone)]
pub struct TscRequest {
    /// The NTP server, or `None` for a run against CLOCK_MONOTONIC_RAW.
    pub ntp: Option<String>,
    /// The MONOTONIC_RAW run's length.
    pub duration: Span,
    pub windows: u32,
    /// The time between SNTP requests.
    pub interval: Span,
    /// SNTP requests.
    pub count: u64,
    /// The namespace the run is in.
    pub netns: Option<String>,
}

/// A finished `clock tsc` run and what it measured against.
pub struct TscMeasured {
    pub measured: Measured,
    /// The NTP server, or `CLOCK_MONOTONIC_RAW`.
    pub target: String,
}

/// `clock sources`: the table of every time source (progress on stderr
/// unless `quiet`).
pub fn measure_sources(
    r: &SourcesRequest,
    stop: &AtomicUsize,
    quiet: bool,
) -> Result<SourcesReport, ClockError> {
    let plan = SourcesPlan::new(r.reads, r.budget)?;
    Ok(crate::sources::measure(&plan, stop, quiet))
}

/// `clock interference`: the steps of a tight loop of reads.
pub fn measure_interference(
    r: &InterferenceRequest,
    stop: &AtomicUsize,
    quiet: bool,
) -> Result<InterferenceReport, ClockError> {
    let plan = InterferencePlan::new(r)?;
    Ok(crate::interference::measure(&plan, stop, quiet)?)
}

/// `clock timer`: the wake-ups of periodic sleeps.
pub fn measure_timer(
    r: &TimerRequest,
    stop: &AtomicUsize,
    quiet: bool,
) -> Result<TimerReport, ClockError> {
    let plan = TimerPlan::new(r.clone())?;
    Ok(crate::timer::measure(&plan, stop, quiet)?)
}

/// `clock tsc`: the TSC's frequency against MONOTONIC_RAW or an NTP
/// server.
pub fn measure_tsc(
    r: &TscRequest,
    stop: &AtomicUsize,
    quiet: bool,
) -> Result<TscMeasured, ClockError> {
    let plan = TscPlan::new(r.ntp.as_deref(), r.duration, r.windows, r.interval, r.count)
        .map_err(ClockError::Tsc)?;
    let measured = crate::tsc::measure(&plan, r.netns.clone(), stop, quiet)?;
    let target = r
        .ntp
        .clone()
        .unwrap_or_else(|| "CLOCK_MONOTONIC_RAW".into());
    Ok(TscMeasured { measured, target })
}

impl From<PlanError> for ClockError {
    fn from(e: PlanError) -> ClockError {
        ClockError::Plan(e)
    }
}

impl From<MeasureError> for ClockError {
    fn from(e: MeasureError) -> ClockError {
        ClockError::Measure(e)
    }
}
