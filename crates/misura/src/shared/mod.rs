//! Plumbing shared by every command: run metadata, output, the results
//! store, exit codes, units, host facts, progress. No command's code lives here.

pub mod client_flags;
pub mod engine_flags;
pub mod exit;
pub mod irtt_probe;
pub mod logger;
pub mod oneway_output;
pub mod output;
pub mod status_line;
pub mod store;

// What every measuring run shares lives in the `misura-run` library (the
// measuring libraries use it too); the binary reaches it by the same paths.
pub use misura_run::{
    cpuload, files, host, meta, netns, outfile, stamping, target, units, warnings,
};
