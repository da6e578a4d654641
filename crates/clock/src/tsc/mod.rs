//! The TSC's frequency: against CLOCK_MONOTONIC_RAW ([`raw`]) and against
//! an NTP server by seed 003's minimum-RTT method ([`ntp`]).

pub mod ntp;
pub mod raw;
