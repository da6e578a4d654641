//! `misura clock` — stub, being built.

use anyhow::Result;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// Long help for the subcommand (shown by `--help`).
pub const LONG_ABOUT: &str = "Not built yet.";

#[derive(clap::Args, Debug, Clone)]
pub struct TscArgs {
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(_args: &TscArgs, _stop: &Arc<AtomicUsize>) -> Result<()> {
    anyhow::bail!("this clock subcommand is not built yet")
}
