//! The STAMP Session-Sender's bookkeeping, without I/O: probes in flight in
//! the [`SeqRing`] the one-way frames use too, matched to their replies, their kernel TX stamps and the
//! reflector's two-step Follow-Up Telemetry, and released in order when
//! complete or timed out.
//!
//! The reflector learns the precise transmit stamp of a reply only after
//! sending it, so reply k+1 carries reply k's stamp in its Follow-Up TLV
//! (RFC 8972 §4.7). A probe is therefore complete when its reply is in, its
//! own kernel TX stamp is in, and either the follow-up for its reply arrived
//! or the next reply came without one (the reflector does not do two-step
//! for it). The last probe of a run waits for the timeout.

use crate::rtt::ProbeTimes;
use crate::seqring::{RingCounts, SeqRing};
use crate::time::{Instant, Span};
use serde::{Deserialize, Serialize};

/// Everything known about one probe when it is released.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeRecord {
    /// Session-Sender sequence number.
    pub seq: u32,
    pub size_index: u16,
    /// Bytes of the request (UDP payload, or Ethernet payload for raw probes).
    pub request_bytes: u16,
    /// Bytes of the reply as received.
    pub response_bytes: u16,
    /// Client user clock just before the send call, and just after.
    pub tx1: Instant,
    pub tx2: Instant,
    pub tx_kernel: Option<Instant>,
    pub tx_hw: Option<Instant>,
    /// Client user clock just after the receive that returned the reply.
    pub rx2: Instant,
    pub rx_kernel: Option<Instant>,
    pub rx_hw: Option<Instant>,
    /// The reflector's own sequence number of the reply.
    pub reflector_seq: Option<u32>,
    /// Reflector receive stamp (its clock).
    pub reflector_rx: Option<Instant>,
    /// Reflector transmit stamp: the follow-up's precise one when it came,
    /// else the reply's own Timestamp field.
    pub reflector_tx: Option<Instant>,
    /// `reflector_tx` is the precise (follow-up) stamp.
    pub reflector_tx_precise: bool,
    /// How the reflector took `reflector_rx`, as its reply's Timestamp
    /// Information TLV said (an RFC 8972 timestamp method; 0 when the reply
    /// stated none).
    #[serde(default)]
    pub reflector_rx_method: u8,
    /// How it took `reflector_tx`: the follow-up's mode for the precise
    /// stamp, else the TLV's Timestamp Out (0 when not stated).
    #[serde(default)]
    pub reflector_tx_method: u8,
    /// TTL / hop limit of the request as the reflector saw it.
    pub sender_ttl: Option<u8>,
    pub lost: bool,
    pub reordered: bool,
    /// Further copies of the reply received.
    pub duplicates: u16,
}

impl ProbeRecord {
    /// The instants for the RTT decomposition, with kernel stamps where
    /// present (hardware stamps first when both ends of a pair have them).
    pub fn times(&self) -> ProbeTimes {
        let (tx, rx) = match (self.tx_hw, self.rx_hw) {
            (Some(t), Some(r)) => (Some(t), Some(r)),
            _ => (self.tx_kernel, self.rx_kernel),
        };
        self.times_with(tx, rx)
    }

    /// The instants with the kernel's software stamps only (the NIC's left out).
    pub fn software_times(&self) -> ProbeTimes {
        self.times_with(self.tx_kernel, self.rx_kernel)
    }

    /// The NIC's RTT, RX − TX hardware stamp (one PTP clock), when both came.
    pub fn hardware_rtt(&self) -> Option<Span> {
        Some(self.rx_hw? - self.tx_hw?)
    }

    /// Which client stamps [`ProbeRecord::times`] used.
    pub fn stamp_source(&self) -> crate::TimestampSource {
        use crate::TimestampSource as S;
        match (self.tx_hw, self.rx_hw, self.tx_kernel, self.rx_kernel) {
            (Some(_), Some(_), _, _) => S::NicHardware,
            (_, _, Some(_), Some(_)) => S::KernelSoftware,
            _ => S::UserClock,
        }
    }

    fn times_with(&self, tx: Option<Instant>, rx: Option<Instant>) -> ProbeTimes {
        ProbeTimes {
            tx1: self.tx1,
            tx_kernel: tx,
            reflector_rx: self.reflector_rx,
            reflector_tx: self.reflector_tx,
            rx_kernel: rx,
            rx2: self.rx2,
        }
    }
}

/// What the reply carried, as the caller decoded it.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Reply {
    /// Session-Sender sequence number echoed by the reflector.
    pub sender_seq: u32,
    pub reflector_seq: u32,
    pub reflector_rx: Instant,
    /// The reply's Timestamp field.
    pub reflector_tx: Instant,
    pub sender_ttl: u8,
    pub response_bytes: u16,
    /// Follow-Up Telemetry: (sequence number of the previous reply, its
    /// precise transmit stamp), when present and filled in.
    pub follow_up: Option<(u32, Instant)>,
    /// The follow-up stamp's timestamp method (the TLV's mode).
    pub follow_up_method: u8,
    /// The reply's Timestamp Information TLV: how the reflector took its
    /// RX stamp and the reply's Timestamp (RFC 8972 timestamp methods; 0
    /// when the reply stated none). Per reply: a NIC may stamp some
    /// requests and not others.
    pub reflector_rx_method: u8,
    pub reflector_tx_method: u8,
    pub rx2: Instant,
    pub rx_kernel: Option<Instant>,
    pub rx_hw: Option<Instant>,
}

/// What became of a reply: [`crate::seqring::Arrival`] (one ring and one
/// set of counters for the probes and for the one-way frames).
pub use crate::seqring::Arrival as ReplyMatch;

#[derive(Copy, Clone, Debug, Default)]
struct Slot {
    rec: ProbeRecord,
    tx_stamped: bool,
    follow_up_closed: bool,
}

impl Slot {
    /// A probe times out this long after its reply (waiting for its TX stamp
    /// or follow-up) or, unanswered, after it was sent.
    fn since(&self, replied: bool) -> Instant {
        if replied {
            self.rec.rx2
        } else {
            self.rec.tx2
        }
    }
}

/// Probes in flight: the [`SeqRing`] indexed by the probe's number k in the
/// session (sequence numbers wrap at 2^32; k does not).
#[derive(Debug)]
pub struct Probes {
    ring: SeqRing<Slot>,
    first_seq: u32,
    expect_tx_stamp: bool,
    /// The NIC stamps sends too: a probe's TX stamp is complete with the
    /// hardware one (which comes after the software one).
    expect_hw_tx_stamp: bool,
    expect_follow_up: bool,
    last_reply: Option<(u32, u64)>,
    /// Probes in flight that have no reply yet.
    unanswered: u64,
    follow_ups: u64,
}

impl Probes {
    pub fn new(
        capacity: usize,
        first_seq: u32,
        expect_tx_stamp: bool,
        expect_follow_up: bool,
    ) -> Probes {
        Probes {
            ring: SeqRing::new(capacity.clamp(2, 1 << 20), 0),
            first_seq,
            expect_tx_stamp,
            expect_hw_tx_stamp: false,
            expect_follow_up,
            last_reply: None,
            unanswered: 0,
            follow_ups: 0,
        }
    }

    pub fn is_full(&self) -> bool {
        self.ring.is_full()
    }

    pub fn outstanding(&self) -> u64 {
        self.ring.outstanding()
    }

    /// Probes in flight whose reply has not come (yet): while none is, no
    /// reply is due and the caller need not look for one.
    pub fn unanswered(&self) -> u64 {
        self.unanswered
    }

    /// Sequence number of the next probe.
    pub fn next_seq(&self) -> u32 {
        self.first_seq.wrapping_add(self.ring.next_index() as u32)
    }

    /// The reflector turned out not to fill Follow-Up Telemetry: stop waiting for it.
    pub fn set_expect_follow_up(&mut self, on: bool) {
        self.expect_follow_up = on;
    }

    pub fn set_expect_tx_stamp(&mut self, on: bool) {
        self.expect_tx_stamp = on;
    }

    /// The NIC's TX stamps come beside the kernel's (`OPT_TX_SWHW`): a
    /// probe waits for its hardware stamp too (until its timeout).
    pub fn set_expect_hw_tx_stamp(&mut self, on: bool) {
        self.expect_hw_tx_stamp = on;
    }

    /// The index k of the probe sent with this sequence number: the latest
    /// one sent, released or not; `u64::MAX` (never sent) when none was.
    fn index_of(&self, seq: u32) -> u64 {
        let next = self.ring.next_index();
        let off = seq.wrapping_sub(self.first_seq) as u64;
        // Sequence numbers wrap at 2^32; the live window is far smaller.
        let base = next & !0xFFFF_FFFF;
        [base + off, base.wrapping_sub(1 << 32).wrapping_add(off)]
            .into_iter()
            .find(|&k| k < next)
            .unwrap_or(u64::MAX)
    }

    /// Record a probe just sent (the ring must not be full).
    pub fn on_sent(
        &mut self,
        size_index: u16,
        request_bytes: u16,
        tx1: Instant,
        tx2: Instant,
    ) -> u32 {
        let seq = self.next_seq();
        self.ring.push(Slot {
            rec: ProbeRecord {
                seq,
                size_index,
                request_bytes,
                tx1,
                tx2,
                ..ProbeRecord::default()
            },
            ..Slot::default()
        });
        self.unanswered += 1;
        seq
    }

    /// The kernel/NIC TX stamp of probe `seq`. The first stamp of each
    /// kind counts: with hardware stamps the kernel's and the NIC's come
    /// in two reports of the same send, and the probe's TX stamp is
    /// complete once the NIC's is in (when it is expected).
    pub fn on_tx_stamp(
        &mut self,
        seq: u32,
        software: Option<Instant>,
        hardware: Option<Instant>,
    ) -> bool {
        let k = self.index_of(seq);
        let Some(s) = self.ring.get_mut(k) else {
            return false;
        };
        let fresh = (software.is_some() && s.rec.tx_kernel.is_none())
            || (hardware.is_some() && s.rec.tx_hw.is_none());
        if s.tx_stamped && !fresh {
            return false;
        }
        s.rec.tx_kernel = s.rec.tx_kernel.or(software);
        s.rec.tx_hw = s.rec.tx_hw.or(hardware);
        s.tx_stamped = true;
        true
    }

    /// A reply arrived.
    pub fn on_reply(&mut self, r: &Reply) -> ReplyMatch {
        let k = self.index_of(r.sender_seq);
        if self.ring.get(k).is_none() {
            // Released already (late) or never sent (unknown).
            return self.ring.arrive(k);
        }
        // The follow-up refers to the reply sent just before this one.
        if let Some((fseq, fts)) = r.follow_up {
            if let Some(s) = self
                .follow_up_target(fseq)
                .and_then(|pk| self.ring.get_mut(pk))
            {
                s.rec.reflector_tx = Some(fts);
                s.rec.reflector_tx_precise = true;
                s.rec.reflector_tx_method = r.follow_up_method;
                s.follow_up_closed = true;
                self.follow_ups += 1;
            }
        }
        if let Some((_, pk)) = self.last_reply {
            if let Some(s) = self.ring.get_mut(pk).filter(|_| pk != k) {
                s.follow_up_closed = true;
            }
        }
        let arrival = self.ring.arrive(k);
        let s = self.ring.get_mut(k).expect("a live probe");
        match arrival {
            ReplyMatch::Duplicate => s.rec.duplicates = s.rec.duplicates.saturating_add(1),
            ReplyMatch::Matched { reordered } => {
                s.rec.reflector_seq = Some(r.reflector_seq);
                s.rec.reflector_rx = Some(r.reflector_rx);
                s.rec.reflector_rx_method = r.reflector_rx_method;
                if !s.rec.reflector_tx_precise {
                    s.rec.reflector_tx = Some(r.reflector_tx);
                    s.rec.reflector_tx_method = r.reflector_tx_method;
                }
                s.rec.sender_ttl = Some(r.sender_ttl);
                s.rec.response_bytes = r.response_bytes;
                s.rec.rx2 = r.rx2;
                s.rec.rx_kernel = r.rx_kernel;
                s.rec.rx_hw = r.rx_hw;
                s.rec.reordered = reordered;
                self.unanswered -= 1;
                self.last_reply = Some((r.reflector_seq, k));
            }
            ReplyMatch::Late | ReplyMatch::Unknown => {}
        }
        arrival
    }

    fn follow_up_target(&self, reflector_seq: u32) -> Option<u64> {
        match self.last_reply {
            Some((rs, k)) if rs == reflector_seq && k >= self.ring.oldest_index() => Some(k),
            // Stateless reflectors echo the sender's numbers.
            _ => {
                let k = self.index_of(reflector_seq);
                let s = self.ring.get(k)?;
                (self.ring.arrived(k) && s.rec.reflector_seq == Some(reflector_seq)).then_some(k)
            }
        }
    }

    /// Release the oldest probe if complete, or if it waited longer than
    /// `timeout` (lost when unanswered).
    pub fn pop_complete(&mut self, now: Instant, timeout: Span) -> Option<ProbeRecord> {
        let (s, replied) = self.ring.oldest()?;
        let expect_hw = self.expect_hw_tx_stamp;
        let tx_done =
            !self.expect_tx_stamp || (s.tx_stamped && (s.rec.tx_hw.is_some() || !expect_hw));
        let complete = replied && tx_done && (s.follow_up_closed || !self.expect_follow_up);
        if complete || now - s.since(replied) > timeout {
            return self.pop_any();
        }
        None
    }

    /// The instant from which [`Probes::pop_complete`] releases the oldest
    /// probe even if it is incomplete, when one is in flight.
    pub fn oldest_expiry(&self, timeout: Span) -> Option<Instant> {
        self.ring.oldest().map(|(s, replied)| {
            s.since(replied)
                .saturating_add(timeout)
                .saturating_add(Span::from_ns(1))
        })
    }

    /// Release the oldest probe whatever its state (end of run).
    pub fn pop_any(&mut self) -> Option<ProbeRecord> {
        let (s, replied) = self.ring.pop()?;
        if !replied {
            self.unanswered -= 1;
        }
        let mut rec = s.rec;
        rec.lost = !replied;
        Some(rec)
    }

    /// What the ring counted (duplicates, late, unknown, reordered).
    pub fn counts(&self) -> RingCounts {
        self.ring.counts()
    }

    pub fn follow_ups(&self) -> u64 {
        self.follow_ups
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_time::{at, span};

    fn reply(seq: u32, rx2: i64, fu: Option<(u32, i64)>) -> Reply {
        Reply {
            sender_seq: seq,
            reflector_seq: seq,
            reflector_rx: at(rx2 - 600),
            reflector_tx: at(rx2 - 400),
            sender_ttl: 64,
            response_bytes: 44,
            follow_up: fu.map(|(s, t)| (s, at(t))),
            follow_up_method: 2,
            reflector_rx_method: 2,
            reflector_tx_method: 2,
            rx2: at(rx2),
            rx_kernel: Some(at(rx2 - 100)),
            rx_hw: None,
        }
    }

    #[test]
    fn the_nics_tx_stamp_completes_a_probe_after_the_kernels() {
        let mut p = Probes::new(16, 7, true, false);
        p.set_expect_hw_tx_stamp(true);
        let s = p.on_sent(0, 44, at(0), at(10));
        assert!(p.on_tx_stamp(s, Some(at(15)), None));
        assert_eq!(
            p.on_reply(&reply(s, 1_000, None)),
            ReplyMatch::Matched { reordered: false }
        );
        assert!(
            p.pop_complete(at(1_001), span(1_000_000)).is_none(),
            "waits for the NIC's"
        );
        assert!(p.on_tx_stamp(s, None, Some(at(5_000_015))));
        let r = p.pop_complete(at(1_002), span(1_000_000)).unwrap();
        assert_eq!((r.tx_kernel, r.tx_hw), (Some(at(15)), Some(at(5_000_015))));
        assert!(!p.on_tx_stamp(s, Some(at(99)), Some(at(99))), "released");
        // A second report of a kind already in does not count.
        let s2 = p.on_sent(0, 44, at(20), at(30));
        assert!(p.on_tx_stamp(s2, Some(at(35)), None));
        assert!(!p.on_tx_stamp(s2, Some(at(36)), None));
        let rec = ProbeRecord {
            tx_kernel: Some(at(15)),
            rx_kernel: Some(at(900)),
            tx_hw: Some(at(5_000_015)),
            rx_hw: Some(at(5_000_815)),
            ..r
        };
        assert_eq!(rec.hardware_rtt(), Some(span(800)));
        assert_eq!(rec.software_times().kernel_rtt(), Some(span(885)));
        assert_eq!(rec.times().kernel_rtt(), Some(span(800)));
        assert_eq!(rec.stamp_source(), crate::TimestampSource::NicHardware);
    }

    #[test]
    fn two_step_follow_up_completes_the_previous_probe() {
        let mut p = Probes::new(16, 1000, true, true);
        let s0 = p.on_sent(0, 44, at(0), at(10));
        assert_eq!(s0, 1000);
        assert!(p.on_tx_stamp(s0, Some(at(5)), None));
        assert_eq!(
            p.on_reply(&reply(s0, 1_000, None)),
            ReplyMatch::Matched { reordered: false }
        );
        // Waiting for the follow-up of reply 0.
        assert_eq!(p.pop_complete(at(1_100), span(1_000_000)), None);
        let s1 = p.on_sent(0, 44, at(2_000), at(2_010));
        p.on_tx_stamp(s1, Some(at(2_005)), None);
        p.on_reply(&reply(s1, 3_000, Some((s0, 650))));
        let r0 = p
            .pop_complete(at(3_100), span(1_000_000))
            .expect("probe 0 complete");
        assert_eq!(r0.reflector_tx, Some(at(650)));
        assert!(r0.reflector_tx_precise);
        assert_eq!(r0.times().turnaround(), Some(span(650 - 400)));
        // The last probe waits for the timeout, then leaves with the reply's own stamp.
        assert_eq!(p.pop_complete(at(3_100), span(1_000_000)), None);
        let r1 = p.pop_complete(at(1_004_000), span(1_000_000)).unwrap();
        assert!(!r1.lost && !r1.reflector_tx_precise);
        assert_eq!(p.follow_ups(), 1);
    }

    /// Each probe keeps how the reflector took its stamps, as its own
    /// reply said (RX), or the follow-up that completed it (TX).
    #[test]
    fn each_probe_keeps_the_reflectors_methods_of_its_stamps() {
        let (hw, sw) = (1, 2);
        let mut p = Probes::new(16, 0, false, true);
        let a = p.on_sent(0, 44, at(0), at(1));
        p.on_reply(&Reply {
            reflector_rx_method: hw,
            ..reply(a, 100, None)
        });
        let b = p.on_sent(0, 44, at(200), at(201));
        p.on_reply(&Reply {
            reflector_rx_method: sw,
            follow_up_method: hw,
            ..reply(b, 300, Some((a, 50)))
        });
        let ra = p.pop_complete(at(301), span(1_000)).unwrap();
        assert_eq!(
            (
                ra.reflector_rx_method,
                ra.reflector_tx_method,
                ra.reflector_tx_precise
            ),
            (hw, hw, true)
        );
        let rb = p.pop_complete(at(10_000), span(1_000)).unwrap();
        assert_eq!(
            (
                rb.reflector_rx_method,
                rb.reflector_tx_method,
                rb.reflector_tx_precise
            ),
            (sw, sw, false),
            "no follow-up: the reply's Timestamp Out"
        );
    }

    #[test]
    fn reflector_without_follow_up_closes_on_the_next_reply() {
        let mut p = Probes::new(16, 0, false, true);
        let a = p.on_sent(0, 44, at(0), at(1));
        let b = p.on_sent(0, 44, at(2), at(3));
        p.on_reply(&reply(a, 100, None));
        assert_eq!(p.pop_complete(at(101), span(1_000)), None);
        p.on_reply(&reply(b, 200, None));
        assert_eq!(p.pop_complete(at(201), span(1_000)).unwrap().seq, a);
    }

    #[test]
    fn loss_duplicates_late_unknown_reorder() {
        let mut p = Probes::new(8, 7, false, false);
        let a = p.on_sent(0, 44, at(0), at(1));
        let b = p.on_sent(0, 44, at(10), at(11));
        assert_eq!(p.unanswered(), 2);
        assert_eq!(
            p.on_reply(&reply(b, 50, None)),
            ReplyMatch::Matched { reordered: false }
        );
        assert_eq!(p.on_reply(&reply(b, 60, None)), ReplyMatch::Duplicate);
        assert_eq!(p.unanswered(), 1, "a duplicate answers nothing more");
        let lost = p.pop_complete(at(2_000), span(1_000)).unwrap();
        assert!(lost.lost && lost.seq == a);
        assert_eq!(p.unanswered(), 0, "a lost probe is no longer awaited");
        assert_eq!(p.on_reply(&reply(a, 2_100, None)), ReplyMatch::Late);
        assert_eq!(p.on_reply(&reply(999, 2_100, None)), ReplyMatch::Unknown);
        assert_eq!(p.unanswered(), 0);
        let got = p.pop_complete(at(2_100), span(1_000)).unwrap();
        assert_eq!((got.seq, got.duplicates), (b, 1));
        // Reordering: reply for an earlier probe after a later one.
        let c = p.on_sent(0, 44, at(3_000), at(3_001));
        let d = p.on_sent(0, 44, at(3_010), at(3_011));
        p.on_reply(&reply(d, 3_100, None));
        assert_eq!(
            p.on_reply(&reply(c, 3_200, None)),
            ReplyMatch::Matched { reordered: true }
        );
        assert_eq!(
            p.counts(),
            RingCounts {
                duplicates: 1,
                late: 1,
                unknown: 1,
                reordered: 1
            }
        );
    }

    #[test]
    fn sequence_numbers_wrap() {
        let mut p = Probes::new(4, u32::MAX - 1, false, false);
        let mut seqs = Vec::new();
        for t in 0..4 {
            let s = p.on_sent(0, 44, at(t), at(t));
            seqs.push(s);
            p.on_reply(&reply(s, 100 + t, None));
            assert!(p.pop_complete(at(100 + t), span(1_000)).is_some());
        }
        assert_eq!(seqs, vec![u32::MAX - 1, u32::MAX, 0, 1]);
    }
}
