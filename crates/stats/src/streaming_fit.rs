//! A straight line `y = a + b·(x − x₀)` fitted one point at a time, in
//! constant memory, for series of any length (a PHC against the system
//! clock over hours).
//!
//! Same estimator as [`crate::fit`] (ordinary least squares, NIST/SEMATECH
//! e-Handbook §4.1.4.1), computed by the QR factorisation of the design
//! matrix updated one row at a time with Givens rotations (W. M. Gentleman,
//! "Least squares computations by Givens transformations without square
//! roots", *J. Inst. Maths Applics* 12, 1973; Golub & Van Loan, *Matrix
//! Computations*, §5.1.8 and §6.5): for each point the row `[1, x | y]` is
//! rotated into the triangle `R = [[r11, r12], [0, r22]]` and `z = Qᵀy`, and
//! what is left of `y` adds to the residual sum of squares:
//!
//! ```text
//! b = z2 / r22,  a = (z1 − r12·b) / r11,  s² = SSE / (n − 2)
//! Var(a) = s²·(1/r11² + r12²/(r11²·r22²)),  Var(b) = s²/r22²,
//! Cov(a, b) = −s²·r12/(r11·r22²)
//! ```
//!
//! The normal-equation forms (`Syy − b·Sxy`, even with Welford's centred
//! updates) cancel catastrophically over ten hours of nanoseconds; the
//! rotations do not. `x` is taken relative to the first point and in
//! seconds inside, for the same reason.

/// The running fit.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StreamingLine {
    x0: Option<i64>,
    n: u64,
    r11: f64,
    r12: f64,
    r22: f64,
    z1: f64,
    z2: f64,
    sse: f64,
}

/// The line as it stands: `y(x) = a + b·(x − x0)`, `b` per nanosecond of `x`.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct LineEstimate {
    /// The first point's `x`, where `a` is the line's value.
    pub x0: i64,
    /// Points in the fit.
    pub n: u64,
    /// The line at `x0`.
    pub a: f64,
    /// Slope per nanosecond of `x`.
    pub b: f64,
    /// Residual standard deviation `s` (0 with two points).
    pub s: f64,
    /// (RᵀR)⁻¹ in seconds: the variances and covariance of `a` and of the
    /// slope per second, over s².
    var_a: f64,
    var_b: f64,
    cov_ab: f64,
}

const NS: f64 = 1e-9;

impl LineEstimate {
    /// `y` at `x`.
    pub fn at(&self, x: i64) -> f64 {
        self.a + self.b * (x - self.x0) as f64
    }

    /// The standard error of [`LineEstimate::at`] (the line's, not a new
    /// point's).
    pub fn se_at(&self, x: i64) -> f64 {
        let t = (x - self.x0) as f64 * NS;
        let v = self.var_a + 2.0 * t * self.cov_ab + t * t * self.var_b;
        self.s * v.max(0.0).sqrt()
    }

    /// The slope's standard error (per nanosecond of `x`).
    pub fn se_b(&self) -> f64 {
        self.s * self.var_b.max(0.0).sqrt() * NS
    }
}

/// A Givens rotation taking (`f`, `g`) to (`r`, 0): (c, s, r).
fn givens(f: f64, g: f64) -> (f64, f64, f64) {
    if g == 0.0 {
        return (1.0, 0.0, f);
    }
    let r = f.hypot(g);
    (f / r, g / r, r)
}

impl StreamingLine {
    /// An empty fit.
    pub fn new() -> StreamingLine {
        StreamingLine::default()
    }

    /// Points so far.
    pub fn len(&self) -> u64 {
        self.n
    }

    /// No points yet.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Adds the point (`x`, `y`).
    pub fn add(&mut self, x: i64, y: f64) {
        let x0 = *self.x0.get_or_insert(x);
        let x = (x - x0) as f64 * NS;
        self.n += 1;
        // Row [1, x | y] into the first row of R.
        let (c, s, r) = givens(self.r11, 1.0);
        self.r11 = r;
        let (r12, v1) = (c * self.r12 + s * x, -s * self.r12 + c * x);
        let (z1, w1) = (c * self.z1 + s * y, -s * self.z1 + c * y);
        self.r12 = r12;
        self.z1 = z1;
        // What is left, into the second row.
        let (c, s, r) = givens(self.r22, v1);
        self.r22 = r;
        let (z2, w2) = (c * self.z2 + s * w1, -s * self.z2 + c * w1);
        self.z2 = z2;
        self.sse += w2 * w2;
    }

    /// The line: `None` before two points. With every `x` equal the slope
    /// is 0 and the line is the mean.
    pub fn estimate(&self) -> Option<LineEstimate> {
        let x0 = self.x0?;
        if self.n < 2 || self.r11 == 0.0 {
            return None;
        }
        let degenerate = self.r22.abs() < 1e-12 * self.r11.abs();
        let (b_s, var_b, cov_ab, var_a) = if degenerate {
            (0.0, 0.0, 0.0, 1.0 / (self.r11 * self.r11))
        } else {
            let rr = self.r11 * self.r22;
            (
                self.z2 / self.r22,
                1.0 / (self.r22 * self.r22),
                -self.r12 / (rr * self.r22),
                1.0 / (self.r11 * self.r11) + (self.r12 * self.r12) / (rr * rr),
            )
        };
        let a = (self.z1 - self.r12 * b_s) / self.r11;
        // With every x equal, the second rotation folded y's scatter into z2.
        let sse = if degenerate {
            self.sse + self.z2 * self.z2
        } else {
            self.sse
        };
        let s = if self.n > 2 {
            (sse / (self.n - 2) as f64).sqrt()
        } else {
            0.0
        };
        Some(LineEstimate {
            x0,
            n: self.n,
            a,
            b: b_s * NS,
            s,
            var_a,
            var_b,
            cov_ab,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LinearFit;

    #[test]
    fn agrees_with_the_two_pass_fit() {
        let xs: Vec<f64> = (0..50).map(|i| i as f64 * 1e8).collect();
        let ys: Vec<f64> = xs
            .iter()
            .enumerate()
            .map(|(i, x)| 1234.0 + 2e-6 * x + if i % 3 == 0 { 40.0 } else { -20.0 })
            .collect();
        let mut s = StreamingLine::new();
        for (x, y) in xs.iter().zip(&ys) {
            s.add(*x as i64, *y);
        }
        let e = s.estimate().unwrap();
        let pts: Vec<(f64, f64)> = xs.iter().copied().zip(ys.iter().copied()).collect();
        let f = LinearFit::fit(&pts).unwrap();
        assert!((e.b - f.b).abs() < 1e-12, "{} {}", e.b, f.b);
        assert!((e.a - f.a).abs() < 1e-6, "{} {}", e.a, f.a);
        assert!((e.se_b() - f.s_b).abs() / f.s_b < 1e-9);
        assert!((e.se_at(0) - f.s_a).abs() / f.s_a < 1e-9);
    }

    #[test]
    fn large_x_keeps_its_digits() {
        // Ten hours of nanoseconds since 2026 on the x axis, 20 ppm drift.
        let start = 1_795_000_000_000_000_000i64;
        let mut s = StreamingLine::new();
        for i in 0..36_000i64 {
            let x = start + i * 1_000_000_000;
            s.add(x, 500.0 + 20e-6 * (i * 1_000_000_000) as f64);
        }
        let e = s.estimate().unwrap();
        assert!((e.b - 20e-6).abs() < 1e-15, "{}", e.b);
        assert!((e.at(start) - 500.0).abs() < 1e-3, "{}", e.at(start));
        assert!(e.s < 1e-3, "{}", e.s);
    }

    #[test]
    fn too_few_points_give_no_line() {
        let mut s = StreamingLine::new();
        assert!(s.estimate().is_none());
        s.add(5, 1.0);
        assert!(s.estimate().is_none());
        s.add(5, 3.0);
        let e = s.estimate().unwrap();
        assert_eq!(e.b, 0.0);
        assert!((e.at(100) - 2.0).abs() < 1e-12);
        assert!((e.s - 0.0).abs() < 1e-12);
    }
}
