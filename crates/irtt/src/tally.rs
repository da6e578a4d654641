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

use misura_measure::time::Instant;
use misura_stats::{Arrival, SequenceTracker, Summary};
use misura_wire::irtt::{Echo, Layout};
use misura_wire::irtt_params::StampAt;

/// Probes whose send stamp is kept: a reply later than this many probes
/// behind the newest cannot be matched and is counted `unmatched`.
pub const RING: usize = 65_536;

/// How many replies carried each server stamp (non-zero), per clock.
pub use misura_report::rtt::IrttStamps as StampsSeen;
use misura_report::rtt::ReflectorStamps;

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
    /// Replies whose server processing time cannot be: negative, or longer
    /// than the round trip it is part of. Kept out of the processing time
    /// and of the round trip without it.
    #[serde(default)]
    pub implausible_processing: u64,
    /// Replies whose server received count is more than misura had sent
    /// by then: the count is not taken.
    #[serde(default)]
    pub implausible_received_count: u64,
}

#[derive(Clone, Copy, Default)]
struct Sent {
    seq: u32,
    tx: Instant,
    user_tx: Instant,
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
    /// The same by stamp, on any of the server's clocks.
    pub replies_with: ReflectorStamps,
    /// Client receive − client send (kernel stamps).
    pub rtt: Summary,
    /// The same on the user clock (before the send, after the receive).
    pub user_rtt: Summary,
    /// The round trip without the server's processing time.
    pub rtt_net: Summary,
    /// Server send − server receive stamp, where it is possible.
    pub server_processing: Summary,
    /// The processing times that cannot be (negative, or longer than
    /// their round trip), named and kept out of the two figures above.
    pub implausible_processing: Summary,
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
            replies_with: ReflectorStamps::default(),
            rtt: Summary::new(),
            user_rtt: Summary::new(),
            rtt_net: Summary::new(),
            server_processing: Summary::new(),
            implausible_processing: Summary::new(),
            forward: Summary::new(),
            backward: Summary::new(),
            server_received: None,
            server_window: None,
        }
    }

    /// Probe `seq` left at `tx` (the user clock; [`Tally::tx_stamp`]
    /// replaces it with the kernel's).
    pub fn sent(&mut self, seq: u32, tx: Instant) {
        self.counts.sent += 1;
        self.ring[seq as usize % RING] = Sent {
            seq,
            tx,
            user_tx: tx,
            kernel: false,
            live: true,
        };
    }

    /// The kernel's TX stamp of probe `seq`.
    pub fn tx_stamp(&mut self, seq: u32, at: Instant) {
        let s = &mut self.ring[seq as usize % RING];
        if s.live && s.seq == seq {
            s.tx = at;
            s.kernel = true;
        }
    }

    /// A reply received at `rx` (the kernel's stamp, client wall clock),
    /// read at `user_rx` (the user clock after the receive).
    pub fn reply(&mut self, e: &Echo, rx: Instant, user_rx: Instant) {
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
        // The server cannot have received more probes than were sent.
        match e.received_count {
            Some(c) if u64::from(c) > self.counts.sent => {
                self.counts.implausible_received_count += 1
            }
            Some(c) => self.server_received = Some(c),
            None => {}
        }
        self.server_window = e.received_window.or(self.server_window);
        let rtt = (rx - slot.tx).as_ns();
        self.rtt.record(rtt);
        self.user_rtt.record((user_rx - slot.user_tx).as_ns());
        let (r, s) = (e.receive, e.send);
        let mid = self.layout.stamp_at == StampAt::Midpoint;
        let seen = &mut self.stamps;
        let nz = |v: i64| u64::from(v != 0);
        let any = |t: misura_wire::irtt::Time| u64::from(t.wall_ns != 0 || t.mono_ns != 0);
        let with = &mut self.replies_with;
        with.wall_clock += u64::from(r.wall_ns != 0 || s.wall_ns != 0);
        if mid {
            with.midpoint += any(r);
        } else {
            with.receive += any(r);
            with.send += any(s);
        }
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
        // A processing time that is negative or longer than the round
        // trip it sits in is the server's error (or a lie): counted and
        // named, never subtracted.
        match processing {
            Some(p) if (0..=rtt).contains(&p) => {
                self.server_processing.record(p);
                self.rtt_net.record(rtt - p);
            }
            Some(p) => {
                self.counts.implausible_processing += 1;
                self.implausible_processing.record(p);
            }
            None => {}
        }
        if r.wall_ns != 0 {
            self.forward.record(r.wall_ns - slot.tx.as_ns());
        }
        if s.wall_ns != 0 {
            self.backward.record(rx.as_ns() - s.wall_ns);
        }
    }

    /// Closes the count: every probe sent and not answered is lost.
    pub fn finish(&mut self) {
        self.counts.lost = self.counts.sent.saturating_sub(self.counts.answered);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use misura_wire::irtt::Time;
    use misura_wire::irtt_params::{Clock, ReceivedStats};

    fn layout(stamp_at: StampAt) -> Layout {
        Layout {
            hmac: false,
            received_stats: ReceivedStats::Both,
            stamp_at,
            clock: Clock::Both,
        }
    }

    fn echo(seqno: u32, rx: i64, tx: i64) -> Echo {
        Echo {
            seqno,
            received_count: Some(seqno + 1),
            receive: Time {
                wall_ns: rx,
                mono_ns: rx - 1000,
            },
            send: Time {
                wall_ns: tx,
                mono_ns: tx - 1000,
            },
            ..Echo::default()
        }
    }

    #[test]
    fn separates_processing_and_counts_every_reply_once() {
        let mut t = Tally::new(layout(StampAt::Both));
        t.sent(0, Instant::from_ns(1_000));
        t.tx_stamp(0, Instant::from_ns(1_100));
        t.sent(1, Instant::from_ns(2_000));
        // Server: receive at 1_600, send at 1_700 (100 ns processing).
        t.reply(
            &echo(0, 1_600, 1_700),
            Instant::from_ns(2_100),
            Instant::from_ns(2_300),
        );
        t.reply(
            &echo(0, 1_600, 1_700),
            Instant::from_ns(2_100),
            Instant::from_ns(2_300),
        );
        t.reply(
            &echo(7, 0, 0),
            Instant::from_ns(9_000),
            Instant::from_ns(9_000),
        );
        t.finish();
        assert_eq!(t.rtt.max(), Some(1_000));
        assert_eq!(t.user_rtt.max(), Some(1_300));
        assert_eq!(t.server_processing.max(), Some(100));
        assert_eq!(t.rtt_net.max(), Some(900));
        assert_eq!((t.forward.max(), t.backward.max()), (Some(500), Some(400)));
        let c = t.counts;
        assert_eq!(
            (c.sent, c.answered, c.duplicates, c.unmatched, c.lost),
            (2, 1, 1, 1, 1)
        );
        assert_eq!(c.tx_user_clock, 0);
        assert_eq!(t.server_received, Some(1));
    }

    #[test]
    fn impossible_processing_is_named_and_kept_out() {
        // Issue 33 item 9: a server claiming -1 s, or more than the RTT.
        let mut t = Tally::new(layout(StampAt::Both));
        for (seq, (rx, tx)) in [
            (1_600, 1_700),
            (1_600, 1_600 - 1_000_000_000),
            (1_100, 9_000),
        ]
        .into_iter()
        .enumerate()
        {
            t.sent(seq as u32, Instant::from_ns(1_000));
            t.reply(
                &echo(seq as u32, rx, tx),
                Instant::from_ns(2_000),
                Instant::from_ns(2_000),
            );
        }
        assert_eq!(t.counts.answered, 3);
        assert_eq!(t.rtt.count(), 3, "the RTT itself is misura's own");
        assert_eq!(t.server_processing.count(), 1);
        assert_eq!(t.rtt_net.min(), Some(900), "never negative");
        assert_eq!(t.counts.implausible_processing, 2);
        assert_eq!(t.implausible_processing.min(), Some(-1_000_000_000));
        assert_eq!(t.implausible_processing.max(), Some(7_900));
        // A received count past what was sent is not taken.
        t.sent(3, Instant::from_ns(1_000));
        let mut e = echo(3, 1_600, 1_700);
        e.received_count = Some(4_000_000_000);
        t.reply(&e, Instant::from_ns(2_000), Instant::from_ns(2_000));
        assert_eq!(t.counts.implausible_received_count, 1);
        assert_eq!(t.server_received, Some(3));
    }

    #[test]
    fn a_midpoint_gives_no_processing_time() {
        let mut t = Tally::new(layout(StampAt::Midpoint));
        t.sent(0, Instant::from_ns(1_000));
        t.reply(
            &echo(0, 1_500, 1_500),
            Instant::from_ns(2_000),
            Instant::from_ns(2_000),
        );
        assert_eq!(t.server_processing.count(), 0);
        assert_eq!(t.stamps.midpoint_wall, 1);
        assert_eq!(t.counts.tx_user_clock, 1);
    }
}
