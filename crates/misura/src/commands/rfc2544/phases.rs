//! The trials of RFC 2544 §26.1, §26.3 and §26.4 on the frame engine. The
//! decisions (which rate next, when the search is done, the burst length,
//! the buffer time) are `misura_measure::load`'s; this file runs the
//! trials they ask for and lists them.

use super::args::Rfc2544Args;
use super::sizes::SizeSpec;
use crate::shared::frames::{self, open::Engine, EngineRequest, Flow, TrialSpec};
use anyhow::{anyhow, Result};
use misura_measure::load::{b2b, flr, search};
use misura_report::load::LoadTrial;
use misura_report::rfc2544::{BackToBack, RateBound, SizeReport, ThroughputResult, TrialRow};
use misura_wire::MacAddr;
use std::sync::atomic::{AtomicUsize, Ordering};

/// How long a trial keeps receiving after its last send (RFC 2544 §23
/// waits 2 s for stragglers before the next trial; a frame later than
/// this is lost for the tester too).
const DRAIN_NS: i64 = 250_000_000;

/// What every trial of a run shares.
pub struct Ctx<'a> {
    pub a: &'a Rfc2544Args,
    pub engine: Option<Engine>,
    pub req: EngineRequest,
    pub dst: MacAddr,
    pub src: MacAddr,
    pub trial_ns: i64,
    pub short_ns: i64,
    pub stop: &'a AtomicUsize,
    /// The same flag, for the latency trial (`misura oneway`'s measure).
    pub stop_arc: &'a std::sync::Arc<AtomicUsize>,
    pub cpus: Vec<usize>,
}

impl Ctx<'_> {
    /// Open the engine again after the latency trial closed it.
    pub fn reopen(&mut self) -> Result<()> {
        self.engine = Some(frames::open::open(&self.req)?);
        Ok(())
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed) != 0
    }

    /// One trial at `rate_fps` for `duration_ns`, or a burst of `burst` frames.
    pub fn trial(
        &mut self,
        size: &SizeSpec,
        rate_fps: f64,
        duration_ns: i64,
        burst: Option<u64>,
    ) -> Result<LoadTrial> {
        let engine = self
            .engine
            .as_mut()
            .ok_or_else(|| anyhow!("the frame engine is closed"))?;
        // A burst runs until its last frame has left: twice its time at the
        // rate and 10 ms more bound it (it ends as soon as it is sent).
        let duration_ns = match burst {
            Some(n) => duration_ns.max((2.0 * n as f64 / rate_fps * 1e9) as i64 + 10_000_000),
            None => duration_ns,
        };
        let spec = TrialSpec {
            flows: vec![Flow {
                rate_fps,
                payloads: size.payloads(),
                vlan: None,
            }],
            duration_ns,
            burst,
            drain_ns: DRAIN_NS,
            // A burst keeps every frame (no slot skipped): a tester that
            // falls behind shows as a burst rate below the line rate.
            max_backlog_ns: if burst.is_some() {
                10_000_000_000
            } else {
                1_000_000
            },
            catch_up_frames: frames::CATCH_UP_FRAMES,
            session_id: fresh_session(),
            ethertype: self.req.ethertype,
            dst: self.dst,
            src: self.src,
            cpus: self.cpus.clone(),
            interval_ns: None,
        };
        Ok(frames::run_trial(engine, &spec, None, self.stop)?.trial)
    }
}

/// A session id per trial, so that a straggler of the last trial is
/// foreign to this one.
fn fresh_session() -> u32 {
    let t = misura_sys::clock::realtime_ns() as u64;
    (t ^ (t >> 29) ^ u64::from(std::process::id()) << 8) as u32
}

fn row(phase: &str, t: &LoadTrial) -> TrialRow {
    attempt_row(phase, t, 1)
}

fn attempt_row(phase: &str, t: &LoadTrial, attempt: u32) -> TrialRow {
    TrialRow {
        attempt,
        phase: phase.into(),
        offered_fps: t.offered_fps(),
        achieved_fps: t.achieved_fps(),
        sent: t.sent(),
        received: t.received(),
        loss_ratio: t.loss_ratio(),
        duration_s: t.duration_ns as f64 / 1e9,
        tester_limit: t.tester_limit.clone(),
    }
}

/// A trial the tester limited: the size's `tester_max_fps` is then the
/// highest rate the tester reached in such a trial (what it could send
/// when asked for more).
fn note_tester_max(s: &mut SizeReport, t: &LoadTrial) {
    if t.tester_limit.is_some() && t.achieved_fps() > 0.0 {
        let m = s
            .tester_max_fps
            .map_or(t.achieved_fps(), |m| m.max(t.achieved_fps()));
        s.tester_max_fps = Some(m);
    }
}

fn load_err(e: misura_measure::load::LoadError) -> anyhow::Error {
    crate::shared::exit::Failure::Params(e.to_string()).into()
}

/// §26.1: NDR and PDR by the search.
pub fn throughput(ctx: &mut Ctx, size: &SizeSpec, s: &mut SizeReport) -> Result<ThroughputResult> {
    let started = std::time::Instant::now();
    let a = ctx.a;
    let line = s.line_rate_fps;
    let mut srch = search::ThroughputSearch::new(search::SearchConfig {
        min_fps: (line * 1e-4).max(1.0),
        max_fps: line,
        targets: vec![
            search::LossTarget {
                name: "NDR".into(),
                loss_ratio: 0.0,
            },
            search::LossTarget {
                name: "PDR".into(),
                loss_ratio: a.pdr.share,
            },
        ],
        short_trial_ns: ctx.short_ns,
        final_trial_ns: ctx.trial_ns,
        relative_resolution: a.resolution.share,
        max_trials: a.max_trials,
    })
    .map_err(load_err)?;
    let mut rows = Vec::new();
    while let Some(req) = srch.next_trial() {
        if ctx.stopped() {
            break;
        }
        let t = ctx.trial(size, req.rate_fps, req.duration_ns, None)?;
        note_tester_max(s, &t);
        let phase = match req.phase {
            search::Phase::Short => "short",
            search::Phase::Final => "final",
        };
        rows.push(row(phase, &t));
        srch.record(search::TrialResult {
            offered_fps: t.offered_fps(),
            achieved_fps: t.achieved_fps(),
            sent: t.sent(),
            received: t.received(),
            tester_limited: t.tester_limit.is_some(),
        })
        .map_err(load_err)?;
    }
    let o = srch.outcome();
    if let Some(m) = o.tester_max_fps {
        s.tester_max_fps = Some(s.tester_max_fps.map_or(m, |x| x.max(m)));
    }
    let bound = |name: &str| {
        let b = o.bound(name);
        let lower = b.and_then(|b| b.lower_fps).unwrap_or(0.0);
        RateBound {
            found: b.is_some_and(|b| b.found),
            lower_fps: lower,
            upper_fps: b.and_then(|b| b.upper_fps).unwrap_or(line),
            lower_load: lower / line,
            lower_bps: size.frame_bps(lower),
        }
    };
    let stopped_by = match (ctx.stopped(), o.stopped_by) {
        (true, _) => "interrupted",
        (false, Some(search::StoppedBy::Resolution)) => "resolution",
        (false, Some(search::StoppedBy::MaxTrials)) => "max_trials",
        (false, Some(search::StoppedBy::TesterLimit)) => "tester_limit",
        (false, None) => "unfinished",
    };
    Ok(ThroughputResult {
        ndr: bound("NDR"),
        pdr: bound("PDR"),
        pdr_ratio: a.pdr.share,
        stopped_by: stopped_by.into(),
        trials: rows,
        elapsed_s: started.elapsed().as_secs_f64(),
    })
}

/// §26.3: from 100 % of the line rate down in 10 % steps until two
/// successive steps lose nothing.
pub fn frame_loss(ctx: &mut Ctx, size: &SizeSpec, s: &mut SizeReport) -> Result<Vec<TrialRow>> {
    let mut plan = flr::FlrPlan::new(s.line_rate_fps, 10.0, ctx.trial_ns).map_err(load_err)?;
    let mut rows = Vec::new();
    while let Some((percent, rate, duration)) = plan.next_trial() {
        if ctx.stopped() {
            break;
        }
        let t = ctx.trial(size, rate, duration, None)?;
        note_tester_max(s, &t);
        rows.push(row(&format!("{percent:.0}%"), &t));
        plan.record(t.sent(), t.received(), t.tester_limit.is_some());
    }
    Ok(rows)
}

/// §26.4 as RFC 9004 updates it: the longest burst at the line rate
/// without loss, `--b2b-trials` times. A tester that cannot keep the line
/// rate through a burst, on every attempt `--tester-retries` allows, ends
/// the test and says so.
pub fn back_to_back(
    ctx: &mut Ctx,
    size: &SizeSpec,
    s: &mut SizeReport,
    throughput_fps: Option<f64>,
) -> Result<BackToBack> {
    let a = ctx.a;
    let line = s.line_rate_fps;
    let max_burst = ((a.b2b_max_burst.ns as f64 / 1e9) * line).ceil().max(2.0) as u64;
    let mut srch = b2b::B2bSearch::new(b2b::B2bConfig {
        line_fps: line,
        max_burst_frames: max_burst,
        trials: a.b2b_trials,
        resolution_frames: 1,
    })
    .map_err(load_err)?;
    let mut bursts = Vec::new();
    let mut limit = None;
    while let Some(req) = srch.next_burst() {
        if ctx.stopped() {
            break;
        }
        // A burst the tester spoiled (its loop descheduled for a moment) is
        // sent again, up to --tester-retries times; each attempt is listed.
        let mut attempt = 1;
        let (t, short) = loop {
            let t = ctx.trial(size, req.rate_fps, 0, Some(req.frames))?;
            let short = t.tester_limit.is_some() || t.sent() < req.frames;
            if !short || attempt > a.p.tester_retries || ctx.stopped() {
                break (t, short);
            }
            bursts.push(attempt_row(&format!("burst {}", req.frames), &t, attempt));
            attempt += 1;
        };
        if short {
            limit = Some(format!(
                "a {}-frame burst left at {:.0} frames/s, below the line rate {:.0}: the tester cannot send back-to-back bursts of this size",
                req.frames,
                t.achieved_fps(),
                req.rate_fps
            ));
            note_tester_max(s, &t);
        }
        bursts.push(attempt_row(&format!("burst {}", req.frames), &t, attempt));
        srch.record(t.sent(), t.received(), short);
    }
    let o = srch.outcome();
    let implied_ns = b2b::implied_buffer_time_ns(o.mean_frames, line);
    let corrected_ns =
        throughput_fps.and_then(|thr| b2b::corrected_buffer_time_ns(o.mean_frames, line, thr).ok());
    if o.line_rate_limited {
        let why = format!(
            "the longest burst tried ({max_burst} frames, --b2b-max-burst) passed without loss: the buffer is larger than that, or the SUT forwards at line rate"
        );
        limit = Some(limit.map_or(why.clone(), |l| format!("{l}; {why}")));
    }
    Ok(BackToBack {
        burst_fps: line,
        trials: o.per_trial.len() as u32,
        mean_frames: o.mean_frames,
        min_frames: o.min_frames,
        max_frames: o.max_frames,
        implied_buffer_s: implied_ns / 1e9,
        corrected_buffer_s: corrected_ns.map(|v| v / 1e9),
        throughput_fps,
        tester_limit: limit,
        bursts,
    })
}

/// The back-to-back bursts, each with whether it was run again (the next
/// row is a later attempt at the same burst).
fn bursts_and_repeats(s: &SizeReport) -> impl Iterator<Item = (&TrialRow, bool)> {
    let rows = s.back_to_back.iter().flat_map(|b| b.bursts.as_slice());
    let next = rows.clone().skip(1).map(Some).chain([None]);
    rows.zip(next)
        .map(|(r, n)| (r, n.is_some_and(|n| n.attempt > r.attempt)))
}

/// One sentence for the size's warning when the tester limited any trial
/// that stands (a burst it spoiled and that was run again does not).
pub fn tester_note(s: &SizeReport) -> Option<String> {
    let rows = s
        .throughput
        .iter()
        .flat_map(|t| t.trials.iter())
        .chain(s.frame_loss.iter().flatten())
        .chain(
            bursts_and_repeats(s)
                .filter(|&(_, repeated)| !repeated)
                .map(|(r, _)| r),
        );
    let limited: Vec<&TrialRow> = rows.filter(|r| r.tester_limit.is_some()).collect();
    let first = limited.first()?;
    Some(format!(
        "frame {} B: {} trial(s) were limited by the tester itself, not the SUT (first: {} at {:.0} frames/s: {})",
        s.label,
        limited.len(),
        first.phase,
        first.offered_fps,
        first.tester_limit.as_deref().unwrap_or("")
    ))
}

/// One sentence for the size's warning when bursts were run again because
/// the tester spoiled them (`--tester-retries`).
pub fn repeat_note(s: &SizeReport) -> Option<String> {
    let repeated: Vec<&TrialRow> = bursts_and_repeats(s)
        .filter(|&(_, repeated)| repeated)
        .map(|(r, _)| r)
        .collect();
    let first = repeated.first()?;
    Some(format!(
        "frame {} B: {} back-to-back burst(s) run again (first: {}: {})",
        s.label,
        repeated.len(),
        first.phase,
        first
            .tester_limit
            .as_deref()
            .unwrap_or("fewer frames left than asked for")
    ))
}
