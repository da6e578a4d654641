//! The measurement method of misura, without I/O.
//!
//! Everything here is deterministic: time is an argument (`now`, an
//! [`time::Instant`] on the run's single timescale; stamps as integer
//! nanoseconds), never read from a clock, and no
//! socket is opened. The binary joins this crate to the Linux edge (`misura-sys`);
//! tests drive it with a virtual clock.
//!
//! The model is the one of Cena, Cibrario Bertolotti and Valenzano (seed 000):
//! user-level latency `UL = C + IL + SL`, bracketed per frame by a TX window
//! `[TX1, TX2]` around `send()` and an RX window `[RX1, RX2]` around the
//! receive that returned the frame.
#![forbid(unsafe_code)]

pub mod auth;
pub mod calibration;
pub mod clockstats;
pub mod inflight;
pub mod load;
pub mod oneway_session;
pub mod pacer;
/// The one check of a period's bounds, from `misura-time`.
pub use misura_time::period;
pub mod phc_track;
pub mod ratelimit;
pub mod reflector;
pub mod rtt;
pub mod schedule;
pub mod seqring;
pub mod stamp_client;
pub mod stamp_sender;
/// The time types, from the leaf crate `misura-time` (shared with `misura-sys`).
pub use misura_time as time;
pub mod tscfreq;
pub mod window;
pub mod wire_time;

pub use calibration::{sut_verdict, CalibrationLine, SizePoint, SutVerdict};
pub use inflight::{Arrival, InFlight, TxRecord, TxStampMatch};
pub use schedule::{Pattern, Poll, Schedule, SizeOrder, SizePlan};
pub use time::TimestampSource;
pub use window::FrameRecord;
pub use wire_time::LinkModel;

/// Instants and spans from literal nanoseconds, for the unit tests.
#[cfg(test)]
pub(crate) mod test_time {
    use crate::time::{Instant, Span};

    pub fn at(ns: i64) -> Instant {
        Instant::from_ns(ns)
    }

    pub fn span(ns: i64) -> Span {
        Span::from_ns(ns)
    }
}
