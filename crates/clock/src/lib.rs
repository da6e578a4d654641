//! Measuring the host's clocks: every time source's read cost and steps
//! ([`sources`]), the steps of a tight loop of reads ([`interference`]),
//! the wake-up latency of periodic sleeps ([`timer`]) and the frequency of
//! the CPU's time-stamp counter against CLOCK_MONOTONIC_RAW and against an
//! NTP server ([`tsc`]). Each is one call on a request of plain values
//! ([`request`]); it takes a plan checked once (typed
//! [`PlanError`]s that name no flag) and returns its report; the flags and
//! the printing are the binary's (`misura clock`).
#![forbid(unsafe_code)]

pub mod error;
mod exit_class;
mod finish;
pub mod interference;
pub mod request;
pub mod sources;
pub mod timer;
pub mod tsc;

pub use error::{ClockError, Knob, MeasureError, PlanError};
pub use interference::InterferenceRequest;
pub use request::{
    measure_interference, measure_sources, measure_timer, measure_tsc, SourcesRequest, TscMeasured,
    TscRequest,
};
pub use timer::TimerRequest;
