//! `misura clock`: know the instrument's clocks.

pub mod interference;
pub mod sources;
pub mod timer;
pub mod tsc;

use clap::Subcommand;
use misura_measure::clockstats::counter_rate_hz;
use misura_sys::clock::monotonic_raw_ns;
use std::time::Duration;

#[derive(Subcommand, Debug)]
pub enum ClockCommand {
    /// Every usable time source: read cost, resolution, smallest step, monotonicity.
    #[command(long_about = crate::commands::clock::sources::LONG_ABOUT)]
    Sources(crate::commands::clock::sources::SourcesArgs),
    /// Seed 000's interference test: histogram of the steps between consecutive clock reads.
    #[command(long_about = crate::commands::clock::interference::LONG_ABOUT)]
    Interference(crate::commands::clock::interference::InterferenceArgs),
    /// The TSC's frequency and stability, against CLOCK_MONOTONIC_RAW or an NTP server.
    #[command(long_about = crate::commands::clock::tsc::LONG_ABOUT)]
    Tsc(crate::commands::clock::tsc::TscArgs),
    /// Wake-up latency of periodic absolute sleeps, as cyclictest measures it.
    #[command(long_about = crate::commands::clock::timer::LONG_ABOUT)]
    Timer(crate::commands::clock::timer::TimerArgs),
}

/// The TSC rate (Hz) against CLOCK_MONOTONIC_RAW over `window`: both read
/// at each end, the raw clock on both sides of the TSC read.
pub(crate) fn tsc_rate_over(window: Duration) -> Option<f64> {
    let take = || {
        let a = monotonic_raw_ns();
        let t = misura_sys::tsc::read();
        let b = monotonic_raw_ns();
        (t, a + (b - a) / 2)
    };
    let (t0, r0) = take();
    std::thread::sleep(window);
    let (t1, r1) = take();
    counter_rate_hz(t0, r0, t1, r1)
}
