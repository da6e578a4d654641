//! The result of `misura rtt`.

use super::run::Envelope;
use super::schedule::Pattern;
use super::summary::{Bucket, SummarySnapshot};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The run's configuration after resolution.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RttConfig {
    /// "stamp-udp" or "l2-probe".
    pub transport: String,
    pub target: String,
    pub local: String,
    pub interface: Option<String>,
    /// How l2-probe frames travelled: "misura" or "ptp" (after a PTPv2
    /// Sync header); None for stamp-udp and in older results.
    #[serde(default)]
    pub frame_format: Option<String>,
    pub netns: Option<String>,
    pub authenticated: bool,
    pub pattern: Pattern,
    pub period_ns: i64,
    pub count: Option<u64>,
    pub duration_s: Option<f64>,
    pub request_sizes: Vec<usize>,
    pub response_size: Option<usize>,
    pub timeout_ns: i64,
    pub threshold_ns: Option<i64>,
    pub link_rate_bps: Option<u64>,
    /// "interface", "--link-speed", or "unknown".
    pub link_speed_source: String,
    pub ssid: u16,
    pub seed: u64,
}

/// Where each of the four instants came from.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RttTimestamps {
    pub timescale: String,
    /// Client TX / RX: "NIC hardware", "kernel software" or "user clock".
    pub client_tx: String,
    pub client_rx: String,
    /// As the reflector's Timestamp Information TLVs named them, if it sent
    /// any: each method its replies stated, the most frequent first, joined
    /// by " and " ("NIC hardware and software" when its NIC stamped some
    /// requests and not others). TX: how the TX stamps used were taken (the
    /// follow-up's for a precise one).
    pub reflector_rx: Option<String>,
    pub reflector_tx: Option<String>,
    /// Received probes by the reflector's RX timestamp method, as each
    /// reply stated it (`{"NIC hardware": 44, "software": 156}`); empty when
    /// no reply did.
    #[serde(default)]
    pub reflector_rx_methods: BTreeMap<String, u64>,
    /// Received probes by how the reflector's TX stamp the client used was
    /// taken, as for `reflector_rx_methods`.
    #[serde(default)]
    pub reflector_tx_methods: BTreeMap<String, u64>,
    pub reflector_sync: Option<String>,
    /// The reflector filled Follow-Up Telemetry (precise two-step TX stamps).
    pub reflector_two_step: bool,
    pub warmup_probes: u64,
    pub warmup_unstamped: u64,
    /// The interface the client's datagrams leave by, when known.
    #[serde(default)]
    pub client_interface: Option<String>,
    /// Its PTP hardware clock (`/dev/ptpN`) when the NIC stamped the
    /// client's datagrams; hardware stamps are on that clock's timescale.
    #[serde(default)]
    pub client_phc: Option<String>,
    /// Why the NIC's stamps were not used, when they were not.
    #[serde(default)]
    pub hardware_note: Option<String>,
}

/// The clock offset of the reflector against the client, as used for the
/// one-way delays.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OffsetReport {
    /// "estimated from minimum-RTT probes" or "synchronised clocks (both PTP)".
    pub method: String,
    pub offset_ns: f64,
    pub uncertainty_ns: f64,
    pub skew_ppm: Option<f64>,
    pub windows: usize,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RttTotals {
    pub sent: u64,
    pub received: u64,
    pub lost: u64,
    pub duplicates: u64,
    pub late: u64,
    pub reordered: u64,
    pub unknown: u64,
    /// Replies that did not parse, or failed authentication.
    pub malformed_replies: u64,
    pub auth_failed: u64,
    pub follow_ups: u64,
    pub tx_stamp_missing: u64,
    pub rx_stamp_missing: u64,
    pub icmp_errors: u64,
    /// With the NIC's stamps on: received probes without its TX stamp,
    /// and without its RX stamp (0 when hardware stamps were not used).
    #[serde(default)]
    pub hw_tx_stamp_missing: u64,
    #[serde(default)]
    pub hw_rx_stamp_missing: u64,
    /// Received probes whose RTT came from the NIC's stamps, the kernel's,
    /// or the user clock only (`hw_stamped` of the per-probe log tells the first apart).
    #[serde(default)]
    pub stamped_hardware: u64,
    #[serde(default)]
    pub stamped_kernel: u64,
    #[serde(default)]
    pub stamped_user: u64,
}

/// The RTT quantities of one group of probes.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RttLatencies {
    /// What ping sees: RX2 − TX1.
    pub user_rtt: SummarySnapshot,
    /// Kernel RX stamp − kernel TX stamp (software stamps).
    pub kernel_rtt: Option<SummarySnapshot>,
    /// NIC RX stamp − NIC TX stamp (one PTP hardware clock); null without
    /// hardware stamps (and in results from before they were taken).
    #[serde(default)]
    pub hardware_rtt: Option<SummarySnapshot>,
    /// The reflector's turnaround t3 − t2.
    pub turnaround: Option<SummarySnapshot>,
    /// Hardware RTT (else kernel RTT) − turnaround, per probe.
    pub network_rtt: Option<SummarySnapshot>,
    /// One-way delays with the offset estimate.
    pub forward: Option<SummarySnapshot>,
    pub backward: Option<SummarySnapshot>,
    /// RFC 3550 interarrival jitter of the network path, ns.
    pub jitter_rfc3550_ns: Option<f64>,
    /// RFC 3393 IP delay variation of consecutive network RTTs.
    pub ipdv: Option<SummarySnapshot>,
}

/// Ideal RTT of the link and each figure's error against it (seed 003 Table 2).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct IdealRtt {
    /// Wire time of the request frame plus that of the reply frame.
    pub physical_ns: f64,
    /// Seed 003's convention, 4 · P · 8 / R.
    pub seed_convention_ns: f64,
    /// (median − physical ideal) / physical ideal, percent.
    pub user_error_percent: Option<f64>,
    pub kernel_error_percent: Option<f64>,
    pub network_error_percent: Option<f64>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RttSizeResult {
    pub request_bytes: usize,
    pub response_bytes: usize,
    pub sent: u64,
    pub received: u64,
    pub lost: u64,
    pub latency: RttLatencies,
    pub ideal: Option<IdealRtt>,
    pub histogram_network_rtt: Vec<Bucket>,
    pub histogram_user_rtt: Vec<Bucket>,
    /// The full-resolution HDR histograms (every recorded bucket, exact
    /// below 2048 ns, 0.1 % wide above), for percentile plots and CDFs.
    /// Empty in results written before they were stored.
    #[serde(default)]
    pub hdr_network_rtt: Vec<Bucket>,
    #[serde(default)]
    pub hdr_user_rtt: Vec<Bucket>,
    #[serde(default)]
    pub hdr_kernel_rtt: Vec<Bucket>,
}

/// The result of `misura rtt`.
pub type RttReport = Envelope<RttConfig, RttFigures>;

/// The figures of a `RttReport`, inside its envelope.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RttFigures {
    pub timestamps: RttTimestamps,
    pub clock_offset: Option<OffsetReport>,
    pub totals: RttTotals,
    pub per_size: Vec<RttSizeResult>,
    pub overall: RttLatencies,
    pub elapsed_s: f64,
    pub frames_file: Option<String>,
}
