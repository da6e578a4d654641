//! The human (text) forms of the results, and their CSV tables where a
//! command has them: one module per command, as `model` has them.

pub mod clock;
pub mod exchange;
pub mod hardware;
mod heading;
pub mod host;
pub mod load;
pub mod oneway;
pub mod pacing;
mod percentiles;
pub mod reflect;
pub mod rfc2544;
pub mod rtt;
pub mod rtt_irtt;
pub mod serve;
pub mod throughput;
pub mod throughput_csv;
pub mod tsc;
pub mod under_load;
pub mod y1564;

pub use oneway::{write_host, write_oneway};
