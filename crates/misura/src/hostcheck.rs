//! `misura host check|tune` — stub, being built.

use anyhow::Result;

pub const CHECK_LONG_ABOUT: &str = "Not built yet.";
pub const TUNE_LONG_ABOUT: &str = "Not built yet.";

#[derive(clap::Args, Debug, Clone)]
pub struct CheckArgs {
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::Args, Debug, Clone)]
pub struct TuneArgs {
    /// Apply the plan (without it, only print it).
    #[arg(long)]
    pub apply: bool,
}

pub fn check(_args: &CheckArgs) -> Result<i32> {
    anyhow::bail!("misura host check is not built yet")
}

pub fn tune(_args: &TuneArgs) -> Result<i32> {
    anyhow::bail!("misura host tune is not built yet")
}
