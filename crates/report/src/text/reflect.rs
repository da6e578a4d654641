//! The text form of `misura reflect`'s summary; the result types are in
//! `model::reflect`.

use crate::model::reflect::*;
use std::io::{self, Write};

pub fn write_summary(s: &Summary, out: &mut dyn Write) -> io::Result<()> {
    let c = &s.counters;
    writeln!(
        out,
        "misura reflect on {} ({}, {}): {:.1} s",
        s.listen, s.transport, s.mode, s.duration_s
    )?;
    writeln!(
        out,
        "  received {}  replied {}  dropped {}",
        c.received, c.replied, s.dropped
    )?;
    writeln!(
        out,
        "  dropped: too short {}, malformed {}, group source {}, looks like a reply {}, auth failed {}, rate limited {}, table full {}, foreign PTP {}",
        c.too_short, c.malformed, c.group_source, c.looks_like_reply, c.auth_failed, c.rate_limited, c.table_full, c.foreign_ptp
    )?;
    writeln!(
        out,
        "  timestamps: RX {} ({} replies used the user clock), TX {}; follow-ups with a TX stamp {}",
        s.rx_timestamps, c.rx_user_clock, s.tx_timestamps, c.follow_ups
    )?;
    if let Some(n) = &s.hardware_note {
        writeln!(out, "  NIC hardware stamps not used: {n}")?;
    }
    if let Some(n) = &s.nic_clock {
        writeln!(
            out,
            "  NIC clock {}: PHC − CLOCK_REALTIME {}; {}; error estimate {} µs{}; requests without its RX stamp {}, replies without its TX stamp {}",
            n.device,
            match (n.offset_ns, n.offset_uncertainty_ns) {
                (Some(o), Some(u)) => format!("{:.3} ± {:.3} µs", o / 1e3, u / 1e3),
                _ => "unknown".into(),
            },
            if n.disciplined_by.is_empty() {
                "free-running".to_string()
            } else {
                format!("PTP-synchronised by {}", n.disciplined_by.join(", "))
            },
            n.error_estimate_ns / 1000,
            n.error.as_ref().map(|e| format!(" ({e})")).unwrap_or_default(),
            s.io.rx_hw_stamp_missing,
            s.io.tx_hw_stamp_missing
        )?;
    }
    for (name, t) in [("NIC", &s.turnaround_nic), ("kernel", &s.turnaround_kernel)] {
        if let Some(t) = t {
            let us = |v: Option<i64>| v.map_or("-".into(), |x| format!("{:.3}", x as f64 / 1e3));
            writeln!(
                out,
                "  turnaround on the {name} stamps (TX − RX, µs): {} replies, min {} median {} p99 {} max {}",
                t.count,
                us(t.min_ns),
                us(t.median_ns),
                us(t.p99_ns),
                us(t.max_ns)
            )?;
        }
    }
    let io = &s.io;
    writeln!(
        out,
        "  I/O: receive errors {}, send busy {}, send errors {}, TX stamps matched {} / unmatched {}, ICMP errors {}",
        io.recv_errors, io.send_busy, io.send_errors, io.tx_stamps_matched, io.tx_stamps_unmatched, io.icmp_errors
    )?;
    Ok(())
}
