//! What `misura reflect` reports when it stops (format `misura.reflect`):
//! how it listened, the timestamp sources it got, and its counters.

use super::meta::{HostFingerprint, Meta};
use super::run::StopReason;
use super::summary::SummarySnapshot;
use serde::{Deserialize, Serialize};

/// Everything the reflector's core counted.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counters {
    pub received: u64,
    pub replied: u64,
    pub too_short: u64,
    pub malformed: u64,
    pub group_source: u64,
    pub looks_like_reply: u64,
    pub auth_failed: u64,
    pub rate_limited: u64,
    pub table_full: u64,
    /// PTP frames that were not misura's PTP-wrapped probes (dropped).
    #[serde(default)]
    pub foreign_ptp: u64,
    /// Replies whose request had no kernel/NIC RX stamp (user clock used).
    pub rx_user_clock: u64,
    /// Replies whose request's HMAC TLV did not verify (I flag set).
    pub tlv_integrity_failed: u64,
    /// Replies that carried a follow-up with the previous reply's TX stamp.
    pub follow_ups: u64,
    /// TX stamps the loop reported to the core and it kept.
    pub tx_stamps: u64,
}

same_fields!(Counters from misura_measure::reflector::Counters {
    received, replied, too_short, malformed, group_source, looks_like_reply, auth_failed, rate_limited,
    table_full, foreign_ptp, rx_user_clock, tlv_integrity_failed, follow_ups, tx_stamps,
});

/// I/O events the core never sees.
#[derive(Copy, Clone, Debug, Default, Serialize, Deserialize)]
pub struct IoCounters {
    pub recv_errors: u64,
    /// Sends refused for a full socket buffer (the reply is dropped).
    pub send_busy: u64,
    pub send_errors: u64,
    /// TX stamps read from the error queue, matched to a reply and on the
    /// clock of its request's RX stamp (of a send's kernel and NIC
    /// reports, the one taken).
    pub tx_stamps_matched: u64,
    /// TX stamps that matched no pending reply (too late, ring overrun).
    pub tx_stamps_unmatched: u64,
    pub tx_stamp_errors: u64,
    /// ICMP errors (e.g. port unreachable at a sender that went away).
    pub icmp_errors: u64,
    /// Frames the raw socket saw leaving (our own replies), skipped.
    pub outgoing_skipped: u64,
    /// With the NIC's stamps on: requests that came without its RX stamp
    /// (their replies use the kernel's), and replies to NIC-stamped
    /// requests whose NIC TX stamp never came (no follow-up for them).
    #[serde(default)]
    pub rx_hw_stamp_missing: u64,
    #[serde(default)]
    pub tx_hw_stamp_missing: u64,
}

/// The NIC's clock, when the reflector used its stamps.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct NicClockReport {
    /// `/dev/ptpN`.
    pub device: String,
    /// PHC − CLOCK_REALTIME at the last look, and its half-width, ns.
    pub offset_ns: Option<f64>,
    pub offset_uncertainty_ns: Option<f64>,
    /// PTP daemons that name the clock or its interface.
    pub disciplined_by: Vec<String>,
    /// The S bit of replies to NIC-stamped requests (PTP-disciplined).
    pub synchronized: bool,
    /// Their Error Estimate, ns (as last stated).
    pub error_estimate_ns: u64,
    /// Why the clock could not be read, when it could not.
    pub error: Option<String>,
}

/// What `misura reflect` reports when it stops: its counters.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Summary {
    #[serde(flatten)]
    pub meta: Meta,
    pub complete: bool,
    pub stop_reason: StopReason,
    pub host: HostFingerprint,
    pub transport: String,
    pub listen: String,
    pub mode: String,
    pub stateful: bool,
    pub rx_timestamps: String,
    pub tx_timestamps: String,
    pub clock_synchronized: bool,
    pub duration_s: f64,
    pub counters: Counters,
    pub dropped: u64,
    pub io: IoCounters,
    /// The interface whose NIC was asked to stamp (None: not known).
    #[serde(default)]
    pub interface: Option<String>,
    /// Why the NIC's stamps were not used, when they were not.
    #[serde(default)]
    pub hardware_note: Option<String>,
    #[serde(default)]
    pub nic_clock: Option<NicClockReport>,
    /// The reflector's turnaround, TX − RX stamp of each reply, on the
    /// NIC's stamps and on the kernel's (null when none).
    #[serde(default)]
    pub turnaround_nic: Option<SummarySnapshot>,
    #[serde(default)]
    pub turnaround_kernel: Option<SummarySnapshot>,
    /// The scheduler slice the loop ran with, when the kernel kept the
    /// short one it asked for (EEVDF custom slice, Linux 6.12+): a
    /// request's wake-up preempts what runs on the CPU. Null: it spun
    /// (`--busy-poll`) or the kernel kept its default.
    #[serde(default)]
    pub sched_slice_ns: Option<u64>,
}
