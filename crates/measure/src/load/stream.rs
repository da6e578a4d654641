//! Exact per-stream accounting of a load trial in constant memory.
//!
//! Each stream (one per sending core, say) numbers its frames 0, 1, 2, …
//! The receiver classifies every arrival with the IPPM definitions of
//! [`SequenceTracker`] (a fixed bitmap window, allocated up front), so a
//! trial of a billion frames costs the same memory as one of a thousand.
//! The streams are declared up front; an arrival for an undeclared stream
//! is counted, not tracked, so recording never allocates.
//!
//! RFC 2544 §23 gives the receiver a moment after the trial for frames in
//! flight (2 s); an arrival after that deadline is *late*: counted, but
//! not received, so it counts as lost, which is what the RFC asks.
//!
//! Per-core receivers each keep a [`LoadCounter`]; [`LoadCounter::merge`]
//! joins them exactly as long as each stream was seen by one receiver only
//! (RSS and fanout hash a flow to one queue). A stream in two counters
//! cannot be merged exactly without its whole history, so it is refused.

use super::LoadError;
use crate::time::Instant;
use misura_stats::{Arrival, SequenceTracker};
use serde::Serialize;

/// The most streams one counter tracks (8 KiB each at the default window).
pub const MAX_STREAMS: usize = 4096;

#[derive(Clone, Debug)]
struct StreamState {
    id: u16,
    tracker: SequenceTracker,
    late: u64,
}

/// Per-stream receive bookkeeping of one receiver (module documentation).
#[derive(Clone, Debug)]
pub struct LoadCounter {
    /// Sorted by id.
    streams: Vec<StreamState>,
    window: usize,
    deadline: Option<Instant>,
    unknown_stream: u64,
}

/// One stream's totals at the end of a trial.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct StreamTotals {
    pub stream: u16,
    pub sent: u64,
    /// Distinct frames received before the deadline.
    pub received: u64,
    /// `sent − received`: never arrived, arrived late, or too far behind
    /// the window to be told from a duplicate.
    pub lost: u64,
    pub duplicated: u64,
    pub reordered: u64,
    pub late: u64,
    pub too_old: u64,
}

/// All streams' totals and their sum.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LoadTotals {
    pub streams: Vec<StreamTotals>,
    /// The sum over the streams (its `stream` field is 0).
    pub total: StreamTotals,
    /// Arrivals for streams nobody declared (foreign traffic).
    pub unknown_stream: u64,
    /// `total.lost / total.sent`, 0 when nothing was sent.
    pub loss_ratio: f64,
}

impl LoadCounter {
    /// A counter for `streams`, each with a window of `window` sequence
    /// numbers (allocated here).
    pub fn new(streams: &[u16], window: usize) -> Result<LoadCounter, LoadError> {
        super::check_range(
            "streams per receiver",
            streams.len() as f64,
            1.0,
            MAX_STREAMS as f64,
        )?;
        super::check_range(
            "sequence window (frames)",
            window as f64,
            1.0,
            (1u64 << 27) as f64,
        )?;
        let mut ids = streams.to_vec();
        ids.sort_unstable();
        ids.dedup();
        Ok(LoadCounter {
            streams: ids
                .into_iter()
                .map(|id| StreamState {
                    id,
                    tracker: SequenceTracker::with_window(window),
                    late: 0,
                })
                .collect(),
            window,
            deadline: None,
            unknown_stream: 0,
        })
    }

    /// Arrivals after `deadline` are late (RFC 2544 §23's wait after
    /// the trial).
    pub fn set_deadline(&mut self, deadline: Instant) {
        self.deadline = Some(deadline);
    }

    /// One arrival of frame `seq` of `stream` at `rx`. `None` for a late
    /// frame or an undeclared stream. Never allocates.
    pub fn record(&mut self, stream: u16, seq: u64, rx: Instant) -> Option<Arrival> {
        let Ok(i) = self.streams.binary_search_by_key(&stream, |s| s.id) else {
            self.unknown_stream += 1;
            return None;
        };
        let s = &mut self.streams[i];
        if self.deadline.is_some_and(|d| rx > d) {
            s.late += 1;
            return None;
        }
        Some(s.tracker.record(seq))
    }

    /// The sequence window of every stream: fixed at construction.
    pub fn window(&self) -> usize {
        self.window
    }

    /// Bytes of bitmap held: fixed at construction.
    pub fn bitmap_bytes(&self) -> usize {
        self.streams.len() * self.window.div_ceil(64) * 8
    }

    /// Join another receiver's counter into this one.
    pub fn merge(&mut self, other: LoadCounter) -> Result<(), LoadError> {
        for o in &other.streams {
            if let Ok(i) = self.streams.binary_search_by_key(&o.id, |s| s.id) {
                let mine = &self.streams[i];
                if mine.tracker.counts().highest.is_some() && o.tracker.counts().highest.is_some() {
                    return Err(LoadError::StreamInTwoCounters { stream: o.id });
                }
            }
        }
        if self.streams.len() + other.streams.len() > 2 * MAX_STREAMS {
            return Err(LoadError::Inconsistent {
                what: "merge",
                why: format!("more than {} streams", 2 * MAX_STREAMS),
            });
        }
        self.unknown_stream += other.unknown_stream;
        for o in other.streams {
            match self.streams.binary_search_by_key(&o.id, |s| s.id) {
                Ok(i) => {
                    let mine = &mut self.streams[i];
                    // At most one of them saw frames (checked above).
                    let late = mine.late + o.late;
                    if o.tracker.counts().highest.is_some() {
                        *mine = o;
                    }
                    mine.late = late;
                }
                Err(i) => self.streams.insert(i, o),
            }
        }
        Ok(())
    }

    /// The totals, given what the senders say they sent per stream
    /// (streams absent from `sent` sent nothing).
    pub fn finish(&self, sent: &[(u16, u64)]) -> LoadTotals {
        let mut out = LoadTotals {
            unknown_stream: self.unknown_stream,
            ..LoadTotals::default()
        };
        let mut ids: Vec<u16> = self
            .streams
            .iter()
            .map(|s| s.id)
            .chain(sent.iter().map(|s| s.0))
            .collect();
        ids.sort_unstable();
        ids.dedup();
        for id in ids {
            let n_sent: u64 = sent.iter().filter(|s| s.0 == id).map(|s| s.1).sum();
            let mut t = StreamTotals {
                stream: id,
                sent: n_sent,
                ..StreamTotals::default()
            };
            if let Ok(i) = self.streams.binary_search_by_key(&id, |s| s.id) {
                let s = &self.streams[i];
                let c = s.tracker.counts();
                t.received = c.received;
                t.duplicated = c.duplicates;
                t.reordered = c.reordered;
                t.too_old = c.too_old;
                t.late = s.late;
            }
            t.lost = t.sent.saturating_sub(t.received);
            let sum = &mut out.total;
            sum.sent += t.sent;
            sum.received += t.received;
            sum.lost += t.lost;
            sum.duplicated += t.duplicated;
            sum.reordered += t.reordered;
            sum.late += t.late;
            sum.too_old += t.too_old;
            out.streams.push(t);
        }
        if out.total.sent > 0 {
            out.loss_ratio = out.total.lost as f64 / out.total.sent as f64;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_counts_with_loss_reorder_duplicates_and_late() {
        let mut c = LoadCounter::new(&[7], 1024).unwrap();
        c.set_deadline(Instant::from_ns(1_000));
        for seq in [0, 1, 3, 2, 2, 5] {
            c.record(7, seq, Instant::from_ns(10));
        }
        assert_eq!(c.record(7, 6, Instant::from_ns(2_000)), None); // late
        assert_eq!(c.record(9, 0, Instant::from_ns(10)), None); // unknown stream
        let t = c.finish(&[(7, 8)]);
        let s = &t.streams[0];
        assert_eq!((s.sent, s.received, s.lost), (8, 5, 3)); // 4, 6, 7 lost
        assert_eq!((s.duplicated, s.reordered, s.late), (1, 1, 1));
        assert_eq!(t.unknown_stream, 1);
        assert!((t.loss_ratio - 3.0 / 8.0).abs() < 1e-12);
    }

    #[test]
    fn a_million_frames_in_constant_memory() {
        let mut c = LoadCounter::new(&[0, 1], 4096).unwrap();
        let before = (c.window(), c.bitmap_bytes());
        let mut sent = [0u64; 2];
        for k in 0..1_000_000u64 {
            let stream = (k % 2) as usize;
            let seq = sent[stream];
            sent[stream] += 1;
            // Every 1000th frame of a stream is lost, every 777th arrives twice.
            if seq % 1000 == 999 {
                continue;
            }
            c.record(stream as u16, seq, Instant::from_ns(0));
            if seq % 777 == 0 {
                c.record(stream as u16, seq, Instant::from_ns(0));
            }
        }
        assert_eq!((c.window(), c.bitmap_bytes()), before);
        let t = c.finish(&[(0, sent[0]), (1, sent[1])]);
        assert_eq!(t.total.sent, 1_000_000);
        assert_eq!(t.total.lost, 1000);
        let dups = (0..500_000u64)
            .filter(|s| s % 777 == 0 && s % 1000 != 999)
            .count() as u64;
        assert_eq!(t.total.duplicated, 2 * dups);
        assert_eq!(t.total.reordered, 0);
    }

    #[test]
    fn per_core_counters_merge_exactly() {
        let mut all = LoadCounter::new(&[1, 2, 3], 256).unwrap();
        let mut cores = [
            LoadCounter::new(&[1, 2, 3], 256).unwrap(),
            LoadCounter::new(&[1, 2, 3], 256).unwrap(),
        ];
        for seq in 0..10_000u64 {
            for stream in 1..=3u16 {
                if (seq + stream as u64) % 97 == 0 {
                    continue;
                }
                let core = if stream == 2 { 1 } else { 0 };
                cores[core].record(stream, seq, Instant::from_ns(0));
                all.record(stream, seq, Instant::from_ns(0));
            }
        }
        let [a, b] = cores;
        let mut merged = a;
        merged.merge(b).unwrap();
        let sent = [(1, 10_000), (2, 10_000), (3, 10_000)];
        assert_eq!(merged.finish(&sent), all.finish(&sent));
        assert!(merged.finish(&sent).total.lost > 300);
    }

    #[test]
    fn a_stream_seen_by_two_receivers_is_refused() {
        let mut a = LoadCounter::new(&[4], 64).unwrap();
        let mut b = LoadCounter::new(&[4], 64).unwrap();
        a.record(4, 0, Instant::from_ns(0));
        b.record(4, 1, Instant::from_ns(0));
        assert_eq!(
            a.merge(b),
            Err(LoadError::StreamInTwoCounters { stream: 4 })
        );
        assert!(LoadCounter::new(&[], 64).is_err());
        assert!(LoadCounter::new(&[1], 0).is_err());
    }
}
