//! `misura host`: what on this host affects timing precision.

pub mod check;

use clap::Subcommand;

#[derive(Subcommand, Debug)]
pub enum HostCommand {
    /// Check everything that affects timing precision, with the command that changes each.
    #[command(long_about = crate::commands::host::check::CHECK_LONG_ABOUT)]
    Check(crate::commands::host::check::CheckArgs),
    /// Apply (or revert) the safe tuning changes; without --apply only print the plan.
    #[command(long_about = crate::commands::host::check::TUNE_LONG_ABOUT)]
    Tune(crate::commands::host::check::TuneArgs),
}
