//! Ordinary least squares `y = a + b·x` with standard errors and Student-t
//! 95 % confidence intervals.
//!
//! This is the textbook simple linear regression, as given in the
//! NIST/SEMATECH e-Handbook of Statistical Methods, chapter 4 "Process
//! Modeling" (§4.1.4.1 "Linear Least Squares Regression",
//! <https://www.itl.nist.gov/div898/handbook/pmd/section1/pmd141.htm>, and
//! the parameter standard errors and t-based confidence intervals used in
//! its worked examples), and in any regression text (e.g. N. R. Draper &
//! H. Smith, *Applied Regression Analysis*, 3rd ed., Wiley 1998, ch. 1):
//!
//! ```text
//! x̄ = Σx/n, ȳ = Σy/n
//! Sxx = Σ(x − x̄)²,  Sxy = Σ(x − x̄)(y − ȳ),  Syy = Σ(y − ȳ)²
//! b = Sxy / Sxx,  a = ȳ − b·x̄
//! s² = SSE / (n − 2),  SSE = Σ(y − a − b·x)²      (residual variance, estimates σ²)
//! s_b = s / √Sxx,  s_a = s · √(1/n + x̄²/Sxx)
//! half-width = t(0.975; n − 2) · s_{a,b}
//! R² = 1 − SSE / Syy
//! ```
//!
//! In misura it is used for calibration: latency against payload size over a
//! handful of sizes (7 sizes → 5 degrees of freedom), where the intercept is
//! the fixed per-packet cost and the slope the per-byte cost, and whether a
//! measured slope is consistent with the line rate is a question about the
//! slope's interval ([`LinearFit::b_consistent_with`]).
//!
//! Centred sums are computed in two passes (means first) rather than from
//! `Σx²` and `Σxy`, because with payload sizes in the thousands and latencies
//! in the tens of thousands of ns the one-pass forms lose digits to
//! cancellation.

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Why a fit could not be made.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FitError {
    /// Fewer than 3 points: with `n − 2` degrees of freedom there would be
    /// nothing left to estimate the residual variance from.
    #[error("need at least 3 points for a fit with confidence intervals, got {n}")]
    TooFewPoints {
        /// Number of points given.
        n: usize,
    },
    /// All x values are equal, so the slope is undetermined (`Sxx = 0`).
    #[error("all x values are equal; the slope is undetermined")]
    DegenerateX,
    /// An input was NaN or infinite, or the computation overflowed.
    #[error("non-finite input or result")]
    NonFinite,
}

/// Result of an ordinary least-squares fit `y = a + b·x`.
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
    /// Coefficient of determination `1 − SSE/Syy` (1 when all y are equal,
    /// since the horizontal line then fits exactly).
    pub r_squared: f64,
}

/// Two-sided 95 % quantile of Student's t with `dof` degrees of freedom
/// (12.706 for 1, 2.5706 for 5, → 1.95996 as dof → ∞).
fn t95(dof: usize) -> Result<f64, FitError> {
    let t = StudentsT::new(0.0, 1.0, dof as f64).map_err(|_| FitError::NonFinite)?;
    let q = t.inverse_cdf(0.975);
    if q.is_finite() {
        Ok(q)
    } else {
        Err(FitError::NonFinite)
    }
}

impl LinearFit {
    /// Fit `y = a + b·x` to `points` (`(x, y)` pairs).
    ///
    /// Errors: [`FitError::TooFewPoints`] below 3 points,
    /// [`FitError::NonFinite`] for NaN/infinite input (checked first among the
    /// remaining conditions) or a non-finite result, [`FitError::DegenerateX`]
    /// when all x are equal.
    ///
    /// If the points lie exactly on a line the residual variance is 0 and so
    /// are the standard errors and both interval half-widths: the data carry
    /// no evidence of any uncertainty, and the intervals say exactly that
    /// rather than inventing one.
    pub fn fit(points: &[(f64, f64)]) -> Result<LinearFit, FitError> {
        let n = points.len();
        if n < 3 {
            return Err(FitError::TooFewPoints { n });
        }
        if points
            .iter()
            .any(|&(x, y)| !x.is_finite() || !y.is_finite())
        {
            return Err(FitError::NonFinite);
        }
        let nf = n as f64;
        let x_mean = points.iter().map(|p| p.0).sum::<f64>() / nf;
        let y_mean = points.iter().map(|p| p.1).sum::<f64>() / nf;
        let (mut sxx, mut sxy, mut syy) = (0.0, 0.0, 0.0);
        for &(x, y) in points {
            let dx = x - x_mean;
            let dy = y - y_mean;
            sxx += dx * dx;
            sxy += dx * dy;
            syy += dy * dy;
        }
        if !(sxx.is_finite() && sxy.is_finite() && syy.is_finite()) {
            return Err(FitError::NonFinite);
        }
        if sxx == 0.0 {
            return Err(FitError::DegenerateX);
        }
        let b = sxy / sxx;
        let a = y_mean - b * x_mean;
        // SSE from the residuals themselves rather than Syy − b·Sxy: the
        // latter cancels to noise (or below zero) for nearly perfect fits,
        // which is the normal case for calibration data.
        let sse: f64 = points
            .iter()
            .map(|&(x, y)| {
                let r = y - (a + b * x);
                r * r
            })
            .sum();
        let dof = n - 2;
        let residual_variance = sse / dof as f64;
        let s = residual_variance.sqrt();
        let s_b = s / sxx.sqrt();
        let s_a = s * (1.0 / nf + x_mean * x_mean / sxx).sqrt();
        let t95 = t95(dof)?;
        let r_squared = if syy == 0.0 { 1.0 } else { 1.0 - sse / syy };
        let fit = LinearFit {
            n,
            a,
            b,
            s_a,
            s_b,
            residual_variance,
            dof,
            t95,
            a_ci95: t95 * s_a,
            b_ci95: t95 * s_b,
            r_squared,
        };
        let all_finite = [
            fit.a,
            fit.b,
            fit.s_a,
            fit.s_b,
            fit.residual_variance,
            fit.a_ci95,
            fit.b_ci95,
            fit.r_squared,
        ]
        .iter()
        .all(|v| v.is_finite());
        if all_finite {
            Ok(fit)
        } else {
            Err(FitError::NonFinite)
        }
    }

    /// 95 % confidence interval of the intercept, `(a − a_ci95, a + a_ci95)`.
    pub fn a_interval(&self) -> (f64, f64) {
        (self.a - self.a_ci95, self.a + self.a_ci95)
    }

    /// 95 % confidence interval of the slope, `(b − b_ci95, b + b_ci95)`.
    pub fn b_interval(&self) -> (f64, f64) {
        (self.b - self.b_ci95, self.b + self.b_ci95)
    }

    /// Whether `value` lies in the closed 95 % interval of the slope, i.e. a
    /// two-sided t-test at the 5 % level does not reject `b == value`.
    /// With a zero-width interval (perfect fit) only `b` itself qualifies.
    pub fn b_consistent_with(&self, value: f64) -> bool {
        let (lo, hi) = self.b_interval();
        lo <= value && value <= hi
    }

    /// Fitted value `a + b·x`.
    pub fn predict(&self, x: f64) -> f64 {
        self.a + self.b * x
    }
}
