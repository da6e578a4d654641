//! `misura load`: latency under load (issue 12). STAMP probes measure
//! through an idle phase, a loaded phase (TCP streams or paced UDP through
//! `misura serve`) and a second idle phase; the result gives each phase's
//! latency (network, user and kernel RTT, forward and backward one-way delay
//! with the clock offset taken in the first idle phase), its throughput, the
//! inflation (loaded − idle) with its uncertainty, and responsiveness in
//! round trips per minute.

use crate::model::{HostFingerprint, Meta};
use crate::rtt::OffsetReport;
use misura_stats::SummarySnapshot;
use serde::{Deserialize, Serialize};
use std::io::{self, Write};

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
    pub hdr_network_rtt: Vec<misura_stats::Bucket>,
    #[serde(default)]
    pub hdr_user_rtt: Vec<misura_stats::Bucket>,
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

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct UnderLoadReport {
    #[serde(flatten)]
    pub meta: Meta,
    pub complete: bool,
    pub stop_reason: String,
    pub host: HostFingerprint,
    pub config: UnderLoadConfig,
    /// Taken in the first idle phase, and used for every phase's one-way
    /// delays.
    pub clock_offset: Option<OffsetReport>,
    pub phases: Vec<Phase>,
    pub inflation: Inflation,
    pub responsiveness: Responsiveness,
    pub throughput_series: Vec<ThroughputPoint>,
    /// The probes' medians per 500 ms, every phase.
    pub latency_series: Vec<LatencyPoint>,
    pub warnings: Vec<crate::Warning>,
}

/// A time in the unit that suits it (37 ns, 4.00 µs, 212.50 ms), as the
/// other reports print them.
fn us(v: Option<f64>) -> String {
    v.map_or("-".into(), crate::clock::human_ns)
}

fn mbps(v: f64) -> String {
    format!("{:.2} Mbit/s", v / 1e6)
}

/// Human output.
pub fn write_text(r: &UnderLoadReport, out: &mut dyn Write) -> io::Result<()> {
    let c = &r.config;
    writeln!(
        out,
        "misura load: {} (probes to {}); idle {:.0} s, loaded {:.0} s, idle {:.0} s",
        c.server, c.reflector, c.idle_s, c.duration_s, c.idle_s
    )?;
    writeln!(out, "timestamps: {}", c.timestamps)?;
    crate::text::write_host(&r.host, out)?;
    if let Some(o) = &r.clock_offset {
        writeln!(
            out,
            "clock offset (reflector − client, idle phase): {} ± {} ({})",
            us(Some(o.offset_ns)),
            us(Some(o.uncertainty_ns)),
            o.method
        )?;
    }
    writeln!(
        out,
        "\nphase         probes  lost      network RTT (p50 / p99)      user RTT (p50 / p99)   forward p50   backward p50   throughput"
    )?;
    for p in &r.phases {
        let pair = |x: Option<&Percentiles>| {
            x.map_or("-".to_string(), |x| {
                format!("{} / {}", us(x.median_ns), us(x.p99_ns))
            })
        };
        writeln!(
            out,
            "{:<12} {:>7} {:>5}   {:>26}   {:>23}   {:>11}   {:>12}   {}",
            p.name,
            p.sent,
            p.lost,
            pair(p.network_rtt.as_ref()),
            pair(Some(&p.user_rtt)),
            us(p.forward.as_ref().and_then(|f| f.median_ns)),
            us(p.backward.as_ref().and_then(|f| f.median_ns)),
            if p.flows.is_empty() {
                "-".to_string()
            } else {
                let flows: Vec<String> = p
                    .flows
                    .iter()
                    .map(|f| format!("{} {}", f.direction, mbps(f.throughput_bps)))
                    .collect();
                format!("{} (total {})", flows.join(", "), mbps(p.total_bps))
            }
        )?;
    }
    if r.phases.iter().any(|p| p.rr.is_some()) {
        writeln!(
            out,
            "\nrequest/response (UDP, one in flight)   transactions/s   lost   latency (p50 / p99)"
        )?;
        for p in &r.phases {
            if let Some(x) = &p.rr {
                writeln!(
                    out,
                    "{:<38} {:>16.0} {:>6}   {} / {}{}",
                    p.name,
                    x.transactions_per_s,
                    x.lost,
                    us(x.latency.median_ns),
                    us(x.latency.p99_ns),
                    x.error
                        .as_ref()
                        .map_or(String::new(), |e| format!("   ({e})"))
                )?;
            }
        }
        writeln!(
            out,
            "(closed loop, one transaction in flight: while a queue is full each one waits for it, while it is empty many complete, so these percentiles count quiet moments more often than the open-loop probes above; compare transactions/s across phases)"
        )?;
    }
    let i = &r.inflation;
    let pm = |v: Option<f64>, u: Option<f64>| match (v, u) {
        (Some(v), Some(u)) => format!("{} ± {}", us(Some(v)), us(Some(u))),
        (Some(v), None) => us(Some(v)),
        _ => "-".into(),
    };
    writeln!(
        out,
        "\ninflation (loaded − idle, medians): network RTT {}, user RTT {}; forward {}, backward {}",
        pm(i.network_rtt_ns, i.network_rtt_uncertainty_ns),
        pm(i.user_rtt_ns, i.user_rtt_uncertainty_ns),
        us(i.forward_ns),
        us(i.backward_ns)
    )?;
    let rpm = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.0}"));
    writeln!(
        out,
        "responsiveness under load: {} RPM (user RTT), {} RPM (network RTT); {}",
        rpm(r.responsiveness.rpm_user),
        rpm(r.responsiveness.rpm_network),
        r.responsiveness.method
    )?;
    for w in &r.warnings {
        writeln!(out, "warning: {}", w.text)?;
    }
    Ok(())
}
