//! The wake-up margin of a pacer: how much before a send time an absolute
//! sleep must end so that the thread is running when the send is due.
//!
//! An absolute `clock_nanosleep` returns after its target, late by the
//! timer's slack, the interrupt and the scheduler (tens of µs in a virtual
//! machine, a few µs on bare metal with little slack). The margin is a high
//! quantile of the lateness of the recent wake-ups, so it follows the host
//! as it is now, not a constant guessed in advance.

/// Recent wake-up lateness samples and the margin taken from them.
#[derive(Clone, Debug)]
pub struct WakeMargin {
    window: Vec<u32>,
    next: usize,
    filled: usize,
    since: usize,
    permille: u32,
    max_ns: u64,
    margin_ns: u64,
    scratch: Vec<u32>,
}

/// Samples kept: the last 256 wake-ups.
const WINDOW: usize = 256;

impl WakeMargin {
    /// A margin at quantile `permille`/1000 of the recent lateness, never
    /// above `max_ns`. It is 0 until the first wake-up is recorded.
    pub fn new(permille: u32, max_ns: u64) -> WakeMargin {
        WakeMargin {
            window: vec![0; WINDOW],
            next: 0,
            filled: 0,
            since: 0,
            permille: permille.min(1000),
            max_ns,
            margin_ns: 0,
            scratch: Vec::with_capacity(WINDOW),
        }
    }

    /// The current margin, ns.
    pub fn ns(&self) -> u64 {
        self.margin_ns
    }

    /// One wake-up `late_ns` after its target.
    pub fn record(&mut self, late_ns: u64) {
        self.window[self.next] = late_ns.min(u32::MAX as u64) as u32;
        self.next = (self.next + 1) % WINDOW;
        self.filled = (self.filled + 1).min(WINDOW);
        self.since += 1;
        // Every sample while the window fills, then every 32: sorting 256
        // numbers every 32 wake-ups costs well under 1 % of them.
        if self.filled < WINDOW || self.since >= 32 {
            self.since = 0;
            self.recompute();
        }
    }

    fn recompute(&mut self) {
        self.scratch.clear();
        self.scratch.extend_from_slice(&self.window[..self.filled]);
        self.scratch.sort_unstable();
        let n = self.filled;
        // Nearest rank: the smallest value with at least q·n samples at or below it.
        let rank = (n as u64 * self.permille as u64).div_ceil(1000).max(1) as usize;
        let v = self.scratch[rank.min(n) - 1] as u64;
        self.margin_ns = v.min(self.max_ns);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_until_measured_then_the_quantile() {
        let mut m = WakeMargin::new(990, 1_000_000);
        assert_eq!(m.ns(), 0);
        m.record(30_000);
        assert_eq!(m.ns(), 30_000);
        for _ in 0..1000 {
            m.record(20_000);
        }
        assert_eq!(m.ns(), 20_000, "the old sample has left the window");
    }

    #[test]
    fn rare_outliers_do_not_set_the_margin_but_frequent_ones_do() {
        let mut m = WakeMargin::new(990, 1_000_000);
        // One outlier in 256: p99 stays at the usual lateness.
        for i in 0..2560u64 {
            m.record(if i % 256 == 7 {
                900_000
            } else {
                10_000 + i % 10
            });
        }
        assert!(m.ns() <= 10_009, "{}", m.ns());
        // One in 20: the margin follows them (capped at max).
        let mut m = WakeMargin::new(990, 500_000);
        for i in 0..2560u64 {
            m.record(if i % 20 == 0 { 900_000 } else { 10_000 });
        }
        assert_eq!(m.ns(), 500_000);
    }
}
