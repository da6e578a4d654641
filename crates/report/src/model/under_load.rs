//! `misura load`: latency under load (issue 12). STAMP probes measure
//! through an idle phase, a loaded phase (TCP streams or paced UDP through
//! `misura serve`) and a second idle phase; the result gives each phase's
//! latency (network, user and kernel RTT, forward and backward one-way delay
//! with the clock offset taken in the first idle phase), its throughput, the
//! inflation (loaded − idle) with its uncertainty, and responsiveness in
//! round trips per minute.

use super::rtt::OffsetReport;
use super::run::Envelope;
use super::summary::SummarySnapshot;
use serde::{Deserialize, Serialize};

/// A latency figure's percentiles, ns.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    pub count: u64,
    pub min_ns: Option<f64>,
    pub median_ns: Option<f64>,
    pub p90_ns: Option<f64>,
    pub p99_ns: Option<f64>,
    pub max_ns: Option<f64>,
    pub mean_ns: Option<f64>,
    pub std_dev_ns: Option<f64>,
}

impl Percentiles {
    /// From a summary, every position moved by `shift_ns` (a one-way delay
    /// re-referred to the idle phase's clock offset).
    pub fn of(s: &SummarySnapshot, shift_ns: f64) -> Percentiles {
        let at = |v: Option<i64>| v.map(|x| x as f64 + shift_ns);
        Percentiles {
            count: s.count,
            min_ns: at(s.min_ns),
            median_ns: at(s.median_ns),
            p90_ns: at(s.p90_ns),
            p99_ns: at(s.p99_ns),
            max_ns: at(s.max_ns),
            mean_ns: s.mean_ns.map(|m| m + shift_ns),
            std_dev_ns: s.std_dev_ns,
        }
    }

    /// The standard error of the median (1.2533 σ / √n, for a distribution
    /// near normal; a guide, not a bound, for skewed ones).
    pub fn median_se_ns(&self) -> Option<f64> {
        let sd = self.std_dev_ns?;
        (self.count > 1).then(|| 1.2533 * sd / (self.count as f64).sqrt())
    }
}

/// One flow's throughput in a phase.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FlowThroughput {
    /// "up" (client to server) or "down".
    pub direction: String,
    /// "tcp" or "udp".
    pub kind: String,
    pub streams: u32,
    /// Receiver-measured, bit/s.
    pub throughput_bps: f64,
    /// Whether the flow's test completed.
    pub complete: bool,
}

/// One phase's figures.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Phase {
    /// "idle", "loaded" or "idle after".
    pub name: String,
    /// Start and length of the probes' part of the phase, s from the run's
    /// start.
    pub start_s: f64,
    pub duration_s: f64,
    pub sent: u64,
    pub received: u64,
    pub lost: u64,
    /// Replies that came more than once (copies after the first), as
    /// `misura rtt` counts them; 0 in results written before they were.
    #[serde(default)]
    pub duplicates: u64,
    /// Replies to sequence numbers this phase never sent (forged, or
    /// another session's).
    #[serde(default)]
    pub unknown: u64,
    /// Replies that did not parse as STAMP, or failed authentication.
    #[serde(default)]
    pub malformed: u64,
    pub network_rtt: Option<Percentiles>,
    pub user_rtt: Percentiles,
    pub kernel_rtt: Option<Percentiles>,
    /// The full-resolution HDR histograms of the phase's network and user
    /// RTT, every request size pooled (every recorded bucket, exact below
    /// 2048 ns, 0.1 % wide above); empty in results written before they
    /// were stored.
    #[serde(default)]
    pub hdr_network_rtt: Vec<super::summary::Bucket>,
    #[serde(default)]
    pub hdr_user_rtt: Vec<super::summary::Bucket>,
    /// One-way delays with the idle phase's clock offset.
    pub forward: Option<Percentiles>,
    pub backward: Option<Percentiles>,
    /// RFC 3550 interarrival jitter of the network path, ns.
    pub jitter_ns: Option<f64>,
    pub flows: Vec<FlowThroughput>,
    pub total_bps: f64,
    /// UDP request/response transactions beside the probes (`--rr`).
    #[serde(default)]
    pub rr: Option<RrPhase>,
}

/// One phase's UDP request/response transactions (`misura rr --proto udp`,
/// one in flight, through `misura serve`): what an application's request
/// sees, on the user clock.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RrPhase {
    pub transactions: u64,
    pub transactions_per_s: f64,
    /// Transactions without a response within --timeout.
    pub lost: u64,
    /// Request written → response read (user clock, CLOCK_MONOTONIC).
    pub latency: Percentiles,
    /// Why the transactions stopped early, if they did.
    pub error: Option<String>,
}

/// Loaded minus idle, with its uncertainty (both medians' standard errors
/// combined).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Inflation {
    pub network_rtt_ns: Option<f64>,
    pub network_rtt_uncertainty_ns: Option<f64>,
    pub user_rtt_ns: Option<f64>,
    pub user_rtt_uncertainty_ns: Option<f64>,
    pub forward_ns: Option<f64>,
    pub backward_ns: Option<f64>,
}

/// Round trips per minute under load: 60 s over the loaded median RTT.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Responsiveness {
    pub rpm_user: Option<f64>,
    pub rpm_network: Option<f64>,
    /// How it was computed (misura's probes, not the draft's HTTP method).
    pub method: String,
}

/// One throughput interval of the loaded phase.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ThroughputPoint {
    /// Start of the interval, s from the run's start.
    pub t_s: f64,
    pub direction: String,
    pub throughput_bps: f64,
}

/// One interval's probe medians (ns), for latency over time.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyPoint {
    /// End of the interval, s from the run's start.
    pub t_s: f64,
    pub phase: String,
    pub sent: u64,
    pub lost: u64,
    pub user_rtt_ns: Option<f64>,
    pub network_rtt_ns: Option<f64>,
    pub forward_ns: Option<f64>,
    pub backward_ns: Option<f64>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct UnderLoadConfig {
    pub server: String,
    pub reflector: String,
    pub up_streams: u32,
    pub down_streams: u32,
    pub udp_up_bps: Option<u64>,
    pub udp_down_bps: Option<u64>,
    pub idle_s: f64,
    pub duration_s: f64,
    pub period_ns: i64,
    pub request_bytes: usize,
    /// The timestamp sources the probes got (client TX/RX, reflector).
    pub timestamps: String,
}

pub type UnderLoadReport = Envelope<UnderLoadConfig, UnderLoadFigures>;

/// The figures of a `UnderLoadReport`, inside its envelope.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct UnderLoadFigures {
    /// Taken in the first idle phase, and used for every phase's one-way
    /// delays.
    pub clock_offset: Option<OffsetReport>,
    pub phases: Vec<Phase>,
    pub inflation: Inflation,
    pub responsiveness: Responsiveness,
    pub throughput_series: Vec<ThroughputPoint>,
    /// The probes' medians per 500 ms, every phase.
    pub latency_series: Vec<LatencyPoint>,
}
