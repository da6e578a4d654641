//! The result of `misura exchange`: seed 002's trigger / full-duplex data
//! sequence on raw frames, phase by phase.

use super::meta::{HostFingerprint, Meta};
use super::run::{Envelope, StopReason};
use super::summary::SummarySnapshot;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ExchangeConfig {
    pub interface: String,
    pub peer: String,
    pub netns: Option<String>,
    pub ethertype: u16,
    /// S1: Ethernet payload bytes of the trigger.
    pub trigger_bytes: usize,
    /// S2: Ethernet payload bytes each side sends after the trigger.
    pub data_bytes: usize,
    pub period_ns: i64,
    pub count: u64,
    pub timeout_ns: i64,
    pub threshold_ns: i64,
}

/// One phase: the seed's Ave / Max / Min, "Ave − Min" and the count over
/// the threshold, plus the full summary.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Phase {
    /// What the phase measures, in words.
    pub meaning: String,
    pub summary: SummarySnapshot,
    /// The full-resolution HDR histogram of the phase (every recorded
    /// bucket, exact below 2048 ns, 0.1 % wide above) for percentile plots
    /// and CDFs; empty in results written before it was stored.
    #[serde(default)]
    pub hdr: Vec<super::summary::Bucket>,
}

pub type ExchangeReport = Envelope<ExchangeConfig, ExchangeFigures>;

/// The figures of a `ExchangeReport`, inside its envelope.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ExchangeFigures {
    pub cycles: u64,
    pub completed: u64,
    /// Cycles whose peer data frame did not arrive within the timeout.
    pub timeouts: u64,
    pub t1: Phase,
    pub t2: Phase,
    pub t3: Phase,
    /// t3 from kernel stamps: kernel RX stamp of the peer's data frame −
    /// kernel TX stamp of the trigger.
    pub t3_kernel: Option<Phase>,
    /// t3 from the NIC's stamps (one PTP clock, the port's): hardware RX
    /// stamp of the peer's data frame − hardware TX stamp of the trigger;
    /// null without them (and in results from before they were taken).
    #[serde(default)]
    pub t3_hardware: Option<Phase>,
    /// The port's PTP hardware clock when the NIC's stamping was on.
    #[serde(default)]
    pub phc: Option<String>,
    /// Why the NIC's stamps were not used, when they were not.
    #[serde(default)]
    pub hardware_note: Option<String>,
    /// With the NIC's stamps on: completed cycles that lacked the trigger's
    /// hardware TX stamp or the data frame's hardware RX stamp.
    #[serde(default)]
    pub hw_stamp_missing: u64,
    /// Wire time of trigger + data at the link rate, when known (seed 002:
    /// (8+64+12+8+530)·8 bits ≈ 5 µs at 1 Gb/s).
    pub wire_time_ns: Option<f64>,
}

/// What `misura exchange --respond` counted when it stopped.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ResponderReport {
    #[serde(flatten)]
    pub meta: Meta,
    pub complete: bool,
    pub stop_reason: StopReason,
    pub host: HostFingerprint,
    pub interface: String,
    pub peer: String,
    pub data_bytes: usize,
    /// Trigger frames received from the peer.
    pub triggers: u64,
    /// Triggers answered with a data frame.
    pub answered: u64,
    /// The initiator's own data frames seen.
    pub peer_data_frames: u64,
    /// Frames of the ethertype that were neither.
    pub other_frames: u64,
}
