//! Flags of `misura history`, `show` and `compare`.

use clap::Args;

/// Flags of `misura history`.
#[derive(Args, Debug, Clone)]
pub struct HistoryArgs {
    /// Only runs of this subcommand (oneway, calibrate, rtt, exchange, …).
    #[arg(long)]
    pub subcommand: Option<String>,
    /// Only runs whose target contains this text.
    #[arg(long)]
    pub target: Option<String>,
    /// Only runs started at or after this time (RFC 3339 prefix, e.g. 2026-11-22).
    #[arg(long)]
    pub since: Option<String>,
    /// Only runs started at or before this time (RFC 3339 prefix).
    #[arg(long)]
    pub until: Option<String>,
    /// At most this many runs, newest first.
    #[arg(long, default_value_t = 50)]
    pub limit: u32,
    #[arg(long)]
    pub json: bool,
}

/// Flags of `misura show`.
#[derive(Args, Debug, Clone)]
pub struct ShowArgs {
    /// Run id (see misura history).
    pub run: i64,
    #[arg(long)]
    pub json: bool,
}

/// Flags of `misura compare`.
#[derive(Args, Debug, Clone)]
pub struct CompareArgs {
    /// Run ids; the first is the baseline.
    #[arg(required = true, num_args = 2..)]
    pub runs: Vec<i64>,
    #[arg(long)]
    pub json: bool,
}
