//! Bounded-memory streaming summary of signed nanosecond values.
//!
//! # What is exact and what is approximate
//!
//! * `count`, `min`, `max` are exact.
//! * The mean is exact up to one final `f64` rounding: it is computed from an
//!   `i128` running sum (which cannot overflow before 2^64 values of
//!   magnitude 2^63), divided once by the count.
//! * The variance uses Welford's online algorithm (B. P. Welford, "Note on a
//!   method for calculating corrected sums of squares and products",
//!   *Technometrics* 4(3), 1962, pp. 419–420), because the naive
//!   `Σx² − (Σx)²/n` formula cancels catastrophically when the spread is tiny
//!   compared with the mean — exactly the situation of latency data (e.g. a
//!   few ns of spread on a 50 µs mean). Two summaries are combined with the
//!   pairwise update of T. F. Chan, G. H. Golub and R. J. LeVeque, "Updating
//!   formulae and a pairwise algorithm for computing sample variances",
//!   Stanford CS report STAN-CS-79-773, 1979.
//! * Percentiles come from two HDR histograms (G. Tene, *HdrHistogram*,
//!   <http://hdrhistogram.org/>) with 3 significant decimal digits: one for the
//!   non-negative values and one for the magnitudes of the negative values.
//!   HDR histograms only hold unsigned values, and negative values are real
//!   in this project (a best-case latency bound, or a system-under-test
//!   latency after subtracting a calibration), so the sign is kept by the
//!   choice of histogram. Values are exact below 2048 ns and within 0.1 %
//!   above.
//!
//! Memory is fixed when the summary is created: both histograms cover
//! magnitudes `1..=`[`HDR_MAX_NS`] (one hour) and never resize, so
//! [`Summary::record`] does not allocate. Magnitudes beyond one hour are
//! clamped to one hour *for the histograms only* (min/max/mean/variance still
//! see the true value) and counted in [`SummarySnapshot::clamped`].
//!
//! Long: one summary whose exact parts, Welford variance, HDR quantiles and
//! merge depend on each other's invariants; its tests follow.

use std::collections::BTreeMap;
use std::fmt;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Largest magnitude (ns) the percentile histograms resolve: one hour.
/// Larger magnitudes are clamped to this for percentiles and counted.
pub const HDR_MAX_NS: u64 = 3_600_000_000_000;

/// Significant decimal digits kept by the percentile histograms.
pub const HDR_SIGFIG: u8 = 3;

/// Upper limit applied to `bins_per_decade` in [`Summary::log_histogram`];
/// finer bins than this are below the histograms' own 0.1 % resolution.
pub const MAX_BINS_PER_DECADE: u32 = 1000;

/// Streaming summary of `i64` nanosecond values (which may be negative).
///
/// See the [module documentation](self) for the methods and their sources.
#[derive(Clone)]
pub struct Summary {
    count: u64,
    /// Only meaningful while `count > 0`.
    min: i64,
    /// Only meaningful while `count > 0`.
    max: i64,
    /// Exact running sum; `i128` so that even 2^64 values of magnitude 2^63
    /// cannot overflow.
    sum: i128,
    /// Shift `K` (the first value recorded) subtracted before the Welford
    /// update, so the floating-point work is done on `x − K`, which is small
    /// even when `x` itself is huge (e.g. 10^15 ns with a few ns of spread,
    /// where the f64 grid is already 0.125 ns wide). The variance is
    /// shift-invariant; see Chan, Golub & LeVeque, "Algorithms for computing
    /// the sample variance: analysis and recommendations", *The American
    /// Statistician* 37(3), 1983, on shifted data.
    shift: i64,
    /// Welford running mean of `x − shift` (used only to update `m2`; the
    /// reported mean comes from `sum`, which is exact).
    w_mean: f64,
    /// Welford running sum of squared deviations from the mean.
    m2: f64,
    /// Values `>= 0`.
    nonneg: Histogram<u64>,
    /// Magnitudes of values `< 0`.
    neg: Histogram<u64>,
    clamped: u64,
    threshold: Option<i64>,
    over_threshold: u64,
}

/// One histogram bucket covering the half-open interval `[lower_ns, upper_ns)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bucket {
    /// Inclusive lower bound (ns).
    pub lower_ns: i64,
    /// Exclusive upper bound (ns).
    pub upper_ns: i64,
    /// Number of values in the bucket.
    pub count: u64,
}

/// Pool bucket lists of several groups of one run into one: sorted by
/// value, overlapping buckets merged (the same HDR bucket seen by two
/// groups, its edges clamped to each group's extremes, overlaps itself;
/// distinct HDR buckets never overlap), so pooling [`Summary::hdr_buckets`]
/// lists is exact.
pub fn pool_buckets<'a>(lists: impl IntoIterator<Item = &'a Bucket>) -> Vec<Bucket> {
    let mut all: Vec<Bucket> = lists.into_iter().filter(|b| b.count > 0).cloned().collect();
    all.sort_by_key(|b| (b.lower_ns, b.upper_ns));
    let mut out: Vec<Bucket> = Vec::with_capacity(all.len());
    for b in all {
        match out.last_mut() {
            Some(l) if b.lower_ns < l.upper_ns => {
                l.upper_ns = l.upper_ns.max(b.upper_ns);
                l.count += b.count;
            }
            _ => out.push(b),
        }
    }
    out
}

/// Plain-data view of a [`Summary`], suitable for serialising into a report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SummarySnapshot {
    /// Number of values recorded (exact).
    pub count: u64,
    /// Smallest value (exact).
    pub min_ns: Option<i64>,
    /// Largest value (exact).
    pub max_ns: Option<i64>,
    /// Arithmetic mean.
    pub mean_ns: Option<f64>,
    /// Sample standard deviation (n − 1 denominator); `None` below 2 values.
    pub std_dev_ns: Option<f64>,
    /// 50th percentile (nearest rank, HDR precision).
    pub median_ns: Option<i64>,
    /// 90th percentile.
    pub p90_ns: Option<i64>,
    /// 99th percentile.
    pub p99_ns: Option<i64>,
    /// 99.9th percentile.
    pub p999_ns: Option<i64>,
    /// Mean minus minimum: how far the typical value sits above the best
    /// case, a measure of the queueing/scheduling noise on top of the floor.
    pub mean_minus_min_ns: Option<f64>,
    /// The threshold used for [`SummarySnapshot::over_threshold`], if any.
    pub threshold_ns: Option<i64>,
    /// Number of values strictly greater than the threshold.
    pub over_threshold: u64,
    /// Number of values whose magnitude exceeded [`HDR_MAX_NS`] and were
    /// clamped for the percentile histograms.
    pub clamped: u64,
}

fn new_histogram() -> Histogram<u64> {
    // Bounds are compile-time constants that satisfy HDR's preconditions
    // (low >= 1, high >= 2·low, sigfig <= 5), so this cannot fail.
    // `new_with_bounds` leaves auto-resize off, which is what keeps `record`
    // allocation-free.
    Histogram::new_with_bounds(1, HDR_MAX_NS, HDR_SIGFIG).expect("constant HDR bounds are valid")
}

/// Add `src` into `dst`. Both were made by [`new_histogram`], so the fast path
/// cannot fail; the fallback only exists so that this code has no panic path.
fn add_histogram(dst: &mut Histogram<u64>, src: &Histogram<u64>) {
    if dst.add(src).is_err() {
        for v in src.iter_recorded() {
            dst.saturating_record_n(v.value_iterated_to(), v.count_at_value());
        }
    }
}

/// Value of the `k`-th smallest recorded sample (1-based) as the highest value
/// of its HDR bucket, or `None` when fewer than `k` samples are stored.
fn value_at_rank(h: &Histogram<u64>, k: u64) -> Option<u64> {
    let mut cumulative = 0u64;
    for v in h.iter_recorded() {
        cumulative = cumulative.saturating_add(v.count_at_value());
        if cumulative >= k {
            return Some(h.highest_equivalent(v.value_iterated_to()));
        }
    }
    None
}

impl Default for Summary {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for Summary {
    // Hand-written because the derived form would print every HDR counter
    // (tens of thousands of them).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Summary")
            .field("count", &self.count)
            .field("min", &self.min())
            .field("max", &self.max())
            .field("mean", &self.mean())
            .field("std_dev", &self.std_dev())
            .field("threshold", &self.threshold)
            .field("over_threshold", &self.over_threshold)
            .field("clamped", &self.clamped)
            .finish_non_exhaustive()
    }
}

impl Summary {
    /// An empty summary without a threshold.
    pub fn new() -> Self {
        Self::with_threshold(None)
    }

    /// An empty summary that also counts values strictly greater than
    /// `threshold_ns` ("count over threshold": a fixed latency budget, such as
    /// the 30 µs used to count late frames, is often more meaningful to an
    /// operator than any percentile).
    pub fn with_threshold(threshold_ns: Option<i64>) -> Self {
        Summary {
            count: 0,
            min: 0,
            max: 0,
            sum: 0,
            shift: 0,
            w_mean: 0.0,
            m2: 0.0,
            nonneg: new_histogram(),
            neg: new_histogram(),
            clamped: 0,
            threshold: threshold_ns,
            over_threshold: 0,
        }
    }

    /// Record one value (ns). Constant time, never allocates.
    pub fn record(&mut self, v: i64) {
        if self.count == 0 {
            self.min = v;
            self.max = v;
            self.shift = v;
        } else {
            self.min = self.min.min(v);
            self.max = self.max.max(v);
        }
        self.count += 1;
        self.sum += i128::from(v);

        // Welford (1962): M2 += (x − mean_old)(x − mean_new). Each term is
        // (n−1)/n·δ² >= 0, so M2 never goes negative through cancellation.
        // i128: v − shift can exceed the i64 range.
        let x = (i128::from(v) - i128::from(self.shift)) as f64;
        let delta = x - self.w_mean;
        self.w_mean += delta / self.count as f64;
        self.m2 += delta * (x - self.w_mean);

        let (hist, magnitude) = if v >= 0 {
            (&mut self.nonneg, v.unsigned_abs())
        } else {
            (&mut self.neg, v.unsigned_abs())
        };
        let magnitude = if magnitude > HDR_MAX_NS {
            self.clamped += 1;
            HDR_MAX_NS
        } else {
            magnitude
        };
        // In range by construction, so this is an ordinary record; the
        // saturating form is used only because it has no error to handle.
        hist.saturating_record(magnitude);

        if let Some(t) = self.threshold {
            if v > t {
                self.over_threshold += 1;
            }
        }
    }

    /// Number of values recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Smallest value recorded.
    pub fn min(&self) -> Option<i64> {
        (self.count > 0).then_some(self.min)
    }

    /// Largest value recorded.
    pub fn max(&self) -> Option<i64> {
        (self.count > 0).then_some(self.max)
    }

    /// Arithmetic mean, from the exact `i128` sum (one rounding at the end).
    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum as f64 / self.count as f64)
    }

    /// Sample standard deviation `sqrt(M2 / (n − 1))` (Bessel-corrected, as
    /// the values are a sample of the latency process); `None` if fewer than
    /// two values were recorded.
    pub fn std_dev(&self) -> Option<f64> {
        (self.count >= 2).then(|| (self.m2.max(0.0) / (self.count - 1) as f64).sqrt())
    }

    /// Sample variance `M2 / (n − 1)`; `None` if fewer than two values.
    pub fn variance(&self) -> Option<f64> {
        (self.count >= 2).then(|| self.m2.max(0.0) / (self.count - 1) as f64)
    }

    /// Quantile `q` in `[0, 1]` (clamped into that range; `None` for NaN or
    /// an empty summary).
    ///
    /// Nearest-rank definition (the smallest value such that at least
    /// `q·n` values are at or below it; rank `max(1, ⌈q·n⌉)`), evaluated over
    /// the combined negative and non-negative distribution. The value
    /// reported for a rank is the end of its HDR bucket nearest +∞ (as HDR's
    /// own `value_at_quantile` does), so it is never below the true
    /// nearest-rank value and exceeds it by at most the HDR resolution
    /// (exact below 2048 ns, within 0.1 % above); it is then clamped into
    /// `[min, max]`. Ranks 1 and n are answered from the exact min and max.
    /// Values clamped to one hour for the histograms (see
    /// [`Summary::clamped`]) are treated as exactly one hour here, so a
    /// quantile landing on them reads as about one hour.
    pub fn quantile(&self, q: f64) -> Option<i64> {
        if self.count == 0 || q.is_nan() {
            return None;
        }
        let q = q.clamp(0.0, 1.0);
        let n_neg = self.neg.len();
        let n = n_neg + self.nonneg.len();
        // `q·n` in f64 is exact enough: n < 2^53 in any realistic run.
        let rank = ((q * n as f64).ceil() as u64).clamp(1, n);
        // The extreme ranks are known exactly, even when the histograms had
        // to clamp them.
        if rank == 1 {
            return Some(self.min);
        }
        if rank == n {
            return Some(self.max);
        }
        let v = if rank <= n_neg {
            // The rank-th smallest value among the negatives is the one with
            // the (n_neg − rank + 1)-th smallest magnitude.
            let m = value_at_rank(&self.neg, n_neg - rank + 1)?;
            // Upper end in value terms = smallest magnitude of the bucket.
            -(self.neg.lowest_equivalent(m) as i64)
        } else {
            let m = value_at_rank(&self.nonneg, rank - n_neg)?;
            i64::try_from(m).unwrap_or(i64::MAX)
        };
        Some(v.clamp(self.min, self.max))
    }

    /// Number of values strictly greater than the threshold (0 without one).
    pub fn over_threshold(&self) -> u64 {
        self.over_threshold
    }

    /// The threshold given at construction.
    pub fn threshold(&self) -> Option<i64> {
        self.threshold
    }

    /// Number of values whose magnitude was clamped to [`HDR_MAX_NS`] for the
    /// percentile histograms.
    pub fn clamped(&self) -> u64 {
        self.clamped
    }

    /// Total number of histogram counters held. Fixed at construction (the
    /// histograms never resize), which is what bounds the memory; exposed so
    /// tests and diagnostics can check that it does not grow.
    pub fn histogram_slots(&self) -> usize {
        self.nonneg.distinct_values() + self.neg.distinct_values()
    }

    /// Fold `other` into `self`, as if every value recorded into `other` had
    /// been recorded into `self`.
    ///
    /// Count, min, max, sum, histograms and the clamped count combine
    /// exactly; the variance combines with the pairwise formula of Chan,
    /// Golub & LeVeque (1979), equal to recording everything into one summary
    /// up to floating-point rounding.
    ///
    /// The over-threshold count is exact when both summaries use the same
    /// threshold. If they differ, `self`'s threshold is kept and `other`'s
    /// values are counted against it from `other`'s histograms, i.e. only to
    /// HDR resolution (exact for magnitudes below 2048 ns).
    pub fn merge(&mut self, other: &Summary) {
        if other.count == 0 {
            return;
        }
        let over_from_other = if self.threshold == other.threshold {
            other.over_threshold
        } else {
            match self.threshold {
                Some(t) => other.estimate_over(t),
                None => 0,
            }
        };

        if self.count == 0 {
            self.min = other.min;
            self.max = other.max;
            self.shift = other.shift;
            self.w_mean = other.w_mean;
            self.m2 = other.m2;
        } else {
            self.min = self.min.min(other.min);
            self.max = self.max.max(other.max);
            // Chan, Golub & LeVeque (1979):
            //   M2 = M2_a + M2_b + δ²·n_a·n_b / n,  mean = mean_a + δ·n_b / n.
            let na = self.count as f64;
            let nb = other.count as f64;
            let n = na + nb;
            // Difference of the two means, re-expressed against self's
            // shift; the shift difference is exact in i128 before rounding.
            let shift_diff = (i128::from(other.shift) - i128::from(self.shift)) as f64;
            let delta = shift_diff + (other.w_mean - self.w_mean);
            self.w_mean += delta * nb / n;
            self.m2 += other.m2 + delta * delta * na * nb / n;
        }
        self.count += other.count;
        self.sum += other.sum;
        add_histogram(&mut self.nonneg, &other.nonneg);
        add_histogram(&mut self.neg, &other.neg);
        self.clamped += other.clamped;
        self.over_threshold += over_from_other;
    }

    /// Estimate from the histograms how many values exceed `t`; each HDR
    /// bucket is judged by its midpoint.
    fn estimate_over(&self, t: i64) -> u64 {
        let mut over = 0u64;
        for v in self.nonneg.iter_recorded() {
            let mid = self.nonneg.median_equivalent(v.value_iterated_to()) as i64;
            if mid > t {
                over += v.count_at_value();
            }
        }
        for v in self.neg.iter_recorded() {
            let mid = -(self.neg.median_equivalent(v.value_iterated_to()) as i64);
            if mid > t {
                over += v.count_at_value();
            }
        }
        over
    }

    /// Plain-data snapshot: exact moments plus the median, p90, p99, p99.9.
    pub fn snapshot(&self) -> SummarySnapshot {
        let mean = self.mean();
        SummarySnapshot {
            count: self.count,
            min_ns: self.min(),
            max_ns: self.max(),
            mean_ns: mean,
            std_dev_ns: self.std_dev(),
            median_ns: self.quantile(0.5),
            p90_ns: self.quantile(0.9),
            p99_ns: self.quantile(0.99),
            p999_ns: self.quantile(0.999),
            mean_minus_min_ns: mean.zip(self.min()).map(|(m, lo)| m - lo as f64),
            threshold_ns: self.threshold,
            over_threshold: self.over_threshold,
            clamped: self.clamped,
        }
    }

    /// [`Summary::snapshot`] of a summary that holds a sample, `None` of an
    /// empty one (a figure a run may not have measured).
    pub fn snapshot_if_any(&self) -> Option<SummarySnapshot> {
        (self.count > 0).then(|| self.snapshot())
    }

    /// Every non-empty HDR bucket as `(signed representative value, count)`.
    /// The representative is the bucket's value of smallest magnitude (so
    /// round edges such as powers of ten, which HDR buckets align with, put
    /// whole HDR buckets on the correct side), clamped into `[min, max]`.
    fn recorded_values(&self) -> impl Iterator<Item = (i64, u64)> + '_ {
        let (lo, hi) = (self.min, self.max);
        let pos = self.nonneg.iter_recorded().map(move |v| {
            let m = self.nonneg.lowest_equivalent(v.value_iterated_to());
            ((m as i64).clamp(lo, hi), v.count_at_value())
        });
        let neg = self.neg.iter_recorded().map(move |v| {
            let m = self.neg.lowest_equivalent(v.value_iterated_to());
            ((-(m as i64)).clamp(lo, hi), v.count_at_value())
        });
        neg.chain(pos)
    }

    /// Every non-empty bucket of the percentile histograms, at their full
    /// resolution (exact below 2048 ns, 0.1 % wide above), ordered by
    /// value: the whole distribution as recorded, for percentile plots and
    /// CDFs that must not be drawn from a handful of quantiles.
    ///
    /// A non-negative bucket is `[lowest, highest + 1)` of its HDR
    /// equivalence range; a negative one is mirrored
    /// (`[−highest, −lowest + 1)`), so every value lies in its bucket. The
    /// edges are clamped into `[min, max + 1)`, so the first and last
    /// buckets end at the exact extremes. The number of buckets is bounded
    /// by the histograms' fixed size (about 45 000 per sign, in practice a
    /// few thousand at most: one per distinct 0.1 % step the data touched).
    pub fn hdr_buckets(&self) -> Vec<Bucket> {
        if self.count == 0 {
            return Vec::new();
        }
        let (lo, hi) = (i128::from(self.min), i128::from(self.max) + 1);
        let edge = |v: i128| clamp_i64(v.clamp(lo, hi));
        let mut out: Vec<Bucket> = Vec::new();
        for v in self.neg.iter_recorded() {
            let m = v.value_iterated_to();
            let (l, h) = (
                self.neg.lowest_equivalent(m),
                self.neg.highest_equivalent(m),
            );
            out.push(Bucket {
                lower_ns: edge(-i128::from(h)),
                upper_ns: edge(-i128::from(l) + 1),
                count: v.count_at_value(),
            });
        }
        out.reverse();
        for v in self.nonneg.iter_recorded() {
            let m = v.value_iterated_to();
            let (l, h) = (
                self.nonneg.lowest_equivalent(m),
                self.nonneg.highest_equivalent(m),
            );
            out.push(Bucket {
                lower_ns: edge(i128::from(l)),
                upper_ns: edge(i128::from(h) + 1),
                count: v.count_at_value(),
            });
        }
        out
    }

    /// Histogram for display with logarithmically spaced buckets.
    ///
    /// For magnitudes the bucket edges are `round(10^(k / bins_per_decade))`
    /// for `k = 0, 1, …` (starting at 1 ns); edges that round to the same
    /// integer are merged, so no bucket is empty by construction. Positive
    /// values use `[e_k, e_{k+1})`; negative values are mirrored, i.e. a
    /// magnitude bucket `[e_k, e_{k+1})` becomes the value bucket
    /// `[1 − e_{k+1}, 1 − e_k)` (the same integers with the sign flipped);
    /// zeros get `[0, 1)`. Only non-empty buckets are returned, ordered by
    /// lower bound. `bins_per_decade` is clamped into
    /// `1..=`[`MAX_BINS_PER_DECADE`].
    ///
    /// Counts come from the HDR histograms, so a value within HDR resolution
    /// (0.1 %) of an edge may be counted on the other side of it, and values
    /// beyond one hour (see [`Summary::clamped`]) are counted at ±one hour.
    pub fn log_histogram(&self, bins_per_decade: u32) -> Vec<Bucket> {
        if self.count == 0 {
            return Vec::new();
        }
        let b = bins_per_decade.clamp(1, MAX_BINS_PER_DECADE);
        // lower bound -> (upper bound, count)
        let mut acc: BTreeMap<i64, (i64, u64)> = BTreeMap::new();
        for (v, c) in self.recorded_values() {
            let (lower, upper) = if v == 0 {
                (0, 1)
            } else {
                let (elo, ehi) = log_bin(v.unsigned_abs(), b);
                let (elo, ehi) = (clamp_i64(elo as i128), clamp_i64(ehi as i128));
                if v > 0 {
                    (elo, ehi)
                } else {
                    (1 - ehi, 1 - elo)
                }
            };
            acc.entry(lower).or_insert((upper, 0)).1 += c;
        }
        acc.into_iter()
            .map(|(lower_ns, (upper_ns, count))| Bucket {
                lower_ns,
                upper_ns,
                count,
            })
            .collect()
    }

    /// Histogram for display with buckets of equal width.
    ///
    /// Buckets start at the largest multiple of the width not above `min`
    /// (so edges are round numbers) and continue until `max` is covered.
    /// `width_ns` below 1 is treated as 1. If that would need more than
    /// `max_buckets` buckets the width is increased — first to
    /// `⌈(max − min + 1) / max_buckets⌉`, and if the alignment still needs one
    /// bucket too many, to `⌈(max − min + 1) / (max_buckets − 1)⌉` — so at most
    /// `max_buckets` are returned. With `max_buckets == 1` a single bucket
    /// `[min, max + 1)` is returned. Empty buckets between `min` and `max` are
    /// included so that the axis is contiguous. Returns an empty vector for
    /// an empty summary or `max_buckets == 0`. Bounds beyond the `i64` range
    /// saturate.
    ///
    /// Counts come from the HDR histograms: above 2048 ns a width finer than
    /// the HDR resolution (0.1 % of the value) shows the HDR bucket pattern
    /// rather than the data; values beyond one hour (see
    /// [`Summary::clamped`]) are counted at ±one hour.
    pub fn linear_histogram(&self, width_ns: i64, max_buckets: usize) -> Vec<Bucket> {
        if self.count == 0 || max_buckets == 0 {
            return Vec::new();
        }
        // i128 throughout: max − min + 1 can be 2^64.
        let (lo, hi) = (i128::from(self.min), i128::from(self.max));
        let span = hi - lo + 1;
        let mb = max_buckets as i128;
        let aligned_start = |w: i128| lo.div_euclid(w) * w;
        let buckets_needed = |w: i128| (hi - aligned_start(w)) / w + 1;

        let (start, w) = if mb == 1 {
            (lo, span)
        } else {
            let mut w = i128::from(width_ns.max(1));
            if buckets_needed(w) > mb {
                w = w.max(ceil_div(span, mb));
            }
            if buckets_needed(w) > mb {
                // With w >= span/(mb−1), alignment costs at most one bucket.
                w = w.max(ceil_div(span, mb - 1));
            }
            (aligned_start(w), w)
        };
        let nb = ((hi - start) / w + 1) as usize;
        let mut counts = vec![0u64; nb];
        for (v, c) in self.recorded_values() {
            let idx = ((i128::from(v) - start) / w) as usize;
            // v is clamped into [min, max], so idx < nb.
            counts[idx.min(nb - 1)] += c;
        }
        counts
            .into_iter()
            .enumerate()
            .map(|(i, count)| {
                let lower = start + i as i128 * w;
                Bucket {
                    lower_ns: clamp_i64(lower),
                    upper_ns: clamp_i64(lower + w),
                    count,
                }
            })
            .collect()
    }
}

fn ceil_div(a: i128, b: i128) -> i128 {
    // Only used with a, b > 0.
    (a + b - 1) / b
}

fn clamp_i64(v: i128) -> i64 {
    v.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

/// Edge `k` of the logarithmic grid: `round(10^(k/b))`.
fn log_edge(k: u64, b: u32) -> u64 {
    10f64.powf(k as f64 / f64::from(b)).round() as u64
}

/// The log bucket `[e_k, e_{k+1})` containing magnitude `m >= 1`.
fn log_bin(m: u64, b: u32) -> (u64, u64) {
    // round(10^(k/b)) <= m  ⇔  10^(k/b) < m + 0.5  ⇔  k < b·log10(m + 0.5),
    // so the largest such k is about ⌈b·log10(m + 0.5)⌉ − 1. Starting there
    // avoids walking across the many equal edges that small magnitudes have
    // with fine grids; the loops only fix floating-point error.
    let guess = (f64::from(b) * (m as f64 + 0.5).log10()).ceil() - 1.0;
    let mut k = if guess > 0.0 { guess as u64 } else { 0 };
    while k > 0 && log_edge(k, b) > m {
        k -= 1;
    }
    while log_edge(k + 1, b) <= m {
        k += 1;
    }
    (log_edge(k, b), log_edge(k + 1, b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_if_any_is_none_while_empty() {
        let mut s = Summary::new();
        assert!(s.snapshot_if_any().is_none());
        s.record(1500);
        assert_eq!(s.snapshot_if_any(), Some(s.snapshot()));
    }

    #[test]
    fn log_bin_edges() {
        assert_eq!(log_bin(1, 1), (1, 10));
        assert_eq!(log_bin(9, 1), (1, 10));
        assert_eq!(log_bin(10, 1), (10, 100));
        assert_eq!(log_bin(999, 1), (100, 1000));
        assert_eq!(log_bin(1000, 1), (1000, 10_000));
        // 20 bins/decade: edges 1,1,1,1,2,... near 1 are merged into [1,2).
        assert_eq!(log_bin(1, 20), (1, 2));
        // 10 bins/decade: 10^(0.1·k) rounded: 1,1,2,2,3,3,4,5,6,8,10
        assert_eq!(log_bin(7, 10), (6, 8));
        assert_eq!(log_bin(8, 10), (8, 10));
        // every magnitude lies in its bin, and bins are non-empty
        for b in [1, 3, 10, 20, 1000] {
            for m in (1..5000u64).chain([HDR_MAX_NS, HDR_MAX_NS - 1]) {
                let (lo, hi) = log_bin(m, b);
                assert!(lo <= m && m < hi, "m={m} b={b} -> [{lo},{hi})");
            }
        }
    }
}
