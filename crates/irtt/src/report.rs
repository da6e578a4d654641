//! The results of misura's irtt reflector and client, and their text form.

use crate::reflector::Counters;
use crate::server::Io;
use misura_report::Meta;
use misura_stats::SummarySnapshot;
use serde::{Deserialize, Serialize};
use std::io::{self, Write};

/// `misura reflect --irtt` when it stops (format `misura.irtt-reflect`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReflectSummary {
    #[serde(flatten)]
    pub meta: Meta,
    pub complete: bool,
    pub stop_reason: misura_report::StopReason,
    pub listen: String,
    /// "authenticated (HMAC-MD5)" or "unauthenticated".
    pub mode: String,
    /// Where the receive stamps in the replies come from.
    pub receive_stamps: String,
    /// Where the send stamps in the replies come from.
    pub send_stamps: String,
    pub max_sessions: usize,
    pub rate_limit_per_s: u64,
    pub duration_s: f64,
    pub counters: Counters,
    pub io: Io,
    /// Sessions still open when it stopped.
    pub sessions_open: usize,
    /// The reflector's turnaround: kernel TX stamp − kernel RX stamp.
    pub turnaround_kernel: Option<SummarySnapshot>,
}

fn us(ns: Option<i64>) -> String {
    ns.map_or("-".into(), |v| format!("{:.1}", v as f64 / 1e3))
}

pub fn write_reflect(s: &ReflectSummary, out: &mut dyn Write) -> io::Result<()> {
    let c = &s.counters;
    writeln!(
        out,
        "misura reflect --irtt on {} ({}): {:.1} s, {}",
        s.listen, s.mode, s.duration_s, s.stop_reason
    )?;
    writeln!(
        out,
        "  sessions: {} opened, {} closed, {} expired, {} refused, {} refused at the per-source cap, {} open-close, {} still open",
        c.opened,
        c.closed,
        c.expired,
        c.refused,
        c.refused_source_cap,
        c.open_close,
        s.sessions_open
    )?;
    writeln!(
        out,
        "  opens dropped unanswered: {} over the open rate, {} whose answer would be longer than allowed",
        c.open_rate_limited, c.open_unanswered
    )?;
    writeln!(
        out,
        "  datagrams: {} received, {} replies; dropped: {} malformed, {} HMAC, {} unknown token, {} address mismatch, {} short, {} rate-limited",
        c.received,
        c.replies,
        c.malformed,
        c.hmac_failures,
        c.unknown_token,
        c.address_mismatch,
        c.short_request,
        c.rate_limited
    )?;
    writeln!(out, "  receive stamps: {}", s.receive_stamps)?;
    writeln!(out, "  send stamps: {}", s.send_stamps)?;
    if let Some(t) = &s.turnaround_kernel {
        writeln!(
            out,
            "  turnaround (kernel TX − RX stamp): median {} µs, p99 {} µs, {} replies",
            us(t.median_ns),
            us(t.p99_ns),
            t.count
        )?;
    }
    Ok(())
}

/// irtt's parameters as a result shows them.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ParamsView {
    pub duration_ns: i64,
    pub interval_ns: i64,
    pub length: i64,
    pub received_stats: String,
    pub stamp_at: String,
    pub clock: String,
    pub dscp: i64,
    pub server_fill: String,
}

impl From<&misura_wire::irtt_params::Params> for ParamsView {
    fn from(p: &misura_wire::irtt_params::Params) -> ParamsView {
        ParamsView {
            duration_ns: p.duration_ns,
            interval_ns: p.interval_ns,
            length: p.length,
            received_stats: p.received_stats.name().into(),
            stamp_at: p.stamp_at.name().into(),
            clock: p.clock.name().into(),
            dscp: p.dscp,
            server_fill: p.server_fill.clone(),
        }
    }
}

/// `misura rtt HOST --peer irtt` (format `misura.irtt-rtt`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RttSummary {
    #[serde(flatten)]
    pub meta: Meta,
    pub complete: bool,
    pub stop_reason: misura_report::StopReason,
    pub target: String,
    pub local: String,
    pub hmac: bool,
    pub requested: ParamsView,
    /// What the server granted (the echo packets follow these).
    pub granted: ParamsView,
    /// Where misura's own send and receive stamps come from.
    pub client_stamps: String,
    /// How many replies carried each server stamp.
    pub server_stamps: crate::tally::StampsSeen,
    /// What misura can separate with the stamps the server returned.
    pub separable: Vec<String>,
    /// What it cannot.
    pub not_separable: Vec<String>,
    pub counts: crate::tally::Counts,
    /// The server's count of probes it received (its last reply's).
    pub server_received_count: Option<u32>,
    pub duration_s: f64,
    pub final_wait_s: f64,
    /// Client receive − client send (kernel stamps).
    pub rtt: Option<SummarySnapshot>,
    /// The round trip without the server's processing time.
    pub rtt_minus_server_processing: Option<SummarySnapshot>,
    pub server_processing: Option<SummarySnapshot>,
    /// The server processing times that cannot be (negative, or longer
    /// than their round trip): kept out of the two figures above.
    #[serde(default)]
    pub implausible_server_processing: Option<SummarySnapshot>,
    /// Server receive (wall) − client send: one way, on two clocks.
    pub forward_wall: Option<SummarySnapshot>,
    /// Client receive − server send (wall): one way, on two clocks.
    pub backward_wall: Option<SummarySnapshot>,
}

/// What the server's stamps let misura separate, and what not, from what
/// the replies actually carried (`seen`) and how many were answered.
pub fn separability(
    seen: &crate::tally::StampsSeen,
    answered: u64,
    processing: u64,
    sent: u64,
    server_count: Option<u32>,
) -> (Vec<String>, Vec<String>) {
    let mut can = vec!["the round-trip time, on misura's own kernel TX and RX stamps (the server's processing time included)".to_string()];
    let mut cannot = Vec::new();
    let all = |n: u64| answered > 0 && n == answered;
    let mid = seen.midpoint_wall + seen.midpoint_monotonic > 0;
    if processing > 0 {
        can.push(format!("the server's processing time (its send − receive stamp, {processing} of {answered} replies) and the round trip without it"));
    } else if mid {
        cannot.push("the server's processing time: it returned one midpoint stamp, not a receive and a send stamp".into());
    } else {
        let what = match (
            seen.receive_wall + seen.receive_monotonic > 0,
            seen.send_wall + seen.send_monotonic > 0,
        ) {
            (false, false) => "no stamps",
            (true, false) => "only a receive stamp",
            (false, true) => "only a send stamp",
            (true, true) => "receive and send stamps on no common clock",
        };
        cannot.push(format!("the server's processing time: it returned {what}, so that time stays inside the round trip"));
    }
    let wall = seen.receive_wall + seen.send_wall + seen.midpoint_wall;
    if wall > 0 {
        can.push(format!(
            "one-way delays (forward: server receive − misura send; backward: misura receive − server send{}), on the server's wall clock against misura's CLOCK_REALTIME",
            if mid { "; the midpoint puts half the processing in each" } else { "" }
        ));
        cannot.push("how far the one-way delays are off: irtt sends no clock offset, synchronisation state or uncertainty, so a clock offset and a path asymmetry look the same".into());
    } else {
        cannot.push("one-way delays: the server returned no wall-clock stamps (its monotonic clock counts from its own start, unrelated to misura's)".into());
    }
    if !all(seen
        .receive_wall
        .max(seen.receive_monotonic)
        .max(seen.midpoint_wall)
        .max(seen.midpoint_monotonic))
        && answered > 0
    {
        cannot
            .push("a stamp on every reply: some replies came without the negotiated stamps".into());
    }
    match server_count {
        Some(c) if u64::from(c) > sent => cannot.push(format!(
            "loss by direction: the server claims {c} probes received of {sent} sent, which cannot be"
        )),
        Some(c) => can.push(format!(
            "loss by direction: the server counted {c} probes received of {sent} sent"
        )),
        None => cannot.push("loss by direction: the server returned no received count".into()),
    }
    cannot.push("the server's host time (socket queue, scheduling): irtt stamps in user space, so it stays in the network part of every figure".into());
    (can, cannot)
}

pub fn write_rtt(s: &RttSummary, out: &mut dyn Write) -> io::Result<()> {
    let c = &s.counts;
    writeln!(
        out,
        "misura rtt --peer irtt {} (from {}, {}): {:.1} s, {}",
        s.target,
        s.local,
        if s.hmac { "HMAC-MD5" } else { "no HMAC" },
        s.duration_s,
        s.stop_reason
    )?;
    writeln!(
        out,
        "  granted: interval {} ms, length {} bytes, stamps at {} on the {} clock(s), received stats {}",
        s.granted.interval_ns as f64 / 1e6,
        s.granted.length,
        s.granted.stamp_at,
        s.granted.clock,
        s.granted.received_stats
    )?;
    writeln!(
        out,
        "  probes: {} sent, {} answered, {} lost, {} duplicates, {} reordered; {} unmatched, {} malformed, {} HMAC failures",
        c.sent, c.answered, c.lost, c.duplicates, c.reordered, c.unmatched, c.malformed, c.hmac_failures
    )?;
    let row = |name: &str, v: &Option<SummarySnapshot>| match v {
        Some(v) => format!(
            "  {name:<34} median {:>9} µs  min {:>9}  p99 {:>9}  ({} values)\n",
            us(v.median_ns),
            us(v.min_ns),
            us(v.p99_ns),
            v.count
        ),
        None => format!("  {name:<34} -\n"),
    };
    write!(out, "{}", row("RTT", &s.rtt))?;
    write!(
        out,
        "{}",
        row("RTT − server processing", &s.rtt_minus_server_processing)
    )?;
    write!(out, "{}", row("server processing", &s.server_processing))?;
    if s.counts.implausible_processing > 0 {
        write!(
            out,
            "{}",
            row(
                "impossible server processing (left out)",
                &s.implausible_server_processing
            )
        )?;
    }
    write!(out, "{}", row("forward (two wall clocks)", &s.forward_wall))?;
    write!(
        out,
        "{}",
        row("backward (two wall clocks)", &s.backward_wall)
    )?;
    writeln!(out, "  client stamps: {}", s.client_stamps)?;
    for l in &s.separable {
        writeln!(out, "  can separate: {l}")?;
    }
    for l in &s.not_separable {
        writeln!(out, "  cannot separate: {l}")?;
    }
    Ok(())
}
