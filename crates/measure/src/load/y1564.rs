//! ITU-T Y.1564 Ethernet service activation: the service configuration
//! test's steps, and the verdicts of both tests.
//!
//! Rates are information rates in bits/s of whole service frames (MAC
//! header to FCS, as MEF 10 counts them), so a step's frame rate is
//! `bps / (frame_bytes · 8)`. Per service, the configuration test runs:
//! * CIR steps at 25, 50, 75 and 100 % of CIR. Green traffic: each step
//!   passes when the information rate received is at least the offered
//!   rate less the FLR allowance, and FLR, mean FD and FDV are within the
//!   service acceptance criteria (SAC);
//! * the EIR step at CIR + EIR (only when EIR > 0). Frames above CIR are
//!   yellow, delivered on a best-effort basis, so only the rate is judged:
//!   `CIR · (1 − FLR_SAC) ≤ IR ≤ CIR + EIR`;
//! * the overshoot (traffic policing) step at 125 % of CIR + EIR: the
//!   network must police, so `IR ≤ CIR + EIR`, while the green part still
//!   arrives, `IR ≥ CIR · (1 − FLR_SAC)`.
//!
//! The performance test runs every service at its CIR together for a long
//! time (15 min, 2 h, 24 h) and judges it like a 100 % CIR step plus the
//! availability SAC. Every rate comparison allows [`IR_TOLERANCE`] for the
//! policer's burst sizes (CBS/EBS) and the rate measurement's granularity.
//!
//! A step the tester could not send at its rate is judged at the rate it
//! did send ([`StepMeasured::sent_bps`]; issue 37, as MLRsearch classifies a
//! trial by its real load): loss or delay beyond the SAC there is a FAIL
//! (the SUT failed at less than the step asked, and at most CIR for green
//! traffic), as is traffic not policed; a step that passed without reaching
//! its rate is inconclusive, never a PASS.

use super::rate::{MAX_FRAME_BYTES, MIN_FRAME_BYTES};
use super::{check_range, LoadError, MAX_LINK_BPS};
use crate::time::Span;
use serde::Serialize;

/// Y.1564 tests up to 8 services at once (one per 802.1p class).
pub const MAX_SERVICES: usize = 8;
/// Relative allowance on information-rate comparisons.
pub const IR_TOLERANCE: f64 = 0.01;
/// The overshoot step's rate relative to CIR + EIR.
pub const OVERSHOOT: f64 = 1.25;

/// Service acceptance criteria.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Thresholds {
    /// Frame delay (one-way or round-trip, as measured), mean.
    #[serde(rename = "fd_ns")]
    pub fd: Span,
    #[serde(rename = "fdv_ns")]
    pub fdv: Span,
    pub flr_ratio: f64,
    pub availability_ratio: f64,
}

/// One service under test.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ServiceSpec {
    pub name: String,
    pub vlan: Option<u16>,
    pub pcp: Option<u8>,
    /// Bytes of the frame as sent, incl. any tag and the FCS.
    pub frame_bytes: u64,
    pub cir_bps: f64,
    pub eir_bps: f64,
    pub thresholds: Thresholds,
}

impl ServiceSpec {
    pub fn check(&self) -> Result<(), LoadError> {
        check_range("VLAN id", self.vlan.unwrap_or(1) as f64, 1.0, 4094.0)?;
        check_range("PCP", self.pcp.unwrap_or(0) as f64, 0.0, 7.0)?;
        check_range(
            "service frame (bytes)",
            self.frame_bytes as f64,
            MIN_FRAME_BYTES as f64,
            MAX_FRAME_BYTES as f64,
        )?;
        check_range("CIR (bits/s)", self.cir_bps, 1.0, MAX_LINK_BPS)?;
        check_range(
            "EIR (bits/s)",
            self.eir_bps,
            0.0,
            MAX_LINK_BPS - self.cir_bps,
        )?;
        let t = &self.thresholds;
        check_range("FD threshold (ns)", t.fd.as_ns() as f64, 0.0, 1e10)?;
        check_range("FDV threshold (ns)", t.fdv.as_ns() as f64, 0.0, 1e10)?;
        check_range("FLR threshold", t.flr_ratio, 0.0, 1.0)?;
        check_range("availability threshold", t.availability_ratio, 0.0, 1.0)?;
        Ok(())
    }

    /// Frames/s carrying `bps`.
    pub fn fps(&self, bps: f64) -> f64 {
        bps / (self.frame_bytes * 8) as f64
    }
}

/// Every service valid, at most [`MAX_SERVICES`], names distinct.
pub fn check_services(services: &[ServiceSpec]) -> Result<(), LoadError> {
    check_range("services", services.len() as f64, 1.0, MAX_SERVICES as f64)?;
    for (i, s) in services.iter().enumerate() {
        s.check()?;
        if services[..i].iter().any(|o| o.name == s.name) {
            return Err(LoadError::Inconsistent {
                what: "services",
                why: format!("`{}` named twice", s.name),
            });
        }
    }
    Ok(())
}

/// Which rule judges a step.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StepKind {
    Cir,
    Eir,
    Overshoot,
}

/// One step of the configuration test.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Step {
    pub label: String,
    pub kind: StepKind,
    pub rate_bps: f64,
    pub rate_fps: f64,
}

/// The configuration test's steps for `spec` (module documentation).
pub fn config_test_steps(spec: &ServiceSpec) -> Result<Vec<Step>, LoadError> {
    spec.check()?;
    let step = |label: String, kind, rate_bps: f64| Step {
        label,
        kind,
        rate_bps,
        rate_fps: spec.fps(rate_bps),
    };
    let mut steps: Vec<Step> = [25, 50, 75, 100]
        .iter()
        .map(|&p| {
            step(
                format!("{p}% CIR"),
                StepKind::Cir,
                spec.cir_bps * p as f64 / 100.0,
            )
        })
        .collect();
    let top = spec.cir_bps + spec.eir_bps;
    if spec.eir_bps > 0.0 {
        steps.push(step("CIR+EIR".into(), StepKind::Eir, top));
    }
    steps.push(step(
        "overshoot".into(),
        StepKind::Overshoot,
        top * OVERSHOOT,
    ));
    Ok(steps)
}

/// What one step (or the performance test) measured.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct StepMeasured {
    pub offered_bps: f64,
    pub received_bps: f64,
    pub frames_sent: u64,
    pub frames_lost: u64,
    #[serde(rename = "fd_mean_ns")]
    pub fd_mean: Span,
    #[serde(rename = "fd_max_ns")]
    pub fd_max: Span,
    #[serde(rename = "fdv_ns")]
    pub fdv: Span,
    /// Share of the test's time the service was available (performance test).
    pub available_ratio: Option<f64>,
    /// The rate the tester really sent, when it fell short of
    /// `offered_bps` (on every attempt); `None` when it kept the rate.
    pub sent_bps: Option<f64>,
    /// Frames the tester sent back to back catching up after it was
    /// descheduled: loss up to this many in a short step may be its own
    /// bursts' at a policer, not the SUT's (no FAIL on loss then).
    pub catch_up_frames: u64,
}

impl StepMeasured {
    /// The SUT lost no more than the tester's own catch-up bursts: the loss
    /// may be the tester's (at a policer with a small bucket).
    fn loss_may_be_the_testers(&self) -> bool {
        self.frames_lost > 0 && self.frames_lost <= self.catch_up_frames
    }
}

impl StepMeasured {
    pub fn flr(&self) -> f64 {
        if self.frames_sent == 0 {
            return 0.0;
        }
        self.frames_lost as f64 / self.frames_sent as f64
    }
}

/// Pass, fail or inconclusive, and why it failed (or why no verdict).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Verdict {
    pub pass: bool,
    /// No failure at the rate the tester sent, which fell short of the
    /// step's: no verdict on the SUT (`pass` is false).
    pub inconclusive: bool,
    pub reasons: Vec<String>,
}

impl Verdict {
    fn from(reasons: Vec<String>) -> Verdict {
        Verdict {
            pass: reasons.is_empty(),
            inconclusive: false,
            reasons,
        }
    }

    /// A step in which the tester sent no frame says nothing of the SUT
    /// (a starved or failed tester, never the device): no verdict. It was
    /// judged a FAIL ("no frames sent") until a starved CI host showed it.
    fn nothing_sent(m: &StepMeasured) -> Option<Verdict> {
        (m.frames_sent == 0).then(|| Verdict {
            pass: false,
            inconclusive: true,
            reasons: vec![format!(
                "the tester sent no frames of the step's {:.0} b/s (its CPU starved, or the TX port took none: check its link): nothing to judge the SUT on, no verdict",
                m.offered_bps
            )],
        })
    }

    /// The rules' failures at the rate sent, or, when there are none and
    /// the tester fell short or its own bursts may explain what was missed
    /// (`excuse`), an inconclusive verdict saying so.
    fn at_sent(failures: Vec<String>, excuse: Option<String>, m: &StepMeasured) -> Verdict {
        let sent = m.sent_bps.unwrap_or(m.offered_bps);
        let why = if let Some(e) = excuse {
            format!("{e}: no verdict")
        } else if m.loss_may_be_the_testers() {
            format!(
                "the {} frames lost are no more than the {} the tester sent back to back catching up after it was descheduled (at {sent:.0} b/s of the step's {:.0} b/s): no verdict",
                m.frames_lost, m.catch_up_frames, m.offered_bps
            )
        } else if m.sent_bps.is_some() {
            format!(
                "no failure at the {sent:.0} b/s the tester sent, short of the step's {:.0} b/s: no verdict at the step's rate",
                m.offered_bps
            )
        } else {
            return Verdict::from(failures);
        };
        if !failures.is_empty() {
            return Verdict::from(failures);
        }
        Verdict {
            pass: false,
            inconclusive: true,
            reasons: vec![why],
        }
    }
}

/// The green-traffic rules: IR, FLR, FD, FDV against the SAC (IR and FLR
/// only where the loss is the SUT's, see
/// [`StepMeasured::loss_may_be_the_testers`]).
fn green(spec: &ServiceSpec, m: &StepMeasured, reasons: &mut Vec<String>) {
    let t = &spec.thresholds;
    let floor = m.offered_bps * (1.0 - t.flr_ratio - IR_TOLERANCE);
    let loss_judged = !m.loss_may_be_the_testers();
    if loss_judged && m.received_bps < floor {
        reasons.push(format!(
            "IR {:.0} b/s below {:.0} b/s (offered less FLR allowance)",
            m.received_bps, floor
        ));
    }
    if loss_judged && m.flr() > t.flr_ratio {
        reasons.push(format!("FLR {:.6} above {:.6}", m.flr(), t.flr_ratio));
    }
    if m.fd_mean > t.fd {
        let (fd, max) = (m.fd_mean.as_ns(), t.fd.as_ns());
        reasons.push(format!("FD mean {fd} ns above {max} ns"));
    }
    if m.fdv > t.fdv {
        let (fdv, max) = (m.fdv.as_ns(), t.fdv.as_ns());
        reasons.push(format!("FDV {fdv} ns above {max} ns"));
    }
}

/// The green rules at the rate the tester sent (its shortfall's rate, or
/// the offered rate).
fn green_at_sent(spec: &ServiceSpec, m: &StepMeasured, reasons: &mut Vec<String>) {
    let at = StepMeasured {
        offered_bps: m.sent_bps.unwrap_or(m.offered_bps),
        ..m.clone()
    };
    green(spec, &at, reasons);
}

/// The verdict of one configuration-test step, at the rate the tester sent
/// (module documentation).
pub fn judge_step(spec: &ServiceSpec, step: &Step, m: &StepMeasured) -> Verdict {
    if let Some(v) = Verdict::nothing_sent(m) {
        return v;
    }
    let mut reasons = Vec::new();
    let top = spec.cir_bps + spec.eir_bps;
    let green_floor = spec.cir_bps * (1.0 - spec.thresholds.flr_ratio - IR_TOLERANCE);
    let mut excuse = None;
    match step.kind {
        StepKind::Cir => green_at_sent(spec, m, &mut reasons),
        StepKind::Eir | StepKind::Overshoot => {
            // The green part must arrive: CIR less the FLR allowance, or
            // what was sent when that was less than CIR.
            let (floor, of) = match m.sent_bps {
                Some(sent) if sent < spec.cir_bps => (
                    sent * (1.0 - spec.thresholds.flr_ratio - IR_TOLERANCE),
                    format!("the {sent:.0} b/s sent (under CIR)"),
                ),
                _ => (green_floor, "CIR".to_string()),
            };
            if m.received_bps < floor {
                let short = frames_short_of(m, floor);
                let why = format!(
                    "IR {:.0} b/s below {of} less FLR allowance {floor:.0} b/s",
                    m.received_bps
                );
                if short <= m.catch_up_frames as f64 {
                    // A policer's bucket may have dropped the tester's own
                    // catch-up bursts: so few frames decide nothing.
                    excuse = Some(format!(
                        "{why}, {short:.0} frames short, no more than the {} the tester sent back to back catching up after it was descheduled",
                        m.catch_up_frames
                    ));
                } else {
                    reasons.push(why);
                }
            }
            if m.received_bps > top * (1.0 + IR_TOLERANCE) {
                let what = if step.kind == StepKind::Overshoot {
                    "traffic not policed: "
                } else {
                    ""
                };
                reasons.push(format!(
                    "{what}IR {:.0} b/s above CIR+EIR {:.0} b/s",
                    m.received_bps, top
                ));
            }
        }
    }
    Verdict::at_sent(reasons, excuse, m)
}

/// Frames the SUT delivered short of `floor_bps`, at the step's own frame
/// size (from what it received): how far a green floor was missed.
fn frames_short_of(m: &StepMeasured, floor_bps: f64) -> f64 {
    let got = m.frames_sent.saturating_sub(m.frames_lost) as f64;
    if m.received_bps <= 0.0 || got <= 0.0 {
        return f64::INFINITY;
    }
    (floor_bps - m.received_bps) / m.received_bps * got
}

/// The verdict of the service performance test (all services at CIR).
pub fn judge_performance(spec: &ServiceSpec, m: &StepMeasured) -> Verdict {
    if let Some(v) = Verdict::nothing_sent(m) {
        return v;
    }
    let mut reasons = Vec::new();
    green_at_sent(spec, m, &mut reasons);
    match m.available_ratio {
        None => reasons.push("availability not measured".into()),
        Some(a) if a < spec.thresholds.availability_ratio => {
            reasons.push(format!(
                "availability {a:.6} below {:.6}",
                spec.thresholds.availability_ratio
            ));
        }
        Some(_) => {}
    }
    Verdict::at_sent(reasons, None, m)
}

#[cfg(test)]
mod tests;
