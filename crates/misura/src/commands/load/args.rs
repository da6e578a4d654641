//! The flags of `misura load`.

use crate::shared::units::DurationArg;

#[derive(clap::Args, Debug, Clone)]
pub struct LoadArgs {
    /// The server that carries the load (`misura serve`): HOST or HOST:PORT.
    #[arg(value_name = "HOST[:PORT]")]
    pub host: String,
    /// The STAMP reflector the probes go to (default: HOST, port 862; run
    /// `misura reflect` beside `misura serve`).
    #[arg(long, value_name = "HOST[:PORT]")]
    pub reflector: Option<String>,
    /// The loaded phase's load from another server, as a URL:
    /// iperf3://HOST[:PORT] (an `iperf3 -s`; up and down run as one iperf3
    /// test, --bidir when both). The probes still go to --reflector/HOST.
    #[arg(long, value_name = "URL")]
    pub server: Option<String>,
    /// TCP streams from this host to the server during the loaded phase.
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub up: u32,
    /// TCP streams from the server to this host during the loaded phase.
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub down: u32,
    /// Paced UDP up instead of TCP, e.g. 40M (with --udp-down, or alone).
    #[arg(long, value_name = "RATE")]
    pub udp_up: Option<String>,
    /// Paced UDP down instead of TCP, e.g. 40M.
    #[arg(long, value_name = "RATE")]
    pub udp_down: Option<String>,
    /// Length of the loaded phase.
    #[arg(long, default_value = "10s", value_name = "DURATION")]
    pub duration: DurationArg,
    /// Length of each idle phase (before and after the load).
    #[arg(long, default_value = "5s", value_name = "DURATION")]
    pub idle: DurationArg,
    /// Probe period (open loop, in every phase).
    #[arg(long, default_value = "10ms", value_name = "DURATION")]
    pub period: DurationArg,
    /// How long a probe may take before it counts as lost (a loaded queue
    /// can hold it for hundreds of ms).
    #[arg(long, default_value = "2s", value_name = "DURATION")]
    pub timeout: DurationArg,
    /// Also run UDP request/response transactions (`misura rr --proto udp`,
    /// one in flight) through `misura serve` in every phase, beside the
    /// probes: the latency an application's request sees, phase by phase
    /// (in the loaded phase from 1 s, or a quarter of it, after the load
    /// starts).
    #[arg(long)]
    pub rr: bool,
    /// Pin the probing loop to this CPU.
    #[arg(long)]
    pub cpu: Option<usize>,
    #[command(flatten)]
    pub cpu_load: crate::shared::common_flags::CpuLoadArgs,
    /// Shared key of a server and reflector started with --key-file.
    #[arg(long, value_name = "FILE")]
    pub key_file: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub out: crate::shared::output::OutputArgs,
    #[command(flatten)]
    pub ns: crate::shared::common_flags::NetnsArgs,
}
