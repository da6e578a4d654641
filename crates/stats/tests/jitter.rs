//! RFC 3550 jitter tests against closed-form values.

use misura_stats::Rfc3550Jitter;

#[test]
fn constant_delay_gives_zero_jitter_even_with_clock_offset() {
    let mut j = Rfc3550Jitter::new();
    // Receiver clock 10^15 ns ahead of the sender's: only differences matter.
    for i in 0..1000i64 {
        j.update(i * 1_000_000, i * 1_000_000 + 5_000 + 1_000_000_000_000_000);
    }
    assert_eq!(j.jitter_ns(), 0.0);
    assert_eq!(j.ipdv().count(), 999);
    assert_eq!(j.ipdv().min(), Some(0));
    assert_eq!(j.ipdv().max(), Some(0));
}

#[test]
fn first_packet_only_sets_reference() {
    let mut j = Rfc3550Jitter::new();
    j.update(0, 12345);
    assert_eq!(j.jitter_ns(), 0.0);
    assert_eq!(j.ipdv().count(), 0);
}

#[test]
fn alternating_delay_converges_to_the_step() {
    // Delays alternate 100 ns / 300 ns, so |D| = 200 at every step and the
    // filter J_k = J_{k−1} + (200 − J_{k−1})/16 from J_0 = 0 has the closed
    // form J_k = 200·(1 − (15/16)^k).
    let mut j = Rfc3550Jitter::new();
    for i in 0..=300i64 {
        let delay = if i % 2 == 0 { 100 } else { 300 };
        j.update(i * 10_000, i * 10_000 + delay);
        let k = i as i32; // differences seen so far
        let expected = 200.0 * (1.0 - (15.0f64 / 16.0).powi(k));
        assert!(
            (j.jitter_ns() - expected).abs() < 1e-9,
            "k={k}: {} vs {expected}",
            j.jitter_ns()
        );
    }
    assert!((j.jitter_ns() - 200.0).abs() < 1e-6);
    // IPDV: +200, −200, +200, ... (300 differences, 150 of each sign).
    let ipdv = j.ipdv();
    assert_eq!(ipdv.count(), 300);
    assert_eq!(ipdv.min(), Some(-200));
    assert_eq!(ipdv.max(), Some(200));
    assert_eq!(ipdv.mean(), Some(0.0));
    assert_eq!(ipdv.quantile(0.5), Some(-200));
    assert_eq!(ipdv.quantile(0.51), Some(200));
}

#[test]
fn single_step_is_one_sixteenth() {
    // RFC 3550 §6.4.1 worked by hand: one 1600 ns change in transit time
    // moves J from 0 to 1600/16 = 100, the next (back) to 100 + (1600−100)/16.
    let mut j = Rfc3550Jitter::new();
    j.update(0, 1000);
    j.update(1000, 3600);
    assert_eq!(j.jitter_ns(), 100.0);
    j.update(2000, 3000);
    assert_eq!(j.jitter_ns(), 100.0 + 1500.0 / 16.0);
    assert_eq!(j.ipdv().min(), Some(-1600));
    assert_eq!(j.ipdv().max(), Some(1600));
}
