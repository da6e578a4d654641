//! Estimating the frequency of the CPU's time-stamp counter, without I/O.
//!
//! Two references, two estimators:
//!
//! * **CLOCK_MONOTONIC_RAW** (the kernel's undisciplined clock): the caller
//!   reads the TSC, then the raw clock, then the TSC again ([`TscRawPair`]);
//!   the raw reading happened somewhere inside the TSC bracket, so each pair
//!   ties a raw instant to a TSC value within ± half the bracket width.
//!   [`TightestPerBin`] keeps the tightest bracket of each time bin (bounded
//!   memory however long the run), [`endpoint_estimate`] gives ΔTSC/ΔRAW
//!   between two pairs with a worst-case bound from the bracket widths,
//!   [`fit_estimate`] the least-squares slope of TSC against RAW with its
//!   95 % interval, [`window_estimates`] and [`stability`] the spread of the
//!   frequency over repeated windows.
//! * **An NTP server** (seed 003, Li et al. 2006, §1.2.1): the caller sends
//!   SNTP requests, reading the TSC at send (`s`) and at receive (`r`), and
//!   keeps the server's Receive Timestamp `ts` ([`NtpExchange`]). Two
//!   exchanges with the minimum round trip have equal one-way delays, so
//!   `f = (s_j − s_i) / (ts_j − ts_i)` (the seed's equation 1).
//!   [`min_rtt_estimate`] keeps the fastest exchange of each window, takes
//!   the pair of them that bounds `f` most tightly, and also fits a line
//!   through all of them.
//!
//! The NTP bound is strict, not statistical: the request reached the server
//! after `s` and before `r`, so the TSC value at the server's receive instant
//! is the midpoint `(s + r)/2` within ± RTT/2. With equal RTTs the midpoint
//! difference is the seed's `s_j − s_i`. For two exchanges `i`, `j` the
//! relative error of `f` is at most
//! `((rtt_i + rtt_j)/2) / (m_j − m_i) + 2·p / (ts_j − ts_i)` where `p` is the
//! server's stated timestamp precision. It holds against the *server's*
//! timescale: a server whose clock runs fast by ε makes the TSC look slow by
//! ε, and no client-side method can tell (the tests show it).
//!
//! Long: two estimators and their statistics, then their tests on synthetic
//! clocks (about a third of the file).

use crate::time::{Instant, Span};
use misura_stats::LinearFit;

/// One back-to-back read: TSC, then CLOCK_MONOTONIC_RAW, then TSC.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TscRawPair {
    pub tsc_before: u64,
    pub raw: Instant,
    pub tsc_after: u64,
}

impl TscRawPair {
    /// Width of the bracket in TSC ticks (0 if the counter went backwards,
    /// which only a migration between unsynchronised CPUs can do).
    pub fn width(&self) -> u64 {
        self.tsc_after.saturating_sub(self.tsc_before)
    }

    /// The TSC value taken for the raw instant: the bracket's midpoint, as
    /// a wide integer in half-ticks (exact).
    fn mid2(&self) -> i128 {
        i128::from(self.tsc_before) + i128::from(self.tsc_before.max(self.tsc_after))
    }
}

/// Keeps the tightest [`TscRawPair`] of each `bin` of raw time since the
/// first pair offered, for at most `max_bins` bins (later pairs are
/// ignored): memory stays bounded however long the loop runs.
#[derive(Clone, Debug)]
pub struct TightestPerBin {
    bin: Span,
    max_bins: usize,
    origin: Option<Instant>,
    bins: Vec<Option<TscRawPair>>,
    offered: u64,
}

impl TightestPerBin {
    pub fn new(bin: Span, max_bins: usize) -> TightestPerBin {
        TightestPerBin {
            bin: Span::from_ns(bin.as_ns().max(1)),
            max_bins,
            origin: None,
            bins: Vec::new(),
            offered: 0,
        }
    }

    /// Offers a pair; returns false when it falls past the last bin.
    pub fn offer(&mut self, p: TscRawPair) -> bool {
        let origin = *self.origin.get_or_insert(p.raw);
        let k = (p.raw - origin).as_ns().div_euclid(self.bin.as_ns());
        if k < 0 || k as usize >= self.max_bins {
            return false;
        }
        let k = k as usize;
        if self.bins.len() <= k {
            self.bins.resize(k + 1, None);
        }
        self.offered += 1;
        match &mut self.bins[k] {
            Some(best) if best.width() <= p.width() => {}
            slot => *slot = Some(p),
        }
        true
    }

    /// Pairs offered and accepted so far.
    pub fn offered(&self) -> u64 {
        self.offered
    }

    /// The kept pairs in time order (bins without a pair are skipped).
    pub fn pairs(&self) -> Vec<TscRawPair> {
        self.bins.iter().flatten().copied().collect()
    }
}

/// A frequency with a worst-case bound.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct BoundedFrequency {
    pub frequency_hz: f64,
    /// Half-width of the interval that certainly holds the frequency, given
    /// the assumptions of the estimator (Hz).
    pub bound_hz: f64,
    /// Reference time between the two ends.
    pub span: Span,
}

impl BoundedFrequency {
    pub fn bound_ppm(&self) -> f64 {
        self.bound_hz / self.frequency_hz * 1e6
    }
}

/// ΔTSC/ΔRAW between two pairs. The TSC value of each raw instant is known
/// to ± half its bracket, the raw reading to 1 ns (it is truncated), so
/// `|δf|/f ≤ ((w_a + w_b)/2)/ΔTSC + 1 ns/ΔRAW`. None if `b` is not later.
pub fn endpoint_estimate(a: &TscRawPair, b: &TscRawPair) -> Option<BoundedFrequency> {
    let span_ns = (b.raw - a.raw).as_ns();
    let dtsc = (b.mid2() - a.mid2()) as f64 / 2.0;
    if span_ns <= 0 || dtsc <= 0.0 {
        return None;
    }
    let f = dtsc / span_ns as f64 * 1e9;
    let rel = (a.width() + b.width()) as f64 / 2.0 / dtsc + 1.0 / span_ns as f64;
    Some(BoundedFrequency {
        frequency_hz: f,
        bound_hz: f * rel,
        span: Span::from_ns(span_ns),
    })
}

/// A frequency from a least-squares line.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct FittedFrequency {
    pub frequency_hz: f64,
    /// Half-width of the 95 % confidence interval of the slope (Hz).
    pub ci95_hz: f64,
    pub points: usize,
    /// Standard deviation of the residuals, in ns of the reference clock.
    pub residual_std_ns: f64,
}

impl FittedFrequency {
    pub fn ci95_ppm(&self) -> f64 {
        self.ci95_hz / self.frequency_hz * 1e6
    }
}

/// Fits `tsc = a + f·t` through `(t_ns, tsc_half_ticks)` points given
/// relative to the first one.
fn fit_line(points: &[(f64, f64)]) -> Option<FittedFrequency> {
    let fit = LinearFit::fit(points).ok()?;
    let hz = fit.b * 1e9;
    if hz.is_nan() || hz <= 0.0 {
        return None;
    }
    Some(FittedFrequency {
        frequency_hz: hz,
        ci95_hz: fit.b_ci95 * 1e9,
        points: fit.n,
        residual_std_ns: fit.residual_variance.sqrt() / fit.b,
    })
}

/// Least-squares slope of the bracket midpoints against MONOTONIC_RAW, with
/// its 95 % interval (Student t). None below 3 pairs or for a degenerate set.
pub fn fit_estimate(pairs: &[TscRawPair]) -> Option<FittedFrequency> {
    let first = pairs.first()?;
    let pts: Vec<(f64, f64)> = pairs
        .iter()
        .map(|p| {
            (
                (p.raw - first.raw).as_ns() as f64,
                (p.mid2() - first.mid2()) as f64 / 2.0,
            )
        })
        .collect();
    fit_line(&pts)
}

/// The frequency over one window of the run.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct WindowFrequency {
    /// Start and end of the window, raw time since the first pair of the run.
    pub start: Span,
    pub end: Span,
    pub pairs: usize,
    /// Endpoint estimate between the window's first and last pair.
    pub estimate: BoundedFrequency,
}

/// Splits `pairs` (time order) into `n` windows of equal raw time and
/// estimates the frequency in each from its first and last pair. Windows
/// with fewer than 2 pairs are left out.
pub fn window_estimates(pairs: &[TscRawPair], n: usize) -> Vec<WindowFrequency> {
    let (Some(first), Some(last)) = (pairs.first(), pairs.last()) else {
        return Vec::new();
    };
    let total = (last.raw - first.raw).as_ns();
    if n == 0 || total <= 0 {
        return Vec::new();
    }
    let mut out = Vec::new();
    for k in 0..n {
        let lo = first.raw + Span::from_ns((total as i128 * k as i128 / n as i128) as i64);
        let hi = first.raw + Span::from_ns((total as i128 * (k as i128 + 1) / n as i128) as i64);
        let w: Vec<&TscRawPair> = pairs
            .iter()
            .filter(|p| p.raw >= lo && (p.raw < hi || (k + 1 == n && p.raw <= hi)))
            .collect();
        if w.len() < 2 {
            continue;
        }
        if let Some(est) = endpoint_estimate(w[0], w[w.len() - 1]) {
            out.push(WindowFrequency {
                start: lo - first.raw,
                end: hi - first.raw,
                pairs: w.len(),
                estimate: est,
            });
        }
    }
    out
}

/// Spread of per-window frequencies around a reference frequency.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Stability {
    pub windows: usize,
    /// Sample standard deviation of the window frequencies (ppm of the
    /// reference); 0 for a single window.
    pub std_dev_ppm: f64,
    /// Largest minus smallest window frequency (ppm).
    pub spread_ppm: f64,
    /// Largest |window − reference| (ppm).
    pub max_deviation_ppm: f64,
    /// Largest window bound (ppm): spreads below it are not resolved.
    pub resolution_ppm: f64,
}

/// None without windows or for a non-positive reference.
pub fn stability(windows: &[WindowFrequency], reference_hz: f64) -> Option<Stability> {
    if windows.is_empty() || reference_hz.is_nan() || reference_hz <= 0.0 {
        return None;
    }
    let ppm: Vec<f64> = windows
        .iter()
        .map(|w| (w.estimate.frequency_hz / reference_hz - 1.0) * 1e6)
        .collect();
    let n = ppm.len() as f64;
    let mean = ppm.iter().sum::<f64>() / n;
    let var = if ppm.len() > 1 {
        ppm.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    let max = ppm.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let min = ppm.iter().copied().fold(f64::INFINITY, f64::min);
    Some(Stability {
        windows: ppm.len(),
        std_dev_ppm: var.sqrt(),
        spread_ppm: max - min,
        max_deviation_ppm: ppm.iter().map(|v| v.abs()).fold(0.0, f64::max),
        resolution_ppm: windows
            .iter()
            .map(|w| w.estimate.bound_ppm())
            .fold(0.0, f64::max),
    })
}

/// One SNTP exchange as seed 003 records it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct NtpExchange {
    /// Request number, for the report.
    pub seq: u64,
    /// TSC just before the request was sent.
    pub s: u64,
    /// TSC just after the reply was received.
    pub r: u64,
    /// The server's Receive Timestamp, ns on the server's timescale.
    pub ts: Instant,
}

impl NtpExchange {
    /// Round-trip time in TSC ticks.
    pub fn rtt_ticks(&self) -> u64 {
        self.r.saturating_sub(self.s)
    }
    /// Midpoint `(s + r)` in half-ticks (exact).
    fn mid2(&self) -> i128 {
        i128::from(self.s) + i128::from(self.r.max(self.s))
    }
}

/// A frequency from two exchanges, with its strict bound.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct PairEstimate {
    pub first: NtpExchange,
    pub last: NtpExchange,
    pub estimate: BoundedFrequency,
}

/// `f = (m_j − m_i)/(ts_j − ts_i)` with the bound of the module docs;
/// `server_precision_ns` is the server's stated precision (`2^precision` s).
/// None unless `j` is later than `i` on both clocks.
pub fn pair_estimate(
    i: &NtpExchange,
    j: &NtpExchange,
    server_precision_ns: f64,
) -> Option<PairEstimate> {
    let dm = (j.mid2() - i.mid2()) as f64 / 2.0;
    let dts = (j.ts - i.ts).as_ns();
    if dm <= 0.0 || dts <= 0 {
        return None;
    }
    let f = dm / dts as f64 * 1e9;
    let rel = (i.rtt_ticks() + j.rtt_ticks()) as f64 / 2.0 / dm
        + (2.0 * server_precision_ns.max(0.0) + 1.0) / dts as f64;
    Some(PairEstimate {
        first: *i,
        last: *j,
        estimate: BoundedFrequency {
            frequency_hz: f,
            bound_hz: f * rel,
            span: Span::from_ns(dts),
        },
    })
}

/// The result of seed 003's method over a run.
#[derive(Clone, Debug, PartialEq)]
pub struct NtpEstimate {
    /// The pair of fastest exchanges with the tightest bound: the estimate.
    pub pair: PairEstimate,
    /// Least-squares line of the midpoints of the fastest exchange of each
    /// window against `ts` (None below 3 windows).
    pub fit: Option<FittedFrequency>,
    /// The fastest exchange of each window, in time order.
    pub selected: Vec<NtpExchange>,
    pub min_rtt_ticks: u64,
    pub median_rtt_ticks: u64,
}

/// Seed 003's method: split the exchanges into `windows` windows of equal
/// TSC time, keep the minimum-RTT exchange of each (its one-way delay is the
/// fixed, load-free minimum), and estimate `f` from the pair of them with
/// the tightest bound (in practice the fastest ones far apart in time).
/// None with fewer than 2 usable windows.
pub fn min_rtt_estimate(
    exchanges: &[NtpExchange],
    windows: usize,
    server_precision_ns: f64,
) -> Option<NtpEstimate> {
    let mut ex: Vec<NtpExchange> = exchanges.iter().filter(|e| e.r > e.s).copied().collect();
    if ex.len() < 2 || windows < 2 {
        return None;
    }
    ex.sort_by_key(|e| e.s);
    let mut rtts: Vec<u64> = ex.iter().map(NtpExchange::rtt_ticks).collect();
    rtts.sort_unstable();
    let (s0, s1) = (ex[0].s, ex[ex.len() - 1].s);
    let span = u128::from(s1 - s0) + 1;
    let mut best: Vec<Option<NtpExchange>> = vec![None; windows];
    for e in &ex {
        let k = ((u128::from(e.s - s0) * windows as u128) / span) as usize;
        let slot = &mut best[k.min(windows - 1)];
        if slot.is_none_or(|b| e.rtt_ticks() < b.rtt_ticks()) {
            *slot = Some(*e);
        }
    }
    let selected: Vec<NtpExchange> = best.into_iter().flatten().collect();
    let mut pair: Option<PairEstimate> = None;
    for (a, i) in selected.iter().enumerate() {
        for j in &selected[a + 1..] {
            if let Some(p) = pair_estimate(i, j, server_precision_ns) {
                if pair.is_none_or(|q| p.estimate.bound_ppm() < q.estimate.bound_ppm()) {
                    pair = Some(p);
                }
            }
        }
    }
    let pair = pair?;
    let fit = if selected.len() >= 3 {
        let (m0, t0) = (selected[0].mid2(), selected[0].ts);
        let pts: Vec<(f64, f64)> = selected
            .iter()
            .map(|e| ((e.ts - t0).as_ns() as f64, (e.mid2() - m0) as f64 / 2.0))
            .collect();
        fit_line(&pts)
    } else {
        None
    };
    Some(NtpEstimate {
        pair,
        fit,
        selected,
        min_rtt_ticks: rtts[0],
        median_rtt_ticks: rtts[rtts.len() / 2],
    })
}

/// How two bounded estimates compare.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Agreement {
    /// `(a − b)/b` in ppm.
    pub difference_ppm: f64,
    /// The two bounds added (ppm of `b`).
    pub combined_bound_ppm: f64,
    /// |difference| within the combined bound.
    pub within: bool,
}

pub fn agreement(a: &BoundedFrequency, b: &BoundedFrequency) -> Agreement {
    let d = (a.frequency_hz / b.frequency_hz - 1.0) * 1e6;
    let c = (a.bound_hz + b.bound_hz) / b.frequency_hz * 1e6;
    Agreement {
        difference_ppm: d,
        combined_bound_ppm: c,
        within: d.abs() <= c,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};
    use rand_distr::{Distribution, Exp};

    const F: f64 = 2_893_456_789.0; // true TSC frequency, Hz

    /// Pairs with brackets `w` ticks wide around the raw instant, the raw
    /// read at a random place inside.
    fn pair(rng: &mut SmallRng, t: Span, w: u64) -> TscRawPair {
        let t_ns = t.as_ns();
        let at = rng.random_range(0..=w);
        let tsc = 1_000_000_000_000u64 + (t_ns as f64 * F / 1e9) as u64;
        TscRawPair {
            tsc_before: tsc - at,
            raw: Instant::from_ns(5_000_000_000 + t_ns),
            tsc_after: tsc - at + w,
        }
    }

    #[test]
    fn tightest_per_bin_keeps_the_narrowest() {
        let mut rng = SmallRng::seed_from_u64(1);
        let mut b = TightestPerBin::new(Span::from_millis(1), 3);
        for (t, w) in [
            (0, 90),
            (10, 40),
            (999_999, 60),
            (1_500_000, 70),
            (2_100_000, 80),
            (3_000_000, 10),
        ] {
            let accepted = b.offer(pair(&mut rng, Span::from_ns(t), w));
            assert_eq!(accepted, t < 3_000_000);
        }
        let kept: Vec<u64> = b.pairs().iter().map(TscRawPair::width).collect();
        assert_eq!(kept, vec![40, 70, 80]);
        assert_eq!(b.offered(), 5);
    }

    #[test]
    fn raw_estimators_recover_the_frequency_within_their_bounds() {
        let mut rng = SmallRng::seed_from_u64(2);
        let pairs: Vec<TscRawPair> = (0..200)
            .map(|k| {
                let (jitter, w) = (rng.random_range(0..1000), rng.random_range(40..400));
                pair(&mut rng, Span::from_ns(k * 10_000_000 + jitter), w)
            })
            .collect();
        let e = endpoint_estimate(&pairs[0], &pairs[199]).unwrap();
        assert!((e.frequency_hz - F).abs() <= e.bound_hz, "{e:?}");
        assert!(e.bound_ppm() < 0.2, "{e:?}");
        let fit = fit_estimate(&pairs).unwrap();
        assert!(
            (fit.frequency_hz - F).abs() <= fit.ci95_hz * 3.0 + 1.0,
            "{fit:?}"
        );
        assert!(fit.residual_std_ns < 100.0);
        let w = window_estimates(&pairs, 10);
        assert_eq!(w.len(), 10);
        assert!(w
            .iter()
            .all(|w| (w.estimate.frequency_hz - F).abs() <= w.estimate.bound_hz));
        assert_eq!(w.iter().map(|w| w.pairs).sum::<usize>(), 200);
        let s = stability(&w, e.frequency_hz).unwrap();
        assert!(
            s.spread_ppm <= 2.0 * s.resolution_ppm && s.std_dev_ppm.is_finite(),
            "{s:?}"
        );
        assert!(endpoint_estimate(&pairs[5], &pairs[5]).is_none());
        assert!(fit_estimate(&pairs[..2]).is_none());
    }

    #[test]
    fn a_frequency_step_shows_as_instability() {
        let mut rng = SmallRng::seed_from_u64(3);
        // The second half runs 50 ppm fast.
        let pairs: Vec<TscRawPair> = (0..200)
            .map(|k| {
                let t = k * 10_000_000;
                let mut p = pair(&mut rng, Span::from_ns(t), 100);
                let extra = if k >= 100 {
                    ((t - 1_000_000_000) as f64 * F / 1e9 * 50e-6) as u64
                } else {
                    0
                };
                p.tsc_before += extra;
                p.tsc_after += extra;
                p
            })
            .collect();
        let w = window_estimates(&pairs, 4);
        let s = stability(
            &w,
            endpoint_estimate(&pairs[0], &pairs[199])
                .unwrap()
                .frequency_hz,
        )
        .unwrap();
        assert!((s.spread_ppm - 50.0).abs() < 2.0, "{s:?}");
    }

    /// Synthetic SNTP exchanges: TSC at `F`, the server's clock offset by
    /// `offset_ns` and running `skew` fast, timestamp noise within
    /// `prec_ns`; delays of a fixed minimum plus exponential queueing.
    fn exchanges(
        seed: u64,
        n: usize,
        interval_ns: f64,
        skew: f64,
        prec_ns: f64,
    ) -> Vec<NtpExchange> {
        let mut rng = SmallRng::seed_from_u64(seed);
        let queue = Exp::new(1.0 / 40_000.0).unwrap(); // mean 40 µs of queueing
        let offset_ns = 1_700_000_000_000_000_000.0_f64;
        (0..n)
            .map(|k| {
                let t = k as f64 * interval_ns + rng.random_range(0.0..1e6); // true send time, ns
                let host = rng.random_range(2_000.0..4_000.0); // send() cost, ns
                let fwd = 30_000.0
                    + if rng.random_bool(0.7) {
                        queue.sample(&mut rng)
                    } else {
                        0.0
                    };
                let back = 30_000.0
                    + if rng.random_bool(0.7) {
                        queue.sample(&mut rng)
                    } else {
                        0.0
                    };
                let arrive = t + host + fwd;
                let tick = |ns: f64| 10_000_000_000u64 + (ns * F / 1e9) as u64;
                let noise = rng.random_range(-prec_ns..=prec_ns);
                NtpExchange {
                    seq: k as u64,
                    s: tick(t),
                    r: tick(arrive + 5_000.0 + back + host),
                    ts: Instant::from_ns((offset_ns + arrive * (1.0 + skew) + noise) as i64),
                }
            })
            .collect()
    }

    #[test]
    fn min_rtt_pairs_recover_the_frequency_within_the_bound() {
        for seed in 0..20 {
            let ex = exchanges(seed, 600, 1e9, 0.0, 30.0);
            let e = min_rtt_estimate(&ex, 10, 30.0).unwrap();
            let b = e.pair.estimate;
            assert!(
                (b.frequency_hz - F).abs() <= b.bound_hz,
                "seed {seed}: {b:?} ({} ppm off)",
                (b.frequency_hz / F - 1.0) * 1e6
            );
            // 10 min of exchanges with ~70 µs minimum RTT: a bound of ~0.15 ppm.
            assert!(b.bound_ppm() < 0.3, "seed {seed}: {} ppm", b.bound_ppm());
            assert!(e.pair.last.s > e.pair.first.s);
            assert_eq!(e.selected.len(), 10);
            let fit = e.fit.unwrap();
            assert!(
                (fit.frequency_hz - F).abs() <= b.bound_hz.max(3.0 * fit.ci95_hz),
                "seed {seed}: {fit:?}"
            );
        }
    }

    #[test]
    fn the_seed_setting_with_few_exchanges_still_holds() {
        // The lab test's shape: 40 requests 200 ms apart.
        for seed in 0..50 {
            let ex = exchanges(100 + seed, 40, 2e8, 0.0, 30.0);
            let e = min_rtt_estimate(&ex, 8, 30.0).unwrap();
            let b = e.pair.estimate;
            assert!(
                (b.frequency_hz - F).abs() <= b.bound_hz,
                "seed {seed}: {b:?}"
            );
            assert!(b.bound_ppm() < 20.0, "{}", b.bound_ppm());
        }
    }

    #[test]
    fn a_skewed_server_shifts_the_estimate_by_its_skew() {
        // The server's clock runs 20 ppm fast: the TSC is measured against
        // it, so it looks 20 ppm slow; the bound holds for that frequency.
        let skew = 20e-6;
        for seed in 0..10 {
            let ex = exchanges(200 + seed, 300, 1e9, skew, 30.0);
            let e = min_rtt_estimate(&ex, 6, 30.0).unwrap().pair.estimate;
            let against_server = F / (1.0 + skew);
            assert!(
                (e.frequency_hz - against_server).abs() <= e.bound_hz,
                "seed {seed}: {e:?}"
            );
            assert!(((e.frequency_hz / F - 1.0) * 1e6 + 20.0).abs() < 1.0);
        }
    }

    #[test]
    fn too_few_exchanges_give_nothing() {
        let ex = exchanges(7, 1, 1e9, 0.0, 0.0);
        assert!(min_rtt_estimate(&ex, 4, 0.0).is_none());
        let ex = exchanges(7, 5, 1e9, 0.0, 0.0);
        assert!(min_rtt_estimate(&ex, 1, 0.0).is_none());
        // Exchanges whose reply came "before" the request are dropped.
        let bad: Vec<NtpExchange> = ex.iter().map(|e| NtpExchange { r: e.s, ..*e }).collect();
        assert!(min_rtt_estimate(&bad, 4, 0.0).is_none());
    }

    #[test]
    fn agreement_adds_the_bounds() {
        let a = BoundedFrequency {
            frequency_hz: 1_000_003_000.0,
            bound_hz: 2_000.0,
            span: Span::from_ns(1),
        };
        let b = BoundedFrequency {
            frequency_hz: 1_000_000_000.0,
            bound_hz: 1_000.0,
            span: Span::from_ns(1),
        };
        let g = agreement(&a, &b);
        assert!(
            (g.difference_ppm - 3.0).abs() < 1e-9
                && (g.combined_bound_ppm - 3.0).abs() < 1e-9
                && g.within
        );
        let g = agreement(
            &BoundedFrequency {
                frequency_hz: 1_000_004_000.0,
                ..a
            },
            &b,
        );
        assert!(!g.within);
    }
}
