//! What `misura reflect` reports when it stops (format `misura.reflect`):
//! how it listened, the timestamp sources it got, and its counters.

use crate::model::{HostFingerprint, Meta};
use misura_measure::reflector::Counters;
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
        "  dropped: too short {}, malformed {}, group source {}, looks like a reply {}, auth failed {}, rate limited {}, table full {}",
        c.too_short, c.malformed, c.group_source, c.looks_like_reply, c.auth_failed, c.rate_limited, c.table_full
    )?;
    writeln!(
        out,
        "  timestamps: RX {} ({} replies used the user clock), TX {}; follow-ups with a TX stamp {}",
        s.rx_timestamps, c.rx_user_clock, s.tx_timestamps, c.follow_ups
    )?;
    let io = &s.io;
    writeln!(
        out,
        "  I/O: receive errors {}, send busy {}, send errors {}, TX stamps matched {} / unmatched {}, ICMP errors {}",
        io.recv_errors, io.send_busy, io.send_errors, io.tx_stamps_matched, io.tx_stamps_unmatched, io.icmp_errors
    )?;
    Ok(())
}
