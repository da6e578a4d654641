//! The STAMP Session-Sender (RFC 8762 §4.2, RFC 8972), without I/O.
//!
//! [`SessionSender`] is driven the way quinn-proto drives a connection: the
//! caller owns the socket and the clock, and moves bytes and instants in and
//! out.
//!
//! ```text
//!   poll_transmit(now, buf) ──► request bytes ──► socket ──► on_sent(seq, tx1, tx2)
//!                                  kernel/NIC TX stamp ──► on_tx_stamp(seq, sw, hw)
//!   socket ──► reply bytes + rx2/kernel/NIC stamps ──► handle_reply(...)
//!   poll_record(now) ──► released probes, in sequence order
//!   poll_timeout() ──► when to come back;  is_finished(now);  stop(now)
//! ```
//!
//! A session has four phases:
//!
//! 1. **Warm-up**: [`SenderConfig::warmup_probes`] requests of the first
//!    size, one at a time, each waiting up to [`SenderConfig::warmup_wait`]
//!    for its reply. The first datagrams after enabling timestamps may come
//!    back unstamped, and the replies tell what the reflector supports:
//!    the session waits for two-step Follow-Up Telemetry (RFC 8972 §4.7)
//!    only when every request carries the TLV and a warm-up reply came with
//!    it understood *and* filled in (a reflector that merely echoes it
//!    leaves it zero). Warm-up replies are not authenticated or counted.
//! 2. **Ready**: the warm-up is over; the next [`SessionSender::poll_transmit`]
//!    starts the schedule [`START_DELAY_NS`] later, so whatever the caller
//!    does between the phases does not make the first probe late.
//! 3. **Sending**: the [`Schedule`] (periodic with postponement, burst or
//!    Poisson; tolerance one period minus 1 ns) says when; request sizes
//!    cycle probe by probe. Sequence numbers go on from the warm-up's. A
//!    send the caller could not make (no [`SessionSender::on_sent`]) is not
//!    counted and its sequence number and size are used by the next probe.
//! 4. **Draining**: once the count is sent or the duration is over (noticed
//!    at the next `poll_transmit`), replies are awaited for the timeout;
//!    after [`SessionSender::stop`], for at most [`STOP_DRAIN_MAX_NS`]. The
//!    session is finished when nothing is in flight or the drain is over;
//!    [`SessionSender::poll_record`] then releases what is left, unanswered
//!    probes as lost.
//!
//! Replies are matched by [`Probes`]: a probe is released when its reply,
//! its kernel TX stamp (when expected) and the follow-up for its reply (or
//! the next reply, when the reflector does not send one) are in, or when it
//! waited longer than the timeout since its reply, or since it was sent.
//!
//! It never reads a clock, opens a socket or spawns a thread; untrusted
//! bytes go through checked parses and are counted, never trusted.

mod config;
mod outcome;
mod reply;
mod request;
#[cfg(test)]
mod tests;

pub use config::{ConfigError, SenderConfig};
pub use outcome::{ReplyOutcome, SenderCounters, Transmit, WarmUpSummary};
pub use reply::{decode_reply, reply_authentic, ReplyInfo};
pub use request::{
    stamp_request, LayoutError, RequestLayout, FOLLOW_UP_TLV_LEN, TIMESTAMP_INFO_TLV_LEN,
};

use misura_wire::stamp::{Mode, TimestampInfo};

use crate::schedule::{Poll, Schedule};
use crate::stamp_client::{ProbeRecord, Probes, Reply};
use crate::time::{Instant, Span};

/// Warm-up requests sent before the measurement.
pub const WARMUP_PROBES: u32 = 8;
/// How long a warm-up request waits for its reply.
pub const WARMUP_WAIT_NS: i64 = 200_000_000;
/// The first measured probe is due this long after the session is started.
pub const START_DELAY_NS: i64 = 1_000_000;
/// After [`SessionSender::stop`], replies are awaited at most this long (or
/// the timeout, if shorter): an interrupted run should end promptly.
pub const STOP_DRAIN_MAX_NS: i64 = 1_000_000_000;

/// Probes in flight at most, whatever the timeout and period.
const MAX_IN_FLIGHT: f64 = (1u64 << 20) as f64;

#[derive(Clone, Debug)]
struct WarmUp {
    /// Sequence number of the next warm-up request.
    next: u32,
    /// The request whose reply is awaited, and until when.
    waiting: Option<(u32, Instant)>,
    /// Since when the next request could go.
    ready_at: Instant,
}

#[derive(Clone, Debug)]
enum Phase {
    WarmUp(WarmUp),
    Ready {
        since: Instant,
    },
    Sending {
        schedule: Schedule,
        end: Option<Instant>,
    },
    Draining {
        until: Instant,
    },
}

/// Received probes without a single NIC TX stamp after which the session
/// stops waiting for them.
pub const HW_TX_GIVE_UP: u64 = 8;

/// The sans-IO Session-Sender.
#[derive(Debug)]
pub struct SessionSender {
    config: SenderConfig,
    mode: Mode,
    templates: Vec<Vec<u8>>,
    probes: Probes,
    phase: Phase,
    /// The request last written by `poll_transmit`, until `on_sent`.
    pending: Option<Transmit>,
    warm: WarmUpSummary,
    timestamp_info: Option<TimestampInfo>,
    expect_follow_up: bool,
    measurement_start: Option<Instant>,
    counters: SenderCounters,
    /// The NIC stamps the session's datagrams too.
    expect_hw: bool,
}

impl SessionSender {
    pub fn new(config: SenderConfig) -> Result<SessionSender, ConfigError> {
        let mode = config.mode();
        if config.layouts.is_empty() {
            return Err(ConfigError::NoRequestSizes);
        }
        let templates = config
            .layouts
            .iter()
            .map(|l| {
                if l.mode != mode {
                    return Err(ConfigError::ModeMismatch { size: l.size });
                }
                l.template(config.ssid)
                    .map_err(|source| ConfigError::Template {
                        size: l.size,
                        source,
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        // Room for twice the probes a timeout can hold, and some slack.
        let capacity = ((config.timeout.as_ns() as f64 / config.period.as_ns() as f64) * 2.0 + 16.0)
            .min(MAX_IN_FLIGHT) as usize;
        let probes = Probes::new(
            capacity,
            config.warmup_probes,
            config.expect_tx_stamp,
            false,
        );
        let phase = if config.warmup_probes == 0 {
            Phase::Ready {
                since: Instant::MIN,
            }
        } else {
            Phase::WarmUp(WarmUp {
                next: 0,
                waiting: None,
                ready_at: Instant::MIN,
            })
        };
        Ok(SessionSender {
            config,
            mode,
            templates,
            probes,
            phase,
            pending: None,
            warm: WarmUpSummary::default(),
            timestamp_info: None,
            expect_follow_up: false,
            measurement_start: None,
            counters: SenderCounters::default(),
            expect_hw: false,
        })
    }

    pub fn config(&self) -> &SenderConfig {
        &self.config
    }

    /// The largest request: a `poll_transmit` buffer must hold it.
    pub fn max_request_len(&self) -> usize {
        self.templates.iter().map(Vec::len).max().unwrap_or(0)
    }

    /// Writes the next request into `buf` when one is due at `now`, with
    /// `now` as its Timestamp. Also moves the session on: it ends a warm-up
    /// wait that timed out, starts the schedule after the warm-up, and
    /// begins the drain once the count or the duration is reached.
    ///
    /// # Panics
    /// When `buf` is shorter than [`SessionSender::max_request_len`].
    pub fn poll_transmit(&mut self, now: Instant, buf: &mut [u8]) -> Option<Transmit> {
        self.pending = None;
        let (seq, size_index, warm_up) = match self.phase {
            Phase::WarmUp(_) => (self.next_warm_up(now)?, 0, true),
            Phase::Ready { .. } => {
                self.begin(now);
                return None;
            }
            Phase::Sending { .. } => {
                let (seq, size_index) = self.next_scheduled(now)?;
                (seq, size_index, false)
            }
            Phase::Draining { .. } => return None,
        };
        let template = &self.templates[usize::from(size_index)];
        let len = template.len();
        assert!(
            buf.len() >= len,
            "poll_transmit needs a buffer of {len} bytes, got {}",
            buf.len()
        );
        buf[..len].copy_from_slice(template);
        stamp_request(
            &mut buf[..len],
            self.mode,
            seq,
            now,
            self.config.key.as_ref(),
        );
        let t = Transmit {
            seq,
            size_index,
            len,
            warm_up,
        };
        self.pending = Some(t);
        Some(t)
    }

    fn next_warm_up(&mut self, now: Instant) -> Option<u32> {
        let Phase::WarmUp(w) = &mut self.phase else {
            return None;
        };
        if let Some((_, deadline)) = w.waiting {
            if now < deadline {
                return None;
            }
            // No reply in time: on to the next request.
            w.waiting = None;
            w.ready_at = deadline;
        }
        if w.next >= self.config.warmup_probes {
            self.end_warm_up(now);
            return None;
        }
        let seq = w.next;
        w.next += 1;
        Some(seq)
    }

    fn end_warm_up(&mut self, now: Instant) {
        self.settle_follow_up();
        self.phase = Phase::Ready { since: now };
    }

    /// Two-step only when the reflector actually filled a follow-up during
    /// the warm-up and every request asks for one.
    fn settle_follow_up(&mut self) {
        self.expect_follow_up = self.config.layouts.iter().all(|l| l.follow_up)
            && self.warm.follow_up_supported == Some(true)
            && self.warm.follow_up_filled;
        self.probes.set_expect_follow_up(self.expect_follow_up);
    }

    fn begin(&mut self, now: Instant) {
        let start = now.saturating_add(Span::from_ns(START_DELAY_NS));
        let period = self.config.period;
        self.measurement_start = Some(start);
        self.phase = Phase::Sending {
            schedule: Schedule::new(
                self.config.pattern,
                period,
                period.span() - Span::from_ns(1),
                start,
                self.config.seed,
            ),
            end: self.config.duration.map(|d| start.saturating_add(d)),
        };
    }

    fn next_scheduled(&mut self, now: Instant) -> Option<(u32, u16)> {
        let Phase::Sending { schedule, end } = &mut self.phase else {
            return None;
        };
        let sent = self.counters.sent;
        if self.config.count.is_some_and(|n| sent >= n) || end.is_some_and(|e| now >= e) {
            self.phase = Phase::Draining {
                until: now.saturating_add(self.config.timeout),
            };
            return None;
        }
        // A full ring is not polled: the schedule postpones what it missed.
        if self.probes.is_full() {
            return None;
        }
        match schedule.poll(now) {
            Poll::Send { .. } => {
                let size_index = (sent % self.templates.len() as u64) as u16;
                Some((self.probes.next_seq(), size_index))
            }
            Poll::Wait { .. } => None,
        }
    }

    /// The request `seq` last returned by `poll_transmit` left: `tx1` read
    /// just before the send call (after the request was built), `tx2` just
    /// after it. False when `seq` is not that request.
    pub fn on_sent(&mut self, seq: u32, tx1: Instant, tx2: Instant) -> bool {
        let Some(t) = self.pending.filter(|t| t.seq == seq) else {
            return false;
        };
        self.pending = None;
        match &mut self.phase {
            Phase::WarmUp(w) if t.warm_up => {
                w.waiting = Some((seq, tx2.saturating_add(self.config.warmup_wait)));
                self.warm.sent += 1;
                true
            }
            Phase::Sending { .. } | Phase::Draining { .. } if !t.warm_up => {
                let size = self.config.layouts[usize::from(t.size_index)].size;
                self.probes.on_sent(t.size_index, size as u16, tx1, tx2);
                self.counters.sent += 1;
                true
            }
            _ => false,
        }
    }

    /// The kernel's (software) and the NIC's (hardware) transmit stamps of
    /// request `seq`. Ignored during the warm-up; the first stamp counts.
    pub fn on_tx_stamp(
        &mut self,
        seq: u32,
        software: Option<Instant>,
        hardware: Option<Instant>,
    ) -> bool {
        match self.phase {
            Phase::Sending { .. } | Phase::Draining { .. } => {
                self.probes.on_tx_stamp(seq, software, hardware)
            }
            _ => false,
        }
    }

    /// A datagram from the reflector: `rx2` is the user clock after the
    /// receive returned, `rx_kernel`/`rx_hw` the kernel's and the NIC's
    /// receive stamps when the socket gave them. Any bytes are accepted.
    pub fn handle_reply(
        &mut self,
        bytes: &[u8],
        rx2: Instant,
        rx_kernel: Option<Instant>,
        rx_hw: Option<Instant>,
    ) -> ReplyOutcome {
        match self.phase {
            Phase::Ready { .. } => return ReplyOutcome::Ignored,
            Phase::WarmUp(_) => {
                return match decode_reply(bytes, self.mode, rx2, rx_kernel, rx_hw) {
                    Some((r, info)) => self.handle_warm_up_reply(&r, &info),
                    None => ReplyOutcome::Ignored,
                }
            }
            Phase::Sending { .. } | Phase::Draining { .. } => {}
        }
        if let Some(key) = &self.config.key {
            if !reply_authentic(key, bytes, self.mode) {
                self.counters.auth_failed += 1;
                return ReplyOutcome::AuthFailed;
            }
        }
        let Some((r, info)) = decode_reply(bytes, self.mode, rx2, rx_kernel, rx_hw) else {
            self.counters.malformed += 1;
            return ReplyOutcome::Malformed;
        };
        if self.timestamp_info.is_none() {
            self.timestamp_info = info.timestamp_info;
        }
        ReplyOutcome::Probe(self.probes.on_reply(&r))
    }

    /// A warm-up reply (not authenticated: it only tells what the
    /// reflector does, and is not measured).
    fn handle_warm_up_reply(&mut self, r: &Reply, info: &ReplyInfo) -> ReplyOutcome {
        let Phase::WarmUp(w) = &mut self.phase else {
            return ReplyOutcome::Ignored;
        };
        if w.waiting.map(|(seq, _)| seq) != Some(r.sender_seq) {
            return ReplyOutcome::Ignored;
        }
        w.waiting = None;
        w.ready_at = r.rx2;
        let done = w.next >= self.config.warmup_probes;
        self.warm.replies += 1;
        if r.rx_kernel.is_none() {
            self.warm.unstamped += 1;
        }
        self.timestamp_info = info.timestamp_info.or(self.timestamp_info);
        self.warm.follow_up_supported = info.follow_up_supported.or(self.warm.follow_up_supported);
        self.warm.follow_up_filled |= r.follow_up.is_some();
        if done {
            self.end_warm_up(r.rx2);
        }
        ReplyOutcome::WarmUp
    }

    /// The next probe to release at `now`, in sequence order: complete, or
    /// timed out, or anything left once the session is finished.
    pub fn poll_record(&mut self, now: Instant) -> Option<ProbeRecord> {
        let rec = match self.phase {
            Phase::WarmUp(_) | Phase::Ready { .. } => None,
            Phase::Draining { until } if now > until => self.probes.pop_any(),
            Phase::Sending { .. } | Phase::Draining { .. } => {
                self.probes.pop_complete(now, self.config.timeout)
            }
        }?;
        let c = &mut self.counters;
        if rec.lost {
            c.lost += 1;
        } else {
            c.received += 1;
            c.tx_stamp_missing += u64::from(rec.tx_kernel.is_none());
            c.rx_stamp_missing += u64::from(rec.rx_kernel.is_none());
            if self.expect_hw {
                c.hw_tx_stamp_missing += u64::from(rec.tx_hw.is_none());
                c.hw_rx_stamp_missing += u64::from(rec.rx_hw.is_none());
                // A driver that grants the NIC's TX stamps but delivers
                // none: stop holding every probe for its timeout (the
                // missing ones are still counted).
                if c.received >= HW_TX_GIVE_UP && c.hw_tx_stamp_missing == c.received {
                    self.probes.set_expect_hw_tx_stamp(false);
                }
            }
        }
        Some(rec)
    }

    /// When the caller must come back at the latest (it may come earlier,
    /// e.g. when a datagram arrives): the end of a warm-up wait, the next
    /// due probe, or the next probe timeout or the end of the drain.
    /// An instant in the past means now; `None`: finished.
    pub fn poll_timeout(&self) -> Option<Instant> {
        match &self.phase {
            Phase::WarmUp(w) => Some(w.waiting.map_or(w.ready_at, |(_, deadline)| deadline)),
            Phase::Ready { since } => Some(*since),
            Phase::Sending { schedule, .. } => Some(schedule.next_due()),
            Phase::Draining { until } => {
                let end = until.saturating_add(Span::from_ns(1));
                (self.probes.outstanding() > 0).then(|| {
                    self.probes
                        .oldest_expiry(self.config.timeout)
                        .map_or(end, |e| e.min(end))
                })
            }
        }
    }

    /// The session is over at `now`: draining, and nothing in flight or the
    /// drain is over. Release what is left with `poll_record`.
    pub fn is_finished(&self, now: Instant) -> bool {
        match self.phase {
            Phase::Draining { until } => self.probes.outstanding() == 0 || now > until,
            _ => false,
        }
    }

    /// Stop sending (the user interrupted): replies are awaited for the
    /// timeout, at most [`STOP_DRAIN_MAX_NS`]. False if the session was
    /// already draining, which goes on unchanged.
    pub fn stop(&mut self, now: Instant) -> bool {
        match self.phase {
            Phase::Draining { .. } => false,
            Phase::WarmUp(_) | Phase::Ready { .. } | Phase::Sending { .. } => {
                if let Phase::WarmUp(_) = self.phase {
                    self.settle_follow_up();
                }
                let drain = self.config.timeout.min(Span::from_ns(STOP_DRAIN_MAX_NS));
                self.phase = Phase::Draining {
                    until: now.saturating_add(drain),
                };
                true
            }
        }
    }

    pub fn is_warming_up(&self) -> bool {
        matches!(self.phase, Phase::WarmUp(_))
    }

    /// When the first measured probe was due, once the schedule started.
    pub fn measurement_start(&self) -> Option<Instant> {
        self.measurement_start
    }

    pub fn warm_up(&self) -> &WarmUpSummary {
        &self.warm
    }

    /// The reflector's Timestamp Information, from the last warm-up reply
    /// that had it or else the first measured one.
    pub fn timestamp_info(&self) -> Option<TimestampInfo> {
        self.timestamp_info
    }

    /// Probes wait for the reflector's two-step follow-ups (settled at the
    /// end of the warm-up).
    pub fn expects_follow_up(&self) -> bool {
        self.expect_follow_up
    }

    /// Probes sent and not yet released.
    pub fn outstanding(&self) -> u64 {
        self.probes.outstanding()
    }

    /// Probes sent whose reply has not come: while there are none, no
    /// reply is due (a probe may still wait for its TX stamp or for the
    /// follow-up that the next reply carries). A warm-up probe counts
    /// while it is awaited.
    pub fn awaiting_reply(&self) -> u64 {
        let warm = matches!(&self.phase, Phase::WarmUp(w) if w.waiting.is_some());
        self.probes.unanswered() + u64::from(warm)
    }

    /// The NIC stamps this session's datagrams in both directions (beside
    /// the kernel): probes wait for the NIC's TX stamp, and the ones that
    /// lack a hardware stamp are counted.
    pub fn expect_hardware_stamps(&mut self, on: bool) {
        self.expect_hw = on;
        self.probes.set_expect_hw_tx_stamp(on);
    }

    pub fn counters(&self) -> SenderCounters {
        let ring = self.probes.counts();
        SenderCounters {
            duplicates: ring.duplicates,
            reordered: ring.reordered,
            late: ring.late,
            unknown: ring.unknown,
            follow_ups: self.probes.follow_ups(),
            ..self.counters
        }
    }
}
