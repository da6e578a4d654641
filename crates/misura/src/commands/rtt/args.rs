//! Flags of `misura rtt`, their session request ([`RttRequest`]) and the
//! session's typed refusals worded with the flags given.

use clap::Args;
use misura_cli::exit::Failure;
use misura_cli::units::{DurationArg, Ethertype, LinkRate};
use misura_measure::period::PeriodError;
use misura_measure::schedule::unkept;
use misura_measure::stamp_sender::LayoutError;
use misura_measure::Pattern;
use misura_rtt::plan::{Pace, PlanInput, RttPlan, SessionPlanError};
use misura_rtt::{Peer, RequestError, RttError, RttRequest};
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
    #[arg(long, value_name = "MAC|irtt", value_parser = parse_peer)]
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
    pub frame_format: crate::shared::common_flags::FrameFormatFlag,
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
    pub timestamps: crate::shared::common_flags::TimestampsFlag,
    #[command(flatten)]
    pub load: crate::shared::common_flags::CpuLoadArgs,
    /// Seed for the Poisson pattern.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write one CSV row per probe to this file.
    #[arg(long, value_name = "FILE.csv")]
    pub frames: Option<PathBuf>,
    #[command(flatten)]
    pub out: crate::shared::common_flags::OutputArgs,
    #[command(flatten)]
    pub csv: crate::shared::common_flags::CsvArgs,
    #[command(flatten)]
    pub ns: crate::shared::common_flags::NetnsArgs,
}

impl RttArgs {
    /// What the flags ask, the key file not read (`key`): the request
    /// the irtt client takes as it is.
    pub fn unchecked(&self, key: Option<misura_measure::auth::StampKey>) -> RttRequest {
        RttRequest {
            target: self.target.clone(),
            port: self.port,
            l2: self.l2,
            interface: self.interface.clone(),
            peer: self.peer,
            irtt_hmac: self.irtt_hmac.clone(),
            ethertype: self.ethertype.value,
            frame_format: self.frame_format.into(),
            plan: PlanInput {
                key,
                pattern: self.pattern,
                pace: match (&self.period, self.rate) {
                    (Some(p), _) => Pace::Period(p.span()),
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
            },
            clock_offset_ns: self.clock_offset_ns,
            link_speed_bps: self.link_speed.as_ref().map(|l| l.bps),
            cpu: self.cpu,
            busy_poll: self.busy_poll,
            timestamps: self.timestamps.into(),
            load: (&self.load).into(),
            frames: self.frames.clone(),
            quiet: self.out.quiet,
            json: self.out.json,
            netns: self.ns.netns.clone(),
        }
    }

    /// The STAMP session's request, checked as the session checks it (the
    /// transport, then the key file read and the plan), a refusal in the
    /// flags' words.
    pub fn request(&self) -> Result<RttRequest, Failure> {
        let mut r = self.unchecked(None);
        r.check().map_err(request_failure)?;
        r.plan.key = misura_cli::keys::read_key(&self.key_file)?;
        RttPlan::new(r.plan.clone()).map_err(|e| self.flag_failure(e))?;
        Ok(r)
    }

    /// A session's error, its typed refusals in the flags' words.
    pub fn refusal(&self, e: RttError) -> anyhow::Error {
        match e {
            RttError::Request(e) => request_failure(e).into(),
            RttError::SessionPlan(e) => self.flag_failure(e).into(),
            e => e.into(),
        }
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
            (Some(_), PeriodError::TooLong { period, .. }) => Failure::Params(format!(
                "--period {:.0} s is longer than the longest allowed, 1 hour; for sparser probes, schedule runs with `misura agent`",
                period.as_ns() as f64 / 1e9
            )),
            (None, PeriodError::TooShort { period, .. }) => Failure::Params(format!(
                "--rate: {}: use --rate 1M or lower",
                unkept(period)
            )),
            (None, PeriodError::TooLong { .. }) => Failure::Params(format!(
                "--rate {} probes/s is below the lowest allowed, one probe per hour (0.000278); for sparser probes, schedule runs with `misura agent`",
                self.rate.unwrap_or_default()
            )),
        }
    }
}

/// A request's refusal as the sentence naming the flags that asked it
/// (exit 2).
pub fn request_failure(e: RequestError) -> Failure {
    Failure::Usage(match e {
        RequestError::IrttPeer => "--peer irtt probes an irtt server, not a STAMP reflector: run it as `misura rtt HOST --peer irtt`".into(),
        RequestError::TargetWithRawProbes => "give either a HOST (STAMP over UDP) or --l2 --interface IF --peer MAC, not both".into(),
        RequestError::PtpOverUdp => "--frame-format ptp is for raw probes (--l2 --interface IF --peer MAC); STAMP over UDP has no PTP form".into(),
        RequestError::UserStampsOnRawProbes => "--timestamps user is for STAMP over UDP; raw probes (--l2) always take kernel stamps".into(),
        RequestError::NoPeerMac => "--l2 needs --peer MAC (the reflector's address)".into(),
        RequestError::NoTarget => "misura rtt needs a reflector: misura rtt HOST[:PORT], or --l2 --interface IF --peer MAC (see misura rtt --help)".into(),
    })
}

/// `--peer`: the reflector's MAC address (with --l2), or `irtt` for an
/// `irtt server` at HOST.
fn parse_peer(s: &str) -> Result<Peer, String> {
    if s.eq_ignore_ascii_case("irtt") {
        return Ok(Peer::Irtt);
    }
    s.parse().map(Peer::Mac).map_err(|e| {
        format!("{e}: --peer takes the reflector's MAC address (with --l2) or `irtt` (an irtt server at HOST)")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        a: RttArgs,
    }

    fn request(argv: &[&str]) -> RttRequest {
        Cli::try_parse_from(argv).unwrap().a.unchecked(None)
    }

    /// The library's defaults (what `misura load` starts from) are the
    /// flags' defaults.
    #[test]
    fn the_flags_defaults_are_the_requests() {
        assert_eq!(
            format!("{:?}", request(&["rtt"])),
            format!("{:?}", RttRequest::default())
        );
    }

    #[test]
    fn the_flags_set_the_request() {
        let r = request(&[
            "rtt",
            "h",
            "--period",
            "20ms",
            "--timeout",
            "2s",
            "--interval",
            "500ms",
            "-q",
            "--cpu",
            "1",
            "--clock-offset-ns",
            "-12.5",
            "--peer",
            "irtt",
            "--request",
            "64,512",
        ]);
        assert_eq!(
            r.plan.pace,
            Pace::Period(misura_rtt::plan::Span::from_millis(20))
        );
        assert_eq!(r.plan.timeout.as_ns(), 2_000_000_000);
        assert_eq!(r.plan.request, vec![64, 512]);
        assert_eq!(
            (r.quiet, r.cpu, r.clock_offset_ns),
            (true, Some(1), Some(-12.5))
        );
        assert_eq!((r.peer, r.target.as_deref()), (Some(Peer::Irtt), Some("h")));
        assert!(Cli::try_parse_from(["rtt", "--peer", "nonsense"]).is_err());
    }
}
