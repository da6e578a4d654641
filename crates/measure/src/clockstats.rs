//! What consecutive reads of a clock say about it, without reading one:
//! the steps between reads (seed 000's interference histogram), the longest
//! gaps and when they happened, backward steps, and a counter's rate.
//!
//! Memory is fixed when a tracker is made: a [`Summary`] for the steps and
//! the `n` longest gaps, whatever the number of reads.

use crate::time::Instant;
use misura_stats::Summary;
use serde::{Deserialize, Serialize};

/// One long step between consecutive reads: the loop did not run for `step_ns`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Gap {
    /// The step (ns).
    pub step_ns: i64,
    /// When it started, as an offset from the first read (ns).
    pub at_ns: i64,
}

/// The `n` longest gaps seen, longest first. Bounded: `n` entries at most.
#[derive(Clone, Debug)]
pub struct LongestGaps {
    n: usize,
    /// Sorted by step, longest first.
    gaps: Vec<Gap>,
}

impl LongestGaps {
    pub fn new(n: usize) -> Self {
        LongestGaps {
            n,
            gaps: Vec::with_capacity(n + 1),
        }
    }

    /// The shortest step that would still enter the list: cheap to test
    /// in a hot loop before calling [`LongestGaps::offer`].
    #[inline]
    pub fn threshold(&self) -> i64 {
        if self.gaps.len() < self.n {
            i64::MIN
        } else {
            self.gaps.last().map_or(i64::MAX, |g| g.step_ns)
        }
    }

    /// Keeps `gap` if it is among the `n` longest (earlier gaps win ties).
    pub fn offer(&mut self, gap: Gap) {
        if self.n == 0 || gap.step_ns <= self.threshold() && self.gaps.len() >= self.n {
            return;
        }
        let pos = self.gaps.partition_point(|g| g.step_ns >= gap.step_ns);
        self.gaps.insert(pos, gap);
        self.gaps.truncate(self.n);
    }

    pub fn gaps(&self) -> &[Gap] {
        &self.gaps
    }
}

/// Steps above this (10 µs) count as time the loop lost: the summary's
/// `over_threshold` counts them and [`StepTracker::long_steps_ns`] adds them up.
pub const LONG_STEP_NS: i64 = 10_000;

/// Consumes consecutive reads of one clock (ns) and keeps: the count of
/// reads, of zero steps (the clock had not moved: its resolution is coarser
/// than the loop), of backward steps (monotonicity violations) and the
/// largest of them, a summary of the non-zero forward steps, and the longest
/// gaps with their offsets from the first read.
#[derive(Clone)]
pub struct StepTracker {
    first: Option<i64>,
    last: i64,
    reads: u64,
    zero_steps: u64,
    backward_steps: u64,
    largest_backward_ns: i64,
    steps: Summary,
    gaps: LongestGaps,
    broken: bool,
    long_steps_ns: i64,
}

impl StepTracker {
    /// Keeps the `longest` longest gaps.
    pub fn new(longest: usize) -> Self {
        StepTracker {
            first: None,
            last: 0,
            reads: 0,
            zero_steps: 0,
            backward_steps: 0,
            largest_backward_ns: 0,
            steps: Summary::with_threshold(Some(LONG_STEP_NS)),
            gaps: LongestGaps::new(longest),
            broken: false,
            long_steps_ns: 0,
        }
    }

    /// One read, in order. Constant time; never allocates once the gap list is full.
    #[inline]
    pub fn read(&mut self, now_ns: i64) {
        self.reads += 1;
        let Some(first) = self.first else {
            self.first = Some(now_ns);
            self.last = now_ns;
            return;
        };
        if self.broken {
            self.broken = false;
            self.last = now_ns;
            return;
        }
        let step = now_ns.wrapping_sub(self.last);
        if step > 0 {
            self.steps.record(step);
            if step > LONG_STEP_NS {
                self.long_steps_ns = self.long_steps_ns.saturating_add(step);
            }
            if step > self.gaps.threshold() {
                self.gaps.offer(Gap {
                    step_ns: step,
                    at_ns: self.last - first,
                });
            }
        } else if step == 0 {
            self.zero_steps += 1;
        } else {
            self.backward_steps += 1;
            self.largest_backward_ns = self.largest_backward_ns.max(-step);
        }
        self.last = now_ns;
    }

    /// Do not count the step to the next read (the loop paused on purpose,
    /// e.g. to print progress); counts and offsets are kept.
    pub fn break_chain(&mut self) {
        self.broken = true;
    }

    pub fn reads(&self) -> u64 {
        self.reads
    }
    pub fn zero_steps(&self) -> u64 {
        self.zero_steps
    }
    pub fn backward_steps(&self) -> u64 {
        self.backward_steps
    }
    /// Largest backward step (ns, positive), 0 if none.
    pub fn largest_backward_ns(&self) -> i64 {
        self.largest_backward_ns
    }
    /// The sum of the steps over [`LONG_STEP_NS`] (ns).
    pub fn long_steps_ns(&self) -> i64 {
        self.long_steps_ns
    }
    /// The non-zero forward steps.
    pub fn steps(&self) -> &Summary {
        &self.steps
    }
    pub fn longest_gaps(&self) -> &[Gap] {
        self.gaps.gaps()
    }
    /// Last read minus first read (ns), 0 before two reads.
    pub fn span_ns(&self) -> i64 {
        self.first.map_or(0, |f| self.last - f)
    }
}

/// A counter's rate (Hz) from two simultaneous readings of it and of a
/// reference clock; None if the reference did not advance.
pub fn counter_rate_hz(counter0: u64, ref0: Instant, counter1: u64, ref1: Instant) -> Option<f64> {
    let dt = (ref1 - ref0).as_ns();
    (dt > 0).then(|| counter1.wrapping_sub(counter0) as f64 * 1e9 / dt as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_zero_backward_and_gaps() {
        let mut t = StepTracker::new(3);
        for v in [100, 110, 110, 130, 125, 1125, 1135, 1635, 1636] {
            t.read(v);
        }
        assert_eq!(t.reads(), 9);
        assert_eq!(t.zero_steps(), 1);
        assert_eq!(t.backward_steps(), 1);
        assert_eq!(t.largest_backward_ns(), 5);
        // Forward non-zero steps: 10, 20, 1000, 10, 500, 1.
        assert_eq!(t.steps().count(), 6);
        assert_eq!(t.steps().min(), Some(1));
        assert_eq!(t.steps().max(), Some(1000));
        assert_eq!(
            t.longest_gaps(),
            &[
                Gap {
                    step_ns: 1000,
                    at_ns: 25
                },
                Gap {
                    step_ns: 500,
                    at_ns: 1035
                },
                Gap {
                    step_ns: 20,
                    at_ns: 10
                }
            ]
        );
        assert_eq!(t.span_ns(), 1536);
        assert_eq!(t.long_steps_ns(), 0);
        t.read(1636 + 20_000);
        assert_eq!(t.long_steps_ns(), 20_000);
        assert_eq!(t.steps().over_threshold(), 1);
        // A broken chain skips one step only.
        t.break_chain();
        t.read(9_000_000);
        t.read(9_000_002);
        assert_eq!(t.reads(), 12);
        assert_eq!(t.steps().count(), 8);
        assert_eq!(t.steps().max(), Some(20_000));
    }

    #[test]
    fn longest_gaps_are_bounded_and_sorted() {
        let mut g = LongestGaps::new(10);
        // A pseudo-random sequence with a known top 10.
        let mut x: u64 = 12345;
        let mut all = Vec::new();
        for i in 0..100_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let step = (x >> 40) as i64;
            all.push(step);
            g.offer(Gap {
                step_ns: step,
                at_ns: i,
            });
            assert!(g.gaps().len() <= 10);
        }
        all.sort_unstable_by(|a, b| b.cmp(a));
        let got: Vec<i64> = g.gaps().iter().map(|g| g.step_ns).collect();
        assert_eq!(got, all[..10].to_vec());
        // Ties: the earlier gap stays ahead.
        let mut g = LongestGaps::new(2);
        for (s, at) in [(5, 0), (5, 1), (5, 2)] {
            g.offer(Gap {
                step_ns: s,
                at_ns: at,
            });
        }
        assert_eq!(
            g.gaps().iter().map(|g| g.at_ns).collect::<Vec<_>>(),
            vec![0, 1]
        );
        let mut none = LongestGaps::new(0);
        none.offer(Gap {
            step_ns: 1,
            at_ns: 0,
        });
        assert!(none.gaps().is_empty());
    }

    #[test]
    fn rate() {
        let at = Instant::from_ns;
        assert_eq!(
            counter_rate_hz(1000, at(0), 3_001_000, at(1_000_000)),
            Some(3e9)
        );
        assert_eq!(counter_rate_hz(0, at(5), 10, at(5)), None);
        // The counter may wrap.
        assert_eq!(counter_rate_hz(u64::MAX, at(0), 9, at(10)), Some(1e9));
    }
}
