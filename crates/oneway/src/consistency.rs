//! Do the SUT's estimates agree? A run with a calibration fits the SUT's
//! latency `Msl = α' + β'·L` up to three times: from the user windows, the
//! kernel stamps and the NIC stamps. They estimate one device, so their 95 %
//! intervals should overlap; where they do not, the result says so, with
//! both figures and what this run shows about why, and the headline verdict
//! rests on one estimate, named: the timestamps nearest the wire the run has
//! (hardware, then kernel, then the user windows). Pure: the fits and a few
//! of the run's counts in, a [`SutConsistency`] out.

use misura_measure::CalibrationLine;
use misura_report::{
    CalibrationUse, SutAgreement, SutCause, SutConsistency, SutDisagreement, SutEstimate,
    SutResult, SutSource,
};

/// What the run measured besides the fits that tells why estimates differ.
#[derive(Clone, Debug, Default)]
pub struct Evidence {
    /// Received frames with a kernel RX stamp.
    pub rx_stamped: u64,
    /// Of those, frames whose kernel RX stamp precedes the return of their
    /// `send()` (TX2): the frame crossed the SUT inside `send()`.
    pub rx_inside_send: u64,
    /// Medians over all frames of `Mul` and of the kernel latency.
    pub mul_median_ns: Option<i64>,
    pub kernel_median_ns: Option<i64>,
    /// How this run's loop ran, and the calibration's (from its profile).
    pub run: Conditions,
    pub calibration: Option<Conditions>,
    /// Ways the calibration profile's set-up differs from this run's.
    pub profile_mismatches: Vec<String>,
}

/// The conditions a run measured in that move the user windows.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct Conditions {
    /// The loop ran pinned to a CPU (`--cpu`).
    pub pinned: bool,
    /// The host's mean busy share over the run (0 to 1), when recorded.
    pub host_busy: Option<f64>,
}

/// Busy shares further apart than this are other conditions.
const BUSY_APART: f64 = 0.25;

/// One fitted estimate and the calibration line it was taken against.
struct Fitted<'a> {
    source: SutSource,
    line: &'a CalibrationLine,
    calibration: Option<&'a CalibrationLine>,
}

impl Fitted<'_> {
    /// α' (the SUT latency at L = 0) with its 95 % interval: the fit's own,
    /// and the calibration line's at the payload that L = 0 stands for,
    /// added in quadrature (two runs, independent errors).
    fn alpha(&self) -> SutEstimate {
        // L = P + header: the header is what the largest (unpadded) frame
        // adds to its payload.
        let header = self
            .line
            .points
            .iter()
            .max_by_key(|p| p.payload_bytes)
            .map_or(18.0, |p| p.frame_bytes as f64 - p.payload_bytes as f64);
        let cal = self.calibration.map_or(0.0, |c| {
            // Where the points cannot say, the bound |δa| + |x|·|δb|.
            Some(ci95_at(c, -header))
                .filter(|v| v.is_finite())
                .unwrap_or(c.fit.a_ci95 + header * c.fit.b_ci95)
        });
        self.estimate(self.line.fit.a, self.line.fit.a_ci95, cal)
    }

    /// β' with its 95 % interval, the calibration's slope's added.
    fn beta(&self) -> SutEstimate {
        let cal = self.calibration.map_or(0.0, |c| c.fit.b_ci95);
        self.estimate(self.line.fit.b, self.line.fit.b_ci95, cal)
    }

    fn estimate(&self, value: f64, fit_ci: f64, cal_ci: f64) -> SutEstimate {
        SutEstimate {
            source: self.source,
            value,
            ci95: fit_ci.hypot(cal_ci),
            calibration_ci95: cal_ci,
        }
    }
}

/// The 95 % half-width of a fitted line's value at `x`:
/// `t·s·√(1/n + (x − x̄)²/Sxx)` over the line's own points. NaN when the
/// points cannot say (fewer than three, all at one x).
fn ci95_at(line: &CalibrationLine, x: f64) -> f64 {
    let xs: Vec<f64> = line
        .points
        .iter()
        .map(|p| match line.x.as_str() {
            "payload_bytes" => p.payload_bytes as f64,
            _ => p.frame_bytes as f64,
        })
        .collect();
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let sxx: f64 = xs.iter().map(|v| (v - mean).powi(2)).sum();
    if xs.len() < 3 || sxx <= 0.0 {
        return f64::NAN;
    }
    let f = &line.fit;
    f.t95 * (f.residual_variance * (1.0 / n + (x - mean).powi(2) / sxx)).sqrt()
}

/// The estimates of `sut` compared; `None` when there is no fit at all.
/// `calibration` is the profile's lines the SUT's were taken against.
pub fn check(
    sut: &SutResult,
    calibration: Option<&CalibrationUse>,
    ev: &Evidence,
) -> Option<SutConsistency> {
    // Nearest the wire first: the first one is what the verdict rests on.
    let fits: Vec<(Fitted, _)> = [
        (
            SutSource::Hardware,
            &sut.hardware,
            sut.hardware_verdict,
            calibration.and_then(|c| c.hardware.as_ref()),
        ),
        (
            SutSource::Kernel,
            &sut.kernel,
            sut.kernel_verdict,
            calibration.and_then(|c| c.kernel.as_ref()),
        ),
        (
            SutSource::User,
            &sut.user,
            sut.user_verdict,
            calibration.map(|c| &c.user),
        ),
    ]
    .into_iter()
    .filter_map(|(source, line, verdict, calibration)| {
        let fitted = Fitted {
            source,
            line: line.as_ref()?,
            calibration,
        };
        Some((fitted, verdict?))
    })
    .collect();
    let (first, verdict) = fits.first()?;
    let mut disagreements = Vec::new();
    for (i, (a, _)) in fits.iter().enumerate() {
        for (b, _) in &fits[i + 1..] {
            let pairs = [
                ("alpha_ns", a.alpha(), b.alpha()),
                ("beta_ns_per_byte", a.beta(), b.beta()),
            ];
            for (quantity, first, second) in pairs {
                if let Some(gap) = gap(&first, &second) {
                    disagreements.push(SutDisagreement {
                        quantity: quantity.into(),
                        first,
                        second,
                        gap,
                    });
                }
            }
        }
    }
    let agreement = match (fits.len(), disagreements.is_empty()) {
        (1, _) => SutAgreement::Single,
        (_, true) => SutAgreement::Consistent,
        (_, false) => SutAgreement::Inconsistent,
    };
    let user_differs = disagreements
        .iter()
        .any(|d| d.first.source == SutSource::User || d.second.source == SutSource::User);
    let causes = if disagreements.is_empty() {
        Vec::new()
    } else {
        causes(ev, user_differs)
    };
    Some(SutConsistency {
        agreement,
        rests_on: first.source,
        verdict: *verdict,
        latency: first.alpha(),
        disagreements,
        causes,
    })
}

/// The distance between the intervals `a ± a.ci95` and `b ± b.ci95` when
/// they do not overlap; `None` when they do, or when a figure is not finite
/// (nothing can be said of it).
fn gap(a: &SutEstimate, b: &SutEstimate) -> Option<f64> {
    let g = (a.value - b.value).abs() - (a.ci95.abs() + b.ci95.abs());
    (g.is_finite() && g > 0.0).then_some(g)
}

fn cause(code: &str, text: String) -> SutCause {
    SutCause {
        code: code.into(),
        text,
    }
}

/// What the run shows about why the estimates differ.
fn causes(ev: &Evidence, user_differs: bool) -> Vec<SutCause> {
    let mut out = Vec::new();
    let us = |ns: i64| format!("{:.3} µs", ns as f64 / 1000.0);
    if user_differs && ev.rx_inside_send > 0 {
        let most = 2 * ev.rx_inside_send > ev.rx_stamped;
        out.push(cause(
            "received-inside-send",
            format!(
                "{} of {} frames were stamped in by the RX port's kernel before their send() \
                 returned: they crossed the SUT inside send() (veth and a software bridge do), \
                 where the user windows cannot see it (Bul is then TX1 − TX2 and \
                 Mul = (RX2 − TX2) / 2: the SUT's time falls in the TX window, which Mul \
                 leaves out), so the user estimate {}",
                ev.rx_inside_send,
                ev.rx_stamped,
                if most {
                    "does not measure the SUT"
                } else {
                    "is low by those frames"
                }
            ),
        ));
    }
    if let (true, Some(m), Some(k)) = (user_differs, ev.mul_median_ns, ev.kernel_median_ns) {
        if m < k {
            out.push(cause(
                "mul-below-kernel",
                format!(
                    "the median Mul ({}) is below the median kernel latency ({}), the stamps \
                     taken inside the path: the middle of the user windows is not the frame's \
                     latency here",
                    us(m),
                    us(k)
                ),
            ));
        }
    }
    if user_differs && !ev.run.pinned {
        out.push(cause(
            "loop-not-pinned",
            "the loop was not pinned (--cpu): descheduling widens the user windows, in the \
             calibration and in this run unequally"
                .into(),
        ));
    }
    if let (true, Some(cal)) = (user_differs, ev.calibration) {
        let busy_apart = match (cal.host_busy, ev.run.host_busy) {
            (Some(c), Some(r)) => (c - r).abs() >= BUSY_APART,
            _ => false,
        };
        if cal.pinned != ev.run.pinned || busy_apart {
            let how = |c: Conditions| {
                format!(
                    "{} with the host {} busy",
                    if c.pinned { "pinned" } else { "not pinned" },
                    c.host_busy
                        .map_or("?".into(), |b| format!("{:.0} %", b * 100.0))
                )
            };
            out.push(cause(
                "calibration-conditions",
                format!(
                    "the calibration ran {}, this run {}: the user windows' α and β hold \
                     under the conditions they were measured in; calibrate and measure alike",
                    how(cal),
                    how(ev.run)
                ),
            ));
        }
    }
    if !ev.profile_mismatches.is_empty() {
        out.push(cause(
            "profile-mismatch",
            format!(
                "the calibration profile was made on another set-up ({}): its α and β need \
                 not hold here",
                ev.profile_mismatches.join("; ")
            ),
        ));
    }
    out
}

/// The warning's text: both figures of each disagreement with their
/// intervals, which estimate the verdict rests on, and why.
pub fn describe(c: &SutConsistency) -> String {
    let figure = |q: &str, e: &SutEstimate| {
        let (scale, unit) = match q {
            "alpha_ns" => (1000.0, "µs"),
            _ => (1.0, "ns/byte"),
        };
        format!(
            "{} ± {} {unit} by the {}",
            fmt3(e.value / scale),
            fmt3(e.ci95 / scale),
            e.source.words()
        )
    };
    let pairs: Vec<String> = c
        .disagreements
        .iter()
        .map(|d| {
            let what = if d.quantity == "alpha_ns" {
                "SUT latency α'"
            } else {
                "slope β'"
            };
            format!(
                "{what} {} against {}",
                figure(&d.quantity, &d.first),
                figure(&d.quantity, &d.second)
            )
        })
        .collect();
    let why = if c.causes.is_empty() {
        "no cause misura knows was found in this run: calibrate and measure alike, pinned \
         (--cpu) on a quiet host, and compare again"
            .to_string()
    } else {
        c.causes
            .iter()
            .map(|c| c.text.as_str())
            .collect::<Vec<_>>()
            .join("; ")
    };
    format!(
        "the SUT's latency estimates disagree (95 % intervals apart, each with its \
         calibration's share): {}; the verdict rests on \
         the {} ({}). Why: {why}",
        pairs.join("; "),
        c.rests_on.words(),
        c.verdict.explain().split(':').next().unwrap_or_default()
    )
}

fn fmt3(v: f64) -> String {
    format!("{v:.3}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use misura_measure::{sut_verdict, SizePoint, SutVerdict};

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
        CalibrationLine::sut(points(means)).unwrap()
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
            user: CalibrationLine::internal(points(user)).unwrap(),
            kernel: Some(CalibrationLine::internal(points(kernel)).unwrap()),
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
        let v = |l: &CalibrationLine| sut_verdict(&l.fit, 0.8);
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
            mul_median_ns: Some(1432),
            kernel_median_ns: Some(1482),
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
            mul_median_ns: Some(2000),
            kernel_median_ns: Some(1800),
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
}
