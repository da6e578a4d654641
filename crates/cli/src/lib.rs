//! What a misura command line needs, and every measuring library shares
//! with it: the kinds of failure and the exit codes they map to, the units
//! of its parameters, the run's metadata, the warnings a result can carry, the target it
//! resolves, its key file, the files it reads and writes, and progress on
//! stderr (a library's progress line, and the status line of the commands
//! whose steps block for seconds), drawn through the binary's sink.
//!
//! The measuring libraries (`misura-throughput`, …), `misura-run` and the
//! binary use it; it holds no command's code but `misura report`'s files
//! (`report_page`: results read, pages and plots written, PNG converters
//! run), touches no host setting, and
//! prints nothing: libraries report through `log` or return values, and
//! the binary prints.
#![forbid(unsafe_code)]

pub mod exit;
pub mod files;
pub mod keys;
pub mod logging;
pub mod meta;
pub mod outfile;
pub mod progress;
pub mod report_page;
pub mod status_line;
pub mod target;
pub mod units;
pub mod warnings;
