//! The pacer on a virtual clock: wake-ups late by a chosen amount, sends
//! that take time, spins that advance the clock by a poll's cost.

use super::*;
use proptest::prelude::*;

const SPIN_POLL_NS: i64 = 40;

/// What one simulated run did.
struct Run {
    /// (unit index, send time) of every unit sent, in order.
    sends: Vec<(u64, i64)>,
    /// (size, time) of every burst.
    bursts: Vec<(u64, i64)>,
    end_ns: i64,
    pacer: Pacer,
}

/// Drive a pacer from `start` for `dur` ns; `late(i)` is how late the
/// i-th wake-up is; each send takes `send_ns`.
fn simulate(cfg: PacerConfig, start: i64, dur: i64, send_ns: i64, late: impl Fn(u64) -> i64) -> Run {
    let mut p = Pacer::new(cfg, start);
    let mut now = start - 1234;
    let mut sends = Vec::new();
    let mut bursts = Vec::new();
    let mut wakes = 0u64;
    while now < start + dur {
        match p.poll(now) {
            Step::Send(n) => {
                bursts.push((n, now));
                for _ in 0..n {
                    let k = p.recorded;
                    p.sent(now);
                    sends.push((k, now));
                    now += send_ns;
                }
            }
            Step::Sleep { until_ns } => {
                assert!(until_ns > now, "sleep to the past");
                now = until_ns + late(wakes);
                wakes += 1;
                p.woke(until_ns, now);
            }
            Step::Spin { until_ns } => {
                assert!(until_ns > now);
                now += SPIN_POLL_NS;
            }
        }
    }
    Run {
        sends,
        bursts,
        end_ns: now,
        pacer: p,
    }
}

#[test]
fn the_schedule_is_exact_integer_arithmetic() {
    let p = Pacer::new(PacerConfig::new(1470, 1_000_000_000), 1_000);
    // 1470 B at 1 Gbit/s: 11 760 ns apart, exactly.
    assert_eq!(p.due_ns(0), 1_000);
    assert_eq!(p.due_ns(1), 1_000 + 11_760);
    assert_eq!(p.due_ns(1_000_000), 1_000 + 11_760_000_000);
    assert_eq!(p.due_by(999), 0);
    assert_eq!(p.due_by(1_000), 1);
    assert_eq!(p.due_by(1_000 + 11_759), 1);
    assert_eq!(p.due_by(1_000 + 11_760), 2);
    // A gap that is not a whole number of ns: 1472 B at 3 Gbit/s.
    let p = Pacer::new(PacerConfig::new(1472, 3_000_000_000), 0);
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
        assert!((0..SPIN_POLL_NS).contains(&late), "unit {k} left {late} ns late");
    }
    // Spinning: at most the margin per wake-up, here less than 1 % of the time.
    assert!(f.spin_ns < 2_000_000_000 / 100, "{f:?}");
    assert_eq!(f.gap_p50_ns, Some(1_000_000));
}

#[test]
fn gaps_below_the_margin_go_in_bursts() {
    // 1 Gbit/s of 1470 B (11.76 µs apart), wake-ups 18–37 µs late.
    let cfg = PacerConfig::new(1470, 1_000_000_000);
    let late = |i: u64| 18_000 + (i * 7919 % 19_000) as i64;
    let r = simulate(cfg, 5, 1_000_000_000, 1_000, late);
    let f = r.pacer.figures();
    let (_, last) = *r.bursts.last().unwrap();
    assert_eq!(f.units + f.skipped, r.pacer.due_by(last), "{f:?}");
    assert!(r.end_ns >= 1_000_000_000);
    assert_eq!(f.skipped, 0);
    assert!(f.margin_ns >= 36_000 && f.margin_ns <= 37_000, "{f:?}");
    // Wake-ups about every 8 margins, not every datagram.
    assert!(f.wakeups < 1_000_000_000 / (6 * 36_000), "{f:?}");
    assert!(f.max_burst <= (9 * 37_000 + 37_000) / 11_760 + 2, "{f:?}");
    assert!(f.burst_units > f.units / 2);
}

#[test]
fn a_sender_far_behind_drops_the_backlog_and_keeps_the_schedule() {
    let cfg = PacerConfig::new(1000, 8_000_000); // 1 ms apart
    let mut p = Pacer::new(cfg, 0);
    assert_eq!(p.poll(0), Step::Send(1));
    // 5.5 ms later: five due, within the catch-up limit, sent together.
    assert_eq!(p.poll(5_500_000), Step::Send(5));
    // 50 ms later: the backlog beyond 10 ms is dropped.
    assert_eq!(p.poll(55_200_000), Step::Send(1));
    let f = p.figures();
    assert_eq!(f.skipped, 55 - 6);
    assert_eq!(f.units + f.skipped, p.due_by(55_200_000));
    // The schedule did not move: the next is due at 56 ms.
    assert_eq!(p.poll(55_300_000), Step::Sleep { until_ns: 56_000_000 });
}

#[test]
fn unpaced_sends_every_poll() {
    let mut p = Pacer::new(PacerConfig::new(1000, 0), 0);
    for t in 0..5 {
        assert_eq!(p.poll(t), Step::Send(1));
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
        let dur = 200_000_000;
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
        // Handed out + dropped = due by the last poll that sent.
        let (_, last) = *r.bursts.last().unwrap();
        prop_assert_eq!(f.units + f.skipped, p.due_by(last));
        // Nothing dropped unless the sender was more than 10 ms behind,
        // which these wake-ups (< 0.2 ms) and sends cannot make it.
        let gap = f.target_gap_ns;
        if (send_ns as f64) < gap {
            prop_assert_eq!(f.skipped, 0);
        }
        // A burst holds what came due since the previous one: bounded by
        // (9 margins + a wake-up's lateness) worth of the schedule, with
        // margin and lateness below 0.2 ms (plus the sends' own time).
        let max_late = *lat.iter().max().unwrap() as f64;
        let bound = (10.0 * max_late + 2.0 * send_ns as f64) / gap + 2.0;
        for &(n, _) in &r.bursts {
            prop_assert!(n as f64 <= bound.max(cfg.catch_up_ns as f64 / gap + 2.0));
            if (send_ns as f64) < gap / 2.0 {
                prop_assert!((n as f64) <= bound, "burst {} > {}", n, bound);
            }
        }
    }
}
