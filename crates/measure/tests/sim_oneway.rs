//! Deterministic simulation of the one-way measuring loop: `OnewaySession`
//! driven through a simulated cable and SUT (`oneway_sim`) with a virtual
//! clock and fixed seeds. Every scenario first passes the event-by-event
//! accounting check (`oneway_sim::check::accounting`), then checks its own
//! fault against what the simulator did. No root, no sockets, no sleeping.

mod oneway_sim;

use misura_measure::oneway_session::{OnewaySession, Received, RxMeta};
use misura_measure::time::{Instant, Span};
use misura_measure::{Arrival, Pattern, SizeOrder};
use oneway_sim::check::{accounting, slot};
use oneway_sim::{plan, run, Faults, Outcome, Stray, What, MS, US};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

const SEEDS: [u64; 3] = [1, 2, 0x5EED];

fn seqs(o: &Outcome, pick: impl Fn(&oneway_sim::FrameTruth) -> bool) -> Vec<u64> {
    (0..o.frames.len() as u64)
        .filter(|&k| pick(&o.frames[k as usize]))
        .collect()
}

fn extra_copies(o: &Outcome) -> u64 {
    o.frames
        .iter()
        .map(|f| u64::from(f.copies.saturating_sub(1)))
        .sum()
}

#[test]
fn sim_oneway_clean() {
    for seed in SEEDS {
        let o = run(plan(), Faults::default(), seed);
        accounting(&o);
        let c = &o.counters;
        assert_eq!(c.sent, 1000);
        assert!(!o.was_stopped);
        assert_eq!(o.lost(), Vec::<u64>::new());
        assert_eq!((c.duplicates, c.late, c.reordered, c.unknown), (0, 0, 0, 0));
        assert_eq!(
            (c.foreign, c.malformed, c.stalls, c.send_retries),
            (0, 0, 0, 0)
        );
        assert_eq!((c.postponed, c.skipped_slots, c.tx_stamps_again), (0, 0, 0));
        for (k, (r, f)) in o.records.iter().zip(&o.frames).enumerate() {
            // Each frame goes in its own slot, as soon as the loop comes round.
            let due = o.first_due() + k as i64 * o.plan.period.as_ns();
            assert!((0..US).contains(&(f.polled_at - due)), "frame {k} late");
            // The kernel stamps measure exactly the cable: 20 µs, 8 ns a byte, ≤ 2 µs jitter.
            assert_eq!(r.tx_kernel, Some(Instant::from_ns(f.depart_host)));
            let fixed = 20 * US + 8 * i64::from(r.frame_bytes);
            let jitter = r.kernel_latency().unwrap().as_ns() - fixed;
            assert!((0..2 * US).contains(&jitter), "{r:?}");
        }
        // It ends as soon as the last frame is in, not at the drain timeout.
        let last = o.records.last().unwrap();
        assert!(Instant::from_ns(o.end_host) - last.rx2 < Span::from_ns(US));
    }
}

#[test]
fn sim_oneway_loss() {
    for seed in SEEDS {
        let faults = Faults {
            loss: 0.05,
            drop_seqs: vec![0, 999],
            ..Faults::default()
        };
        let o = run(plan(), faults, seed);
        accounting(&o);
        let dropped = seqs(&o, |f| f.dropped);
        assert!(dropped.len() > 20, "the scenario loses frames");
        assert_eq!(o.lost(), dropped);
        assert_eq!((o.counters.late, o.counters.duplicates), (0, 0));
        // The last frame is lost: the run waits its whole timeout, no more.
        let waited = o.end_host - o.frames[999].tx2;
        assert!(waited > o.plan.timeout.as_ns() && waited < o.plan.timeout.as_ns() + 5 * US);
    }
}

#[test]
fn sim_oneway_reordering() {
    for (seed, pattern, order) in [
        (1, Pattern::Periodic, SizeOrder::Interleaved),
        (2, Pattern::Poisson, SizeOrder::Blocks),
        (3, Pattern::Burst { frames: 4 }, SizeOrder::Interleaved),
    ] {
        let mut p = plan();
        p.pattern = pattern;
        p.order = order;
        let faults = Faults {
            reorder: 0.1,
            reorder_delay_ns: 150 * US,
            ..Faults::default()
        };
        let o = run(p, faults, seed);
        accounting(&o);
        assert_eq!((o.lost(), o.counters.late), (vec![], 0));
        // Derived again from the arrival instants alone.
        let mut by_arrival: Vec<_> = o.deliveries.iter().collect();
        by_arrival.sort_by_key(|d| d.arrive_true);
        let mut highest = None;
        let mut want = 0;
        for d in by_arrival {
            if let What::Probe(k) = d.what {
                want += u64::from(highest.is_some_and(|h| k < h));
                highest = highest.max(Some(k));
            }
        }
        assert!(want > 20, "the scenario reorders frames");
        assert_eq!(o.counters.reordered, want, "{pattern:?}");
    }
}

#[test]
fn sim_oneway_duplicates() {
    for seed in SEEDS {
        let faults = Faults {
            duplicate: 0.2,
            // Half the frames wait for their TX stamp, so some copies find
            // the record still open (duplicate) and others closed (late).
            slow_tx_stamp: 0.5,
            ..Faults::default()
        };
        let o = run(plan(), faults, seed);
        accounting(&o);
        let c = &o.counters;
        assert_eq!((o.lost(), c.reordered), (vec![], 0));
        assert!(c.duplicates > 0 && c.late > 0, "{c:?}");
        assert_eq!(c.duplicates + c.late, extra_copies(&o));
    }
}

#[test]
fn sim_oneway_missing_tx_stamps() {
    for seed in SEEDS {
        let faults = Faults {
            tx_stamp_missing: 0.2,
            ..Faults::default()
        };
        let o = run(plan(), faults, seed);
        accounting(&o);
        let unstamped: Vec<u64> = (o.records.iter())
            .filter(|r| r.tx_kernel.is_none())
            .map(|r| r.seq)
            .collect();
        assert!(unstamped.len() > 100);
        assert_eq!(unstamped, seqs(&o, |f| f.stamp_withheld));
        // Received all the same: kept, just without kernel latency.
        assert_eq!(o.lost(), Vec::<u64>::new());
        assert_eq!(o.counters.tx_stamps_read as usize, 1000 - unstamped.len());
    }
}

#[test]
fn sim_oneway_tx_stamped_again_by_a_bridge_port() {
    for seed in SEEDS {
        // A slow SUT (250 µs) keeps frames in flight across the next send,
        // when the error queue is read again: the second stamp is `again`.
        let faults = Faults {
            tx_stamp_again: 0.3,
            reorder: 1.0,
            reorder_delay_ns: 250 * US,
            ..Faults::default()
        };
        let o = run(plan(), faults, seed);
        accounting(&o);
        let c = &o.counters;
        let made = o.frames.iter().filter(|f| f.stamped_again).count();
        assert!(made > 200);
        assert_eq!(o.stamps.len() + o.unread_stamps, 1000 + made);
        assert!(
            o.unread_stamps <= 1,
            "only the last frame's can stay unread"
        );
        assert_eq!(c.tx_stamps_again as usize, o.stamps.len() - 1000);
        assert_eq!(c.tx_stamps_unmatched, 0);
        // The TX port's stamp, the first, is the one used.
        for (r, f) in o.records.iter().zip(&o.frames) {
            assert_eq!(r.tx_kernel, Some(Instant::from_ns(f.depart_host)));
        }
    }
}

#[test]
fn sim_oneway_foreign_and_malformed() {
    for seed in SEEDS {
        let faults = Faults {
            strays: 0.3,
            ..Faults::default()
        };
        let o = run(plan(), faults, seed);
        accounting(&o);
        let delivered = |kinds: &[Stray]| {
            let is =
                |d: &&oneway_sim::Delivery| matches!(d.what, What::Stray(k) if kinds.contains(&k));
            o.deliveries.iter().filter(is).count() as u64
        };
        let c = &o.counters;
        // A (late or forged) warm-up frame is foreign to the measurement.
        let foreign = [
            Stray::OtherSession,
            Stray::OtherEtherType,
            Stray::Outgoing,
            Stray::Warmup,
        ];
        let malformed = [Stray::Truncated, Stray::Runt, Stray::Garbage];
        assert_eq!(c.foreign, delivered(&foreign));
        assert_eq!(c.malformed, delivered(&malformed));
        assert_eq!(c.unknown, delivered(&[Stray::UnknownSeq]));
        assert!(c.foreign > 20 && c.malformed > 20 && c.unknown > 5);
        assert!(delivered(&[Stray::Warmup]) > 5);
        // Stray stamps on the error queue are not taken for a frame's.
        assert_eq!(c.tx_stamps_unmatched as usize, o.stamps.len() - 1000);
        // And none of it disturbs the measurement.
        assert_eq!(
            (o.lost(), c.late, c.duplicates, c.reordered),
            (vec![], 0, 0, 0)
        );
    }
}

#[test]
fn sim_oneway_random_bytes_never_panic() {
    let mut rng = SmallRng::seed_from_u64(9);
    let mut p = plan();
    p.expect_tx_stamp = true;
    let mut s = OnewaySession::new(&p, misura_measure::time::Instant::from_ns(0)).unwrap();
    let valid = oneway_sim::probe_bytes(0);
    let (mut probes, mut other) = (0u64, 0u64);
    for i in 0..100_000 {
        let mut b = if i % 2 == 0 {
            // A valid probe with a few bytes flipped and a random length.
            let mut b = valid.clone();
            for _ in 0..rng.random_range(1..4) {
                let at = rng.random_range(0..b.len());
                b[at] ^= rng.random_range(1..=255u8);
            }
            b
        } else {
            let mut b = vec![0u8; rng.random_range(0..200)];
            rng.fill(&mut b[..]);
            b
        };
        b.truncate(rng.random_range(0..=b.len()));
        match s.handle_received(&b, RxMeta::default()) {
            Received::Probe(a) => {
                assert_eq!(a, Arrival::Unknown, "nothing was sent");
                probes += 1;
            }
            Received::OtherStream => other += 1,
            _ => {}
        }
        s.handle_tx_stamp(&b, Some(misura_measure::time::Instant::from_ns(1)), None);
    }
    let c = s.counters();
    // Frames of another stream (warm-up) are counted as foreign as well.
    assert!(other <= c.foreign);
    assert_eq!(c.foreign + c.malformed + probes, 100_000);
    assert_eq!(c.unknown, probes);
    assert_eq!(
        (c.tx_stamps_read, c.tx_stamps_unmatched),
        (100_000, 100_000)
    );
}

#[test]
fn sim_oneway_late_frames_and_the_drain_timeout() {
    for seed in SEEDS {
        let faults = Faults {
            late: 0.03,
            // The last two frames are still in the SUT when the drain ends.
            late_seqs: vec![998, 999],
            late_delay_ns: 3 * MS,
            ..Faults::default()
        };
        let o = run(plan(), faults, seed);
        accounting(&o);
        let held = seqs(&o, |f| f.late_by_sut);
        assert!(held.len() > 20);
        assert_eq!(o.lost(), held, "held past the 2 ms timeout: lost");
        // Each arrived afterwards and was counted late, except the last
        // two, which come after the run is over.
        let delivered = |k: u64| o.deliveries.iter().any(|d| d.what == What::Probe(k));
        let arrived: Vec<u64> = held.iter().copied().filter(|&k| delivered(k)).collect();
        assert_eq!(o.counters.late, arrived.len() as u64);
        assert!(held.iter().all(|&k| k >= 970 || delivered(k)));
        assert!(!delivered(998) && !delivered(999));
        let waited = o.end_host - o.frames[999].tx2;
        assert!(waited > o.plan.timeout.as_ns() && waited < o.plan.timeout.as_ns() + 5 * US);
    }
}

#[test]
fn sim_oneway_stop_midway() {
    for seed in SEEDS {
        let faults = Faults {
            stop_after: Some(400),
            ..Faults::default()
        };
        let o = run(plan(), faults.clone(), seed);
        accounting(&o);
        assert!(o.was_stopped);
        assert_eq!(o.counters.sent, 401, "nothing leaves after the stop");
        assert_eq!(
            o.lost(),
            Vec::<u64>::new(),
            "the frame in flight is drained"
        );
        assert!(o.end_host - o.stopped_at.unwrap() < 40 * US);

        // The frame in flight at the stop is lost: the drain gives up at its timeout.
        let o = run(
            plan(),
            Faults {
                drop_seqs: vec![400],
                ..faults
            },
            seed,
        );
        accounting(&o);
        assert!(o.was_stopped);
        assert_eq!((o.counters.sent, o.lost()), (401, vec![400]));
        let waited = o.end_host - o.frames[400].tx2;
        assert!(waited > o.plan.timeout.as_ns() && waited < o.plan.timeout.as_ns() + 5 * US);
    }
}

#[test]
fn sim_oneway_clock_step_forward() {
    for seed in SEEDS {
        let faults = Faults {
            clock_steps: vec![(300, 10 * MS)],
            ..Faults::default()
        };
        let o = run(plan(), faults, seed);
        accounting(&o);
        let c = &o.counters;
        // Frame 300 was in flight: 10 ms older on the host clock than the
        // 2 ms timeout, so lost; its arrival right after is late.
        assert_eq!((o.lost(), c.late), (vec![300], 1));
        // The schedule skips the 100 periods the clock jumped, once, and
        // sends on the new grid: no burst to catch up.
        assert_eq!((c.postponed, c.skipped_slots), (1, 100));
        assert_eq!(slot(&o, 301), slot(&o, 300) + 101);
        assert_eq!(c.sent, 1000);
    }
}

#[test]
fn sim_oneway_clock_step_backward() {
    for seed in SEEDS {
        let faults = Faults {
            clock_steps: vec![(300, -10 * MS)],
            ..Faults::default()
        };
        let o = run(plan(), faults, seed);
        accounting(&o);
        let c = &o.counters;
        assert_eq!(
            (o.lost(), c.late, c.postponed, c.skipped_slots),
            (vec![], 0, 0, 0)
        );
        // Frame 300 arrived "before" it was sent on the stepped clock.
        assert!(o.records[300].wul().unwrap() < Span::ZERO);
        // The schedule waits for the host clock to come back to the next
        // slot: 10 ms more of real time, then on as before.
        assert_eq!(slot(&o, 301), slot(&o, 300) + 1);
        let gap = o.frames[301].depart_true - o.frames[300].depart_true;
        assert!(
            (10 * MS + 99 * US..10 * MS + 101 * US).contains(&gap),
            "{gap}"
        );
    }
}

#[test]
fn sim_oneway_overload_postpones_without_catch_up() {
    for seed in SEEDS {
        let stalls = vec![
            (100, 250 * US),
            (300, MS),
            (500, 1_537 * US),
            (700, 201 * US),
        ];
        let faults = Faults {
            stalls: stalls.clone(),
            send_blocked: 0.05,
            ..Faults::default()
        };
        let o = run(plan(), faults, seed);
        accounting(&o);
        let c = &o.counters;
        assert!(c.send_retries > 20, "send() refused some frames");
        assert_eq!(o.lost(), Vec::<u64>::new());
        // One postponement per stall; the next frame goes in the first
        // period that starts after the stall, never sooner and never two.
        assert_eq!(c.postponed, stalls.len() as u64);
        assert_eq!(o.disruptions.len(), stalls.len());
        let mut skipped = 0;
        for &(k, resumed) in &o.disruptions {
            let k = k as usize;
            let next = (resumed - o.first_due()).div_euclid(o.plan.period.as_ns()) + 1;
            assert_eq!(slot(&o, k + 1), next);
            skipped += (next - slot(&o, k) - 1) as u64;
        }
        assert_eq!(c.skipped_slots, skipped);
        assert_eq!(c.sent, 1000);
    }
}

#[test]
fn sim_oneway_full_ring_holds_frames_back() {
    for seed in SEEDS {
        let mut p = plan();
        p.ring_capacity = 8;
        // Every frame spends 1 ms in the SUT: ten periods, more than the ring holds.
        let faults = Faults {
            reorder: 1.0,
            reorder_delay_ns: MS,
            ..Faults::default()
        };
        let o = run(p, faults, seed);
        accounting(&o);
        assert!(o.counters.stalls > 100);
        assert_eq!(o.lost(), Vec::<u64>::new());
        for k in 8..o.frames.len() {
            let freed = o.frames[k - 8].released_iter.unwrap();
            assert!(freed <= o.frames[k].sent_iter, "frame {k} overran the ring");
        }
    }
}

#[test]
fn sim_oneway_duration_bound() {
    for seed in SEEDS {
        let mut p = plan();
        p.count = None;
        p.expected_frames = None;
        p.duration = Some(misura_measure::time::Span::from_ns(50 * MS));
        let o = run(p, Faults::default(), seed);
        accounting(&o);
        // Slots from 1 ms to 50 ms, the one at 50 ms excluded.
        assert_eq!(o.counters.sent, 490);
        assert!(!o.was_stopped);
        assert_eq!(o.lost(), Vec::<u64>::new());
    }
}
