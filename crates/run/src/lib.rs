//! What every measuring run shares, whichever library or command runs it:
//! the kinds of failure and the exit codes they map to, the units of its
//! parameters, its metadata, the warnings a result can carry, the host's
//! fingerprint and PTP clocks (and two of them tracked during a run), the
//! target it resolves, its key file, progress on stderr, and the flags
//! several commands share (`--timestamps`, `--busy-poll`, `--netns`, output).
//!
//! The measuring libraries (`misura-throughput`, …) and the binary use it;
//! it holds no command's code. Its printing macros never panic on a closed
//! stderr/stdout: the binary, the one crate that prints (libraries report
//! through `log`), takes them with `#[macro_use] extern crate misura_run;`,
//! which shadows the standard ones.
#![forbid(unsafe_code)]

/// `eprintln!` that never panics: a closed stderr (`misura … 2>&1 | head`)
/// must not abort a measurement; progress and warnings are then lost, the
/// result and its exports are not. Shadows the standard macro where taken
/// with `#[macro_use]`.
#[macro_export]
macro_rules! eprintln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// `eprint!` that never panics, as `eprintln!` above.
#[macro_export]
macro_rules! eprint {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stderr(), $($arg)*);
    }};
}

/// `println!` that never panics on a closed stdout (`misura lab status | head`).
#[macro_export]
macro_rules! println {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

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
pub mod store;
pub mod target;
pub mod units;
pub mod warnings;
