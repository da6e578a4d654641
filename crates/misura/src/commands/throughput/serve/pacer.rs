//! Pacing the server's own sending (reverse and bidir tests).

use super::request::Spec;
use super::state::Shared;
use std::time::{Duration, Instant};

/// Paces a sender to `rate_bps`: sleeps while ahead; never catches up by a
/// burst longer than 10 ms.
pub(super) struct Pacer {
    rate_bps: u64,
    start: Instant,
    credit_ns: i128,
}

impl Pacer {
    pub(super) fn new(rate_bps: u64) -> Pacer {
        Pacer {
            rate_bps,
            start: Instant::now(),
            credit_ns: 0,
        }
    }

    /// Before sending `bytes`; returns when they may go.
    pub(super) fn wait(&mut self, bytes: u64) {
        if self.rate_bps == 0 {
            return;
        }
        let el = self.start.elapsed().as_nanos() as i128;
        if el - self.credit_ns > 10_000_000 {
            self.credit_ns = el - 10_000_000;
        }
        let ahead = self.credit_ns - el;
        if ahead > 200_000 {
            std::thread::sleep(Duration::from_nanos((ahead - 100_000) as u64));
        } else {
            while (self.start.elapsed().as_nanos() as i128) < self.credit_ns {
                std::hint::spin_loop();
            }
        }
        self.credit_ns += bytes as i128 * 8 * 1_000_000_000 / self.rate_bps as i128;
    }
}

/// The rate the server's own sending is paced at.
pub(super) fn send_rate(shared: &Shared, spec: &Spec, parts: u64) -> u64 {
    let r = if spec.rate_bps > 0 {
        spec.rate_bps.min(shared.limits.max_rate_bps)
    } else {
        shared.limits.max_rate_bps
    };
    (r / parts.max(1)).max(1)
}
