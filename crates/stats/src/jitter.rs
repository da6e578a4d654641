//! Delay variation: RFC 3550 interarrival jitter and RFC 3393 IPDV.
//!
//! Both are computed from the *transit time* `recv − send` of each packet.
//! Only differences of transit times are used, so a constant offset between
//! the sender's and receiver's clocks cancels: the two timestamps need not
//! come from synchronised clocks (drift, however, does not cancel).
//!
//! * RFC 3550 §6.4.1 (and the reference code in its appendix A.8): for
//!   consecutive packets `i−1, i`, `D = (R_i − S_i) − (R_{i−1} − S_{i−1})`
//!   and `J ← J + (|D| − J)/16`. The gain 1/16 is the RFC's choice: a
//!   first-order low-pass filter that gives a good noise-reduction ratio
//!   while converging reasonably fast. The RFC works in RTP timestamp units
//!   with integer arithmetic; here it is nanoseconds in `f64`, so there is no
//!   rounding drift.
//! * RFC 3393 (IP Packet Delay Variation) with the "consecutive packets"
//!   selection function: the same `D` values, kept with their sign in a
//!   [`Summary`], so their full distribution (and percentiles) can be
//!   reported as RFC 5481 recommends, not only the smoothed `J`.
//!
//! Packets are taken in the order `update` is called (the arrival order, as
//! in RFC 3550); lost packets simply do not appear.

use crate::summary::Summary;

/// RFC 3550 interarrival jitter plus an RFC 3393 IPDV summary.
#[derive(Clone, Debug)]
pub struct Rfc3550Jitter {
    prev_transit: Option<i64>,
    jitter: f64,
    ipdv: Summary,
}

impl Default for Rfc3550Jitter {
    fn default() -> Self {
        Self::new()
    }
}

impl Rfc3550Jitter {
    /// Nothing seen yet; jitter 0.
    pub fn new() -> Self {
        Rfc3550Jitter {
            prev_transit: None,
            jitter: 0.0,
            ipdv: Summary::new(),
        }
    }

    /// Feed one packet's send and receive timestamps (ns, each on its own
    /// clock). The first packet only sets the reference transit time.
    /// Never allocates.
    pub fn update(&mut self, send_ns: i64, recv_ns: i64) {
        // Saturating: the clocks may be unrelated, but a difference beyond
        // ±292 years is an input error, not something to wrap around on.
        let transit = recv_ns.saturating_sub(send_ns);
        if let Some(prev) = self.prev_transit {
            let d = transit.saturating_sub(prev);
            // RFC 3550 §6.4.1: J(i) = J(i−1) + (|D(i−1,i)| − J(i−1))/16
            self.jitter += (d.unsigned_abs() as f64 - self.jitter) / 16.0;
            self.ipdv.record(d);
        }
        self.prev_transit = Some(transit);
    }

    /// The smoothed interarrival jitter `J` (ns).
    pub fn jitter_ns(&self) -> f64 {
        self.jitter
    }

    /// Summary of the signed consecutive delay differences `D` (RFC 3393
    /// IPDV, ns): one fewer value than packets fed.
    pub fn ipdv(&self) -> &Summary {
        &self.ipdv
    }
}
