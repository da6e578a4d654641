//! The sender's accounting against the simulator's log, datagram by
//! datagram and probe by probe.
//!
//! The expectations come from how each datagram travelled, with the rules
//! of the method:
//! * the first intact copy of a reply to a probe in flight is matched; it
//!   is reordered when a later probe's reply was matched before it; further
//!   copies are duplicates; a copy held back beyond the timeout is late;
//!   corrupted copies fail the HMAC, cut ones are malformed;
//! * a probe is lost when no intact copy of its reply arrived in time;
//! * the reflector's follow-up in reply j (the precise transmit stamp of
//!   the reply it sent just before, p) is taken when p's reply was matched
//!   before j's: p's record then carries the precise stamp, any other
//!   record the reply's own Timestamp field. (This holds while the return
//!   path keeps its order, as in every scenario here but the late one,
//!   whose held-back replies are never matched.)

use std::collections::{BTreeMap, BTreeSet};

use misura_measure::stamp_client::ReplyMatch;
use misura_measure::stamp_sender::{ReplyOutcome, SenderCounters, WARMUP_PROBES};
use misura_measure::time::Instant;

use super::{Kind, Outcome};

/// Asserts every datagram's outcome, every released record and every
/// counter; returns the totals for the scenario's own checks.
pub fn check_exact(o: &Outcome) -> SenderCounters {
    let log = &o.log;
    let c = o.sender.counters();
    let authenticated = o.path.key.is_some();
    let first = WARMUP_PROBES;
    assert_eq!(c.sent as usize, log.truth.len(), "one truth per probe sent");

    // Each datagram, in the order the sender read them.
    let mut first_copy: BTreeMap<u32, usize> = BTreeMap::new();
    let mut extra: BTreeMap<u32, u16> = BTreeMap::new();
    let mut reordered = BTreeSet::new();
    let mut highest = None;
    // What the log implies; `sent` is checked against the truths above.
    let mut e = SenderCounters {
        sent: c.sent,
        ..SenderCounters::default()
    };
    for (i, d) in log.deliveries.iter().enumerate() {
        let want = match d.kind {
            Kind::Original | Kind::Duplicate if first_copy.contains_key(&d.seq) => {
                *extra.entry(d.seq).or_default() += 1;
                e.duplicates += 1;
                ReplyOutcome::Probe(ReplyMatch::Duplicate)
            }
            Kind::Original | Kind::Duplicate => {
                first_copy.insert(d.seq, i);
                let r = highest.is_some_and(|h| d.seq < h);
                if r {
                    reordered.insert(d.seq);
                }
                highest = highest.max(Some(d.seq));
                ReplyOutcome::Probe(ReplyMatch::Matched { reordered: r })
            }
            Kind::Late => {
                e.late += 1;
                ReplyOutcome::Probe(ReplyMatch::Late)
            }
            Kind::Corrupt => {
                e.auth_failed += 1;
                ReplyOutcome::AuthFailed
            }
            Kind::Truncated | Kind::Short | Kind::Forged if authenticated => {
                e.auth_failed += 1;
                ReplyOutcome::AuthFailed
            }
            Kind::Truncated | Kind::Short => {
                e.malformed += 1;
                ReplyOutcome::Malformed
            }
            Kind::Forged => {
                e.unknown += 1;
                ReplyOutcome::Probe(ReplyMatch::Unknown)
            }
        };
        assert_eq!(d.outcome, want, "datagram {i}: {d:?}");
    }
    e.reordered = reordered.len() as u64;

    // Follow-ups: reply j brings the precise stamp of the reply before it.
    let mut precise = BTreeSet::new();
    for (&j, &dj) in &first_copy {
        let p = log.truth[&j].prev_reply;
        if let Some(p) = p.filter(|&p| p >= first && o.path.two_step) {
            if first_copy.get(&p).is_some_and(|&dp| dp < dj) {
                precise.insert(p);
            }
        }
    }
    e.follow_ups = precise.len() as u64;

    // Released in sequence order, one record per probe.
    let seqs: Vec<u32> = log.records.iter().map(|(_, r)| r.seq).collect();
    let want: Vec<u32> = (first..first + c.sent as u32).collect();
    assert_eq!(seqs, want, "records in order, none missing");
    for (_, r) in &log.records {
        let t = &log.truth[&r.seq];
        let at = Instant::from_ns;
        assert_eq!((r.tx1, r.tx2), (at(t.tx1), at(t.tx2)), "probe {}", r.seq);
        assert_eq!(
            (r.tx_kernel, r.tx_hw),
            (t.tx_kernel, None),
            "probe {}",
            r.seq
        );
        let Some(&i) = first_copy.get(&r.seq) else {
            assert!(r.lost, "probe {} had no intact reply", r.seq);
            assert_eq!(
                (r.reflector_rx, r.reflector_tx, r.duplicates),
                (None, None, 0)
            );
            e.lost += 1;
            continue;
        };
        e.received += 1;
        if t.tx_kernel.is_none() {
            e.tx_stamp_missing += 1;
        }
        let d = &log.deliveries[i];
        let p = precise.contains(&r.seq);
        assert!(!r.lost, "probe {}", r.seq);
        assert_eq!(
            (r.rx_kernel, r.rx2, r.rx_hw),
            (Some(at(d.kernel_rx)), at(d.rx2), None)
        );
        assert_eq!(r.reflector_rx, t.reflector_rx, "probe {}", r.seq);
        assert_eq!(r.reflector_tx_precise, p, "probe {}", r.seq);
        let tx = if p { t.reflector_leave } else { t.reflector_ts };
        assert_eq!(r.reflector_tx, tx, "probe {}", r.seq);
        assert_eq!(r.reflector_seq, t.reflector_seq);
        assert_eq!(
            (r.response_bytes as usize, r.sender_ttl),
            (t.reply_len, Some(64))
        );
        assert_eq!(r.duplicates, extra.get(&r.seq).copied().unwrap_or(0));
        assert_eq!(r.reordered, reordered.contains(&r.seq), "probe {}", r.seq);
    }

    assert_eq!(c, e, "counters");
    assert_eq!(o.sender.outstanding(), 0, "everything released");
    e
}
