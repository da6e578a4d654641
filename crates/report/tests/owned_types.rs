//! The result model's own types against the `measure` and `stats` types
//! they are converted from: each, made from a representative value of the
//! original, serialises to the same JSON as the original itself. While this
//! holds, moving to the report's own types changed no result; when the
//! method's type changes, this test says the two have parted, and the
//! report's type is the one the JSON keeps.

use misura_measure::time::Span;
use misura_measure::{calibration, clockstats, pacer, phc_track, reflector, wire_time};
use misura_report::model::{
    calibration as owned_calibration, clock, clock_fit, pacing, reflect, schedule, summary,
};
use serde::Serialize;

/// The JSON of the original and of the report's type made from it.
fn same_json<M, R>(original: M)
where
    M: Serialize + Clone,
    R: Serialize + From<M>,
{
    let want = serde_json::to_string(&original).unwrap();
    let got = serde_json::to_string(&R::from(original)).unwrap();
    assert_eq!(got, want, "{}", std::any::type_name::<R>());
}

#[test]
fn patterns_and_size_orders() {
    for p in [
        misura_measure::Pattern::Periodic,
        misura_measure::Pattern::Burst { frames: 7 },
        misura_measure::Pattern::Poisson,
    ] {
        same_json::<_, schedule::Pattern>(p);
        // And back, as a result's pattern is the method's input again.
        assert_eq!(misura_measure::Pattern::from(schedule::Pattern::from(p)), p);
    }
    for o in [
        misura_measure::SizeOrder::Interleaved,
        misura_measure::SizeOrder::Blocks,
    ] {
        same_json::<_, schedule::SizeOrder>(o);
    }
}

#[test]
fn link_model() {
    for link in [
        wire_time::LinkModel::new(1_000_000_000, false),
        wire_time::LinkModel::new(25_000_000_000, true),
    ] {
        same_json::<_, schedule::LinkModel>(link);
        assert_eq!(
            wire_time::LinkModel::from(schedule::LinkModel::from(link)),
            link
        );
    }
}

fn points() -> Vec<calibration::SizePoint> {
    [
        (46, 1_180.5),
        (64, 1_190.25),
        (512, 1_410.0),
        (1500, 1_903.75),
    ]
    .into_iter()
    .enumerate()
    .map(|(i, (p, m))| calibration::SizePoint {
        payload_bytes: p,
        frame_bytes: (p + 18).max(64),
        count: 1_000 + i as u64,
        mean_ns: m,
        std_dev_ns: (i > 0).then_some(12.5 * i as f64),
    })
    .collect()
}

#[test]
fn calibration_lines_fits_and_verdicts() {
    let line = calibration::CalibrationLine::internal(points()).unwrap();
    same_json::<_, owned_calibration::LinearFit>(line.fit.clone());
    same_json::<_, owned_calibration::SizePoint>(line.points[1].clone());
    same_json::<_, owned_calibration::CalibrationLine>(line.clone());
    // A profile's line is applied by the method: nothing lost on the way back.
    assert_eq!(
        calibration::CalibrationLine::from(owned_calibration::CalibrationLine::from(line.clone())),
        line
    );
    let sut = calibration::CalibrationLine::sut(points()).unwrap();
    same_json::<_, owned_calibration::CalibrationLine>(sut);
    for v in [
        calibration::SutVerdict::StoreAndForward,
        calibration::SutVerdict::CutThrough,
        calibration::SutVerdict::Inconclusive,
    ] {
        same_json::<_, owned_calibration::SutVerdict>(v);
    }
}

#[test]
fn clock_gaps() {
    same_json::<_, clock::Gap>(clockstats::Gap {
        step_ns: 53_211,
        at_ns: 1_250_000_017,
    });
}

#[test]
fn reflector_counters() {
    // Every field different, so that two swapped would show.
    same_json::<_, reflect::Counters>(reflector::Counters {
        received: 1,
        replied: 2,
        too_short: 3,
        malformed: 4,
        group_source: 5,
        looks_like_reply: 6,
        auth_failed: 7,
        rate_limited: 8,
        table_full: 9,
        foreign_ptp: 10,
        rx_user_clock: 11,
        tlv_integrity_failed: 12,
        follow_ups: 13,
        tx_stamps: 14,
    });
}

#[test]
fn pacer_figures() {
    same_json::<_, pacing::PacerFigures>(pacer::PacerFigures {
        target_gap_ns: 11_760.5,
        units: 1,
        skipped: 2,
        bursts: 3,
        max_burst: 4,
        burst_units: 5,
        wakeups: 6,
        wake_late_p50: Some(Span::from_ns(7)),
        wake_late_p99: Some(Span::from_ns(8)),
        wake_late_max: None,
        margin_ns: 10,
        margin_max_ns: 11,
        spin_ns: 12,
        gap_p50: Some(Span::from_ns(13)),
        gap_p99: Some(Span::from_ns(14)),
        behind_p50: Some(Span::from_ns(-15)),
        behind_p99: Some(Span::from_ns(16)),
        behind_max: Some(Span::from_ns(17)),
    });
    same_json::<_, pacing::PacerFigures>(pacer::PacerFigures::default());
}

fn clock_fit(k: i64) -> phc_track::ClockFit {
    phc_track::ClockFit {
        points: 40 + k as u64,
        rejected_rounds: k as u64,
        span: Span::from_ns(9_000_000_000 + k),
        offset_ns: -37.25 * k as f64,
        drift_ppm: 1.5 + k as f64,
        drift_se_ppm: 0.003,
        residual_ns: 11.75,
        median_half_width: Span::from_ns(250 + k),
    }
}

#[test]
fn phc_fits() {
    same_json::<_, clock_fit::ClockFit>(clock_fit(1));
    same_json::<_, clock_fit::PairFit>(phc_track::PairFit {
        offset_ns: 1_234.5,
        drift_ppm: -0.75,
        u95_ns: 41.0,
        u95_statistical_ns: 9.0,
        sandwich_bound_ns: 32.0,
        tx: clock_fit(1),
        rx: clock_fit(2),
    });
}

#[test]
fn summaries_and_buckets() {
    let mut s = misura_stats::Summary::with_threshold(Some(40_000));
    for v in [
        12_345,
        17_001,
        19_876,
        25_000,
        41_234,
        -3,
        2_000_000_000_000,
    ] {
        s.record(v);
    }
    same_json::<_, summary::SummarySnapshot>(s.snapshot());
    same_json::<_, summary::SummarySnapshot>(misura_stats::Summary::new().snapshot());
    for b in s.hdr_buckets().into_iter().chain(s.log_histogram(10)) {
        same_json::<_, summary::Bucket>(b);
    }
    // Pooling a result's buckets is `stats`'s pooling.
    let (a, b) = (s.hdr_buckets(), s.log_histogram(10));
    let owned: Vec<summary::Bucket> = summary::buckets(a.clone())
        .into_iter()
        .chain(summary::buckets(b.clone()))
        .collect();
    assert_eq!(
        summary::pool_buckets(&owned),
        summary::buckets(misura_stats::pool_buckets(a.iter().chain(&b)))
    );
}
