//! Two NIC clocks related through the system clock, for a hardware one-way
//! latency when the TX and RX ports have PTP hardware clocks of their own
//! (two single-port NICs, or Intel's dual-port NICs: one PHC per port) and
//! nothing synchronises them.
//!
//! Each clock is cross-timestamped against `CLOCK_REALTIME` before, during
//! and after the run (`misura_sys::phc_cross`). A round of cross-timestamps
//! gives one point: of the round's samples, the one with the narrowest
//! sandwich (system before, PHC, system after), at the sandwich's middle
//! `m = (before + after)/2`, the offset `phc − m`. A straight line through
//! the points (`misura_stats::StreamingLine`, constant memory) is the
//! clock's model against system time: offset at the start and drift.
//!
//! A hardware RX stamp `r` (RX clock) becomes a TX-clock time by going
//! through system time: `s = r − y_rx(s)` (two fixed-point steps; the drift
//! is ≤ 10⁻³ so the second step is below a nanosecond), then
//! `r' = s + y_tx(s)`. Its uncertainty, stated as ≈95 %:
//!
//! ```text
//! u = 2·√(se_tx(s)² + se_rx(s)²)  +  h_tx + h_rx
//! ```
//!
//! the first part from each fit's standard error at `s` (the residual
//! scatter of the points), the second a bound on what the fit cannot see:
//! where inside its sandwich each PHC was really read (`h` is the median
//! half-width of the points' sandwiches; 0 for `PTP_SYS_OFFSET_PRECISE`).
//! This module is pure: samples and stamps are passed in.

use crate::time::{Instant, Span};
use misura_stats::{LineEstimate, StreamingLine, Summary};
use serde::{Deserialize, Serialize};

/// One cross-timestamp (ns): the PHC's reading lies between the two system
/// clock readings.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct CrossSample {
    pub sys_before: i64,
    pub phc: i64,
    pub sys_after: i64,
}

/// A sandwich wider than this is refused as a point (a preempted read); the
/// round is counted as rejected.
pub const MAX_SANDWICH_NS: i64 = 1_000_000;

/// One PHC's model against system time.
#[derive(Clone, Debug, Default)]
pub struct ClockTrack {
    line: StreamingLine,
    half_width: Summary,
    rejected: u64,
    first_sys: Option<i64>,
    last_sys: i64,
}

/// Why a round gave no point.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum RoundRejected {
    /// No samples.
    Empty,
    /// Every sandwich was inverted (after < before: the system clock was
    /// stepped) or wider than [`MAX_SANDWICH_NS`].
    TooWide,
}

impl ClockTrack {
    pub fn new() -> ClockTrack {
        ClockTrack::default()
    }

    /// Adds one round of cross-timestamps: its narrowest sandwich.
    pub fn add_round(&mut self, samples: &[CrossSample]) -> Result<(), RoundRejected> {
        if samples.is_empty() {
            self.rejected += 1;
            return Err(RoundRejected::Empty);
        }
        let best = samples
            .iter()
            .filter(|s| s.sys_after >= s.sys_before)
            .filter(|s| s.sys_after - s.sys_before <= MAX_SANDWICH_NS)
            .min_by_key(|s| s.sys_after - s.sys_before);
        let Some(s) = best else {
            self.rejected += 1;
            return Err(RoundRejected::TooWide);
        };
        let width = s.sys_after - s.sys_before;
        let mid = s.sys_before + width / 2;
        self.line.add(mid, (s.phc - mid) as f64);
        self.half_width.record(width / 2);
        self.first_sys.get_or_insert(mid);
        self.last_sys = mid;
        Ok(())
    }

    /// Points in the fit.
    pub fn points(&self) -> u64 {
        self.line.len()
    }

    /// Rounds refused.
    pub fn rejected(&self) -> u64 {
        self.rejected
    }

    /// The line `phc − sys` against `sys`; `None` before two points.
    pub fn line(&self) -> Option<LineEstimate> {
        self.line.estimate()
    }

    /// Median half-width of the points' sandwiches (ns).
    pub fn median_half_width(&self) -> i64 {
        self.half_width.quantile(0.5).unwrap_or(0)
    }

    /// System time of a PHC reading.
    pub fn to_sys(line: &LineEstimate, phc: i64) -> i64 {
        let mut s = phc - line.at(phc).round() as i64;
        s = phc - line.at(s).round() as i64;
        phc - line.at(s).round() as i64
    }

    /// PHC reading at a system time.
    pub fn from_sys(line: &LineEstimate, sys: i64) -> i64 {
        sys + line.at(sys).round() as i64
    }

    /// What the result says of this clock.
    pub fn describe(&self, at_sys: i64) -> Option<ClockFit> {
        let l = self.line()?;
        Some(ClockFit {
            points: l.n,
            rejected_rounds: self.rejected,
            span: Span::from_ns(self.last_sys - self.first_sys.unwrap_or(self.last_sys)),
            offset_ns: l.at(at_sys),
            drift_ppm: l.b * 1e6,
            drift_se_ppm: l.se_b() * 1e6,
            residual_ns: l.s,
            median_half_width: Span::from_ns(self.median_half_width()),
        })
    }
}

/// One clock's fit, as results report it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClockFit {
    /// Points in the fit (one per accepted round).
    pub points: u64,
    /// Rounds refused (sandwich inverted or wider than 1 ms).
    pub rejected_rounds: u64,
    /// System time from the first to the last point.
    #[serde(rename = "span_ns")]
    pub span: Span,
    /// `phc − system time` at the run's middle.
    pub offset_ns: f64,
    /// Frequency against system time, parts per million.
    pub drift_ppm: f64,
    /// Its standard error.
    pub drift_se_ppm: f64,
    /// Residual standard deviation of the points about the line.
    pub residual_ns: f64,
    /// Median half-width of the sandwiches (0 for the precise method).
    #[serde(rename = "median_half_width_ns")]
    pub median_half_width: Span,
}

/// A time converted from the RX clock to the TX clock, with its ≈95 %
/// uncertainty.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Converted {
    pub tx_clock: Instant,
    pub u95_ns: f64,
}

/// The TX port's and the RX port's clocks.
#[derive(Clone, Debug, Default)]
pub struct PhcPair {
    pub tx: ClockTrack,
    pub rx: ClockTrack,
}

/// The two clocks' relation, as results report it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairFit {
    /// `rx clock − tx clock` at the run's middle (ns).
    pub offset_ns: f64,
    /// The RX clock's frequency relative to the TX clock's (ppm).
    pub drift_ppm: f64,
    /// ≈95 % uncertainty of a converted stamp at the run's middle (ns).
    pub u95_ns: f64,
    /// Its statistical part, `2·√(se_tx² + se_rx²)`.
    pub u95_statistical_ns: f64,
    /// Its bound on where within the sandwiches the PHCs were read.
    pub sandwich_bound_ns: f64,
    pub tx: ClockFit,
    pub rx: ClockFit,
}

impl PhcPair {
    pub fn new() -> PhcPair {
        PhcPair::default()
    }

    /// Converts an RX-clock stamp to the TX clock; `None` until both clocks
    /// have two points.
    pub fn rx_to_tx(&self, rx_phc: Instant) -> Option<Converted> {
        let (lt, lr) = (self.tx.line()?, self.rx.line()?);
        let sys = ClockTrack::to_sys(&lr, rx_phc.as_ns());
        Some(Converted {
            tx_clock: Instant::from_ns(ClockTrack::from_sys(&lt, sys)),
            u95_ns: self.u95(&lt, &lr, sys).0,
        })
    }

    /// (total, statistical, sandwich bound) at a system time.
    fn u95(&self, lt: &LineEstimate, lr: &LineEstimate, sys: i64) -> (f64, f64, f64) {
        let stat = 2.0 * (lt.se_at(sys).powi(2) + lr.se_at(sys).powi(2)).sqrt();
        let bound = (self.tx.median_half_width() + self.rx.median_half_width()) as f64;
        (stat + bound, stat, bound)
    }

    /// The fit as the result reports it, evaluated at `mid_sys`.
    pub fn describe(&self, mid_sys: i64) -> Option<PairFit> {
        let (lt, lr) = (self.tx.line()?, self.rx.line()?);
        let (u, stat, bound) = self.u95(&lt, &lr, mid_sys);
        Some(PairFit {
            offset_ns: lr.at(mid_sys) - lt.at(mid_sys),
            drift_ppm: ((1.0 + lr.b) / (1.0 + lt.b) - 1.0) * 1e6,
            u95_ns: u,
            u95_statistical_ns: stat,
            sandwich_bound_ns: bound,
            tx: self.tx.describe(mid_sys)?,
            rx: self.rx.describe(mid_sys)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A PHC `offset` ns ahead of system time, `ppm` fast, read in a
    /// sandwich `w` wide whose PHC read sits at `frac` of it.
    fn round(sys: i64, offset: i64, ppm: f64, w: i64, frac: f64) -> Vec<CrossSample> {
        let at = sys + (w as f64 * frac) as i64;
        vec![
            CrossSample {
                sys_before: sys,
                phc: at + offset + ((at - 1_000_000_000) as f64 * ppm * 1e-6) as i64,
                sys_after: sys + w,
            },
            // A preempted sample beside it: never chosen.
            CrossSample {
                sys_before: sys,
                phc: 0,
                sys_after: sys + 50 * w,
            },
        ]
    }

    #[test]
    fn converts_between_two_drifting_clocks() {
        let mut p = PhcPair::new();
        for i in 0..200i64 {
            let sys = 1_000_000_000 + i * 100_000_000;
            p.tx.add_round(&round(sys, 5_000_000, 12.0, 400, 0.5))
                .unwrap();
            p.rx.add_round(&round(sys + 7, -3_000_000, -8.0, 400, 0.5))
                .unwrap();
        }
        // A frame leaves at system time t (TX clock tx) and arrives 2 ms
        // later (RX clock rx).
        let t = 1_000_000_000 + 10_000_000_000i64;
        let tx = t + 5_000_000 + ((t - 1_000_000_000) as f64 * 12e-6) as i64;
        let ta = t + 2_000_000;
        let rx = ta - 3_000_000 + ((ta - 1_000_000_000) as f64 * -8e-6) as i64;
        let c = p.rx_to_tx(Instant::from_ns(rx)).unwrap();
        let latency = c.tx_clock.as_ns() - tx;
        // 2 ms in system time is 2 ms·(1 + 12 ppm) in TX clock time.
        assert!((latency - 2_000_024).abs() <= 3, "{latency}");
        let fit = p.describe(t).unwrap();
        assert!((fit.drift_ppm - (-20.0)).abs() < 0.01, "{}", fit.drift_ppm);
        // rx: −3 ms − 8 ppm·10 s, tx: 5 ms + 12 ppm·10 s.
        assert!(
            (fit.offset_ns - (-8_200_000.0)).abs() < 5.0,
            "{}",
            fit.offset_ns
        );
        assert_eq!(fit.tx.median_half_width, Span::from_ns(200));
        assert!((fit.sandwich_bound_ns - 400.0).abs() < 1.0);
        assert!(c.u95_ns >= 400.0 && c.u95_ns < 410.0, "{}", c.u95_ns);
    }

    #[test]
    fn a_skewed_read_stays_within_the_stated_bound() {
        // Both PHCs read at the very start of their sandwiches: the
        // conversion is off by up to the sandwich bound, never beyond it.
        let mut p = PhcPair::new();
        for i in 0..50i64 {
            let sys = 1_000_000_000 + i * 100_000_000;
            p.tx.add_round(&round(sys, 0, 0.0, 1000, 0.0)).unwrap();
            p.rx.add_round(&round(sys, 0, 0.0, 1000, 1.0)).unwrap();
        }
        let c = p.rx_to_tx(Instant::from_ns(3_000_000_000)).unwrap();
        let err = (c.tx_clock.as_ns() - 3_000_000_000).abs() as f64;
        assert!(err > 900.0, "the skew shows: {err}");
        assert!(err <= c.u95_ns, "{err} within {}", c.u95_ns);
    }

    #[test]
    fn scatter_widens_the_uncertainty() {
        let mut quiet = PhcPair::new();
        let mut noisy = PhcPair::new();
        for i in 0..100i64 {
            let sys = 1_000_000_000 + i * 10_000_000;
            let jitter = if i % 2 == 0 { 300 } else { -300 };
            quiet.tx.add_round(&round(sys, 0, 0.0, 100, 0.5)).unwrap();
            quiet.rx.add_round(&round(sys, 0, 0.0, 100, 0.5)).unwrap();
            noisy
                .tx
                .add_round(&round(sys, jitter, 0.0, 100, 0.5))
                .unwrap();
            noisy.rx.add_round(&round(sys, 0, 0.0, 100, 0.5)).unwrap();
        }
        let q = quiet.describe(1_500_000_000).unwrap();
        let n = noisy.describe(1_500_000_000).unwrap();
        assert!(
            n.u95_statistical_ns > q.u95_statistical_ns + 50.0,
            "{n:?} {q:?}"
        );
        assert!(
            (n.tx.residual_ns - 300.0).abs() < 10.0,
            "{}",
            n.tx.residual_ns
        );
    }

    #[test]
    fn bad_rounds_are_refused_and_counted() {
        let mut t = ClockTrack::new();
        assert_eq!(t.add_round(&[]), Err(RoundRejected::Empty));
        let inverted = CrossSample {
            sys_before: 10,
            phc: 5,
            sys_after: 9,
        };
        let wide = CrossSample {
            sys_before: 0,
            phc: 5,
            sys_after: 2 * MAX_SANDWICH_NS,
        };
        assert_eq!(t.add_round(&[inverted, wide]), Err(RoundRejected::TooWide));
        assert_eq!(t.rejected(), 2);
        assert!(t.line().is_none());
        let p = PhcPair::new();
        assert!(p.rx_to_tx(Instant::from_ns(5)).is_none());
        assert!(p.describe(5).is_none());
    }
}
