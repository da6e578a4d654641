//! Do the SUT's estimates agree? A run with a calibration fits the SUT's
//! latency `Msl = α' + β'·L` up to three times: from the user windows, the
//! kernel stamps and the NIC stamps. They estimate one device, so their 95 %
//! intervals should overlap; where they do not, the result says so, with
//! both figures and what this run shows about why, and the headline verdict
//! rests on one estimate, named: the timestamps nearest the wire the run has
//! (hardware, then kernel, then the user windows). Pure: the fits and a few
//! of the run's counts in, a [`SutConsistency`] out.

use misura_measure::time::Span;
use misura_report::{
    CalibrationLine, CalibrationUse, SutAgreement, SutCause, SutConsistency, SutDisagreement,
    SutEstimate, SutResult, SutSource,
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
    pub mul_median: Option<Span>,
    pub kernel_median: Option<Span>,
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
    let (mul, kernel) = (
        ev.mul_median.map(Span::as_ns),
        ev.kernel_median.map(Span::as_ns),
    );
    if let (true, Some(m), Some(k)) = (user_differs, mul, kernel) {
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
            "the loop was not pinned to a CPU: descheduling widens the user windows, in the \
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
#[path = "consistency_tests.rs"]
mod tests;
