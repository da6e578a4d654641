//! The plan of a `misura load` run, resolved once by the binary from its
//! flags (checked by `check.rs`).

use misura_cli::units::DurationArg;
use misura_run::cpuload::CpuLoad;
use misura_throughput::client::ClientPlan;
use misura_throughput::error::Refusal;
use misura_throughput::rr::{RrKnobs, RrShape};
use misura_throughput::{tcp, udp};
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
    /// Each direction's `misura tcp`/`udp` flags as the binary parsed them
    /// (up, then down), checked after the bounds.
    pub flows: Vec<ParsedFlow>,
    /// `--rr`: the transactions' `misura rr` flags as the binary parsed
    /// them (none without `--rr`).
    pub transactions: Option<Result<RrFlags, String>>,
    /// How a flow's or the transactions' refusal by `misura serve` during
    /// the run (over its limits, a key it wants) is said in the report:
    /// the binary's sentence, with the flags that would change it.
    pub refusal_words: fn(&Refusal) -> String,
}

/// A direction's test as the binary parsed the flags `misura tcp` or
/// `misura udp` would be given for it (one client, quiet).
#[derive(Clone, Debug)]
pub enum FlowFlags {
    Tcp {
        client: ClientPlan,
        knobs: tcp::TcpKnobs,
        shape: tcp::TcpShape,
    },
    Udp {
        client: ClientPlan,
        knobs: udp::UdpKnobs,
        shape: udp::UdpShape,
    },
}

/// A direction's flags, parsed by the binary (up, then down; none for a
/// direction without load), or why its command's parser refused them (in
/// the parser's words).
#[derive(Clone, Debug)]
pub struct ParsedFlow {
    pub direction: &'static str,
    pub parsed: Result<FlowFlags, String>,
}

/// The transactions as the binary parsed the flags `misura rr` would be
/// given for them (one client, quiet, UDP, the probes' timeout: a loaded
/// queue holds a response as long as it holds a probe); each phase sets
/// its own duration.
#[derive(Clone, Debug)]
pub struct RrFlags {
    pub client: ClientPlan,
    pub knobs: RrKnobs,
    pub shape: RrShape,
}
