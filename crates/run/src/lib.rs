//! What every measuring run shares, whichever library or command runs it:
//! the kinds of failure and the exit codes they map to, the units of its
//! parameters, its metadata, the warnings a result can carry, the host's
//! fingerprint and PTP clocks (and two of them tracked during a run), the
//! target it resolves, its key file, progress on stderr, and the flags
//! several commands share (`--timestamps`, `--busy-poll`, `--netns`, output).
//!
//! The measuring libraries (`misura-throughput`, …) and the binary use it;
//! it holds no command's code, and prints nothing: libraries report through
//! `log` or return values, and the binary prints.
#![forbid(unsafe_code)]

pub mod busy_poll;
pub mod cpuload;
pub mod exit;
pub mod files;
pub mod host;
pub mod keys;
pub mod meta;
pub mod netns;
pub mod outfile;
pub mod output_flags;
pub mod phc_tracker;
pub mod progress;
pub mod ptp;
pub mod stamping;
pub mod target;
pub mod units;
pub mod warnings;
