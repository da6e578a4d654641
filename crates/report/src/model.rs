//! The result model. Field names are the SPEC's words; all times are integer
//! or fractional nanoseconds with the unit in the name.

use misura_measure::{CalibrationLine, LinkModel, Pattern, SizeOrder, SutVerdict};
use misura_stats::{Bucket, SummarySnapshot};
use serde::{Deserialize, Serialize};

pub use misura_sys::host::HostFacts;

/// Format name, versions and provenance, common to every result file.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Meta {
    /// "misura.oneway", "misura.calibration-run" (a calibrate run) or
    /// "misura.calibration" (a profile).
    pub format: String,
    pub format_version: u32,
    pub tool: String,
    pub tool_version: String,
    /// Start of the run, CLOCK_REALTIME, RFC 3339 UTC.
    pub started_at: String,
    /// The command line that produced the result.
    pub command: Vec<String>,
}

/// The host facts that affect timing precision, as found at run time:
/// [`HostFacts`] (its fields first, at the top level of the JSON, as
/// before they were one type) and what the run adds. Reads through to the
/// facts (`h.hostname`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct HostFingerprint {
    #[serde(flatten)]
    pub facts: HostFacts,
    /// What misura itself set up for the loop.
    pub tuning: LoopTuning,
    /// The interfaces the measurement used, with the settings that move
    /// their timestamps; empty when the result uses none (or predates it).
    #[serde(default)]
    pub interfaces: Vec<InterfaceFingerprint>,
    /// The host's CPU load while the run measured; `None` (null) in
    /// results older than it.
    #[serde(default)]
    pub load: Option<HostLoad>,
}

impl std::ops::Deref for HostFingerprint {
    type Target = HostFacts;
    fn deref(&self) -> &HostFacts {
        &self.facts
    }
}

impl std::ops::DerefMut for HostFingerprint {
    fn deref_mut(&mut self) -> &mut HostFacts {
        &mut self.facts
    }
}

/// The host's CPU load from the start of a run to its result: what the
/// CPUs did meanwhile (everything on the host), and what the run itself
/// added. Seed 003's Fig. 6 (RTT against CPU load) is drawn from it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HostLoad {
    /// Length of the window, seconds.
    pub window_s: f64,
    /// Each CPU's busy share over the window, 0–1 (`/proc/stat`: user,
    /// nice, system, irq, softirq and steal time over all time).
    pub cpu_busy: Vec<CpuBusy>,
    /// The mean of `cpu_busy`.
    pub mean_busy: f64,
    /// misura's own CPU time over the window (all its threads, busy
    /// threads included), in CPUs: 1.0 is one CPU all the time.
    pub process_cpus: f64,
    /// Busy threads the run added (`--cpu-load N`), and the CPUs they
    /// were pinned to.
    pub busy_threads: u32,
    pub busy_thread_cpus: Vec<usize>,
}

/// One CPU's busy share.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuBusy {
    pub cpu: usize,
    pub busy: f64,
}

/// One measured interface's settings that move timestamps. `None` where the
/// driver does not report the setting (veth has no coalescing or EEE).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InterfaceFingerprint {
    pub name: String,
    pub driver: Option<String>,
    pub speed_mbps: Option<u64>,
    pub duplex: Option<String>,
    /// Interrupt coalescing (`ethtool -c`).
    pub rx_usecs: Option<u32>,
    pub rx_frames: Option<u32>,
    pub adaptive_rx: Option<bool>,
    pub tx_usecs: Option<u32>,
    pub tx_frames: Option<u32>,
    pub adaptive_tx: Option<bool>,
    /// Energy-Efficient Ethernet enabled.
    pub eee: Option<bool>,
    /// Offloads that merge or split frames.
    pub gro: Option<bool>,
    pub lro: Option<bool>,
    pub gso: Option<bool>,
    pub tso: Option<bool>,
    /// `ETHTOOL_GET_TS_INFO` capabilities, in ethtool's words.
    pub timestamping_caps: Vec<String>,
    pub rx_filters: Vec<String>,
    pub phc_index: Option<i32>,
}

/// How the measuring loop ran.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct LoopTuning {
    pub netns: Option<String>,
    pub cpu: Option<usize>,
    pub rt_priority: Option<i32>,
    pub memory_locked: bool,
    /// Whether the loop busy-polled its socket (`--busy-poll`) instead of
    /// sleeping until a packet came: lower and steadier user-level
    /// figures, one CPU at 100 %. `None` (null): it slept.
    #[serde(default)]
    pub busy_poll: Option<BusyPoll>,
}

/// The busy-polling a loop did (`--busy-poll`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct BusyPoll {
    /// `SO_BUSY_POLL` in µs when the kernel took it (the driver's queue is
    /// polled from the socket: only NAPI drivers take part, veth does not).
    pub so_busy_poll_us: Option<u32>,
    /// Why `SO_BUSY_POLL` was not set, when it was not.
    pub so_busy_poll_error: Option<String>,
}

/// One port of the tester.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PortInfo {
    /// "tx" or "rx".
    pub role: String,
    pub name: String,
    pub mac: String,
    pub driver: Option<String>,
    pub mtu: u32,
    pub speed_mbps: Option<u64>,
    /// Capabilities the driver reports (ETHTOOL_GET_TS_INFO), in ethtool's words.
    pub timestamping_caps: Vec<String>,
    pub phc_index: Option<i32>,
}

/// Which timestamps were asked for and which were obtained.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TimestampInfo {
    /// The single timescale of every timestamp in the result.
    pub timescale: String,
    /// The clock misura reads for the TX and RX windows.
    pub user_clock: String,
    pub kernel_software_tx: bool,
    pub kernel_software_rx: bool,
    pub hardware_tx: bool,
    pub hardware_rx: bool,
    /// Why hardware stamps are absent, when they are.
    pub hardware_note: Option<String>,
    /// Frames sent after enabling timestamping and before measuring.
    pub warmup_frames: u64,
    pub warmup_unstamped_rx: u64,
    pub warmup_unstamped_tx: u64,
    /// Best source per frame, in order of preference, that the run used.
    pub sources_used: Vec<String>,
    /// The NIC clocks the hardware stamps came from and how they were
    /// related; null without hardware stamps (and in results written
    /// before it existed).
    #[serde(default)]
    pub hardware_clocks: Option<HardwareClocks>,
}

/// The PTP hardware clocks behind a run's hardware stamps.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct HardwareClocks {
    /// `/dev/ptpN` of the TX port's and of the RX port's clock.
    pub tx_phc: Option<String>,
    pub rx_phc: Option<String>,
    /// "one clock" (both ports share a PHC: no conversion), or "two clocks,
    /// related through system time" (RX stamps converted to the TX clock by
    /// the fit below).
    pub relation: String,
    /// How each clock was cross-timestamped against CLOCK_REALTIME
    /// (`PTP_SYS_OFFSET_PRECISE`, `_EXTENDED`, `PTP_SYS_OFFSET`, or a
    /// `clock_gettime` sandwich), TX first.
    pub methods: Vec<String>,
    /// ptp4l or phc2sys processes running during the run: the clocks may be
    /// steered; they are measured all the same.
    pub disciplined_by: Vec<String>,
    /// Rounds of cross-timestamps taken (before, during and after the run).
    pub rounds: u64,
    /// Cross-timestamp reads that failed, and the last error.
    pub read_errors: u64,
    pub last_error: Option<String>,
    /// The two clocks' fit; null with one clock or when it failed.
    pub fit: Option<misura_measure::phc_track::PairFit>,
    /// The ≈95 % uncertainty each converted hardware latency carried, over
    /// the frames (null with one clock).
    pub per_frame_u95: Option<SummarySnapshot>,
}

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
    pub stop_reason: String,
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
    pub load: Option<crate::load::OnewayLoad>,
    pub warnings: Vec<crate::Warning>,
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
