//! What a measuring run does on the host, whichever library or command
//! runs it: the host's fingerprint and facts, its CPU load (and the busy
//! threads `--cpu-load` adds), PTP clocks (and two of them tracked during
//! a run), hardware stamping switched on for a socket (`--timestamps`),
//! busy polling, entering a network namespace.
//!
//! The measuring libraries (`misura-throughput`, …) and the binary use it;
//! what a command line needs (failures and exit classes, units, the shared
//! flags, output files, progress) is `misura-cli`'s, which this crate sits
//! on. It takes the flags it acts on (`--timestamps`, `--cpu-load`) as plain
//! values (`Timestamps`, `CpuLoad`), which the binary's flags convert into
//! with `From`. It holds no command's code, and prints
//! nothing: libraries report through `log` or return values, and the
//! binary prints.
#![forbid(unsafe_code)]

pub mod busy_poll;
pub mod cpuload;
mod exit_class;
pub mod host;
pub mod netns;
pub mod phc_tracker;
pub mod ptp;
pub mod stamping;
