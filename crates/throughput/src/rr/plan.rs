//! The plan of a `misura rr` run: the knobs a sweep can vary and the rest of
//! its shape (plain values: the binary's clap groups convert into them),
//! checked into the plan (the bounds named in each error, by the flag).

use crate::client::ClientPlan;
use crate::error::{Refusal, Side, Timed};
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
#[derive(Debug, Clone)]
pub struct RrKnobs {
    /// Request size, bytes (udp: ≥ 16).
    pub request: Option<ByteSize>,
    /// Response size, bytes (udp: ≥ 16).
    pub response: Option<ByteSize>,
    /// Transactions in flight.
    pub burst: u32,
}

/// The other flags of `misura rr`: the same in every run of a sweep.
#[derive(Debug, Clone)]
pub struct RrShape {
    /// tcp or udp.
    pub proto: RrProto,
    /// A new TCP connection per transaction (TCP_CRR).
    pub connect: bool,
    /// Length of the test.
    pub duration: DurationArg,
    /// udp: a response later than this counts the transaction lost.
    pub timeout: DurationArg,
}

/// `--proto`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
    pub fn new(client: ClientPlan, k: &RrKnobs, s: &RrShape) -> Result<RrPlan, Refusal> {
        let kind = match (s.proto, s.connect) {
            (RrProto::Udp, true) => return Err(Refusal::ConnectNeedsTcp),
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

    /// Every bound, in the order the binary's flags list them.
    pub fn check(&self) -> Result<(), Refusal> {
        self.client.check()?;
        let max = self.kind.max_size();
        for (side, size) in [
            (Side::Request, self.t.request),
            (Side::Response, self.t.response),
        ] {
            if size < 1 || size > max {
                return Err(Refusal::TransactionSize { side, size, max });
            }
        }
        Refusal::at_least_1ns(&self.duration, Timed::Duration)?;
        if self.t.burst == 0 || self.t.burst > MAX_BURST {
            return Err(Refusal::Burst {
                given: self.t.burst,
                max: MAX_BURST,
            });
        }
        if self.kind == RrKind::Udp && self.t.burst > 1 && self.t.bare() {
            return Err(Refusal::BareBurst);
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

    fn plan(proto: RrProto, connect: bool, burst: u32) -> Result<RrPlan, Refusal> {
        let client = crate::client::on_host("h");
        let knobs = RrKnobs {
            request: None,
            response: Some("1".parse().unwrap()),
            burst,
        };
        let shape = RrShape {
            proto,
            connect,
            duration: "1s".parse().unwrap(),
            timeout: "0s".parse().unwrap(),
        };
        RrPlan::new(client, &knobs, &shape)
    }

    #[test]
    fn plain_knobs_are_checked_into_a_plan() {
        let p = plan(RrProto::Udp, false, 1).unwrap();
        assert_eq!((p.kind, p.t.request, p.t.response), (RrKind::Udp, 16, 1));
        assert_eq!(p.t.timeout, Duration::from_millis(1), "raised to 1 ms");
        assert_eq!(plan(RrProto::Tcp, true, 1).unwrap().kind, RrKind::Crr);
        assert_eq!(
            plan(RrProto::Udp, true, 1).err(),
            Some(Refusal::ConnectNeedsTcp)
        );
        assert_eq!(plan(RrProto::Udp, false, 2).err(), Some(Refusal::BareBurst));
        assert_eq!(
            plan(RrProto::Tcp, false, 0).err(),
            Some(Refusal::Burst {
                given: 0,
                max: 1024
            })
        );
    }
}
