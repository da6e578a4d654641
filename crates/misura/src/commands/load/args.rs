//! The flags of `misura load`, their long help, the plan they ask
//! ([`LoadArgs::request`], with each direction's flows parsed by
//! `flows.rs`) and its refusals in their words.

use crate::shared::exit::Failure;
use crate::shared::units::DurationArg;
use misura_load::{LoadError, LoadPlan, PlanError};

/// Long help for the subcommand (shown by `--help`).
pub const LONG_ABOUT: &str = "\
Measure what happens to latency when the path is busy (bufferbloat; flent's
RRUL test, the IETF responsiveness draft). STAMP probes go to a reflector
through three phases: --idle seconds idle, --duration seconds loaded, --idle
seconds idle again. During the loaded phase --up N and --down N TCP streams
(default 4 each) run through `misura serve` on HOST, or paced UDP with
--udp-up RATE / --udp-down RATE.

Per phase: throughput per flow and in total; network, user and kernel RTT;
forward and backward one-way delay, with the clock offset estimated in the
first idle phase so the direction whose queue grew shows; loss and jitter of
the probes (and, with --rr, of UDP request/response transactions through
`misura serve`). Then the inflation (loaded − idle medians) with its uncertainty,
and responsiveness in round trips per minute (60 s over the loaded median
RTT; computed from misura's probes, not the draft's HTTP procedure).

HOST runs `misura serve` (the load) and, by default, `misura reflect` on port
862 (the probes; --reflector to name another). The probes' timeout (--timeout,
default 2 s) must exceed the loaded queue's delay, or they count as lost.

Examples:
  misura load 198.18.1.2
  misura load 198.18.1.2 --up 1 --down 0 --duration 20s --idle 5s
  misura load 198.18.1.2 --udp-up 40M --period 20ms --json
  misura load 198.18.1.2 --rr --up 2 --down 2";

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

impl LoadArgs {
    /// The flags as the run's plan, each direction's flows and `--rr`'s
    /// transactions parsed (`flows.rs`); `misura_load::measure` checks it.
    pub fn request(&self) -> LoadPlan {
        let mut p = LoadPlan {
            host: self.host.clone(),
            reflector: self.reflector.clone(),
            server: self.server.clone(),
            up: self.up,
            down: self.down,
            udp_up: self.udp_up.clone(),
            udp_down: self.udp_down.clone(),
            duration: self.duration.clone(),
            idle: self.idle.clone(),
            period: self.period.clone(),
            timeout: self.timeout.clone(),
            rr: self.rr,
            cpu: self.cpu,
            cpu_load: (&self.cpu_load).into(),
            key_file: self.key_file.clone(),
            quiet: self.out.quiet || self.out.json,
            netns: self.ns.netns.clone(),
            flows: vec![],
            transactions: None,
            refusal_words: crate::shared::throughput_words::words,
        };
        p.flows = super::flows::flows(&p);
        p.transactions = p.rr.then(|| super::flows::transactions(&p));
        p
    }

    /// The run's error: a refused plan in the flags' words, the others
    /// with the sentence and class they carry.
    pub fn refusal(&self, e: LoadError) -> anyhow::Error {
        match e {
            LoadError::Plan(p) => flag_sentence(p).into(),
            e => e.into(),
        }
    }
}

/// A plan error as the sentence that names the flags, with its exit class.
fn flag_sentence(e: PlanError) -> Failure {
    use PlanError::*;
    match e {
        LoadedPhase { duration } => Failure::Params(format!(
            "--duration {duration} is out of range: the loaded phase lasts 2 s to 1 h"
        )),
        IdlePhase { idle } => Failure::Params(format!(
            "--idle {idle} is out of range: each idle phase lasts 1 s (enough probes for the clock offset) to 10 min"
        )),
        Streams { up, down, max } => Failure::Params(format!(
            "--up {up} / --down {down}: at most {max} streams each way"
        )),
        NoLoad => Failure::Usage(
            "no load: give --up N or --down N (TCP streams) or --udp-up/--udp-down RATE".into(),
        ),
        FewIdleProbes { period, idle } => Failure::Params(format!(
            "--period {period} leaves fewer than 10 probes in an idle phase of {idle}: shorten the period or lengthen --idle"
        )),
        ServerUrl { url } => Failure::Usage(format!(
            "--server {url}: give iperf3://HOST[:PORT] (an iperf3 -s)"
        )),
        Iperf3NoLoad => {
            Failure::Usage("--server iperf3://: no load asked for (--up/--down 0)".into())
        }
        Flow { direction, error } => Failure::Usage(format!("the {direction} load: {error}")),
        Transactions { error } => Failure::Usage(format!("--rr: {error}")),
        UdpRate(e) => e.into(),
        Refusal(r) => crate::shared::throughput_words::sentence(&r),
        CpuLoad(t) => Failure::Params(crate::shared::words::said(&t)),
    }
}
