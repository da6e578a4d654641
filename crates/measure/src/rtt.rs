//! Round-trip decomposition and clock-offset estimation, without I/O.
//!
//! One probe between a client C and a reflector R, four instants:
//!
//! ```text
//!   C: t1 ──request──▶ R: t2  (R's clock)
//!                         │ turnaround = t3 − t2
//!   C: t4 ◀──reply──── R: t3  (R's clock)
//! ```
//!
//! - user RTT: what ping sees, `RX2 − TX1` of the client's user windows;
//! - kernel RTT: client kernel RX stamp − kernel TX stamp;
//! - turnaround: the reflector's own processing, `t3 − t2` on its clock;
//! - network RTT = kernel RTT − turnaround: the far host's time removed
//!   (seed 003's correction, with driver-level stamps at both ends).
//!
//! One-way delays need the offset θ of R's clock against C's:
//! forward = `t2 − t1 − θ`, backward = `t4 − t3 + θ`. Without synchronised
//! clocks, θ is estimated from the probes with the smallest network RTT,
//! where the two directions are most nearly equal (the idea of seed 003):
//! `θ = ((t2 − t1) + (t3 − t4)) / 2`, with an uncertainty of half that
//! probe's network RTT (the worst case if the whole RTT were one-sided).
//! Over long runs the offset drifts (skew); each window contributes its
//! minimum-RTT probe and a least-squares line θ(t) follows the drift.

use crate::time::{Instant, Span};
use misura_stats::{FitError, LinearFit};
use serde::{Deserialize, Serialize};

/// The instants of one probe. Client instants are on the client's clock,
/// reflector instants on the reflector's.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeTimes {
    /// Client user clock just before `send()`.
    pub tx1: Instant,
    /// Client kernel (or NIC) TX stamp.
    pub tx_kernel: Option<Instant>,
    /// Reflector RX stamp.
    pub reflector_rx: Option<Instant>,
    /// Reflector TX stamp (precise one, from follow-up telemetry, when given).
    pub reflector_tx: Option<Instant>,
    /// Client kernel (or NIC) RX stamp.
    pub rx_kernel: Option<Instant>,
    /// Client user clock just after the receive that returned the reply.
    pub rx2: Instant,
}

impl ProbeTimes {
    /// What ping sees: `RX2 − TX1`.
    pub fn user_rtt(&self) -> Span {
        self.rx2 - self.tx1
    }

    /// Kernel RX stamp − kernel TX stamp.
    pub fn kernel_rtt(&self) -> Option<Span> {
        Some(self.rx_kernel? - self.tx_kernel?)
    }

    /// The reflector's turnaround `t3 − t2`.
    pub fn turnaround(&self) -> Option<Span> {
        Some(self.reflector_tx? - self.reflector_rx?)
    }

    /// Kernel RTT − turnaround.
    pub fn network_rtt(&self) -> Option<Span> {
        Some(self.kernel_rtt()? - self.turnaround()?)
    }

    /// `((t2 − t1) + (t3 − t4)) / 2`: the reflector clock's offset if the
    /// two directions took equally long.
    pub fn symmetric_offset(&self) -> Option<Span> {
        let t1 = self.tx_kernel?;
        let t4 = self.rx_kernel?;
        let (t2, t3) = (self.reflector_rx?, self.reflector_tx?);
        Some(Span::from_ns(((t2 - t1) + (t3 - t4)).as_ns().div_euclid(2)))
    }

    /// Forward and backward one-way delays given the offset θ (reflector
    /// clock − client clock).
    pub fn one_way(&self, offset: Span) -> Option<(Span, Span)> {
        let fwd = self.reflector_rx? - self.tx_kernel? - offset;
        let back = self.rx_kernel? - self.reflector_tx? + offset;
        Some((fwd, back))
    }
}

/// An offset estimate with its uncertainty (half-width, ns).
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OffsetEstimate {
    pub offset_ns: f64,
    pub uncertainty_ns: f64,
    /// Drift of the offset, parts per million (None until two windows).
    pub skew_ppm: Option<f64>,
    /// Windows (minimum-RTT probes) the estimate rests on.
    pub windows: usize,
}

/// Tracks the clock offset from the minimum-RTT probe of each window of
/// `window` probes, keeping at most `max_windows` of them (bounded memory).
#[derive(Clone, Debug)]
pub struct OffsetTracker {
    window: usize,
    max_windows: usize,
    in_window: usize,
    best: Option<(Instant, Span, Span)>, // (client time, offset, network RTT)
    mins: std::collections::VecDeque<(Instant, Span, Span)>,
}

impl OffsetTracker {
    pub fn new(window: usize, max_windows: usize) -> OffsetTracker {
        OffsetTracker {
            window: window.max(1),
            max_windows: max_windows.max(2),
            in_window: 0,
            best: None,
            mins: std::collections::VecDeque::with_capacity(max_windows.max(2)),
        }
    }

    /// Feed one probe (ignored unless it has all four stamps).
    pub fn update(&mut self, p: &ProbeTimes) {
        if let (Some(theta), Some(rtt), Some(t1)) =
            (p.symmetric_offset(), p.network_rtt(), p.tx_kernel)
        {
            if self.best.is_none_or(|(_, _, r)| rtt < r) {
                self.best = Some((t1, theta, rtt));
            }
        }
        self.in_window += 1;
        if self.in_window >= self.window {
            self.close_window();
        }
    }

    fn close_window(&mut self) {
        if let Some(b) = self.best.take() {
            if self.mins.len() == self.max_windows {
                self.mins.pop_front();
            }
            self.mins.push_back(b);
        }
        self.in_window = 0;
    }

    /// The offset at client time `t`: from the drift line when there are at
    /// least three windows, else from the best probe seen.
    pub fn estimate_at(&self, t: Instant) -> Option<OffsetEstimate> {
        let mut pts: Vec<(Instant, Span, Span)> = self.mins.iter().copied().collect();
        if let Some(b) = self.best {
            pts.push(b);
        }
        let min_rtt = pts.iter().map(|p| p.2).min()?;
        let half = min_rtt.as_ns().max(0) as f64 / 2.0;
        if pts.len() >= 3 {
            let t0 = pts[0].0;
            let xy: Vec<(f64, f64)> = pts
                .iter()
                .map(|&(x, th, _)| ((x - t0).as_ns() as f64, th.as_ns() as f64))
                .collect();
            if let Ok(fit) = LinearFit::fit(&xy) {
                return Some(OffsetEstimate {
                    offset_ns: fit.predict((t - t0).as_ns() as f64),
                    uncertainty_ns: half + fit.a_ci95.abs(),
                    skew_ppm: Some(fit.b * 1e6),
                    windows: pts.len(),
                });
            }
        }
        let best = pts.iter().min_by_key(|p| p.2)?;
        Some(OffsetEstimate {
            offset_ns: best.1.as_ns() as f64,
            uncertainty_ns: half,
            skew_ppm: None,
            windows: pts.len(),
        })
    }
}

/// Seed 003's "ideal RTT" convention for a packet of `bytes` on a link of
/// `rate_bps`: `4 · P · 8 / R` (their Table 2: 20.5, 163.8 and 480 µs for
/// 64, 512 and 1500 bytes at 100 Mb/s).
pub fn seed_ideal_rtt_ns(bytes: usize, rate_bps: u64) -> f64 {
    4.0 * bytes as f64 * 8.0 * 1e9 / rate_bps as f64
}

/// Relative error of a measured RTT against an ideal one, in percent.
pub fn error_percent(measured_ns: f64, ideal_ns: f64) -> f64 {
    (measured_ns - ideal_ns) / ideal_ns * 100.0
}

/// Fit a drift line through (time, offset) points; exposed for reports.
pub fn drift_fit(points: &[(f64, f64)]) -> Result<LinearFit, FitError> {
    LinearFit::fit(points)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A probe on a path with forward delay `f`, backward `b`, reflector
    /// processing `turn`, reflector clock offset `theta`, and user-space
    /// overheads `u` on each side of the client's stamps.
    fn probe(t1: i64, f: i64, b: i64, turn: i64, theta: i64, u: i64) -> ProbeTimes {
        let t2 = t1 + f + theta;
        let t3 = t2 + turn;
        let t4 = t3 - theta + b;
        ProbeTimes {
            tx1: Instant::from_ns(t1 - u),
            tx_kernel: Some(Instant::from_ns(t1)),
            reflector_rx: Some(Instant::from_ns(t2)),
            reflector_tx: Some(Instant::from_ns(t3)),
            rx_kernel: Some(Instant::from_ns(t4)),
            rx2: Instant::from_ns(t4 + u),
        }
    }

    #[test]
    fn decomposition() {
        let p = probe(1_000_000, 30_000, 50_000, 12_000, 7_000_000, 4_000);
        let ns = Span::from_ns;
        assert_eq!(p.kernel_rtt(), Some(ns(92_000)));
        assert_eq!(p.turnaround(), Some(ns(12_000)));
        assert_eq!(p.network_rtt(), Some(ns(80_000)));
        assert_eq!(p.user_rtt(), ns(100_000));
        assert!(p.network_rtt() < p.kernel_rtt() && p.kernel_rtt() < Some(p.user_rtt()));
        // With the true offset the one-way delays are exact and add up.
        assert_eq!(p.one_way(ns(7_000_000)), Some((ns(30_000), ns(50_000))));
        // The symmetric estimate is off by half the asymmetry.
        assert_eq!(p.symmetric_offset(), Some(ns(7_000_000 - 10_000)));
        let (f, b) = p.one_way(p.symmetric_offset().unwrap()).unwrap();
        assert_eq!(f + b, ns(80_000));
        assert_eq!(f, b);
    }

    #[test]
    fn tracker_uses_min_rtt_probes_and_follows_skew() {
        // Offset drifts by 10 ppm; queueing adds up to 200 µs on most probes,
        // but every window holds one quiet probe (symmetric 20 µs each way).
        let mut tr = OffsetTracker::new(10, 100);
        let skew = 10e-6;
        for k in 0..1000i64 {
            let t = k * 10_000_000; // one probe every 10 ms
            let theta = 5_000_000 + (t as f64 * skew) as i64;
            let extra = if k % 10 == 3 {
                0
            } else {
                37_000 + (k * 7919) % 200_000
            };
            tr.update(&probe(t, 20_000 + extra, 20_000, 5_000, theta, 1_000));
        }
        let t = 9_990_000_000;
        let e = tr.estimate_at(Instant::from_ns(t)).unwrap();
        let truth = 5_000_000.0 + t as f64 * skew;
        assert!((e.offset_ns - truth).abs() < 1_000.0, "{e:?} vs {truth}");
        assert!((e.skew_ppm.unwrap() - 10.0).abs() < 0.5, "{e:?}");
        assert!(
            e.uncertainty_ns >= 20_000.0,
            "half the minimum network RTT bounds the error"
        );
        assert_eq!(e.windows, 100);
    }

    #[test]
    fn seed_ideal_rtts() {
        // Seed 003, Table 2, at 100 Mb/s.
        assert!((seed_ideal_rtt_ns(64, 100_000_000) - 20_480.0).abs() < 1e-6);
        assert!((seed_ideal_rtt_ns(512, 100_000_000) - 163_840.0).abs() < 1e-6);
        assert!((seed_ideal_rtt_ns(1500, 100_000_000) - 480_000.0).abs() < 1e-6);
        // Ping's 200 % error at 64 bytes means it measured three times the ideal.
        assert!((error_percent(61_440.0, 20_480.0) - 200.0).abs() < 1e-9);
    }
}
