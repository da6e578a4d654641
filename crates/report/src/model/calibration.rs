//! The tester's calibration and the SUT's latency model as results and
//! profiles record them (seed 000, eqs. 8–13): a line `y = α + β·x` fitted
//! over per-size means, the least-squares fit behind it, and what the SUT's
//! slope says about how it forwards. The report's own copies of
//! `measure`'s and `stats`'s types, converted with `From`; a profile's
//! lines convert back into the method's for a run that applies them.

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

/// Result of an ordinary least-squares fit `y = a + b·x`, with standard
/// errors and Student-t 95 % intervals.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinearFit {
    /// Number of points.
    pub n: usize,
    /// Intercept.
    pub a: f64,
    /// Slope.
    pub b: f64,
    /// Standard error of the intercept, `s·√(1/n + x̄²/Sxx)`.
    pub s_a: f64,
    /// Standard error of the slope, `s/√Sxx`.
    pub s_b: f64,
    /// Residual variance `s² = SSE/(n − 2)`, the estimate of σ².
    pub residual_variance: f64,
    /// Degrees of freedom, `n − 2`.
    pub dof: usize,
    /// Two-sided 95 % Student-t quantile for `dof` degrees of freedom,
    /// `t(0.975; dof)`.
    pub t95: f64,
    /// Half-width of the 95 % confidence interval of `a`, `t95·s_a`.
    pub a_ci95: f64,
    /// Half-width of the 95 % confidence interval of `b`, `t95·s_b`.
    pub b_ci95: f64,
    /// Coefficient of determination `1 − SSE/Syy`.
    pub r_squared: f64,
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
    /// The verdict in words, its name first ("cut-through: …").
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

impl From<misura_measure::SutVerdict> for SutVerdict {
    fn from(v: misura_measure::SutVerdict) -> SutVerdict {
        match v {
            misura_measure::SutVerdict::StoreAndForward => SutVerdict::StoreAndForward,
            misura_measure::SutVerdict::CutThrough => SutVerdict::CutThrough,
            misura_measure::SutVerdict::Inconclusive => SutVerdict::Inconclusive,
        }
    }
}

same_fields!(SizePoint both misura_measure::SizePoint { payload_bytes, frame_bytes, count, mean_ns, std_dev_ns });

same_fields!(LinearFit both misura_stats::LinearFit {
    n, a, b, s_a, s_b, residual_variance, dof, t95, a_ci95, b_ci95, r_squared,
});

impl From<misura_measure::CalibrationLine> for CalibrationLine {
    fn from(l: misura_measure::CalibrationLine) -> CalibrationLine {
        CalibrationLine {
            x: l.x,
            alpha_ns: l.alpha_ns,
            beta_ns_per_byte: l.beta_ns_per_byte,
            fit: l.fit.into(),
            points: l.points.into_iter().map(SizePoint::from).collect(),
        }
    }
}

/// A profile's line, as the method applies it to a run (`Amil(P)`).
impl From<CalibrationLine> for misura_measure::CalibrationLine {
    fn from(l: CalibrationLine) -> misura_measure::CalibrationLine {
        misura_measure::CalibrationLine {
            x: l.x,
            alpha_ns: l.alpha_ns,
            beta_ns_per_byte: l.beta_ns_per_byte,
            fit: l.fit.into(),
            points: l.points.into_iter().map(Into::into).collect(),
        }
    }
}
