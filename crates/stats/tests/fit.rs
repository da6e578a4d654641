//! Least-squares tests against hand-worked values and an independent
//! textbook computation written out in the test.

use misura_stats::{FitError, LinearFit};

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * (1.0 + b.abs())
}

/// Textbook simple linear regression (Sxx/Sxy form), written independently
/// of the crate: returns (a, b, s², s_a, s_b).
fn textbook(points: &[(f64, f64)]) -> (f64, f64, f64, f64, f64) {
    let n = points.len() as f64;
    let xbar = points.iter().map(|p| p.0).sum::<f64>() / n;
    let ybar = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - xbar).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - xbar) * (p.1 - ybar)).sum();
    let b = sxy / sxx;
    let a = ybar - b * xbar;
    let sse: f64 = points.iter().map(|p| (p.1 - a - b * p.0).powi(2)).sum();
    let s2 = sse / (n - 2.0);
    let s_b = s2.sqrt() / sxx.sqrt();
    let s_a = s2.sqrt() * (1.0 / n + xbar * xbar / sxx).sqrt();
    (a, b, s2, s_a, s_b)
}

#[test]
fn hand_worked_five_points() {
    // x = 1..5, y = 2,4,5,4,5. By hand: x̄ = 3, ȳ = 4, Sxx = 10, Sxy = 6,
    // b = 0.6, a = 2.2; residuals −0.8, 0.6, 1.0, −0.6, −0.2 → SSE = 2.4,
    // s² = 2.4/3 = 0.8, s_b = √(0.8/10) = 0.282843, s_a = √(0.8·(1/5 + 9/10))
    // = √0.88 = 0.938083; Syy = 6 → R² = 0.6; t(0.975; 3) = 3.182446.
    let pts = [(1.0, 2.0), (2.0, 4.0), (3.0, 5.0), (4.0, 4.0), (5.0, 5.0)];
    let f = LinearFit::fit(&pts).unwrap();
    assert_eq!(f.n, 5);
    assert_eq!(f.dof, 3);
    assert!(close(f.b, 0.6, 1e-12));
    assert!(close(f.a, 2.2, 1e-12));
    assert!(close(f.residual_variance, 0.8, 1e-12));
    assert!(close(f.s_b, 0.08f64.sqrt(), 1e-12));
    assert!(close(f.s_a, 0.88f64.sqrt(), 1e-12));
    assert!(close(f.r_squared, 0.6, 1e-12));
    assert!(close(f.t95, 3.182446, 1e-6));
    assert!(close(f.b_ci95, 3.182446 * 0.08f64.sqrt(), 1e-6));
    assert!(close(f.a_ci95, 3.182446 * 0.88f64.sqrt(), 1e-6));
    let (lo, hi) = f.b_interval();
    assert!(close(lo, 0.6 - 3.182446 * 0.08f64.sqrt(), 1e-6));
    assert!(close(hi, 0.6 + 3.182446 * 0.08f64.sqrt(), 1e-6));
    let (lo, hi) = f.a_interval();
    assert!(close(lo, 2.2 - 3.182446 * 0.88f64.sqrt(), 1e-6));
    assert!(close(hi, 2.2 + 3.182446 * 0.88f64.sqrt(), 1e-6));
    assert!(f.b_consistent_with(0.0), "0.6 ± 0.90 contains 0");
    assert!(!f.b_consistent_with(1.6));
    assert!(close(f.predict(10.0), 8.2, 1e-12));
}

#[test]
fn calibration_like_seven_points_matches_textbook() {
    // Seven payload sizes → 5 degrees of freedom, as in the calibration
    // method: latency = 1000 ns + 0.8 ns/B plus a fixed "noise" pattern.
    let sizes = [64.0, 128.0, 256.0, 512.0, 1024.0, 1280.0, 1500.0];
    let noise = [3.0, -2.0, 1.0, 0.0, -4.0, 2.0, 1.0];
    let pts: Vec<(f64, f64)> = sizes
        .iter()
        .zip(noise)
        .map(|(&x, e)| (x, 1000.0 + 0.8 * x + e))
        .collect();
    let f = LinearFit::fit(&pts).unwrap();
    let (a, b, s2, s_a, s_b) = textbook(&pts);
    assert_eq!(f.dof, 5);
    assert!(close(f.t95, 2.5706, 1e-4), "t95(5) = {}", f.t95);
    assert!(close(f.a, a, 1e-12));
    assert!(close(f.b, b, 1e-12));
    assert!(close(f.residual_variance, s2, 1e-10));
    assert!(close(f.s_a, s_a, 1e-10));
    assert!(close(f.s_b, s_b, 1e-10));
    assert!(close(f.a_ci95, 2.570_582 * s_a, 1e-6));
    assert!(close(f.b_ci95, 2.570_582 * s_b, 1e-6));
    assert!(
        f.b_consistent_with(0.8),
        "true slope inside its 95 % interval"
    );
    assert!(f.a_interval().0 <= 1000.0 && 1000.0 <= f.a_interval().1);
    assert!(f.r_squared > 0.9999 && f.r_squared < 1.0);
}

#[test]
fn t95_one_degree_of_freedom() {
    let f = LinearFit::fit(&[(0.0, 0.0), (1.0, 1.0), (2.0, 3.0)]).unwrap();
    assert_eq!(f.dof, 1);
    assert!(close(f.t95, 12.706, 1e-4), "t95(1) = {}", f.t95);
}

#[test]
fn t95_many_degrees_of_freedom_approaches_normal() {
    let pts: Vec<(f64, f64)> = (0..1002).map(|i| (i as f64, (i % 7) as f64)).collect();
    let f = LinearFit::fit(&pts).unwrap();
    assert_eq!(f.dof, 1000);
    // t(0.975; 1000) = 1.962339 (tables); z(0.975) = 1.959964.
    assert!(close(f.t95, 1.962339, 1e-5), "t95(1000) = {}", f.t95);
}

#[test]
fn perfect_line_has_zero_width_intervals() {
    let f = LinearFit::fit(&[(0.0, 3.0), (1.0, 5.0), (2.0, 7.0), (3.0, 9.0)]).unwrap();
    assert_eq!(f.a, 3.0);
    assert_eq!(f.b, 2.0);
    assert_eq!(f.residual_variance, 0.0);
    assert_eq!(f.s_a, 0.0);
    assert_eq!(f.s_b, 0.0);
    assert_eq!(f.a_ci95, 0.0);
    assert_eq!(f.b_ci95, 0.0);
    assert_eq!(f.a_interval(), (3.0, 3.0));
    assert_eq!(f.b_interval(), (2.0, 2.0));
    assert_eq!(f.r_squared, 1.0);
    assert!(f.b_consistent_with(2.0));
    assert!(!f.b_consistent_with(2.0001));
    assert_eq!(f.predict(10.0), 23.0);

    // Horizontal perfect line: Syy = 0, R² defined as 1.
    let f = LinearFit::fit(&[(0.0, 4.0), (1.0, 4.0), (5.0, 4.0)]).unwrap();
    assert_eq!((f.a, f.b, f.r_squared), (4.0, 0.0, 1.0));
}

#[test]
fn errors() {
    assert_eq!(LinearFit::fit(&[]), Err(FitError::TooFewPoints { n: 0 }));
    assert_eq!(
        LinearFit::fit(&[(1.0, 1.0)]),
        Err(FitError::TooFewPoints { n: 1 })
    );
    assert_eq!(
        LinearFit::fit(&[(1.0, 1.0), (2.0, 2.0)]),
        Err(FitError::TooFewPoints { n: 2 }),
        "two points leave no degree of freedom for the residual variance"
    );
    assert_eq!(
        LinearFit::fit(&[(5.0, 1.0), (5.0, 2.0), (5.0, 3.0)]),
        Err(FitError::DegenerateX)
    );
    assert_eq!(
        LinearFit::fit(&[(1.0, 1.0), (2.0, f64::NAN), (3.0, 3.0)]),
        Err(FitError::NonFinite)
    );
    assert_eq!(
        LinearFit::fit(&[(f64::INFINITY, 1.0), (2.0, 2.0), (3.0, 3.0)]),
        Err(FitError::NonFinite)
    );
    // Finite inputs whose squares overflow.
    assert_eq!(
        LinearFit::fit(&[(-1e300, 0.0), (0.0, 1.0), (1e300, 2.0)]),
        Err(FitError::NonFinite)
    );
    assert!(FitError::TooFewPoints { n: 2 }.to_string().contains('2'));
}

#[test]
fn serde_derives_present() {
    fn is_serde<T: serde::Serialize + for<'de> serde::Deserialize<'de>>() {}
    is_serde::<LinearFit>();
}
