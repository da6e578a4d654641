//! Per-source rate limiting for a reflector left running on a network:
//! a token bucket per source address in a table of fixed capacity, so a
//! flood of spoofed sources can neither exhaust memory nor starve the
//! sources already being served. Time is passed in.
//!
//! The tables hash with foldhash's quality hasher, seeded at random per
//! table, rather than std's SipHash: a reply looks a source up about ten
//! times (limiter, peers, sessions), and SipHash made those lookups the
//! largest part of the reflector's own time per request (`perf` on
//! `misura reflect`, docs/own-cost.md). A random seed keeps the keys,
//! which a peer chooses, from being aimed at one bucket; the tables are
//! bounded besides.

use crate::time::{Instant, Span};
use std::collections::VecDeque;
use std::hash::Hash;

/// A map whose hasher is seeded at random when it is made.
type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::quality::RandomState>;
/// A set whose hasher is seeded at random when it is made.
type HashSet<K> = std::collections::HashSet<K, foldhash::quality::RandomState>;

#[derive(Copy, Clone, Debug)]
struct Bucket {
    tokens_milli: u64,
    last: Instant,
}

/// What the limiter decided for one packet.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Admit {
    Yes,
    /// This source is over its rate.
    RateLimited,
    /// The table is full of sources that keep talking and none has been
    /// idle long enough: a new source is refused rather than evict one.
    TableFull,
}

/// A map of bounded size that a flood of new keys cannot lock real ones
/// out of. A key seen once is on probation, in a share of the table of its
/// own (half of it) kept in arrival order: a new key always gets in, in
/// O(1), by evicting the oldest key still on probation. A key seen again
/// (a source that keeps talking: a real client, not a spoofed one-shot) is
/// promoted and then evicted only after it has been idle `idle`, and
/// only when the table holds nothing on probation. Shared by the limiter
/// and the reflector's per-peer and per-session tables.
#[derive(Debug)]
pub(crate) struct BoundedMap<K, V> {
    capacity: usize,
    probation_cap: usize,
    idle: Span,
    pub(crate) map: HashMap<K, V>,
    probation: HashSet<K>,
    /// Probation keys in arrival order; may hold keys since promoted or
    /// evicted, skipped when met and compacted when it grows too long.
    arrivals: VecDeque<K>,
}

impl<K: Hash + Eq + Copy, V> BoundedMap<K, V> {
    pub(crate) fn new(capacity: usize, idle: Span) -> Self {
        let capacity = capacity.max(2);
        BoundedMap {
            capacity,
            probation_cap: (capacity / 2).max(1),
            idle,
            // Grown on demand: a large bound costs nothing until used.
            map: HashMap::default(),
            probation: HashSet::default(),
            arrivals: VecDeque::new(),
        }
    }

    /// Whether `key` has or can get an entry at `now` (the caller then
    /// inserts it). `last` says when an entry was last used.
    pub(crate) fn make_room(
        &mut self,
        key: &K,
        now: Instant,
        last: impl Fn(&V) -> Instant,
    ) -> bool {
        self.room_for(key, now, last) != Room::Full
    }

    /// As [`BoundedMap::make_room`], saying whether `key` is new and which
    /// key, if any, was evicted for it.
    pub(crate) fn room_for(
        &mut self,
        key: &K,
        now: Instant,
        last: impl Fn(&V) -> Instant,
    ) -> Room<K> {
        if self.map.contains_key(key) {
            // Seen again: off probation (a set of strays only, once the
            // peers that keep talking are promoted: a lookup spared).
            if !self.probation.is_empty() {
                self.probation.remove(key);
            }
            return Room::Have;
        }
        let mut evicted = None;
        if self.probation.len() >= self.probation_cap || self.map.len() >= self.capacity {
            evicted = self.evict_oldest_on_probation();
            if evicted.is_none() {
                evicted = self.evict_idle(now, &last);
                if evicted.is_none() {
                    return Room::Full;
                }
            }
        }
        self.probation.insert(*key);
        self.arrivals.push_back(*key);
        if self.arrivals.len() > 2 * self.capacity {
            let p = &self.probation;
            self.arrivals.retain(|k| p.contains(k));
        }
        Room::Made(evicted)
    }

    /// Forget `key` (its arrival entry is skipped when met).
    pub(crate) fn remove(&mut self, key: &K) {
        self.map.remove(key);
        self.probation.remove(key);
    }

    fn evict_oldest_on_probation(&mut self) -> Option<K> {
        while let Some(k) = self.arrivals.pop_front() {
            if self.probation.remove(&k) {
                self.map.remove(&k);
                return Some(k);
            }
        }
        None
    }

    /// The table holds only promoted keys: reuse the one idle the longest,
    /// if it has been idle long enough (a scan, only in this case).
    fn evict_idle(&mut self, now: Instant, last: &impl Fn(&V) -> Instant) -> Option<K> {
        let oldest = self
            .map
            .iter()
            .min_by_key(|(_, v)| last(v))
            .map(|(k, v)| (*k, last(v)));
        match oldest {
            Some((k, at)) if now - at >= self.idle => {
                self.map.remove(&k);
                Some(k)
            }
            _ => None,
        }
    }
}

/// What [`BoundedMap::room_for`] found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Room<K> {
    /// The key has an entry.
    Have,
    /// The key may be inserted; the key evicted for it, if one was.
    Made(Option<K>),
    /// No room: the table is full of keys that keep talking.
    Full,
}

/// At most `cap` keys per address (a host's ports), so that one address
/// cycling source ports cannot fill a table that every host shares: a new
/// key of an address at its cap replaces that address's oldest key. O(cap)
/// per change, the cap being small.
#[derive(Debug)]
pub(crate) struct PerAddressCap<A, K> {
    cap: usize,
    keys: HashMap<A, VecDeque<K>>,
}

impl<A: Hash + Eq + Copy, K: Eq + Copy> PerAddressCap<A, K> {
    pub(crate) fn new(cap: usize) -> Self {
        PerAddressCap {
            cap: cap.max(1),
            keys: HashMap::default(),
        }
    }

    /// Note a new key of `addr`; the key of the same address to evict for
    /// it, if the address is at its cap.
    pub(crate) fn add(&mut self, addr: A, key: K) -> Option<K> {
        let list = self.keys.entry(addr).or_default();
        let out = if list.len() >= self.cap {
            list.pop_front()
        } else {
            None
        };
        list.push_back(key);
        out
    }

    /// `key` of `addr` is gone from the table.
    pub(crate) fn forget(&mut self, addr: A, key: &K) {
        if let Some(list) = self.keys.get_mut(&addr) {
            list.retain(|k| k != key);
            if list.is_empty() {
                self.keys.remove(&addr);
            }
        }
    }

    #[cfg(test)]
    pub(crate) fn keys_of(&self, addr: &A) -> usize {
        self.keys.get(addr).map_or(0, VecDeque::len)
    }
}

/// Token buckets keyed by source.
#[derive(Debug)]
pub struct SourceLimiter<K: Hash + Eq + Copy> {
    rate_per_s: u64,
    burst: u64,
    table: BoundedMap<K, Bucket>,
}

impl<K: Hash + Eq + Copy> SourceLimiter<K> {
    /// `rate_per_s` packets per second per source with bursts of `burst`;
    /// at most `capacity` sources; an entry idle for `idle` may be reused.
    pub fn new(rate_per_s: u64, burst: u64, capacity: usize, idle: Span) -> Self {
        SourceLimiter {
            rate_per_s: rate_per_s.max(1),
            burst: burst.max(1),
            table: BoundedMap::new(capacity, idle),
        }
    }

    pub fn sources(&self) -> usize {
        self.table.map.len()
    }

    /// Decide for one packet from `src` at `now`.
    pub fn admit(&mut self, src: K, now: Instant) -> Admit {
        if !self.table.make_room(&src, now, |b| b.last) {
            return Admit::TableFull;
        }
        let full = self.burst * 1000;
        let b = self.table.map.entry(src).or_insert(Bucket {
            tokens_milli: full,
            last: now,
        });
        let elapsed = (now - b.last).as_ns().max(0) as u128;
        let refill = (elapsed * self.rate_per_s as u128 * 1000 / 1_000_000_000) as u64;
        b.tokens_milli = (b.tokens_milli + refill).min(full);
        b.last = now;
        if b.tokens_milli >= 1000 {
            b.tokens_milli -= 1000;
            Admit::Yes
        } else {
            Admit::RateLimited
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ns: i64) -> Instant {
        Instant::from_ns(ns)
    }

    #[test]
    fn bucket_allows_burst_then_rate() {
        let mut l = SourceLimiter::new(100, 5, 10, Span::from_ns(1_000_000_000));
        let admitted = (0..20)
            .filter(|_| l.admit(1u32, at(0)) == Admit::Yes)
            .count();
        assert_eq!(admitted, 5, "the burst");
        // 100/s → one token every 10 ms.
        assert_eq!(l.admit(1, at(9_000_000)), Admit::RateLimited);
        assert_eq!(l.admit(1, at(10_000_000)), Admit::Yes);
        // Over one second at most rate + burst packets get through.
        let mut l = SourceLimiter::new(100, 5, 10, Span::from_ns(1_000_000_000));
        let n = (0..100_000i64)
            .filter(|k| l.admit(7u32, at(k * 10_000)) == Admit::Yes)
            .count();
        assert!((100..=105).contains(&n), "{n}");
    }

    #[test]
    fn table_is_bounded_and_a_flood_of_new_sources_cannot_lock_out_real_ones() {
        let mut l = SourceLimiter::new(1000, 10, 4, Span::from_ns(1_000_000_000));
        // Two real sources, each seen twice: promoted.
        for s in 0..2u32 {
            assert_eq!(l.admit(s, at(0)), Admit::Yes);
            assert_eq!(l.admit(s, at(1)), Admit::Yes);
        }
        // A flood of one-shot sources: each gets in, evicting the oldest
        // one-shot, never a promoted source; the table stays bounded.
        for s in 100..10_000u32 {
            assert_eq!(l.admit(s, at(10)), Admit::Yes, "{s}");
            assert!(l.sources() <= 4);
        }
        // The real sources kept their buckets.
        assert!(l.table.map.contains_key(&0) && l.table.map.contains_key(&1));
        // A new real source during the flood gets in and, seen again, stays.
        assert_eq!(l.admit(7, at(20)), Admit::Yes);
        assert_eq!(l.admit(7, at(21)), Admit::Yes);
        for s in 20_000..20_100u32 {
            assert_eq!(l.admit(s, at(30)), Admit::Yes);
        }
        assert!(l.table.map.contains_key(&7));
    }

    #[test]
    fn a_table_of_talking_sources_refuses_until_one_is_idle() {
        // Capacity 2: one slot on probation, one for a promoted source.
        let mut l = SourceLimiter::new(1000, 10, 2, Span::from_ns(1_000_000));
        assert_eq!(l.admit(1u32, at(0)), Admit::Yes);
        assert_eq!(l.admit(1, at(1)), Admit::Yes); // promoted
        assert_eq!(l.admit(2, at(2)), Admit::Yes);
        assert_eq!(l.admit(2, at(3)), Admit::Yes); // promoted: table all promoted
        assert_eq!(l.admit(3, at(4)), Admit::TableFull);
        // Once one has been idle long enough, it is reused.
        assert_eq!(l.admit(3, at(2_000_000)), Admit::Yes);
        assert_eq!(l.sources(), 2);
    }
}
