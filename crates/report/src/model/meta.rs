//! What every result carries: the format and provenance (`Meta`), the
//! host it ran on, its interfaces, timestamp sources and hardware clocks.
//! Field names are the SPEC's words; all times are integer or fractional
//! nanoseconds with the unit in the name.

use super::summary::SummarySnapshot;
use serde::{Deserialize, Serialize};

pub use super::host_facts::HostFacts;

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
/// added. Fig. 6 of Li, Zhang, Xie and Yang (2006) (RTT against CPU load) is drawn from it.
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
    pub fit: Option<super::clock_fit::PairFit>,
    /// The ≈95 % uncertainty each converted hardware latency carried, over
    /// the frames (null with one clock).
    pub per_frame_u95: Option<SummarySnapshot>,
}
