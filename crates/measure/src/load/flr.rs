//! RFC 2544 §26.3, frame loss rate: trials from 100 % of the maximum rate
//! down in steps of 10 % (or finer) until two successive trials lose
//! nothing. Each point is the percentage, the offered rate and the loss
//! ratio `(sent − received) / sent`.

use super::{check_range, LoadError, MAX_RATE_FPS, MAX_TRIAL_NS};
use crate::time::Span;
use serde::Serialize;

/// One step of the plan.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FlrPoint {
    pub percent: f64,
    pub offered_fps: f64,
    pub sent: u64,
    pub received: u64,
    pub loss_ratio: f64,
    /// The tester could not offer the rate: a loss is then the SUT's at the
    /// rate the tester did send, and no loss proves nothing at the step's
    /// rate ([`super::proves_nothing`]).
    pub tester_limited: bool,
}

/// The frame loss rate steps (module documentation).
#[derive(Clone, Debug)]
pub struct FlrPlan {
    max_fps: f64,
    step_percent: f64,
    trial: Span,
    next_percent: f64,
    zero_in_a_row: u32,
    points: Vec<FlrPoint>,
}

impl FlrPlan {
    /// Steps of `step_percent` (RFC: 10 or less) from 100 % of `max_fps`,
    /// trials of `trial` (RFC 2544 §24: ≥ 60 s).
    pub fn new(max_fps: f64, step_percent: f64, trial: Span) -> Result<FlrPlan, LoadError> {
        check_range("maximum rate (frames/s)", max_fps, 1e-3, MAX_RATE_FPS)?;
        check_range("frame loss step (%)", step_percent, 0.1, 10.0)?;
        check_range(
            "trial duration (ns)",
            trial.as_ns() as f64,
            1e6,
            MAX_TRIAL_NS as f64,
        )?;
        Ok(FlrPlan {
            max_fps,
            step_percent,
            trial,
            next_percent: 100.0,
            zero_in_a_row: 0,
            points: Vec::new(),
        })
    }

    /// The next trial `(percent, rate_fps, duration)`, or `None` after
    /// two successive loss-free trials or below the last step.
    pub fn next_trial(&self) -> Option<(f64, f64, Span)> {
        if self.zero_in_a_row >= 2 || self.next_percent < self.step_percent - 1e-9 {
            return None;
        }
        let p = self.next_percent;
        Some((p, self.max_fps * p / 100.0, self.trial))
    }

    /// The result of the trial [`next`](Self::next_trial) asked for.
    pub fn record(&mut self, sent: u64, received: u64, tester_limited: bool) {
        let Some((percent, offered_fps, _)) = self.next_trial() else {
            return;
        };
        let loss_ratio = if sent > 0 {
            sent.saturating_sub(received) as f64 / sent as f64
        } else {
            0.0
        };
        if sent > 0 && received >= sent && !tester_limited {
            self.zero_in_a_row += 1;
        } else {
            self.zero_in_a_row = 0;
        }
        self.points.push(FlrPoint {
            percent,
            offered_fps,
            sent,
            received,
            loss_ratio,
            tester_limited,
        });
        // Whole steps from 100 so that rounding never accumulates.
        let k = self.points.len() as f64;
        self.next_percent = 100.0 - k * self.step_percent;
    }

    /// Whether the plan ended on two loss-free trials.
    pub fn complete(&self) -> bool {
        self.zero_in_a_row >= 2
    }

    pub fn points(&self) -> &[FlrPoint] {
        &self.points
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_down_until_two_clean_trials() {
        let mut plan = FlrPlan::new(1000.0, 10.0, Span::from_secs(60)).unwrap();
        // Loses frames above 700 frames/s.
        let mut n = 0;
        while let Some((_, rate, dur)) = plan.next_trial() {
            let sent = (rate * dur.as_secs_f64()) as u64;
            let received = sent.min((700.0 * dur.as_secs_f64()) as u64);
            plan.record(sent, received, false);
            n += 1;
            assert!(n <= 10);
        }
        let pcts: Vec<f64> = plan.points().iter().map(|p| p.percent).collect();
        assert_eq!(pcts, vec![100.0, 90.0, 80.0, 70.0, 60.0]);
        assert!(plan.complete());
        assert!((plan.points()[0].loss_ratio - 0.3).abs() < 1e-9);
        assert!(FlrPlan::new(1000.0, 20.0, Span::from_secs(1)).is_err());
    }

    #[test]
    fn a_lossy_plan_ends_at_the_last_step_incomplete() {
        let mut plan = FlrPlan::new(1000.0, 10.0, Span::from_secs(1)).unwrap();
        let mut n = 0;
        while plan.next_trial().is_some() {
            plan.record(100, 99, false);
            n += 1;
        }
        assert_eq!(n, 10);
        assert!(!plan.complete());
    }
}
