//! The open-loop schedule of a batched load sender, and the line rate.
//!
//! Slot `k` of a stream at `r` frames/s is due at `start + ⌊k · 10⁹ / r⌋` ns,
//! computed afresh for every `k` in integer arithmetic (the rate is held in
//! micro-frames per second), so no rounding accumulates and nothing the
//! sender did moves a later slot. Open loop: the SUT's answers never slow
//! the schedule down, as RFC 2544 §24 and every load test assume.
//!
//! A sender that falls behind (a batch took too long, the NIC queue was
//! full) may send its due slots back to back, but only those of the last
//! `max_backlog_ns`: older slots are skipped and counted, and the schedule
//! records that the tester, not the SUT, limited the trial. The schedule
//! thus never bursts to catch up beyond the backlog and never stops.
//!
//! Latency is measured inside the load (RFC 8219 §7.2 wants at least 500
//! tagged frames per trial): every N-th slot carries a timestamped frame, so
//! the latency stream is the load stream and stays open-loop too.

use super::{check_range, LoadError, MAX_LINK_BPS, MAX_RATE_FPS};
use crate::time::{Instant, Span};
use serde::Serialize;

/// Preamble and start-of-frame delimiter (8 bytes) plus the minimum
/// inter-frame gap (12 bytes): what every Ethernet frame costs on the wire
/// beyond its own bytes.
pub const ETHERNET_OVERHEAD_BYTES: u64 = 20;
/// The 802.1Q tag.
pub const VLAN_TAG_BYTES: u64 = 4;
/// Smallest and largest frame accepted (64 B up to 9216 B jumbo), incl. FCS.
pub const MIN_FRAME_BYTES: u64 = 64;
pub const MAX_FRAME_BYTES: u64 = 9216;

/// The theoretical maximum frame rate of a link (RFC 2544 Appendix A):
/// `link_bps / ((frame + tag + 20) · 8)`. `frame_bytes` is the untagged
/// frame including the FCS; `vlan` adds the 4-byte tag.
pub fn line_rate_fps(frame_bytes: u64, link_bps: f64, vlan: bool) -> Result<f64, LoadError> {
    check_range(
        "frame size (bytes incl. FCS)",
        frame_bytes as f64,
        MIN_FRAME_BYTES as f64,
        MAX_FRAME_BYTES as f64,
    )?;
    check_range("link speed (bits/s)", link_bps, 1.0, MAX_LINK_BPS)?;
    let tag = if vlan { VLAN_TAG_BYTES } else { 0 };
    Ok(link_bps / ((frame_bytes + tag + ETHERNET_OVERHEAD_BYTES) * 8) as f64)
}

/// The `N` of "every N-th slot carries a latency frame" that yields at
/// least `tagged` latency frames in a trial of `duration` at `rate_fps`
/// (RFC 8219 §7.2: ≥ 500). At least 1.
pub fn latency_every_for(rate_fps: f64, duration: Span, tagged: u64) -> u64 {
    let slots = (rate_fps * duration.as_ns().max(0) as f64 / 1e9).floor() as u64;
    (slots / tagged.max(1)).max(1)
}

/// What a [`RateSchedule`] did, for the result.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RateFigures {
    pub offered_fps: f64,
    /// Slots handed to the sender and reported sent.
    pub sent: u64,
    /// Slots given up because the sender was more than the backlog behind.
    pub skipped: u64,
    /// Some slot was skipped: the tester could not keep the offered rate,
    /// so loss or a low rate in this trial is not the SUT's.
    pub tester_limited: bool,
    /// Sent frames over the time from the start to the last `due` call.
    pub achieved_fps: f64,
}

/// Open-loop slot schedule (module documentation).
#[derive(Clone, Debug)]
pub struct RateSchedule {
    /// Rate in frames per 10⁶ s: slot `k` is due `⌊k·10¹⁵ / this⌋` ns in.
    rate_ufps: u128,
    offered_fps: f64,
    start: Instant,
    max_backlog: Span,
    latency_every: Option<u64>,
    /// The next slot to send.
    next: u64,
    sent: u64,
    skipped: u64,
    last_now: Instant,
}

impl RateSchedule {
    /// A schedule whose slot 0 is due at `start`.
    pub fn new(
        rate_fps: f64,
        start: Instant,
        max_backlog: Span,
    ) -> Result<RateSchedule, LoadError> {
        check_range("offered rate (frames/s)", rate_fps, 1e-3, MAX_RATE_FPS)?;
        check_range("sender backlog (ns)", max_backlog.as_ns() as f64, 0.0, 1e10)?;
        Ok(RateSchedule {
            rate_ufps: (rate_fps * 1e6).round() as u128,
            offered_fps: rate_fps,
            start,
            max_backlog,
            latency_every: None,
            next: 0,
            sent: 0,
            skipped: 0,
            last_now: start,
        })
    }

    /// Every `n`-th slot (0, n, 2n, …) carries a latency frame; `None` or 0: none.
    pub fn with_latency_every(mut self, n: Option<u64>) -> RateSchedule {
        self.latency_every = n.filter(|&n| n > 0);
        self
    }

    /// When slot `k` is due.
    pub fn due_at(&self, k: u64) -> Instant {
        let off = k as u128 * 1_000_000_000_000_000 / self.rate_ufps;
        self.start
            .saturating_add(Span::from_ns(i64::try_from(off).unwrap_or(i64::MAX)))
    }

    /// How many slots are due by `t`: the `k` with `due_at(k) ≤ t`.
    fn due_by(&self, t: Instant) -> u64 {
        let el = (t - self.start).as_ns();
        if el < 0 {
            return 0;
        }
        // ⌊k·10¹⁵/r⌋ ≤ el  ⇔  k·10¹⁵ < (el+1)·r.
        let n = ((el as u128 + 1) * self.rate_ufps).div_ceil(1_000_000_000_000_000);
        u64::try_from(n).unwrap_or(u64::MAX)
    }

    /// Frames due at `now` and not yet sent: the sender sends up to this
    /// many, slots [`next_slot`](Self::next_slot) onwards, and reports them
    /// with [`on_sent`](Self::on_sent). Slots older than the backlog are
    /// skipped here.
    pub fn due(&mut self, now: Instant) -> u64 {
        self.last_now = self.last_now.max(now);
        let oldest_kept = self.due_by(now - self.max_backlog - Span::from_ns(1));
        if oldest_kept > self.next {
            self.skipped += oldest_kept - self.next;
            self.next = oldest_kept;
        }
        self.due_by(now).saturating_sub(self.next)
    }

    /// The slot the next frame sent fills.
    pub fn next_slot(&self) -> u64 {
        self.next
    }

    /// Whether slot `k` carries a latency frame.
    pub fn carries_latency(&self, k: u64) -> bool {
        self.latency_every.is_some_and(|n| k % n == 0)
    }

    /// `n` frames of the due ones left.
    pub fn on_sent(&mut self, n: u64) {
        self.next += n;
        self.sent += n;
    }

    pub fn offered_fps(&self) -> f64 {
        self.offered_fps
    }

    pub fn skipped(&self) -> u64 {
        self.skipped
    }

    pub fn tester_limited(&self) -> bool {
        self.skipped > 0
    }

    /// The figures, with the achieved rate over `start .. now`.
    pub fn figures(&self, now: Instant) -> RateFigures {
        let el = (now - self.start).as_ns().max(0);
        RateFigures {
            offered_fps: self.offered_fps,
            sent: self.sent,
            skipped: self.skipped,
            tester_limited: self.tester_limited(),
            achieved_fps: if el > 0 {
                self.sent as f64 * 1e9 / el as f64
            } else {
                0.0
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_time::{at, span};

    #[test]
    fn line_rates_of_rfc_2544_appendix_b() {
        let g1 = line_rate_fps(64, 1e9, false).unwrap();
        assert!((g1 - 1_488_095.238).abs() < 0.01, "{g1}");
        let g10 = line_rate_fps(64, 10e9, false).unwrap();
        assert!((g10 - 14_880_952.38).abs() < 0.1, "{g10}");
        let big = line_rate_fps(1518, 1e9, false).unwrap();
        assert!((big - 81_274.38).abs() < 0.01, "{big}");
        let tagged = line_rate_fps(64, 1e9, true).unwrap();
        assert!((tagged - 1e9 / (88.0 * 8.0)).abs() < 1e-6);
        assert!(matches!(
            line_rate_fps(63, 1e9, false),
            Err(LoadError::OutOfRange { what, .. }) if what.starts_with("frame size")
        ));
        assert!(line_rate_fps(64, f64::NAN, false).is_err());
    }

    #[test]
    fn slots_are_due_on_the_exact_grid() {
        // 3 frames/s: due at 0, 333 333 333, 666 666 666, 1 s, …
        let s = RateSchedule::new(3.0, at(1000), span(0)).unwrap();
        assert_eq!(s.due_at(1), at(1000 + 333_333_333));
        assert_eq!(s.due_at(3), at(1000 + 1_000_000_000));
        assert_eq!(s.due_by(at(999)), 0);
        assert_eq!(s.due_by(at(1000)), 1);
        assert_eq!(s.due_by(at(1000 + 333_333_332)), 1);
        assert_eq!(s.due_by(at(1000 + 333_333_333)), 2);
        // A billion slots later nothing has drifted.
        let fast = RateSchedule::new(14_880_952.380952, at(0), span(0)).unwrap();
        let t = fast.due_at(1_000_000_000);
        assert_eq!(fast.due_by(t), 1_000_000_001);
        assert_eq!(fast.due_by(t - span(1)), 1_000_000_000);
    }

    #[test]
    fn a_sender_on_time_sends_everything_and_achieves_the_rate() {
        let mut s = RateSchedule::new(1e6, at(0), span(100_000)).unwrap();
        // Batches every 50 µs for 1 s.
        let mut now = 0;
        while now <= 1_000_000_000 {
            let n = s.due(at(now));
            s.on_sent(n);
            now += 50_000;
        }
        let f = s.figures(at(1_000_000_000));
        assert_eq!(f.sent, 1_000_001);
        assert_eq!(f.skipped, 0);
        assert!(!f.tester_limited);
        assert!((f.achieved_fps - 1e6).abs() < 2.0, "{}", f.achieved_fps);
    }

    #[test]
    fn a_late_sender_skips_only_beyond_the_backlog_and_never_stops() {
        let mut s = RateSchedule::new(1e6, at(0), span(100_000)).unwrap();
        assert_eq!(s.due(at(0)), 1);
        s.on_sent(1);
        // Stalled for 1 ms: 1000 slots are due, only the last 100 µs worth
        // (101 slots, both ends inclusive) may go.
        let n = s.due(at(1_000_000));
        assert_eq!(n, 101);
        assert_eq!(s.skipped(), 899);
        assert!(s.tester_limited());
        // It sends only 10 of them; the rest stay due.
        s.on_sent(10);
        assert_eq!(s.due(at(1_000_000)), 91);
        s.on_sent(91);
        assert_eq!(s.due(at(1_000_000)), 0);
        assert_eq!(s.due(at(1_001_000)), 1);
        assert_eq!(s.skipped() + s.figures(at(0)).sent, 1_001);
    }

    #[test]
    fn latency_frames_ride_every_nth_slot() {
        let s = RateSchedule::new(1e6, at(0), span(0))
            .unwrap()
            .with_latency_every(Some(1000));
        assert!(s.carries_latency(0) && s.carries_latency(2000));
        assert!(!s.carries_latency(999));
        // 60 s at 1.488 Mfps with ≥ 500 tagged frames.
        let n = latency_every_for(1_488_095.0, Span::from_secs(60), 500);
        let tagged = (1_488_095.0f64 * 60.0) as u64 / n;
        assert!(tagged >= 500, "{tagged}");
        assert_eq!(latency_every_for(10.0, Span::from_secs(1), 500), 1);
        let none = RateSchedule::new(1e6, at(0), span(0))
            .unwrap()
            .with_latency_every(Some(0));
        assert!(!none.carries_latency(0));
    }
}
