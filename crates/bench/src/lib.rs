//! misura's device benchmarks on the frame engine: RFC 2544's four tests
//! per frame size ([`rfc2544`]) and ITU-T Y.1564's configuration and
//! performance tests ([`y1564`]). Each takes a request of plain values
//! (`rfc2544::request::Request`, `y1564::request::Request`: the binary's flags, [`Ports`]
//! among them), checks it against the ports, opens the frame engine,
//! drives it trial by trial as `misura_measure::load`'s decisions ask, and
//! returns the whole result (`measure`); it never prints. Progress goes
//! through [`Progress`], which the binary draws as its status line.
//!
//! Errors are [`BenchError`]s: a refused request's is typed with its
//! figures (the binary words it with its flags); the engine's trials' errors
//! (`EngineError`) and the one-way measurement's behind RFC 2544's latency
//! trial (`OnewayError`) are carried whole, one variant each.

#![forbid(unsafe_code)]

mod error;
mod exit_class;
mod ports;
pub use error::{BenchError, Role};
pub use ports::Ports;
pub mod rfc2544;
pub mod y1564;

use std::time::Duration;

/// Where a benchmark says which trial or step runs.
pub trait Progress {
    /// `what` runs now for `length`; `after` is the run's planned time
    /// after it, when known.
    fn step(&self, what: String, length: Duration, after: Option<Duration>);
}

/// No progress shown (tests, `--quiet`).
impl Progress for () {
    fn step(&self, _: String, _: Duration, _: Option<Duration>) {}
}

/// The command line's status line on stderr (rfc2544's trials, y1564's
/// steps), drawn by the binary.
impl Progress for misura_cli::status_line::StatusLine {
    fn step(&self, what: String, length: Duration, after: Option<Duration>) {
        misura_cli::status_line::StatusLine::step(self, what, length, after);
    }
}
