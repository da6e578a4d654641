//! The result model: the serde types of every result misura writes, one
//! module per command, with what every result carries in `meta`. Field names
//! are the SPEC's words; all times are integer or fractional nanoseconds with
//! the unit in the name. Nothing here renders: the text, CSV and HTML forms
//! are in `text`, `csv`, `html` and `figures`.

pub mod calibration;
pub mod clock;
pub mod clock_fit;
pub mod exchange;
pub mod host;
pub mod host_facts;
pub mod load;
pub mod meta;
pub mod oneway;
pub mod pacing;
pub mod reflect;
pub mod rfc2544;
pub mod rtt;
pub mod run;
pub mod schedule;
pub mod serve;
pub mod summary;
pub mod throughput;
pub mod tsc;
pub mod under_load;
pub mod warning;
pub mod y1564;

pub use calibration::{CalibrationLine, LinearFit, SizePoint, SutVerdict};
pub use clock_fit::{ClockFit, PairFit};
pub use meta::*;
pub use oneway::*;
pub use run::{Envelope, StopReason};
pub use schedule::{LinkModel, Pattern, SizeOrder};
pub use summary::{Bucket, SummarySnapshot};
pub use warning::Warning;
