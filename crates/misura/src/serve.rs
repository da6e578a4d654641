//! `misura serve` — stub, being built.

use anyhow::Result;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// Long help for the subcommand (shown by `--help`).
pub const LONG_ABOUT: &str = "Not built yet.";

#[derive(clap::Args, Debug, Clone)]
pub struct ServeArgs {
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Returns the process exit code.
pub fn run(_args: &ServeArgs, _stop: &Arc<AtomicUsize>) -> Result<i32> {
    anyhow::bail!("misura serve is not built yet")
}
