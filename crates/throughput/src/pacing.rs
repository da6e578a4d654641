//! The paced sender's loop, shared by `misura udp`'s client and `misura
//! serve`'s own sending (reverse udp, reverse tcp): joins the sans-IO pacer
//! (`misura_measure::pacer`: what is due, how long to sleep, the measured
//! wake-up margin) to CLOCK_MONOTONIC and absolute `clock_nanosleep`.
//!
//! The kernel's SO_TXTIME with the fq qdisc is not used: sleeping until
//! shortly before each burst already keeps the client's CPU at or below
//! iperf3's at 1 Gbit/s (issue 10), and the result says which method paced
//! (`method`).

use misura_measure::pacer::{Pacer, PacerConfig, Step};
// An instant on CLOCK_MONOTONIC, as the pacer takes it (`Instant` here is std's).
use misura_measure::time::Instant as Timed;
use misura_report::pacing::Pacing;
use misura_sys::clock::monotonic_ns;
use misura_sys::timer::{self, Wake};
use std::time::Instant;

/// Longest single sleep, so a stop request or the end is seen within it.
const NAP_NS: i64 = 50_000_000;

/// Timer slack the pacing thread asks for (PR_SET_TIMERSLACK; 0 would
/// mean "the default", 50 µs): wake-ups late by the timer, not by design.
const SLACK_NS: u64 = 1;

/// A sender of equal units paced from the moment it is made.
pub struct PacedSender {
    pacer: Pacer,
    spin: bool,
    slack_ns: Option<u64>,
}

impl PacedSender {
    /// Paces `unit_bytes` at `rate_bps` (0: unpaced) on the calling thread,
    /// whose timer slack it lowers; `spin`: every unit at its own time
    /// (`--pacing spin`), else bursts below a sleep's resolution.
    pub fn new(unit_bytes: u64, rate_bps: u64, spin: bool) -> PacedSender {
        let slack_ns = if rate_bps > 0 {
            timer::set_timer_slack_ns(SLACK_NS).ok()
        } else {
            None
        };
        let mut cfg = PacerConfig::new(unit_bytes, rate_bps);
        if spin {
            cfg.spin_share = 0;
        }
        PacedSender {
            spin,
            pacer: Pacer::new(cfg, misura_sys::clock::monotonic()),
            slack_ns: slack_ns.or_else(|| misura_sys::hostinfo::timer_slack_ns().ok()),
        }
    }

    /// Waits until the next unit is due; false once `end`
    /// (CLOCK_MONOTONIC) has passed or `stop()` says so.
    pub fn next(&mut self, end: Timed, stop: impl Fn() -> bool) -> bool {
        let end_ns = end.as_ns();
        // The clock read after a wake-up serves the next turn too.
        let mut woke_at = None;
        loop {
            let now = woke_at.take().unwrap_or_else(monotonic_ns);
            if now >= end_ns || stop() {
                return false;
            }
            match self.pacer.poll(Timed::from_ns(now)) {
                Step::Send { .. } => return true,
                Step::Sleep { until } => {
                    let until_ns = until.as_ns();
                    let target = until_ns.min(now + NAP_NS).min(end_ns);
                    let woke = timer::sleep_until_monotonic(Timed::from_ns(target));
                    let t = monotonic_ns();
                    if target == until_ns && matches!(woke, Ok(Wake::Expired)) {
                        self.pacer.woke(until, Timed::from_ns(t));
                    }
                    woke_at = Some(t);
                }
                Step::Spin { .. } => std::hint::spin_loop(),
            }
        }
    }

    /// The pacer's figures, for the sender `sender` ("client", "server").
    pub fn pacing(&self, sender: &str) -> Pacing {
        Pacing {
            sender: sender.into(),
            method: if self.spin {
                "clock_nanosleep+spin".into()
            } else {
                "clock_nanosleep".into()
            },
            timer_slack_ns: self.slack_ns,
            figures: self.pacer.figures().into(),
        }
    }
}

/// `at` on CLOCK_MONOTONIC (`Instant` is CLOCK_MONOTONIC on Linux).
pub fn monotonic_at(at: Instant) -> Timed {
    let (now_i, now_ns) = (Instant::now(), monotonic_ns());
    Timed::from_ns(match at.checked_duration_since(now_i) {
        Some(d) => now_ns.saturating_add(d.as_nanos().min(i64::MAX as u128) as i64),
        None => now_ns.saturating_sub((now_i - at).as_nanos().min(i64::MAX as u128) as i64),
    })
}
