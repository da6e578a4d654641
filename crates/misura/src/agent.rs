//! Stub, being built.

use anyhow::Result;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// Long help for the subcommand (shown by `--help`).
pub const LONG_ABOUT: &str = "Not built yet.";

#[derive(clap::Args, Debug, Clone)]
pub struct AgentArgs {
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Returns the process exit code.
pub fn run(_args: &AgentArgs, _stop: &Arc<AtomicUsize>) -> Result<i32> {
    anyhow::bail!("this subcommand is not built yet")
}
