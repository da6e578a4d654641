//! Results of the client tests against `misura serve`: `misura tcp`, `udp`,
//! `rr`, `setup` and `sweep` (issue 5).
//!
//! Every test result names its headline figure at the top level
//! (`throughput_bps` as the receiver measured it, or `transactions_per_s`)
//! and keeps one entry per client connection in `clients` (one unless
//! `--clients N`), the headline being the sum over clients.

use super::meta::{HostFingerprint, Meta};
pub use super::pacing::CpuUse;
use super::run::{Envelope, StopReason};
use super::summary::SummarySnapshot;
use super::warning::Warning;
use serde::{Deserialize, Serialize};

/// The server's figures from its RESULT message, as sent (fields the
/// server left out are null).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerFigures {
    /// What the server received (bytes; datagrams, or transactions in rr).
    pub bytes: Option<u64>,
    pub packets: Option<u64>,
    /// What the server sent.
    pub bytes_sent: Option<u64>,
    pub packets_sent: Option<u64>,
    pub elapsed_ns: Option<u64>,
    pub lost: Option<u64>,
    pub duplicates: Option<u64>,
    pub reordered: Option<u64>,
    pub jitter_ns: Option<u64>,
    pub owd_min_ns: Option<i64>,
    pub owd_max_ns: Option<i64>,
    /// Bytes the server received per data connection, in its order.
    pub stream_bytes: Vec<u64>,
    pub cpu_user_ns: Option<u64>,
    pub cpu_system_ns: Option<u64>,
    pub transactions: Option<u64>,
    pub partial: Option<bool>,
    /// Why the server marked its figures partial.
    pub reason: Option<String>,
    /// How the server paced its own sending (reverse udp), from its RESULT;
    /// written in the udp row's `pacing`, not here.
    #[serde(skip)]
    pub pacing: Option<super::pacing::Pacing>,
}

/// Server and control connection a test used.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Endpoint {
    /// As given on the command line.
    pub server: String,
    /// The control address actually connected.
    pub address: String,
    pub netns: Option<String>,
    pub authenticated: bool,
    /// Concurrent client connections (`--clients`).
    pub clients: u32,
    /// With `--peer auto`: the server found by probing the port, "misura"
    /// (misura serve) or "iperf3"; absent otherwise and in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found_by_probing: Option<String>,
}

// ---------------------------------------------------------------- tcp

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TcpConfig {
    #[serde(flatten)]
    pub endpoint: Endpoint,
    pub streams: u32,
    /// "forward" (client sends), "reverse" (server sends) or "bidir".
    pub direction: String,
    pub msg_size: u64,
    /// Requested socket buffers; null = kernel default.
    pub sndbuf_requested: Option<u64>,
    pub rcvbuf_requested: Option<u64>,
    pub nodelay: bool,
    pub duration_ns: u64,
    pub interval_ns: Option<u64>,
    /// How the client drove its streams: "one" (one thread, non-blocking
    /// sockets and poll(2), the default) or "per-stream" (`--threads`).
    /// Results written before the choice existed ran one thread per stream.
    #[serde(default = "per_stream")]
    pub threads: String,
    /// How long the client's poll(2) loop polled before sleeping while it
    /// received (`--busy-poll`); 0 when it slept at once, in a forward test
    /// (the client does not read), with `--threads` (blocking readers), and
    /// in results from before the window existed.
    #[serde(default)]
    pub busy_poll_ns: u64,
}

fn per_stream() -> String {
    "per-stream".into()
}

/// One TCP data connection as the client saw it.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TcpStreamResult {
    pub index: u32,
    pub local_port: u16,
    pub sent_bytes: u64,
    pub received_bytes: u64,
    /// What the receiver counted for this stream: the server's per-stream
    /// figure for forward tests, the client's own for reverse.
    pub receiver_bytes: Option<u64>,
    pub throughput_bps: f64,
    /// Socket buffers the kernel granted (getsockopt after setsockopt;
    /// Linux doubles the request for bookkeeping overhead).
    pub sndbuf_granted: u64,
    pub rcvbuf_granted: u64,
    /// From TCP_INFO at the end of the test.
    pub retransmits: u32,
    pub rtt_us: u32,
    pub rttvar_us: u32,
    pub min_rtt_us: u32,
    pub snd_cwnd: u32,
    pub pmtu: u32,
}

/// One interval line (`--interval`): bytes moved by the client in it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct IntervalLine {
    pub client: u32,
    pub start_ns: u64,
    pub end_ns: u64,
    pub sent_bytes: u64,
    pub received_bytes: u64,
    pub throughput_bps: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TcpClientResult {
    pub client: u32,
    pub test_id: Option<u64>,
    pub complete: bool,
    pub stop_reason: StopReason,
    pub elapsed_ns: u64,
    pub sent_bytes: u64,
    pub received_bytes: u64,
    /// Bytes as the receiver counted them (server for forward, client for
    /// reverse, both for bidir) and their rate over the elapsed time.
    pub receiver_bytes: u64,
    pub throughput_bps: f64,
    /// Per direction for bidir (null otherwise).
    pub forward_bps: Option<f64>,
    pub reverse_bps: Option<f64>,
    pub retransmits: u64,
    pub rtt_us_mean: Option<f64>,
    pub streams: Vec<TcpStreamResult>,
    pub cpu_local: CpuUse,
    pub cpu_remote: Option<CpuUse>,
    pub service_demand_local_us_per_kb: Option<f64>,
    pub service_demand_remote_us_per_kb: Option<f64>,
    pub server: Option<ServerFigures>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TcpReport {
    #[serde(flatten)]
    pub meta: Meta,
    pub complete: bool,
    pub stop_reason: StopReason,
    /// Aggregate receiver-measured throughput, bit/s (sum over clients).
    pub throughput_bps: f64,
    pub retransmits: u64,
    pub host: HostFingerprint,
    pub config: TcpConfig,
    pub clients: Vec<TcpClientResult>,
    pub intervals: Vec<IntervalLine>,
    pub warnings: Vec<Warning>,
}

// ---------------------------------------------------------------- udp

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct UdpConfig {
    #[serde(flatten)]
    pub endpoint: Endpoint,
    pub direction: String,
    pub rate_bps: u64,
    pub msg_size: u64,
    pub duration_ns: u64,
    pub df: bool,
    /// `--pacing`: "sleep" (bursts below a sleep's resolution, the default)
    /// or "spin" (every datagram at its own time).
    #[serde(default = "sleep")]
    pub pacing: String,
}

fn sleep() -> String {
    "sleep".into()
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct UdpClientResult {
    pub client: u32,
    pub test_id: Option<u64>,
    pub complete: bool,
    pub stop_reason: StopReason,
    /// "server" (forward) or "client" (reverse): whose counts are below.
    pub receiver: String,
    pub elapsed_ns: u64,
    pub sent_packets: u64,
    pub sent_bytes: u64,
    /// Sends that failed, and how many of them with EMSGSIZE (datagram
    /// above the path MTU with don't-fragment set).
    pub send_errors: u64,
    pub emsgsize_errors: u64,
    pub received_packets: u64,
    pub received_bytes: u64,
    /// sent − received (datagrams), and its share of sent.
    pub lost: u64,
    pub loss_ratio: f64,
    pub duplicates: u64,
    pub reordered: u64,
    /// RFC 3550 interarrival jitter at the receiver.
    pub jitter_ns: Option<u64>,
    /// One-way delay (receiver clock − sender clock; includes their offset)
    /// extremes, and their difference, the one-way delay variation.
    pub owd_min_ns: Option<i64>,
    pub owd_max_ns: Option<i64>,
    pub owd_variation_ns: Option<i64>,
    pub offered_bps: f64,
    pub throughput_bps: f64,
    /// The path MTU the kernel holds for the data socket (IP_MTU).
    pub path_mtu: Option<u32>,
    pub cpu_local: CpuUse,
    pub cpu_remote: Option<CpuUse>,
    /// How the sender kept its schedule: the client's own pacer (forward),
    /// or the server's as its RESULT reported it (reverse; null from a
    /// server that does not report it).
    pub pacing: Option<super::pacing::Pacing>,
    pub server: Option<ServerFigures>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct UdpReport {
    #[serde(flatten)]
    pub meta: Meta,
    pub complete: bool,
    pub stop_reason: StopReason,
    /// Aggregate receiver-measured throughput, bit/s (sum over clients).
    pub throughput_bps: f64,
    pub lost: u64,
    pub loss_ratio: f64,
    pub host: HostFingerprint,
    pub config: UdpConfig,
    pub clients: Vec<UdpClientResult>,
    pub warnings: Vec<Warning>,
}

// ---------------------------------------------------------------- rr

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RrConfig {
    #[serde(flatten)]
    pub endpoint: Endpoint,
    /// "rr-tcp", "rr-udp" or "crr" (a new TCP connection per transaction).
    pub kind: String,
    pub request_size: u64,
    pub response_size: u64,
    pub burst: u32,
    pub duration_ns: u64,
    /// A UDP transaction whose response does not come within this is lost.
    pub timeout_ns: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RrClientResult {
    pub client: u32,
    pub test_id: Option<u64>,
    pub complete: bool,
    pub stop_reason: StopReason,
    pub elapsed_ns: u64,
    pub transactions: u64,
    pub transactions_per_s: f64,
    /// UDP transactions without a response within the timeout; crr
    /// transactions whose connection failed (reset by the server).
    pub lost: u64,
    /// Request written → response read, user clock (CLOCK_MONOTONIC).
    pub latency: SummarySnapshot,
    /// The full-resolution HDR histogram of the latency (every recorded
    /// bucket, exact below 2048 ns, 0.1 % wide above) for percentile plots
    /// and CDFs; empty in results written before it was stored.
    #[serde(default)]
    pub latency_hdr: Vec<super::summary::Bucket>,
    /// crr: connect() duration (TCP handshake), separately.
    pub connect: Option<SummarySnapshot>,
    pub cpu_local: CpuUse,
    pub cpu_remote: Option<CpuUse>,
    pub service_demand_local_us_per_transaction: Option<f64>,
    pub service_demand_remote_us_per_transaction: Option<f64>,
    pub server: Option<ServerFigures>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RrReport {
    #[serde(flatten)]
    pub meta: Meta,
    pub complete: bool,
    pub stop_reason: StopReason,
    /// Sum over clients.
    pub transactions_per_s: f64,
    pub host: HostFingerprint,
    pub config: RrConfig,
    pub clients: Vec<RrClientResult>,
    pub warnings: Vec<Warning>,
}

// ---------------------------------------------------------------- setup

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SetupConfig {
    #[serde(flatten)]
    pub endpoint: Endpoint,
    pub idle_ns: Vec<u64>,
    pub count: u32,
    /// How the set-up delay is measured (one sentence).
    pub method: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SetupSample {
    /// RTT of the first UDP transaction after the idle gap, and of the next.
    pub first_rtt_ns: Option<u64>,
    pub second_rtt_ns: Option<u64>,
    /// first − second: the path's set-up delay (may be ≤ 0 when nothing
    /// had to be set up).
    pub setup_ns: Option<i64>,
    /// connect() duration to the serve port right afterwards.
    pub handshake_ns: Option<u64>,
    pub error: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SetupGap {
    pub idle_ns: u64,
    pub samples: Vec<SetupSample>,
    pub setup_mean_ns: Option<f64>,
    pub setup_min_ns: Option<i64>,
    pub setup_max_ns: Option<i64>,
    pub first_rtt_mean_ns: Option<f64>,
    pub second_rtt_mean_ns: Option<f64>,
    pub handshake_mean_ns: Option<f64>,
}

pub type SetupReport = Envelope<SetupConfig, SetupFigures>;

/// The figures of a `SetupReport`, inside its envelope.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SetupFigures {
    pub gaps: Vec<SetupGap>,
}

// ---------------------------------------------------------------- sweep

/// The headline figures of one run of a sweep (null where the test has no
/// such figure).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SweepFigures {
    pub complete: bool,
    pub throughput_bps: Option<f64>,
    pub transactions_per_s: Option<f64>,
    pub retransmits: Option<u64>,
    pub rtt_us_mean: Option<f64>,
    pub loss_ratio: Option<f64>,
    pub jitter_ns: Option<u64>,
    pub latency_median_ns: Option<i64>,
    pub latency_p99_ns: Option<i64>,
    pub cpu_local_pct: Option<f64>,
    pub cpu_remote_pct: Option<f64>,
    /// µs per KB (tcp, udp) or per transaction (rr).
    pub service_demand_local: Option<f64>,
    pub service_demand_remote: Option<f64>,
    pub error: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SweepPoint {
    pub parameter: String,
    pub value: String,
    pub figures: SweepFigures,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SweepReport {
    #[serde(flatten)]
    pub meta: Meta,
    pub complete: bool,
    pub stop_reason: StopReason,
    pub host: HostFingerprint,
    /// "tcp", "udp" or "rr".
    pub test: String,
    pub parameter: String,
    /// The arguments every run shared.
    pub base_args: Vec<String>,
    pub points: Vec<SweepPoint>,
    pub warnings: Vec<Warning>,
}
