//! Streaming statistics for misura.
//!
//! Everything in this crate is pure computation: integer nanoseconds in,
//! numbers out. There is no I/O, no clock reading and no human formatting
//! here, so the same code can run inside a measurement loop (where
//! [`Summary::record`], [`SequenceTracker::record`] and
//! [`Rfc3550Jitter::update`] never allocate) and inside the report generator.
//!
//! * [`summary`]: bounded-memory summary of a stream of `i64` nanosecond
//!   values (exact count/min/max/mean/variance, HDR-histogram percentiles,
//!   display histograms).
//! * [`fit`]: ordinary least squares `y = a + b·x` with standard errors and
//!   Student-t 95 % confidence intervals.
//! * [`sequence`]: receive-side sequence bookkeeping (loss, reordering,
//!   duplication) in a fixed sliding window.
//! * [`jitter`]: RFC 3550 §6.4.1 interarrival jitter and an RFC 3393 IPDV
//!   summary.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod fit;
pub mod jitter;
pub mod sequence;
pub mod streaming_fit;
pub mod summary;

pub use fit::{FitError, LinearFit};
pub use jitter::Rfc3550Jitter;
pub use sequence::{Arrival, SequenceCounts, SequenceTracker};
pub use streaming_fit::{LineEstimate, StreamingLine};
pub use summary::{pool_buckets, Bucket, Summary, SummarySnapshot};
