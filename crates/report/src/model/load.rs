//! What the frame engine measured in one trial: per flow the offered and
//! achieved rates, the exact counts of the load stream and the transit
//! times of its frames, and the tester's own limits, so that a shortfall of
//! the tester is never read as the SUT's. Shared by `misura oneway`'s
//! engine mode, `misura rfc2544` and `misura y1564`.

use super::summary::SummarySnapshot;
use serde::{Deserialize, Serialize};

/// How the load was generated and received.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct EngineFacts {
    /// Transmit path: "packet" (sendmmsg), "mmap" (PACKET_TX_RING) or
    /// "xdp" (AF_XDP).
    pub engine: String,
    /// Receive path: always "tpacket_v3" (a TPACKET_V3 ring).
    pub rx_path: String,
    pub cores: usize,
    /// PACKET_QDISC_BYPASS on the transmit path.
    pub qdisc_bypass: bool,
    /// Where the load frames' RX stamps come from: "kernel_software" or
    /// "nic_hardware" (the ring's frame header).
    pub rx_stamps: String,
    /// Where their TX time comes from: "user_clock" (CLOCK_REALTIME read
    /// when the batch was written, carried in the frame).
    pub tx_time: String,
    /// Why a better path was not used, and other choices made for the user.
    pub notes: Vec<String>,
    /// The RX port's PTP clock, when the ring took NIC stamps.
    #[serde(default)]
    pub rx_clock: Option<RxClockFacts>,
}

/// The RX port's PTP clock, tracked against system time so that the ring's
/// NIC stamps can be set against the frames' user-clock send times.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RxClockFacts {
    /// `/dev/ptpN`.
    pub phc: String,
    /// The port's hardware RX filter: "all" or "ptp_v2_event" (the load
    /// frames then travel inside PTPv2 Sync headers).
    pub rx_filter: String,
    /// Cross-timestamp method (PTP_SYS_OFFSET_PRECISE, _EXTENDED, …).
    pub method: Option<String>,
    /// Cross-timestamp rounds taken, and those that failed.
    pub rounds: u64,
    pub read_errors: u64,
    #[serde(default)]
    pub last_error: Option<String>,
    /// The clock's offset and drift against CLOCK_REALTIME.
    pub fit: Option<super::clock_fit::ClockFit>,
    /// Largest ≈95 % uncertainty of a stamp's conversion to system time, ns.
    pub u95_ns: Option<f64>,
}

/// One flow of a trial.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct LoadFlow {
    /// Offered frames per second (0 for a back-to-back burst).
    pub offered_fps: f64,
    /// Frames the kernel took per second over the trial (or the burst).
    pub achieved_fps: f64,
    pub sent: u64,
    /// Distinct frames received.
    pub received: u64,
    /// sent − received.
    pub lost: u64,
    pub loss_ratio: f64,
    pub duplicates: u64,
    pub reordered: u64,
    /// Arrivals too far behind the sequence window to classify.
    pub too_old: u64,
    /// Schedule slots skipped because the tester fell behind.
    pub skipped: u64,
    /// Frames that left back to back in catch-up after the tester was
    /// descheduled: what its own bursts may have cost at a SUT with a small
    /// bucket, so a trial the tester fell short in is charged to the SUT
    /// only for loss beyond these. 0 in older results.
    #[serde(default)]
    pub catch_up_frames: u64,
    /// Sender's user clock (written in the frame) to the kernel RX stamp,
    /// ns: an upper bound of each load frame's latency.
    pub transit: SummarySnapshot,
    /// Sender's user clock to the NIC's RX stamp (converted from the RX
    /// port's PTP clock to system time), ns, for the frames the NIC stamped;
    /// absent without NIC RX stamps.
    #[serde(default)]
    pub transit_hardware: Option<SummarySnapshot>,
}

/// One trial.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct LoadTrial {
    pub flows: Vec<LoadFlow>,
    /// Planned trial length, ns (the burst's own length for a burst).
    pub duration_ns: i64,
    /// First to last send, ns.
    pub sending_ns: i64,
    /// Load frames with a kernel software / NIC hardware RX stamp, and
    /// without any.
    pub stamped: u64,
    pub hardware_stamped: u64,
    pub unstamped: u64,
    /// NIC-stamped frames that came before the RX clock's model could
    /// convert their stamps (counted, not in `transit_hardware`).
    #[serde(default)]
    pub hardware_unconverted: u64,
    /// Largest ≈95 % uncertainty of a NIC stamp's conversion to system
    /// time in `transit_hardware`, ns.
    #[serde(default)]
    pub hardware_u95_ns: Option<f64>,
    /// Frames of other sessions or tools; frames that are not misura's.
    pub foreign: u64,
    pub malformed: u64,
    /// Frames the tester's own receive rings dropped (PACKET_STATISTICS).
    pub ring_drops: u64,
    /// Times the transmit path had no room.
    pub tx_full: u64,
    /// CPU seconds the process used during the trial.
    pub cpu_s: f64,
    /// Why the tester itself limited this trial (its transmit path fell
    /// short of the offered rate, its ring overran); null when it kept up.
    pub tester_limit: Option<String>,
}

impl LoadTrial {
    pub fn sent(&self) -> u64 {
        self.flows.iter().map(|f| f.sent).sum()
    }
    pub fn received(&self) -> u64 {
        self.flows.iter().map(|f| f.received).sum()
    }
    pub fn lost(&self) -> u64 {
        self.flows.iter().map(|f| f.lost).sum()
    }
    pub fn catch_up_frames(&self) -> u64 {
        self.flows.iter().map(|f| f.catch_up_frames).sum()
    }
    pub fn offered_fps(&self) -> f64 {
        self.flows.iter().map(|f| f.offered_fps).sum()
    }
    pub fn achieved_fps(&self) -> f64 {
        self.flows.iter().map(|f| f.achieved_fps).sum()
    }
    pub fn loss_ratio(&self) -> f64 {
        let s = self.sent();
        if s == 0 {
            0.0
        } else {
            self.lost() as f64 / s as f64
        }
    }
}

/// The load section of a `misura oneway` run in engine mode.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct OnewayLoad {
    pub engine: EngineFacts,
    /// Every N-th frame of the offered rate is a latency-stream frame.
    pub latency_every: u64,
    pub trial: LoadTrial,
}
