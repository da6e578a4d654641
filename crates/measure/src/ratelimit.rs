//! Per-source rate limiting for a reflector left running on a network:
//! a token bucket per source address in a table of fixed capacity, so a
//! flood of spoofed sources can neither exhaust memory nor starve the
//! sources already being served. Time is passed in.

use std::collections::HashMap;
use std::hash::Hash;

#[derive(Copy, Clone, Debug)]
struct Bucket {
    tokens_milli: u64,
    last_ns: i64,
}

/// What the limiter decided for one packet.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Admit {
    Yes,
    /// This source is over its rate.
    RateLimited,
    /// The table is full of sources more recently active than its oldest
    /// entry's idle limit: a new source is refused rather than evict a live one.
    TableFull,
}

/// A map of bounded size: a new key is refused when full, unless the entry
/// idle the longest has been idle `idle_ns` (it is then reused). Shared by
/// the limiter and the reflector's per-peer and per-session tables.
#[derive(Debug)]
pub(crate) struct BoundedMap<K, V> {
    capacity: usize,
    idle_ns: i64,
    pub(crate) map: HashMap<K, V>,
}

impl<K: Hash + Eq + Copy, V> BoundedMap<K, V> {
    pub(crate) fn new(capacity: usize, idle_ns: i64) -> Self {
        let capacity = capacity.max(1);
        BoundedMap {
            capacity,
            idle_ns,
            map: HashMap::with_capacity(capacity),
        }
    }

    /// Whether `key` has or can get an entry at `now`; evicts one idle entry
    /// if needed. `last_ns` says when an entry was last used.
    pub(crate) fn make_room(&mut self, key: &K, now: i64, last_ns: impl Fn(&V) -> i64) -> bool {
        if self.map.contains_key(key) || self.map.len() < self.capacity {
            return true;
        }
        let oldest = self
            .map
            .iter()
            .min_by_key(|(_, v)| last_ns(v))
            .map(|(k, v)| (*k, last_ns(v)));
        match oldest {
            Some((k, last)) if now - last >= self.idle_ns => {
                self.map.remove(&k);
                true
            }
            _ => false,
        }
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
    /// at most `capacity` sources; an entry idle for `idle_ns` may be reused.
    pub fn new(rate_per_s: u64, burst: u64, capacity: usize, idle_ns: i64) -> Self {
        SourceLimiter {
            rate_per_s: rate_per_s.max(1),
            burst: burst.max(1),
            table: BoundedMap::new(capacity, idle_ns),
        }
    }

    pub fn sources(&self) -> usize {
        self.table.map.len()
    }

    /// Decide for one packet from `src` at `now`.
    pub fn admit(&mut self, src: K, now: i64) -> Admit {
        if !self.table.make_room(&src, now, |b| b.last_ns) {
            return Admit::TableFull;
        }
        let full = self.burst * 1000;
        let b = self.table.map.entry(src).or_insert(Bucket {
            tokens_milli: full,
            last_ns: now,
        });
        let elapsed = (now - b.last_ns).max(0) as u128;
        let refill = (elapsed * self.rate_per_s as u128 * 1000 / 1_000_000_000) as u64;
        b.tokens_milli = (b.tokens_milli + refill).min(full);
        b.last_ns = now;
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

    #[test]
    fn bucket_allows_burst_then_rate() {
        let mut l = SourceLimiter::new(100, 5, 10, 1_000_000_000);
        let admitted = (0..20).filter(|_| l.admit(1u32, 0) == Admit::Yes).count();
        assert_eq!(admitted, 5, "the burst");
        // 100/s → one token every 10 ms.
        assert_eq!(l.admit(1, 9_000_000), Admit::RateLimited);
        assert_eq!(l.admit(1, 10_000_000), Admit::Yes);
        // Over one second at most rate + burst packets get through.
        let mut l = SourceLimiter::new(100, 5, 10, 1_000_000_000);
        let n = (0..100_000i64)
            .filter(|k| l.admit(7u32, k * 10_000) == Admit::Yes)
            .count();
        assert!(n <= 105 && n >= 100, "{n}");
    }

    #[test]
    fn table_is_bounded_and_live_sources_keep_their_place() {
        let mut l = SourceLimiter::new(10, 1, 3, 1_000_000);
        for s in 0..3u32 {
            assert_eq!(l.admit(s, 0), Admit::Yes);
        }
        // A flood of new sources while the table is live: refused, no growth.
        for s in 100..10_000u32 {
            assert_eq!(l.admit(s, 10), Admit::TableFull);
        }
        assert_eq!(l.sources(), 3);
        // Once an entry has been idle long enough it is reused.
        assert_eq!(l.admit(500, 2_000_000), Admit::Yes);
        assert_eq!(l.sources(), 3);
    }
}
