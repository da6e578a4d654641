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
    /// Which of the reflector's stamps the received replies carried; None
    /// in results written before they were counted.
    #[serde(default)]
    pub reflector_stamps: Option<ReflectorStamps>,
}

/// Which of the reflector's stamps came back, counted over the received
/// replies: a STAMP reflector puts its receive (t2) and send (t3) stamps,
/// on its wall clock, in every reply; an irtt server the ones it granted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReflectorStamps {
    /// Replies with the reflector's receive stamp t2.
    pub receive: u64,
    /// Replies with its send stamp t3.
    pub send: u64,
    /// Replies with one midpoint stamp in place of both (irtt's
    /// `--tstamp=midpoint`): no turnaround, half of it in each direction.
    pub midpoint: u64,
    /// Replies with a stamp on the reflector's wall clock (the one-way
    /// delays need it; a monotonic clock gives differences only).
    pub wall_clock: u64,
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
    /// What an irtt server's session adds (`misura rtt --peer irtt`);
    /// None for a STAMP reflector.
    #[serde(default)]
    pub irtt: Option<IrttSession>,
}

/// irtt's parameters, as asked for and as granted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IrttParams {
    pub duration_ns: i64,
    pub interval_ns: i64,
    /// irtt's packet length (its header included; 0: the header only).
    pub length: i64,
    pub received_stats: String,
    pub stamp_at: String,
    pub clock: String,
    pub dscp: i64,
    pub server_fill: String,
}

/// How many replies carried each of an irtt server's stamps (non-zero), per clock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IrttStamps {
    pub receive_wall: u64,
    pub receive_monotonic: u64,
    pub send_wall: u64,
    pub send_monotonic: u64,
    pub midpoint_wall: u64,
    pub midpoint_monotonic: u64,
}

/// The part of an irtt server's session that rtt's figures have no place
/// for: the negotiation, the server's stamps per clock and counts, what
/// they let misura separate, and the one-way delays on two wall clocks.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct IrttSession {
    pub requested: IrttParams,
    /// What the server granted (the echo packets follow these).
    pub granted: IrttParams,
    pub server_stamps: IrttStamps,
    /// What misura can separate with the stamps the server returned.
    pub separable: Vec<String>,
    /// What it cannot.
    pub not_separable: Vec<String>,
    /// The server's count of probes it received (its last reply's).
    pub server_received_count: Option<u32>,
    /// Replies whose server processing time cannot be (negative, or longer
    /// than their round trip): kept out of the turnaround and network RTT.
    pub implausible_processing: u64,
    /// Replies whose received count was more than misura had sent by then.
    pub implausible_received_count: u64,
    pub implausible_server_processing: Option<SummarySnapshot>,
    /// Server receive (wall) − client send: one way, on two clocks.
    pub forward_wall: Option<SummarySnapshot>,
    /// Client receive − server send (wall): one way, on two clocks.
    pub backward_wall: Option<SummarySnapshot>,
    /// How long misura waited for the last replies, s.
    pub final_wait_s: f64,
}
