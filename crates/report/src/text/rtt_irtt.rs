//! The lines of `misura rtt`'s text form that only an irtt peer has
//! (`--peer irtt`): which server stamps came, the negotiation, the one-way
//! delays on two wall clocks, and what the stamps let misura separate.

use crate::model::rtt::{IrttSession, RttTimestamps};
use crate::model::summary::SummarySnapshot;
use std::io::{self, Write};

fn us(ns: Option<i64>) -> String {
    ns.map_or("-".into(), |v| format!("{:.1}", v as f64 / 1e3))
}

/// The timestamps line: misura's own stamps, and the server's that came.
pub fn write_timestamps(t: &RttTimestamps, replies: u64, out: &mut dyn Write) -> io::Result<()> {
    let s = t.reflector_stamps.unwrap_or_default();
    writeln!(
        out,
        "timestamps: client TX {} / RX {}; irtt server stamps (user space) in {replies} replies: receive {}, send {}, midpoint {}, on its wall clock {}",
        t.client_tx, t.client_rx, s.receive, s.send, s.midpoint, s.wall_clock
    )
}

/// The negotiation, the figures rtt's table has no row for, and what can
/// and cannot be separated.
pub fn write_session(s: &IrttSession, out: &mut dyn Write) -> io::Result<()> {
    let g = &s.granted;
    writeln!(
        out,
        "\nirtt granted: interval {} ms, length {} bytes, stamps at {} on the {} clock(s), received stats {}; server received {}",
        g.interval_ns as f64 / 1e6,
        g.length,
        g.stamp_at,
        g.clock,
        g.received_stats,
        s.server_received_count
            .map_or("-".into(), |c| c.to_string())
    )?;
    let row = |name: &str, v: &Option<SummarySnapshot>| match v {
        Some(v) => format!(
            "  {name:<40} median {:>9} µs  min {:>9}  p99 {:>9}  ({} values)\n",
            us(v.median_ns),
            us(v.min_ns),
            us(v.p99_ns),
            v.count
        ),
        None => format!("  {name:<40} -\n"),
    };
    write!(out, "{}", row("forward (two wall clocks)", &s.forward_wall))?;
    write!(
        out,
        "{}",
        row("backward (two wall clocks)", &s.backward_wall)
    )?;
    if s.implausible_processing > 0 {
        write!(
            out,
            "{}",
            row(
                "impossible server processing (left out)",
                &s.implausible_server_processing
            )
        )?;
    }
    for l in &s.separable {
        writeln!(out, "  can separate: {l}")?;
    }
    for l in &s.not_separable {
        writeln!(out, "  cannot separate: {l}")?;
    }
    Ok(())
}
