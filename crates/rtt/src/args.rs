//! Flags of `misura rtt`.

use crate::plan::{Pace, PlanInput, RttPlan, SessionPlanError};
use clap::Args;
use misura_cli::exit::Failure;
use misura_cli::units::{DurationArg, Ethertype, LinkRate};
use misura_measure::period::PeriodError;
use misura_measure::schedule::unkept;
use misura_measure::stamp_sender::LayoutError;
use misura_measure::Pattern;
use misura_wire::MacAddr;
use std::path::PathBuf;

/// Flags of `misura rtt`.
#[derive(Args, Debug, Clone)]
pub struct RttArgs {
    /// The reflector: HOST or HOST:PORT (IPv6 as [ADDR]:PORT). Not with --l2.
    pub target: Option<String>,
    /// UDP port of the reflector when HOST has none.
    #[arg(long, default_value_t = 862)]
    pub port: u16,
    /// Raw Ethernet probes instead of STAMP over UDP.
    #[arg(long, requires_all = ["interface", "peer"])]
    pub l2: bool,
    /// Interface for --l2.
    #[arg(long, value_name = "IF")]
    pub interface: Option<String>,
    /// MAC address of the reflector for --l2, or `irtt`: HOST[:PORT] is an
    /// `irtt server` (port 2112 when none; see docs/guide/rtt.md).
    #[arg(long, value_name = "MAC|irtt")]
    pub peer: Option<Peer>,
    /// With --peer irtt: irtt's HMAC-MD5 key, as `irtt server --hmac=KEY`.
    #[arg(long, value_name = "KEY")]
    pub irtt_hmac: Option<String>,
    /// Ethertype of raw probes (with --l2).
    #[arg(long, value_name = "HEX", default_value = "0x88B5")]
    pub ethertype: Ethertype,
    /// How raw probes (--l2) travel: ptp puts them after a PTPv2 Sync
    /// header (EtherType 0x88F7), for a NIC that stamps only PTP event
    /// messages in hardware; auto does so exactly there.
    #[arg(long, value_enum, default_value = "auto", value_name = "FORMAT")]
    pub frame_format: misura_cli::stamping::FrameFormatFlag,
    /// Authenticated mode: the reflector's HMAC-SHA-256 key file.
    #[arg(long, value_name = "FILE")]
    pub key_file: Option<std::path::PathBuf>,
    /// Traffic pattern: periodic, burst:N or poisson.
    #[arg(long, default_value = "periodic")]
    pub pattern: Pattern,
    /// Probe period, e.g. 10ms (default 100ms).
    #[arg(long, value_name = "DURATION", conflicts_with = "rate")]
    pub period: Option<DurationArg>,
    /// Probes per second.
    #[arg(long)]
    pub rate: Option<f64>,
    /// Number of probes (default 100 unless --duration).
    #[arg(long)]
    pub count: Option<u64>,
    /// Run for this long, e.g. 60s, 24h (with --count: whichever first).
    #[arg(long, value_name = "DURATION")]
    pub duration: Option<DurationArg>,
    /// Request sizes in bytes (UDP payload; STAMP minimum 44, 112 authenticated), comma separated.
    #[arg(long = "request", alias = "size", value_delimiter = ',')]
    pub request: Vec<usize>,
    /// Response size in bytes (at most the request: a reply is never larger than its request).
    #[arg(long)]
    pub response: Option<usize>,
    /// A probe not answered within this time is lost.
    #[arg(long, value_name = "DURATION", default_value = "1s")]
    pub timeout: DurationArg,
    /// Print a summary line every interval, e.g. 10s.
    #[arg(long, value_name = "DURATION")]
    pub interval: Option<DurationArg>,
    /// Use this clock offset (reflector − client, ns) for the one-way
    /// delays instead of estimating it from the minimum-RTT probes: clocks
    /// known to agree (0 for two namespaces of one host), or an offset taken
    /// on an idle path (`misura load` passes its idle phase's).
    #[arg(long, value_name = "NS", allow_negative_numbers = true)]
    pub clock_offset_ns: Option<f64>,
    /// Count probes whose RTT exceeds this, e.g. 30us.
    #[arg(long, value_name = "DURATION")]
    pub threshold: Option<DurationArg>,
    /// Link rate for the ideal RTT, e.g. 1G (default: read from the interface).
    #[arg(long, value_name = "RATE")]
    pub link_speed: Option<LinkRate>,
    /// Pin the client to this CPU.
    #[arg(long)]
    pub cpu: Option<usize>,
    /// Spin on the socket instead of sleeping until a reply comes (with
    /// SO_BUSY_POLL where the kernel grants it): the lowest user-level RTT,
    /// one CPU at 100 %. Kernel and network RTT are the same either way.
    /// Pin it apart from the reflector (--cpu); the result records it.
    #[arg(long)]
    pub busy_poll: bool,
    /// Clock of the client's stamps: kernel (the default: kernel and
    /// network RTT, one-way delays) or user (user RTT only, about a µs
    /// cheaper per datagram; for comparing with sockperf or ping -U).
    /// UDP only.
    #[arg(long, value_enum, default_value = "kernel", value_name = "CLOCK")]
    pub timestamps: misura_cli::stamping::TimestampsFlag,
    #[command(flatten)]
    pub load: misura_cli::cpuload::CpuLoadArgs,
    /// Seed for the Poisson pattern.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write one CSV row per probe to this file.
    #[arg(long, value_name = "FILE.csv")]
    pub frames: Option<PathBuf>,
    #[command(flatten)]
    pub out: misura_cli::output_flags::OutputArgs,
    #[command(flatten)]
    pub csv: misura_cli::output_flags::CsvArgs,
    #[command(flatten)]
    pub ns: misura_cli::netns::NetnsArgs,
}

impl RttArgs {
    /// The flags checked as a run checks them, without measuring: the
    /// agent refuses a target its child would refuse.
    pub fn check(&self) -> Result<(), crate::RttError> {
        self.plan().map(drop).map_err(Into::into)
    }

    /// The session's plan from the flags (the key file read), or the
    /// refusal in the flags' words.
    pub fn plan(&self) -> Result<RttPlan, Failure> {
        let input = PlanInput {
            key: misura_cli::keys::read_key(&self.key_file)?,
            pattern: self.pattern,
            pace: match (&self.period, self.rate) {
                (Some(p), _) => Pace::Period(p.ns),
                (None, Some(r)) => Pace::Rate(r),
                (None, None) => Pace::Default,
            },
            timeout: self.timeout.span(),
            threshold: self.threshold.as_ref().map(DurationArg::span),
            duration: self.duration.as_ref().map(DurationArg::span),
            count: self.count,
            interval: self.interval.as_ref().map(DurationArg::span),
            request: self.request.clone(),
            response: self.response,
            seed: self.seed,
        };
        RttPlan::new(input).map_err(|e| self.flag_failure(e))
    }

    /// A plan's refusal as the sentence naming the flag that caused it.
    fn flag_failure(&self, e: SessionPlanError) -> Failure {
        use SessionPlanError as E;
        match e {
            E::Period { error, .. } => self.period_failure(error),
            E::RateNotPositive { rate } => Failure::Params(format!("--rate {rate} must be positive")),
            E::TimeoutNotPositive => Failure::Usage("--timeout must be positive".into()),
            E::NoProbes => Failure::Usage("--count must be at least 1".into()),
            E::Interval { error } => match &self.interval {
                Some(i) => i.period_failure("--interval", error),
                None => Failure::Params(error.to_string()),
            },
            E::ResponseSmaller { response, request } => Failure::Params(format!(
                "--response {response} is smaller than the request ({request} bytes): STAMP reflectors answer with the request's full length; use --request {response}"
            )),
            E::Layout {
                error: error @ LayoutError::BelowMinimum { .. },
                mode,
            } => Failure::Params(format!("{error}: use --request {} or more", mode.base_len())),
            E::Layout { error, .. } => Failure::Params(error.to_string()),
            E::PayloadTooLarge => Failure::Params(e.to_string()),
        }
    }

    /// The period's bound missed, as the sentence naming the flag that set
    /// it (--period or --rate; exit 5).
    fn period_failure(&self, e: PeriodError) -> Failure {
        match (&self.period, e) {
            (Some(p), PeriodError::TooShort { .. }) => p.period_failure("--period", e),
            (Some(_), PeriodError::TooLong { period_ns, .. }) => Failure::Params(format!(
                "--period {:.0} s is longer than the longest allowed, 1 hour; for sparser probes, schedule runs with `misura agent`",
                period_ns as f64 / 1e9
            )),
            (None, PeriodError::TooShort { period_ns, .. }) => Failure::Params(format!(
                "--rate: {}: use --rate 1M or lower",
                unkept(period_ns)
            )),
            (None, PeriodError::TooLong { .. }) => Failure::Params(format!(
                "--rate {} probes/s is below the lowest allowed, one probe per hour (0.000278); for sparser probes, schedule runs with `misura agent`",
                self.rate.unwrap_or_default()
            )),
        }
    }
}

/// `--peer`: the reflector's MAC address (with --l2), or `irtt` for an
/// `irtt server` at HOST.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peer {
    Mac(MacAddr),
    Irtt,
}

impl std::str::FromStr for Peer {
    type Err = String;
    fn from_str(s: &str) -> Result<Peer, String> {
        if s.eq_ignore_ascii_case("irtt") {
            return Ok(Peer::Irtt);
        }
        s.parse().map(Peer::Mac).map_err(|e| {
            format!("{e}: --peer takes the reflector's MAC address (with --l2) or `irtt` (an irtt server at HOST)")
        })
    }
}

impl Peer {
    pub fn mac(self) -> Option<MacAddr> {
        match self {
            Peer::Mac(m) => Some(m),
            Peer::Irtt => None,
        }
    }
}

/// `misura rtt`'s arguments (without the subcommand's name) parsed and
/// checked as its command line would be: the first line of clap's message
/// or the plan's refusal. The agent checks an rtt target's child arguments
/// with it when it reads its configuration, so a target the child would
/// refuse is refused then.
pub fn check_command_line<I, T>(args: I) -> Result<(), String>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    use clap::FromArgMatches;
    let cmd = RttArgs::augment_args(clap::Command::new("rtt").no_binary_name(true));
    let first_line = |e: clap::Error| {
        e.to_string()
            .lines()
            .next()
            .unwrap_or("")
            .trim_start_matches("error: ")
            .to_string()
    };
    let m = cmd.try_get_matches_from(args).map_err(first_line)?;
    let a = RttArgs::from_arg_matches(&m).map_err(first_line)?;
    a.check().map_err(|e| e.to_string())
}
