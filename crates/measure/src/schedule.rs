//! When to send the next frame, and with which payload size.
//!
//! The periodic pattern follows seed 000's **postponement rule**: frames are
//! planned at `start + k·T`. A frame that cannot leave on time (the loop came
//! round more than `tolerance` after its planned instant, because of the
//! previous iteration, the kernel or the hardware) is not sent late: it is
//! postponed to the start of the next period. The binary's default tolerance
//! is `T − 1 ns` (a frame may leave late within its own period, never once the
//! next one has begun), so at most one frame leaves per period. The schedule never bursts to
//! catch up, so the offered rate stays constant except for the counted
//! postponements.
//!
//! Bursts send `N` frames back to back at the start of each period; Poisson
//! arrivals draw exponential gaps with the mean of the period (a seeded
//! generator, so a run is reproducible), and apply the same rule to an arrival
//! missed by more than the tolerance.

use rand::rngs::SmallRng;
use rand::SeedableRng;
use rand_distr::{Distribution, Exp};
use serde::{Deserialize, Serialize};

use crate::period::PeriodBounds;
use crate::time::{Instant, Period, Span};

/// The shortest period a schedule keeps. Under it, one pass of a sending
/// loop (a clock read, this schedule's answer, the wait, the send) outlasts
/// the tolerance, so every frame is postponed and none ever leaves (50 ns
/// spun at 100 % CPU for ever). 1 µs is the fastest the commands are used
/// at (`misura rtt --period 1us` sends, postponing what it cannot keep).
pub const MIN_PERIOD_NS: i64 = 1_000;

/// The periods a probing command keeps: the shortest a schedule keeps,
/// and an hour.
pub const BOUNDS: PeriodBounds = PeriodBounds {
    min: Span::from_ns(MIN_PERIOD_NS),
    max: crate::period::HOUR,
};

/// `period` as a [`Period`] a schedule can keep: the reason, naming the
/// bound, when it cannot (zero and negative periods included).
pub fn check_period(period: Span) -> Result<Period, String> {
    let keeps = PeriodBounds {
        min: Span::from_ns(MIN_PERIOD_NS),
        max: Span::MAX,
    };
    Period::within(period, keeps).map_err(|_| unkept(period))
}

/// Why a schedule cannot keep `period`, in words.
pub fn unkept(period: Span) -> String {
    format!(
        "a period of {} ns is shorter than the shortest a schedule keeps, {} µs (one pass of the sending loop must fit in a period, or no frame ever leaves)",
        period.as_ns(),
        MIN_PERIOD_NS / 1_000
    )
}

/// The traffic pattern.
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Pattern {
    /// One frame every period.
    Periodic,
    /// `frames` back to back at the start of every period.
    Burst { frames: u32 },
    /// Exponential gaps with the period as their mean.
    Poisson,
}

impl Pattern {
    /// Frames sent per period on average.
    pub fn frames_per_period(&self) -> u32 {
        match self {
            Pattern::Burst { frames } => *frames,
            _ => 1,
        }
    }
}

impl std::str::FromStr for Pattern {
    type Err = String;
    fn from_str(s: &str) -> Result<Pattern, String> {
        match s {
            "periodic" => Ok(Pattern::Periodic),
            "poisson" => Ok(Pattern::Poisson),
            _ => {
                if let Some(n) = s.strip_prefix("burst:") {
                    match n.parse::<u32>() {
                        Ok(frames) if frames >= 1 => Ok(Pattern::Burst { frames }),
                        _ => Err(format!(
                            "`{s}`: burst needs a frame count ≥ 1, e.g. burst:8"
                        )),
                    }
                } else {
                    Err(format!(
                        "unknown pattern `{s}`: use periodic, burst:N or poisson"
                    ))
                }
            }
        }
    }
}

/// What the loop should do now.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Poll {
    /// Send one frame; `due` is its planned instant.
    Send { due: Instant },
    /// Nothing to send before `until`.
    Wait { until: Instant },
}

/// A sending schedule on a caller-supplied clock.
#[derive(Clone, Debug)]
pub struct Schedule {
    pattern: Pattern,
    period: Period,
    tolerance: Span,
    start: Instant,
    slot: u64,
    due: Instant,
    burst_left: u32,
    rng: SmallRng,
    exp: Option<Exp<f64>>,
    postponed: u64,
    skipped_slots: u64,
}

impl Schedule {
    /// A schedule whose first frame is due at `start`. `tolerance` is how
    /// late a frame may leave before it is postponed (clamped to 0..period).
    pub fn new(
        pattern: Pattern,
        period: Period,
        tolerance: Span,
        start: Instant,
        seed: u64,
    ) -> Schedule {
        let exp = match pattern {
            Pattern::Poisson => Some(Exp::new(1.0 / period.as_ns() as f64).expect("positive rate")),
            _ => None,
        };
        Schedule {
            pattern,
            period,
            tolerance: Span::from_ns(tolerance.as_ns().clamp(0, period.as_ns() - 1)),
            start,
            slot: 0,
            due: start,
            burst_left: pattern.frames_per_period(),
            rng: SmallRng::seed_from_u64(seed),
            exp,
            postponed: 0,
            skipped_slots: 0,
        }
    }

    /// The planned instant of the next frame.
    pub fn next_due(&self) -> Instant {
        self.due
    }

    /// Frames postponed so far (each postponement is one late frame moved on).
    pub fn postponed(&self) -> u64 {
        self.postponed
    }

    /// Planned slots (periods or Poisson arrivals) given up by postponement.
    pub fn skipped_slots(&self) -> u64 {
        self.skipped_slots
    }

    pub fn period(&self) -> Period {
        self.period
    }

    /// Ask the schedule at `now`. A `Send` answer counts as sent: call once per
    /// frame actually handed to the socket.
    pub fn poll(&mut self, now: Instant) -> Poll {
        if now < self.due {
            return Poll::Wait { until: self.due };
        }
        let burst_in_progress = self.burst_left < self.pattern.frames_per_period();
        if !burst_in_progress && now > self.due + self.tolerance {
            self.postpone(now);
            return Poll::Wait { until: self.due };
        }
        let due = self.due;
        self.burst_left -= 1;
        if self.burst_left == 0 {
            self.burst_left = self.pattern.frames_per_period();
            self.advance();
        }
        Poll::Send { due }
    }

    /// The planned instant of the current slot on the periodic grid.
    fn slot_due(&self) -> Instant {
        self.start + self.period.span().saturating_mul(self.slot as i64)
    }

    fn advance(&mut self) {
        self.slot += 1;
        self.due = match self.exp {
            Some(exp) => {
                self.due + Span::from_ns((exp.sample(&mut self.rng).round() as i64).max(0))
            }
            None => self.slot_due(),
        };
    }

    fn postpone(&mut self, now: Instant) {
        self.postponed += 1;
        match self.exp {
            Some(_) => {
                while self.due <= now {
                    self.advance();
                    self.skipped_slots += 1;
                }
            }
            None => {
                // The first planned slot strictly after `now`.
                let next = (now - self.start).as_ns() / self.period.as_ns() + 1;
                self.skipped_slots += next as u64 - self.slot;
                self.slot = next as u64;
                self.due = self.slot_due();
            }
        }
    }
}

/// The order in which a run cycles through its payload sizes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SizeOrder {
    /// Size 0, 1, 2, …, 0, 1, 2, … frame by frame.
    Interleaved,
    /// All frames of size 0, then all of size 1, …
    Blocks,
}

/// Which payload size the k-th frame of a run gets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SizePlan {
    sizes: Vec<usize>,
    order: SizeOrder,
    per_block: u64,
}

impl SizePlan {
    /// `expected_frames` is the run's frame count (or its estimate for a run
    /// bounded by duration); blocks split it evenly between the sizes.
    pub fn new(sizes: Vec<usize>, order: SizeOrder, expected_frames: u64) -> SizePlan {
        assert!(!sizes.is_empty(), "at least one size");
        let n = sizes.len() as u64;
        let per_block = expected_frames.div_ceil(n).max(1);
        SizePlan {
            sizes,
            order,
            per_block,
        }
    }

    pub fn sizes(&self) -> &[usize] {
        &self.sizes
    }

    /// Index into `sizes()` for frame number `k` (0-based).
    pub fn size_index(&self, k: u64) -> usize {
        let n = self.sizes.len() as u64;
        match self.order {
            SizeOrder::Interleaved => (k % n) as usize,
            SizeOrder::Blocks => ((k / self.per_block).min(n - 1)) as usize,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn periods_shorter_than_the_bound_are_refused_naming_it() {
        assert_eq!(
            check_period(Span::from_ns(MIN_PERIOD_NS)).unwrap().as_ns(),
            MIN_PERIOD_NS
        );
        let e = check_period(Span::from_ns(50)).unwrap_err();
        assert!(e.contains("50 ns") && e.contains("1 µs"), "{e}");
        assert!(check_period(Span::ZERO).is_err() && check_period(Span::from_ns(-1)).is_err());
    }

    /// A schedule on plain nanoseconds.
    fn sched(pattern: Pattern, period: i64, tolerance: i64, start: i64, seed: u64) -> Schedule {
        let period = Period::new(period).unwrap();
        let (tolerance, start) = (Span::from_ns(tolerance), Instant::from_ns(start));
        Schedule::new(pattern, period, tolerance, start, seed)
    }

    /// Drive a schedule with a virtual clock: the loop comes round every
    /// `step` ns, except at the instants in `stalls` where it is held up for the
    /// given time. Returns the instants at which frames were sent.
    fn run(mut s: Schedule, end: i64, step: i64, stalls: &[(i64, i64)]) -> (Vec<i64>, Schedule) {
        let mut now = 0;
        let mut sent = Vec::new();
        let mut stalls = stalls.to_vec();
        while now < end {
            if let Some(pos) = stalls.iter().position(|&(at, _)| now >= at) {
                now += stalls.remove(pos).1;
            }
            match s.poll(Instant::from_ns(now)) {
                Poll::Send { .. } => sent.push(now),
                Poll::Wait { .. } => now += step,
            }
        }
        (sent, s)
    }

    #[test]
    fn periodic_on_time() {
        let s = sched(Pattern::Periodic, 1000, 100, 0, 1);
        let (sent, s) = run(s, 10_000, 10, &[]);
        assert_eq!(sent, (0..10).map(|k| k * 1000).collect::<Vec<_>>());
        assert_eq!(s.postponed(), 0);
    }

    #[test]
    fn late_frame_is_postponed_to_the_next_period_without_catch_up() {
        // Period 1 ms, tolerance 100 µs. The loop stalls from 2.9 ms for 450 µs,
        // so the frame planned at 3 ms cannot leave before 3.35 ms: too late.
        let s = sched(Pattern::Periodic, 1_000_000, 100_000, 0, 1);
        let (sent, s) = run(s, 10_000_000, 1_000, &[(2_900_000, 450_000)]);
        assert_eq!(s.postponed(), 1);
        assert_eq!(s.skipped_slots(), 1);
        // It goes at the start of the next period (4 ms), not at 3.35 ms, and
        // no two frames ever leave closer than one period: no burst.
        assert!(sent.contains(&4_000_000));
        assert!(!sent.iter().any(|&t| t > 3_000_000 && t < 4_000_000));
        for w in sent.windows(2) {
            assert!(w[1] - w[0] >= 1_000_000, "{w:?}");
        }
        assert_eq!(sent.len(), 9);
    }

    #[test]
    fn lateness_within_tolerance_is_sent_and_keeps_the_grid() {
        let s = sched(Pattern::Periodic, 1_000_000, 100_000, 0, 1);
        let (sent, s) = run(s, 5_000_000, 1_000, &[(1_990_000, 50_000)]);
        assert_eq!(s.postponed(), 0);
        assert_eq!(sent, vec![0, 1_000_000, 2_040_000, 3_000_000, 4_000_000]);
    }

    #[test]
    fn a_long_stall_skips_every_missed_period() {
        let s = sched(Pattern::Periodic, 1_000, 0, 0, 1);
        let (sent, s) = run(s, 20_000, 1, &[(5_500, 7_000)]);
        assert_eq!(s.postponed(), 1);
        // Frames 0..=5 on time, then the next one at the first period start after
        // the stall ended at 12 500.
        assert_eq!(&sent[..6], &[0, 1000, 2000, 3000, 4000, 5000]);
        assert_eq!(sent[6], 13_000);
        assert_eq!(s.skipped_slots(), 7);
    }

    #[test]
    fn burst_sends_n_back_to_back_per_period() {
        let s = sched(Pattern::Burst { frames: 3 }, 1000, 0, 0, 1);
        let (sent, _) = run(s, 3000, 1, &[]);
        assert_eq!(sent, vec![0, 0, 0, 1000, 1000, 1000, 2000, 2000, 2000]);
    }

    #[test]
    fn poisson_mean_rate_matches_the_period() {
        let period = 10_000;
        let mut s = sched(Pattern::Poisson, period, period, 0, 42);
        let mut now = Instant::from_ns(0);
        let mut sent = 0u64;
        let mut gaps_sq = 0f64;
        let mut last = Instant::from_ns(0);
        // Jump the virtual clock straight to each due instant.
        while sent < 200_000 {
            match s.poll(now) {
                Poll::Send { due } => {
                    if sent > 0 {
                        gaps_sq += ((due - last).as_ns() as f64).powi(2);
                    }
                    last = due;
                    sent += 1;
                }
                Poll::Wait { until } => now = until,
            }
        }
        let mean_gap = last.as_ns() as f64 / (sent - 1) as f64;
        assert!(
            (mean_gap / period as f64 - 1.0).abs() < 0.01,
            "mean gap {mean_gap}"
        );
        // Exponential gaps: E[g²] = 2·T², so the coefficient of variation is 1.
        let ms = gaps_sq / (sent - 1) as f64;
        let cv = (ms - mean_gap * mean_gap).sqrt() / mean_gap;
        assert!((cv - 1.0).abs() < 0.02, "coefficient of variation {cv}");
        assert_eq!(s.postponed(), 0);
    }

    #[test]
    fn pattern_parse() {
        assert_eq!(
            "burst:4".parse::<Pattern>(),
            Ok(Pattern::Burst { frames: 4 })
        );
        assert!("burst:0".parse::<Pattern>().is_err());
        assert!("bursty".parse::<Pattern>().is_err());
    }

    #[test]
    fn size_plans() {
        let p = SizePlan::new(vec![46, 64, 128], SizeOrder::Interleaved, 9);
        assert_eq!(
            (0..6).map(|k| p.size_index(k)).collect::<Vec<_>>(),
            vec![0, 1, 2, 0, 1, 2]
        );
        let p = SizePlan::new(vec![46, 64, 128], SizeOrder::Blocks, 7);
        assert_eq!(
            (0..9).map(|k| p.size_index(k)).collect::<Vec<_>>(),
            vec![0, 0, 0, 1, 1, 1, 2, 2, 2]
        );
    }
}
