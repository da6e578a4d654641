//! `misura y1564`: ITU-T Y.1564 service activation on the frame engine: per
//! service the configuration test (steps at 25/50/75/100 % of CIR, then
//! CIR+EIR, then an overshoot step) and, for all services at once, the
//! performance test, each judged pass/fail against the service's
//! thresholds.

use super::load::{EngineFacts, LoadTrial};
use super::meta::PortInfo;
use super::meta::{HostFingerprint, Meta};
use super::run::StopReason;
use super::warning::Warning;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Y1564Report {
    #[serde(flatten)]
    pub meta: Meta,
    pub complete: bool,
    pub stop_reason: StopReason,
    pub host: HostFingerprint,
    pub ports: Vec<PortInfo>,
    pub config: Y1564Config,
    pub engine: EngineFacts,
    pub services: Vec<ServiceReport>,
    pub performance: Option<PerformanceReport>,
    /// Every service passed every test that ran.
    pub pass: bool,
    /// No step failed on its own measurement, but one rests on the tester's
    /// limit: no verdict on the SUT (exit 8). False in older results.
    #[serde(default)]
    pub inconclusive: bool,
    pub elapsed_s: f64,
    pub warnings: Vec<Warning>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Y1564Config {
    pub tx: String,
    pub rx: String,
    pub netns: Option<String>,
    pub step_s: f64,
    pub performance_s: f64,
    /// How information rates are counted: Ethernet frames with FCS.
    pub rate_basis: String,
    /// Where frame delay comes from: the sender's user clock in the frame
    /// to the kernel RX stamp (an upper bound).
    pub delay_source: String,
    pub ethertype: u16,
    /// `--tester-retries`: repeats allowed for a configuration step the
    /// tester spoiled (0 in results from before the flag).
    #[serde(default)]
    pub tester_retries: u32,
}

/// A service as configured.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ServiceConfig {
    pub name: String,
    pub vlan: Option<u16>,
    pub pcp: Option<u8>,
    pub frame_bytes: usize,
    pub cir_bps: f64,
    pub eir_bps: f64,
    pub fd_ns: i64,
    pub fdv_ns: i64,
    pub flr: f64,
    pub availability: f64,
}

/// One step (or the performance test) of one service.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StepReport {
    /// "25% CIR" … "CIR+EIR", "overshoot", "performance".
    pub label: String,
    pub offered_bps: f64,
    /// Information rate received (frames with FCS, bit/s).
    pub received_bps: f64,
    pub frames_sent: u64,
    pub frames_lost: u64,
    /// Frames the tester sent back to back catching up after it was
    /// descheduled: a loss (or a green floor missed by) no more than these
    /// may be its own bursts' at a policer, and is no verdict. 0 in older
    /// results.
    #[serde(default)]
    pub catch_up_frames: u64,
    pub flr: f64,
    pub fd_mean_ns: Option<f64>,
    pub fd_max_ns: Option<i64>,
    /// p99.9 − min of the frame delay.
    pub fdv_ns: Option<i64>,
    /// The smallest frame delay, the RX stamps it rests on ("nic_hardware":
    /// the RX port's PTP clock converted to system time; "kernel_software"),
    /// how many frames it covers, and with NIC stamps the largest ≈95 %
    /// uncertainty of a conversion, ns. Absent in older results.
    #[serde(default)]
    pub fd_min_ns: Option<i64>,
    #[serde(default)]
    pub fd_source: Option<String>,
    #[serde(default)]
    pub fd_frames: Option<u64>,
    #[serde(default)]
    pub fd_u95_ns: Option<f64>,
    pub pass: bool,
    /// The tester could not send the step on any attempt: its figures are
    /// the tester's limit, neither a PASS nor a FAIL of the SUT. False in
    /// older results (where `tester_limit` says the same).
    #[serde(default)]
    pub inconclusive: bool,
    /// Why it failed, one sentence per threshold missed as measured (empty
    /// on a pass).
    pub reasons: Vec<String>,
    pub tester_limit: Option<String>,
    /// Why each earlier attempt of this step was repeated: the tester
    /// itself fell behind (`--tester-retries`). Empty when the first kept up
    /// (and in results from before it was kept).
    #[serde(default)]
    pub spoiled_attempts: Vec<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ServiceReport {
    pub service: ServiceConfig,
    pub config_test: Vec<StepReport>,
    pub config_pass: bool,
    /// No step failed on its own measurement, but one is inconclusive.
    #[serde(default)]
    pub config_inconclusive: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PerformanceReport {
    pub duration_s: f64,
    /// One row per service, in the order of `services`.
    pub services: Vec<PerformanceRow>,
    pub load: LoadTrial,
    pub pass: bool,
    /// No service failed on its own measurement, but one is inconclusive.
    #[serde(default)]
    pub inconclusive: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PerformanceRow {
    pub name: String,
    pub step: StepReport,
    /// Share of one-second intervals that were available.
    pub availability: f64,
    pub unavailable_s: u64,
}
