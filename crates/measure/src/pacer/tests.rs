//! The pacer on a virtual clock: wake-ups late by a chosen amount, sends
//! that take time, spins that advance the clock by a poll's cost.

use super::*;
use proptest::prelude::*;

const SPIN_POLL_NS: i64 = 40;

/// What one simulated run did.
struct Run {
    /// (unit index, send time) of every unit sent, in order.
    sends: Vec<(u64, i64)>,
    /// (size, time) of every burst: sends without a sleep or spin between.
    bursts: Vec<(u64, i64)>,
    /// Units handed out + skipped == the schedule's count, at every sleep
    /// or spin (when nothing is due).
    counted_at_idle: bool,
    end_ns: i64,
    pacer: Pacer,
}

/// Drive a pacer from `start` for `dur` ns; `late(i)` is how late the
/// i-th wake-up is; each send takes `send_ns`.
fn simulate(
    cfg: PacerConfig,
    start: i64,
    dur: i64,
    send_ns: i64,
    late: impl Fn(u64) -> i64,
) -> Run {
    let mut p = Pacer::new(cfg, Instant::from_ns(start));
    let mut now = start - 1234;
    let mut sends = Vec::new();
    let mut bursts = Vec::new();
    let mut wakes = 0u64;
    let mut counted_at_idle = true;
    let mut in_run = false;
    while now < start + dur {
        let step = p.poll(Instant::from_ns(now));
        if !matches!(step, Step::Send { .. }) {
            in_run = false;
            let f = &p.counts.fig;
            counted_at_idle &= f.units + f.skipped == p.due_by(now);
        }
        match step {
            Step::Send { due } => {
                assert!(due >= 1);
                sends.push((p.next - 1, now));
                match bursts.last_mut() {
                    Some((n, _)) if in_run => *n += 1,
                    _ => bursts.push((1, now)),
                }
                in_run = true;
                now += send_ns;
            }
            Step::Sleep { until } => {
                let until_ns = until.as_ns();
                assert!(until_ns > now, "sleep to the past");
                now = until_ns + late(wakes);
                wakes += 1;
                p.woke(until, Instant::from_ns(now));
            }
            Step::Spin { until } => {
                assert!(until.as_ns() > now);
                now += SPIN_POLL_NS;
            }
        }
    }
    Run {
        sends,
        bursts,
        counted_at_idle,
        end_ns: now,
        pacer: p,
    }
}

#[test]
fn the_schedule_is_exact_integer_arithmetic() {
    let p = Pacer::new(
        PacerConfig::new(1470, 1_000_000_000),
        Instant::from_ns(1_000),
    );
    // 1470 B at 1 Gbit/s: 11 760 ns apart, exactly.
    assert_eq!(p.due_ns(0), 1_000);
    assert_eq!(p.due_ns(1), 1_000 + 11_760);
    assert_eq!(p.due_ns(1_000_000), 1_000 + 11_760_000_000);
    assert_eq!(p.due_by(999), 0);
    assert_eq!(p.due_by(1_000), 1);
    assert_eq!(p.due_by(1_000 + 11_759), 1);
    assert_eq!(p.due_by(1_000 + 11_760), 2);
    // A gap that is not a whole number of ns: 1472 B at 3 Gbit/s.
    let p = Pacer::new(PacerConfig::new(1472, 3_000_000_000), Instant::from_ns(0));
    assert_eq!(p.due_ns(3), 11_776);
    assert_eq!(p.due_ns(3_000_000), 11_776_000_000);
    for k in [0u64, 1, 2, 3, 4, 1_000_001, 77_777_777] {
        let d = p.due_ns(k);
        assert_eq!(p.due_by(d), k + 1);
        assert_eq!(p.due_by(d - 1), k);
    }
}

#[test]
fn spaced_sends_sleep_then_spin_the_margin_only() {
    // 1 ms gaps, wake-ups 30 µs late: each unit alone, on time.
    let cfg = PacerConfig::new(1250, 10_000_000);
    let r = simulate(cfg, 0, 2_000_000_000, 2_000, |_| 30_000);
    let f = r.pacer.figures();
    assert_eq!(f.margin_ns, 30_000);
    assert_eq!(f.max_burst, 1);
    assert_eq!(f.skipped, 0);
    for &(k, t) in r.sends.iter().skip(2) {
        let late = t - r.pacer.due_ns(k);
        assert!(
            (0..SPIN_POLL_NS).contains(&late),
            "unit {k} left {late} ns late"
        );
    }
    // Spinning: at most the margin per wake-up, here less than 1 % of the time.
    assert!(f.spin_ns < 2_000_000_000 / 100, "{f:?}");
    assert_eq!(f.gap_p50, Some(Span::from_ns(1_000_000)));
}

#[test]
fn gaps_below_the_margin_go_in_bursts() {
    // 1 Gbit/s of 1470 B (11.76 µs apart), wake-ups 18–37 µs late.
    let cfg = PacerConfig::new(1470, 1_000_000_000);
    let late = |i: u64| 18_000 + (i * 7919 % 19_000) as i64;
    let r = simulate(cfg, 5, 1_000_000_000, 1_000, late);
    let f = r.pacer.figures();
    assert!(r.counted_at_idle);
    assert!(r.end_ns >= 1_000_000_000);
    assert_eq!(f.max_burst, r.bursts.iter().map(|b| b.0).max().unwrap());
    assert_eq!(f.skipped, 0);
    assert!(f.margin_ns >= 36_000 && f.margin_ns <= 37_000, "{f:?}");
    // Wake-ups about every 8 margins, not every datagram.
    assert!(f.wakeups < 1_000_000_000 / (6 * 36_000), "{f:?}");
    assert!(f.max_burst <= (8 * 37_000 + 37_000) / 11_760 + 2, "{f:?}");
    assert!(f.burst_units > f.units / 2);
}

#[test]
fn spacing_first_spins_to_every_due_time() {
    // 1 Gbit/s of 1470 B with spin_share 0: no grouping; after the first
    // wake-ups each datagram leaves at its own time, spinning the gap.
    let cfg = PacerConfig {
        spin_share: 0,
        ..PacerConfig::new(1470, 1_000_000_000)
    };
    let r = simulate(cfg, 0, 100_000_000, 1_000, |_| 20_000);
    let f = r.pacer.figures();
    assert!(r.counted_at_idle);
    for &(k, t) in r.sends.iter().skip(10) {
        let late = t - r.pacer.due_ns(k);
        assert!(
            (0..SPIN_POLL_NS + 1_000).contains(&late),
            "unit {k} left {late} ns late"
        );
    }
    assert!(f.spin_ns > 100_000_000 / 2, "mostly spinning: {f:?}");
}

#[test]
fn a_sender_far_behind_drops_the_backlog_and_keeps_the_schedule() {
    let cfg = PacerConfig::new(1000, 8_000_000); // 1 ms apart
    let mut p = Pacer::new(cfg, Instant::from_ns(0));
    assert_eq!(p.poll(Instant::from_ns(0)), Step::Send { due: 1 });
    assert_eq!(
        p.poll(Instant::from_ns(1)),
        Step::Sleep {
            until: Instant::from_ns(1_000_000)
        }
    );
    // 5.5 ms later: five due, within the catch-up limit, sent back to back.
    for left in (1..=5).rev() {
        assert_eq!(
            p.poll(Instant::from_ns(5_500_000)),
            Step::Send { due: left }
        );
    }
    assert!(matches!(
        p.poll(Instant::from_ns(5_500_001)),
        Step::Sleep { .. }
    ));
    // 50 ms later: the backlog beyond 10 ms is dropped.
    assert_eq!(p.poll(Instant::from_ns(55_200_000)), Step::Send { due: 1 });
    let f = p.figures();
    assert_eq!(f.skipped, 55 - 6);
    assert_eq!(f.units + f.skipped, p.due_by(55_200_000));
    assert_eq!((f.bursts, f.max_burst, f.burst_units), (3, 5, 5));
    // The schedule did not move: the next is due at 56 ms.
    assert_eq!(
        p.poll(Instant::from_ns(55_300_000)),
        Step::Sleep {
            until: Instant::from_ns(56_000_000)
        }
    );
}

#[test]
fn slow_wake_ups_cap_the_period_and_the_margin() {
    // Wake-ups 2–3 ms late (a busy CPU): margin capped at 0.5 ms, period
    // at 1 ms, so bursts of about a period and the lateness.
    let cfg = PacerConfig::new(1470, 1_000_000_000);
    let r = simulate(cfg, 0, 1_000_000_000, 1_000, |i| {
        2_000_000 + (i % 3) as i64 * 500_000
    });
    let f = r.pacer.figures();
    assert_eq!(f.margin_ns, 500_000);
    assert_eq!(r.pacer.period_and_early_ns(), (1_000_000, 125_000));
    assert!(
        f.max_burst <= (1_000_000 + 3_000_000) / 11_776 + 10,
        "{f:?}"
    );
    assert!(r.counted_at_idle);
    assert_eq!(f.spin_ns, 0);
}

#[test]
fn unpaced_sends_every_poll() {
    let mut p = Pacer::new(PacerConfig::new(1000, 0), Instant::from_ns(0));
    for t in 0..5 {
        assert_eq!(p.poll(Instant::from_ns(t)), Step::Send { due: 1 });
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Whatever the wake-ups and send costs: no unit leaves before it is
    /// due; every poll hands out all that are due (the long-run count is
    /// the schedule's, exactly); bursts stay bounded by how late the sender
    /// was.
    #[test]
    fn exact_rate_no_drift_bounded_bursts(
        unit in 24u64..9000,
        rate in 1_000_000u64..5_000_000_000,
        send_ns in 0i64..3_000,
        lat in proptest::collection::vec(0i64..200_000, 1..64),
        start in -1_000_000_000i64..1_000_000_000,
    ) {
        let cfg = PacerConfig::new(unit, rate);
        let late = |i: u64| lat[i as usize % lat.len()];
        let dur = 50_000_000;
        let r = simulate(cfg, start, dur, send_ns, late);
        let p = &r.pacer;
        let f = p.figures();
        for w in r.sends.windows(2) {
            prop_assert!(w[1].0 > w[0].0, "out of order");
            prop_assert!(w[1].1 >= w[0].1);
        }
        for &(k, t) in &r.sends {
            prop_assert!(t >= p.due_ns(k), "unit {} early", k);
        }
        // Handed out + dropped = the schedule's count whenever idle.
        prop_assert!(r.counted_at_idle);
        // Nothing dropped unless the sender was more than 10 ms behind,
        // which these wake-ups (< 0.2 ms) and sends cannot make it.
        let gap = f.target_gap_ns;
        if (send_ns as f64) < gap {
            prop_assert_eq!(f.skipped, 0);
        }
        // A burst holds what came due since the previous one began: at
        // most a period (≤ 8 margins, margin ≤ the largest lateness) and a
        // wake-up's lateness worth of the schedule, and what comes due
        // while it is sent.
        let max_late = *lat.iter().max().unwrap() as f64;
        let q = (8.0 * max_late).min(cfg.max_period_ns as f64);
        let bound = (q + max_late) / (gap - send_ns as f64).max(1.0) + 2.0;
        for &(n, _) in &r.bursts {
            prop_assert!(n as f64 <= bound.max(cfg.catch_up_ns as f64 / gap + 2.0));
            if (send_ns as f64) < gap / 2.0 {
                prop_assert!((n as f64) <= bound, "burst {} > {}", n, bound);
            }
        }
    }
}
