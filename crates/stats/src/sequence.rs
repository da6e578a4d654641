//! Receive-side sequence bookkeeping: loss, reordering and duplication.
//!
//! The definitions follow the IETF IPPM metrics: a packet is *reordered* when
//! it arrives with a sequence number lower than one already seen (RFC 4737
//! §3, "Type-P-Reordered", with the next-expected number being one above the
//! highest seen), a *duplicate* when the same number was already received
//! (RFC 5560), and *lost* when it never arrives (RFC 7680, here counted as
//! the numbers missing from the received set).
//!
//! Memory is bounded whatever the run length: the tracker only remembers a
//! sliding window of the `window` most recent sequence numbers, ending at the
//! highest seen, as one bit each in a ring allocated up front. A number
//! further behind than the window cannot be classified (it could be a late
//! original or a late duplicate); it is reported as [`Arrival::TooOld`] and
//! counted, never guessed.

use serde::{Deserialize, Serialize};

/// Default window: 65 536 sequence numbers (8 KiB of bitmap). At 1 Mpps that
/// still classifies packets delayed by up to 65 ms behind their successors.
pub const DEFAULT_WINDOW: usize = 65_536;

/// How one arrival was classified.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// New and higher than every number seen so far (gaps allowed: skipped
    /// numbers are merely missing until they turn up).
    InOrder,
    /// New, but lower than the highest number seen.
    Reordered,
    /// Already received.
    Duplicate,
    /// Further below the highest number than the window reaches: cannot tell
    /// new from duplicate; counted in [`SequenceCounts::too_old`] only.
    TooOld,
}

/// Totals kept by a [`SequenceTracker`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SequenceCounts {
    /// Unique sequence numbers received (in order or reordered).
    pub received: u64,
    /// Arrivals of a number already received.
    pub duplicates: u64,
    /// New numbers that arrived after a higher one.
    pub reordered: u64,
    /// Arrivals too far behind the window to classify.
    pub too_old: u64,
    /// Highest sequence number seen.
    pub highest: Option<u64>,
}

/// Sliding-window sequence tracker. See the [module documentation](self).
#[derive(Clone, Debug)]
pub struct SequenceTracker {
    /// Ring of `bits.len() * 64 >= window` bits; number `s` lives at bit
    /// `s % ring_bits`. Only bits for numbers inside the window are
    /// meaningful; the ring is at least as large as the window so that no
    /// two numbers in the window share a bit.
    bits: Vec<u64>,
    ring_bits: u64,
    window: u64,
    counts: SequenceCounts,
}

impl Default for SequenceTracker {
    fn default() -> Self {
        Self::new()
    }
}

impl SequenceTracker {
    /// Tracker with the [`DEFAULT_WINDOW`] of 65 536 numbers.
    pub fn new() -> Self {
        Self::with_window(DEFAULT_WINDOW)
    }

    /// Tracker remembering the `n` numbers ending at the highest seen
    /// (`highest − n + 1 ..= highest`). `n == 0` is treated as 1 (the highest
    /// number itself must always be remembered to detect its duplicates).
    /// The bitmap is allocated here, once.
    pub fn with_window(n: usize) -> Self {
        let window = n.max(1) as u64;
        let words = window.div_ceil(64) as usize;
        SequenceTracker {
            bits: vec![0; words],
            ring_bits: words as u64 * 64,
            window,
            counts: SequenceCounts::default(),
        }
    }

    /// The window size in sequence numbers.
    pub fn window(&self) -> usize {
        self.window as usize
    }

    fn slot(&self, seq: u64) -> (usize, u64) {
        let bit = seq % self.ring_bits;
        ((bit / 64) as usize, 1u64 << (bit % 64))
    }

    fn is_set(&self, seq: u64) -> bool {
        let (w, m) = self.slot(seq);
        self.bits[w] & m != 0
    }

    fn set(&mut self, seq: u64) {
        let (w, m) = self.slot(seq);
        self.bits[w] |= m;
    }

    /// Forget the bits of `from ..= to` (numbers about to enter the window):
    /// their slots still hold numbers one ring length earlier.
    fn clear_range(&mut self, from: u64, to: u64) {
        if to - from + 1 >= self.ring_bits {
            self.bits.fill(0);
            return;
        }
        let mut s = from;
        while s <= to {
            let bit = s % self.ring_bits;
            let word = (bit / 64) as usize;
            let offset = bit % 64;
            // Clear as many bits of this word as the range covers at once.
            let span = (64 - offset).min(to - s + 1);
            let mask = if span == 64 {
                u64::MAX
            } else {
                ((1u64 << span) - 1) << offset
            };
            self.bits[word] &= !mask;
            s += span;
        }
    }

    /// Classify one arrival and update the counts. Never allocates.
    pub fn record(&mut self, seq: u64) -> Arrival {
        let Some(highest) = self.counts.highest else {
            // First arrival: nothing to compare with, so it is in order.
            // The ring is all zeros, so the window behind it reads as unseen.
            self.set(seq);
            self.counts.highest = Some(seq);
            self.counts.received += 1;
            return Arrival::InOrder;
        };
        if seq > highest {
            self.clear_range(highest + 1, seq);
            self.set(seq);
            self.counts.highest = Some(seq);
            self.counts.received += 1;
            Arrival::InOrder
        } else if highest - seq >= self.window {
            self.counts.too_old += 1;
            Arrival::TooOld
        } else if self.is_set(seq) {
            self.counts.duplicates += 1;
            Arrival::Duplicate
        } else {
            self.set(seq);
            self.counts.received += 1;
            self.counts.reordered += 1;
            Arrival::Reordered
        }
    }

    /// The totals so far.
    pub fn counts(&self) -> SequenceCounts {
        self.counts.clone()
    }

    /// Sequence numbers never seen from `first_expected` through the highest
    /// seen: the losses, given that the sender sent every number from
    /// `first_expected` on (0 before anything arrived).
    ///
    /// Computed as `(highest − first_expected + 1) − received`, saturating at
    /// 0, so it assumes nothing below `first_expected` was recorded. Numbers
    /// that arrived [`Arrival::TooOld`] are not in `received` (they may have
    /// been duplicates), so if some were genuine late originals this
    /// overstates the loss by at most `too_old`. Packets sent after the
    /// highest received one are not counted: they cannot be told from
    /// packets still in flight.
    pub fn missing(&self, first_expected: u64) -> u64 {
        match self.counts.highest {
            Some(h) if h >= first_expected => {
                let span = u128::from(h - first_expected) + 1;
                let missing = span.saturating_sub(u128::from(self.counts.received));
                u64::try_from(missing).unwrap_or(u64::MAX)
            }
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clear_range_matches_bitwise_clear() {
        for window in [1usize, 63, 64, 65, 200] {
            let mut t = SequenceTracker::with_window(window);
            t.bits.fill(u64::MAX);
            let ring = t.ring_bits;
            for (from, to) in [
                (0u64, 0u64),
                (3, 70),
                (60, 130),
                (ring - 5, ring + 9),
                (17, 17 + ring),
            ] {
                t.bits.fill(u64::MAX);
                t.clear_range(from, to);
                for s in 0..ring * 2 {
                    let should_clear =
                        to - from + 1 >= ring || (from..=to).any(|c| c % ring == s % ring);
                    assert_eq!(
                        t.is_set(s),
                        !should_clear,
                        "window {window} range {from}..={to} s {s}"
                    );
                }
            }
        }
    }
}
