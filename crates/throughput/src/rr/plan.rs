//! The plan of a `misura rr` run: the flags a sweep can vary (clap groups
//! the binary flattens into its command), checked into the plan (the
//! bounds named in each error).

use crate::client::ClientPlan;
use misura_cli::exit::Failure;
use misura_cli::units::{ByteSize, DurationArg};
use std::time::Duration;

/// `--burst` when not given (a sweep's default list too).
pub const DEFAULT_BURST: &str = "1";
/// The most transactions in flight.
const MAX_BURST: u32 = 1024;
/// UDP datagrams this long or longer carry the test id and a transaction
/// number; shorter ones are bare (one transaction in flight, matched by
/// order), so netperf's 1-byte UDP_RR can be reproduced.
pub const NUMBERED: u64 = 16;

/// The flags of `misura rr` that `misura sweep rr` can vary (with
/// `--clients`).
#[derive(clap::Args, Debug, Clone)]
pub struct RrKnobs {
    /// Request size, bytes (udp: ≥ 16).
    #[arg(long, value_name = "BYTES")]
    pub request: Option<ByteSize>,
    /// Response size, bytes (udp: ≥ 16).
    #[arg(long, value_name = "BYTES")]
    pub response: Option<ByteSize>,
    /// Transactions in flight.
    #[arg(long, default_value = DEFAULT_BURST, value_name = "N")]
    pub burst: u32,
}

/// The other flags of `misura rr`: the same in every run of a sweep.
#[derive(clap::Args, Debug, Clone)]
pub struct RrShape {
    /// tcp or udp.
    #[arg(long, value_enum, default_value_t = RrProto::Tcp)]
    pub proto: RrProto,
    /// A new TCP connection per transaction (TCP_CRR).
    #[arg(long)]
    pub connect: bool,
    /// Length of the test.
    #[arg(long, default_value = "10s", value_name = "DURATION")]
    pub duration: DurationArg,
    /// udp: a response later than this counts the transaction lost.
    #[arg(long, default_value = "200ms", value_name = "DURATION")]
    pub timeout: DurationArg,
}

/// `--proto`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum RrProto {
    Tcp,
    Udp,
}

/// The three tests `misura rr` runs (netperf's TCP_RR, UDP_RR, TCP_CRR).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RrKind {
    Tcp,
    Udp,
    /// A new TCP connection per transaction.
    Crr,
}

impl RrKind {
    /// The name on the wire and in the result.
    pub fn as_str(self) -> &'static str {
        match self {
            RrKind::Tcp => "rr-tcp",
            RrKind::Udp => "rr-udp",
            RrKind::Crr => "crr",
        }
    }

    /// The largest request or response.
    fn max_size(self) -> u64 {
        match self {
            RrKind::Udp => 65_507,
            RrKind::Tcp | RrKind::Crr => 64 << 20,
        }
    }
}

/// What a transaction loop needs to know.
#[derive(Clone, Copy, Debug)]
pub struct Transactions {
    pub request: u64,
    pub response: u64,
    pub burst: u32,
    /// udp: a response later than this is lost.
    pub timeout: Duration,
}

impl Transactions {
    /// UDP datagrams too short for the test id and transaction number.
    pub fn bare(&self) -> bool {
        self.request < NUMBERED || self.response < NUMBERED
    }
}

/// One `misura rr` run, checked. A sweep sets one field and checks again.
#[derive(Clone, Debug)]
pub struct RrPlan {
    pub client: ClientPlan,
    pub kind: RrKind,
    pub t: Transactions,
    pub duration: DurationArg,
}

impl RrPlan {
    pub fn new(client: ClientPlan, k: &RrKnobs, s: &RrShape) -> Result<RrPlan, Failure> {
        let kind = match (s.proto, s.connect) {
            (RrProto::Udp, true) => {
                return Err(Failure::Usage(
                    "--connect opens TCP connections: use it with --proto tcp".into(),
                ))
            }
            (RrProto::Udp, false) => RrKind::Udp,
            (RrProto::Tcp, true) => RrKind::Crr,
            (RrProto::Tcp, false) => RrKind::Tcp,
        };
        let default = if kind == RrKind::Udp { NUMBERED } else { 1 };
        let size = |v: &Option<ByteSize>| v.as_ref().map_or(default, |b| b.bytes);
        let p = RrPlan {
            client,
            kind,
            t: Transactions {
                request: size(&k.request),
                response: size(&k.response),
                burst: k.burst,
                // A timeout under 1 ms would count every response lost.
                timeout: Duration::from_nanos(s.timeout.ns.max(1_000_000) as u64),
            },
            duration: s.duration.clone(),
        };
        p.check()?;
        Ok(p)
    }

    /// Every bound, named by its flag.
    pub fn check(&self) -> Result<(), Failure> {
        self.client.check()?;
        let max = self.kind.max_size();
        for (flag, v) in [
            ("--request", self.t.request),
            ("--response", self.t.response),
        ] {
            if v < 1 || v > max {
                return Err(Failure::Params(format!(
                    "{flag} {v} is out of range (1 … {max} bytes)"
                )));
            }
        }
        self.duration.at_least("--duration", 1)?;
        if self.t.burst == 0 || self.t.burst > MAX_BURST {
            return Err(Failure::Params(format!(
                "--burst must be between 1 and {MAX_BURST}"
            )));
        }
        if self.kind == RrKind::Udp && self.t.burst > 1 && self.t.bare() {
            return Err(Failure::Params(
                "UDP requests or responses under 16 bytes carry no transaction number, so only one can be in flight: use --burst 1, or sizes of 16 bytes or more".into(),
            ));
        }
        Ok(())
    }

    pub fn duration_ns(&self) -> u64 {
        self.duration.ns as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::parsed::Parsed;
    use std::time::Duration;

    type W = Parsed<RrKnobs, RrShape>;

    fn plan(args: &[&str]) -> Result<RrPlan, Failure> {
        W::plan(args, RrPlan::new)
    }

    #[test]
    fn kinds_and_sizes() {
        let p = plan(&["t", "h"]).unwrap();
        assert_eq!((p.kind, p.t.request, p.t.response), (RrKind::Tcp, 1, 1));
        assert_eq!(p.t.timeout, Duration::from_millis(200));
        let u = plan(&["t", "h", "--proto", "udp"]).unwrap();
        assert_eq!(
            (u.kind.as_str(), u.t.request, u.t.response),
            ("rr-udp", 16, 16)
        );
        // Bare datagrams under 16 bytes: fine with one in flight, refused with more.
        let bare = plan(&[
            "t",
            "h",
            "--proto",
            "udp",
            "--request",
            "1",
            "--response",
            "1",
        ]);
        assert_eq!(bare.unwrap().t.request, 1);
        assert!(matches!(
            plan(&["t", "h", "--proto", "udp", "--request", "1", "--burst", "2"]),
            Err(Failure::Params(_))
        ));
        assert_eq!(plan(&["t", "h", "--connect"]).unwrap().kind, RrKind::Crr);
        assert!(matches!(
            plan(&["t", "h", "--proto", "udp", "--connect"]),
            Err(Failure::Usage(_))
        ));
        assert!(W::of(&["t", "h", "--proto", "sctp"]).is_err());
        // A zero timeout is raised to 1 ms, as before.
        let z = plan(&["t", "h", "--timeout", "0s"]).unwrap();
        assert_eq!(z.t.timeout, Duration::from_millis(1));
    }

    #[test]
    fn bounds_name_their_flag() {
        let e = |args: &[&str]| match plan(args) {
            Err(Failure::Params(m)) => m,
            other => panic!("{:?}", other.map(|p| p.t)),
        };
        assert_eq!(
            e(&["t", "h", "--burst", "0"]),
            "--burst must be between 1 and 1024"
        );
        assert_eq!(
            e(&["t", "h", "--proto", "udp", "--response", "65508"]),
            "--response 65508 is out of range (1 … 65507 bytes)"
        );
        assert!(e(&["t", "h", "--request", "0"]).starts_with("--request 0"));
        assert!(e(&["t", "h", "--duration", "0s"]).starts_with("--duration"));
    }
}
