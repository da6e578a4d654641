//! Flags of `misura demo`.

use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Frames per payload size in each phase.
    #[arg(long, default_value_t = 1000)]
    pub count: u64,
    /// Frames per second.
    #[arg(long, default_value_t = 2000.0)]
    pub rate: f64,
    /// Pin the loop to this CPU.
    #[arg(long)]
    pub cpu: Option<usize>,
    /// Namespace prefix of the lab the demo builds.
    #[arg(long, default_value = "misura-")]
    pub prefix: String,
    /// Where to save the calibration profile (default: a temporary file).
    #[arg(long, value_name = "FILE")]
    pub profile: Option<PathBuf>,
    /// Write the SUT per-frame log to this file.
    #[arg(long, value_name = "FILE.csv")]
    pub frames: Option<PathBuf>,
    #[command(flatten)]
    pub out: crate::shared::output::OutputArgs,
}
