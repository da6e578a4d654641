//! A latency distribution as stored in a result — a list of histogram
//! buckets `(lower_ns, upper_ns, count)` — turned into what the plots draw:
//! the percentile distribution (value against percentile, HdrHistogram
//! style), the CDF, quantiles with their distribution-free confidence
//! intervals, and a histogram re-binned with a width chosen from the data
//! (Freedman–Diaconis). Pure functions over the buckets; nothing here
//! invents a value between the recorded ones: every point drawn is a bucket
//! edge and the cumulative count up to it.

/// A histogram bucket `(lower_ns, upper_ns, count)`: values in
/// `[lower, upper)`.
pub type Bin = (f64, f64, f64);

/// The buckets sorted by value with empty ones dropped; buckets that
/// overlap (the same HDR bucket seen by several sizes, its edges clamped to
/// each size's extremes) are merged into one, so sets of buckets from
/// several groups of the same run can be pooled exactly.
pub fn normalised(bins: &[Bin]) -> Vec<Bin> {
    let mut b: Vec<Bin> = bins
        .iter()
        .copied()
        .filter(|x| x.2 > 0.0 && x.0.is_finite() && x.1.is_finite() && x.1 >= x.0)
        .collect();
    b.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.total_cmp(&y.1)));
    let mut out: Vec<Bin> = Vec::with_capacity(b.len());
    for x in b {
        match out.last_mut() {
            Some(l) if x.0 < l.1 => {
                l.1 = l.1.max(x.1);
                l.2 += x.2;
            }
            _ => out.push(x),
        }
    }
    out
}

fn total(bins: &[Bin]) -> f64 {
    bins.iter().map(|b| b.2).sum()
}

/// The value reported for a bucket: its largest value (`upper − 1` for the
/// integer nanoseconds the buckets hold), as the summaries' quantiles are,
/// so the curve passes through the percentiles the text quotes.
fn top(b: &Bin) -> f64 {
    (b.1 - 1.0).max(b.0)
}

/// The percentile distribution: `(p, value)` points of the staircase
/// "value at quantile p" (nearest rank) for `p` from 0 up to `1 − 1/n`, the
/// data's resolution: beyond it only the maximum is left, which no finite
/// 1/(1 − p) position can show. Empty for empty input.
pub fn percentile_curve(bins: &[Bin]) -> Vec<(f64, f64)> {
    let b = normalised(bins);
    let n = total(&b);
    if n <= 0.0 {
        return Vec::new();
    }
    let last = 1.0 - 1.0 / n;
    let mut out = Vec::with_capacity(2 * b.len());
    let mut cum = 0.0;
    for x in &b {
        let from = cum / n;
        cum += x.2;
        // The bucket holds the quantiles p in (from, to]: none of them is
        // shown when it starts at the last position (the first bucket also
        // holds p = 0, the minimum).
        if from >= last && !out.is_empty() {
            break;
        }
        let to = (cum / n).min(last);
        out.push((from, top(x)));
        out.push((to, top(x)));
    }
    out
}

/// The cumulative distribution: `(value, share ≤ value)` at every bucket
/// edge, flat across empty stretches and rising across a bucket.
pub fn cdf_points(bins: &[Bin]) -> Vec<(f64, f64)> {
    let b = normalised(bins);
    let n = total(&b);
    if n <= 0.0 {
        return Vec::new();
    }
    let mut out = Vec::with_capacity(2 * b.len() + 1);
    let mut cum = 0.0;
    for x in &b {
        out.push((x.0, cum / n));
        cum += x.2;
        out.push((x.1, cum / n));
    }
    out
}

/// The value of rank `k` (1-based) as its bucket's largest value.
fn at_rank(b: &[Bin], k: f64) -> Option<f64> {
    let mut cum = 0.0;
    for x in b {
        cum += x.2;
        if cum >= k {
            return Some(top(x));
        }
    }
    b.last().map(top)
}

/// Quantile `q` (nearest rank, `⌈q·n⌉`, at least 1), to the buckets'
/// resolution.
pub fn quantile(bins: &[Bin], q: f64) -> Option<f64> {
    let b = normalised(bins);
    let n = total(&b);
    (n > 0.0).then_some(())?;
    at_rank(&b, (q.clamp(0.0, 1.0) * n).ceil().max(1.0))
}

/// A distribution-free 95 % confidence interval for quantile `q`: the
/// order statistics at ranks `n·q ∓ 1.96·√(n·q·(1 − q))` (the normal
/// approximation to the binomial count of values below the quantile;
/// W. J. Conover, *Practical Nonparametric Statistics*, 3rd ed., 1999,
/// §3.2). Assumes the values are independent draws, which consecutive
/// latency samples only approximately are. `None` for fewer than 2 values.
pub fn quantile_ci95(bins: &[Bin], q: f64) -> Option<(f64, f64)> {
    let b = normalised(bins);
    let n = total(&b);
    if n < 2.0 {
        return None;
    }
    let q = q.clamp(0.0, 1.0);
    let half = 1.96 * (n * q * (1.0 - q)).sqrt();
    let lo = (n * q - half).floor().max(1.0);
    let hi = (n * q + half).ceil().min(n);
    Some((at_rank(&b, lo)?, at_rank(&b, hi)?))
}

/// The range shown by a histogram and the bin width chosen for it.
#[derive(Clone, Debug, PartialEq)]
pub struct Binning {
    /// The central range `[lo, hi)` (ns) holding all but the outer 0.5 % at
    /// each end.
    pub lo: f64,
    pub hi: f64,
    /// Whether the bins are equal on a log axis (the central range spans
    /// more than a factor 30) rather than equal in ns.
    pub log: bool,
    /// The bin width: ns, or decades on a log axis.
    pub width: f64,
    /// Values outside `[lo, hi)`.
    pub outside: f64,
    pub total: f64,
}

/// Freedman–Diaconis on the central 99 % (D. Freedman and P. Diaconis, "On
/// the histogram as a density estimator: L2 theory", *Z. Wahrscheinlichkeits-
/// theorie verw. Gebiete* 57, 1981): width `2·IQR·n^(−1/3)` of the values
/// between the 0.5th and 99.5th percentiles, in ns, or in decades when that
/// range spans more than a factor 30, about one and a half decades (then
/// the bins are equal on a log axis).
/// The width is never finer than the buckets it is made from (the data's
/// resolution at the median) and gives at most 400 bins.
pub fn freedman_diaconis(bins: &[Bin]) -> Option<Binning> {
    let b = normalised(bins);
    let n = total(&b);
    if n <= 0.0 {
        return None;
    }
    let rank = |q: f64| (q * n).ceil().max(1.0);
    // Bucket indices holding the 0.5th and 99.5th percentile ranks.
    let index_of = |k: f64| {
        let mut cum = 0.0;
        for (i, x) in b.iter().enumerate() {
            cum += x.2;
            if cum >= k {
                return i;
            }
        }
        b.len() - 1
    };
    let (i0, i1) = (index_of(rank(0.005)), index_of(rank(0.995)));
    let core = &b[i0..=i1];
    let (lo, hi) = (core[0].0, core[core.len() - 1].1);
    let m = total(core);
    let outside = n - m;
    let (q1, q3) = (
        at_rank(core, (0.25 * m).ceil().max(1.0))?,
        at_rank(core, (0.75 * m).ceil().max(1.0))?,
    );
    let median = &core[index_of_in(core, (0.5 * m).ceil().max(1.0))];
    let resolution = (median.1 - median.0).max(1.0);
    let log = lo > 0.0 && hi / lo > 30.0;
    let (span, iqr, floor) = if log {
        (
            (hi / lo).log10(),
            (q3.max(lo) / q1.max(lo)).log10(),
            ((median.0 + resolution) / median.0.max(1.0)).log10(),
        )
    } else {
        (hi - lo, q3 - q1, resolution)
    };
    let fd = 2.0 * iqr / m.cbrt();
    let width = fd.max(floor).max(span / 400.0);
    let width = if width > 0.0 && width.is_finite() {
        width
    } else {
        span.max(1.0)
    };
    Some(Binning {
        lo,
        hi,
        log,
        width,
        outside,
        total: n,
    })
}

fn index_of_in(b: &[Bin], k: f64) -> usize {
    let mut cum = 0.0;
    for (i, x) in b.iter().enumerate() {
        cum += x.2;
        if cum >= k {
            return i;
        }
    }
    b.len().saturating_sub(1)
}

impl Binning {
    /// The bin edges from `lo` to at least `hi`.
    pub fn edges(&self) -> Vec<f64> {
        let mut e = vec![self.lo];
        let mut k = 1.0;
        while *e.last().unwrap_or(&self.hi) < self.hi && e.len() < 1000 {
            e.push(if self.log {
                self.lo * 10f64.powf(k * self.width)
            } else {
                self.lo + k * self.width
            });
            k += 1.0;
        }
        e
    }

    /// `bins` counted into these bins, each bucket by its midpoint; buckets
    /// outside `[lo, hi)` are left out (they are `outside`).
    pub fn rebin(&self, bins: &[Bin]) -> Vec<Bin> {
        let e = self.edges();
        let mut counts = vec![0.0; e.len().saturating_sub(1)];
        for x in normalised(bins) {
            let mid = (x.0 + x.1) / 2.0;
            if mid < self.lo || mid >= self.hi {
                continue;
            }
            let i = e.partition_point(|v| *v <= mid).saturating_sub(1);
            if let Some(c) = counts.get_mut(i) {
                *c += x.2;
            }
        }
        e.windows(2)
            .zip(counts)
            .map(|(w, c)| (w[0], w[1], c))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exact(values: &[i64]) -> Vec<Bin> {
        values
            .iter()
            .map(|&v| (v as f64, v as f64 + 1.0, 1.0))
            .collect()
    }

    #[test]
    fn the_percentile_curve_stops_at_the_data_resolution() {
        // 10 values 1..=10: the curve is the nearest-rank staircase and ends
        // at p = 0.9 (= 1 − 1/n) on the 9th value; the 10th is beyond.
        let c = percentile_curve(&exact(&[3, 1, 2, 4, 5, 6, 7, 8, 9, 10]));
        assert_eq!(c.first(), Some(&(0.0, 1.0)));
        assert_eq!(c.last(), Some(&(0.9, 9.0)));
        assert_eq!(c.len(), 18);
        assert!(c.windows(2).all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1));
        assert!(percentile_curve(&[]).is_empty());
    }

    #[test]
    fn the_cdf_uses_every_bucket() {
        let b = vec![(10.0, 11.0, 1.0), (20.0, 22.0, 2.0), (30.0, 31.0, 1.0)];
        assert_eq!(
            cdf_points(&b),
            vec![
                (10.0, 0.0),
                (11.0, 0.25),
                (20.0, 0.25),
                (22.0, 0.75),
                (30.0, 0.75),
                (31.0, 1.0)
            ]
        );
    }

    #[test]
    fn overlapping_buckets_of_several_groups_pool_exactly() {
        // The same HDR bucket [100, 110) clamped to one group's minimum 104.
        let b = normalised(&[
            (104.0, 110.0, 2.0),
            (100.0, 110.0, 3.0),
            (200.0, 201.0, 1.0),
        ]);
        assert_eq!(b, vec![(100.0, 110.0, 5.0), (200.0, 201.0, 1.0)]);
    }

    #[test]
    fn quantiles_and_their_confidence_intervals() {
        let v: Vec<i64> = (1..=1000).collect();
        let b = exact(&v);
        assert_eq!(quantile(&b, 0.5), Some(500.0));
        assert_eq!(quantile(&b, 0.99), Some(990.0));
        // n = 1000, q = 0.5: ranks 500 ∓ 1.96·√250 = 469 … 531.
        assert_eq!(quantile_ci95(&b, 0.5), Some((469.0, 531.0)));
        assert_eq!(quantile_ci95(&exact(&[5]), 0.5), None);
    }

    #[test]
    fn freedman_diaconis_on_the_central_99_percent() {
        // 10 000 values uniform on 1000..11000 ns, plus 20 far outliers.
        let mut v: Vec<i64> = (0..10_000).map(|i| 1000 + i).collect();
        v.extend(std::iter::repeat_n(5_000_000, 20));
        let b = freedman_diaconis(&exact(&v)).unwrap();
        assert!(!b.log, "{b:?}");
        // Central 99 % of 10 020 values: ranks 51 … 9970, so the 20
        // outliers and the 50 lowest values lie outside.
        assert_eq!(b.outside, 100.0);
        assert_eq!((b.lo, b.hi), (1050.0, 10970.0));
        // IQR 4960 of 9920 values: 2·4960/9920^(1/3) ≈ 462 ns.
        assert!((b.width - 460.0).abs() < 5.0, "{}", b.width);
        let bins = b.rebin(&exact(&v));
        assert_eq!(bins.iter().map(|x| x.2).sum::<f64>(), b.total - b.outside);
        // A spread over three decades is binned on a log axis.
        let w: Vec<i64> = (0..3000)
            .map(|i| (10f64.powf(3.0 + i as f64 / 1000.0)) as i64)
            .collect();
        let b = freedman_diaconis(&exact(&w)).unwrap();
        assert!(b.log && b.width > 0.01 && b.width < 0.5, "{b:?}");
        // All values equal: one bin of the data's resolution.
        let b = freedman_diaconis(&exact(&[7, 7, 7])).unwrap();
        assert_eq!((b.lo, b.hi, b.width, b.outside), (7.0, 8.0, 1.0, 0.0));
    }
}
