//! The result of `misura clock tsc` (format "misura.clock-tsc"): the TSC
//! frequency against CLOCK_MONOTONIC_RAW and, with `--ntp`, against an NTP
//! server by seed 003's minimum-RTT method; the TSC flags and the kernel's
//! own calibration. Schema: `schema/clock-tsc.schema.json`.

use super::run::Envelope;
use serde::{Deserialize, Serialize};

pub type TscReport = Envelope<TscConfig, TscFigures>;

/// The figures of a `TscReport`, inside its envelope.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TscFigures {
    pub tsc: TscFacts,
    /// The estimate against CLOCK_MONOTONIC_RAW (None if too little was
    /// measured, e.g. interrupted at once).
    pub raw: Option<RawEstimate>,
    /// Seed 003's method, with `--ntp`.
    pub ntp: Option<NtpReport>,
    pub elapsed_s: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TscConfig {
    /// "monotonic-raw" or "ntp".
    pub mode: String,
    /// Planned length of a monotonic-raw run (s); None with --ntp.
    pub duration_s: Option<f64>,
    pub windows: u32,
    pub server: Option<String>,
    pub interval_s: Option<f64>,
    pub count: Option<u64>,
    pub netns: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TscFacts {
    /// This build can read a TSC (x86-64).
    pub available: bool,
    pub flags: Vec<TscFlag>,
    pub clocksource: Option<String>,
    /// The kernel's calibration (Hz), where it says.
    pub kernel_calibration_hz: Option<f64>,
    /// Where the kernel's figure came from, or why there is none.
    pub kernel_calibration_source: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TscFlag {
    pub name: String,
    pub present: bool,
    pub meaning: String,
}

/// A frequency with a worst-case bound.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BoundedFrequency {
    pub frequency_hz: f64,
    pub bound_hz: f64,
    pub bound_ppm: f64,
    pub span_s: f64,
}

/// A frequency from a least-squares line.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FittedFrequency {
    pub frequency_hz: f64,
    pub ci95_hz: f64,
    pub ci95_ppm: f64,
    pub points: usize,
    pub residual_std_ns: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RawEstimate {
    /// Reads of (TSC, MONOTONIC_RAW, TSC) made.
    pub pairs_read: u64,
    /// Tightest pair of each time bin, the ones used.
    pub pairs_kept: usize,
    pub min_bracket_ns: f64,
    pub median_bracket_ns: f64,
    /// ΔTSC/ΔRAW between the first and the last kept pair.
    pub endpoints: BoundedFrequency,
    pub fit: Option<FittedFrequency>,
    pub windows: Vec<RawWindow>,
    pub stability: Option<StabilityReport>,
    /// (measured − kernel)/kernel, ppm.
    pub kernel_difference_ppm: Option<f64>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RawWindow {
    pub start_s: f64,
    pub end_s: f64,
    pub pairs: usize,
    pub frequency_hz: f64,
    pub bound_ppm: f64,
    /// (window − whole run)/whole run, ppm.
    pub deviation_ppm: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StabilityReport {
    pub windows: usize,
    pub std_dev_ppm: f64,
    pub spread_ppm: f64,
    pub max_deviation_ppm: f64,
    pub resolution_ppm: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct NtpReport {
    pub server: String,
    pub address: Option<String>,
    pub requests: u64,
    pub replies: u64,
    pub timeouts: u64,
    pub rejected: u64,
    pub stratum: Option<u8>,
    pub reference_id: Option<String>,
    pub precision_ns: Option<f64>,
    pub rtt_min_ns: Option<f64>,
    pub rtt_median_ns: Option<f64>,
    pub estimate: Option<NtpFrequency>,
    /// The MONOTONIC_RAW estimate between the same two exchanges.
    pub raw_same_period: Option<BoundedFrequency>,
    pub comparison: Option<Comparison>,
    /// Rate of CLOCK_REALTIME against CLOCK_MONOTONIC_RAW over the run (ppm):
    /// the frequency correction a time daemon applies to this host's clock.
    pub realtime_vs_raw_ppm: Option<f64>,
    pub error: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct NtpFrequency {
    pub frequency_hz: f64,
    pub bound_hz: f64,
    pub bound_ppm: f64,
    pub span_s: f64,
    pub first: ExchangeRef,
    pub last: ExchangeRef,
    /// Windows whose fastest exchange was kept.
    pub windows: usize,
    pub fit: Option<FittedFrequency>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ExchangeRef {
    pub seq: u64,
    pub rtt_ns: f64,
    /// Time of the request since the first one (s).
    pub at_s: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Comparison {
    /// (NTP − RAW)/RAW, ppm.
    pub difference_ppm: f64,
    pub combined_bound_ppm: f64,
    pub within_uncertainty: bool,
}
