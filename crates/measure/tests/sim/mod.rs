//! A deterministic world for a [`SessionSender`]: a virtual clock (integer
//! ns), a seeded random source, a real [`Reflector`] (so real reply bytes,
//! follow-up TLVs and HMACs flow) on its own clock, and a path that loses,
//! delays, duplicates, corrupts or truncates what the scenario asks for.
//!
//! The driver loop is the binary's: poll_transmit → send → on_sent, TX
//! stamps, receive everything due, poll_record, is_finished, sleep until
//! poll_timeout or the next datagram. Every impairment applies to measured
//! probes only (the warm-up sees a clean path), and is logged, so the
//! checks compare the sender's accounting with what really happened.

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};

use misura_measure::auth::StampKey;
use misura_measure::reflector::{
    ClockState, Counters, Decision, Peer, Reflector, ReflectorConfig, RequestMeta, Stamp,
};
use misura_measure::stamp_client::ProbeRecord;
use misura_measure::stamp_sender::{
    RequestLayout, SenderConfig, SessionSender, Transmit, WARMUP_PROBES, WARMUP_WAIT_NS,
};
use misura_measure::time::Instant;
use misura_measure::{Pattern, TimestampSource};
use misura_wire::stamp::Mode;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

mod check;
pub use check::check_exact;

/// 2026-09-21, well inside the NTP era pivot.
pub const T0: i64 = 1_790_000_000_000_000_000;
pub const US: i64 = 1_000;
pub const MS: i64 = 1_000_000;

/// Sender host: poll_transmit → TX1 (building the request).
pub const BUILD_NS: i64 = 300;
/// TX1 → TX2 (the send call).
const SEND_NS: i64 = 5 * US;
/// TX1 → the kernel's TX stamp.
const KERNEL_TX_NS: i64 = 4 * US;
/// TX2 → the TX stamp is readable on the error queue.
const TX_REPORT_NS: i64 = 3 * US;
/// A datagram in the kernel → the loop has read it (RX2).
const WAKE_NS: i64 = 2 * US;
/// The loop never runs twice at the same instant.
const LOOP_NS: i64 = 100;
/// Reflector: request RX → the reply's Timestamp (user clock before send).
pub const TURN_NS: i64 = 15 * US;
/// Reflector: request RX → the reply on the wire (its precise TX stamp).
pub const LEAVE_NS: i64 = 20 * US;
/// The reflector's clock runs this far ahead before any step.
const REFLECTOR_OFFSET_NS: i64 = 1_500 * US;
const ONE_WAY_NS: i64 = 40 * US;
const JITTER_NS: i64 = 10 * US;
const DUP_GAP_NS: i64 = 30 * US;

const SENDER: Peer = Peer::Udp(SocketAddr::V4(SocketAddrV4::new(
    Ipv4Addr::new(198, 18, 0, 1),
    40_000,
)));

/// What the path and the two hosts do to measured probes.
#[derive(Clone, Debug, Default)]
pub struct Path {
    pub loss_fwd: f64,
    pub loss_back: f64,
    pub dup_back: f64,
    /// Requests held back by `reorder_extra_ns` on the way out.
    pub reorder_fwd: f64,
    pub reorder_extra_ns: i64,
    /// Replies held back by `late_extra_ns`, beyond the timeout.
    pub late_back: f64,
    pub late_extra_ns: i64,
    /// The kernel never reports the TX stamp.
    pub tx_stamp_missing: f64,
    /// A reply byte flipped on the way back.
    pub corrupt_back: f64,
    /// A reply cut to 30 bytes on the way back.
    pub truncate_back: f64,
    /// Per probe, a short datagram and a forged one for an unknown probe.
    pub garbage: f64,
    /// The socket's queue is full: the send fails.
    pub send_fail: f64,
    /// The reflector reports its TX stamps (two-step follow-ups).
    pub two_step: bool,
    pub stateful: bool,
    /// (true time, step) of the reflector's clock.
    pub clock_steps: Vec<(i64, i64)>,
    pub key: Option<StampKey>,
    /// The user interrupts at this instant.
    pub stop_at: Option<i64>,
    /// The last probes travel clean (so that every held-back reply still
    /// arrives before the session ends).
    pub quiet_tail: u32,
}

impl Path {
    pub fn clean() -> Path {
        Path {
            two_step: true,
            ..Path::default()
        }
    }
}

pub struct Scenario {
    pub seed: u64,
    pub count: u64,
    pub period_ns: i64,
    pub timeout_ns: i64,
    pub size: usize,
    pub path: Path,
}

impl Scenario {
    pub fn new(seed: u64, path: Path) -> Scenario {
        let size = if path.key.is_some() { 140 } else { 72 };
        Scenario {
            seed,
            count: 300,
            period_ns: 10 * MS,
            timeout_ns: 1_000 * MS,
            size,
            path,
        }
    }
}

/// How a datagram reached the sender.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    Original,
    Duplicate,
    Late,
    Corrupt,
    Truncated,
    /// Shorter than any reply.
    Short,
    /// A well-formed reply for a sequence number never sent.
    Forged,
}

/// What the simulator knows about one measured probe.
#[derive(Clone, Debug, Default)]
pub struct Truth {
    pub tx1: i64,
    pub tx2: i64,
    /// `None` when the kernel never reported it.
    pub tx_kernel: Option<Instant>,
    /// Reflector side (its clock), when the request got there.
    pub reflector_rx: Option<Instant>,
    pub reflector_ts: Option<Instant>,
    pub reflector_leave: Option<Instant>,
    pub reflector_seq: Option<u32>,
    /// Sender sequence number of the reply the reflector sent just before.
    pub prev_reply: Option<u32>,
    pub reply_len: usize,
}

/// One datagram handed to `handle_reply`.
#[derive(Clone, Debug)]
pub struct Delivery {
    pub seq: u32,
    pub kind: Kind,
    pub kernel_rx: i64,
    pub rx2: i64,
    pub outcome: misura_measure::stamp_sender::ReplyOutcome,
}

/// Impairments actually applied.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Injected {
    pub send_failed: u64,
    pub fwd_lost: u64,
    pub back_lost: u64,
    pub reordered_fwd: u64,
    pub duplicated: u64,
    pub late: u64,
    pub corrupt: u64,
    pub truncated: u64,
    pub short: u64,
    pub forged: u64,
    pub tx_stamp_missing: u64,
}

enum ToSender {
    Datagram {
        seq: u32,
        kind: Kind,
        bytes: Vec<u8>,
    },
    TxStamp {
        seq: u32,
        kernel: i64,
    },
}

/// What the simulator saw happen.
#[derive(Default)]
pub struct Log {
    /// Released records, with the instant each was released.
    pub records: Vec<(i64, ProbeRecord)>,
    pub truth: BTreeMap<u32, Truth>,
    pub deliveries: Vec<Delivery>,
    pub injected: Injected,
    pub finished_at: i64,
}

pub struct Outcome {
    pub sender: SessionSender,
    pub reflector: Counters,
    pub path: Path,
    pub log: Log,
}

struct World {
    rng: SmallRng,
    path: Path,
    sender: SessionSender,
    reflector: Reflector,
    /// Keyed by (instant, arrival order).
    to_reflector: BTreeMap<(i64, u64), (u32, Vec<u8>)>,
    to_sender: BTreeMap<(i64, u64), ToSender>,
    order: u64,
    last_replied: Option<u32>,
    /// Impairments apply to sequence numbers in `WARMUP_PROBES..impaired_end`.
    impaired_end: u32,
    out: Vec<u8>,
    o: Log,
}

pub fn run(s: Scenario) -> Outcome {
    let key = s.path.key.clone();
    let mode = if key.is_some() {
        Mode::Authenticated
    } else {
        Mode::Unauthenticated
    };
    let sender = SessionSender::new(SenderConfig {
        key: key.clone(),
        ssid: 0x2a2a,
        layouts: vec![RequestLayout::new(s.size, mode).unwrap()],
        pattern: Pattern::Periodic,
        period: misura_measure::time::Period::new(s.period_ns).unwrap(),
        seed: s.seed,
        count: Some(s.count),
        duration: None,
        timeout: misura_measure::time::Span::from_ns(s.timeout_ns),
        warmup_probes: WARMUP_PROBES,
        warmup_wait: misura_measure::time::Span::from_ns(WARMUP_WAIT_NS),
        expect_tx_stamp: true,
    })
    .unwrap();
    let reflector = Reflector::new(ReflectorConfig {
        key,
        stateful: s.path.stateful,
        rate_per_s: 1_000_000,
        burst: 1_000_000,
        max_sources: 16,
        listen_port: Some(862),
    });
    let quiet_tail = s.path.quiet_tail;
    let mut w = World {
        rng: SmallRng::seed_from_u64(s.seed),
        path: s.path,
        o: Log::default(),
        sender,
        reflector,
        to_reflector: BTreeMap::new(),
        to_sender: BTreeMap::new(),
        order: 0,
        last_replied: None,
        impaired_end: (u64::from(WARMUP_PROBES) + s.count).saturating_sub(u64::from(quiet_tail))
            as u32,
        out: vec![0; 65_536],
    };
    w.drive();
    Outcome {
        reflector: *w.reflector.counters(),
        sender: w.sender,
        path: w.path,
        log: w.o,
    }
}

impl World {
    fn measured(seq: u32) -> bool {
        seq >= WARMUP_PROBES
    }

    fn chance(&mut self, seq: u32, p: f64) -> bool {
        Self::measured(seq) && seq < self.impaired_end && p > 0.0 && self.rng.random_bool(p)
    }

    fn reflector_clock(&self, t: i64) -> i64 {
        let steps: i64 = self
            .path
            .clock_steps
            .iter()
            .filter(|&&(at, _)| t >= at)
            .map(|&(_, step)| step)
            .sum();
        t + REFLECTOR_OFFSET_NS + steps
    }

    fn next_order(&mut self) -> u64 {
        self.order += 1;
        self.order
    }

    /// The binary's loop, in virtual time.
    fn drive(&mut self) {
        let mut buf = vec![0u8; self.sender.max_request_len()];
        let mut now = T0 - LOOP_NS;
        let mut stopped = false;
        for _ in 0..10_000_000 {
            let timer = self
                .sender
                .poll_timeout()
                .map(Instant::as_ns)
                .unwrap_or(i64::MAX);
            let datagram = self
                .to_sender
                .keys()
                .next()
                .map_or(i64::MAX, |k| k.0 + WAKE_NS);
            let at = timer.min(datagram).max(now + LOOP_NS);
            if let Some(&(t, o)) = self.to_reflector.keys().next() {
                if t <= at {
                    let (seq, bytes) = self.to_reflector.remove(&(t, o)).unwrap();
                    self.reflect(t, seq, &bytes);
                    continue;
                }
            }
            now = at;
            if let Some(stop_at) = self.path.stop_at {
                if now >= stop_at && !stopped {
                    stopped = self.sender.stop(Instant::from_ns(now));
                }
            }
            if let Some(t) = self.sender.poll_transmit(Instant::from_ns(now), &mut buf) {
                self.send(now, t, &buf[..t.len]);
            }
            self.deliver(now);
            while let Some(r) = self.sender.poll_record(Instant::from_ns(now)) {
                self.o.records.push((now, r));
            }
            if self.sender.is_finished(Instant::from_ns(now)) {
                self.o.finished_at = now;
                return;
            }
        }
        panic!("the session did not finish");
    }

    fn send(&mut self, now: i64, t: Transmit, request: &[u8]) {
        if !t.warm_up && self.chance(t.seq, self.path.send_fail) {
            self.o.injected.send_failed += 1;
            return;
        }
        let tx1 = now + BUILD_NS;
        let tx2 = tx1 + SEND_NS;
        let kernel = tx1 + KERNEL_TX_NS;
        assert!(self
            .sender
            .on_sent(t.seq, Instant::from_ns(tx1), Instant::from_ns(tx2)));
        let missing = self.chance(t.seq, self.path.tx_stamp_missing);
        if missing {
            self.o.injected.tx_stamp_missing += 1;
        } else {
            let o = self.next_order();
            let ev = ToSender::TxStamp { seq: t.seq, kernel };
            self.to_sender.insert((tx2 + TX_REPORT_NS, o), ev);
        }
        if Self::measured(t.seq) {
            self.o.truth.insert(
                t.seq,
                Truth {
                    tx1,
                    tx2,
                    tx_kernel: (!missing).then_some(Instant::from_ns(kernel)),
                    ..Truth::default()
                },
            );
        }
        if self.chance(t.seq, self.path.garbage) {
            self.inject_garbage(t.seq, tx2);
        }
        if self.chance(t.seq, self.path.loss_fwd) {
            self.o.injected.fwd_lost += 1;
            return;
        }
        let mut arrive = kernel + ONE_WAY_NS + self.rng.random_range(0..JITTER_NS);
        if self.chance(t.seq, self.path.reorder_fwd) {
            self.o.injected.reordered_fwd += 1;
            arrive += self.path.reorder_extra_ns;
        }
        let o = self.next_order();
        self.to_reflector
            .insert((arrive, o), (t.seq, request.to_vec()));
    }

    fn inject_garbage(&mut self, seq: u32, at: i64) {
        let n = self.rng.random_range(0..44);
        let short: Vec<u8> = (0..n).map(|_| self.rng.random()).collect();
        let mut forged: Vec<u8> = (0..44).map(|_| self.rng.random()).collect();
        // Sender Sequence Number field: far from anything this session sent.
        forged[24..28].copy_from_slice(&(0x8000_0000u32 + seq).to_be_bytes());
        for (kind, bytes, dt) in [(Kind::Short, short, MS), (Kind::Forged, forged, 2 * MS)] {
            let o = self.next_order();
            self.to_sender
                .insert((at + dt, o), ToSender::Datagram { seq, kind, bytes });
        }
        self.o.injected.short += 1;
        self.o.injected.forged += 1;
    }

    /// The reflector receives a request at true time `t`.
    fn reflect(&mut self, t: i64, seq: u32, request: &[u8]) {
        let meta = RequestMeta {
            src: SENDER,
            dst: None,
            ttl: Some(64),
            rx: Stamp {
                at: Instant::from_ns(self.reflector_clock(t)),
                source: TimestampSource::KernelSoftware,
            },
            truncated: false,
        };
        let ts = self.reflector_clock(t + TURN_NS);
        let clock = ClockState::FREE_RUNNING;
        let Decision::Reply { len, reply_seq } =
            self.reflector
                .handle(request, &meta, Instant::from_ns(ts), &clock, &mut self.out)
        else {
            return;
        };
        let leave = self.reflector_clock(t + LEAVE_NS);
        if self.path.two_step {
            self.reflector.on_tx_stamp(
                SENDER,
                reply_seq,
                Instant::from_ns(leave),
                TimestampSource::KernelSoftware,
            );
        }
        let prev = self.last_replied.replace(seq);
        let mut reply = self.out[..len].to_vec();
        if let Some(truth) = self.o.truth.get_mut(&seq) {
            *truth = Truth {
                reflector_rx: Some(meta.rx.at),
                reflector_ts: Some(Instant::from_ns(ts)),
                reflector_leave: Some(Instant::from_ns(leave)),
                reflector_seq: Some(reply_seq),
                prev_reply: prev,
                reply_len: len,
                ..*truth
            };
        }
        if self.chance(seq, self.path.loss_back) {
            self.o.injected.back_lost += 1;
            return;
        }
        let mut arrive = t + LEAVE_NS + ONE_WAY_NS + self.rng.random_range(0..JITTER_NS);
        let mut kind = Kind::Original;
        if self.chance(seq, self.path.late_back) {
            self.o.injected.late += 1;
            arrive += self.path.late_extra_ns;
            kind = Kind::Late;
        } else if self.chance(seq, self.path.corrupt_back) {
            self.o.injected.corrupt += 1;
            reply[20] ^= 0x10;
            kind = Kind::Corrupt;
        } else if self.chance(seq, self.path.truncate_back) {
            self.o.injected.truncated += 1;
            reply.truncate(30);
            kind = Kind::Truncated;
        }
        if kind == Kind::Original && self.chance(seq, self.path.dup_back) {
            self.o.injected.duplicated += 1;
            let o = self.next_order();
            let dup = ToSender::Datagram {
                seq,
                kind: Kind::Duplicate,
                bytes: reply.clone(),
            };
            self.to_sender.insert((arrive + DUP_GAP_NS, o), dup);
        }
        let o = self.next_order();
        let ev = ToSender::Datagram {
            seq,
            kind,
            bytes: reply,
        };
        self.to_sender.insert((arrive, o), ev);
    }

    /// Everything the kernel holds for the sender at `now`.
    fn deliver(&mut self, now: i64) {
        while let Some(entry) = self.to_sender.first_entry() {
            let (t, _) = *entry.key();
            if t + WAKE_NS > now {
                break;
            }
            match entry.remove() {
                ToSender::TxStamp { seq, kernel } => {
                    self.sender
                        .on_tx_stamp(seq, Some(Instant::from_ns(kernel)), None);
                }
                ToSender::Datagram { seq, kind, bytes } => {
                    let outcome = self.sender.handle_reply(
                        &bytes,
                        Instant::from_ns(now),
                        Some(Instant::from_ns(t)),
                        None,
                    );
                    if Self::measured(seq) {
                        self.o.deliveries.push(Delivery {
                            seq,
                            kind,
                            kernel_rx: t,
                            rx2: now,
                            outcome,
                        });
                    }
                }
            }
        }
    }
}
