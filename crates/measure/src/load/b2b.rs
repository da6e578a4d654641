//! Back-to-back frames: RFC 2544 §26.4 as updated by RFC 9004.
//!
//! A trial sends a burst of frames at the line rate (minimum inter-frame
//! gap) and counts what the DUT forwarded; the longest burst forwarded
//! without loss is the trial's result. The bursts of one trial are a binary
//! search to `resolution_frames`; RFC 2544 asks for bursts of up to at
//! least 2 s and 50 trials, whose average is the benchmark (with min and
//! max beside it). Trials after the first start at the previous result and
//! widen by doubling steps, so a steady DUT costs two bursts a trial.
//!
//! RFC 9004 explains why the burst length alone misleads: the DUT forwards
//! at its throughput while the burst arrives, so the buffer only fills at
//! `line − throughput`. Its §5.4 (Benchmark Calculations) therefore gives
//! two figures, written here in our words:
//! * implied DUT buffer time = average back-to-back frames / max theoretical
//!   frame rate (the burst expressed as time on the wire);
//! * corrected DUT buffer time = implied − implied · measured throughput /
//!   max theoretical frame rate = implied · (1 − throughput / line),
//!   with the throughput from the RFC 2544 throughput test, in frames/s.
//!
//! If the DUT forwards the longest burst without loss (its throughput is
//! the line rate) the buffer cannot be measured this way: the outcome says
//! `line_rate_limited` instead of inventing a buffer.

use super::{check_range, proves_nothing, LoadError, MAX_RATE_FPS};
use serde::Serialize;

/// How a [`B2bSearch`] runs.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct B2bConfig {
    /// The max theoretical frame rate of the link ([`super::rate::line_rate_fps`]).
    pub line_fps: f64,
    /// The longest burst tried; RFC 2544 §26.4: at least 2 s at `line_fps`.
    pub max_burst_frames: u64,
    /// RFC 2544 §26.4: at least 50.
    pub trials: u32,
    pub resolution_frames: u64,
}

impl B2bConfig {
    /// 2 s bursts, 50 trials, one-frame resolution.
    pub fn rfc2544(line_fps: f64) -> B2bConfig {
        B2bConfig {
            line_fps,
            max_burst_frames: (2.0 * line_fps).ceil() as u64,
            trials: 50,
            resolution_frames: 1,
        }
    }
}

/// A burst to send at `rate_fps` (the line rate).
#[derive(Copy, Clone, Debug, PartialEq, Serialize)]
pub struct BurstRequest {
    pub frames: u64,
    pub rate_fps: f64,
    pub trial: u32,
}

/// The benchmark.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct B2bOutcome {
    /// Longest loss-free burst of each completed trial.
    pub per_trial: Vec<u64>,
    pub mean_frames: f64,
    pub min_frames: u64,
    pub max_frames: u64,
    pub bursts: u32,
    /// Some trial forwarded the longest burst without loss.
    pub line_rate_limited: bool,
    /// The tester could not send a burst at the line rate; the search
    /// stopped there.
    pub tester_limited: bool,
}

/// The burst search state machine (module documentation).
#[derive(Clone, Debug)]
pub struct B2bSearch {
    cfg: B2bConfig,
    trial: u32,
    lo: Option<u64>,
    hi: Option<u64>,
    step: u64,
    pending: Option<BurstRequest>,
    out: B2bOutcome,
}

impl B2bSearch {
    pub fn new(cfg: B2bConfig) -> Result<B2bSearch, LoadError> {
        check_range("line rate (frames/s)", cfg.line_fps, 1.0, MAX_RATE_FPS)?;
        check_range(
            "longest burst (frames)",
            cfg.max_burst_frames as f64,
            1.0,
            1e11,
        )?;
        check_range("back-to-back trials", cfg.trials as f64, 1.0, 1000.0)?;
        check_range(
            "burst resolution (frames)",
            cfg.resolution_frames as f64,
            1.0,
            cfg.max_burst_frames as f64,
        )?;
        Ok(B2bSearch {
            cfg,
            trial: 0,
            lo: None,
            hi: None,
            step: cfg.resolution_frames,
            pending: None,
            out: B2bOutcome::default(),
        })
    }

    /// The next burst, or `None` when every trial is done.
    pub fn next_burst(&mut self) -> Option<BurstRequest> {
        if let Some(p) = self.pending {
            return Some(p);
        }
        while self.trial < self.cfg.trials && !self.out.tester_limited {
            let max = self.cfg.max_burst_frames;
            let frames = match (self.lo, self.hi) {
                (None, None) => Some(
                    self.out
                        .per_trial
                        .last()
                        .copied()
                        .unwrap_or(max)
                        .clamp(1, max),
                ),
                (Some(l), None) => (l < max).then(|| (l + self.step).min(max)),
                (None, Some(h)) => (h > 1).then(|| h.saturating_sub(self.step).max(1)),
                (Some(l), Some(h)) => (h - l > self.cfg.resolution_frames).then(|| l + (h - l) / 2),
            };
            match frames {
                Some(frames) => {
                    let req = BurstRequest {
                        frames,
                        rate_fps: self.cfg.line_fps,
                        trial: self.trial,
                    };
                    self.pending = Some(req);
                    return Some(req);
                }
                None => self.end_trial(),
            }
        }
        None
    }

    fn end_trial(&mut self) {
        let best = self.lo.unwrap_or(0);
        if best >= self.cfg.max_burst_frames {
            self.out.line_rate_limited = true;
        }
        self.out.per_trial.push(best);
        self.trial += 1;
        self.lo = None;
        self.hi = None;
        self.step = self.cfg.resolution_frames;
        let n = self.out.per_trial.len() as f64;
        self.out.mean_frames = self.out.per_trial.iter().sum::<u64>() as f64 / n;
        self.out.min_frames = self.out.per_trial.iter().copied().min().unwrap_or(0);
        self.out.max_frames = self.out.per_trial.iter().copied().max().unwrap_or(0);
    }

    /// What the pending burst did: `sent` frames left, `received` came back;
    /// `tester_limited` when the tester could not keep the line rate.
    ///
    /// A burst the tester could not send whole at the line rate is judged
    /// by what it did send: if the SUT lost frames of it, a burst of `sent`
    /// frames is too long (at the line rate its queue would only grow
    /// faster), an upper bound like any lossy burst. Only a short burst the
    /// SUT forwarded whole proves nothing ([`proves_nothing`]).
    pub fn record(&mut self, sent: u64, received: u64, tester_limited: bool) {
        let Some(req) = self.pending.take() else {
            return;
        };
        self.out.bursts += 1;
        let short = tester_limited || sent < req.frames;
        // A burst leaves back to back by design: none of it is catch-up.
        if proves_nothing(sent, received, short, 0) {
            self.out.tester_limited = true;
            return;
        }
        if self.lo.is_some() != self.hi.is_some() {
            self.step = self.step.saturating_mul(2);
        }
        if received >= sent {
            self.lo = Some(self.lo.map_or(req.frames, |l| l.max(req.frames)));
        } else {
            let frames = sent.min(req.frames);
            self.hi = Some(self.hi.map_or(frames, |h| h.min(frames)));
            if self.trial == 0 && self.lo.is_none() {
                self.lo = Some(0); // nothing sent loses nothing: bisect from 0
            }
        }
    }

    pub fn outcome(&self) -> B2bOutcome {
        self.out.clone()
    }
}

/// RFC 9004 §5.4: the average burst as time at the max theoretical frame
/// rate, ns.
pub fn implied_buffer_time_ns(mean_b2b_frames: f64, line_fps: f64) -> f64 {
    mean_b2b_frames / line_fps * 1e9
}

/// RFC 9004 §5.4: the implied buffer time less the share the DUT forwarded
/// during the burst, `implied · (1 − throughput / line)`, ns. The
/// throughput is the RFC 2544 throughput in frames/s; it must not exceed
/// the line rate.
pub fn corrected_buffer_time_ns(
    mean_b2b_frames: f64,
    line_fps: f64,
    throughput_fps: f64,
) -> Result<f64, LoadError> {
    check_range(
        "measured throughput (frames/s)",
        throughput_fps,
        0.0,
        line_fps,
    )?;
    let implied = implied_buffer_time_ns(mean_b2b_frames, line_fps);
    Ok(implied - implied * throughput_fps / line_fps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffer_times_by_hand() {
        // 64 B on 10 GbE: 14 880 952 frames/s. 30 000 back-to-back frames
        // are 2.016 ms on the wire; a DUT forwarding half the line rate
        // meanwhile holds only half of them: 1.008 ms of buffer.
        let line = 10e9 / (84.0 * 8.0);
        let implied = implied_buffer_time_ns(30_000.0, line);
        assert!((implied - 2_016_000.0).abs() < 0.01, "{implied}");
        let corrected = corrected_buffer_time_ns(30_000.0, line, line / 2.0).unwrap();
        assert!((corrected - 1_008_000.0).abs() < 0.01, "{corrected}");
        // A DUT with no forwarding during the burst: nothing to correct.
        assert_eq!(
            corrected_buffer_time_ns(30_000.0, line, 0.0).unwrap(),
            implied
        );
        assert!(corrected_buffer_time_ns(30_000.0, line, line * 1.01).is_err());
    }

    #[test]
    fn search_finds_a_fixed_threshold_to_the_frame() {
        let cfg = B2bConfig {
            line_fps: 1e6,
            max_burst_frames: 2_000_000,
            trials: 5,
            resolution_frames: 1,
        };
        let mut s = B2bSearch::new(cfg).unwrap();
        let mut bursts = 0;
        while let Some(b) = s.next_burst() {
            let received = b.frames.min(12_345);
            s.record(b.frames, received, false);
            bursts += 1;
            assert!(bursts < 500);
        }
        let o = s.outcome();
        assert_eq!(o.per_trial, vec![12_345; 5]);
        assert_eq!((o.min_frames, o.max_frames), (12_345, 12_345));
        assert!(!o.line_rate_limited);
        // Later trials reuse the previous result: two bursts each.
        assert!(o.bursts <= 25 + 4 * 2, "{}", o.bursts);
    }

    #[test]
    fn a_line_rate_dut_is_reported_not_measured() {
        let cfg = B2bConfig {
            line_fps: 1e6,
            max_burst_frames: 1000,
            trials: 3,
            resolution_frames: 1,
        };
        let mut s = B2bSearch::new(cfg).unwrap();
        while let Some(b) = s.next_burst() {
            s.record(b.frames, b.frames, false);
        }
        let o = s.outcome();
        assert!(o.line_rate_limited);
        assert_eq!(o.bursts, 3);
    }
}
