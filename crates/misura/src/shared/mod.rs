//! Plumbing shared by every command: run metadata, output, the results
//! store, exit codes, units, host facts, progress. No command's code lives here.

pub mod client_flags;
pub mod common_flags;
pub mod engine_flags;
pub mod exit;
pub mod irtt_probe;
pub mod logger;
pub mod oneway_output;
pub mod oneway_words;
pub mod output;
pub mod store;
pub mod throughput_words;
pub mod words;

// What every measuring run shares lives in the `misura-cli` library (the
// command line's) and the `misura-run` library (the runtime's); the
// measuring libraries use them too, and the binary reaches them by the
// same paths.
pub use misura_cli::{files, outfile, units};
pub use misura_run::{cpuload, netns};
