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
    SutAgreement, SutCause, SutConsistency, SutDisagreement, SutEstimate, SutResult, SutSource,
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
    /// The loop ran pinned to a CPU (`--cpu`).
    pub loop_pinned: bool,
    /// Ways the calibration profile's set-up differs from this run's.
    pub profile_mismatches: Vec<String>,
}

/// The estimates of `sut` compared; `None` when there is no fit at all.
pub fn check(sut: &SutResult, ev: &Evidence) -> Option<SutConsistency> {
    // Nearest the wire first: the first one is what the verdict rests on.
    let fits: Vec<(SutSource, &CalibrationLine, _)> = [
        (SutSource::Hardware, &sut.hardware, sut.hardware_verdict),
        (SutSource::Kernel, &sut.kernel, sut.kernel_verdict),
        (SutSource::User, &sut.user, sut.user_verdict),
    ]
    .into_iter()
    .filter_map(|(s, l, v)| Some((s, l.as_ref()?, v?)))
    .collect();
    let &(rests_on, line, verdict) = fits.first()?;
    let mut disagreements = Vec::new();
    for (i, &(sa, la, _)) in fits.iter().enumerate() {
        for &(sb, lb, _) in &fits[i + 1..] {
            let pairs = [
                (
                    "alpha_ns",
                    (la.fit.a, la.fit.a_ci95),
                    (lb.fit.a, lb.fit.a_ci95),
                ),
                (
                    "beta_ns_per_byte",
                    (la.fit.b, la.fit.b_ci95),
                    (lb.fit.b, lb.fit.b_ci95),
                ),
            ];
            for (quantity, a, b) in pairs {
                if let Some(gap) = gap(a, b) {
                    disagreements.push(SutDisagreement {
                        quantity: quantity.into(),
                        first: estimate(sa, a),
                        second: estimate(sb, b),
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
        rests_on,
        verdict,
        latency: estimate(rests_on, (line.fit.a, line.fit.a_ci95)),
        disagreements,
        causes,
    })
}

/// The distance between the intervals `a.0 ± a.1` and `b.0 ± b.1` when
/// they do not overlap; `None` when they do, or when a figure is not finite
/// (nothing can be said of it).
fn gap(a: (f64, f64), b: (f64, f64)) -> Option<f64> {
    let g = (a.0 - b.0).abs() - (a.1.abs() + b.1.abs());
    (g.is_finite() && g > 0.0).then_some(g)
}

fn estimate(source: SutSource, (value, ci95): (f64, f64)) -> SutEstimate {
    SutEstimate {
        source,
        value,
        ci95,
    }
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
    if user_differs && !ev.loop_pinned {
        out.push(cause(
            "loop-not-pinned",
            "the loop was not pinned (--cpu): descheduling widens the user windows, in the \
             calibration and in this run unequally"
                .into(),
        ));
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
    let figure = |q: &str, e: &SutEstimate| match q {
        "alpha_ns" => format!(
            "{} ± {} µs by the {}",
            fmt3(e.value / 1000.0),
            fmt3(e.ci95 / 1000.0),
            e.source.words()
        ),
        _ => format!(
            "{} ± {} ns/byte by the {}",
            fmt3(e.value),
            fmt3(e.ci95),
            e.source.words()
        ),
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
        "the SUT's latency estimates disagree (95 % intervals apart): {}; the verdict rests on \
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

    const FRAMES: [usize; 7] = [64, 82, 146, 274, 530, 1042, 1518];

    /// A line fitted over the seven frame lengths of a default run, through
    /// these per-size mean SUT latencies (ns).
    fn measured(means: [f64; 7]) -> CalibrationLine {
        let points = FRAMES
            .iter()
            .zip(means)
            .map(|(&l, m)| SizePoint {
                payload_bytes: l - 18,
                frame_bytes: l,
                count: 1428,
                mean_ns: m,
                std_dev_ns: Some(500.0),
            })
            .collect();
        CalibrationLine::sut(points).unwrap()
    }

    /// The means `alpha + beta·L` with the scatter `jitter` (ns).
    fn line(alpha: f64, beta: f64, jitter: [f64; 7]) -> CalibrationLine {
        let mut means = [0.0; 7];
        for (i, (&l, j)) in FRAMES.iter().zip(jitter).enumerate() {
            means[i] = alpha + beta * l as f64 + j;
        }
        measured(means)
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

    fn veth_evidence() -> Evidence {
        Evidence {
            rx_stamped: 10_000,
            rx_inside_send: 10_000,
            mul_median_ns: Some(1432),
            kernel_median_ns: Some(1482),
            loop_pinned: true,
            profile_mismatches: vec![],
        }
    }

    /// The bridge on the veth lab (a run pinned to CPU 1, both CPUs busy):
    /// its per-size means gave user α' 0.365 ± 0.005 µs and kernel α'
    /// 1.567 ± 0.034 µs. Apart: flagged, the verdict on the kernel stamps,
    /// the frames received inside send() named.
    #[test]
    fn the_veth_bridges_two_estimates_are_apart_and_the_kernel_one_is_used() {
        let user = measured([364.0, 365.0, 363.1, 353.9, 354.3, 347.6, 328.1]);
        let kernel = measured([1558.2, 1571.2, 1587.3, 1515.9, 1551.6, 1549.6, 1498.2]);
        assert!((user.fit.a - 365.4).abs() < 0.1 && (kernel.fit.a - 1567.1).abs() < 0.1);
        let c = check(&sut(user, Some(kernel)), &veth_evidence()).unwrap();
        assert_eq!(c.agreement, SutAgreement::Inconsistent);
        assert_eq!(c.rests_on, SutSource::Kernel);
        assert_eq!(c.verdict, SutVerdict::CutThrough);
        assert!((c.latency.value - 1567.0).abs() < 20.0, "{:?}", c.latency);
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
        assert!(
            text.contains("1.567 ± 0.034 µs by the kernel stamps"),
            "{text}"
        );
        assert!(text.contains("by the user windows"), "{text}");
        assert!(
            text.contains("the verdict rests on the kernel stamps (cut-through)"),
            "{text}"
        );
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
        let c = check(&sut(user, Some(kernel)), &veth_evidence()).unwrap();
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
        let c = check(&sut(user, None), &Evidence::default()).unwrap();
        assert_eq!(c.agreement, SutAgreement::Single);
        assert_eq!(c.rests_on, SutSource::User);
        assert_eq!(c.verdict, SutVerdict::CutThrough);
    }

    /// Apart, on a run that was not pinned, with a profile from another
    /// set-up and frames that did not cross inside send(): those are the
    /// causes named; and no fit at all gives no comparison.
    #[test]
    fn causes_follow_the_evidence() {
        let user = line(300.0, 0.0, [1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 0.0]);
        let kernel = line(1500.0, 0.0, [1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 0.0]);
        let ev = Evidence {
            rx_stamped: 100,
            rx_inside_send: 0,
            mul_median_ns: Some(2000),
            kernel_median_ns: Some(1800),
            loop_pinned: false,
            profile_mismatches: vec!["profile made with kernel 6.1, this run uses 6.18".into()],
        };
        let c = check(&sut(user, Some(kernel)), &ev).unwrap();
        let codes: Vec<_> = c.causes.iter().map(|c| c.code.as_str()).collect();
        assert_eq!(codes, ["loop-not-pinned", "profile-mismatch"]);
        let mut none = sut(line(1.0, 0.0, [0.0; 7]), None);
        none.user = None;
        none.user_verdict = None;
        assert!(check(&none, &ev).is_none());
    }

    #[test]
    fn a_figure_that_is_not_finite_is_never_a_disagreement() {
        assert_eq!(gap((1.0, f64::NAN), (100.0, 1.0)), None);
        assert_eq!(gap((1.0, f64::INFINITY), (100.0, 1.0)), None);
        assert_eq!(gap((1.0, 1.0), (3.0, 1.0)), None, "touching ends overlap");
        assert_eq!(gap((1.0, 1.0), (5.0, 1.0)), Some(2.0));
    }
}
