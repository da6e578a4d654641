//! Flags of `misura oneway` and `misura calibrate` (and the frames they send).

use clap::Args;
use std::path::PathBuf;

/// Flags shared by every command that sends test frames.
#[derive(Args, Debug, Clone)]
pub struct MeasureArgs {
    /// Port that sends the test frames.
    #[arg(long)]
    pub tx: String,
    /// Port that receives them.
    #[arg(long)]
    pub rx: String,
    /// Traffic pattern: periodic, burst:N (N frames back to back each period) or poisson.
    #[arg(long, default_value = "periodic")]
    pub pattern: String,
    /// Sending period, e.g. 500us, 1ms, 0.2ms (one of --period, --rate, --load).
    #[arg(long, conflicts_with_all = ["rate", "load"])]
    pub period: Option<String>,
    /// Frames per second (periods per second for bursts).
    #[arg(long, conflicts_with = "load")]
    pub rate: Option<f64>,
    /// Offered load Γ as a share of link capacity: 0.1 or 10%.
    #[arg(long)]
    pub load: Option<String>,
    /// Number of frames to measure (default 10000 unless --duration).
    #[arg(long)]
    pub count: Option<u64>,
    /// Measure for this long, e.g. 30s, 5m, 24h (with --count: whichever comes first).
    #[arg(long)]
    pub duration: Option<String>,
    /// Payload sizes P in bytes (misura's header included; 40..=MTU), comma separated.
    #[arg(long = "sizes", alias = "size", value_delimiter = ',')]
    pub sizes: Vec<usize>,
    /// Cycle through sizes frame by frame (interleaved) or one block per size (blocks).
    #[arg(long, default_value = "interleaved")]
    pub order: String,
    /// A frame not received within this time is lost, e.g. 100ms.
    #[arg(long, default_value = "100ms")]
    pub timeout: String,
    /// How late a frame may leave before it is postponed to the start of the
    /// next period (default: until its own period ends, so at most one frame
    /// leaves per period and the schedule never bursts to catch up).
    #[arg(long)]
    pub late_tolerance: Option<String>,
    /// Count frames whose latency exceeds this, e.g. 30us.
    #[arg(long)]
    pub threshold: Option<String>,
    /// Link rate for the wire time C, e.g. 100M, 1G, 10G (default: read from the RX interface).
    #[arg(long)]
    pub link_speed: Option<String>,
    /// Every frame carries an 802.1Q tag (adds 4 bytes to the wire time).
    #[arg(long)]
    pub vlan: bool,
    /// Ethertype of the test frames (0x88B5 IEEE local experimental; 0x6006 as the original paper).
    #[arg(long, default_value = "0x88B5")]
    pub ethertype: String,
    /// Frames sent after enabling timestamping and before measuring.
    #[arg(long, default_value_t = 64)]
    pub warmup: u64,
    /// Pin the measuring loop to this CPU.
    #[arg(long)]
    pub cpu: Option<usize>,
    /// Run the loop with SCHED_FIFO at this priority (1-99).
    #[arg(long, value_parser = clap::value_parser!(i32).range(1..=99))]
    pub rt_priority: Option<i32>,
    /// Do not lock memory (mlockall).
    #[arg(long)]
    pub no_mlock: bool,
    /// Seed for the Poisson pattern.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write one CSV row per frame to this file (columns in the README).
    #[arg(long, value_name = "FILE.csv")]
    pub frames: Option<PathBuf>,
    #[command(flatten)]
    pub out: crate::shared::output::OutputArgs,
    #[command(flatten)]
    pub csv: crate::shared::output::CsvArgs,
    #[command(flatten)]
    pub ns: crate::shared::netns::NetnsArgs,
}

#[derive(Args, Debug)]
pub struct OnewayArgs {
    #[command(flatten)]
    pub m: MeasureArgs,
    /// Calibration profile from `misura calibrate`: report SUT latency Msl.
    #[arg(long, value_name = "FILE")]
    pub calibration: Option<PathBuf>,
    /// Use the profile even if it was made on another set-up (warn instead of failing).
    #[arg(long)]
    pub accept_profile_mismatch: bool,
}

#[derive(Args, Debug)]
pub struct CalibrateArgs {
    #[command(flatten)]
    pub m: MeasureArgs,
    /// Where to save the profile (default: the user's data directory).
    #[arg(long, value_name = "FILE")]
    pub profile: Option<PathBuf>,
}
