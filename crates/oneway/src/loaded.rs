//! `misura oneway` in engine mode: the offered rate is carried by the frame
//! engine's load stream (every frame sequenced, counted, kernel-RX-stamped)
//! and every N-th slot's worth of it by the latency stream, which is the
//! ordinary one-way measurement (TX/RX windows, kernel TX stamps, so
//! calibration and SUT latency still apply) run inside the load on its own
//! filtered socket. Both streams are open-loop on their own schedules:
//! load at rate × (1 − 1/N), latency at rate / N.

use super::engine::{Ports, Stop, Turn};
use super::mode::{LoadOptions, OnewayEngine};
use super::plan::Resolved;
use crate::error::{LoopError, OnewayError, Result};
use crossbeam_queue::ArrayQueue;
use misura_engine::open::Engine;
use misura_engine::EngineChoice;
use misura_engine::{self as frames, EngineRequest, Flow, LatencyHook, TrialSpec};
use misura_measure::oneway_session::{OnewayCounters, OnewayPlan, MEASURE_STREAM};
use misura_measure::time::{Instant, Span};
use misura_measure::FrameRecord;
use misura_report::load::OnewayLoad;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Highest rate the per-frame loop is asked to carry by itself: above it,
/// `--engine auto` uses the frame engine. The loop sustained 0.478 M
/// frames/s send + receive on the lab's veth cable (scripts/bench-oneway.sh).
pub const LOOP_MAX_FPS: f64 = 200_000.0;
/// Default share of the latency stream in engine mode.
pub const DEFAULT_LATENCY_EVERY: u64 = 1000;
/// Trial length in engine mode when neither --count nor --duration is given.
pub const DEFAULT_ENGINE_DURATION_NS: i64 = 10_000_000_000;

/// Highest rate the per-frame loop accepts when forced (`--engine loop`):
/// above what it sustains it would send nothing but postponed slots.
pub const LOOP_REFUSE_FPS: f64 = 1_000_000.0;

/// Engine mode as resolved: the transmit path to ask for and N.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Decided {
    pub choice: EngineChoice,
    pub every: u64,
}

/// Loop or engine, now that the rate is known. A forced loop above what it
/// sustains is refused with the figure, never run to send nothing.
pub fn decide(opts: Option<&LoadOptions>, r: &Resolved) -> Result<Option<Decided>, LoopError> {
    let rate = r.config.rate_fps;
    let loop_refused = |forced: bool| LoopError::TooFast {
        rate_fps: rate,
        max_fps: LOOP_REFUSE_FPS,
        forced,
    };
    let Some(o) = opts else {
        return if rate > LOOP_REFUSE_FPS {
            Err(loop_refused(false))
        } else {
            Ok(None)
        };
    };
    let every = o.latency_every.unwrap_or(DEFAULT_LATENCY_EVERY);
    let choice = match o.mode {
        OnewayEngine::Loop if o.latency_every.is_some() => return Err(LoopError::LatencyEvery),
        OnewayEngine::Loop if rate > LOOP_REFUSE_FPS => return Err(loop_refused(true)),
        OnewayEngine::Loop => return Ok(None),
        OnewayEngine::Auto
            if o.latency_every.is_none() && o.engine.cores == 1 && rate <= LOOP_MAX_FPS =>
        {
            return Ok(None)
        }
        OnewayEngine::Auto => EngineChoice::Auto,
        OnewayEngine::Packet => EngineChoice::Packet,
        OnewayEngine::Mmap => EngineChoice::Mmap,
        OnewayEngine::Xdp => EngineChoice::Xdp,
    };
    Ok(Some(Decided { choice, every }))
}

/// Where the probe header's `stream` field sits in a frame (no VLAN tag:
/// the kernel has taken it off before a socket filter runs), after the
/// PTPv2 Sync header when the probes travel inside PTP.
fn stream_offset(ethertype: u16) -> u32 {
    let envelope = if ethertype == misura_wire::ptp::ETHERTYPE_PTP {
        misura_wire::ptp::SYNC_LEN as u32
    } else {
        0
    };
    14 + envelope + 12
}

struct Hook<'a> {
    turn: Turn<'a>,
    stopped: bool,
}

impl LatencyHook for Hook<'_> {
    fn turn(&mut self, now: Instant, sending: bool) -> Result<(), misura_engine::HookError> {
        if !sending && !self.stopped {
            self.turn.session.stop(now);
            self.stopped = true;
        }
        // The engine hands the chain back whole (EngineError::Latency).
        self.turn.step().map(drop).map_err(|e| e.into())
    }

    fn finished(&self, now: Instant) -> bool {
        self.turn.session.is_finished(now)
    }
}

/// The latency stream's plan: the one-way plan at 1/N of the rate, for the
/// trial's length.
pub fn latency_plan(mut plan: OnewayPlan, every: u64, duration: Span) -> OnewayPlan {
    plan.period = plan.period.times(every);
    plan.late_tolerance = plan.period.span() - Span::from_ns(1);
    plan.count = None;
    plan.duration = Some(duration);
    plan.expected_frames = Some((duration.as_ns() / plan.period.as_ns()) as u64);
    plan
}

/// The trial length asked for: --duration, or --count frames at the rate.
pub fn duration_ns(r: &Resolved) -> i64 {
    let cfg = &r.config;
    match (cfg.duration_s, cfg.count) {
        (Some(d), _) => (d * 1e9) as i64,
        (None, Some(n)) if cfg.rate_fps > 0.0 => (n as f64 / cfg.rate_fps * 1e9) as i64,
        _ => DEFAULT_ENGINE_DURATION_NS,
    }
}

/// Open the frame engine for engine mode, and give the latency stream its
/// own socket: before the run, so that a path that cannot open is the
/// run's error, not a partial result.
pub fn open(ports: &Ports, r: &Resolved, opts: &LoadOptions, decided: Decided) -> Result<Engine> {
    let cfg = &r.config;
    let max_frame = cfg.sizes.iter().max().copied().unwrap_or(46) + 18;
    let engine = frames::open::open(&EngineRequest {
        tx: cfg.tx.clone(),
        rx: cfg.rx.clone(),
        ethertype: cfg.ethertype,
        choice: decided.choice,
        cores: opts.engine.cores as usize,
        max_frame,
        qdisc_bypass: opts.engine.qdisc_bypass,
        hardware_stamps: false,
    })?;
    ports
        .rx
        .filter_u16(stream_offset(cfg.ethertype), MEASURE_STREAM)
        .map_err(OnewayError::step(
            "giving the latency stream its own socket",
        ))?;
    Ok(engine)
}

/// Run the load and the latency stream together on an opened engine.
#[allow(clippy::too_many_arguments)]
pub fn run(
    engine: &mut Engine,
    ports: &Ports,
    frames: &mut super::engine::Frames,
    plan: &OnewayPlan,
    r: &Resolved,
    out: &ArrayQueue<FrameRecord>,
    stop: &AtomicUsize,
    opts: &LoadOptions,
    decided: Decided,
) -> Result<(OnewayCounters, Stop, OnewayLoad)> {
    let cfg = &r.config;
    let duration = duration_ns(r);
    let every = decided.every;
    let lplan = latency_plan(plan.clone(), every, Span::from_ns(duration));
    let load_rate = cfg.rate_fps * (1.0 - 1.0 / every as f64);
    let spec = TrialSpec {
        flows: vec![Flow {
            rate_fps: load_rate,
            payloads: cfg.sizes.clone(),
            vlan: None,
        }],
        duration: Span::from_ns(duration),
        burst: None,
        drain: Span::from_ns(cfg.timeout_ns),
        max_backlog: Span::from_ns(1_000_000),
        catch_up_frames: 0,
        session_id: cfg.session_id,
        ethertype: cfg.ethertype,
        dst: misura_wire::MacAddr(r.rx.mac),
        src: misura_wire::MacAddr(r.tx.mac),
        cpus: cpus(opts.cpu, opts.engine.cores as usize),
        interval: None,
    };
    let mut hook = Hook {
        turn: Turn::new(ports, frames, &lplan, out)?,
        stopped: false,
    };
    let trial = frames::run_trial(engine, &spec, Some(&mut hook), stop)?.trial;
    let counters = hook.turn.counters();
    let reason = match stop.load(Ordering::Relaxed) {
        0 => Stop::Finished,
        s => Stop::Signal(s as i32),
    };
    Ok((
        counters,
        reason,
        OnewayLoad {
            engine: engine.facts(),
            latency_every: every,
            trial,
        },
    ))
}

/// Core i's CPU: the loop's --cpu and the ones after it; none when --cpu
/// was not given (the scheduler places them).
fn cpus(first: Option<usize>, cores: usize) -> Vec<usize> {
    let online = misura_sys::sched::online_cpus().max(1);
    first.map_or_else(Vec::new, |c| (0..cores).map(|i| (c + i) % online).collect())
}
