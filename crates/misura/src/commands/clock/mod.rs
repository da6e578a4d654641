//! `misura clock`: know the instrument's clocks.

pub mod interference;
pub mod sources;
pub mod timer;
pub mod tsc;

use clap::Subcommand;

#[derive(Subcommand, Debug)]
pub enum ClockCommand {
    /// Every usable time source: read cost, resolution, smallest step, monotonicity.
    #[command(long_about = crate::commands::clock::sources::LONG_ABOUT)]
    Sources(crate::commands::clock::sources::SourcesArgs),
    /// The interference test of Cena, Cibrario Bertolotti and Valenzano: histogram of the steps between consecutive clock reads.
    #[command(long_about = crate::commands::clock::interference::LONG_ABOUT)]
    Interference(crate::commands::clock::interference::InterferenceArgs),
    /// The TSC's frequency and stability, against CLOCK_MONOTONIC_RAW or an NTP server.
    #[command(long_about = crate::commands::clock::tsc::LONG_ABOUT)]
    Tsc(crate::commands::clock::tsc::TscArgs),
    /// Wake-up latency of periodic absolute sleeps, as cyclictest measures it.
    #[command(long_about = crate::commands::clock::timer::LONG_ABOUT)]
    Timer(crate::commands::clock::timer::TimerArgs),
}
