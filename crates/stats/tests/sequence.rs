//! Sequence tracker tests, including a comparison with an unbounded
//! reference model (a hash set) that applies the same window rule.

use std::collections::HashSet;

use misura_stats::{Arrival, SequenceCounts, SequenceTracker};
use proptest::prelude::*;

#[test]
fn in_order() {
    let mut t = SequenceTracker::new();
    assert_eq!(t.missing(0), 0);
    for s in 0..1000 {
        assert_eq!(t.record(s), Arrival::InOrder);
    }
    assert_eq!(
        t.counts(),
        SequenceCounts {
            received: 1000,
            duplicates: 0,
            reordered: 0,
            too_old: 0,
            highest: Some(999)
        }
    );
    assert_eq!(t.missing(0), 0);
}

#[test]
fn gaps_reorder_duplicates() {
    let mut t = SequenceTracker::new();
    assert_eq!(t.record(0), Arrival::InOrder);
    assert_eq!(t.record(1), Arrival::InOrder);
    assert_eq!(t.record(3), Arrival::InOrder); // 2 skipped
    assert_eq!(t.record(4), Arrival::InOrder);
    assert_eq!(t.missing(0), 1);
    assert_eq!(t.record(2), Arrival::Reordered);
    assert_eq!(t.missing(0), 0);
    assert_eq!(t.record(2), Arrival::Duplicate);
    assert_eq!(t.record(4), Arrival::Duplicate);
    assert_eq!(t.record(0), Arrival::Duplicate);
    let c = t.counts();
    assert_eq!(
        (c.received, c.reordered, c.duplicates, c.too_old),
        (5, 1, 3, 0)
    );
    assert_eq!(c.highest, Some(4));
    // Sender started at 10? Then nothing from 10 on was seen yet.
    assert_eq!(t.missing(10), 0);
}

#[test]
fn first_arrival_not_at_zero() {
    let mut t = SequenceTracker::with_window(64);
    assert_eq!(t.record(1000), Arrival::InOrder);
    assert_eq!(t.record(990), Arrival::Reordered);
    assert_eq!(t.missing(990), 9, "991..=999");
    assert_eq!(t.missing(0), 999, "0..=999 less the two seen");
}

#[test]
fn too_old() {
    let mut t = SequenceTracker::with_window(64);
    assert_eq!(t.window(), 64);
    t.record(0);
    t.record(100);
    assert_eq!(t.record(0), Arrival::TooOld, "100 − 0 ≥ 64");
    assert_eq!(t.record(36), Arrival::TooOld, "100 − 36 = 64: just outside");
    assert_eq!(
        t.record(37),
        Arrival::Reordered,
        "100 − 37 = 63: oldest in the window"
    );
    assert_eq!(t.record(37), Arrival::Duplicate);
    let c = t.counts();
    assert_eq!(
        (c.received, c.too_old, c.reordered, c.duplicates),
        (3, 2, 1, 1)
    );
}

#[test]
fn window_slides_over_more_than_its_size() {
    // Window 100 → ring of 128 bits: jumps shorter than the window, between
    // window and ring size, and longer than the ring all need their slots
    // cleared, or old numbers would read as duplicates of new ones.
    let mut t = SequenceTracker::with_window(100);
    for s in 0..1000u64 {
        if s % 7 != 0 {
            assert_eq!(t.record(s), Arrival::InOrder);
        }
    }
    // Multiples of 7 within the last 100 (900..=999) can still arrive.
    assert_eq!(t.record(994), Arrival::Reordered);
    assert_eq!(t.record(903), Arrival::Reordered);
    assert_eq!(t.record(896), Arrival::TooOld);
    assert_eq!(t.record(995), Arrival::Duplicate);

    for jump in [50u64, 110, 128, 129, 10_000] {
        let h = t.counts().highest.unwrap();
        let new = h + jump;
        assert_eq!(t.record(new), Arrival::InOrder);
        // Every number between the old and new highest that is still in the
        // window is unseen, whatever its ring slot held before.
        for s in (h + 1).max(new.saturating_sub(99))..new {
            assert_eq!(t.record(s), Arrival::Reordered, "jump {jump}, seq {s}");
            assert_eq!(t.record(s), Arrival::Duplicate, "jump {jump}, seq {s}");
        }
    }
}

#[test]
fn window_zero_is_one() {
    let mut t = SequenceTracker::with_window(0);
    assert_eq!(t.window(), 1);
    assert_eq!(t.record(5), Arrival::InOrder);
    assert_eq!(t.record(5), Arrival::Duplicate);
    assert_eq!(t.record(4), Arrival::TooOld);
}

#[test]
fn extreme_sequence_numbers() {
    let mut t = SequenceTracker::with_window(64);
    t.record(0);
    assert_eq!(t.record(u64::MAX), Arrival::InOrder);
    assert_eq!(t.missing(0), u64::MAX - 1, "2^64 numbers, 2 seen");
    assert_eq!(t.record(u64::MAX - 1), Arrival::Reordered);
}

/// Unbounded model: the same classification rule with a hash set.
fn reference(window: u64, seqs: &[u64]) -> (Vec<Arrival>, SequenceCounts, HashSet<u64>) {
    let mut seen = HashSet::new();
    let mut c = SequenceCounts::default();
    let mut out = Vec::new();
    for &s in seqs {
        let a = match c.highest {
            None => Arrival::InOrder,
            Some(h) if s > h => Arrival::InOrder,
            Some(h) if h - s >= window => Arrival::TooOld,
            Some(_) if seen.contains(&s) => Arrival::Duplicate,
            Some(_) => Arrival::Reordered,
        };
        match a {
            Arrival::InOrder => {
                seen.insert(s);
                c.received += 1;
                c.highest = Some(s);
            }
            Arrival::Reordered => {
                seen.insert(s);
                c.received += 1;
                c.reordered += 1;
            }
            Arrival::Duplicate => c.duplicates += 1,
            Arrival::TooOld => c.too_old += 1,
        }
        out.push(a);
    }
    (out, c, seen)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn matches_unbounded_reference(
        window in prop_oneof![Just(1usize), Just(63), Just(64), Just(100), Just(130), 1usize..300],
        // Mostly increasing with jitter, duplicates and big jumps.
        steps in prop::collection::vec((-150i64..200, 0u8..10), 1..600),
    ) {
        let mut seqs = Vec::new();
        let mut base: i64 = 1000;
        for (d, kind) in steps {
            base += if kind == 0 { 500 } else { 1 };
            seqs.push((base + d).max(0) as u64);
            if kind == 1 {
                seqs.push(*seqs.last().unwrap());
            }
        }
        let mut t = SequenceTracker::with_window(window);
        let got: Vec<Arrival> = seqs.iter().map(|&s| t.record(s)).collect();
        let (want, counts, seen) = reference(window as u64, &seqs);
        prop_assert_eq!(got, want);
        prop_assert_eq!(t.counts(), counts.clone());
        // `missing` assumes nothing below `first_expected` was recorded, so
        // compare for starting points at or below the lowest number seen.
        let h = counts.highest.unwrap();
        let lowest = *seen.iter().min().unwrap();
        for first in [0u64, lowest / 2, lowest] {
            let direct = (first..=h).filter(|s| !seen.contains(s)).count() as u64;
            prop_assert_eq!(t.missing(first), direct);
        }
    }
}
