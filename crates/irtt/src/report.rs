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
    pub meta: Meta,
    pub complete: bool,
    pub stop_reason: String,
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
        "  sessions: {} opened, {} closed, {} expired, {} refused, {} open-close, {} still open",
        c.opened, c.closed, c.expired, c.refused, c.open_close, s.sessions_open
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
