//! Plumbing shared by every command: run metadata, output, the results
//! store, exit codes, units, host facts, progress. No command's code lives here.

pub mod busy_poll;
pub mod cpuload;
pub mod exit;
pub mod files;
pub mod frames;
pub mod host;
pub mod http_client;
pub mod keys;
pub mod meta;
pub mod netns;
pub mod outfile;
pub mod phc_tracker;
pub mod output;
pub mod progress;
pub mod ptp;
pub mod stamping;
pub mod status_line;
pub mod store;
pub mod target;
pub mod units;
pub mod warnings;
