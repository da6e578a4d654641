//! A simulated tester for `OnewaySession`: a virtual clock, a seeded random
//! source, two raw ports joined by a cable through a SUT that can lose,
//! delay, reorder and duplicate frames, an error queue of kernel TX stamps,
//! and stray traffic. The loop in `run` is the binary's loop with the
//! sockets replaced by this simulation; every event is logged so the tests
//! can check the session's accounting against what really happened.
//!
//! Two clocks: `true_now` is physics, the host clock (what the session and
//! the kernel stamps see) is `true_now + offset`, and `offset` jumps at a
//! clock step.

use misura_measure::oneway_session::{
    OnewayCounters, OnewayPlan, OnewaySession, RxMeta, Transmit, MEASURE_STREAM, WARMUP_STREAM,
};
use misura_measure::time::{Instant, Period, Span};
use misura_measure::{Pattern, SizeOrder, TxStampMatch};
use misura_wire::{emit_frame, EthernetRepr, MacAddr, ProbeFlags, ProbeHeader, ProbeRepr};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

pub mod check;
mod faults;
mod log;

pub use faults::{Faults, Stray, STRAYS};
pub use log::{Delivery, FrameTruth, Outcome, StampRead, What};

pub const US: i64 = 1_000;
pub const MS: i64 = 1_000_000;
pub const SESSION: u32 = 0x0DE1_7A00;
pub const ETHERTYPE: u16 = misura_wire::ETHERTYPE_MISURA;
const HEADER: usize = misura_wire::ethernet::HEADER_LEN;
/// The host clock reads this at the start (an arbitrary Unix-like instant).
const EPOCH: i64 = 1_700_000_000 * 1_000_000_000;
/// An idle loop skips ahead to this long before the next event.
const JUMP_MARGIN: i64 = 500;

struct InTransit {
    arrive_true: i64,
    order: u64,
    what: What,
    bytes: Vec<u8>,
    outgoing: bool,
}

struct QueuedStamp {
    at_true: i64,
    order: u64,
    bytes: Vec<u8>,
    event_true: i64,
}

/// A base plan: 1000 frames of two sizes, 100 µs apart, 2 ms timeout.
pub fn plan() -> OnewayPlan {
    OnewayPlan {
        session_id: SESSION,
        ethertype: ETHERTYPE,
        sizes: vec![46, 1500],
        order: SizeOrder::Interleaved,
        vlan: false,
        pattern: Pattern::Periodic,
        period: Period::new(100 * US).unwrap(),
        late_tolerance: Span::from_ns(100 * US - 1),
        seed: 7,
        start_delay: Span::from_ns(MS),
        count: Some(1000),
        duration: None,
        expected_frames: Some(1000),
        timeout: Span::from_ns(2 * MS),
        expect_tx_stamp: true,
        ring_capacity: 1024,
        tx_stamp_messages: 1,
    }
}

pub struct Sim {
    rng: SmallRng,
    faults: Faults,
    plan: OnewayPlan,
    true_now: i64,
    /// `(true instant, offset from then on)`, in order.
    offsets: Vec<(i64, i64)>,
    iter: u64,
    order: u64,
    cable: Vec<InTransit>,
    errqueue: Vec<QueuedStamp>,
    frames_out: Vec<Vec<u8>>,
    last_empty: i64,
    stop_flag: bool,
    stall: i64,
    disrupted_after: Option<u64>,
    /// Frames in flight still awaiting their TX stamp.
    awaiting: u64,
    o: Outcome,
}

fn probe_frame(ethertype: u16, session_id: u32, stream: u16, seq: u64, payload: usize) -> Vec<u8> {
    let eth = EthernetRepr {
        dst: MacAddr([2, 0, 0, 0, 0, 2]),
        src: MacAddr([2, 0, 0, 0, 0, 1]),
        vlan: None,
        ethertype,
    };
    let probe = ProbeRepr {
        flags: ProbeFlags::SENDER_TIMESTAMP,
        payload_len: payload as u16,
        session_id,
        stream,
        size_index: 0,
        seq,
        sender_timestamp: 0,
        aux_timestamp: 0,
    };
    let mut buf = vec![0u8; HEADER + payload.max(46)];
    let n = emit_frame(&eth, &probe, &mut buf).expect("a valid frame");
    buf.truncate(n);
    buf
}

/// A measured probe of the simulated session, as it goes on the wire.
pub fn probe_bytes(seq: u64) -> Vec<u8> {
    probe_frame(ETHERTYPE, SESSION, MEASURE_STREAM, seq, 46)
}

impl Sim {
    pub fn new(plan: OnewayPlan, faults: Faults, seed: u64) -> Sim {
        let frames_out = plan
            .sizes
            .iter()
            .map(|&p| probe_frame(ETHERTYPE, SESSION, MEASURE_STREAM, 0, p))
            .collect();
        Sim {
            rng: SmallRng::seed_from_u64(seed),
            faults,
            true_now: 0,
            offsets: vec![(i64::MIN, EPOCH)],
            iter: 0,
            order: 0,
            cable: Vec::new(),
            errqueue: Vec::new(),
            frames_out,
            last_empty: EPOCH,
            stop_flag: false,
            stall: 0,
            disrupted_after: None,
            awaiting: 0,
            o: Outcome {
                plan: plan.clone(),
                started_host: EPOCH,
                counters: OnewayCounters::default(),
                records: Vec::new(),
                frames: Vec::new(),
                deliveries: Vec::new(),
                stamps: Vec::new(),
                send_refusals: 0,
                was_stopped: false,
                stopped_at: None,
                end_true: 0,
                end_host: 0,
                full_turns: 0,
                disruptions: Vec::new(),
                unread_stamps: 0,
                finished_at: 0,
            },
            plan,
        }
    }

    fn offset_at(&self, t: i64) -> i64 {
        self.offsets
            .iter()
            .rev()
            .find(|o| o.0 <= t)
            .map_or(0, |o| o.1)
    }

    fn host_at(&self, t: i64) -> i64 {
        t + self.offset_at(t)
    }

    fn host(&self) -> i64 {
        self.host_at(self.true_now)
    }

    fn steps(&self) -> usize {
        self.offsets.len() - 1
    }

    fn spend(&mut self, lo: i64, hi: i64) {
        self.true_now += self.rng.random_range(lo..=hi);
    }

    fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && self.rng.random::<f64>() < p
    }

    /// The binary's loop, with the simulation for sockets and clock.
    pub fn run(mut self) -> Outcome {
        let mut s =
            OnewaySession::new(&self.plan, Instant::from_ns(self.host())).expect("a valid plan");
        let capacity = self.plan.ring_capacity.max(2).next_power_of_two() as u64;
        loop {
            self.iter += 1;
            assert!(self.iter < 50_000_000, "the simulated run does not end");
            if self.stop_flag && self.o.stopped_at.is_none() {
                self.o.stopped_at = Some(self.host());
                s.stop(Instant::from_ns(self.host()));
            }
            self.true_now += std::mem::take(&mut self.stall);
            let now = self.host();
            if let Some(k) = self.disrupted_after.take() {
                self.o.disruptions.push((k, now));
            }
            let due = self
                .plan
                .count
                .is_none_or(|n| (self.o.frames.len() as u64) < n);
            if due && self.o.stopped_at.is_none() && s.outstanding() == capacity {
                self.o.full_turns += 1;
            }
            let sent_now = s.poll_transmit(Instant::from_ns(now));
            if let Some(t) = sent_now {
                self.send(&mut s, t, now);
            }
            // The error queue is read exactly while some frame in flight
            // awaits its stamp, or to its end after a send.
            let awaited = self.plan.expect_tx_stamp && (sent_now.is_some() || self.awaiting > 0);
            assert_eq!(s.wants_tx_stamps(), awaited, "turn {}", self.iter);
            while s.wants_tx_stamps() {
                match take_due(&mut self.errqueue, self.true_now, |q| (q.at_true, q.order)) {
                    Some(st) => self.read_stamp(&mut s, st),
                    None => {
                        s.on_tx_stamps_drained();
                        break;
                    }
                }
            }
            let t = self.host();
            let arrived = take_due(&mut self.cable, self.true_now, |f| (f.arrive_true, f.order));
            self.spend(50, 150);
            match arrived {
                None => {
                    s.on_empty_poll(Instant::from_ns(t));
                    self.last_empty = t;
                }
                Some(f) => self.deliver(&mut s, f),
            }
            while let Some(rec) = s.poll_record(Instant::from_ns(t)) {
                self.o.frames[rec.seq as usize].released_iter = Some(self.iter);
                if self.plan.expect_tx_stamp && rec.tx_kernel.is_none() {
                    self.awaiting -= 1;
                }
                self.o.records.push(rec);
            }
            if s.is_finished(Instant::from_ns(t)) {
                self.o.finished_at = t;
                break;
            }
            self.spend(100, 400);
            self.skip_idle(&s);
        }
        self.o.counters = s.counters();
        self.o.was_stopped = s.was_stopped();
        self.o.end_true = self.true_now;
        self.o.end_host = self.host();
        self.o.unread_stamps = self.errqueue.len();
        self.o
    }

    /// Nothing to read: jump the virtual clock to just before the next event
    /// (the real loop would spin there).
    fn skip_idle(&mut self, s: &OnewaySession) {
        let pending_event = self.stop_flag && self.o.stopped_at.is_none();
        if pending_event || self.stall > 0 || self.disrupted_after.is_some() {
            return;
        }
        let now = self.true_now;
        if self.cable.iter().any(|f| f.arrive_true <= now) {
            return;
        }
        let mut next = s
            .poll_timeout()
            .map_or(i64::MAX, |h| h.as_ns() - self.offset_at(now));
        next = self
            .cable
            .iter()
            .map(|f| f.arrive_true)
            .fold(next, i64::min);
        if s.expect_tx_stamp() {
            let future = self.errqueue.iter().filter(|q| q.at_true > now);
            next = future.map(|q| q.at_true).fold(next, i64::min);
        }
        if next != i64::MAX && next - JUMP_MARGIN > now {
            self.true_now = next - JUMP_MARGIN;
        }
    }

    fn send(&mut self, s: &mut OnewaySession, t: Transmit, polled_at: i64) {
        let seq = t.seq;
        assert_eq!(seq, self.o.frames.len() as u64, "frames go out in sequence");
        let (tx1, depart_true) = loop {
            let tx1 = self.host();
            let buf = &mut self.frames_out[t.size_index];
            let mut h = ProbeHeader::new_unchecked(&mut buf[HEADER..]);
            h.set_seq(seq);
            h.set_sender_timestamp(tx1 as u64);
            self.spend(200, 1000);
            if self.chance(self.faults.send_blocked) {
                self.o.send_refusals += 1;
                s.on_send_blocked();
                continue;
            }
            break (tx1, self.true_now);
        };
        self.spend(200, 1000);
        let tx2 = self.host();
        s.on_sent(seq, Instant::from_ns(tx1), Instant::from_ns(tx2));
        if self.plan.expect_tx_stamp {
            self.awaiting += 1;
        }
        let mut truth = FrameTruth {
            size_index: t.size_index,
            polled_at,
            tx1,
            tx2,
            depart_true,
            depart_host: self.host_at(depart_true),
            steps_before: self.steps(),
            sent_iter: self.iter,
            ..FrameTruth::default()
        };
        let bytes = self.frames_out[t.size_index].clone();
        self.through_sut(&mut truth, &bytes);
        self.stamp(&mut truth, &bytes);
        if self.chance(self.faults.strays) {
            self.stray(depart_true);
        }
        self.o.frames.push(truth);
        self.after_send(seq);
    }

    /// The cable and the SUT: 20 µs plus 8 ns a byte plus up to 2 µs of jitter.
    fn through_sut(&mut self, f: &mut FrameTruth, bytes: &[u8]) {
        let seq = self.o.frames.len() as u64;
        f.dropped = self.faults.drop_seqs.contains(&seq) || self.chance(self.faults.loss);
        if f.dropped {
            return;
        }
        let frame_bytes = misura_wire::frame_bytes(self.plan.sizes[f.size_index], false) as i64;
        let mut latency = 20 * US + 8 * frame_bytes + self.rng.random_range(0..2 * US);
        f.reordered_by_sut = self.chance(self.faults.reorder);
        if f.reordered_by_sut {
            latency += self.faults.reorder_delay_ns;
        }
        f.late_by_sut = self.faults.late_seqs.contains(&seq) || self.chance(self.faults.late);
        if f.late_by_sut {
            latency += self.faults.late_delay_ns;
        }
        f.copies = 1 + u32::from(self.chance(self.faults.duplicate));
        for copy in 0..f.copies {
            let gap = i64::from(copy) * self.rng.random_range(0..3 * US);
            self.enqueue(
                f.depart_true + latency + gap,
                What::Probe(seq),
                bytes.to_vec(),
                false,
            );
        }
    }

    /// The TX port's kernel stamp, a few µs after the frame left (or after
    /// it arrived, when slow), and maybe a second one from a bridge port.
    fn stamp(&mut self, f: &mut FrameTruth, bytes: &[u8]) {
        f.stamp_withheld = self.chance(self.faults.tx_stamp_missing);
        let mut at = f.depart_true;
        if !f.stamp_withheld {
            at += if self.chance(self.faults.slow_tx_stamp) {
                self.rng.random_range(40 * US..60 * US)
            } else {
                self.rng.random_range(US..4 * US)
            };
            self.queue_stamp(at, bytes.to_vec(), f.depart_true);
        }
        f.stamped_again = self.chance(self.faults.tx_stamp_again);
        if f.stamped_again {
            // The bridge port transmits the frame again 5 µs later.
            let event = f.depart_true + 5 * US;
            self.queue_stamp(at.max(event) + 5 * US, bytes.to_vec(), event);
        }
    }

    fn queue_stamp(&mut self, at_true: i64, bytes: Vec<u8>, event_true: i64) {
        self.order += 1;
        self.errqueue.push(QueuedStamp {
            at_true,
            order: self.order,
            bytes,
            event_true,
        });
    }

    fn enqueue(&mut self, arrive_true: i64, what: What, bytes: Vec<u8>, outgoing: bool) {
        self.order += 1;
        self.cable.push(InTransit {
            arrive_true,
            order: self.order,
            what,
            bytes,
            outgoing,
        });
    }

    fn stray(&mut self, near: i64) {
        let kind = STRAYS[self.rng.random_range(0..STRAYS.len())];
        let mut bytes = probe_frame(ETHERTYPE, SESSION, MEASURE_STREAM, 0, 46);
        match kind {
            Stray::OtherSession => bytes = probe_frame(ETHERTYPE, SESSION ^ 1, 0, 3, 46),
            Stray::OtherEtherType => bytes = probe_frame(0x0800, SESSION, 0, 3, 46),
            Stray::Outgoing => {}
            Stray::Warmup => bytes = probe_frame(ETHERTYPE, SESSION, WARMUP_STREAM, 3, 46),
            Stray::Truncated => bytes.truncate(HEADER + self.rng.random_range(0..40)),
            Stray::Runt => bytes.truncate(self.rng.random_range(0..HEADER)),
            Stray::Garbage => {
                self.rng.fill(&mut bytes[HEADER..]);
                bytes[HEADER] = b'X'; // never the probe magic
            }
            Stray::UnknownSeq => bytes = probe_frame(ETHERTYPE, SESSION, 0, 1 << 40, 46),
        }
        let at = near + self.rng.random_range(0..self.plan.period.as_ns());
        self.enqueue(at, What::Stray(kind), bytes, kind == Stray::Outgoing);
        // And a stamp of some other frame on the error queue.
        if self.chance(0.5) {
            self.queue_stamp(at, vec![0xee; 60], at);
        }
    }

    fn after_send(&mut self, seq: u64) {
        if self.faults.stop_after == Some(seq) {
            self.stop_flag = true;
        }
        for &(k, delta) in &self.faults.clock_steps.clone() {
            if k == seq {
                let off = self.offset_at(self.true_now) + delta;
                self.offsets.push((self.true_now, off));
                self.disrupted_after = Some(seq);
            }
        }
        for &(k, len) in &self.faults.stalls {
            if k == seq {
                self.stall += len;
                self.disrupted_after = Some(seq);
            }
        }
    }

    fn read_stamp(&mut self, s: &mut OnewaySession, st: QueuedStamp) {
        let sw = Some(self.host_at(st.event_true));
        let result = s.handle_tx_stamp(&st.bytes, sw.map(Instant::from_ns), None);
        if result == TxStampMatch::First {
            self.awaiting -= 1;
        }
        let seq = ProbeRepr::parse(st.bytes.get(HEADER..).unwrap_or(&[]))
            .ok()
            .map(|p| p.seq);
        self.o.stamps.push(StampRead {
            iter: self.iter,
            seq,
            software: sw,
            result,
        });
    }

    fn deliver(&mut self, s: &mut OnewaySession, f: InTransit) {
        let rx2 = self.host();
        let arrive_host = self.host_at(f.arrive_true);
        let meta = RxMeta {
            rx2: Instant::from_ns(rx2),
            software: Some(Instant::from_ns(arrive_host)),
            hardware: None,
            outgoing: f.outgoing,
        };
        let result = s.handle_received(&f.bytes, meta);
        self.o.deliveries.push(Delivery {
            iter: self.iter,
            what: f.what,
            arrive_true: f.arrive_true,
            arrive_host,
            last_empty: self.last_empty,
            rx2,
            steps_before: self.steps(),
            result,
        });
    }
}

/// The earliest item of `queue` due by `now`, by `(instant, order queued)`.
fn take_due<T>(queue: &mut Vec<T>, now: i64, key: impl Fn(&T) -> (i64, u64)) -> Option<T> {
    let i = (0..queue.len())
        .filter(|&i| key(&queue[i]).0 <= now)
        .min_by_key(|&i| key(&queue[i]))?;
    Some(queue.swap_remove(i))
}

/// Run one simulated measurement.
pub fn run(plan: OnewayPlan, faults: Faults, seed: u64) -> Outcome {
    Sim::new(plan, faults, seed).run()
}
