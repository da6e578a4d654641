//! One core's loop for one trial: each turn, read the clock once, queue
//! the frames every flow's open-loop schedule has due (up to a batch),
//! hand them to the kernel, give the latency stream its turn, and walk the
//! receive ring. Nothing here allocates per frame, formats or locks: the
//! per-stream trackers are made up front, counts are plain integers.

use super::flows::FlowTemplate;
use super::open::CoreIo;
use super::rx_clock::CoreClock;
use super::streams::{flow_core, MAX_CORES};
use super::tx::TxPath;
use crate::error::{EngineError, HookError};
use misura_measure::load::rate::RateSchedule;
use misura_measure::oneway_session::MEASURE_STREAM;
use misura_measure::time::{Instant, Span};
use misura_stats::sequence::{Arrival, SequenceTracker};
use misura_stats::Summary;
use misura_sys::clock::realtime;
use misura_sys::ring::{RingFrame, StampSource};
use misura_wire::probe::{ProbeHeader, MAGIC};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Most frames queued per flow per turn.
pub const BATCH: u64 = 64;

/// The latency stream's part of the loop (core 0 only): the windowed
/// per-frame measurement of `misura oneway`, run inside the load on its own
/// socket, which a filter lets see only the latency stream (a receive
/// ring's blocks reach user space late, so its frames could not bound the
/// RX window from below).
pub trait LatencyHook {
    /// Send a latency frame if one is due, read TX stamps, try one receive.
    fn turn(&mut self, now: Instant, sending: bool) -> Result<(), HookError>;
    /// Everything sent has been received or timed out.
    fn finished(&self, now: Instant) -> bool;
}

/// One flow's sending state on this core.
pub struct CoreFlow {
    pub template: FlowTemplate,
    pub schedule: RateSchedule,
    /// Send exactly this many frames on the schedule (a back-to-back
    /// burst at the line rate), then stop.
    pub burst: Option<u64>,
    pub next_seq: u64,
    /// When this flow last had its turn (none yet): a turn long after it
    /// is a tester that was descheduled, whose catch-up leaves back to back.
    pub last_turn: Option<Instant>,
    /// Frames still to send of the backlog found when the sender came back
    /// from being descheduled ([`CoreCounts::catch_up`]).
    pub catch_up_left: u64,
    /// The last turn sent everything then due: the sender was keeping up.
    /// A sender that never keeps up (asked for more than it can send) sends
    /// as fast as it can all along, and its frames after a gap are no burst
    /// beside the others.
    pub kept_up: bool,
}

/// A turn this long after the last (and at least two slots of the flow's
/// rate) follows a moment the sender was not running: the frames then due
/// (at most the schedule's backlog) were due before and leave back to back
/// as a burst ([`CoreCounts::catch_up`]). A sender that keeps up, even at
/// the line rate, turns far more often.
pub const DESCHEDULED: Span = Span::from_ns(200_000);

/// A core with nothing due for longer than this sleeps until just before
/// its next slot instead of spinning: at the rates a device under test
/// forwards (an RFC 2544 search near a few thousand frames/s) a spinning
/// loop competes with every other runnable task for its CPU and is
/// descheduled for whole time slices, while a sleeping one is woken by its
/// timer ahead of them (the scheduler favours a task that slept) and keeps
/// its schedule. Faster flows never wait this long and spin as before.
/// 25 µs: with one busy loop per CPU, a 512-byte search near 25 000
/// frames/s (40 µs slots) then sleeps between slots; at 40 µs it spun and
/// lost 3 ms at a time to the busy loop, 2-10 % short (issue 37).
pub const IDLE_SLEEP_MIN: Span = Span::from_ns(25_000);
/// How long before its next slot a sleeping core wakes (its timer's slack
/// is set to 1 µs, so this covers the wake-up itself).
pub const WAKE_EARLY: Span = Span::from_ns(20_000);
/// The longest such sleep: the receive ring is read at least this often.
pub const MAX_IDLE_SLEEP: Span = Span::from_millis(1);

/// What one core counted.
#[derive(Default)]
pub struct CoreCounts {
    /// Frames the kernel took, per flow.
    pub sent: Vec<u64>,
    /// Frames per flow that left back to back in catch-up after the sender
    /// was descheduled (the backlog found on coming back): what the
    /// tester's own bursts may have cost at a SUT with a small bucket.
    pub catch_up: Vec<u64>,
    /// Received per (flow, sending core): the sequence trackers.
    pub rx: Vec<Vec<SequenceTracker>>,
    /// Sender user clock → kernel RX stamp, per flow.
    pub transit: Vec<Summary>,
    /// Sender user clock → NIC RX stamp in system time, per flow.
    pub transit_hw: Vec<Summary>,
    /// NIC-stamped frames that came before the RX clock's model could
    /// convert them (counted, not measured).
    pub hardware_unconverted: u64,
    /// The largest uncertainty of a NIC stamp's conversion, ns.
    pub hardware_u95_ns: f64,
    pub stamped: u64,
    pub unstamped: u64,
    pub hardware_stamped: u64,
    pub foreign: u64,
    pub malformed: u64,
    /// Latency-stream frames the ring saw too (counted, measured elsewhere).
    pub latency_frames: u64,
    /// Turns on which the transmit path had no room.
    pub tx_full: u64,
    /// When this core's first and last frames were taken (none: none was).
    pub first_send: Option<Instant>,
    pub last_send: Option<Instant>,
    /// Per flow and interval: frames sent in it, and frames sent in it that
    /// arrived (by the send time they carry). Empty unless asked for.
    pub interval_sent: Vec<Vec<u64>>,
    pub interval_received: Vec<Vec<u64>>,
}

/// The trial's timing and identity, the same on every core.
pub struct CoreTrial<'a> {
    pub session_id: u32,
    /// When the schedules start (the intervals count from here).
    pub start: Instant,
    /// Count sends and arrivals per interval of this (positive) length
    /// (Y.1564's availability); `intervals` of them at most (bounded memory).
    pub interval: Option<Span>,
    pub intervals: usize,
    pub end: Instant,
    pub drain: Span,
    pub stop: &'a AtomicUsize,
}

/// Run one core's part of a trial. Returns its counts; `flows` keep their
/// schedules (skipped slots, tester limit) for the caller to read.
pub fn run(
    io: &mut CoreIo,
    flows: &mut [CoreFlow],
    trial: &CoreTrial,
    mut latency: Option<&mut dyn LatencyHook>,
    mut clock: Option<CoreClock>,
) -> Result<CoreCounts, EngineError> {
    let nflows = flows.len();
    let mut c = CoreCounts {
        sent: vec![0; nflows],
        catch_up: vec![0; nflows],
        rx: (0..nflows)
            .map(|_| (0..MAX_CORES).map(|_| SequenceTracker::new()).collect())
            .collect(),
        transit: (0..nflows).map(|_| Summary::new()).collect(),
        transit_hw: (0..nflows).map(|_| Summary::new()).collect(),
        interval_sent: vec![vec![0; trial.intervals]; nflows],
        interval_received: vec![vec![0; trial.intervals]; nflows],
        ..CoreCounts::default()
    };
    let mut sending = true;
    let mut drain_until = Instant::MAX;
    // Sleeps between slots end within a µs of when asked (the default 50
    // µs slack would make every early wake-up a late one). Without it the
    // core spins, as before.
    let can_sleep = latency.is_none() && misura_sys::timer::set_timer_slack_ns(1_000).is_ok();
    loop {
        let now = realtime();
        if sending
            && (now >= trial.end || trial.stop.load(Ordering::Relaxed) != 0 || bursts_done(flows))
        {
            sending = false;
            flush_all(&mut io.tx)?;
            drain_until = now.saturating_add(trial.drain);
        }
        if sending {
            send_turn(&mut io.tx, flows, now, trial, &mut c)?;
        }
        if let Some(l) = latency.as_deref_mut() {
            l.turn(now, sending).map_err(EngineError::Latency)?;
        }
        let n = receive(io, trial, &mut c, clock.as_mut(), now)?;
        // The receive ring holds what arrives while the core sleeps (at
        // most MAX_IDLE_SLEEP of it): a core that receives too sleeps, so
        // that each slot's wake-up lets it take its CPU back from other
        // tasks at once rather than at the next scheduler tick (4 ms at
        // HZ=250).
        if sending && can_sleep {
            if let Some(next) = next_due(flows) {
                let wake = (next - WAKE_EARLY).min(now + MAX_IDLE_SLEEP).min(trial.end);
                if next - now > IDLE_SLEEP_MIN && wake > now {
                    misura_sys::timer::sleep_until_instant(wake)?;
                }
            }
        }
        if !sending {
            let latency_done = latency.as_deref().is_none_or(|l| l.finished(now));
            if now >= drain_until && latency_done {
                break;
            }
            if n == 0 && now >= drain_until.saturating_add(trial.drain) {
                // The latency stream's own timeout has had twice the drain.
                break;
            }
        }
    }
    c.hardware_u95_ns = clock.map_or(0.0, |k| k.u95_max);
    Ok(c)
}

/// When the earliest next slot of the flows still sending is due (none for
/// a burst, whose frames are all due at once).
/// Called on every idle turn of the loop, so it allocates nothing.
fn next_due(flows: &[CoreFlow]) -> Option<Instant> {
    let mut next: Option<Instant> = None;
    for f in flows {
        f.burst.is_none().then_some(())?;
        let due = f.schedule.due_at(f.schedule.next_slot());
        next = Some(next.map_or(due, |n| n.min(due)));
    }
    next
}

fn bursts_done(flows: &[CoreFlow]) -> bool {
    !flows.is_empty()
        && flows
            .iter()
            .all(|f| f.burst.is_some_and(|b| f.next_seq >= b))
}

/// Queue every flow's due frames and hand them to the kernel. A frame the
/// path did not take gives its sequence number back and stays due.
fn send_turn(
    tx: &mut TxPath,
    flows: &mut [CoreFlow],
    now: Instant,
    trial: &CoreTrial,
    c: &mut CoreCounts,
) -> Result<(), EngineError> {
    for (fi, f) in flows.iter_mut().enumerate() {
        let backlog = f.schedule.due(now);
        let mut due = backlog.min(BATCH);
        // Back from being descheduled: what is due now leaves as a burst.
        let slot_ns = 1e9 / f.schedule.offered_fps().max(1e-9);
        if let Some(last) = f.last_turn.replace(now) {
            let gap = now - last;
            if f.kept_up && gap > DESCHEDULED && gap.as_ns() as f64 > 2.0 * slot_ns {
                f.catch_up_left = backlog;
            }
        }
        if let Some(b) = f.burst {
            due = due.min(b - f.next_seq.min(b));
        }
        let mut queued = 0;
        while queued < due {
            let (tpl, seq) = (&f.template, f.next_seq);
            if !tx.push_with(|buf| tpl.write(seq, seq, now, buf)) {
                c.tx_full += 1;
                break;
            }
            f.next_seq += 1;
            queued += 1;
        }
        if queued == 0 {
            f.kept_up = backlog == 0;
            continue;
        }
        let flushed = tx.flush()? as u64;
        let took = match tx {
            TxPath::Packet(_) => flushed,
            _ => queued,
        };
        let kept = queued - took.min(queued);
        if kept > 0 {
            tx.drop_unsent();
            f.next_seq -= kept;
            c.tx_full += 1;
        }
        if took > 0 {
            c.first_send.get_or_insert(now);
            c.last_send = Some(now);
        }
        c.sent[fi] += took;
        f.kept_up = took >= backlog;
        let caught_up = took.min(f.catch_up_left);
        f.catch_up_left -= caught_up;
        c.catch_up[fi] += caught_up;
        if let Some(k) = interval_of(trial, now) {
            c.interval_sent[fi][k] += took;
        }
        f.schedule.on_sent(took);
    }
    Ok(())
}

/// At the end of sending: make sure the kernel has everything queued.
fn flush_all(tx: &mut TxPath) -> Result<(), EngineError> {
    tx.flush()?;
    Ok(())
}

/// Walk the receive ring once.
/// The interval `t` falls in, if intervals are counted and it is inside.
#[inline]
fn interval_of(trial: &CoreTrial, t: Instant) -> Option<usize> {
    let iv = trial.interval?.as_ns();
    let k = usize::try_from((t - trial.start).as_ns().max(0) / iv).ok()?;
    (k < trial.intervals).then_some(k)
}

fn receive(
    io: &mut CoreIo,
    trial: &CoreTrial,
    c: &mut CoreCounts,
    mut clock: Option<&mut CoreClock>,
    now: Instant,
) -> Result<usize, EngineError> {
    let session = trial.session_id;
    let n = io.rx.poll(0, |f: &RingFrame<'_>| {
        let d = f.data;
        let off = match d.get(12..14) {
            Some([0x81, 0x00]) => 18,
            Some(_) => 14,
            None => {
                c.malformed += 1;
                return;
            }
        };
        // A load frame inside a PTPv2 Sync header (`--frame-format ptp`):
        // the probe follows it.
        let body = match d.get(off - 2..off) {
            Some(&[0x88, 0xF7]) => match misura_wire::ptp::strip_misura_sync(&d[off..]) {
                Ok(rest) => rest,
                Err(_) => {
                    c.malformed += 1;
                    return;
                }
            },
            _ => &d[off..],
        };
        let Ok(h) = ProbeHeader::new_checked(body) else {
            c.malformed += 1;
            return;
        };
        if h.magic() != MAGIC {
            c.malformed += 1;
            return;
        }
        if h.session_id() != session {
            c.foreign += 1;
            return;
        }
        let stamp = f.stamp_at.map(|t| t.as_ns());
        let stream = h.stream();
        if stream == MEASURE_STREAM {
            // Measured on the latency stream's own socket.
            c.latency_frames += 1;
            return;
        }
        let Some((flow, core)) = flow_core(stream) else {
            c.foreign += 1;
            return;
        };
        let Some(t) = c.rx.get_mut(flow).and_then(|v| v.get_mut(core)) else {
            c.foreign += 1;
            return;
        };
        match f.stamp {
            StampSource::Hardware => c.hardware_stamped += 1,
            StampSource::Software => c.stamped += 1,
            StampSource::None => c.unstamped += 1,
        }
        let fresh = matches!(t.record(h.seq()), Arrival::InOrder | Arrival::Reordered);
        let sent = h.sender_timestamp() as i64;
        match (stamp, f.stamp, sent > 0) {
            (Some(s), StampSource::Hardware, true) => {
                match clock.as_deref_mut().and_then(|k| k.to_sys(s, now)) {
                    Some(sys) => c.transit_hw[flow].record(sys - sent),
                    None => c.hardware_unconverted += 1,
                }
            }
            (Some(s), _, true) => c.transit[flow].record(s - sent),
            _ => {}
        }
        if fresh {
            if let Some(k) = interval_of(trial, Instant::from_ns(sent)) {
                c.interval_received[flow][k] += 1;
            }
        }
    })?;
    Ok(n)
}
