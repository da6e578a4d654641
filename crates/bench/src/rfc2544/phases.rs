//! The trials of RFC 2544 §26.1, §26.3 and §26.4 on the frame engine. The
//! decisions (which rate next, when the search is done, the burst length,
//! the buffer time) are `misura_measure::load`'s; this file runs the
//! trials they ask for and lists them.

use super::plan::Ctx;
use super::size::SizeSpec;
use crate::error::{BenchError, Result};
use misura_engine::{self as frames, Flow, TrialSpec};
use misura_measure::load::{self, b2b, flr, search};
use misura_measure::time::Span;
use misura_report::load::LoadTrial;
use misura_report::rfc2544::{BackToBack, RateBound, SizeReport, ThroughputResult, TrialRow};

/// Search trials in a row that the tester could not send (each on every
/// attempt) and that proved nothing (no loss beyond a goal at the rate it
/// did send), after which the search stops as the tester's limit: lowering
/// the rate further would only follow a busy host down (a 2-vCPU VM under a
/// build went from 125 k to 1.5 k frames/s this way, 66 trials, every one
/// the tester's). A short trial in which the SUT lost more than the goals
/// allow is conclusive (an upper bound at the rate sent) and never counts.
const LIMITED_IN_A_ROW: u32 = 3;

impl Ctx<'_> {
    /// A trial, run again while `spoiled` says the tester itself fell
    /// behind in it, up to `--tester-retries` times: each spoiled attempt
    /// goes into `rows` (numbered); the one that stands is returned with
    /// its attempt number. A trial spoiled on every attempt is the
    /// tester's limit, and the caller says so.
    pub fn trial_retried(
        &mut self,
        size: &SizeSpec,
        what: (&str, f64, Span, Option<u64>),
        rows: &mut Vec<TrialRow>,
        spoiled: impl Fn(&LoadTrial) -> bool,
    ) -> Result<(LoadTrial, u32)> {
        self.trial_aimed(size, what, rows, |t| spoiled(t).then_some(what.1))
    }

    /// [`trial_retried`](Self::trial_retried), each later attempt at the
    /// rate `retry` gives for the spoiled one before it (`None`: it stands).
    pub fn trial_aimed(
        &mut self,
        size: &SizeSpec,
        what: (&str, f64, Span, Option<u64>),
        rows: &mut Vec<TrialRow>,
        retry: impl Fn(&LoadTrial) -> Option<f64>,
    ) -> Result<(LoadTrial, u32)> {
        let (phase, mut rate_fps, duration, burst) = what;
        let mut attempt = 1;
        loop {
            self.progress.step(
                format!(
                    "{} {} B {phase} trial{} at {:.0} frames/s",
                    self.size_no,
                    size.label,
                    match attempt {
                        1 => String::new(),
                        _ if rate_fps > what.1 => format!(
                            " (attempt {attempt}, asking {rate_fps:.0} to send {:.0})",
                            what.1
                        ),
                        _ => format!(" (attempt {attempt})"),
                    },
                    what.1
                ),
                duration.to_std(),
                None,
            );
            let t = self.trial(size, rate_fps, duration, burst)?;
            let more = attempt <= self.plan.tester_retries && !self.stopped();
            let Some(next) = retry(&t).filter(|_| more) else {
                return Ok((t, attempt));
            };
            rows.push(attempt_row(phase, &t, attempt));
            rate_fps = next;
            attempt += 1;
        }
    }

    /// One trial at `rate_fps` for `duration`, or a burst of `burst` frames.
    pub fn trial(
        &mut self,
        size: &SizeSpec,
        rate_fps: f64,
        duration: Span,
        burst: Option<u64>,
    ) -> Result<LoadTrial> {
        let engine = self.engine.as_mut().ok_or(BenchError::EngineClosed)?;
        // A burst runs until its last frame has left: twice its time at the
        // rate and 10 ms more bound it (it ends as soon as it is sent).
        let duration = match burst {
            Some(n) => duration.max(
                Span::from_ns((2.0 * n as f64 / rate_fps * 1e9) as i64) + Span::from_millis(10),
            ),
            None => duration,
        };
        let spec = TrialSpec {
            flows: vec![Flow {
                rate_fps,
                payloads: size.payloads(),
                vlan: None,
            }],
            duration,
            burst,
            drain: frames::DRAIN,
            // A burst keeps every frame (no slot skipped): a tester that
            // falls behind shows as a burst rate below the line rate.
            max_backlog: Span::from_ns(if burst.is_some() {
                10_000_000_000
            } else {
                1_000_000
            }),
            catch_up_frames: frames::CATCH_UP_FRAMES,
            session_id: fresh_session(),
            ethertype: self.plan.engine.ethertype,
            dst: self.plan.dst,
            src: self.plan.src,
            cpus: self.plan.cpus.clone(),
            interval: None,
        };
        Ok(frames::run_trial(engine, &spec, None, self.stop.as_ref())?.trial)
    }
}

/// A session id per trial, so that a straggler of the last trial is
/// foreign to this one.
fn fresh_session() -> u32 {
    let t = misura_sys::clock::realtime_ns() as u64;
    (t ^ (t >> 29) ^ u64::from(std::process::id()) << 8) as u32
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
        catch_up_frames: t.catch_up_frames(),
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

fn load_err(e: misura_measure::load::LoadError) -> BenchError {
    BenchError::Trials(e)
}

/// §26.1: NDR and PDR by the search.
pub fn throughput(ctx: &mut Ctx, size: &SizeSpec, s: &mut SizeReport) -> Result<ThroughputResult> {
    let started = std::time::Instant::now();
    let plan = ctx.plan;
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
                loss_ratio: plan.trials.pdr,
            },
        ],
        short_trial: plan.trials.short,
        final_trial: plan.trials.trial,
        relative_resolution: plan.trials.resolution,
        max_trials: plan.trials.max_trials,
    })
    .map_err(load_err)?;
    let mut rows = Vec::new();
    let result = |t: &LoadTrial| search::TrialResult {
        offered_fps: t.offered_fps(),
        achieved_fps: t.achieved_fps(),
        sent: t.sent(),
        received: t.received(),
        tester_limited: t.tester_limit.is_some(),
        catch_up_frames: t.catch_up_frames(),
    };
    let mut limited_in_a_row = 0;
    let mut gave_up = false;
    // The row of each trial the search recorded, in its order.
    let mut recorded = Vec::new();
    while let Some(req) = srch.next_trial() {
        if ctx.stopped() {
            break;
        }
        if limited_in_a_row >= LIMITED_IN_A_ROW {
            // The tester could not hold the rates it had itself just
            // reached: a busy host, not a capacity to search below.
            gave_up = true;
            break;
        }
        let phase = match req.phase {
            search::Phase::Short => "short",
            search::Phase::Final => "final",
        };
        // A trial the tester fell behind in without the SUT losing is run
        // again before the search sees it: one descheduled moment never
        // becomes the ceiling. One in which the SUT lost beyond every goal
        // stands: it is an upper bound at the rate the tester did send.
        // The attempt after a short one asks for more, by what the tester
        // fell short (at most 5 %), so that it sends the load the search
        // wants (ThroughputSearch::retry_fps).
        let (t, attempt) = ctx.trial_aimed(
            size,
            (phase, req.rate_fps, req.duration, None),
            &mut rows,
            |t| srch.retry_fps(&result(t)),
        )?;
        note_tester_max(s, &t);
        rows.push(attempt_row(phase, &t, attempt));
        if srch.needs_retry(&result(&t)) {
            limited_in_a_row += 1;
        } else {
            limited_in_a_row = 0;
        }
        srch.record(result(&t)).map_err(load_err)?;
        recorded.push(rows.len() - 1);
    }
    let o = srch.outcome();
    if let Some(m) = o.tester_max_fps {
        s.tester_max_fps = Some(s.tester_max_fps.map_or(m, |x| x.max(m)));
    }
    let capped = o.tester_max_fps.is_some();
    let evidence = |i: Option<usize>| i.and_then(|i| recorded.get(i)).map(|&r| rows[r].clone());
    let bound = |name: &str| {
        let b = o.bound(name);
        let lower = b.and_then(|b| b.lower_fps).unwrap_or(0.0);
        let upper = b.and_then(|b| b.upper_fps);
        let found = b.is_some_and(|b| b.found);
        RateBound {
            found,
            lower_fps: lower,
            upper_fps: upper.unwrap_or(line),
            lower_load: lower / line,
            lower_bps: size.frame_bps(lower),
            // The tester could not send the rates above `lower` (on every
            // attempt), and no trial showed the SUT losing there: the
            // SUT's rate is not known.
            tester_limited: capped && (upper.is_none() || !found),
            lower_trial: evidence(b.and_then(|b| b.lower_trial)),
            upper_trial: evidence(b.and_then(|b| b.upper_trial)),
        }
    };
    let stopped_by = match (ctx.stopped(), o.stopped_by) {
        (true, _) => "interrupted",
        (false, _) if gave_up => "tester_limit",
        (false, Some(search::StoppedBy::Resolution)) => "resolution",
        (false, Some(search::StoppedBy::MaxTrials)) => "max_trials",
        (false, Some(search::StoppedBy::TesterLimit)) => "tester_limit",
        (false, None) => "unfinished",
    };
    let (ndr, pdr) = (bound("NDR"), bound("PDR"));
    Ok(ThroughputResult {
        ndr,
        pdr,
        pdr_ratio: plan.trials.pdr,
        stopped_by: stopped_by.into(),
        trials: rows,
        elapsed_s: started.elapsed().as_secs_f64(),
    })
}

/// §26.3: from 100 % of the line rate down in 10 % steps until two
/// successive steps lose nothing (or three in a row the tester could not
/// send: the result is then inconclusive).
pub fn frame_loss(ctx: &mut Ctx, size: &SizeSpec, s: &mut SizeReport) -> Result<Vec<TrialRow>> {
    let mut plan =
        flr::FlrPlan::new(s.line_rate_fps, 10.0, ctx.plan.trials.trial).map_err(load_err)?;
    let mut rows = Vec::new();
    let mut limited_in_a_row = 0;
    while let Some((percent, rate, duration)) = plan.next_trial() {
        // Steps the tester cannot send, in which the SUT lost nothing, say
        // nothing of the SUT; after three in a row the rest would only
        // repeat it. A short step with loss stands: the SUT's loss at the
        // rate the tester did send.
        if ctx.stopped() || limited_in_a_row >= LIMITED_IN_A_ROW {
            break;
        }
        let phase = format!("{percent:.0}%");
        let (t, attempt) =
            ctx.trial_retried(size, (&phase, rate, duration, None), &mut rows, undecided)?;
        note_tester_max(s, &t);
        rows.push(attempt_row(&phase, &t, attempt));
        limited_in_a_row = if undecided(&t) {
            limited_in_a_row + 1
        } else {
            0
        };
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
    let line = s.line_rate_fps;
    let max_burst = ((ctx.plan.trials.b2b_max_burst.as_ns() as f64 / 1e9) * line)
        .ceil()
        .max(2.0) as u64;
    let mut srch = b2b::B2bSearch::new(b2b::B2bConfig {
        line_fps: line,
        max_burst_frames: max_burst,
        trials: ctx.plan.trials.b2b_trials,
        resolution_frames: 1,
    })
    .map_err(load_err)?;
    let mut bursts = Vec::new();
    let mut limit = None;
    let mut tester_limited = false;
    while let Some(req) = srch.next_burst() {
        if ctx.stopped() {
            break;
        }
        // A burst the tester spoiled (its loop descheduled for a moment) is
        // sent again, up to --tester-retries times; each attempt is listed.
        let phase = format!("burst {}", req.frames);
        let is_short = |t: &LoadTrial| t.tester_limit.is_some() || t.sent() < req.frames;
        // A short burst the SUT lost frames of stands (the burst it was
        // given was already too long); a short one it forwarded whole
        // proves nothing and is sent again.
        let proves_nothing =
            |t: &LoadTrial| load::proves_nothing(t.sent(), t.received(), is_short(t), 0);
        let (t, attempt) = ctx.trial_retried(
            size,
            (&phase, req.rate_fps, Span::ZERO, Some(req.frames)),
            &mut bursts,
            proves_nothing,
        )?;
        let short = is_short(&t);
        if proves_nothing(&t) {
            tester_limited = true;
            limit = Some(format!(
                "a {}-frame burst left at {:.0} frames/s, below the line rate {:.0}: the tester cannot send back-to-back bursts of this size",
                req.frames,
                t.achieved_fps(),
                req.rate_fps
            ));
            note_tester_max(s, &t);
        }
        bursts.push(attempt_row(&phase, &t, attempt));
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
        tester_limited,
        bursts,
    })
}

/// Every trial row of a size with whether it was run again (the next row
/// is a later attempt at the same trial, which the tester spoiled).
fn rows_and_repeats(s: &SizeReport) -> Vec<(&TrialRow, bool)> {
    let lists = [
        s.throughput.as_ref().map(|t| t.trials.as_slice()),
        s.frame_loss.as_deref(),
        s.back_to_back.as_ref().map(|b| b.bursts.as_slice()),
    ];
    lists
        .into_iter()
        .flatten()
        .flat_map(misura_report::rfc2544::with_repeats)
        .collect()
}

/// A trial the tester fell short in, in which the SUT lost nothing: it
/// proves nothing about the rate asked for.
fn undecided(t: &LoadTrial) -> bool {
    load::proves_nothing(
        t.sent(),
        t.received(),
        t.tester_limit.is_some(),
        t.catch_up_frames(),
    )
}

/// One sentence for the size's warning when the tester limited any trial
/// that stands (a trial it spoiled and that was run again does not).
pub fn tester_note(s: &SizeReport) -> Option<String> {
    let limited: Vec<&TrialRow> = rows_and_repeats(s)
        .into_iter()
        .filter(|&(r, repeated)| !repeated && r.tester_limit.is_some())
        .map(|(r, _)| r)
        .collect();
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

/// One sentence for the size's warning when trials were run again because
/// the tester spoiled them (`--tester-retries`).
pub fn repeat_note(s: &SizeReport) -> Option<String> {
    let repeated: Vec<&TrialRow> = rows_and_repeats(s)
        .into_iter()
        .filter(|&(_, repeated)| repeated)
        .map(|(r, _)| r)
        .collect();
    let first = repeated.first()?;
    Some(format!(
        "frame {} B: {} trial(s) run again (first: {} at {:.0} frames/s: {})",
        s.label,
        repeated.len(),
        first.phase,
        first.offered_fps,
        first
            .tester_limit
            .as_deref()
            .unwrap_or("fewer frames left than asked for")
    ))
}

/// Why the size's result is inconclusive: each figure that rests on the
/// tester's own limit after every attempt `--tester-retries` allowed.
pub fn inconclusive(s: &SizeReport) -> Vec<String> {
    let mut why = Vec::new();
    if let Some(t) = &s.throughput {
        for (name, b) in [("NDR", &t.ndr), ("PDR", &t.pdr)] {
            if b.tester_limited {
                why.push(if b.lower_fps > 0.0 {
                    format!(
                        "frame {} B {name}: no trial lost frames up to {:.0} frames/s, the most the tester could send (line rate {:.0}): the SUT's {name} is not known",
                        s.label, b.lower_fps, s.line_rate_fps
                    )
                } else {
                    format!(
                        "frame {} B {name}: the tester could not send steadily at any rate tried (it reached {:.0} frames/s at most, line rate {:.0}): the SUT's {name} is not known",
                        s.label,
                        s.tester_max_fps.unwrap_or(0.0),
                        s.line_rate_fps
                    )
                });
            }
        }
    }
    if let Some(l) = s
        .latency
        .as_ref()
        .and_then(|l| l.load.tester_limit.as_ref())
    {
        why.push(format!("frame {} B latency trial: {l}", s.label));
    }
    let loss: Vec<&TrialRow> = s
        .frame_loss
        .iter()
        .flat_map(|rows| misura_report::rfc2544::standing(rows))
        .filter(|r| {
            load::proves_nothing(
                r.sent,
                r.received,
                r.tester_limit.is_some(),
                r.catch_up_frames,
            )
        })
        .collect();
    if let Some(first) = loss.first() {
        why.push(format!(
            "frame {} B frame loss: {} step(s) the tester could not send (first {}: {:.0} of {:.0} frames/s)",
            s.label,
            loss.len(),
            first.phase,
            first.achieved_fps,
            first.offered_fps
        ));
    }
    if let Some(b) = s.back_to_back.as_ref().filter(|b| b.tester_limited) {
        why.push(format!(
            "frame {} B back-to-back: {}",
            s.label,
            b.tester_limit
                .as_deref()
                .unwrap_or("the tester could not send the bursts")
        ));
    }
    why
}
