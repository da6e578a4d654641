//! The result of `misura oneway` (and the calibration profile it writes).

use super::calibration::{CalibrationLine, SutVerdict};
use super::meta::{HostFingerprint, Meta, PortInfo, TimestampInfo};
use super::run::StopReason;
use super::schedule::{LinkModel, Pattern, SizeOrder};
use super::summary::{Bucket, SummarySnapshot};
use super::warning::Warning;
use serde::{Deserialize, Serialize};

/// The run's configuration after resolving defaults against the interfaces.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OnewayConfig {
    pub tx: String,
    pub rx: String,
    pub netns: Option<String>,
    pub ethertype: u16,
    pub session_id: u32,
    pub pattern: Pattern,
    pub period_ns: i64,
    pub rate_fps: f64,
    /// Offered load Γ as a share of link capacity.
    pub offered_load: f64,
    pub count: Option<u64>,
    pub duration_s: Option<f64>,
    pub sizes: Vec<usize>,
    pub order: SizeOrder,
    pub timeout_ns: i64,
    pub late_tolerance_ns: i64,
    pub threshold_ns: Option<i64>,
    pub link: LinkModel,
    /// "interface" (read from the RX port) or "--link-speed".
    pub link_speed_source: String,
    pub warmup: u64,
    pub seed: u64,
    /// How the probes travelled: "misura" (the probe as the Ethernet
    /// payload) or "ptp" (after a PTPv2 Sync header, EtherType 0x88F7, for
    /// NICs that stamp only PTP). Null in results written before it existed.
    #[serde(default)]
    pub frame_format: Option<String>,
}

/// Frame accounting for the whole run.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Totals {
    pub sent: u64,
    pub received: u64,
    pub lost: u64,
    pub duplicates: u64,
    /// Arrived after their record was closed by the timeout.
    pub late: u64,
    pub reordered: u64,
    /// Frames on the RX port that were not this session's probes.
    pub foreign_frames: u64,
    /// Frames with our ethertype whose probe header did not parse.
    pub malformed_frames: u64,
    /// Frames moved to the next period by the postponement rule.
    pub postponed: u64,
    pub skipped_slots: u64,
    /// `send()` calls that found the queue full and were retried.
    pub send_retries: u64,
    /// Received frames without a kernel TX stamp / RX stamp (after warm-up).
    pub tx_stamp_missing: u64,
    pub rx_stamp_missing: u64,
    /// Further TX stamps of frames already stamped: another device inside
    /// this host transmitted the same buffer again (e.g. a veth of a software
    /// SUT). The first stamp is used.
    pub tx_stamps_again: u64,
    /// Times the loop waited because the in-flight ring or the analysis
    /// queue was full.
    pub stalls: u64,
    /// Received frames without a NIC hardware TX or RX stamp, when hardware
    /// stamps were granted on both ports (a driver that claims them but
    /// delivers none counts every frame here).
    #[serde(default)]
    pub hw_stamp_missing: u64,
    /// Received frames whose kernel RX stamp precedes the return of their
    /// `send()`: they crossed the path inside `send()` (veth, a software
    /// SUT), where the user windows cannot place them.
    #[serde(default)]
    pub rx_inside_send: u64,
}

/// The latency quantities of one group of frames.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Latencies {
    /// Mean user latency (Bul + Wul) / 2.
    pub mul: SummarySnapshot,
    /// Best-case user latency RX1 − TX2.
    pub bul: SummarySnapshot,
    /// Worst-case user latency RX2 − TX1.
    pub wul: SummarySnapshot,
    /// Kernel software RX − kernel software TX.
    pub kernel: Option<SummarySnapshot>,
    /// NIC hardware RX − TX.
    pub hardware: Option<SummarySnapshot>,
    /// Internal latency Mil = Mul − C (calibration runs).
    pub mil: Option<SummarySnapshot>,
    /// Kernel internal latency = kernel − C (calibration runs).
    pub kernel_internal: Option<SummarySnapshot>,
    /// SUT latency Msl = Mul − Amil(P) − C (runs with a calibration).
    pub msl: Option<SummarySnapshot>,
    /// Kernel-timestamp SUT latency.
    pub kernel_sut: Option<SummarySnapshot>,
    /// Hardware internal latency = hardware − C (calibration runs).
    #[serde(default)]
    pub hardware_internal: Option<SummarySnapshot>,
    /// Hardware-stamp SUT latency.
    #[serde(default)]
    pub hardware_sut: Option<SummarySnapshot>,
}

/// Results for one payload size.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SizeResult {
    pub payload_bytes: usize,
    pub frame_bytes: usize,
    pub wire_time_ns: f64,
    pub sent: u64,
    pub received: u64,
    pub lost: u64,
    pub latency: Latencies,
    /// Log-spaced histogram of Mul.
    pub histogram_mul: Vec<Bucket>,
    /// Log-spaced histogram of the kernel latency.
    pub histogram_kernel: Vec<Bucket>,
    /// The full-resolution HDR histograms of Mul and of the kernel latency
    /// (every recorded bucket, exact below 2048 ns, 0.1 % wide above), for
    /// percentile plots and CDFs. Empty in results written before they were
    /// stored.
    #[serde(default)]
    pub hdr_mul: Vec<Bucket>,
    #[serde(default)]
    pub hdr_kernel: Vec<Bucket>,
}

/// The tester's calibration fitted by a calibrate run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct InternalFit {
    /// Amil(P) = α + β·P from the user windows.
    pub user: CalibrationLine,
    /// The same from the kernel software stamps.
    pub kernel: Option<CalibrationLine>,
    /// The same from the NIC hardware stamps.
    #[serde(default)]
    pub hardware: Option<CalibrationLine>,
}

/// The calibration a measurement used.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CalibrationUse {
    pub profile: String,
    pub created_at: String,
    pub user: CalibrationLine,
    pub kernel: Option<CalibrationLine>,
    #[serde(default)]
    pub hardware: Option<CalibrationLine>,
    /// Ways in which the profile's set-up differs from this run's.
    pub mismatches: Vec<String>,
}

/// The SUT's latency model fitted over frame length.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SutResult {
    /// The link's byte time 8/R, what a store-and-forward slope equals.
    pub byte_time_ns: f64,
    pub user: Option<CalibrationLine>,
    pub user_verdict: Option<SutVerdict>,
    pub kernel: Option<CalibrationLine>,
    pub kernel_verdict: Option<SutVerdict>,
    /// The same from the NIC hardware stamps.
    #[serde(default)]
    pub hardware: Option<CalibrationLine>,
    #[serde(default)]
    pub hardware_verdict: Option<SutVerdict>,
    /// Why a fit is missing, when it is.
    pub note: Option<String>,
    /// Whether the estimates (user windows, kernel stamps, NIC stamps)
    /// agree, and which one the headline verdict rests on. Null in results
    /// written before it existed, and when no fit could be made.
    #[serde(default)]
    pub consistency: Option<SutConsistency>,
}

/// Where an estimate of the SUT's latency comes from.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SutSource {
    /// The user windows: `Msl = Mul − Amil(P) − C`.
    User,
    /// The kernel's software stamps.
    Kernel,
    /// The NICs' hardware stamps.
    Hardware,
}

impl SutSource {
    /// The words the text uses: "user windows", "kernel stamps", …
    pub fn words(self) -> &'static str {
        match self {
            SutSource::User => "user windows",
            SutSource::Kernel => "kernel stamps",
            SutSource::Hardware => "NIC hardware stamps",
        }
    }
}

/// Do two estimates agree: "consistent" (every pair's 95 % intervals
/// overlap), "inconsistent" (some pair's do not), or "single" (one
/// estimate, nothing to compare).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SutAgreement {
    Consistent,
    Inconsistent,
    Single,
}

/// One figure of one estimate with its 95 % interval `value ± ci95`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SutEstimate {
    pub source: SutSource,
    pub value: f64,
    /// The SUT fit's own interval and the calibration line's (at the same
    /// point), added in quadrature.
    pub ci95: f64,
    /// The calibration line's part of it.
    pub calibration_ci95: f64,
}

/// Two estimates of one quantity whose 95 % intervals do not overlap.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SutDisagreement {
    /// "alpha_ns" (the fit's intercept α', the latency at L = 0) or
    /// "beta_ns_per_byte" (its slope β', which the verdict reads).
    pub quantity: String,
    pub first: SutEstimate,
    pub second: SutEstimate,
    /// The distance between the two intervals' nearest ends (> 0).
    pub gap: f64,
}

/// A reason, found in this run, why the estimates can differ.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SutCause {
    /// Stable identifier (e.g. `received-inside-send`).
    pub code: String,
    pub text: String,
}

/// The SUT's estimates compared, and the one the verdict rests on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SutConsistency {
    pub agreement: SutAgreement,
    /// The estimate the headline verdict rests on: the timestamps nearest
    /// the wire the run has (hardware, then kernel, then user windows).
    pub rests_on: SutSource,
    /// That estimate's verdict.
    pub verdict: SutVerdict,
    /// That estimate's SUT latency at L = 0 (α'), with its 95 % interval.
    pub latency: SutEstimate,
    /// Pairs of estimates whose 95 % intervals do not overlap.
    pub disagreements: Vec<SutDisagreement>,
    /// What this run shows about why they can differ (empty when they agree
    /// or nothing was found).
    pub causes: Vec<SutCause>,
}

/// How fast the loop ran.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct LoopStats {
    pub elapsed_s: f64,
    pub achieved_rate_fps: f64,
    /// TX2 − TX1 summary: the cost of one `send()`.
    pub tx_window: Option<SummarySnapshot>,
    /// RX2 − RX1 summary: the polling granularity seen by received frames.
    pub rx_window: Option<SummarySnapshot>,
}

/// The result of `misura oneway` and `misura calibrate`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OnewayReport {
    #[serde(flatten)]
    pub meta: Meta,
    /// "oneway" or "calibrate".
    pub mode: String,
    /// False when the run was interrupted or ended by an error: figures cover
    /// the frames measured until then.
    pub complete: bool,
    pub stop_reason: StopReason,
    pub host: HostFingerprint,
    pub ports: Vec<PortInfo>,
    pub timestamps: TimestampInfo,
    pub config: OnewayConfig,
    pub totals: Totals,
    pub loop_stats: LoopStats,
    pub overall: Latencies,
    pub per_size: Vec<SizeResult>,
    pub internal_fit: Option<InternalFit>,
    pub calibration: Option<CalibrationUse>,
    pub sut: Option<SutResult>,
    /// Per-frame CSV file written alongside, if any.
    pub frames_file: Option<String>,
    /// The frame engine's load stream (engine mode); null for the loop.
    /// Results written before it existed read as null.
    #[serde(default)]
    pub load: Option<super::load::OnewayLoad>,
    pub warnings: Vec<Warning>,
}

/// A saved calibration of one tester set-up (`misura calibrate`), applied by
/// `misura oneway --calibration FILE`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CalibrationProfile {
    #[serde(flatten)]
    pub meta: Meta,
    pub host: HostFingerprint,
    pub ports: Vec<PortInfo>,
    pub netns: Option<String>,
    pub ethertype: u16,
    pub link: LinkModel,
    pub pattern: Pattern,
    pub rate_fps: f64,
    pub offered_load: f64,
    pub sizes: Vec<usize>,
    pub timestamps: TimestampInfo,
    /// Amil(P) from the user windows.
    pub user: CalibrationLine,
    /// Amil(P) from the kernel software stamps, when every frame had them.
    pub kernel: Option<CalibrationLine>,
    /// Amil(P) from the NIC hardware stamps, when every frame had them.
    #[serde(default)]
    pub hardware: Option<CalibrationLine>,
}

impl CalibrationProfile {
    /// Differences between the set-up this profile was made on and a run's,
    /// each as a sentence. An empty list means the profile applies.
    pub fn mismatches(
        &self,
        host: &HostFingerprint,
        ports: &[PortInfo],
        ethertype: u16,
        link: &LinkModel,
    ) -> Vec<String> {
        let mut out = Vec::new();
        if self.host.hostname != host.hostname {
            out.push(format!(
                "profile made on host {:?}, this run is on {:?}",
                self.host.hostname.as_deref().unwrap_or("?"),
                host.hostname.as_deref().unwrap_or("?")
            ));
        }
        if self.host.kernel_release != host.kernel_release {
            out.push(format!(
                "profile made with kernel {}, this run uses {}",
                self.host.kernel_release.as_deref().unwrap_or("?"),
                host.kernel_release.as_deref().unwrap_or("?")
            ));
        }
        for role in ["tx", "rx"] {
            let a = self.ports.iter().find(|p| p.role == role);
            let b = ports.iter().find(|p| p.role == role);
            if let (Some(a), Some(b)) = (a, b) {
                if a.name != b.name || a.driver != b.driver {
                    out.push(format!(
                        "{role} port: profile has {} ({}), this run uses {} ({})",
                        a.name,
                        a.driver.as_deref().unwrap_or("?"),
                        b.name,
                        b.driver.as_deref().unwrap_or("?")
                    ));
                }
            }
        }
        if self.ethertype != ethertype {
            out.push(format!(
                "profile used ethertype {:#06x}, this run uses {:#06x}",
                self.ethertype, ethertype
            ));
        }
        if self.link != *link {
            out.push(format!(
                "profile assumed a {} b/s link, this run {} b/s",
                self.link.rate_bps, link.rate_bps
            ));
        }
        out
    }
}
