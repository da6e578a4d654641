//! `misura host`: what on this host affects timing precision (`check`), and
//! the safe changes to it, applied and reverted (`tune`).
//!
//! Every setting is read on its own: an unreadable file or a driver without
//! the feature becomes that setting's state ("unreadable: permission
//! denied", "not supported by driver veth"), never a failure of the command.

pub mod check;
pub mod readings;
pub mod tune;

use clap::Subcommand;

#[derive(Subcommand, Debug)]
pub enum HostCommand {
    /// Check everything that affects timing precision, with the command that changes each.
    #[command(long_about = check::CHECK_LONG_ABOUT)]
    Check(check::CheckArgs),
    /// Apply (or revert) the safe tuning changes; without --apply only print the plan.
    #[command(long_about = tune::TUNE_LONG_ABOUT)]
    Tune(tune::TuneArgs),
}
