//! The one ring of things sent and not yet accounted for, shared by the
//! one-way session's frames ([`crate::inflight`]) and the STAMP sender's
//! probes ([`crate::stamp_client`]).
//!
//! Entries are numbered by a running index `k` (the one-way frames' own
//! sequence number; the n-th probe of a STAMP session) and live in a fixed
//! ring of a power-of-two size, so matching an arrival is one array access
//! and memory stays bounded however long the run. Entries leave in index
//! order. The ring classifies every arrival with the same counters for both
//! users:
//!
//! - *matched*, and *reordered* when a higher index arrived before it
//!   (RFC 4737 §3, as `stats::sequence`);
//! - *duplicate*: its entry already had its arrival (RFC 5560);
//! - *late*: its entry was already released (timed out: counted lost);
//! - *unknown*: an index never sent.
//!
//! `stats::sequence` classifies arrivals with a bit per number and knows
//! nothing of what was sent; this ring holds the sender's record of each
//! entry (its TX window and stamps), so it can tell late from unknown and
//! hand the record back complete. Nothing here allocates after construction.

/// How an arrival was classified.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// Matched to its entry.
    Matched { reordered: bool },
    /// Its entry already had its arrival.
    Duplicate,
    /// Its entry was already released (declared lost, or a copy of one
    /// accounted for).
    Late,
    /// An index this run never sent.
    Unknown,
}

/// What a [`SeqRing`] counted: arrivals that were not a first match, and
/// matches that came out of order.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct RingCounts {
    pub duplicates: u64,
    pub late: u64,
    pub unknown: u64,
    pub reordered: u64,
}

#[derive(Copy, Clone, Debug, Default)]
struct Entry<T> {
    item: T,
    arrived: bool,
}

/// The ring. See the [module documentation](self).
#[derive(Debug)]
pub struct SeqRing<T> {
    entries: Vec<Entry<T>>,
    mask: u64,
    oldest: u64,
    next: u64,
    highest: Option<u64>,
    counts: RingCounts,
}

impl<T: Copy + Default> SeqRing<T> {
    /// Room for `capacity` entries (rounded up to a power of two, at least
    /// 2); the first entry gets index `first`.
    pub fn new(capacity: usize, first: u64) -> SeqRing<T> {
        let cap = capacity.max(2).next_power_of_two();
        SeqRing {
            entries: vec![Entry::default(); cap],
            mask: cap as u64 - 1,
            oldest: first,
            next: first,
            highest: None,
            counts: RingCounts::default(),
        }
    }

    pub fn capacity(&self) -> usize {
        self.entries.len()
    }

    /// Entries pushed and not yet released.
    pub fn outstanding(&self) -> u64 {
        self.next - self.oldest
    }

    /// True when another push would overwrite an unreleased entry.
    pub fn is_full(&self) -> bool {
        self.outstanding() >= self.entries.len() as u64
    }

    /// The index the next pushed entry gets.
    pub fn next_index(&self) -> u64 {
        self.next
    }

    /// The index of the oldest unreleased entry (`next_index()` when none).
    pub fn oldest_index(&self) -> u64 {
        self.oldest
    }

    /// Add an entry at `next_index()`; the ring must not be full.
    pub fn push(&mut self, item: T) -> u64 {
        assert!(!self.is_full(), "sequence ring full");
        let k = self.next;
        self.entries[(k & self.mask) as usize] = Entry {
            item,
            arrived: false,
        };
        self.next += 1;
        k
    }

    fn live(&self, k: u64) -> bool {
        k >= self.oldest && k < self.next
    }

    /// The unreleased entry `k`.
    pub fn get(&self, k: u64) -> Option<&T> {
        self.live(k)
            .then(|| &self.entries[(k & self.mask) as usize].item)
    }

    /// The unreleased entry `k`, to fill in.
    pub fn get_mut(&mut self, k: u64) -> Option<&mut T> {
        let i = (k & self.mask) as usize;
        self.live(k).then(|| &mut self.entries[i].item)
    }

    /// Whether entry `k` is unreleased and had its arrival.
    pub fn arrived(&self, k: u64) -> bool {
        self.live(k) && self.entries[(k & self.mask) as usize].arrived
    }

    /// Entry `k` arrived: classified and counted. On `Matched` the entry is
    /// marked and the caller fills it in with [`SeqRing::get_mut`].
    pub fn arrive(&mut self, k: u64) -> Arrival {
        if k >= self.next {
            self.counts.unknown += 1;
            return Arrival::Unknown;
        }
        if k < self.oldest {
            self.counts.late += 1;
            return Arrival::Late;
        }
        let e = &mut self.entries[(k & self.mask) as usize];
        if e.arrived {
            self.counts.duplicates += 1;
            return Arrival::Duplicate;
        }
        e.arrived = true;
        let reordered = self.highest.is_some_and(|h| k < h);
        self.counts.reordered += u64::from(reordered);
        self.highest = Some(self.highest.map_or(k, |h| h.max(k)));
        Arrival::Matched { reordered }
    }

    /// The oldest unreleased entry and whether it arrived.
    pub fn oldest(&self) -> Option<(&T, bool)> {
        (self.oldest < self.next).then(|| {
            let e = &self.entries[(self.oldest & self.mask) as usize];
            (&e.item, e.arrived)
        })
    }

    /// Release the oldest entry: it and whether it arrived (not: lost).
    pub fn pop(&mut self) -> Option<(T, bool)> {
        (self.oldest < self.next).then(|| {
            let e = self.entries[(self.oldest & self.mask) as usize];
            self.oldest += 1;
            (e.item, e.arrived)
        })
    }

    pub fn counts(&self) -> RingCounts {
        self.counts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrivals_are_matched_reordered_duplicate_late_or_unknown() {
        let mut r: SeqRing<u32> = SeqRing::new(3, 10);
        assert_eq!(r.capacity(), 4);
        for v in 0..4 {
            r.push(v);
        }
        assert!(r.is_full());
        assert_eq!(r.arrive(11), Arrival::Matched { reordered: false });
        assert_eq!(r.arrive(10), Arrival::Matched { reordered: true });
        assert_eq!(r.arrive(10), Arrival::Duplicate);
        assert_eq!(r.arrive(14), Arrival::Unknown);
        assert_eq!(r.pop(), Some((0, true)));
        assert_eq!(r.pop(), Some((1, true)));
        assert_eq!(r.pop(), Some((2, false)));
        assert_eq!(r.arrive(12), Arrival::Late);
        assert_eq!(r.oldest(), Some((&3, false)));
        assert_eq!(
            (r.outstanding(), r.oldest_index(), r.next_index()),
            (1, 13, 14)
        );
        *r.get_mut(13).unwrap() = 7;
        assert_eq!((r.get(13), r.get(12)), (Some(&7), None));
        assert_eq!(
            r.counts(),
            RingCounts {
                duplicates: 1,
                late: 1,
                unknown: 1,
                reordered: 1
            }
        );
    }
}
