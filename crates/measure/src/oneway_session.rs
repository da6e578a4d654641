//! The bookkeeping of the one-way measuring loop (seed 000), without I/O.
//!
//! The binary's loop owns the two raw ports and the clock; this session owns
//! everything the method decides: when the next frame is due (the periodic
//! schedule with postponement), which sequence number and payload size it
//! carries, its TX window, the RX window of every received frame (`RX1` is
//! the instant before the last empty poll, `RX2` the instant after the
//! receive), the matching of received frames and kernel TX stamps to the
//! frames sent, the loss/duplicate/reorder/late/unknown counts, and when the
//! run ends (count reached, duration over or a stop, then a drain bounded by
//! the timeout).
//!
//! One turn of the loop, with `now` read from the caller's clock:
//!
//! ```text
//! poll_transmit(now) ─ Some(frame) ─> patch seq into the pre-built frame,
//!                                      TX1, send() (on_send_blocked on EAGAIN), TX2,
//!                                      on_sent(seq, TX1, TX2)
//! while wants_tx_stamps(): read the error queue ─> handle_tx_stamp / on_tx_stamps_drained
//! t = clock; recv() ─ empty ─> on_empty_poll(t)
//!                   └ frame ─> RX2 = clock; handle_received(bytes, RxMeta { rx2, … })
//! while let Some(rec) = poll_record(t) { hand rec to the analysis }
//! if is_finished(t) { stop looping }
//! ```
//!
//! Nothing here reads a clock, opens a socket, spawns a thread or allocates
//! after `new`, so a simulation can drive it with a virtual clock
//! (`tests/sim_oneway.rs`).

use crate::inflight::{Arrival, InFlight, TxRecord, TxStampMatch};
use crate::schedule::{Pattern, Poll, Schedule, SizeOrder, SizePlan};
use crate::time::{Instant, Period, Span};
use crate::window::FrameRecord;
use misura_wire::probe::{self, ProbeRepr};
use misura_wire::EthernetFrame;

/// Probe `stream` value of warm-up frames, so a late warm-up frame is never
/// taken for a measured one.
pub const WARMUP_STREAM: u16 = 0xFFFF;
/// Probe `stream` value of measured frames.
pub const MEASURE_STREAM: u16 = 0;

/// What a frame read from a port is to this session.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Classified {
    /// One of this session's probes.
    Probe { stream: u16, seq: u64 },
    /// Another EtherType, or a probe of another session.
    Foreign,
    /// This EtherType, but not a valid probe (or not even an Ethernet header).
    Malformed,
}

/// Checked parse of untrusted bytes: an Ethernet frame (without FCS) that
/// should carry one of session `session_id`'s probes.
pub fn classify(frame: &[u8], ethertype: u16, session_id: u32) -> Classified {
    let Ok(eth) = EthernetFrame::new_checked(frame) else {
        return Classified::Malformed;
    };
    if eth.ethertype() != ethertype {
        return Classified::Foreign;
    }
    // PTP-wrapped probes (NICs that stamp only PTP): PTP traffic that is not
    // misura's (an Announce, another tool's Sync) is foreign, not malformed.
    let payload = match misura_wire::ptp::probe_payload(ethertype, eth.payload()) {
        Ok(p) => p,
        Err(_) if ethertype == misura_wire::ptp::ETHERTYPE_PTP => return Classified::Foreign,
        Err(_) => return Classified::Malformed,
    };
    let payload = if ethertype == misura_wire::ptp::ETHERTYPE_PTP
        && !payload.starts_with(&misura_wire::probe::MAGIC.to_be_bytes())
    {
        return Classified::Foreign;
    } else {
        payload
    };
    match ProbeRepr::parse(payload) {
        Ok(p) if p.session_id == session_id => Classified::Probe {
            stream: p.stream,
            seq: p.seq,
        },
        Ok(_) => Classified::Foreign,
        Err(_) => Classified::Malformed,
    }
}

/// A one-way run, as resolved from the flags.
#[derive(Clone, Debug, PartialEq)]
pub struct OnewayPlan {
    pub session_id: u32,
    pub ethertype: u16,
    /// Payload sizes `P` (probe header included), cycled by `order`.
    pub sizes: Vec<usize>,
    pub order: SizeOrder,
    /// The frames carry an 802.1Q tag (4 bytes more on the wire).
    pub vlan: bool,
    pub pattern: Pattern,
    pub period: Period,
    /// How late a frame may leave before it is postponed to the next period.
    pub late_tolerance: Span,
    /// Seed of the Poisson schedule.
    pub seed: u64,
    /// The first frame is due this long after the session starts.
    pub start_delay: Span,
    /// Stop sending after this many frames …
    pub count: Option<u64>,
    /// … or this long after the session started, whichever comes first.
    pub duration: Option<Span>,
    /// The run's frame count or its estimate (splits sizes into blocks).
    pub expected_frames: Option<u64>,
    /// How long a frame may wait for its arrival (and TX stamp); also the
    /// drain after the last send.
    pub timeout: Span,
    /// The TX port returns kernel/NIC TX stamps on its error queue.
    pub expect_tx_stamp: bool,
    /// Frames in flight at most (rounded up to a power of two).
    pub ring_capacity: usize,
    /// TX stamp messages per frame: 1, or 2 when the port's software and
    /// NIC hardware TX stamps come separately (`OPT_TX_SWHW`).
    pub tx_stamp_messages: u8,
}

/// A plan the session cannot run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("the plan has no payload size")]
    NoSizes,
    #[error("payload size {0} is outside {min}..={max} bytes", min = probe::HEADER_LEN, max = probe::MAX_PAYLOAD)]
    BadSize(usize),
    #[error("the timeout must be positive, got {0} ns")]
    BadTimeout(i64),
}

/// The next frame to send: the caller patches `seq` into its pre-built
/// frame of payload size number `size_index`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Transmit {
    pub seq: u64,
    pub size_index: usize,
}

/// What the RX port said about a frame it returned.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct RxMeta {
    /// The instant just after the receive that returned the frame.
    pub rx2: Instant,
    /// Kernel software RX stamp.
    pub software: Option<Instant>,
    /// NIC hardware RX stamp.
    pub hardware: Option<Instant>,
    /// The frame was sent by this host (a raw socket sees its own frames).
    pub outgoing: bool,
}

/// What became of a received frame.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Received {
    /// A measured probe of this session, matched (or not) by the ring.
    Probe(Arrival),
    /// A probe of this session from another stream (a late warm-up frame,
    /// or one forged as such): not measured, counted as foreign (issue 33,
    /// item 12: it was counted nowhere).
    OtherStream,
    Foreign,
    Malformed,
}

/// The loop's counters, exact integers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OnewayCounters {
    pub sent: u64,
    /// Frames of other traffic, including this host's own outgoing ones.
    pub foreign: u64,
    pub malformed: u64,
    /// `send()` refused a frame (queue full) and was tried again.
    pub send_retries: u64,
    /// Loop turns in which a due frame waited because the ring was full.
    pub stalls: u64,
    pub duplicates: u64,
    pub late: u64,
    /// This session's probes with a sequence number never sent.
    pub unknown: u64,
    pub reordered: u64,
    pub postponed: u64,
    pub skipped_slots: u64,
    pub tx_stamp_errors: u64,
    pub tx_stamps_read: u64,
    /// TX stamps that came after their frame's record closed, or of no frame
    /// of this run.
    pub tx_stamps_unmatched: u64,
    /// Further TX stamps of a frame already stamped (another device in this
    /// host transmitted the same buffer again, e.g. the SUT's veth).
    pub tx_stamps_again: u64,
    /// Times the RX port reported its link down (`ENETDOWN`) during the run.
    pub rx_link_down: u64,
    /// Frames that could not leave because the TX port was down (they
    /// count as sent, and lost).
    pub tx_link_down: u64,
    pub started: Instant,
    /// `TX2` of the last frame sent (0 before the first).
    pub last_send: Instant,
    /// The `now` of the `poll_record` that found the session finished with
    /// nothing left to release (0 until then).
    pub ended: Instant,
}

/// The one-way session: see the module documentation for the turn of the
/// loop that drives it.
#[derive(Debug)]
pub struct OnewaySession {
    session_id: u32,
    ethertype: u16,
    /// `(payload_bytes, frame_bytes)` per size index.
    frame_sizes: Vec<(u16, u16)>,
    sizes: SizePlan,
    schedule: Schedule,
    ring: InFlight,
    count: Option<u64>,
    end: Option<Instant>,
    timeout: Span,
    expect_tx_stamp: bool,
    c: OnewayCounters,
    /// The frame `poll_transmit` handed out and `on_sent` has not yet closed.
    pending: Option<Transmit>,
    /// Frames sent whose first TX stamp has not been read.
    stamps_pending: u64,
    /// Read the error queue to the end before the next receive.
    drain_errqueue: bool,
    /// `RX1` of the next received frame: the instant before the last empty poll.
    rx1: Instant,
    sending: bool,
    stopped: bool,
    drain_until: Instant,
    ended: Option<Instant>,
}

impl OnewaySession {
    /// A session started at `now`; its first frame is due at
    /// `now + plan.start_delay`.
    pub fn new(plan: &OnewayPlan, now: Instant) -> Result<OnewaySession, PlanError> {
        if plan.sizes.is_empty() {
            return Err(PlanError::NoSizes);
        }
        if let Some(&p) = plan
            .sizes
            .iter()
            .find(|&&p| !(probe::HEADER_LEN..=probe::MAX_PAYLOAD).contains(&p))
        {
            return Err(PlanError::BadSize(p));
        }
        if plan.timeout < Span::from_ns(1) {
            return Err(PlanError::BadTimeout(plan.timeout.as_ns()));
        }
        let frame_sizes = plan
            .sizes
            .iter()
            .map(|&p| (p as u16, probe::frame_bytes(p, plan.vlan) as u16))
            .collect();
        let sizes = SizePlan::new(
            plan.sizes.clone(),
            plan.order,
            plan.expected_frames.unwrap_or(u64::MAX),
        );
        let schedule = Schedule::new(
            plan.pattern,
            plan.period,
            plan.late_tolerance,
            now.saturating_add(plan.start_delay),
            plan.seed,
        );
        Ok(OnewaySession {
            session_id: plan.session_id,
            ethertype: plan.ethertype,
            frame_sizes,
            sizes,
            schedule,
            ring: {
                let mut r = InFlight::new(plan.ring_capacity, plan.expect_tx_stamp, 0);
                r.set_stamps_per_frame(plan.tx_stamp_messages);
                r
            },
            count: plan.count,
            end: plan.duration.map(|d| now.saturating_add(d)),
            timeout: plan.timeout,
            expect_tx_stamp: plan.expect_tx_stamp,
            c: OnewayCounters {
                started: now,
                ..OnewayCounters::default()
            },
            pending: None,
            stamps_pending: 0,
            drain_errqueue: false,
            rx1: now,
            sending: true,
            stopped: false,
            drain_until: Instant::MAX,
            ended: None,
        })
    }

    /// The frame to send now, if one is due. Once a frame is handed out the
    /// schedule counts it as sent: the caller must send it and call
    /// `on_sent` (until then the same frame is handed out again). Call once
    /// per turn of the loop: this is also where the count and duration
    /// rules end the sending phase.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Transmit> {
        if self.pending.is_some() || !self.sending {
            return self.pending;
        }
        let count_reached = self.count.is_some_and(|n| self.c.sent >= n);
        if count_reached || self.end.is_some_and(|e| now >= e) {
            self.end_sending(now);
            return None;
        }
        if self.ring.is_full() {
            self.c.stalls += 1;
            return None;
        }
        match self.schedule.poll(now) {
            Poll::Send { .. } => {
                let seq = self.ring.next_seq();
                let t = Transmit {
                    seq,
                    size_index: self.sizes.size_index(seq),
                };
                self.pending = Some(t);
                Some(t)
            }
            Poll::Wait { .. } => None,
        }
    }

    /// `send()` refused the frame (the queue was full); it will be tried again.
    pub fn on_send_blocked(&mut self) {
        self.c.send_retries += 1;
    }

    /// The frame `seq` from `poll_transmit` left inside `[tx1, tx2]`.
    ///
    /// # Panics
    /// If `seq` is not the frame `poll_transmit` handed out (a bug in the
    /// caller's loop, not a condition of the network).
    pub fn on_sent(&mut self, seq: u64, tx1: Instant, tx2: Instant) {
        let t = self.pending.take();
        assert_eq!(
            t.map(|t| t.seq),
            Some(seq),
            "on_sent must follow the poll_transmit that handed out the frame"
        );
        let si = t.map_or(0, |t| t.size_index);
        let (payload_bytes, frame_bytes) = self.frame_sizes[si];
        self.ring.on_sent(TxRecord {
            seq,
            size_index: si as u16,
            payload_bytes,
            frame_bytes,
            tx1,
            tx2,
        });
        self.c.sent += 1;
        self.c.last_send = tx2;
        if self.expect_tx_stamp {
            self.stamps_pending += 1;
            self.drain_errqueue = true;
        }
    }

    /// Whether to read the TX port's error queue now: a TX stamp is awaited,
    /// or the queue has not been read to the end since the last send (one
    /// frame can yield several stamps, and a queue left non-empty would fill
    /// the socket's buffer).
    pub fn wants_tx_stamps(&self) -> bool {
        self.stamps_pending > 0 || self.drain_errqueue
    }

    /// A TX stamp read from the error queue, with the copy of the frame it
    /// stamps (untrusted bytes: parsed and checked here).
    pub fn handle_tx_stamp(
        &mut self,
        frame: &[u8],
        software: Option<Instant>,
        hardware: Option<Instant>,
    ) -> TxStampMatch {
        match classify(frame, self.ethertype, self.session_id) {
            Classified::Probe {
                stream: MEASURE_STREAM,
                seq,
            } => self.on_tx_stamp(seq, software, hardware),
            _ => {
                self.c.tx_stamps_read += 1;
                self.c.tx_stamps_unmatched += 1;
                TxStampMatch::NotInFlight
            }
        }
    }

    /// The TX stamp of frame `seq` (already parsed by the caller).
    pub fn on_tx_stamp(
        &mut self,
        seq: u64,
        software: Option<Instant>,
        hardware: Option<Instant>,
    ) -> TxStampMatch {
        self.c.tx_stamps_read += 1;
        let m = self.ring.on_tx_stamp(seq, software, hardware);
        match m {
            TxStampMatch::First => self.stamps_pending = self.stamps_pending.saturating_sub(1),
            TxStampMatch::Partial => {}
            TxStampMatch::Again => self.c.tx_stamps_again += 1,
            TxStampMatch::NotInFlight => self.c.tx_stamps_unmatched += 1,
        }
        m
    }

    /// The error queue had nothing more to read.
    pub fn on_tx_stamps_drained(&mut self) {
        self.drain_errqueue = false;
    }

    /// Reading the error queue failed; counted, and retried after the next send.
    pub fn on_tx_stamp_error(&mut self) {
        self.c.tx_stamp_errors += 1;
        self.drain_errqueue = false;
    }

    /// A receive found nothing; `before` is the instant read just before it.
    /// It becomes `RX1` of the next frame received.
    pub fn on_empty_poll(&mut self, before: Instant) {
        self.rx1 = before;
    }

    /// A frame the RX port returned (untrusted bytes: parsed and checked
    /// here; never panics).
    pub fn handle_received(&mut self, frame: &[u8], meta: RxMeta) -> Received {
        if meta.outgoing {
            self.c.foreign += 1;
            return Received::Foreign;
        }
        match classify(frame, self.ethertype, self.session_id) {
            Classified::Probe {
                stream: MEASURE_STREAM,
                seq,
            } => Received::Probe(self.on_received(seq, meta)),
            Classified::Probe { .. } => {
                self.c.foreign += 1;
                Received::OtherStream
            }
            Classified::Foreign => {
                self.c.foreign += 1;
                Received::Foreign
            }
            Classified::Malformed => {
                self.c.malformed += 1;
                Received::Malformed
            }
        }
    }

    /// Measured probe `seq` arrived (already parsed by the caller); its RX
    /// window is `[RX1 of the last empty poll, meta.rx2]`.
    pub fn on_received(&mut self, seq: u64, meta: RxMeta) -> Arrival {
        self.ring
            .on_received(seq, self.rx1, meta.rx2, meta.software, meta.hardware)
    }

    /// The next frame record, in sequence order: a frame leaves when it is
    /// complete or has waited longer than the timeout; once the run is
    /// finished, every frame still in flight leaves (lost if not received).
    pub fn poll_record(&mut self, now: Instant) -> Option<FrameRecord> {
        if let Some(rec) = self.ring.pop_complete(now, self.timeout) {
            if self.expect_tx_stamp && !self.ring.released_tx_complete() {
                // Its stamp will not be waited for any more.
                self.stamps_pending = self.stamps_pending.saturating_sub(1);
            }
            return Some(rec);
        }
        if self.finished_at(now) {
            let rec = self.ring.pop_any();
            if rec.is_none() {
                self.ended.get_or_insert(now);
            }
            return rec;
        }
        None
    }

    /// Stop sending now (a signal, the user); frames in flight get the drain
    /// timeout to arrive. A frame already handed out by `poll_transmit` may
    /// still be sent. No effect once sending has ended.
    pub fn stop(&mut self, now: Instant) {
        if self.sending {
            self.stopped = true;
            self.end_sending(now);
        }
    }

    fn end_sending(&mut self, now: Instant) {
        self.sending = false;
        self.drain_until = now.saturating_add(self.timeout);
    }

    /// Sending has ended and every frame is accounted for, or the drain
    /// timeout is over. Records still in the ring come out of `poll_record`.
    pub fn is_finished(&self, now: Instant) -> bool {
        self.finished_at(now)
    }

    fn finished_at(&self, now: Instant) -> bool {
        !self.sending
            && self.pending.is_none()
            && (self.ring.outstanding() == 0 || now > self.drain_until)
    }

    /// The run was ended by `stop` rather than by its count or duration.
    pub fn was_stopped(&self) -> bool {
        self.stopped
    }

    /// The next instant at which the session acts without a new input (a
    /// frame due, the duration over, a frame's timeout, the drain's end). An
    /// instant already past means "call `poll_transmit` now". `None` once
    /// finished, or when only input can move it on.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let mut at: Option<Instant> = self.ring.oldest_deadline(self.timeout);
        let mut earliest = |t: Instant| at = Some(at.map_or(t, |a| a.min(t)));
        if self.pending.is_some() {
            earliest(self.c.started);
        } else if self.sending {
            if self.count.is_some_and(|n| self.c.sent >= n) {
                earliest(self.c.started);
            }
            if let Some(e) = self.end {
                earliest(e);
            }
            if !self.ring.is_full() {
                earliest(self.schedule.next_due());
            }
        } else if self.ring.outstanding() > 0 {
            earliest(self.drain_until.saturating_add(Span::from_ns(1)));
        }
        at
    }

    /// Frames sent and not yet released.
    pub fn outstanding(&self) -> u64 {
        self.ring.outstanding()
    }

    /// Whether kernel TX stamps are awaited for each frame.
    pub fn expect_tx_stamp(&self) -> bool {
        self.expect_tx_stamp
    }

    /// The counters so far (complete once the session is finished and every
    /// record polled).
    pub fn counters(&self) -> OnewayCounters {
        let ring = self.ring.counts();
        OnewayCounters {
            duplicates: ring.duplicates,
            late: ring.late,
            unknown: ring.unknown,
            reordered: ring.reordered,
            postponed: self.schedule.postponed(),
            skipped_slots: self.schedule.skipped_slots(),
            ended: self.ended.unwrap_or_default(),
            ..self.c.clone()
        }
    }
}

#[cfg(test)]
mod tests;
