//! The throughput search: NDR and PDR, MLRsearch-style.
//!
//! RFC 2544 §26.1 defines throughput as the highest rate at which no
//! offered frame is lost, found by trials of a fixed duration (§24: at
//! least 60 s). draft-ietf-bmwg-mlrsearch generalises it to several *loss
//! ratio targets* searched at once (here NDR, loss ratio 0, and PDR, loss
//! ratio 0.5 %) and saves time by searching with short trials first and
//! confirming with full-length trials last: a short trial is optimistic (a
//! buffer hides more of a short overload), so its bounds are only the start
//! of the full-length phase, never its result.
//!
//! For each target and each phase the search keeps a *lower bound* (a rate
//! whose trial lost at most the target ratio) and an *upper bound* (a rate
//! whose trial lost more). A trial's loss ratio is `(sent − received) /
//! sent`; one trial updates every target's bounds of its phase. The next
//! rate is, per target in order and per phase in order:
//! * no bound yet: the maximum rate (short phase), or the short phase's
//!   lower bound (final phase);
//! * an upper bound only: below it, at the rate the SUT forwarded there
//!   scaled to the target (`u·(1 − loss)/(1 − target)`), but at least a
//!   width `w` below `u`; `w` starts at the resolution and doubles;
//! * a lower bound only: `w` above it (capped at the maximum rate);
//! * both: the middle, until `(upper − lower) / upper ≤ resolution`.
//!
//! A trial is classified at the rate the tester really sent, its achieved
//! rate `A`, as MLRsearch classifies a trial's load (draft-ietf-bmwg-
//! mlrsearch-15 §5, FD.io CSIT): for each target, loss above the target's
//! ratio makes `A` an upper bound, whatever the tester's shortfall (the SUT
//! could not forward even the rate it was given); no more loss than that
//! makes `A` a lower bound. The shortfall (the schedule skipped slots, or
//! it achieved clearly less than offered) decides only what a trial cannot
//! prove: a trial that fell short without losing leaves the rates above `A`
//! undecided, so the maximum rate is lowered to `A` (never below the
//! highest rate an earlier trial sent: what the tester once reached it may
//! reach again) and the search goes on below it. Before that, a caller may
//! try again asking for more than the load it wants, by the ratio the
//! tester fell short ([`ThroughputSearch::retry_fps`], at most
//! [`MAX_AIM`]): a trial is short only if what it sent falls short of the
//! load the search asked for. It gives up on a target
//! ([`StoppedBy::TesterLimit`]) only when what is still to be decided lies
//! above that cap. Each bound keeps the
//! trial that set it ([`Bound::lower_trial`], [`Bound::upper_trial`]), so a
//! reader can check the verdict.

use super::{check_range, LoadError, MAX_RATE_FPS, MAX_TRIAL_NS};
use crate::time::Span;
use serde::Serialize;

/// How far above the load it wants the search asks a tester that fell
/// short ([`ThroughputSearch::aimed_fps`]): 5 %, more than a busy host's
/// shortfall (1-3 % with one busy loop per CPU), little enough that a
/// tester which catches up sends no more than 5 % over the load.
pub const MAX_AIM: f64 = 1.05;

/// A loss ratio to search for.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LossTarget {
    pub name: String,
    pub loss_ratio: f64,
}

impl LossTarget {
    /// NDR (no loss) and PDR at 0.5 %, as FD.io CSIT reports them.
    pub fn ndr_pdr() -> Vec<LossTarget> {
        vec![
            LossTarget {
                name: "NDR".into(),
                loss_ratio: 0.0,
            },
            LossTarget {
                name: "PDR".into(),
                loss_ratio: 0.005,
            },
        ]
    }
}

/// How a [`ThroughputSearch`] searches.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SearchConfig {
    pub min_fps: f64,
    /// The tester's own measured maximum or the line rate, whichever is lower.
    pub max_fps: f64,
    pub targets: Vec<LossTarget>,
    pub short_trial: Span,
    /// RFC 2544 §24: at least 60 s for a reportable result.
    pub final_trial: Span,
    /// Relative width goal `(upper − lower) / upper`.
    pub relative_resolution: f64,
    pub max_trials: u32,
}

impl SearchConfig {
    /// The RFC defaults between `min_fps` and `max_fps`: 1 s short trials,
    /// 60 s final trials, 1 % resolution, NDR and PDR, at most 100 trials.
    pub fn rfc2544(min_fps: f64, max_fps: f64) -> SearchConfig {
        SearchConfig {
            min_fps,
            max_fps,
            targets: LossTarget::ndr_pdr(),
            short_trial: Span::from_secs(1),
            final_trial: Span::from_secs(60),
            relative_resolution: 0.01,
            max_trials: 100,
        }
    }

    fn check(&self) -> Result<(), LoadError> {
        check_range(
            "search maximum rate (frames/s)",
            self.max_fps,
            1e-3,
            MAX_RATE_FPS,
        )?;
        check_range(
            "search minimum rate (frames/s)",
            self.min_fps,
            1e-3,
            self.max_fps,
        )?;
        check_range("loss targets", self.targets.len() as f64, 1.0, 4.0)?;
        for t in &self.targets {
            check_range("target loss ratio", t.loss_ratio, 0.0, 0.5)?;
        }
        check_range(
            "final trial (ns)",
            self.final_trial.as_ns() as f64,
            1e6,
            MAX_TRIAL_NS as f64,
        )?;
        check_range(
            "short trial (ns)",
            self.short_trial.as_ns() as f64,
            1e6,
            self.final_trial.as_ns() as f64,
        )?;
        check_range("relative resolution", self.relative_resolution, 1e-5, 0.5)?;
        check_range("maximum trials", self.max_trials as f64, 1.0, 10_000.0)?;
        Ok(())
    }
}

/// Which trials a request belongs to.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Short,
    Final,
}

/// The trial the search wants next.
#[derive(Copy, Clone, Debug, PartialEq, Serialize)]
pub struct TrialRequest {
    pub rate_fps: f64,
    pub duration: Span,
    pub phase: Phase,
}

/// What a trial measured.
#[derive(Copy, Clone, Debug, PartialEq, Serialize)]
pub struct TrialResult {
    pub offered_fps: f64,
    pub achieved_fps: f64,
    pub sent: u64,
    pub received: u64,
    /// The sender skipped slots (see [`super::rate::RateSchedule`]).
    pub tester_limited: bool,
    /// Frames the sender sent back to back catching up after it was
    /// descheduled: in a trial it fell short in, loss up to this many may
    /// be its own bursts', not the SUT's ([`super::proves_nothing`]).
    pub catch_up_frames: u64,
}

/// One trial as the outcome reports it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TrialRecord {
    pub request: TrialRequest,
    pub result: TrialResult,
    pub loss_ratio: f64,
    /// The tester could not offer the rate: the trial is classified at the
    /// rate it achieved, and proves nothing above it.
    pub tester_limited: bool,
}

/// A target's final bounds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Bound {
    pub name: String,
    pub loss_ratio: f64,
    pub lower_fps: Option<f64>,
    pub upper_fps: Option<f64>,
    /// The trial (an index into [`SearchOutcome::trials`]) that set
    /// `lower_fps`: its achieved rate, loss no more than the target's.
    pub lower_trial: Option<usize>,
    /// The trial that set `upper_fps`: its achieved rate, loss above the
    /// target's.
    pub upper_trial: Option<usize>,
    /// The full-length phase reached the resolution, or the target held at
    /// the maximum rate.
    pub found: bool,
}

/// Why the search ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StoppedBy {
    Resolution,
    MaxTrials,
    /// A target held at the highest rate the tester could offer: the
    /// result is the tester's limit, not the SUT's.
    TesterLimit,
}

/// The search's result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SearchOutcome {
    pub bounds: Vec<Bound>,
    pub trials: Vec<TrialRecord>,
    pub stopped_by: Option<StoppedBy>,
    /// The maximum rate after tester-limited trials lowered it.
    pub tester_max_fps: Option<f64>,
}

impl SearchOutcome {
    pub fn bound(&self, name: &str) -> Option<&Bound> {
        self.bounds.iter().find(|b| b.name == name)
    }
}

#[derive(Copy, Clone, Debug)]
struct PhaseBounds {
    /// The rate and the trial that set it.
    lower: Option<(f64, usize)>,
    /// The rate, its loss ratio and the trial that set it.
    upper: Option<(f64, f64, usize)>,
    /// Relative expansion width; doubles on each expansion.
    width: f64,
}

/// The search state machine (module documentation).
#[derive(Clone, Debug)]
pub struct ThroughputSearch {
    cfg: SearchConfig,
    phases: Vec<Phase>,
    /// `bounds[target][phase index]`.
    bounds: Vec<Vec<PhaseBounds>>,
    phase: usize,
    max_fps: f64,
    tester_capped: bool,
    /// The highest rate any trial sent so far: the tester reached it, so a
    /// short trial never caps the search below it.
    highest_sent_fps: f64,
    pending: Option<TrialRequest>,
    trials: Vec<TrialRecord>,
    stopped: Option<StoppedBy>,
}

impl ThroughputSearch {
    pub fn new(cfg: SearchConfig) -> Result<ThroughputSearch, LoadError> {
        cfg.check()?;
        let phases = if cfg.short_trial < cfg.final_trial {
            vec![Phase::Short, Phase::Final]
        } else {
            vec![Phase::Final]
        };
        let empty = PhaseBounds {
            lower: None,
            upper: None,
            width: cfg.relative_resolution,
        };
        Ok(ThroughputSearch {
            bounds: vec![vec![empty; phases.len()]; cfg.targets.len()],
            phases,
            phase: 0,
            max_fps: cfg.max_fps,
            tester_capped: false,
            highest_sent_fps: 0.0,
            pending: None,
            trials: Vec::new(),
            stopped: None,
            cfg,
        })
    }

    /// The next trial to run, or `None` when the search is over. Asking
    /// again before [`record`](Self::record) returns the same request.
    pub fn next_trial(&mut self) -> Option<TrialRequest> {
        if self.stopped.is_some() {
            return None;
        }
        if let Some(p) = self.pending {
            return Some(p);
        }
        if self.trials.len() >= self.cfg.max_trials as usize {
            self.stopped = Some(StoppedBy::MaxTrials);
            return None;
        }
        while self.phase < self.phases.len() {
            for t in 0..self.cfg.targets.len() {
                if let Some(rate_fps) = self.candidate(t, self.phase) {
                    let phase = self.phases[self.phase];
                    let duration = match phase {
                        Phase::Short => self.cfg.short_trial,
                        Phase::Final => self.cfg.final_trial,
                    };
                    let req = TrialRequest {
                        rate_fps,
                        duration,
                        phase,
                    };
                    self.pending = Some(req);
                    return Some(req);
                }
            }
            self.phase += 1;
        }
        // A target left undecided above the tester's cap: its lower bound
        // is at the cap and its upper bound (if any) is not within the
        // resolution of it.
        let at_cap = self.bounds.iter().any(|b| {
            let last = b[b.len() - 1];
            let res = self.cfg.relative_resolution;
            last.lower.is_some_and(|(l, _)| self.at_max(l))
                && last
                    .upper
                    .is_none_or(|(u, _, _)| u - self.max_fps > res * u)
        });
        self.stopped = Some(
            if self.tester_capped && (at_cap || self.max_fps <= self.cfg.min_fps) {
                StoppedBy::TesterLimit
            } else {
                StoppedBy::Resolution
            },
        );
        None
    }

    /// A rate at the maximum, within what a trial that kept its rate may
    /// fall short of it (half the resolution, as in
    /// [`tester_limited`](Self::tester_limited)).
    fn at_max(&self, rate: f64) -> bool {
        rate >= self.max_fps * (1.0 - 0.5 * self.cfg.relative_resolution)
    }

    /// The next rate for target `t` in phase `p`, or `None` when it is done.
    fn candidate(&self, t: usize, p: usize) -> Option<f64> {
        if self.max_fps <= self.cfg.min_fps && self.tester_capped {
            return None;
        }
        let b = self.bounds[t][p];
        let res = self.cfg.relative_resolution;
        let (min, max) = (self.cfg.min_fps, self.max_fps);
        match (b.lower, b.upper) {
            (None, None) => {
                // The final phase starts where the short one ended.
                let start = (p > 0)
                    .then(|| self.bounds[t][p - 1].lower.map(|l| l.0))
                    .flatten();
                Some(start.unwrap_or(max).clamp(min, max))
            }
            // Between the bounds, but never above what the tester reaches:
            // a lower bound at the cap leaves the rest undecided.
            (Some((l, _)), Some((u, _, _))) => {
                (u - l > res * u && !self.at_max(l)).then(|| (0.5 * (l + u)).min(max))
            }
            (Some((l, _)), None) => (!self.at_max(l)).then(|| (l * (1.0 + b.width)).min(max)),
            (None, Some((u, loss, _))) => {
                if u <= min * (1.0 + 1e-9) {
                    return None;
                }
                let target = self.cfg.targets[t].loss_ratio;
                let forwarded = u * (1.0 - loss) / (1.0 - target);
                Some(forwarded.min(u * (1.0 - b.width)).min(max).max(min))
            }
        }
    }

    /// The result of the pending trial, classified at its achieved rate
    /// (module documentation).
    pub fn record(&mut self, r: TrialResult) -> Result<(), LoadError> {
        let Some(req) = self.pending.take() else {
            return Err(LoadError::Inconsistent {
                what: "throughput search",
                why: "a result was recorded with no trial requested".into(),
            });
        };
        let tester_limited = self.short_of(req.rate_fps, &r);
        let loss_ratio = loss_of(&r);
        let index = self.trials.len();
        self.trials.push(TrialRecord {
            request: req,
            result: r,
            loss_ratio,
            tester_limited,
        });
        if r.sent == 0 {
            // Nothing sent proves nothing: the tester's limit alone.
            self.cap_max(req.rate_fps * (1.0 - self.cfg.relative_resolution));
            return Ok(());
        }
        // The load the SUT was given: what the tester sent. Loss there is
        // an upper bound at that rate; no loss a lower bound at it, but
        // never above the rate asked for (an achieved rate a little over it
        // is the schedule's rounding).
        let sent_fps = if r.achieved_fps > 0.0 {
            r.achieved_fps
        } else {
            req.rate_fps
        };
        let (upper_rate, lower_rate) = (sent_fps, sent_fps.min(req.rate_fps));
        // A short trial whose loss the tester's own catch-up bursts may
        // explain decides nothing for a target it lost for. A trial that
        // kept its rate (within half the resolution) is the SUT's at that
        // rate, bursts and all: its loss is an upper bound.
        let lost = r.sent.saturating_sub(r.received);
        let excused = tester_limited && lost > 0 && lost <= r.catch_up_frames;
        if excused {
            // Undecided at this rate and above: search below it (asking for
            // it again would only repeat the trial).
            self.cap_max(lower_rate * (1.0 - self.cfg.relative_resolution));
        } else if tester_limited && self.loss_free_somewhere(loss_ratio) {
            // Rates above what it sent stay undecided for a target it did
            // not lose for: search below them, unless an earlier trial sent
            // more (a busy host's tester falls short now and then; what it
            // once reached it may reach again).
            self.cap_max(lower_rate.max(self.highest_sent_fps));
        }
        self.highest_sent_fps = self.highest_sent_fps.max(sent_fps);
        let p = self
            .phases
            .iter()
            .position(|&x| x == req.phase)
            .unwrap_or(0);
        for (t, target) in self.cfg.targets.iter().enumerate() {
            let b = &mut self.bounds[t][p];
            // A trial taken from a one-sided bound was an expansion: the
            // next one, if still needed, reaches twice as far.
            if b.lower.is_some() != b.upper.is_some() {
                b.width = (b.width * 2.0).min(0.5);
            }
            if loss_ratio <= target.loss_ratio {
                let rate = lower_rate;
                if b.lower.is_none_or(|(l, _)| rate >= l) {
                    b.lower = Some((rate, index));
                }
                if b.upper.is_some_and(|(u, _, _)| u <= rate) {
                    b.upper = None; // a newer pass above an older fail wins
                }
            } else if !excused {
                let rate = upper_rate;
                if b.upper.is_none_or(|(u, _, _)| rate <= u) {
                    b.upper = Some((rate, loss_ratio, index));
                }
                if b.lower.is_some_and(|(l, _)| l >= rate) {
                    b.lower = None;
                }
            }
        }
        Ok(())
    }

    /// Whether a trial says nothing certain about the SUT at the rate it
    /// was asked for: the tester flagged it, sent nothing, or achieved less
    /// than the rate by more than half the resolution. Such a trial is
    /// still classified at the rate it achieved (see
    /// [`needs_retry`](Self::needs_retry)).
    ///
    /// The rate asked for is the pending request's (the load the search
    /// wants to classify); a trial asked [`aimed`](Self::aimed_fps) above
    /// it, to make up for a tester that falls short, is short only if what
    /// it sent still falls short of that load: the tester's own flag says
    /// then only that it could not send the higher rate it was asked for.
    pub fn tester_limited(&self, r: &TrialResult) -> bool {
        self.short_of(self.load_of(r), r)
    }

    /// The load the pending request wants (what `r` was asked for, with
    /// none pending).
    fn load_of(&self, r: &TrialResult) -> f64 {
        self.pending.map_or(r.offered_fps, |p| p.rate_fps)
    }

    fn short_of(&self, load_fps: f64, r: &TrialResult) -> bool {
        let floor = 1.0 - 0.5 * self.cfg.relative_resolution;
        let short_of_load = r.achieved_fps < load_fps * floor;
        let asked_for_load = r.offered_fps <= load_fps * (1.0 + 1e-9);
        (r.tester_limited && asked_for_load) || short_of_load || r.sent == 0
    }

    /// The rate to ask the tester for on the next attempt at the pending
    /// request, after attempt `r` fell short: the request's rate raised by
    /// the ratio the tester fell short by (offered / achieved), at most
    /// [`MAX_AIM`] above it and never above the configured maximum (the
    /// line rate or the tester's measured maximum). A busy host that sends
    /// 1-3 % less than asked then gives the search the load it wanted; the
    /// trial is still classified at what it sent.
    pub fn aimed_fps(&self, r: &TrialResult) -> f64 {
        let ratio = if r.achieved_fps > 0.0 {
            (r.offered_fps / r.achieved_fps).clamp(1.0, MAX_AIM)
        } else {
            1.0
        };
        (self.load_of(r) * ratio).min(self.cfg.max_fps)
    }

    /// The rate of the next attempt at the pending request when attempt
    /// `r` [needs a retry](Self::needs_retry), [aimed](Self::aimed_fps);
    /// `None` when it stands.
    pub fn retry_fps(&self, r: &TrialResult) -> Option<f64> {
        self.needs_retry(r).then(|| self.aimed_fps(r))
    }

    /// Whether a caller should run a trial again before it
    /// [`record`](Self::record)s it: the tester fell short and the trial
    /// leaves a target undecided above what was sent (no loss beyond some
    /// target's ratio), or sent nothing. A short trial that lost more than
    /// every target allows is conclusive as it stands: the SUT could not
    /// forward even the rate it was given.
    pub fn needs_retry(&self, r: &TrialResult) -> bool {
        let short = self.tester_limited(r);
        super::proves_nothing(r.sent, r.received, short, r.catch_up_frames)
            || (short && self.loss_free_somewhere(loss_of(r)))
    }

    /// Some target counts `loss_ratio` as no loss.
    fn loss_free_somewhere(&self, loss_ratio: f64) -> bool {
        self.cfg.targets.iter().any(|t| loss_ratio <= t.loss_ratio)
    }

    /// The tester could not offer more than `fps`: what lies above it is
    /// not searched (the bounds already found there stay: they are facts
    /// about the SUT).
    fn cap_max(&mut self, fps: f64) {
        self.tester_capped = true;
        self.max_fps = fps.max(self.cfg.min_fps).min(self.max_fps);
    }

    /// The bounds so far (final once [`next`](Self::next_trial) returned `None`).
    pub fn outcome(&self) -> SearchOutcome {
        let last = self.phases.len() - 1;
        let bounds = self
            .cfg
            .targets
            .iter()
            .zip(&self.bounds)
            .map(|(t, b)| {
                let b = b[last];
                let resolved = match (b.lower, b.upper) {
                    (Some((l, _)), Some((u, _, _))) => u - l <= self.cfg.relative_resolution * u,
                    (Some((l, _)), None) => self.at_max(l),
                    _ => false,
                };
                Bound {
                    name: t.name.clone(),
                    loss_ratio: t.loss_ratio,
                    lower_fps: b.lower.map(|l| l.0),
                    upper_fps: b.upper.map(|u| u.0),
                    lower_trial: b.lower.map(|l| l.1),
                    upper_trial: b.upper.map(|u| u.2),
                    found: resolved && self.phase >= last,
                }
            })
            .collect();
        SearchOutcome {
            bounds,
            trials: self.trials.clone(),
            stopped_by: self.stopped,
            tester_max_fps: self.tester_capped.then_some(self.max_fps),
        }
    }
}

/// `(sent − received) / sent`, 0 for nothing sent.
fn loss_of(r: &TrialResult) -> f64 {
    if r.sent > 0 {
        r.sent.saturating_sub(r.received) as f64 / r.sent as f64
    } else {
        0.0
    }
}
