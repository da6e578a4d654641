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

/// Internal latency of one frame on a cable: `Mil = Mul0 − C`, in ns.
pub fn internal_latency(mul0_ns: i64, wire_time_ps: u64) -> i64 {
    mul0_ns - ps_to_ns(wire_time_ps)
}

/// SUT latency of one frame: `Msl = Mul − Amil(P) − C`, in ns.
pub fn sut_latency(mul_ns: i64, amil_ns: f64, wire_time_ps: u64) -> i64 {
    (mul_ns as f64 - amil_ns - wire_time_ps as f64 / 1000.0).round() as i64
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

impl SutVerdict {
    pub fn explain(self) -> &'static str {
        match self {
            SutVerdict::StoreAndForward => {
                "store-and-forward: latency grows by one byte time per byte of frame (the whole frame is received before it is sent on)"
            }
            SutVerdict::CutThrough => "cut-through: latency does not grow with frame length",
            SutVerdict::Inconclusive => {
                "inconclusive: the 95 % interval of the slope contains both 0 and the byte time, or neither"
            }
        }
    }
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
        assert_eq!(internal_latency(10_000, 5_760_000), 4_240);
        assert_eq!(sut_latency(20_000, 4_240.0, 5_760_000), 10_000);
    }
}
