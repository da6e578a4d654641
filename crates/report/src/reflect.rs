//! What `misura reflect` reports when it stops (format `misura.reflect`):
//! how it listened, the timestamp sources it got, and its counters.

use crate::model::{HostFingerprint, Meta};
use misura_measure::reflector::Counters;
use misura_stats::SummarySnapshot;
use serde::{Deserialize, Serialize};
use std::io::{self, Write};

/// I/O events the core never sees.
#[derive(Copy, Clone, Debug, Default, Serialize, Deserialize)]
pub struct IoCounters {
    pub recv_errors: u64,
    /// Sends refused for a full socket buffer (the reply is dropped).
    pub send_busy: u64,
    pub send_errors: u64,
    /// TX stamps read from the error queue and matched to a reply.
    pub tx_stamps_matched: u64,
    /// TX stamps that matched no pending reply (too late, ring overrun).
    pub tx_stamps_unmatched: u64,
    pub tx_stamp_errors: u64,
    /// ICMP errors (e.g. port unreachable at a sender that went away).
    pub icmp_errors: u64,
    /// Frames the raw socket saw leaving (our own replies), skipped.
    pub outgoing_skipped: u64,
    /// With the NIC's stamps on: requests that came without its RX stamp
    /// (their replies use the kernel's), and replies to NIC-stamped
    /// requests whose NIC TX stamp never came (no follow-up for them).
    #[serde(default)]
    pub rx_hw_stamp_missing: u64,
    #[serde(default)]
    pub tx_hw_stamp_missing: u64,
}

/// The NIC's clock, when the reflector used its stamps.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct NicClockReport {
    /// `/dev/ptpN`.
    pub device: String,
    /// PHC − CLOCK_REALTIME at the last look, and its half-width, ns.
    pub offset_ns: Option<f64>,
    pub offset_uncertainty_ns: Option<f64>,
    /// PTP daemons that name the clock or its interface.
    pub disciplined_by: Vec<String>,
    /// The S bit of replies to NIC-stamped requests (PTP-disciplined).
    pub synchronized: bool,
    /// Their Error Estimate, ns (as last stated).
    pub error_estimate_ns: u64,
    /// Why the clock could not be read, when it could not.
    pub error: Option<String>,
}

/// What `misura reflect` reports when it stops: its counters.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Summary {
    #[serde(flatten)]
    pub meta: Meta,
    pub complete: bool,
    pub stop_reason: String,
    pub host: HostFingerprint,
    pub transport: String,
    pub listen: String,
    pub mode: String,
    pub stateful: bool,
    pub rx_timestamps: String,
    pub tx_timestamps: String,
    pub clock_synchronized: bool,
    pub duration_s: f64,
    pub counters: Counters,
    pub dropped: u64,
    pub io: IoCounters,
    /// The interface whose NIC was asked to stamp (None: not known).
    #[serde(default)]
    pub interface: Option<String>,
    /// Why the NIC's stamps were not used, when they were not.
    #[serde(default)]
    pub hardware_note: Option<String>,
    #[serde(default)]
    pub nic_clock: Option<NicClockReport>,
    /// The reflector's turnaround, TX − RX stamp of each reply, on the
    /// NIC's stamps and on the kernel's (null when none).
    #[serde(default)]
    pub turnaround_nic: Option<SummarySnapshot>,
    #[serde(default)]
    pub turnaround_kernel: Option<SummarySnapshot>,
}

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
