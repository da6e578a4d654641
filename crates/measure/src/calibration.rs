//! Calibration of the tester and the SUT's latency (seed 000, eqs. 8–13).
//!
//! With the two ports joined by a cable the SUT latency is zero, so
//! `Mil_k = Mul0_k − C_k` is the tester's own internal latency. Its mean per
//! payload size, `Amil(P)`, is linear in `P`: `Amil(P) = α + β·P`, fitted by
//! least squares over the sizes with 95 % intervals on n−2 degrees of freedom.
//! With a SUT in place, `Msl_k = Mul_k − Amil(P_k) − C_k`, and the fit
//! `Msl = α' + β'·L` over frame length tells a store-and-forward device (β'
//! equal to the byte time 8/R) from a cut-through one (β' ≈ 0).
//!
//! The same arithmetic applies to the kernel-timestamp latency, with the
//! kernel's stamps in place of the user windows.

use crate::time::Span;
use misura_stats::{FitError, LinearFit};
use serde::{Deserialize, Serialize};

/// The mean of one latency quantity over all frames of one payload size.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SizePoint {
    pub payload_bytes: usize,
    pub frame_bytes: usize,
    pub count: u64,
    pub mean_ns: f64,
    pub std_dev_ns: Option<f64>,
}

/// A fitted line `y = α + β·x` over per-size means, with the points it came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CalibrationLine {
    /// What x is: "payload_bytes" for Amil(P), "frame_bytes" for Msl(L).
    pub x: String,
    pub alpha_ns: f64,
    pub beta_ns_per_byte: f64,
    pub fit: LinearFit,
    pub points: Vec<SizePoint>,
}

impl CalibrationLine {
    /// `Amil(P) = α + β·P` over per-size mean internal latencies.
    pub fn internal(points: Vec<SizePoint>) -> Result<CalibrationLine, FitError> {
        Self::fit("payload_bytes", points, |p| p.payload_bytes as f64)
    }

    /// `Msl(L) = α' + β'·L` over per-size mean SUT latencies.
    pub fn sut(points: Vec<SizePoint>) -> Result<CalibrationLine, FitError> {
        Self::fit("frame_bytes", points, |p| p.frame_bytes as f64)
    }

    fn fit(
        x: &str,
        points: Vec<SizePoint>,
        xf: impl Fn(&SizePoint) -> f64,
    ) -> Result<CalibrationLine, FitError> {
        let xy: Vec<(f64, f64)> = points.iter().map(|p| (xf(p), p.mean_ns)).collect();
        let fit = LinearFit::fit(&xy)?;
        Ok(CalibrationLine {
            x: x.to_string(),
            alpha_ns: fit.a,
            beta_ns_per_byte: fit.b,
            fit,
            points,
        })
    }

    /// The line's value at `x` (for Amil: the tester's mean internal latency
    /// at payload `x`).
    pub fn at(&self, x: f64) -> f64 {
        self.alpha_ns + self.beta_ns_per_byte * x
    }
}

/// The largest internal latency, at any payload, a tester's PC can have for
/// a profile to mean anything: 1 s (a loaded tester measures tens of µs).
pub const MAX_INTERNAL_NS: f64 = 1e9;
/// The largest |β|: 100 µs per payload byte, the byte time of an 80 kbit/s
/// link (a PC copies a byte in under a nanosecond; 10 Mbit/s takes 800 ns).
pub const MAX_NS_PER_BYTE: f64 = 1e5;
/// The most payload sizes (points of a line) a profile may hold.
pub const MAX_POINTS: usize = 4096;
/// The largest payload or frame a point may name (bytes).
pub const MAX_POINT_BYTES: usize = 65_535;

/// A calibration value outside what a cable and a PC can give: read from a
/// profile, it would turn every SUT latency into nonsense (α = 1e308 made
/// it i64::MIN, issue 33 item 10).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{field} = {value} is outside what a cable and a PC can give ({bound})")]
pub struct OutOfBounds {
    /// The field, as the profile's JSON names it (`kernel.alpha_ns`).
    pub field: String,
    pub value: String,
    /// The bound it broke, in words.
    pub bound: String,
}

/// `v` finite and within `lo..=hi`, else [`OutOfBounds`] naming `field`.
pub fn within(field: &str, v: f64, lo: f64, hi: f64, unit: &str) -> Result<(), OutOfBounds> {
    if v.is_finite() && (lo..=hi).contains(&v) {
        return Ok(());
    }
    Err(OutOfBounds {
        field: field.to_string(),
        value: if v.is_finite() && v.abs() < 1e9 {
            format!("{v}")
        } else {
            format!("{v:e}")
        },
        bound: format!("a finite number from {lo} to {hi} {unit}"),
    })
}

impl CalibrationLine {
    /// Every value of the line within what a tester on a cable can give,
    /// else the first that is not, named as `{name}.field`.
    pub fn check_bounds(&self, name: &str) -> Result<(), OutOfBounds> {
        let (t, b) = (MAX_INTERNAL_NS, MAX_NS_PER_BYTE);
        let f = &self.fit;
        let field = |x: &str| format!("{name}.{x}");
        within(&field("alpha_ns"), self.alpha_ns, -t, t, "ns")?;
        within(
            &field("beta_ns_per_byte"),
            self.beta_ns_per_byte,
            -b,
            b,
            "ns per byte",
        )?;
        within(&field("fit.a"), f.a, -t, t, "ns")?;
        within(&field("fit.b"), f.b, -b, b, "ns per byte")?;
        within(&field("fit.s_a"), f.s_a, 0.0, t, "ns")?;
        within(&field("fit.a_ci95"), f.a_ci95, 0.0, t, "ns")?;
        within(&field("fit.s_b"), f.s_b, 0.0, b, "ns per byte")?;
        within(&field("fit.b_ci95"), f.b_ci95, 0.0, b, "ns per byte")?;
        within(
            &field("fit.residual_variance"),
            f.residual_variance,
            0.0,
            t * t,
            "ns²",
        )?;
        // Student's t(0.975) is 12.7 at one degree of freedom, 1.96 at many.
        within(&field("fit.t95"), f.t95, 0.0, 1e3, "")?;
        within(&field("fit.r_squared"), f.r_squared, -1e-9, 1.0 + 1e-9, "")?;
        if self.points.len() > MAX_POINTS || f.n > MAX_POINTS || f.dof > MAX_POINTS {
            return Err(OutOfBounds {
                field: field("points"),
                value: format!("{} points (n {}, dof {})", self.points.len(), f.n, f.dof),
                bound: format!("at most {MAX_POINTS}"),
            });
        }
        for (i, p) in self.points.iter().enumerate() {
            let at = |x: &str| field(&format!("points[{i}].{x}"));
            for (x, v) in [
                ("payload_bytes", p.payload_bytes),
                ("frame_bytes", p.frame_bytes),
            ] {
                if v > MAX_POINT_BYTES {
                    return Err(OutOfBounds {
                        field: at(x),
                        value: v.to_string(),
                        bound: format!("at most {MAX_POINT_BYTES} bytes"),
                    });
                }
            }
            within(&at("mean_ns"), p.mean_ns, -t, t, "ns")?;
            if let Some(sd) = p.std_dev_ns {
                within(&at("std_dev_ns"), sd, 0.0, t, "ns")?;
            }
        }
        // The line at the largest frame stays within the bound too: α and
        // β each within theirs can still add up past it.
        let top = MAX_POINT_BYTES as f64;
        within(
            &field("alpha_ns + beta_ns_per_byte · 65535"),
            self.at(top),
            -2.0 * t,
            2.0 * t,
            "ns",
        )
    }
}

/// Internal latency of one frame on a cable: `Mil = Mul0 − C`.
pub fn internal_latency(mul0: Span, wire_time_ps: u64) -> Span {
    Span::from_ns(mul0.as_ns() - ps_to_ns(wire_time_ps))
}

/// SUT latency of one frame: `Msl = Mul − Amil(P) − C` (`amil_ns` in ns).
pub fn sut_latency(mul: Span, amil_ns: f64, wire_time_ps: u64) -> Span {
    Span::from_ns((mul.as_ns() as f64 - amil_ns - wire_time_ps as f64 / 1000.0).round() as i64)
}

fn ps_to_ns(ps: u64) -> i64 {
    ((ps + 500) / 1000) as i64
}

/// What the SUT fit says about how the device forwards.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SutVerdict {
    /// β' is consistent with the byte time 8/R and not with 0.
    StoreAndForward,
    /// β' is consistent with 0 and not with the byte time.
    CutThrough,
    /// Both, neither, or too few points.
    Inconclusive,
}

/// Compare the SUT slope β' with the link's byte time `8/R`.
pub fn sut_verdict(fit: &LinearFit, byte_time_ns: f64) -> SutVerdict {
    let sf = fit.b_consistent_with(byte_time_ns);
    let ct = fit.b_consistent_with(0.0);
    match (sf, ct) {
        (true, false) => SutVerdict::StoreAndForward,
        (false, true) => SutVerdict::CutThrough,
        _ => SutVerdict::Inconclusive,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_beyond_a_cable_and_a_pc_are_refused_naming_the_field() {
        let good =
            CalibrationLine::internal(points(|p| 11_730.0 + 28.0 * p as f64, &NOISE)).unwrap();
        assert_eq!(good.check_bounds("kernel"), Ok(()));
        for (set, field) in [
            (
                (|l: &mut CalibrationLine| l.alpha_ns = 1e308) as fn(&mut CalibrationLine),
                "kernel.alpha_ns",
            ),
            (|l| l.beta_ns_per_byte = 1e15, "kernel.beta_ns_per_byte"),
            (|l| l.alpha_ns = f64::NAN, "kernel.alpha_ns"),
            (|l| l.fit.a_ci95 = -1.0, "kernel.fit.a_ci95"),
            (
                |l| l.points[0].mean_ns = f64::INFINITY,
                "kernel.points[0].mean_ns",
            ),
            (
                |l| l.points[1].payload_bytes = usize::MAX,
                "kernel.points[1].payload_bytes",
            ),
        ] {
            let mut l = good.clone();
            set(&mut l);
            let e = l.check_bounds("kernel").unwrap_err();
            assert_eq!(e.field, field, "{e}");
            assert!(e.to_string().contains("outside what a cable"), "{e}");
        }
    }

    fn points(f: impl Fn(usize) -> f64, jitter: &[f64]) -> Vec<SizePoint> {
        [46usize, 64, 128, 256, 512, 1024, 1500]
            .iter()
            .zip(jitter)
            .map(|(&p, j)| SizePoint {
                payload_bytes: p,
                frame_bytes: (p + 18).max(64),
                count: 1000,
                mean_ns: f(p) + j,
                std_dev_ns: None,
            })
            .collect()
    }

    const NOISE: [f64; 7] = [300.0, -250.0, 120.0, -400.0, 350.0, -100.0, 50.0];

    #[test]
    fn calibration_recovers_the_seed_line() {
        // The seed's Γ = 10 % line: α = 11.73 µs, β = 28 ns/byte.
        let line =
            CalibrationLine::internal(points(|p| 11_730.0 + 28.0 * p as f64, &NOISE)).unwrap();
        assert!(
            (line.alpha_ns - 11_730.0).abs() < 400.0,
            "{}",
            line.alpha_ns
        );
        assert!(
            (line.beta_ns_per_byte - 28.0).abs() < 1.0,
            "{}",
            line.beta_ns_per_byte
        );
        assert_eq!(line.fit.dof, 5);
        let (lo, hi) = line.fit.b_interval();
        assert!(lo < 28.0 && 28.0 < hi);
        assert!((line.at(100.0) - (line.alpha_ns + 100.0 * line.beta_ns_per_byte)).abs() < 1e-9);
    }

    #[test]
    fn store_and_forward_at_100_mbps() {
        // 80 ns per byte of frame length plus 4.13 µs, as the seed's switch.
        let line =
            CalibrationLine::sut(points(|p| 4_130.0 + 80.0 * (p + 18).max(64) as f64, &NOISE))
                .unwrap();
        assert_eq!(sut_verdict(&line.fit, 80.0), SutVerdict::StoreAndForward);
    }

    #[test]
    fn cut_through_and_inconclusive() {
        let flat = CalibrationLine::sut(points(|_| 2_000.0, &NOISE)).unwrap();
        assert_eq!(sut_verdict(&flat.fit, 80.0), SutVerdict::CutThrough);
        // At 25 Gb/s the byte time (0.32 ns) is inside the slope's interval
        // (0.015 ± 0.571 ns/byte for this noise): cannot tell.
        assert_eq!(sut_verdict(&flat.fit, 0.32), SutVerdict::Inconclusive);
    }

    #[test]
    fn per_frame_arithmetic() {
        // Mul0 = 10 µs for a minimum frame at 100 Mb/s (C = 5.76 µs).
        let ns = Span::from_ns;
        assert_eq!(internal_latency(ns(10_000), 5_760_000), ns(4_240));
        assert_eq!(sut_latency(ns(20_000), 4_240.0, 5_760_000), ns(10_000));
    }
}
