//! The irtt client's bookkeeping, with no clock and no socket: the send
//! stamps of the probes in flight (a bounded ring), each reply's matching,
//! and the figures the client's and the server's stamps give.
//!
//! What the server's stamps allow (irtt's own reasoning, and misura's):
//! * receive **and** send stamps on one clock: the server's processing
//!   time (send − receive), so the round trip without it;
//! * wall-clock stamps: one-way delays (server receive − client send,
//!   client receive − server send), right only as far as the two clocks
//!   agree: nothing here measures their offset;
//! * a midpoint stamp: one-way delays with the processing split in half;
//! * no stamps: the round trip only, server processing included.

use misura_stats::{Arrival, SequenceTracker, Summary};
use misura_wire::irtt::{Echo, Layout};
use misura_wire::irtt_params::StampAt;

/// Probes whose send stamp is kept: a reply later than this many probes
/// behind the newest cannot be matched and is counted `unmatched`.
pub const RING: usize = 65_536;

/// How many replies carried each server stamp (non-zero).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StampsSeen {
    pub receive_wall: u64,
    pub receive_monotonic: u64,
    pub send_wall: u64,
    pub send_monotonic: u64,
    pub midpoint_wall: u64,
    pub midpoint_monotonic: u64,
}

/// The counts of a client run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Counts {
    pub sent: u64,
    /// Probes answered (each counted once).
    pub answered: u64,
    pub lost: u64,
    pub duplicates: u64,
    pub reordered: u64,
    /// Replies to no probe in flight (unknown or too old sequence number).
    pub unmatched: u64,
    /// Datagrams that were not a valid reply of this session (bad header,
    /// wrong token, shorter than the negotiated layout).
    pub malformed: u64,
    pub hmac_failures: u64,
    /// Probes whose kernel TX stamp did not come: the user clock before
    /// the send stood in.
    pub tx_user_clock: u64,
    /// Replies without a kernel RX stamp: the user clock after the receive stood in.
    pub rx_user_clock: u64,
}

#[derive(Clone, Copy, Default)]
struct Sent {
    seq: u32,
    tx_ns: i64,
    user_tx_ns: i64,
    kernel: bool,
    live: bool,
}

/// The client's running figures.
pub struct Tally {
    layout: Layout,
    ring: Vec<Sent>,
    seq: SequenceTracker,
    pub counts: Counts,
    pub stamps: StampsSeen,
    /// Client receive − client send (kernel stamps).
    pub rtt: Summary,
    /// The same on the user clock (before the send, after the receive).
    pub user_rtt: Summary,
    /// The round trip without the server's processing time.
    pub rtt_net: Summary,
    /// Server send − server receive stamp.
    pub server_processing: Summary,
    /// Server receive (wall) − client send.
    pub forward: Summary,
    /// Client receive − server send (wall).
    pub backward: Summary,
    /// The server's last received count and window.
    pub server_received: Option<u32>,
    pub server_window: Option<u64>,
}

impl Tally {
    pub fn new(layout: Layout) -> Tally {
        Tally {
            layout,
            ring: vec![Sent::default(); RING],
            seq: SequenceTracker::with_window(RING),
            counts: Counts::default(),
            stamps: StampsSeen::default(),
            rtt: Summary::new(),
            user_rtt: Summary::new(),
            rtt_net: Summary::new(),
            server_processing: Summary::new(),
            forward: Summary::new(),
            backward: Summary::new(),
            server_received: None,
            server_window: None,
        }
    }

    /// Probe `seq` left at `tx_ns` (the user clock; [`Tally::tx_stamp`]
    /// replaces it with the kernel's).
    pub fn sent(&mut self, seq: u32, tx_ns: i64) {
        self.counts.sent += 1;
        self.ring[seq as usize % RING] = Sent {
            seq,
            tx_ns,
            user_tx_ns: tx_ns,
            kernel: false,
            live: true,
        };
    }

    /// The kernel's TX stamp of probe `seq`.
    pub fn tx_stamp(&mut self, seq: u32, ns: i64) {
        let s = &mut self.ring[seq as usize % RING];
        if s.live && s.seq == seq {
            s.tx_ns = ns;
            s.kernel = true;
        }
    }

    /// A reply received at `rx_ns` (the kernel's stamp, client wall
    /// clock), read at `user_rx_ns` (the user clock after the receive).
    pub fn reply(&mut self, e: &Echo, rx_ns: i64, user_rx_ns: i64) {
        let slot = self.ring[e.seqno as usize % RING];
        if !slot.live || slot.seq != e.seqno {
            self.counts.unmatched += 1;
            return;
        }
        match self.seq.record(u64::from(e.seqno)) {
            Arrival::Duplicate => {
                self.counts.duplicates += 1;
                return;
            }
            Arrival::TooOld => {
                self.counts.unmatched += 1;
                return;
            }
            Arrival::Reordered => self.counts.reordered += 1,
            Arrival::InOrder => {}
        }
        self.counts.answered += 1;
        if !slot.kernel {
            self.counts.tx_user_clock += 1;
        }
        self.server_received = e.received_count.or(self.server_received);
        self.server_window = e.received_window.or(self.server_window);
        let rtt = rx_ns - slot.tx_ns;
        self.rtt.record(rtt);
        self.user_rtt.record(user_rx_ns - slot.user_tx_ns);
        let (r, s) = (e.receive, e.send);
        let mid = self.layout.stamp_at == StampAt::Midpoint;
        let seen = &mut self.stamps;
        let nz = |v: i64| u64::from(v != 0);
        if mid {
            seen.midpoint_wall += nz(r.wall_ns);
            seen.midpoint_monotonic += nz(r.mono_ns);
        } else {
            seen.receive_wall += nz(r.wall_ns);
            seen.receive_monotonic += nz(r.mono_ns);
            seen.send_wall += nz(s.wall_ns);
            seen.send_monotonic += nz(s.mono_ns);
        }
        // Processing: both stamps, on the monotonic clock where it came
        // (immune to steps), else the wall clock.
        let processing = if mid {
            None
        } else if r.mono_ns != 0 && s.mono_ns != 0 {
            Some(s.mono_ns - r.mono_ns)
        } else if r.wall_ns != 0 && s.wall_ns != 0 {
            Some(s.wall_ns - r.wall_ns)
        } else {
            None
        };
        if let Some(p) = processing {
            self.server_processing.record(p);
            self.rtt_net.record(rtt - p);
        }
        if r.wall_ns != 0 {
            self.forward.record(r.wall_ns - slot.tx_ns);
        }
        if s.wall_ns != 0 {
            self.backward.record(rx_ns - s.wall_ns);
        }
    }

    /// Closes the count: every probe sent and not answered is lost.
    pub fn finish(&mut self) {
        self.counts.lost = self.counts.sent.saturating_sub(self.counts.answered);
    }
}
