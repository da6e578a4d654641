//! The plan of a `misura load` run, resolved once by the binary from its
//! flags (checked by `check.rs`).

use misura_cli::units::DurationArg;
use misura_run::cpuload::CpuLoad;
use std::path::PathBuf;

/// One `misura load` run.
#[derive(Clone, Debug)]
pub struct LoadPlan {
    /// The server that carries the load (`misura serve`): HOST[:PORT].
    pub host: String,
    /// The STAMP reflector of the probes (default: HOST, port 862).
    pub reflector: Option<String>,
    /// The load's server as a URL (iperf3://HOST[:PORT]) when another tool.
    pub server: Option<String>,
    /// TCP streams up and down.
    pub up: u32,
    pub down: u32,
    /// Paced UDP rates up and down, as written (e.g. 40M).
    pub udp_up: Option<String>,
    pub udp_down: Option<String>,
    /// The loaded phase, each idle phase.
    pub duration: DurationArg,
    pub idle: DurationArg,
    /// The probes' period and timeout.
    pub period: DurationArg,
    pub timeout: DurationArg,
    /// UDP request/response transactions beside the probes.
    pub rr: bool,
    /// The probing loop's CPU.
    pub cpu: Option<usize>,
    pub cpu_load: CpuLoad,
    pub key_file: Option<PathBuf>,
    /// No progress line.
    pub quiet: bool,
    /// The namespace the run is in (for the host's fingerprint).
    pub netns: Option<String>,
}
