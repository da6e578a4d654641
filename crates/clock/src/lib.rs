//! Measuring the host's clocks: the frequency of the CPU's time-stamp
//! counter against CLOCK_MONOTONIC_RAW and against an NTP server
//! ([`tsc`]). The flags, the report's facts and warnings, and the printing
//! are the binary's (`misura clock`).
#![forbid(unsafe_code)]

pub mod tsc;
