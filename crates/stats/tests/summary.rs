//! Summary tests. Expected values are computed independently in the tests
//! (sorting, two-pass formulas, exact integer arithmetic) or written down by
//! hand, never copied from the implementation's output.

use misura_stats::summary::HDR_MAX_NS;
use misura_stats::{Bucket, Summary};
use proptest::prelude::*;

/// Nearest-rank quantile of sorted data: the value at rank max(1, ⌈q·n⌉).
fn nearest_rank(sorted: &[i64], q: f64) -> i64 {
    let n = sorted.len();
    let rank = ((q * n as f64).ceil() as usize).clamp(1, n);
    sorted[rank - 1]
}

/// HDR with 3 significant digits resolves a value to within 1/1024 of it
/// (exactly below 2048): allow |v|/1000, plus 1 for rounding.
fn hdr_tolerance(v: i64) -> i64 {
    (v.unsigned_abs() / 1000) as i64 + 1
}

fn summary_of(values: &[i64]) -> Summary {
    let mut s = Summary::new();
    for &v in values {
        s.record(v);
    }
    s
}

/// Small deterministic generator (xorshift64*, Vigna 2016) so that tests do
/// not need a RNG dependency.
struct XorShift(u64);
impl XorShift {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

#[test]
fn empty_summary() {
    let s = Summary::new();
    assert_eq!(s.count(), 0);
    assert_eq!(s.min(), None);
    assert_eq!(s.max(), None);
    assert_eq!(s.mean(), None);
    assert_eq!(s.std_dev(), None);
    assert_eq!(s.quantile(0.5), None);
    assert!(s.log_histogram(10).is_empty());
    assert!(s.linear_histogram(10, 10).is_empty());
    let snap = s.snapshot();
    assert_eq!(snap.count, 0);
    assert_eq!(snap.median_ns, None);
    assert_eq!(snap.mean_minus_min_ns, None);
}

#[test]
fn single_value() {
    let s = summary_of(&[-42]);
    assert_eq!(s.count(), 1);
    assert_eq!(s.mean(), Some(-42.0));
    assert_eq!(s.std_dev(), None, "sample std dev needs two values");
    assert_eq!(s.quantile(0.0), Some(-42));
    assert_eq!(s.quantile(1.0), Some(-42));
    assert_eq!(s.quantile(f64::NAN), None);
}

#[test]
fn percentiles_of_1_to_1000_are_exact() {
    let values: Vec<i64> = (1..=1000).collect();
    let s = summary_of(&values);
    // Nearest rank by hand: rank ⌈q·1000⌉ of 1..=1000 is the rank itself.
    assert_eq!(s.quantile(0.0), Some(1));
    assert_eq!(s.quantile(0.001), Some(1));
    assert_eq!(s.quantile(0.0011), Some(2));
    assert_eq!(s.quantile(0.25), Some(250));
    assert_eq!(s.quantile(0.5), Some(500));
    assert_eq!(s.quantile(0.9), Some(900));
    assert_eq!(s.quantile(0.99), Some(990));
    assert_eq!(s.quantile(0.999), Some(999));
    assert_eq!(s.quantile(1.0), Some(1000));
    // Out-of-range q is clamped.
    assert_eq!(s.quantile(-3.0), Some(1));
    assert_eq!(s.quantile(7.0), Some(1000));
    let snap = s.snapshot();
    assert_eq!(snap.median_ns, Some(500));
    assert_eq!(snap.p90_ns, Some(900));
    assert_eq!(snap.p99_ns, Some(990));
    assert_eq!(snap.p999_ns, Some(999));
    assert_eq!(snap.mean_ns, Some(500.5));
    assert_eq!(snap.mean_minus_min_ns, Some(499.5));
}

#[test]
fn percentiles_of_large_values_within_hdr_precision() {
    // 1 µs .. 1 ms in 1 µs steps: the true p50 is 500 µs etc.
    let values: Vec<i64> = (1..=1000).map(|k| k * 1000).collect();
    let s = summary_of(&values);
    for (q, truth) in [
        (0.5, 500_000i64),
        (0.9, 900_000),
        (0.99, 990_000),
        (0.999, 999_000),
    ] {
        let got = s.quantile(q).unwrap();
        assert!(
            got >= truth && got - truth <= hdr_tolerance(truth),
            "q={q} got {got} want {truth}"
        );
    }
    assert_eq!(s.quantile(0.0), Some(1000));
    assert_eq!(s.quantile(1.0), Some(1_000_000));
}

#[test]
fn percentiles_with_negative_values() {
    // -500..=499: rank r holds -501 + r. Worked by hand:
    let values: Vec<i64> = (-500..=499).collect();
    let s = summary_of(&values);
    assert_eq!(s.quantile(0.0), Some(-500));
    assert_eq!(s.quantile(0.25), Some(-251));
    assert_eq!(s.quantile(0.5), Some(-1));
    assert_eq!(s.quantile(0.501), Some(0));
    assert_eq!(s.quantile(0.502), Some(1));
    assert_eq!(s.quantile(0.9), Some(399));
    assert_eq!(s.quantile(1.0), Some(499));
    assert_eq!(s.mean(), Some(-0.5));

    // Mixed, large magnitudes, against sorting.
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    let mut values: Vec<i64> = (0..20_000)
        .map(|i| {
            let m = (rng.next() % 5_000_000) as i64;
            if i % 3 == 0 {
                -m
            } else {
                m / 7
            }
        })
        .collect();
    let s = summary_of(&values);
    values.sort_unstable();
    for i in 0..=1000 {
        let q = f64::from(i) / 1000.0;
        let truth = nearest_rank(&values, q);
        let got = s.quantile(q).unwrap();
        assert!(
            got >= truth && got - truth <= hdr_tolerance(truth),
            "q={q} got {got} want {truth}"
        );
    }
}

#[test]
fn mean_and_std_dev_match_two_pass() {
    let mut rng = XorShift(12345);
    let values: Vec<i64> = (0..50_000)
        .map(|_| 40_000 + (rng.next() % 20_000) as i64 - 15_000)
        .collect();
    let s = summary_of(&values);
    let n = values.len() as f64;
    let mean = values.iter().map(|&v| v as f64).sum::<f64>() / n;
    let var = values
        .iter()
        .map(|&v| (v as f64 - mean).powi(2))
        .sum::<f64>()
        / (n - 1.0);
    assert_eq!(s.count(), values.len() as u64);
    assert_eq!(s.min(), values.iter().copied().min());
    assert_eq!(s.max(), values.iter().copied().max());
    assert!((s.mean().unwrap() - mean).abs() <= 1e-9 * mean.abs());
    assert!((s.std_dev().unwrap() - var.sqrt()).abs() <= 1e-9 * var.sqrt());
    assert!((s.variance().unwrap() - var).abs() <= 1e-9 * var);
}

#[test]
fn std_dev_with_huge_offset_and_tiny_spread() {
    // The case that defeats the naive Σx² − (Σx)²/n formula: ~10^15 ns (11
    // days) with a spread of a few ns. Exact answer by integer arithmetic:
    // var = (n·Σd² − (Σd)²) / (n(n−1)) with d = x − offset.
    let offset = 1_000_000_000_000_000i64;
    let ds: Vec<i64> = (0..10_000).map(|i| (i * 7) % 10).collect();
    let s = summary_of(&ds.iter().map(|d| offset + d).collect::<Vec<_>>());
    let n = ds.len() as i128;
    let sd: i128 = ds.iter().map(|&d| i128::from(d)).sum();
    let sdd: i128 = ds.iter().map(|&d| i128::from(d) * i128::from(d)).sum();
    let var = (n * sdd - sd * sd) as f64 / (n * (n - 1)) as f64;
    let got = s.std_dev().unwrap();
    assert!(
        (got - var.sqrt()).abs() < 1e-6 * var.sqrt(),
        "got {got}, want {}",
        var.sqrt()
    );
    // Mean is exact from the i128 sum: offset + 4.5.
    assert_eq!(s.mean().unwrap(), offset as f64 + 4.5);
}

#[test]
fn threshold_counts_strictly_greater() {
    let mut s = Summary::with_threshold(Some(30));
    for v in 1..=100 {
        s.record(v);
    }
    assert_eq!(s.threshold(), Some(30));
    assert_eq!(s.over_threshold(), 70);
    assert_eq!(s.snapshot().over_threshold, 70);
    assert_eq!(s.snapshot().threshold_ns, Some(30));

    let mut neg = Summary::with_threshold(Some(-10));
    for v in -20..=0 {
        neg.record(v);
    }
    assert_eq!(neg.over_threshold(), 10, "-9..=0");

    let plain = summary_of(&[1, 2, 3]);
    assert_eq!(plain.over_threshold(), 0);
    assert_eq!(plain.threshold(), None);
}

#[test]
fn out_of_range_values_are_clamped_but_moments_exact() {
    let hour = HDR_MAX_NS as i64;
    let values = [
        5,
        -7,
        hour,
        hour + 1,
        -(hour + 1),
        i64::MAX,
        i64::MIN,
        2 * hour,
    ];
    let s = summary_of(&values);
    assert_eq!(s.clamped(), 5, "hour+1, -(hour+1), MAX, MIN, 2·hour");
    assert_eq!(s.snapshot().clamped, 5);
    assert_eq!(s.min(), Some(i64::MIN));
    assert_eq!(s.max(), Some(i64::MAX));
    let exact_sum: i128 = values.iter().map(|&v| i128::from(v)).sum();
    assert_eq!(s.mean().unwrap(), exact_sum as f64 / values.len() as f64);
    let mut prev = i64::MIN;
    for i in 0..=100 {
        let q = s.quantile(f64::from(i) / 100.0).unwrap();
        assert!(q >= prev);
        prev = q;
    }
    assert_eq!(s.quantile(0.0), Some(i64::MIN));
    assert_eq!(s.quantile(1.0), Some(i64::MAX));
    // The in-range small values are still exact: sorted, rank 3 (q = 3/8) is -7,
    // rank 4 is 5.
    assert_eq!(s.quantile(3.0 / 8.0), Some(-7));
    assert_eq!(s.quantile(4.0 / 8.0), Some(5));
}

#[test]
fn merge_equals_recording_everything() {
    let mut rng = XorShift(777);
    let parts: Vec<Vec<i64>> = vec![
        (0..10_000).map(|_| (rng.next() % 100_000) as i64).collect(),
        (0..3_000)
            .map(|_| -((rng.next() % 2_000_000) as i64))
            .collect(),
        (0..5_000)
            .map(|_| (rng.next() % 10_000_000_000) as i64 - 1_000)
            .collect(),
        vec![i64::MAX, HDR_MAX_NS as i64 * 3],
        vec![],
    ];
    let threshold = Some(50_000);
    let mut all = Summary::with_threshold(threshold);
    let mut merged = Summary::with_threshold(threshold);
    for part in &parts {
        let mut p = Summary::with_threshold(threshold);
        for &v in part {
            p.record(v);
            all.record(v);
        }
        merged.merge(&p);
    }
    assert_eq!(merged.count(), all.count());
    assert_eq!(merged.min(), all.min());
    assert_eq!(merged.max(), all.max());
    assert_eq!(merged.mean(), all.mean());
    let (a, b) = (merged.std_dev().unwrap(), all.std_dev().unwrap());
    assert!((a - b).abs() <= 1e-9 * b, "{a} vs {b}");
    assert_eq!(merged.over_threshold(), all.over_threshold());
    assert_eq!(merged.clamped(), all.clamped());
    for i in 0..=1000 {
        let q = f64::from(i) / 1000.0;
        assert_eq!(merged.quantile(q), all.quantile(q), "q={q}");
    }
    assert_eq!(merged.log_histogram(10), all.log_histogram(10));
    assert_eq!(
        merged.linear_histogram(1000, 500),
        all.linear_histogram(1000, 500)
    );
    let (ms, als) = (merged.snapshot(), all.snapshot());
    assert_eq!(ms.count, als.count);
    assert_eq!(ms.median_ns, als.median_ns);
    assert_eq!(ms.p999_ns, als.p999_ns);

    // Merging into an empty summary copies; merging an empty one is a no-op.
    let mut empty = Summary::with_threshold(threshold);
    empty.merge(&all);
    assert_eq!(empty.snapshot(), all.snapshot());
    let before = all.snapshot();
    all.merge(&Summary::with_threshold(threshold));
    assert_eq!(all.snapshot(), before);
}

#[test]
fn merge_with_different_threshold_recounts_other_side() {
    // Values below 2048 ns are exact in HDR, so the estimate is exact here.
    let mut a = Summary::with_threshold(Some(100));
    let mut b = Summary::with_threshold(Some(10));
    for v in 0..200 {
        a.record(v);
        b.record(v);
    }
    a.merge(&b);
    assert_eq!(a.threshold(), Some(100));
    assert_eq!(a.over_threshold(), 2 * 99);
}

#[test]
fn log_histogram_by_hand() {
    let s = summary_of(&[0, 0, 1, 5, 9, 10, 99, 100, -1, -10]);
    let b = |lower_ns, upper_ns, count| Bucket {
        lower_ns,
        upper_ns,
        count,
    };
    assert_eq!(
        s.log_histogram(1),
        vec![
            b(-99, -9, 1),   // -10: magnitude in [10, 100)
            b(-9, 0, 1),     // -1: magnitude in [1, 10)
            b(0, 1, 2),      // zeros
            b(1, 10, 3),     // 1, 5, 9
            b(10, 100, 2),   // 10, 99
            b(100, 1000, 1), // 100
        ]
    );
    // 10 bins per decade: edges round(10^(k/10)) = 1,1,2,2,3,3,4,5,6,8,10,13,16,...
    let s = summary_of(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 13]);
    assert_eq!(
        s.log_histogram(10),
        vec![
            b(1, 2, 1),
            b(2, 3, 1),
            b(3, 4, 1),
            b(4, 5, 1),
            b(5, 6, 1),
            b(6, 8, 2),
            b(8, 10, 2),
            b(10, 13, 2),
            b(13, 16, 1),
        ]
    );
}

#[test]
fn log_histogram_covers_everything_in_order() {
    let mut rng = XorShift(4242);
    let values: Vec<i64> = (0..20_000)
        .map(|_| {
            let m = 1i64 << (rng.next() % 40);
            let v = m + (rng.next() % m as u64) as i64;
            if rng.next() % 4 == 0 {
                -v
            } else {
                v
            }
        })
        .chain([0, 0, 0])
        .collect();
    let s = summary_of(&values);
    for bpd in [1, 3, 10, 50] {
        let h = s.log_histogram(bpd);
        assert_eq!(h.iter().map(|b| b.count).sum::<u64>(), s.count());
        for w in h.windows(2) {
            assert!(w[0].upper_ns <= w[1].lower_ns, "{w:?}");
        }
        for b in &h {
            assert!(b.lower_ns < b.upper_ns && b.count > 0);
        }
        // Values below 2048 ns are exact in HDR: those buckets must match a
        // direct count.
        for b in h
            .iter()
            .filter(|b| b.upper_ns <= 2048 && b.lower_ns >= -2047)
        {
            let direct = values
                .iter()
                .filter(|&&v| v >= b.lower_ns && v < b.upper_ns)
                .count();
            assert_eq!(b.count, direct as u64, "{b:?}");
        }
    }
}

#[test]
fn linear_histogram_by_hand() {
    let b = |lower_ns, upper_ns, count| Bucket {
        lower_ns,
        upper_ns,
        count,
    };
    let s = summary_of(&(0..100).collect::<Vec<_>>());
    let h = s.linear_histogram(10, 100);
    assert_eq!(h.len(), 10);
    assert!(h
        .iter()
        .enumerate()
        .all(|(i, x)| *x == b(10 * i as i64, 10 * i as i64 + 10, 10)));
    // Width 1 would need 100 buckets; 20 allowed → width ⌈100/20⌉ = 5.
    let h = s.linear_histogram(1, 20);
    assert_eq!(h.len(), 20);
    assert!(h
        .iter()
        .enumerate()
        .all(|(i, x)| *x == b(5 * i as i64, 5 * i as i64 + 5, 5)));
    // Single bucket.
    assert_eq!(s.linear_histogram(1, 1), vec![b(0, 100, 100)]);
    assert!(s.linear_histogram(1, 0).is_empty());

    // Negative values: edges aligned to multiples of the width (floor).
    let s = summary_of(&(-5..=4).collect::<Vec<_>>());
    assert_eq!(
        s.linear_histogram(3, 100),
        vec![b(-6, -3, 2), b(-3, 0, 3), b(0, 3, 3), b(3, 6, 2)]
    );
    // Gaps are kept as empty buckets.
    let s = summary_of(&[0, 35]);
    assert_eq!(
        s.linear_histogram(10, 100),
        vec![b(0, 10, 1), b(10, 20, 0), b(20, 30, 0), b(30, 40, 1)]
    );
}

#[test]
fn linear_histogram_respects_max_buckets() {
    let mut rng = XorShift(99);
    for case in 0..200 {
        let n = 1 + (rng.next() % 50) as usize;
        let values: Vec<i64> = (0..n)
            .map(|_| (rng.next() % 1_000_000) as i64 - 300_000)
            .collect();
        let s = summary_of(&values);
        let width = 1 + (rng.next() % 5000) as i64;
        let max_buckets = 1 + (rng.next() % 64) as usize;
        let h = s.linear_histogram(width, max_buckets);
        assert!(
            !h.is_empty() && h.len() <= max_buckets,
            "case {case}: {} > {max_buckets}",
            h.len()
        );
        assert_eq!(h.iter().map(|b| b.count).sum::<u64>(), n as u64);
        assert!(h[0].lower_ns <= s.min().unwrap());
        assert!(h.last().unwrap().upper_ns > s.max().unwrap());
        let w = h[0].upper_ns - h[0].lower_ns;
        assert!(w >= width);
        assert!(h.iter().all(|b| b.upper_ns - b.lower_ns == w));
    }
    // Extreme range does not overflow.
    let s = summary_of(&[i64::MIN, 0, i64::MAX]);
    let h = s.linear_histogram(1, 4);
    assert!(h.len() <= 4);
    assert_eq!(h.iter().map(|b| b.count).sum::<u64>(), 3);
}

#[test]
fn snapshot_serialises() {
    let s = summary_of(&[1, 2, 3]);
    let snap = s.snapshot();
    let b = Bucket {
        lower_ns: 1,
        upper_ns: 2,
        count: 3,
    };
    // The report crate serialises these; serde_json is not a dependency
    // here, so check the derives at compile time.
    assert_eq!(snap.clone(), snap);
    assert_eq!(b.clone(), b);
    fn is_serde<T: serde::Serialize + for<'de> serde::Deserialize<'de>>() {}
    is_serde::<misura_stats::SummarySnapshot>();
    is_serde::<Bucket>();
}

/// Ten million values: the histogram footprint is fixed at construction and
/// the counts stay exact.
#[test]
fn ten_million_values_bounded_memory() {
    const N: u64 = 10_000_000;
    let mut s = Summary::with_threshold(Some(900));
    let slots = s.histogram_slots();
    // 2 histograms × 1 ns..1 h at 3 significant digits: ~30 k counters each.
    assert!(slots > 0 && slots < 100_000, "{slots}");
    let mut rng = XorShift(1);
    let mut extreme = 0u64;
    let mut last_count = 0;
    for i in 0..N {
        // Mostly 0..1000 cycling (known percentiles), every 1000th value an
        // arbitrary i64 (exercises both histograms and clamping).
        let v = if i % 1000 == 999 {
            extreme += 1;
            rng.next() as i64
        } else {
            (i % 1000) as i64
        };
        s.record(v);
        if i % 1_000_000 == 999_999 {
            assert_eq!(
                s.histogram_slots(),
                slots,
                "histogram grew after {} values",
                i + 1
            );
            let snap = s.snapshot();
            assert_eq!(snap.count, i + 1);
            assert!(snap.count > last_count);
            last_count = snap.count;
        }
    }
    assert_eq!(s.count(), N);
    assert_eq!(s.histogram_slots(), slots);
    // 999 of each 1000 values are 0..=998 (value 999 replaced by an extreme);
    // 9 990 000 small values, plus 10 000 extremes of which nearly all have
    // magnitude > one hour.
    assert!(s.clamped() <= extreme && s.clamped() > extreme * 9 / 10);
    // The extremes are ~half negative (5 000), so rank ⌈0.5·10^7⌉ lands among
    // the small values. Count them by hand for the exact answer.
    let small_total = N - extreme;
    assert_eq!(small_total, 9_990_000);
    let snap = s.snapshot();
    let p50 = snap.median_ns.unwrap();
    assert!((0..=998).contains(&p50));
    assert_eq!(snap.over_threshold, {
        // small values 901..=998 (98 per 1000-cycle) plus extremes > 900.
        let mut rng = XorShift(1);
        let ext_over = (0..extreme).filter(|_| (rng.next() as i64) > 900).count() as u64;
        98 * (N / 1000) + ext_over
    });
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn quantile_monotone_bounded_and_exact_moments(
        values in prop::collection::vec(
            prop_oneof![
                -3000i64..3000,
                -5_000_000_000i64..5_000_000_000,
                any::<i64>(),
            ],
            1..400,
        ),
        qs in prop::collection::vec(0.0f64..=1.0, 1..20),
    ) {
        let s = summary_of(&values);
        let mut sorted = values.clone();
        sorted.sort_unstable();
        prop_assert_eq!(s.count(), values.len() as u64);
        prop_assert_eq!(s.min(), Some(sorted[0]));
        prop_assert_eq!(s.max(), Some(*sorted.last().unwrap()));
        let exact_sum: i128 = values.iter().map(|&v| i128::from(v)).sum();
        prop_assert_eq!(s.mean(), Some(exact_sum as f64 / values.len() as f64));

        let mut qs = qs;
        qs.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let mut prev = i64::MIN;
        for &q in &qs {
            let got = s.quantile(q).unwrap();
            prop_assert!(got >= prev, "not monotone at q={}", q);
            prop_assert!(got >= sorted[0] && got <= *sorted.last().unwrap());
            prev = got;
            // Within HDR precision of the true nearest-rank value when every
            // value is inside the HDR range (no clamping).
            if s.clamped() == 0 {
                let truth = nearest_rank(&sorted, q);
                prop_assert!(got >= truth && got - truth <= hdr_tolerance(truth),
                    "q={} got {} want {}", q, got, truth);
            }
        }
    }
}

#[test]
fn hdr_buckets_hold_every_value_at_full_resolution() {
    let b = |lower_ns, upper_ns, count| Bucket {
        lower_ns,
        upper_ns,
        count,
    };
    // Below 2048 ns every value is its own bucket; negatives are mirrored
    // and come first.
    let s = summary_of(&[-10, -1, 0, 0, 7, 7, 7, 2000]);
    assert_eq!(
        s.hdr_buckets(),
        vec![
            b(-10, -9, 1),
            b(-1, 0, 1),
            b(0, 1, 2),
            b(7, 8, 3),
            b(2000, 2001, 1)
        ]
    );
    // Above, buckets are at most 0.1 % wide, hold their values, are ordered
    // and end at the exact extremes.
    let values: Vec<i64> = (0..5000).map(|i| 10_000 + i * 37 + (i * i) % 101).collect();
    let s = summary_of(&values);
    let h = s.hdr_buckets();
    assert_eq!(h.iter().map(|x| x.count).sum::<u64>(), values.len() as u64);
    assert_eq!(h[0].lower_ns, 10_000);
    assert_eq!(h.last().unwrap().upper_ns, s.max().unwrap() + 1);
    for w in h.windows(2) {
        assert!(w[0].upper_ns <= w[1].lower_ns, "{w:?}");
    }
    for x in &h {
        assert!(x.upper_ns - x.lower_ns <= x.lower_ns / 1000 + 16, "{x:?}");
    }
    for v in &values {
        assert!(h.iter().any(|x| x.lower_ns <= *v && *v < x.upper_ns), "{v}");
    }
    assert!(Summary::new().hdr_buckets().is_empty());
}

#[test]
fn pooled_hdr_buckets_equal_one_summary_of_all_values() {
    let a_values: Vec<i64> = (0..3000).map(|i| 9_000 + (i * 7919) % 5000).collect();
    let b_values: Vec<i64> = (0..2000).map(|i| 11_000 + (i * 104_729) % 9000).collect();
    let (a, b) = (summary_of(&a_values), summary_of(&b_values));
    let all: Vec<i64> = a_values.iter().chain(&b_values).copied().collect();
    let pooled = misura_stats::pool_buckets(a.hdr_buckets().iter().chain(&b.hdr_buckets()));
    assert_eq!(pooled, summary_of(&all).hdr_buckets());
}
