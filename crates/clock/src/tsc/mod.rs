//! The TSC's frequency: against CLOCK_MONOTONIC_RAW ([`raw`]) and against
//! an NTP server by seed 003's minimum-RTT method ([`ntp`]); [`run`] checks
//! the plan, reads the TSC's facts and makes the report.

pub mod ntp;
pub mod raw;
pub mod run;

pub use run::{measure, Measured, TscPlan};
