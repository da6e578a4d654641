//! Results of the client tests against `misura serve`: `misura tcp`, `udp`,
//! `rr`, `setup` and `sweep` (issue 5), with their text and CSV forms.
//!
//! Every test result names its headline figure at the top level
//! (`throughput_bps` as the receiver measured it, or `transactions_per_s`)
//! and keeps one entry per client connection in `clients` (one unless
//! `--clients N`), the headline being the sum over clients.
//!
//! Long: the models of five results (tcp, udp, rr, setup, sweep) with their
//! text and CSV forms; the split of `report` into models and rendering (issue
//! 27 part 2) takes it apart.

use crate::model::{HostFingerprint, Meta};
use misura_stats::SummarySnapshot;
use serde::{Deserialize, Serialize};
use std::io::{self, Write};

/// CPU time one end used over the test, from the kernel's accounting
/// (`getrusage`: user + system).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuUse {
    pub user_ns: u64,
    pub system_ns: u64,
    /// (user + system) / elapsed, in % of one CPU (200 % = two CPUs busy).
    pub utilisation_pct: f64,
}

impl CpuUse {
    pub fn new(user_ns: u64, system_ns: u64, elapsed_ns: u64) -> CpuUse {
        let pct = if elapsed_ns > 0 {
            100.0 * (user_ns + system_ns) as f64 / elapsed_ns as f64
        } else {
            0.0
        };
        CpuUse {
            user_ns,
            system_ns,
            utilisation_pct: pct,
        }
    }
    pub fn total_ns(&self) -> u64 {
        self.user_ns + self.system_ns
    }
    /// Service demand: CPU µs per KB (1024 bytes) moved, netperf's unit.
    pub fn us_per_kb(&self, bytes: u64) -> Option<f64> {
        (bytes > 0).then(|| self.total_ns() as f64 / 1000.0 / (bytes as f64 / 1024.0))
    }
    /// Service demand: CPU µs per transaction.
    pub fn us_per_transaction(&self, transactions: u64) -> Option<f64> {
        (transactions > 0).then(|| self.total_ns() as f64 / 1000.0 / transactions as f64)
    }
}

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
    pub pacing: Option<crate::pacing::Pacing>,
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
    pub stop_reason: String,
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
    pub stop_reason: String,
    /// Aggregate receiver-measured throughput, bit/s (sum over clients).
    pub throughput_bps: f64,
    pub retransmits: u64,
    pub host: HostFingerprint,
    pub config: TcpConfig,
    pub clients: Vec<TcpClientResult>,
    pub intervals: Vec<IntervalLine>,
    pub warnings: Vec<crate::Warning>,
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
    pub stop_reason: String,
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
    pub pacing: Option<crate::pacing::Pacing>,
    pub server: Option<ServerFigures>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct UdpReport {
    #[serde(flatten)]
    pub meta: Meta,
    pub complete: bool,
    pub stop_reason: String,
    /// Aggregate receiver-measured throughput, bit/s (sum over clients).
    pub throughput_bps: f64,
    pub lost: u64,
    pub loss_ratio: f64,
    pub host: HostFingerprint,
    pub config: UdpConfig,
    pub clients: Vec<UdpClientResult>,
    pub warnings: Vec<crate::Warning>,
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
    pub stop_reason: String,
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
    pub latency_hdr: Vec<misura_stats::Bucket>,
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
    pub stop_reason: String,
    /// Sum over clients.
    pub transactions_per_s: f64,
    pub host: HostFingerprint,
    pub config: RrConfig,
    pub clients: Vec<RrClientResult>,
    pub warnings: Vec<crate::Warning>,
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

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SetupReport {
    #[serde(flatten)]
    pub meta: Meta,
    pub complete: bool,
    pub stop_reason: String,
    pub host: HostFingerprint,
    pub config: SetupConfig,
    pub gaps: Vec<SetupGap>,
    pub warnings: Vec<crate::Warning>,
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
    pub stop_reason: String,
    pub host: HostFingerprint,
    /// "tcp", "udp" or "rr".
    pub test: String,
    pub parameter: String,
    /// The arguments every run shared.
    pub base_args: Vec<String>,
    pub points: Vec<SweepPoint>,
    pub warnings: Vec<crate::Warning>,
}

// ---------------------------------------------------------------- text

fn rate(bps: f64) -> String {
    if bps >= 1e9 {
        format!("{:.3} Gbit/s", bps / 1e9)
    } else if bps >= 1e6 {
        format!("{:.3} Mbit/s", bps / 1e6)
    } else if bps >= 1e3 {
        format!("{:.3} kbit/s", bps / 1e3)
    } else {
        format!("{bps:.0} bit/s")
    }
}

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or("-".into(), |x| x.to_string())
}

fn f1(v: Option<f64>) -> String {
    v.map_or("-".into(), |x| format!("{x:.1}"))
}

fn f3(v: Option<f64>) -> String {
    v.map_or("-".into(), |x| format!("{x:.3}"))
}

fn us(v: Option<i64>) -> String {
    v.map_or("-".into(), |x| format!("{:.1}", x as f64 / 1000.0))
}

fn status(complete: bool, reason: &str) -> String {
    if complete {
        String::new()
    } else {
        format!("  [PARTIAL: {reason}]")
    }
}

fn cpu_text(c: Option<&CpuUse>) -> String {
    c.map_or("-".into(), |c| format!("{:.1} %", c.utilisation_pct))
}

fn warnings(w: &[crate::Warning], out: &mut dyn Write) -> io::Result<()> {
    for x in w {
        writeln!(out, "warning: {x}")?;
    }
    Ok(())
}

pub fn write_tcp_text(r: &TcpReport, out: &mut dyn Write) -> io::Result<()> {
    let c = &r.config;
    writeln!(
        out,
        "misura tcp -> {} ({}, {} stream{}{}{}, {} B messages{}{}){}",
        c.endpoint.address,
        c.direction,
        c.streams,
        if c.streams == 1 { "" } else { "s" },
        match c.threads.as_str() {
            "one" => " on one thread",
            "per-stream" => " on a thread each",
            _ => "",
        },
        if c.busy_poll_ns > 0 {
            format!(
                " polling {} before sleeping",
                crate::clock::human_ns(c.busy_poll_ns as f64)
            )
        } else {
            String::new()
        },
        c.msg_size,
        if c.nodelay { ", nodelay" } else { "" },
        if c.endpoint.clients > 1 {
            format!(", {} clients", c.endpoint.clients)
        } else {
            String::new()
        },
        status(r.complete, &r.stop_reason)
    )?;
    for l in &r.intervals {
        writeln!(
            out,
            "  [client {} {:>6.2}-{:<6.2} s] sent {:>12} B received {:>12} B  {}",
            l.client,
            l.start_ns as f64 / 1e9,
            l.end_ns as f64 / 1e9,
            l.sent_bytes,
            l.received_bytes,
            rate(l.throughput_bps)
        )?;
    }
    writeln!(
        out,
        "{:>6} {:>6} {:>14} {:>14} {:>16} {:>7} {:>8} {:>10} {:>10}",
        "client",
        "stream",
        "sent B",
        "received B",
        "throughput",
        "retrans",
        "rtt µs",
        "sndbuf",
        "rcvbuf"
    )?;
    for cl in &r.clients {
        for s in &cl.streams {
            writeln!(
                out,
                "{:>6} {:>6} {:>14} {:>14} {:>16} {:>7} {:>8} {:>10} {:>10}",
                cl.client,
                s.index,
                s.sent_bytes,
                s.received_bytes,
                rate(s.throughput_bps),
                s.retransmits,
                s.rtt_us,
                s.sndbuf_granted,
                s.rcvbuf_granted
            )?;
        }
        writeln!(
            out,
            "{:>6} {:>6} {:>14} {:>14} {:>16} {:>7} {:>8}  receiver counted {} B; CPU local {} remote {}; service demand local {} remote {} µs/KB{}",
            cl.client,
            "all",
            cl.sent_bytes,
            cl.received_bytes,
            rate(cl.throughput_bps),
            cl.retransmits,
            f1(cl.rtt_us_mean),
            cl.receiver_bytes,
            cpu_text(Some(&cl.cpu_local)),
            cpu_text(cl.cpu_remote.as_ref()),
            f3(cl.service_demand_local_us_per_kb),
            f3(cl.service_demand_remote_us_per_kb),
            status(cl.complete, &cl.stop_reason)
        )?;
        if let (Some(f), Some(b)) = (cl.forward_bps, cl.reverse_bps) {
            writeln!(out, "{:>13} forward {} reverse {}", "", rate(f), rate(b))?;
        }
    }
    writeln!(
        out,
        "throughput (receiver): {}   retransmits: {}",
        rate(r.throughput_bps),
        r.retransmits
    )?;
    warnings(&r.warnings, out)
}

pub fn write_udp_text(r: &UdpReport, out: &mut dyn Write) -> io::Result<()> {
    let c = &r.config;
    writeln!(
        out,
        "misura udp -> {} ({}, {} B datagrams at {}{}{}){}",
        c.endpoint.address,
        c.direction,
        c.msg_size,
        rate(c.rate_bps as f64),
        if c.df { ", don't fragment" } else { "" },
        if c.endpoint.clients > 1 {
            format!(", {} clients", c.endpoint.clients)
        } else {
            String::new()
        },
        status(r.complete, &r.stop_reason)
    )?;
    writeln!(
        out,
        "{:>6} {:>10} {:>10} {:>8} {:>8} {:>5} {:>5} {:>10} {:>12} {:>16} {:>8} {:>8}",
        "client",
        "sent",
        "received",
        "lost",
        "loss %",
        "dup",
        "ooo",
        "jitter µs",
        "owd var µs",
        "throughput",
        "cpu loc",
        "cpu rem"
    )?;
    for cl in &r.clients {
        writeln!(
            out,
            "{:>6} {:>10} {:>10} {:>8} {:>8.3} {:>5} {:>5} {:>10} {:>12} {:>16} {:>8} {:>8}{}",
            cl.client,
            cl.sent_packets,
            cl.received_packets,
            cl.lost,
            100.0 * cl.loss_ratio,
            cl.duplicates,
            cl.reordered,
            us(cl.jitter_ns.map(|x| x as i64)),
            us(cl.owd_variation_ns),
            rate(cl.throughput_bps),
            cpu_text(Some(&cl.cpu_local)),
            cpu_text(cl.cpu_remote.as_ref()),
            status(cl.complete, &cl.stop_reason)
        )?;
        if cl.emsgsize_errors > 0 {
            writeln!(
                out,
                "       {} sends failed with EMSGSIZE",
                cl.emsgsize_errors
            )?;
        }
        if let Some(p) = &cl.pacing {
            crate::pacing::write_pacing_text(p, cl.elapsed_ns, out)?;
        }
        if cl.test_id.is_some() {
            crate::pacing::write_cpu_text("client", &cl.cpu_local, out)?;
        }
    }
    writeln!(
        out,
        "throughput (receiver): {}   lost {} ({:.3} %)   path MTU: {}",
        rate(r.throughput_bps),
        r.lost,
        100.0 * r.loss_ratio,
        opt(r.clients.first().and_then(|c| c.path_mtu))
    )?;
    warnings(&r.warnings, out)
}

pub fn write_rr_text(r: &RrReport, out: &mut dyn Write) -> io::Result<()> {
    let c = &r.config;
    writeln!(
        out,
        "misura rr -> {} ({}, request {} B, response {} B, burst {}{}){}",
        c.endpoint.address,
        c.kind,
        c.request_size,
        c.response_size,
        c.burst,
        if c.endpoint.clients > 1 {
            format!(", {} clients", c.endpoint.clients)
        } else {
            String::new()
        },
        status(r.complete, &r.stop_reason)
    )?;
    writeln!(
        out,
        "{:>6} {:>10} {:>12} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10} {:>8} {:>8} {:>11} {:>11}",
        "client",
        "trans",
        "trans/s",
        "lost",
        "min µs",
        "mean µs",
        "p50 µs",
        "p99 µs",
        "max µs",
        "connect µs",
        "cpu loc",
        "cpu rem",
        "µs/tr loc",
        "µs/tr rem"
    )?;
    for cl in &r.clients {
        let l = &cl.latency;
        writeln!(
            out,
            "{:>6} {:>10} {:>12.1} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10} {:>8} {:>8} {:>11} {:>11}{}",
            cl.client,
            cl.transactions,
            cl.transactions_per_s,
            cl.lost,
            us(l.min_ns),
            f1(l.mean_ns.map(|x| x / 1000.0)),
            us(l.median_ns),
            us(l.p99_ns),
            us(l.max_ns),
            cl.connect.as_ref().map_or("-".into(), |s| f1(s.mean_ns.map(|x| x / 1000.0))),
            cpu_text(Some(&cl.cpu_local)),
            cpu_text(cl.cpu_remote.as_ref()),
            f3(cl.service_demand_local_us_per_transaction),
            f3(cl.service_demand_remote_us_per_transaction),
            status(cl.complete, &cl.stop_reason)
        )?;
    }
    writeln!(out, "transactions/s: {:.1}", r.transactions_per_s)?;
    warnings(&r.warnings, out)
}

pub fn write_setup_text(r: &SetupReport, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "misura setup -> {}{}",
        r.config.endpoint.address,
        status(r.complete, &r.stop_reason)
    )?;
    writeln!(out, "method: {}", r.config.method)?;
    writeln!(
        out,
        "{:>8} {:>7} {:>14} {:>14} {:>12} {:>12} {:>12} {:>14}",
        "idle s",
        "samples",
        "1st RTT µs",
        "2nd RTT µs",
        "set-up µs",
        "min µs",
        "max µs",
        "handshake µs"
    )?;
    for g in &r.gaps {
        writeln!(
            out,
            "{:>8.1} {:>7} {:>14} {:>14} {:>12} {:>12} {:>12} {:>14}",
            g.idle_ns as f64 / 1e9,
            g.samples.iter().filter(|s| s.setup_ns.is_some()).count(),
            f1(g.first_rtt_mean_ns.map(|x| x / 1000.0)),
            f1(g.second_rtt_mean_ns.map(|x| x / 1000.0)),
            f1(g.setup_mean_ns.map(|x| x / 1000.0)),
            us(g.setup_min_ns),
            us(g.setup_max_ns),
            f1(g.handshake_mean_ns.map(|x| x / 1000.0)),
        )?;
        for s in &g.samples {
            if let Some(e) = &s.error {
                writeln!(out, "         sample failed: {e}")?;
            }
        }
    }
    warnings(&r.warnings, out)
}

pub fn write_sweep_text(r: &SweepReport, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "misura sweep {} over {}{}",
        r.test,
        r.parameter,
        status(r.complete, &r.stop_reason)
    )?;
    writeln!(
        out,
        "{:>12} {:>16} {:>12} {:>8} {:>9} {:>9} {:>10} {:>10} {:>8} {:>8} {:>10}",
        r.parameter,
        "throughput",
        "trans/s",
        "retrans",
        "rtt µs",
        "loss %",
        "jitter µs",
        "p50 µs",
        "cpu loc",
        "cpu rem",
        "demand loc"
    )?;
    for p in &r.points {
        let f = &p.figures;
        writeln!(
            out,
            "{:>12} {:>16} {:>12} {:>8} {:>9} {:>9} {:>10} {:>10} {:>8} {:>8} {:>10}{}",
            p.value,
            f.throughput_bps.map_or("-".into(), rate),
            f1(f.transactions_per_s),
            opt(f.retransmits),
            f1(f.rtt_us_mean),
            f3(f.loss_ratio.map(|x| 100.0 * x)),
            us(f.jitter_ns.map(|x| x as i64)),
            us(f.latency_median_ns),
            f1(f.cpu_local_pct),
            f1(f.cpu_remote_pct),
            f3(f.service_demand_local),
            match &f.error {
                Some(e) => format!("  [{e}]"),
                None if !f.complete => "  [partial]".into(),
                None => String::new(),
            }
        )?;
    }
    warnings(&r.warnings, out)
}

// ---------------------------------------------------------------- CSV

fn c<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or(String::new(), |x| x.to_string())
}

/// One row per stream and one "all" row per client.
pub fn write_tcp_csv(r: &TcpReport, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "client,stream,sent_bytes,received_bytes,receiver_bytes,throughput_bps,retransmits,rtt_us,sndbuf_granted,rcvbuf_granted,cpu_local_pct,cpu_remote_pct,complete")?;
    for cl in &r.clients {
        for s in &cl.streams {
            writeln!(
                out,
                "{},{},{},{},{},{:.0},{},{},{},{},,,{}",
                cl.client,
                s.index,
                s.sent_bytes,
                s.received_bytes,
                c(s.receiver_bytes),
                s.throughput_bps,
                s.retransmits,
                s.rtt_us,
                s.sndbuf_granted,
                s.rcvbuf_granted,
                cl.complete as u8
            )?;
        }
        writeln!(
            out,
            "{},all,{},{},{},{:.0},{},{},,,{:.2},{},{}",
            cl.client,
            cl.sent_bytes,
            cl.received_bytes,
            cl.receiver_bytes,
            cl.throughput_bps,
            cl.retransmits,
            c(cl.rtt_us_mean.map(|x| format!("{x:.1}"))),
            cl.cpu_local.utilisation_pct,
            c(cl.cpu_remote.map(|x| format!("{:.2}", x.utilisation_pct))),
            cl.complete as u8
        )?;
    }
    Ok(())
}

pub fn write_udp_csv(r: &UdpReport, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "client,sent_packets,received_packets,lost,loss_ratio,duplicates,reordered,jitter_ns,owd_min_ns,owd_max_ns,owd_variation_ns,throughput_bps,emsgsize_errors,path_mtu,complete")?;
    for cl in &r.clients {
        writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{:.0},{},{},{}",
            cl.client,
            cl.sent_packets,
            cl.received_packets,
            cl.lost,
            cl.loss_ratio,
            cl.duplicates,
            cl.reordered,
            c(cl.jitter_ns),
            c(cl.owd_min_ns),
            c(cl.owd_max_ns),
            c(cl.owd_variation_ns),
            cl.throughput_bps,
            cl.emsgsize_errors,
            c(cl.path_mtu),
            cl.complete as u8
        )?;
    }
    Ok(())
}

pub fn write_rr_csv(r: &RrReport, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "client,transactions,transactions_per_s,lost,min_ns,mean_ns,median_ns,p90_ns,p99_ns,max_ns,connect_mean_ns,cpu_local_pct,cpu_remote_pct,us_per_transaction_local,us_per_transaction_remote,complete")?;
    for cl in &r.clients {
        let l = &cl.latency;
        writeln!(
            out,
            "{},{},{:.1},{},{},{},{},{},{},{},{},{:.2},{},{},{},{}",
            cl.client,
            cl.transactions,
            cl.transactions_per_s,
            cl.lost,
            c(l.min_ns),
            c(l.mean_ns.map(|x| format!("{x:.0}"))),
            c(l.median_ns),
            c(l.p90_ns),
            c(l.p99_ns),
            c(l.max_ns),
            c(cl.connect
                .as_ref()
                .and_then(|s| s.mean_ns)
                .map(|x| format!("{x:.0}"))),
            cl.cpu_local.utilisation_pct,
            c(cl.cpu_remote.map(|x| format!("{:.2}", x.utilisation_pct))),
            c(cl.service_demand_local_us_per_transaction
                .map(|x| format!("{x:.3}"))),
            c(cl.service_demand_remote_us_per_transaction
                .map(|x| format!("{x:.3}"))),
            cl.complete as u8
        )?;
    }
    Ok(())
}

pub fn write_setup_csv(r: &SetupReport, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "idle_ns,sample,first_rtt_ns,second_rtt_ns,setup_ns,handshake_ns"
    )?;
    for g in &r.gaps {
        for (i, s) in g.samples.iter().enumerate() {
            writeln!(
                out,
                "{},{},{},{},{},{}",
                g.idle_ns,
                i,
                c(s.first_rtt_ns),
                c(s.second_rtt_ns),
                c(s.setup_ns),
                c(s.handshake_ns)
            )?;
        }
    }
    Ok(())
}

/// The curve data: one row per swept value.
pub fn write_sweep_csv(r: &SweepReport, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "parameter,value,throughput_bps,transactions_per_s,retransmits,rtt_us_mean,loss_ratio,jitter_ns,latency_median_ns,latency_p99_ns,cpu_local_pct,cpu_remote_pct,service_demand_local,service_demand_remote,complete")?;
    for p in &r.points {
        let f = &p.figures;
        let g = |v: Option<f64>| c(v.map(|x| format!("{x:.3}")));
        writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            p.parameter,
            p.value,
            c(f.throughput_bps.map(|x| format!("{x:.0}"))),
            g(f.transactions_per_s),
            c(f.retransmits),
            g(f.rtt_us_mean),
            c(f.loss_ratio),
            c(f.jitter_ns),
            c(f.latency_median_ns),
            c(f.latency_p99_ns),
            g(f.cpu_local_pct),
            g(f.cpu_remote_pct),
            g(f.service_demand_local),
            g(f.service_demand_remote),
            f.complete as u8
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_demand_and_utilisation() {
        let cpu = CpuUse::new(300_000_000, 200_000_000, 1_000_000_000);
        assert!((cpu.utilisation_pct - 50.0).abs() < 1e-9);
        // 0.5 s CPU over 1 MiB = 1024 KB → 488.28 µs/KB.
        assert!((cpu.us_per_kb(1 << 20).unwrap() - 500_000.0 / 1024.0).abs() < 1e-6);
        assert_eq!(cpu.us_per_kb(0), None);
        assert!((cpu.us_per_transaction(1000).unwrap() - 500.0).abs() < 1e-9);
    }

    #[test]
    fn sweep_csv_has_one_row_per_point() {
        let r = SweepReport {
            meta: Meta {
                format: "misura.sweep".into(),
                format_version: 1,
                tool: "misura".into(),
                tool_version: "0".into(),
                started_at: "2024-01-01T00:00:00Z".into(),
                command: vec![],
            },
            complete: true,
            stop_reason: "finished".into(),
            host: HostFingerprint::default(),
            test: "tcp".into(),
            parameter: "msg-size".into(),
            base_args: vec![],
            points: ["10", "100"]
                .iter()
                .map(|v| SweepPoint {
                    parameter: "msg-size".into(),
                    value: v.to_string(),
                    figures: SweepFigures {
                        complete: true,
                        throughput_bps: Some(1e6),
                        ..Default::default()
                    },
                })
                .collect(),
            warnings: vec![],
        };
        let mut out = Vec::new();
        write_sweep_csv(&r, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        let width = lines[0].split(',').count();
        assert!(lines.iter().all(|l| l.split(',').count() == width));
        assert!(lines[1].starts_with("msg-size,10,1000000,"));
        let mut t = Vec::new();
        write_sweep_text(&r, &mut t).unwrap();
        assert!(String::from_utf8(t).unwrap().contains("1.000 Mbit/s"));
    }
}
