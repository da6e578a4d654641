//! Load tests, sans-IO: the RFC 2544 benchmarks (throughput, frame loss
//! rate, back-to-back frames), the ITU-T Y.1564 service activation test,
//! and the bookkeeping they share.
//!
//! A load test offers frames at a chosen rate for a trial and counts what
//! came back; a search decides the next trial from the results of the ones
//! before. Everything here is a state machine fed with results and `now`
//! (integer ns): the binary owns the sockets and the clock, the simulation
//! in `tests/sim_load.rs` drives the same machines against [`model::ModelSut`].
//!
//! * [`rate`]: the open-loop slot schedule of one sender and the line rate.
//! * [`stream`]: exact per-stream sent/received/lost counting in constant memory.
//! * [`search`]: NDR and PDR, MLRsearch-style (short trials, then full-length).
//! * [`flr`]: RFC 2544 §26.3 frame loss rate steps.
//! * [`b2b`]: RFC 2544 §26.4 as updated by RFC 9004: back-to-back frames and
//!   the DUT buffer time.
//! * [`y1564`]: service configuration and performance tests and their verdicts.
//! * [`model`]: a fluid model of a store-and-forward device to test against.
//!
//! Rates are frames per second (`f64`) unless a name says `_bps`; frame sizes
//! are Ethernet frames in bytes including the FCS, without preamble and IFG.

pub mod b2b;
pub mod flr;
pub mod model;
pub mod rate;
pub mod search;
pub mod stream;
pub mod y1564;

/// A number given to a load test that is out of its range, or a
/// combination that cannot be honoured.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum LoadError {
    /// A number outside the range this module accepts.
    #[error("{what} = {value} is out of range: use {min} ..= {max}")]
    OutOfRange {
        what: &'static str,
        value: f64,
        min: f64,
        max: f64,
    },
    /// Two settings contradict each other.
    #[error("{what}: {why}")]
    Inconsistent { what: &'static str, why: String },
    /// Per-core counters to merge both hold the same stream.
    #[error("stream {stream} was counted by two receivers; merge needs each stream on one receiver (steer it to one core)")]
    StreamInTwoCounters { stream: u16 },
}

/// `value` if `min ..= max` holds it (NaN never does), else the error naming `what`.
pub(crate) fn check_range(
    what: &'static str,
    value: f64,
    min: f64,
    max: f64,
) -> Result<f64, LoadError> {
    if value >= min && value <= max {
        Ok(value)
    } else {
        Err(LoadError::OutOfRange {
            what,
            value,
            min,
            max,
        })
    }
}

/// The highest frame rate any load test accepts: 1.6 Tb/s of 64-byte frames
/// is 2.4 G frames/s; a bound with room, not a capability claim.
pub const MAX_RATE_FPS: f64 = 4e9;
/// The highest link speed accepted, bits/s (1.6 Tb/s).
pub const MAX_LINK_BPS: f64 = 1.6e12;
/// The longest trial accepted: one day (Y.1564's longest performance test).
pub const MAX_TRIAL_NS: i64 = 86_400_000_000_000;

/// Whether a trial proves nothing about the SUT: the tester fell short
/// (`short`: it skipped slots, or sent less than asked) and sent nothing or
/// the SUT lost nothing, so the rates (or burst lengths) above what was
/// sent stay undecided; or the SUT lost no more than the `catch_up` frames
/// the short tester sent back to back after being descheduled (a policer's
/// small bucket may drop those for the tester's burstiness alone). A short
/// trial in which the SUT lost more is conclusive at what was sent: the SUT
/// could not forward even that (issue 37; MLRsearch classifies a trial by
/// its load the same way). A trial that was not short proves what it
/// shows, loss or none: the tester kept its rate.
pub fn proves_nothing(sent: u64, received: u64, short: bool, catch_up: u64) -> bool {
    let lost = sent.saturating_sub(received);
    short && (sent == 0 || lost == 0 || lost <= catch_up)
}
