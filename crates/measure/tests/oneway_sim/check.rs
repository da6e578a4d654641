//! The accounting every simulated run must satisfy, derived event by event
//! from the simulation's own log: what was sent, what reached the RX port
//! and when, which TX stamps were read, and when each record came out.

use super::{Delivery, Outcome, Stray, What};
use misura_measure::oneway_session::Received;
use misura_measure::time::{Instant, Span};
use misura_measure::{Arrival, Pattern, SizeOrder, TxStampMatch};

/// Every check below, in one call.
pub fn accounting(o: &Outcome) {
    let n = o.frames.len();
    assert_eq!(o.records.len(), n, "one record per frame sent");
    for (k, r) in o.records.iter().enumerate() {
        assert_eq!(r.seq, k as u64, "records come out in sequence order");
    }
    sizes(o);
    let first = arrivals(o);
    let stamped = stamps(o);
    records(o, &first, &stamped);
    windows_bracket(o, &first);
    counters(o);
    if o.plan.pattern == Pattern::Periodic {
        schedule(o);
    }
}

fn sizes(o: &Outcome) {
    let p = &o.plan;
    let n = p.sizes.len() as u64;
    let per_block = p.expected_frames.unwrap_or(u64::MAX).div_ceil(n).max(1);
    for r in &o.records {
        let want = match p.order {
            SizeOrder::Interleaved => r.seq % n,
            SizeOrder::Blocks => (r.seq / per_block).min(n - 1),
        } as usize;
        assert_eq!(r.size_index as usize, want, "size of frame {}", r.seq);
        assert_eq!(o.frames[r.seq as usize].size_index, want);
        let payload = p.sizes[want];
        assert_eq!(r.payload_bytes as usize, payload);
        assert_eq!(
            r.frame_bytes as usize,
            misura_wire::frame_bytes(payload, p.vlan)
        );
    }
}

fn released(o: &Outcome, seq: u64) -> u64 {
    o.frames[seq as usize]
        .released_iter
        .expect("every frame sent is released")
}

/// What each delivery must have been: matched while the frame's record was
/// open (in the same turn, the receive comes before the records are
/// polled), a duplicate if matched already, late once the record is closed.
/// Returns, per frame, the delivery that matched it and whether it came
/// after a higher sequence number.
fn arrivals(o: &Outcome) -> Vec<Option<(&Delivery, bool)>> {
    let mut first: Vec<Option<(&Delivery, bool)>> = vec![None; o.frames.len()];
    let mut highest: Option<u64> = None;
    for d in &o.deliveries {
        let want = match d.what {
            What::Probe(seq) => {
                let slot = &mut first[seq as usize];
                let a = if d.iter > released(o, seq) {
                    Arrival::Late
                } else if slot.is_some() {
                    Arrival::Duplicate
                } else {
                    let reordered = highest.is_some_and(|h| seq < h);
                    highest = Some(highest.map_or(seq, |h| h.max(seq)));
                    *slot = Some((d, reordered));
                    Arrival::Matched { reordered }
                };
                Received::Probe(a)
            }
            What::Stray(Stray::OtherSession | Stray::OtherEtherType | Stray::Outgoing) => {
                Received::Foreign
            }
            What::Stray(Stray::Warmup) => Received::OtherStream,
            What::Stray(Stray::Truncated | Stray::Runt | Stray::Garbage) => Received::Malformed,
            What::Stray(Stray::UnknownSeq) => Received::Probe(Arrival::Unknown),
        };
        assert_eq!(d.result, want, "delivery {d:?}");
    }
    first
}

/// The same for TX stamps: the first stamp read while the record is open
/// is the frame's; later ones are `Again`; after it closed, unmatched.
fn stamps(o: &Outcome) -> Vec<Option<i64>> {
    let mut stamped: Vec<Option<i64>> = vec![None; o.frames.len()];
    let mut seen = vec![false; o.frames.len()];
    for st in &o.stamps {
        let want = match st.seq {
            Some(seq) if (seq as usize) < seen.len() && st.iter <= released(o, seq) => {
                let k = seq as usize;
                if seen[k] {
                    TxStampMatch::Again
                } else {
                    seen[k] = true;
                    stamped[k] = st.software;
                    TxStampMatch::First
                }
            }
            _ => TxStampMatch::NotInFlight,
        };
        assert_eq!(st.result, want, "stamp {st:?}");
    }
    stamped
}

fn records(o: &Outcome, first: &[Option<(&Delivery, bool)>], stamped: &[Option<i64>]) {
    for r in &o.records {
        let k = r.seq as usize;
        let f = &o.frames[k];
        let at = Instant::from_ns;
        assert_eq!((r.tx1, r.tx2), (at(f.tx1), at(f.tx2)), "TX window of {k}");
        assert_eq!(
            r.tx_kernel,
            stamped[k].map(Instant::from_ns),
            "TX stamp of {k}"
        );
        assert_eq!(r.tx_hw, None);
        match first[k] {
            None => {
                assert!(r.lost, "frame {k} was never received in time");
                assert!(!r.reordered);
            }
            Some((d, reordered)) => {
                assert!(!r.lost, "frame {k} was received");
                assert_eq!(r.rx1, at(d.last_empty), "RX1 of {k}: the last empty poll");
                assert_eq!(r.rx2, at(d.rx2));
                assert_eq!(r.rx_kernel, Some(Instant::from_ns(d.arrive_host)));
                assert_eq!(r.reordered, reordered, "reordering of {k}");
            }
        }
    }
}

/// The method's promise, checked against physics: the frame left inside
/// its TX window and arrived inside its RX window, so Bul ≤ true latency ≤
/// Wul. Not across a clock step, where one clock no longer measures both.
fn windows_bracket(o: &Outcome, first: &[Option<(&Delivery, bool)>]) {
    for r in o.records.iter().filter(|r| !r.lost) {
        let f = &o.frames[r.seq as usize];
        let (d, _) = first[r.seq as usize].expect("received");
        if d.steps_before != f.steps_before {
            continue;
        }
        assert!(f.tx1 <= f.depart_host && f.depart_host <= f.tx2, "{f:?}");
        let arrived = Instant::from_ns(d.arrive_host);
        assert!(r.rx1 < arrived && arrived <= r.rx2, "{r:?} {d:?}");
        let latency = Span::from_ns(d.arrive_host - f.depart_host);
        assert_eq!(Span::from_ns(d.arrive_true - f.depart_true), latency);
        assert!(
            r.bul().unwrap() <= latency && latency <= r.wul().unwrap(),
            "{r:?}"
        );
        if r.tx_kernel == Some(Instant::from_ns(f.depart_host)) {
            assert_eq!(r.kernel_latency(), Some(latency));
        }
    }
}

fn counters(o: &Outcome) {
    let c = &o.counters;
    let results = |want: Received| o.deliveries.iter().filter(|d| d.result == want).count();
    let stamps = |want: TxStampMatch| o.stamps.iter().filter(|s| s.result == want).count();
    assert_eq!(c.sent, o.frames.len() as u64);
    assert_eq!(c.duplicates, o.arrivals(Arrival::Duplicate));
    assert_eq!(c.late, o.arrivals(Arrival::Late));
    assert_eq!(c.unknown, o.arrivals(Arrival::Unknown));
    let reordered = o.records.iter().filter(|r| r.reordered).count() as u64;
    assert_eq!(c.reordered, reordered);
    assert_eq!(
        c.foreign as usize,
        results(Received::Foreign) + results(Received::OtherStream)
    );
    assert_eq!(c.malformed as usize, results(Received::Malformed));
    assert_eq!(c.send_retries, o.send_refusals);
    assert_eq!(c.tx_stamps_read as usize, o.stamps.len());
    assert_eq!(c.tx_stamps_again as usize, stamps(TxStampMatch::Again));
    assert_eq!(
        c.tx_stamps_unmatched as usize,
        stamps(TxStampMatch::NotInFlight)
    );
    assert_eq!(c.tx_stamp_errors, 0);
    assert_eq!(c.started.as_ns(), o.started_host);
    assert_eq!(
        c.last_send,
        Instant::from_ns(o.frames.last().map_or(0, |f| f.tx2))
    );
    assert_eq!(c.ended.as_ns(), o.finished_at);
    assert_eq!(
        c.stalls, o.full_turns,
        "stalls are the turns the ring was full"
    );
}

/// The slot of the periodic grid in which frame `k` was handed out.
pub fn slot(o: &Outcome, k: usize) -> i64 {
    (o.frames[k].polled_at - o.first_due()).div_euclid(o.plan.period.as_ns())
}

/// Postponement without catch-up: never before the first slot, never two
/// frames in one period, and every slot given up is counted.
fn schedule(o: &Outcome) {
    let slots: Vec<i64> = (0..o.frames.len()).map(|k| slot(o, k)).collect();
    let Some(&first) = slots.first() else {
        return;
    };
    assert!(first >= 0, "nothing leaves before the first slot");
    let mut gaps = 0;
    let mut skipped = first as u64;
    for w in slots.windows(2) {
        assert!(w[1] > w[0], "two frames in one period: {w:?}");
        gaps += u64::from(w[1] > w[0] + 1);
        skipped += (w[1] - w[0] - 1) as u64;
    }
    let c = &o.counters;
    assert!(c.postponed >= gaps);
    assert_eq!(c.postponed == 0, gaps == 0 && first == 0);
    if o.plan.duration.is_none() {
        // Count-bound or stopped: the schedule is not asked after the last frame.
        assert_eq!(c.skipped_slots, skipped);
    } else {
        assert!(c.skipped_slots >= skipped);
    }
}
