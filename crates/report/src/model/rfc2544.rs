//! `misura rfc2544`: the four RFC 2544 tests per frame size (throughput by
//! an NDR/PDR search, latency at the throughput rate as RFC 8219 asks,
//! frame loss rate, back-to-back with RFC 9004's buffer time), every trial
//! listed with its offered and achieved rates and the tester's own limits.

use super::load::{EngineFacts, LoadTrial};
use super::meta::{HardwareClocks, PortInfo};
use super::meta::{HostFingerprint, Meta};
use super::run::StopReason;
use super::summary::SummarySnapshot;
use super::warning::Warning;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Rfc2544Report {
    #[serde(flatten)]
    pub meta: Meta,
    pub complete: bool,
    pub stop_reason: StopReason,
    pub host: HostFingerprint,
    pub ports: Vec<PortInfo>,
    pub config: Rfc2544Config,
    pub engine: EngineFacts,
    pub sizes: Vec<SizeReport>,
    pub elapsed_s: f64,
    pub warnings: Vec<Warning>,
    /// Why the result is inconclusive: one sentence per figure that rests
    /// on the tester's own limit (after `--tester-retries`) rather than on
    /// the SUT. Empty when every figure is the SUT's (and in results from
    /// before it was kept: see [`rests_on_tester`] for those).
    #[serde(default)]
    pub inconclusive: Vec<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Rfc2544Config {
    pub tx: String,
    pub rx: String,
    pub netns: Option<String>,
    pub link_rate_bps: u64,
    /// "--link-speed" or "interface".
    pub link_speed_source: String,
    pub tests: Vec<String>,
    pub trial_s: f64,
    pub short_trial_s: f64,
    pub resolution: f64,
    pub pdr_ratio: f64,
    pub latency_trial_s: f64,
    pub b2b_trials: u32,
    pub b2b_max_burst_s: f64,
    /// `--tester-retries`: repeats allowed for a burst the tester spoiled
    /// (0 in results from before the flag).
    #[serde(default)]
    pub tester_retries: u32,
    pub ethertype: u16,
    /// Calibration profile used for the SUT latency, if any.
    pub calibration: Option<String>,
}

/// One frame size (or IMIX).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SizeReport {
    /// "64" … "1518", or "imix".
    pub label: String,
    /// Ethernet frame sizes on the wire, FCS included (several for IMIX).
    pub frame_bytes: Vec<usize>,
    /// The link's maximum frame rate for this size (preamble and gap counted).
    pub line_rate_fps: f64,
    /// Highest rate the tester itself reached, when below the line rate.
    pub tester_max_fps: Option<f64>,
    pub throughput: Option<ThroughputResult>,
    pub latency: Option<LatencyResult>,
    pub frame_loss: Option<Vec<TrialRow>>,
    pub back_to_back: Option<BackToBack>,
}

/// One trial as listed in the result.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TrialRow {
    /// "short", "final", "loss 90%", "burst" …
    pub phase: String,
    /// 1, or the repeat of a burst the tester spoiled in the rows before
    /// (`--tester-retries`). Results from before it was kept read as 1.
    #[serde(default = "first_attempt")]
    pub attempt: u32,
    pub offered_fps: f64,
    pub achieved_fps: f64,
    pub sent: u64,
    pub received: u64,
    pub loss_ratio: f64,
    pub duration_s: f64,
    pub tester_limit: Option<String>,
    /// Frames the tester sent back to back catching up after it was
    /// descheduled (a trial it fell short in is charged to the SUT only for
    /// loss beyond these). 0 in older results.
    #[serde(default)]
    pub catch_up_frames: u64,
}

fn first_attempt() -> u32 {
    1
}

/// A rate bracketed by the search: `lower` passed, `upper` failed.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RateBound {
    pub found: bool,
    pub lower_fps: f64,
    pub upper_fps: f64,
    /// lower as a share of the line rate.
    pub lower_load: f64,
    /// lower in bit/s of frames (FCS included, preamble and gap not).
    pub lower_bps: f64,
    /// No trial showed the SUT losing above `lower`: the search stopped at
    /// what the tester itself could send, so `lower` is the tester's limit
    /// and the SUT's rate is unknown (inconclusive). False in results from
    /// before it was kept.
    #[serde(default)]
    pub tester_limited: bool,
    /// The trial that set `lower_fps` (its achieved rate, no more loss
    /// than the goal's), so a reader can check the bound. Absent when no
    /// trial set it, and in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lower_trial: Option<TrialRow>,
    /// The trial that set `upper_fps` (its achieved rate, more loss than
    /// the goal allows, whatever the tester's shortfall).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upper_trial: Option<TrialRow>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ThroughputResult {
    /// No drop rate: the highest rate without loss.
    pub ndr: RateBound,
    /// Partial drop rate: the highest rate with loss at most `pdr_ratio`.
    pub pdr: RateBound,
    pub pdr_ratio: f64,
    pub stopped_by: String,
    pub trials: Vec<TrialRow>,
    pub elapsed_s: f64,
}

/// RFC 2544 §26.2 at the throughput rate, reported as RFC 8219 asks.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LatencyResult {
    pub rate_fps: f64,
    /// Tagged (latency-stream) frames measured.
    pub tagged_frames: u64,
    /// Which figure min/median/p99.9 are taken from: "hardware" (NIC TX and
    /// RX stamps), "kernel" (kernel TX and RX stamps) or "user" (the mean
    /// user latency Mul).
    pub source: String,
    pub min_ns: Option<i64>,
    pub median_ns: Option<i64>,
    pub p999_ns: Option<i64>,
    /// Packet delay variation: p99.9 − min (RFC 8219 §7.3.1).
    pub pdv_ns: Option<i64>,
    pub mul: SummarySnapshot,
    pub kernel: Option<SummarySnapshot>,
    /// SUT latency Msl = Mul − Amil(P) − C, with a calibration.
    pub msl: Option<SummarySnapshot>,
    /// NIC hardware RX − TX, and the SUT latency from it (with a
    /// calibration that has a hardware line).
    #[serde(default)]
    pub hardware: Option<SummarySnapshot>,
    #[serde(default)]
    pub hardware_sut: Option<SummarySnapshot>,
    /// Largest ≈95 % uncertainty of a hardware latency (the two ports'
    /// clocks related through system time), ns.
    #[serde(default)]
    pub hardware_u95_ns: Option<i64>,
    /// The NIC clocks behind the hardware figures.
    #[serde(default)]
    pub hardware_clocks: Option<HardwareClocks>,
    pub load: LoadTrial,
}

/// RFC 2544 §26.4 with RFC 9004's buffer time.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BackToBack {
    /// Rate of the bursts: the line rate, or what the tester reached.
    pub burst_fps: f64,
    pub trials: u32,
    pub mean_frames: f64,
    pub min_frames: u64,
    pub max_frames: u64,
    /// Mean back-to-back frames / burst rate (RFC 9004 §3 implied time).
    pub implied_buffer_s: f64,
    /// RFC 9004's corrected buffer time, from the measured throughput.
    pub corrected_buffer_s: Option<f64>,
    pub throughput_fps: Option<f64>,
    pub tester_limit: Option<String>,
    /// A burst the tester could not send at the burst rate, on every
    /// attempt: the burst length is the tester's, not the SUT's
    /// (inconclusive). False in results from before it was kept.
    #[serde(default)]
    pub tester_limited: bool,
    pub bursts: Vec<TrialRow>,
}

/// Whether a throughput bound rests on the tester's limit: said so by the
/// result, or (results from before `tester_limited` was kept) a search
/// stopped by the tester's limit with no failed trial above the bound.
pub fn rests_on_tester(t: &ThroughputResult, b: &RateBound, line_fps: f64) -> bool {
    b.tester_limited || (t.stopped_by == "tester_limit" && b.upper_fps >= line_fps * (1.0 - 1e-9))
}

/// Whether a stored result is inconclusive: its reasons, or an older
/// result's search stopped by the tester's limit.
pub fn is_inconclusive(r: &Rfc2544Report) -> bool {
    !r.inconclusive.is_empty()
        || r.sizes.iter().any(|s| {
            s.throughput
                .as_ref()
                .is_some_and(|t| rests_on_tester(t, &t.ndr, s.line_rate_fps))
        })
}

/// Each row with whether it was run again: the next row is a later attempt
/// at the same trial, which the tester spoiled (`--tester-retries`).
pub fn with_repeats(rows: &[TrialRow]) -> impl Iterator<Item = (&TrialRow, bool)> {
    let next = rows.iter().skip(1).map(Some).chain([None]);
    rows.iter()
        .zip(next)
        .map(|(r, n)| (r, n.is_some_and(|n| n.attempt > r.attempt)))
}

/// The rows that stand: each trial's last attempt.
pub fn standing(rows: &[TrialRow]) -> impl Iterator<Item = &TrialRow> {
    with_repeats(rows)
        .filter(|&(_, again)| !again)
        .map(|(r, _)| r)
}
