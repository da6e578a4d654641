//! The result of misura's irtt reflector and its text form; the client's
//! parameters and what its stamps let it separate, for `misura rtt`'s result.

use crate::reflector::Counters;
use crate::server::Io;
use misura_report::rtt::IrttParams;
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
pub fn params_view(p: &misura_wire::irtt_params::Params) -> IrttParams {
    IrttParams {
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
