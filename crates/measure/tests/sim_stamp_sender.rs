//! Deterministic simulations of a STAMP session: a `SessionSender` against
//! `misura reflect`'s sans-IO reflector, over a path that loses, reorders,
//! duplicates, holds back, corrupts and cuts, on a virtual clock with seeded
//! randomness. No sockets, no root, no wall clock.
//!
//! Every scenario runs `check_exact` (each datagram's outcome, each
//! released record's timestamps and flags, and every counter, against the
//! simulator's log) and then ties the totals to the impairments it injected.

mod sim;

use misura_measure::auth::StampKey;
use misura_measure::time::{Instant, Span};
use sim::{check_exact, run, Injected, Path, Scenario, BUILD_NS, LEAVE_NS, MS, T0, TURN_NS};

/// Records whose reflector transmit stamp is the precise (two-step) one.
fn precise(o: &sim::Outcome) -> usize {
    o.log
        .records
        .iter()
        .filter(|(_, r)| r.reflector_tx_precise)
        .count()
}

#[test]
fn sim_clean() {
    let o = run(Scenario::new(1, Path::clean()));
    let e = check_exact(&o);
    assert_eq!(o.log.injected, Injected::default());
    assert_eq!((e.received, e.lost, e.follow_ups), (300, 0, 299));
    let w = o.sender.warm_up();
    assert_eq!((w.sent, w.replies, w.unstamped), (8, 8, 0));
    assert!(w.follow_up_filled && o.sender.expects_follow_up());
    // On schedule: probe k leaves at start + k·period, TX1 after building it.
    let start = o.sender.measurement_start().unwrap();
    for (k, (_, r)) in o.log.records.iter().enumerate() {
        assert_eq!(r.tx1, start + Span::from_ns(k as i64 * 10 * MS + BUILD_NS));
    }
    // Two-step: a probe is released when the next reply brings its stamp.
    for pair in o.log.records.windows(2) {
        let ((released, a), (_, b)) = (pair[0], pair[1]);
        assert_eq!(
            Instant::from_ns(released),
            b.rx2,
            "probe {} released with the next reply",
            a.seq
        );
        assert_eq!(
            a.times().turnaround(),
            Some(Span::from_ns(LEAVE_NS)),
            "precise turnaround"
        );
    }
    let (_, last) = o.log.records.last().unwrap();
    assert!(!last.reflector_tx_precise, "no reply follows the last one");
    assert_eq!(last.times().turnaround(), Some(Span::from_ns(TURN_NS)));
    assert_eq!((o.reflector.received, o.reflector.replied), (308, 308));
    assert_eq!(o.reflector.follow_ups, 307);
}

#[test]
fn sim_loss_both_directions() {
    let path = Path {
        loss_fwd: 0.1,
        loss_back: 0.1,
        stateful: true,
        ..Path::clean()
    };
    let o = run(Scenario::new(2, path));
    let e = check_exact(&o);
    let i = &o.log.injected;
    assert!(i.fwd_lost > 10 && i.back_lost > 10, "{i:?}");
    assert_eq!(e.lost, i.fwd_lost + i.back_lost);
    assert_eq!(e.received, 300 - e.lost);
    assert_eq!(o.sender.counters().sent, 300);
    assert_eq!(o.reflector.received, 308 - i.fwd_lost);
    assert_eq!(o.reflector.replied, 308 - i.fwd_lost);
    assert!(
        e.follow_ups < 299 - e.lost,
        "a lost reply takes a follow-up with it"
    );
    assert_eq!(precise(&o) as u64, e.follow_ups);
}

#[test]
fn sim_reordering() {
    let path = Path {
        reorder_fwd: 0.08,
        reorder_extra_ns: 25 * MS,
        ..Path::clean()
    };
    let o = run(Scenario::new(3, path));
    let e = check_exact(&o);
    let i = &o.log.injected;
    assert!(i.reordered_fwd > 10, "{i:?}");
    assert!(e.reordered > 10 && e.reordered <= i.reordered_fwd);
    assert_eq!((e.received, e.lost, e.duplicates, e.late), (300, 0, 0, 0));
    // The way back keeps the reflector's order: every follow-up lands.
    assert_eq!(e.follow_ups, 299);
}

#[test]
fn sim_duplicates() {
    let path = Path {
        dup_back: 0.15,
        ..Path::clean()
    };
    let o = run(Scenario::new(4, path));
    let e = check_exact(&o);
    let dups = o.log.injected.duplicated;
    assert!(dups > 20, "{dups}");
    assert_eq!(e.duplicates, dups);
    let flagged: u64 = o
        .log
        .records
        .iter()
        .map(|(_, r)| u64::from(r.duplicates))
        .sum();
    assert_eq!(flagged, dups);
    assert_eq!(
        (e.received, e.lost, e.reordered, e.follow_ups),
        (300, 0, 0, 299)
    );
}

#[test]
fn sim_late_replies() {
    let path = Path {
        late_back: 0.05,
        late_extra_ns: 200 * MS,
        quiet_tail: 30,
        ..Path::clean()
    };
    let mut s = Scenario::new(5, path);
    s.timeout_ns = 50 * MS;
    let o = run(s);
    let e = check_exact(&o);
    let late = o.log.injected.late;
    assert!(late > 5, "{late}");
    assert_eq!((e.late, e.lost), (late, late));
    assert_eq!(e.received, 300 - late);
}

#[test]
fn sim_missing_kernel_tx_stamps() {
    let path = Path {
        tx_stamp_missing: 0.1,
        ..Path::clean()
    };
    let mut s = Scenario::new(6, path);
    s.timeout_ns = 100 * MS;
    let o = run(s);
    let e = check_exact(&o);
    let missing = o.log.injected.tx_stamp_missing;
    assert!(missing > 10, "{missing}");
    assert_eq!((e.tx_stamp_missing, e.lost, e.received), (missing, 0, 300));
    // A probe without its stamp waits for the timeout after its reply, and
    // is released at the loop's next wake-up (at the latest the next due probe).
    for (released, r) in &o.log.records {
        if r.tx_kernel.is_none() {
            let released = Instant::from_ns(*released);
            assert!(
                released > r.rx2 + Span::from_ns(100 * MS),
                "probe {}",
                r.seq
            );
            assert!(
                released <= r.rx2 + Span::from_ns(110 * MS),
                "probe {}",
                r.seq
            );
        }
    }
}

#[test]
fn sim_reflector_without_two_step() {
    let path = Path {
        two_step: false,
        ..Path::clean()
    };
    let o = run(Scenario::new(7, path));
    let e = check_exact(&o);
    let w = o.sender.warm_up();
    assert_eq!(
        (w.follow_up_supported, w.follow_up_filled),
        (Some(true), false)
    );
    assert!(!o.sender.expects_follow_up());
    assert_eq!((e.follow_ups, e.received), (0, 300));
    assert_eq!(o.reflector.follow_ups, 0);
    // Nothing to wait for once the reply is in: released at once.
    for (released, r) in &o.log.records {
        assert_eq!(Instant::from_ns(*released), r.rx2, "probe {}", r.seq);
        assert_eq!(r.times().turnaround(), Some(Span::from_ns(TURN_NS)));
    }
}

#[test]
fn sim_reflector_clock_steps() {
    let path = Path {
        clock_steps: vec![(T0 + 1_000 * MS, -3_000 * MS), (T0 + 2_000 * MS, 250 * MS)],
        ..Path::clean()
    };
    let o = run(Scenario::new(8, path));
    let e = check_exact(&o);
    assert_eq!(
        (e.received, e.lost, e.reordered, e.follow_ups),
        (300, 0, 0, 299)
    );
    // The reflector's stamps follow its clock back and forth (check_exact
    // compared each with the stepped clock); its turnaround does not see the steps.
    // Reflector RX − TX1 = 44..54 µs of path plus its clock offset: +1.5 ms,
    // then −3 s, then +250 ms.
    let mut offsets = std::collections::BTreeMap::<i64, u32>::new();
    for (_, r) in &o.log.records {
        let ms = (r.reflector_rx.unwrap() - r.tx1).as_ns() - 44_000;
        let ms = ms.div_euclid(MS);
        *offsets.entry(ms).or_default() += 1;
    }
    assert_eq!(
        offsets.keys().copied().collect::<Vec<_>>(),
        vec![-2_999, -2_749, 1]
    );
    assert!(
        offsets.values().all(|&n| (95..=105).contains(&n)),
        "{offsets:?}"
    );
    for (_, r) in &o.log.records {
        let want = if r.reflector_tx_precise {
            LEAVE_NS
        } else {
            TURN_NS
        };
        assert_eq!(
            r.times().turnaround(),
            Some(Span::from_ns(want)),
            "probe {}",
            r.seq
        );
    }
}

#[test]
fn sim_hmac_with_corrupted_replies() {
    let path = Path {
        key: Some(StampKey::new(b"simulated shared secret").unwrap()),
        corrupt_back: 0.1,
        garbage: 0.05,
        ..Path::clean()
    };
    let o = run(Scenario::new(9, path));
    let e = check_exact(&o);
    let i = &o.log.injected;
    assert!(i.corrupt > 10 && i.short > 5, "{i:?}");
    assert_eq!(e.auth_failed, i.corrupt + i.short + i.forged);
    assert_eq!(
        (e.malformed, e.unknown),
        (0, 0),
        "unauthenticated bytes go no further"
    );
    assert_eq!(e.lost, i.corrupt);
    assert_eq!(o.reflector.auth_failed, 0);
}

#[test]
fn sim_malformed_bytes() {
    let path = Path {
        truncate_back: 0.05,
        garbage: 0.1,
        ..Path::clean()
    };
    let o = run(Scenario::new(10, path));
    let e = check_exact(&o);
    let i = &o.log.injected;
    assert!(i.truncated > 5 && i.short > 10, "{i:?}");
    assert_eq!(e.malformed, i.truncated + i.short);
    assert_eq!(e.unknown, i.forged);
    assert_eq!(e.lost, i.truncated);
}

#[test]
fn sim_send_queue_full() {
    let path = Path {
        send_fail: 0.1,
        ..Path::clean()
    };
    let o = run(Scenario::new(11, path));
    let e = check_exact(&o);
    let failed = o.log.injected.send_failed;
    assert!(failed > 10, "{failed}");
    assert_eq!((o.sender.counters().sent, e.received), (300, 300));
    // A failed send used its period: the 300 probes took 300 + failed periods.
    let start = o.sender.measurement_start().unwrap();
    let (_, last) = o.log.records.last().unwrap();
    let after = Span::from_ns((299 + failed as i64) * 10 * MS + BUILD_NS);
    assert_eq!(last.tx1, start + after);
}

#[test]
fn sim_stop_midway() {
    let path = Path {
        stop_at: Some(T0 + 1_500 * MS),
        ..Path::clean()
    };
    let o = run(Scenario::new(12, path));
    let e = check_exact(&o);
    let sent = o.sender.counters().sent;
    assert!((100..160).contains(&sent), "{sent}");
    assert_eq!((e.received, e.lost), (sent, 0));
    let stop = Instant::from_ns(T0 + 1_500 * MS);
    assert!(o.log.records.iter().all(|(_, r)| r.tx1 < stop));
    // The last probe waited for its follow-up until the timeout (1 s, the
    // longest an interrupted run drains).
    let (_, last) = o.log.records.last().unwrap();
    assert_eq!(
        Instant::from_ns(o.log.finished_at),
        last.rx2 + Span::from_ns(1_000 * MS + 1)
    );
}
