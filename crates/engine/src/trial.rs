//! A trial over all cores: each core sends its share of every flow with its
//! own stream ids and receives through its own ring (one fanout group), and
//! the per-core counts are merged exactly: a frame is delivered to one ring
//! only, so received counts add; the tester's own limits (a schedule that
//! fell behind, a ring that overran) are named, never blamed on the SUT.

pub use super::core::LatencyHook;
use super::core::{self, CoreCounts, CoreFlow, CoreTrial};
use super::flows::{Flow, FlowTemplate};
use super::open::{Engine, EngineKind};
use super::streams::stream_id;
use crate::error::EngineError;
use misura_measure::load::rate::RateSchedule;
use misura_measure::time::Span;
use misura_report::load::{LoadFlow, LoadTrial};
use misura_stats::Summary;
use misura_wire::MacAddr;
use std::sync::atomic::AtomicUsize;

/// One trial.
#[derive(Clone, Debug)]
pub struct TrialSpec {
    pub flows: Vec<Flow>,
    /// How long the flows send.
    pub duration: Span,
    /// Send exactly this many frames per flow at the flow's rate, then
    /// stop (RFC 2544 §26.4's bursts at the line rate).
    pub burst: Option<u64>,
    /// How long to keep receiving after the last send.
    pub drain: Span,
    /// How far behind its schedule a core may fall before slots are
    /// skipped (and the trial marked tester-limited).
    pub max_backlog: Span,
    /// At a low rate, a backlog of this many frames is kept however long it
    /// is: after its loop was descheduled for a few ms, a core sends them
    /// late rather than skip them (0: `max_backlog` alone).
    pub catch_up_frames: u64,
    pub session_id: u32,
    pub ethertype: u16,
    pub dst: MacAddr,
    pub src: MacAddr,
    /// CPU of each core's loop (`cpus[i]` for core i); empty: not pinned.
    pub cpus: Vec<usize>,
    /// Count sends and arrivals per interval of this length.
    pub interval: Option<Span>,
}

/// Most intervals a trial counts (a day of seconds).
pub const MAX_INTERVALS: usize = 86_400;

/// A trial's figures and, when asked for, per flow and interval the frames
/// sent and the frames of those that arrived.
pub struct TrialRun {
    pub trial: LoadTrial,
    pub intervals: Vec<Vec<[u64; 2]>>,
}

/// Run one trial on every core of `engine`; `latency` runs on core 0.
pub fn run_trial(
    engine: &mut Engine,
    spec: &TrialSpec,
    latency: Option<&mut (dyn LatencyHook + Send)>,
    stop: &AtomicUsize,
) -> Result<TrialRun, EngineError> {
    let ncores = engine.cores.len();
    let start = misura_sys::clock::realtime() + Span::from_millis(1);
    let mut per_core: Vec<Vec<CoreFlow>> = Vec::with_capacity(ncores);
    for c in 0..ncores {
        let mut flows = Vec::with_capacity(spec.flows.len());
        for (fi, flow) in spec.flows.iter().enumerate() {
            let core_fps = flow.rate_fps / ncores as f64;
            let template = FlowTemplate::build(
                flow,
                spec.dst,
                spec.src,
                spec.ethertype,
                spec.session_id,
                stream_id(fi, c),
            )?;
            flows.push(CoreFlow {
                template,
                schedule: RateSchedule::new(
                    core_fps,
                    start,
                    backlog(spec.max_backlog, spec.catch_up_frames, core_fps),
                )
                .map_err(|why| EngineError::Rate { flow: fi, why })?,
                burst: spec.burst.map(|b| share(b, c, ncores)),
                last_turn: None,
                catch_up_left: 0,
                kept_up: true,
                next_seq: 0,
            });
        }
        per_core.push(flows);
    }
    let intervals = spec.interval.map_or(0, |iv| {
        ((spec.duration.as_ns() / iv.as_ns().max(1)) as usize + 1).min(MAX_INTERVALS)
    });
    let trial = CoreTrial {
        session_id: spec.session_id,
        start,
        interval: spec.interval.filter(|iv| iv.is_positive()),
        intervals,
        end: start.saturating_add(spec.duration),
        drain: spec.drain,
        stop,
    };
    let mut drops_before = 0;
    for io in &mut engine.cores {
        drops_before += io.rx.stats()?.drops;
    }
    let cpu0 = misura_sys::rusage::process_cpu();
    let mut latency = latency;
    let rx_clock = engine.rx_clock.as_ref();
    let nice = engine.nice;
    let results: Vec<Result<CoreCounts, EngineError>> = std::thread::scope(|s| {
        let mut handles = Vec::new();
        for (i, (io, flows)) in engine.cores.iter_mut().zip(per_core.iter_mut()).enumerate() {
            let cpu = spec.cpus.get(i).copied();
            let hook = if i == 0 { latency.take() } else { None };
            let clock = rx_clock.map(|c| c.core());
            let trial = &trial;
            handles.push(s.spawn(move || {
                if let Some(cpu) = cpu {
                    misura_sys::sched::pin_to_cpu(cpu)?;
                }
                if nice != 0 {
                    misura_sys::sched::set_nice(nice)?;
                }
                let hook = hook.map(|h| h as &mut dyn LatencyHook);
                core::run(io, flows, trial, hook, clock)
            }));
        }
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err(EngineError::Panicked)))
            .collect()
    });
    let cpu1 = misura_sys::rusage::process_cpu();
    let counts = results.into_iter().collect::<Result<Vec<_>, _>>()?;
    let mut ring_drops = 0;
    for io in &mut engine.cores {
        ring_drops += io.rx.stats()?.drops;
    }
    let ring_drops = ring_drops.saturating_sub(drops_before);
    let cpu_s = ((cpu1.0 + cpu1.1).saturating_sub(cpu0.0 + cpu0.1)) as f64 / 1e9;
    let mut iv = vec![vec![[0u64; 2]; intervals]; spec.flows.len()];
    for c in &counts {
        for (fi, per) in iv.iter_mut().enumerate() {
            for (k, slot) in per.iter_mut().enumerate() {
                slot[0] += c.interval_sent[fi][k];
                slot[1] += c.interval_received[fi][k];
            }
        }
    }
    Ok(TrialRun {
        trial: merge(engine.kind, spec, &per_core, &counts, ring_drops, cpu_s),
        intervals: iv,
    })
}

/// How far behind a core sending `fps` may fall before it skips slots:
/// `max`, or `catch_up_frames` slots when those take longer.
fn backlog(max: Span, catch_up_frames: u64, fps: f64) -> Span {
    let frames = if fps > 0.0 {
        Span::from_ns((catch_up_frames as f64 * 1e9 / fps).min(1e12) as i64)
    } else {
        Span::ZERO
    };
    max.max(frames)
}

/// Core `c`'s share of `total` frames, the remainder to the first cores.
fn share(total: u64, c: usize, n: usize) -> u64 {
    let n = n as u64;
    total / n + u64::from((c as u64) < total % n)
}

fn merge(
    kind: EngineKind,
    spec: &TrialSpec,
    per_core: &[Vec<CoreFlow>],
    counts: &[CoreCounts],
    ring_drops: u64,
    cpu_s: f64,
) -> LoadTrial {
    let first = counts.iter().filter_map(|c| c.first_send).min();
    let last = counts.iter().filter_map(|c| c.last_send).max();
    let sending_ns = match (first, last) {
        (Some(first), Some(last)) => (last - first).as_ns().max(0),
        _ => 0,
    };
    let hardware = counts.iter().any(|c| c.hardware_stamped > 0);
    let mut flows = Vec::with_capacity(spec.flows.len());
    for (fi, flow) in spec.flows.iter().enumerate() {
        let sent: u64 = counts.iter().map(|c| c.sent[fi]).sum();
        let (mut received, mut duplicates, mut reordered, mut too_old) = (0, 0, 0, 0);
        let mut transit = Summary::new();
        let mut transit_hw = Summary::new();
        for rc in counts {
            for t in &rc.rx[fi] {
                let k = t.counts();
                received += k.received;
                duplicates += k.duplicates;
                reordered += k.reordered;
                too_old += k.too_old;
            }
            transit.merge(&rc.transit[fi]);
            transit_hw.merge(&rc.transit_hw[fi]);
        }
        let skipped = per_core.iter().map(|p| p[fi].schedule.skipped()).sum();
        let catch_up_frames = counts.iter().map(|c| c.catch_up[fi]).sum();
        let lost = sent.saturating_sub(received);
        // A burst's rate is over its own span: n frames leave in n − 1
        // gaps; too short a burst to time keeps the rate it was offered.
        let achieved_fps = match spec.burst {
            Some(_) if sent > 1 && sending_ns > 0 => (sent - 1) as f64 * 1e9 / sending_ns as f64,
            Some(_) => flow.rate_fps,
            None if spec.duration > Span::ZERO => sent as f64 * 1e9 / spec.duration.as_ns() as f64,
            None => 0.0,
        };
        flows.push(LoadFlow {
            offered_fps: flow.rate_fps,
            achieved_fps,
            sent,
            received,
            lost,
            loss_ratio: if sent > 0 {
                lost as f64 / sent as f64
            } else {
                0.0
            },
            duplicates,
            reordered,
            too_old,
            skipped,
            catch_up_frames,
            transit: transit.snapshot().into(),
            transit_hardware: hardware.then(|| transit_hw.snapshot().into()),
        });
    }
    let mut out = LoadTrial {
        flows,
        duration_ns: if spec.burst.is_some() {
            sending_ns
        } else {
            spec.duration.as_ns()
        },
        sending_ns,
        stamped: counts.iter().map(|c| c.stamped).sum(),
        hardware_stamped: counts.iter().map(|c| c.hardware_stamped).sum(),
        unstamped: counts.iter().map(|c| c.unstamped).sum(),
        hardware_unconverted: counts.iter().map(|c| c.hardware_unconverted).sum(),
        hardware_u95_ns: hardware
            .then(|| counts.iter().map(|c| c.hardware_u95_ns).fold(0.0, f64::max)),
        foreign: counts.iter().map(|c| c.foreign).sum(),
        malformed: counts.iter().map(|c| c.malformed).sum(),
        ring_drops,
        tx_full: counts.iter().map(|c| c.tx_full).sum(),
        cpu_s,
        tester_limit: None,
    };
    out.tester_limit = tester_limit(
        &out,
        kind,
        counts.len(),
        spec.burst.map(|b| b / counts.len().max(1) as u64),
    );
    out
}

/// A tester that sends less than 99 % of what it offered (it fell more than
/// 1 % of the trial behind its schedule: the host descheduled it, or the
/// path is too slow), or whose own receive ring dropped frames, limited the
/// trial itself.
fn tester_limit(
    o: &LoadTrial,
    kind: EngineKind,
    cores: usize,
    burst: Option<u64>,
) -> Option<String> {
    let mut why = Vec::new();
    let offered = o.offered_fps();
    let achieved = o.achieved_fps();
    // A burst is timed from its first to its last batch, which the loop's
    // own turn (tens of µs on a busy VM) can stretch: it is short of the
    // rate when it took 1 % and 100 µs longer than its frames need.
    let short = match burst {
        Some(_) => {
            let sent = o.sent();
            let need_ns = sent.saturating_sub(1) as f64 / offered.max(1e-9) * 1e9;
            o.flows.iter().any(|f| f.sent < burst.unwrap_or(0))
                || o.sending_ns as f64 > need_ns * 1.01 + 100_000.0
        }
        None => offered > 0.0 && achieved < 0.99 * offered,
    };
    {
        if short {
            why.push(format!(
                "the {} transmit path sent {:.0} frames/s of the {:.0} offered ({:.1} %) on {} core(s)",
                kind.name(),
                achieved,
                offered,
                100.0 * achieved / offered,
                cores
            ));
        }
    }
    if o.ring_drops > 0 {
        why.push(format!(
            "the tester's own receive ring dropped {} frames (give the engine more cores, or lower the rate)",
            o.ring_drops
        ));
    }
    (!why.is_empty()).then(|| why.join("; "))
}

#[cfg(test)]
mod tests {
    use super::backlog;
    use misura_measure::time::Span;

    #[test]
    fn a_slow_flow_keeps_its_catch_up_frames_a_fast_one_the_bound() {
        // The backlog, ns, of a core at `fps` with `max_ns` and 8 or 0 frames.
        let ns = |max_ns, frames, fps| backlog(Span::from_ns(max_ns), frames, fps).as_ns();
        // 305 frames/s: 8 slots are 26.2 ms, longer than 1 ms.
        assert_eq!(ns(1_000_000, 8, 305.0), 26_229_508);
        // 1 M frames/s: 8 slots are 8 µs, so the 1 ms bound stands.
        assert_eq!(ns(1_000_000, 8, 1e6), 1_000_000);
        assert_eq!(ns(1_000_000, 0, 305.0), 1_000_000);
        assert_eq!(ns(1_000_000, 8, 0.0), 1_000_000);
        // A burst's own bound is never shortened.
        assert_eq!(ns(10_000_000_000, 8, 305.0), 10_000_000_000);
    }
}
