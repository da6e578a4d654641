//! Frames sent and not yet accounted for: the [`SeqRing`] indexed by
//! sequence number, so matching a received frame to its TX window is one
//! array access and memory stays bounded however long the run.
//!
//! A frame leaves the ring, in sequence order, when it is complete (received,
//! and its kernel TX stamp read when TX stamps are expected) or when it has
//! waited longer than the timeout (then it is lost, or received without a TX
//! stamp). Nothing here allocates after construction.

use crate::seqring::{RingCounts, SeqRing};
use crate::time::{Instant, Span};
use crate::window::FrameRecord;

/// The TX side of a frame, recorded right after `send()`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct TxRecord {
    pub seq: u64,
    pub size_index: u16,
    pub payload_bytes: u16,
    pub frame_bytes: u16,
    pub tx1: Instant,
    pub tx2: Instant,
}

/// What became of a TX stamp.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TxStampMatch {
    /// The frame's first TX stamp (with two messages a frame, the one that
    /// completes it): used.
    First,
    /// One of two expected TX stamps (software and hardware come in two
    /// error-queue messages with `SOF_TIMESTAMPING_OPT_TX_SWHW`); the frame
    /// still waits for the other.
    Partial,
    /// The frame already had one (stamped again further along): not used.
    Again,
    /// The frame's record is closed (the stamp came after the timeout).
    NotInFlight,
}

/// What became of a received frame: [`crate::seqring::Arrival`] (one ring
/// and one set of counters for the frames and for STAMP's probes).
pub use crate::seqring::Arrival;

#[derive(Copy, Clone, Debug, Default)]
struct Slot {
    rec: FrameRecord,
    /// TX stamp messages matched so far.
    tx_stamps: u8,
}

/// The ring of frames in flight, indexed by sequence number.
#[derive(Debug)]
pub struct InFlight {
    ring: SeqRing<Slot>,
    expect_tx_stamp: bool,
    /// TX stamp messages a frame gets: 1, or 2 when software and hardware
    /// stamps come separately.
    stamps_per_frame: u8,
    /// The frame released last had every TX stamp it was waiting for.
    last_tx_complete: bool,
}

impl InFlight {
    /// `capacity` is rounded up to a power of two. Sequence numbers start at
    /// `first_seq` and must be sent in order.
    pub fn new(capacity: usize, expect_tx_stamp: bool, first_seq: u64) -> InFlight {
        InFlight {
            ring: SeqRing::new(capacity, first_seq),
            expect_tx_stamp,
            stamps_per_frame: 1,
            last_tx_complete: true,
        }
    }

    pub fn capacity(&self) -> usize {
        self.ring.capacity()
    }

    /// Frames sent and not yet released.
    pub fn outstanding(&self) -> u64 {
        self.ring.outstanding()
    }

    /// True when sending another frame would overwrite an unreleased one.
    pub fn is_full(&self) -> bool {
        self.ring.is_full()
    }

    /// The sequence number the next frame must carry.
    pub fn next_seq(&self) -> u64 {
        self.ring.next_index()
    }

    /// Record a frame just sent. Its sequence number must be `next_seq()` and
    /// the ring must not be full.
    pub fn on_sent(&mut self, tx: TxRecord) {
        assert_eq!(
            tx.seq,
            self.next_seq(),
            "frames must be sent in sequence order"
        );
        self.ring.push(Slot {
            rec: FrameRecord {
                seq: tx.seq,
                size_index: tx.size_index,
                payload_bytes: tx.payload_bytes,
                frame_bytes: tx.frame_bytes,
                tx1: tx.tx1,
                tx2: tx.tx2,
                ..FrameRecord::default()
            },
            tx_stamps: 0,
        });
    }

    /// Attach the kernel/NIC TX stamp of frame `seq` (read from the error
    /// queue). The first stamp is the frame's TX instant: a frame that a
    /// later device transmits again inside this host (a veth in another
    /// namespace, a bridge port) can be stamped again, and those later
    /// stamps are reported as `Again` and not used.
    pub fn on_tx_stamp(
        &mut self,
        seq: u64,
        software: Option<Instant>,
        hardware: Option<Instant>,
    ) -> TxStampMatch {
        let per = self.stamps_per_frame;
        match self.ring.get_mut(seq) {
            Some(slot) if slot.tx_stamps >= per => TxStampMatch::Again,
            // With two messages, a second of the same kind is a repeat.
            Some(slot)
                if slot.tx_stamps > 0
                    && (software.is_some() && slot.rec.tx_kernel.is_some()
                        || hardware.is_some() && slot.rec.tx_hw.is_some()) =>
            {
                TxStampMatch::Again
            }
            Some(slot) => {
                if software.is_some() {
                    slot.rec.tx_kernel = software;
                }
                if hardware.is_some() {
                    slot.rec.tx_hw = hardware;
                }
                // One message with both stamps is all a frame gets.
                let both = software.is_some() && hardware.is_some();
                slot.tx_stamps = if both { per } else { slot.tx_stamps + 1 };
                if slot.tx_stamps >= per {
                    TxStampMatch::First
                } else {
                    TxStampMatch::Partial
                }
            }
            None => TxStampMatch::NotInFlight,
        }
    }

    /// A frame with sequence number `seq` arrived, bracketed by `[rx1, rx2]`.
    pub fn on_received(
        &mut self,
        seq: u64,
        rx1: Instant,
        rx2: Instant,
        rx_kernel: Option<Instant>,
        rx_hw: Option<Instant>,
    ) -> Arrival {
        let arrival = self.ring.arrive(seq);
        if let (Arrival::Matched { reordered }, Some(slot)) = (arrival, self.ring.get_mut(seq)) {
            slot.rec.rx1 = rx1;
            slot.rec.rx2 = rx2;
            slot.rec.rx_kernel = rx_kernel;
            slot.rec.rx_hw = rx_hw;
            slot.rec.reordered = reordered;
        }
        arrival
    }

    /// Release the oldest frame if it is complete, or if it has waited more
    /// than `timeout` since `TX2` (then it is lost, or kept without a TX stamp).
    pub fn pop_complete(&mut self, now: Instant, timeout: Span) -> Option<FrameRecord> {
        let (slot, received) = self.ring.oldest()?;
        let complete =
            received && (slot.tx_stamps >= self.stamps_per_frame || !self.expect_tx_stamp);
        if complete || now - slot.rec.tx2 > timeout {
            return self.pop_any();
        }
        None
    }

    /// The first instant at which `pop_complete` gives up waiting for the
    /// oldest frame (`now − TX2 > timeout`), if any frame is in flight.
    pub fn oldest_deadline(&self, timeout: Span) -> Option<Instant> {
        self.ring.oldest().map(|(slot, _)| {
            slot.rec
                .tx2
                .saturating_add(timeout)
                .saturating_add(Span::from_ns(1))
        })
    }

    /// Release the oldest frame whatever its state (end of run).
    pub fn pop_any(&mut self) -> Option<FrameRecord> {
        let (slot, received) = self.ring.pop()?;
        let mut rec = slot.rec;
        rec.lost = !received;
        self.last_tx_complete = slot.tx_stamps >= self.stamps_per_frame;
        Some(rec)
    }

    /// TX stamp messages each frame gets (1 or 2; see [`TxStampMatch::Partial`]).
    pub fn set_stamps_per_frame(&mut self, n: u8) {
        self.stamps_per_frame = n.clamp(1, 2);
    }

    /// Whether the frame released last had all its TX stamps.
    pub fn released_tx_complete(&self) -> bool {
        self.last_tx_complete
    }

    /// What the ring counted (duplicates, late, unknown, reordered).
    pub fn counts(&self) -> RingCounts {
        self.ring.counts()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_time::{at, span};

    fn tx(seq: u64, t: i64) -> TxRecord {
        TxRecord {
            seq,
            size_index: 0,
            payload_bytes: 46,
            frame_bytes: 64,
            tx1: at(t),
            tx2: at(t + 10),
        }
    }

    #[test]
    fn matched_frames_leave_in_order_once_complete() {
        let mut r = InFlight::new(8, true, 0);
        r.on_sent(tx(0, 0));
        r.on_sent(tx(1, 100));
        assert_eq!(
            r.on_received(1, at(150), at(160), Some(at(155)), None),
            Arrival::Matched { reordered: false }
        );
        assert_eq!(r.on_tx_stamp(1, Some(at(105)), None), TxStampMatch::First);
        assert_eq!(r.on_tx_stamp(1, Some(at(999)), None), TxStampMatch::Again);
        // Frame 1 is complete but frame 0 holds the head.
        assert_eq!(r.pop_complete(at(200), span(1_000)), None);
        assert_eq!(
            r.on_received(0, at(170), at(180), Some(at(175)), None),
            Arrival::Matched { reordered: true }
        );
        assert_eq!(r.on_tx_stamp(0, Some(at(5)), None), TxStampMatch::First);
        let a = r.pop_complete(at(200), span(1_000)).unwrap();
        let b = r.pop_complete(at(200), span(1_000)).unwrap();
        assert_eq!(
            (a.seq, a.reordered, a.kernel_latency()),
            (0, true, Some(span(170)))
        );
        assert_eq!(
            (b.seq, b.reordered, b.kernel_latency()),
            (1, false, Some(span(50)))
        );
        assert_eq!(r.counts().reordered, 1);
        assert_eq!(r.outstanding(), 0);
    }

    #[test]
    fn timeout_declares_loss_and_late_arrivals_are_counted() {
        let mut r = InFlight::new(4, false, 10);
        r.on_sent(tx(10, 0));
        assert_eq!(r.pop_complete(at(500), span(1_000)), None);
        assert_eq!(r.oldest_deadline(span(1_000)), Some(at(1_011)));
        assert_eq!(r.pop_complete(at(1_010), span(1_000)), None);
        let lost = r.pop_complete(at(1_011), span(1_000)).unwrap();
        assert!(lost.lost);
        assert_eq!(lost.mul(), None);
        assert_eq!(r.oldest_deadline(span(1_000)), None);
        assert_eq!(r.on_received(10, at(1), at(2), None, None), Arrival::Late);
        assert_eq!(
            r.on_received(11, at(1), at(2), None, None),
            Arrival::Unknown
        );
        assert_eq!((r.counts().late, r.counts().unknown), (1, 1));
    }

    #[test]
    fn duplicates_and_missing_tx_stamp() {
        let mut r = InFlight::new(4, true, 0);
        r.on_sent(tx(0, 0));
        assert!(matches!(
            r.on_received(0, at(20), at(30), Some(at(25)), None),
            Arrival::Matched { .. }
        ));
        assert_eq!(
            r.on_received(0, at(40), at(50), Some(at(45)), None),
            Arrival::Duplicate
        );
        // Received, but the TX stamp never comes: released at the timeout,
        // not lost, with no kernel latency.
        assert_eq!(r.pop_complete(at(100), span(1_000)), None);
        let f = r.pop_complete(at(2_000), span(1_000)).unwrap();
        assert!(!f.lost);
        assert_eq!(f.tx_kernel, None);
        assert_eq!(f.kernel_latency(), None);
        assert_eq!(r.counts().duplicates, 1);
    }

    #[test]
    fn ring_capacity_bounds_what_is_in_flight() {
        let mut r = InFlight::new(3, false, 0);
        assert_eq!(r.capacity(), 4);
        for s in 0..4 {
            r.on_sent(tx(s, s as i64));
        }
        assert!(r.is_full());
        assert!(r.pop_any().unwrap().lost);
        assert!(!r.is_full());
        r.on_sent(tx(4, 4));
        assert!(matches!(
            r.on_received(4, at(5), at(6), None, None),
            Arrival::Matched { .. }
        ));
        // Slot of seq 0 now holds seq 4; seq 0 is closed.
        assert_eq!(r.on_received(0, at(5), at(6), None, None), Arrival::Late);
    }

    #[test]
    fn software_and_hardware_tx_stamps_in_two_messages_complete_a_frame() {
        let mut r = InFlight::new(8, true, 0);
        r.set_stamps_per_frame(2);
        r.on_sent(tx(0, 100));
        r.on_sent(tx(1, 200));
        assert_eq!(r.on_tx_stamp(0, Some(at(105)), None), TxStampMatch::Partial);
        assert_eq!(
            r.on_tx_stamp(0, Some(at(106)), None),
            TxStampMatch::Again,
            "a second software stamp"
        );
        assert_eq!(
            r.on_received(0, at(300), at(310), Some(at(305)), Some(at(1_000_305))),
            Arrival::Matched { reordered: false }
        );
        assert_eq!(
            r.pop_complete(at(400), span(1_000)),
            None,
            "still waits for the NIC's stamp"
        );
        assert_eq!(
            r.on_tx_stamp(0, None, Some(at(1_000_104))),
            TxStampMatch::First
        );
        let rec = r.pop_complete(at(400), span(1_000)).unwrap();
        assert_eq!(
            (rec.tx_kernel, rec.tx_hw),
            (Some(at(105)), Some(at(1_000_104)))
        );
        assert!(r.released_tx_complete());
        // Frame 1's NIC stamp never comes: released at the timeout with the
        // kernel's, and known to be incomplete.
        assert_eq!(r.on_tx_stamp(1, Some(at(205)), None), TxStampMatch::Partial);
        r.on_received(1, at(300), at(310), Some(at(305)), None);
        let rec = r.pop_complete(at(1_300), span(1_000)).unwrap();
        assert_eq!((rec.tx_kernel, rec.tx_hw), (Some(at(205)), None));
        assert!(!r.released_tx_complete());
        // One message with both completes at once.
        r.on_sent(tx(2, 300));
        assert_eq!(
            r.on_tx_stamp(2, Some(at(1)), Some(at(2))),
            TxStampMatch::First
        );
    }
}
