//! Tests of `consistency`: real-shaped fits from the lab, apart and
//! overlapping, one estimate, the causes, and figures that are not finite.

use super::*;
use misura_measure::{sut_verdict, SizePoint};
use misura_report::SutVerdict;

const PAYLOADS: [usize; 7] = [46, 64, 128, 256, 512, 1024, 1500];

fn points(means: [f64; 7]) -> Vec<SizePoint> {
    PAYLOADS
        .iter()
        .zip(means)
        .map(|(&p, m)| SizePoint {
            payload_bytes: p,
            frame_bytes: (p + 18).max(64),
            count: 1428,
            mean_ns: m,
            std_dev_ns: Some(500.0),
        })
        .collect()
}

/// A SUT line over the seven frame lengths of a default run, through
/// these per-size mean SUT latencies (ns).
fn measured(means: [f64; 7]) -> CalibrationLine {
    misura_measure::CalibrationLine::sut(points(means))
        .unwrap()
        .into()
}

/// The means `alpha + beta·L` with the scatter `jitter` (ns).
fn line(alpha: f64, beta: f64, jitter: [f64; 7]) -> CalibrationLine {
    let mut means = [0.0; 7];
    for (i, (&p, j)) in PAYLOADS.iter().zip(jitter).enumerate() {
        means[i] = alpha + beta * (p + 18) as f64 + j;
    }
    measured(means)
}

/// A calibration's Amil(P) lines through these per-size mean internal
/// latencies (ns), user and kernel.
fn calibration(user: [f64; 7], kernel: [f64; 7]) -> CalibrationUse {
    CalibrationUse {
        profile: "cal.json".into(),
        created_at: "2026-11-28T13:58:18Z".into(),
        user: misura_measure::CalibrationLine::internal(points(user))
            .unwrap()
            .into(),
        kernel: Some(
            misura_measure::CalibrationLine::internal(points(kernel))
                .unwrap()
                .into(),
        ),
        hardware: None,
        mismatches: vec![],
    }
}

/// The calibration on the lab's cable behind the bridge runs below
/// (pinned to CPU 1): user α 1.133 ± 0.016 µs, kernel 0.268 ± 0.011.
fn quiet_calibration() -> CalibrationUse {
    calibration(
        [1115.6, 1080.3, 1032.1, 915.2, 730.8, 334.4, -38.5],
        [222.1, 215.4, 169.2, 77.5, -141.6, -553.3, -925.2],
    )
}

fn sut(user: CalibrationLine, kernel: Option<CalibrationLine>) -> SutResult {
    let v = |l: &CalibrationLine| sut_verdict(&l.fit.clone().into(), 0.8).into();
    SutResult {
        byte_time_ns: 0.8,
        user_verdict: Some(v(&user)),
        kernel_verdict: kernel.as_ref().map(v),
        user: Some(user),
        kernel,
        hardware: None,
        hardware_verdict: None,
        note: None,
        consistency: None,
    }
}

fn pinned(busy: f64) -> Conditions {
    Conditions {
        pinned: true,
        host_busy: Some(busy),
    }
}

fn veth_evidence() -> Evidence {
    Evidence {
        rx_stamped: 10_000,
        rx_inside_send: 10_000,
        mul_median: Some(Span::from_ns(1432)),
        kernel_median: Some(Span::from_ns(1482)),
        run: pinned(1.0),
        calibration: Some(pinned(1.0)),
        profile_mismatches: vec![],
    }
}

/// The bridge on the veth lab (pinned to CPU 1, both CPUs busy): its
/// per-size means gave user α' 0.365 ± 0.005 µs and kernel α' 1.567 ±
/// 0.034 µs. Apart, also with the calibration's share: flagged, the
/// verdict on the kernel stamps, the frames received inside send() named.
#[test]
fn the_veth_bridges_two_estimates_are_apart_and_the_kernel_one_is_used() {
    let user = measured([364.0, 365.0, 363.1, 353.9, 354.3, 347.6, 328.1]);
    let kernel = measured([1558.2, 1571.2, 1587.3, 1515.9, 1551.6, 1549.6, 1498.2]);
    assert!((user.fit.a - 365.4).abs() < 0.1 && (kernel.fit.a - 1567.1).abs() < 0.1);
    let (ka, kci) = (kernel.fit.a, kernel.fit.a_ci95);
    let cal = quiet_calibration();
    let c = check(&sut(user, Some(kernel)), Some(&cal), &veth_evidence()).unwrap();
    assert_eq!(c.agreement, SutAgreement::Inconsistent);
    assert_eq!(c.rests_on, SutSource::Kernel);
    assert_eq!(c.verdict, SutVerdict::CutThrough);
    // The headline's interval: the fit's and the calibration's.
    let l = &c.latency;
    assert_eq!(l.value, ka);
    assert!(
        l.calibration_ci95 > 5.0 && l.calibration_ci95 < 30.0,
        "{l:?}"
    );
    assert!(
        (l.ci95 - kci.hypot(l.calibration_ci95)).abs() < 1e-9,
        "{l:?}"
    );
    let alpha: Vec<_> = c
        .disagreements
        .iter()
        .filter(|d| d.quantity == "alpha_ns")
        .collect();
    assert_eq!(alpha.len(), 1);
    let d = alpha[0];
    assert_eq!(
        (d.first.source, d.second.source),
        (SutSource::Kernel, SutSource::User)
    );
    // The gap is what separates the intervals' nearest ends.
    let want = (d.first.value - d.second.value).abs() - d.first.ci95 - d.second.ci95;
    assert!((d.gap - want).abs() < 1e-9 && d.gap > 1000.0, "{d:?}");
    let codes: Vec<_> = c.causes.iter().map(|c| c.code.as_str()).collect();
    assert_eq!(codes, ["received-inside-send", "mul-below-kernel"]);
    assert!(c.causes[0].text.starts_with("10000 of 10000 frames"));
    assert!(c.causes[1].text.contains("(1.432 µs)"), "{:?}", c.causes[1]);
    let text = describe(&c);
    let fig = format!(
        "{:.3} ± {:.3} µs by the kernel stamps",
        ka / 1e3,
        l.ci95 / 1e3
    );
    assert!(text.contains(&fig), "{fig} not in {text}");
    assert!(text.contains("by the user windows"), "{text}");
    assert!(
        text.contains("the verdict rests on the kernel stamps (cut-through)"),
        "{text}"
    );
}

/// A calibration whose user means carry a descheduling tail (9.8 µs at
/// 256 bytes, a run with both CPUs busy): the user α' of the bridge,
/// −1.766 ± 0.203 µs by its own fit, is uncertain by microseconds with
/// the calibration's share, and no longer contradicts the kernel's
/// 1.468 ± 0.016 µs. Without that share it would.
#[test]
fn the_calibrations_uncertainty_counts() {
    let user = measured([-1750.0, -1817.2, -1349.0, -1571.9, -1117.3, -685.0, -112.5]);
    let kernel = measured([1485.6, 1454.7, 1463.0, 1463.6, 1483.1, 1473.2, 1473.5]);
    let cal = calibration(
        [1141.3, 1068.0, 1104.7, 9823.5, 3071.4, 409.2, -59.7],
        [204.8, 190.3, 137.0, 33.2, -157.9, -578.5, -954.7],
    );
    let s = sut(user, Some(kernel));
    let apart = check(&s, None, &veth_evidence()).unwrap();
    assert_eq!(apart.agreement, SutAgreement::Inconsistent);
    let c = check(&s, Some(&cal), &veth_evidence()).unwrap();
    assert_eq!(c.agreement, SutAgreement::Consistent, "{c:?}");
    assert!(c.causes.is_empty());
    assert_eq!(c.verdict, SutVerdict::CutThrough);
}

/// The calibration's interval at x: at x = 0 it is the fit's own α
/// interval, and it is narrowest at the points' mean.
#[test]
fn a_lines_interval_at_a_point() {
    let cal = quiet_calibration();
    let u = &cal.user;
    assert!((ci95_at(u, 0.0) - u.fit.a_ci95).abs() < 1e-9 * u.fit.a_ci95);
    let mean = PAYLOADS.iter().sum::<usize>() as f64 / 7.0;
    assert!(ci95_at(u, mean) < ci95_at(u, -18.0));
    assert!(ci95_at(u, -18.0) > u.fit.a_ci95);
}

/// A quiet real link: user α' 2.10 ± 0.40 µs, kernel α' 1.90 ± 0.05 µs.
/// The intervals overlap: consistent, nothing flagged, still on the
/// kernel stamps.
#[test]
fn overlapping_intervals_are_consistent() {
    let user = line(
        2100.0,
        0.8,
        [150.0, -200.0, 100.0, -120.0, 180.0, -60.0, -50.0],
    );
    let kernel = line(1900.0, 0.8, [10.0, -12.0, 8.0, -6.0, 9.0, -5.0, -4.0]);
    assert!(user.fit.a_ci95 > 100.0 && kernel.fit.a_ci95 < 100.0);
    let cal = quiet_calibration();
    let c = check(&sut(user, Some(kernel)), Some(&cal), &veth_evidence()).unwrap();
    assert_eq!(c.agreement, SutAgreement::Consistent);
    assert_eq!(c.rests_on, SutSource::Kernel);
    assert_eq!(c.verdict, SutVerdict::StoreAndForward);
    assert!(c.disagreements.is_empty());
    assert!(c.causes.is_empty(), "no causes without a disagreement");
}

/// Only the user windows (no kernel stamps): one estimate, nothing to
/// compare, the verdict on the user windows.
#[test]
fn one_estimate_is_single_and_the_verdict_rests_on_it() {
    let user = line(900.0, 0.0, [5.0, -5.0, 3.0, -3.0, 2.0, -1.0, -1.0]);
    let c = check(&sut(user, None), None, &Evidence::default()).unwrap();
    assert_eq!(c.agreement, SutAgreement::Single);
    assert_eq!(c.rests_on, SutSource::User);
    assert_eq!(c.verdict, SutVerdict::CutThrough);
    assert_eq!(c.latency.calibration_ci95, 0.0);
}

/// Apart, on a run that was not pinned, calibrated pinned on a quieter
/// host, with a profile from another set-up and frames that did not
/// cross inside send(): those are the causes named; and no fit at all
/// gives no comparison.
#[test]
fn causes_follow_the_evidence() {
    let user = line(300.0, 0.0, [1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 0.0]);
    let kernel = line(1500.0, 0.0, [1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 0.0]);
    let ev = Evidence {
        rx_stamped: 100,
        rx_inside_send: 0,
        mul_median: Some(Span::from_ns(2000)),
        kernel_median: Some(Span::from_ns(1800)),
        run: Conditions {
            pinned: false,
            host_busy: Some(0.95),
        },
        calibration: Some(pinned(0.51)),
        profile_mismatches: vec!["profile made with kernel 6.1, this run uses 6.18".into()],
    };
    let c = check(&sut(user, Some(kernel)), None, &ev).unwrap();
    let codes: Vec<_> = c.causes.iter().map(|c| c.code.as_str()).collect();
    assert_eq!(
        codes,
        [
            "loop-not-pinned",
            "calibration-conditions",
            "profile-mismatch"
        ]
    );
    assert!(
        c.causes[1].text.contains(
            "the calibration ran pinned with the host 51 % busy, this run not pinned with \
             the host 95 % busy"
        ),
        "{:?}",
        c.causes[1]
    );
    let mut none = sut(line(1.0, 0.0, [0.0; 7]), None);
    none.user = None;
    none.user_verdict = None;
    assert!(check(&none, None, &ev).is_none());
}

#[test]
fn a_figure_that_is_not_finite_is_never_a_disagreement() {
    let e = |value: f64, ci95: f64| SutEstimate {
        source: SutSource::User,
        value,
        ci95,
        calibration_ci95: 0.0,
    };
    assert_eq!(gap(&e(1.0, f64::NAN), &e(100.0, 1.0)), None);
    assert_eq!(gap(&e(1.0, f64::INFINITY), &e(100.0, 1.0)), None);
    assert_eq!(
        gap(&e(1.0, 1.0), &e(3.0, 1.0)),
        None,
        "touching ends overlap"
    );
    assert_eq!(gap(&e(1.0, 1.0), &e(5.0, 1.0)), Some(2.0));
}
