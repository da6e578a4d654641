//! The plan of a `misura udp` run: the knobs a sweep can vary and the rest of
//! its shape (plain values: the binary's clap groups convert into them),
//! checked into the plan (the bounds named in each error, by the flag).

use super::datagram::HEADER;
use crate::client::{ClientPlan, Direction};
use crate::error::{Refusal, Timed};
use misura_cli::units::{ByteSize, DurationArg, LinkRate};

/// `--msg-size` when not given (a sweep's default list too).
pub const DEFAULT_MSG_SIZE: &str = "1472";
/// The largest UDP payload over IPv4.
const MAX_DATAGRAM: u64 = 65_507;

/// The flags of `misura udp` that `misura sweep udp` can vary (with
/// `--clients`).
#[derive(Debug, Clone)]
pub struct UdpKnobs {
    /// Sending rate of UDP payload (e.g. 10M, 1G).
    pub rate: LinkRate,
    /// UDP payload per datagram, bytes (≥ 24).
    pub msg_size: ByteSize,
}

/// The other flags of `misura udp`: the same in every run of a sweep.
#[derive(Debug, Clone)]
pub struct UdpShape {
    /// Length of the test.
    pub duration: DurationArg,
    /// Set don't-fragment on the sender's socket.
    pub df: bool,
    /// The server sends, the client receives.
    pub reverse: bool,
    /// How the sender (either end) waits for the next datagram: `sleep`
    /// sleeps until a measured margin before each burst and spins at most
    /// 1/8 of the time, sending datagrams closer than a sleep can resolve
    /// together (the default: a fraction of a CPU at 1 Gbit/s); `spin` sends
    /// every datagram at its own time, spinning as long as it takes (up to
    /// a whole CPU), for the most even spacing.
    pub pacing: PacingMode,
}

/// `--pacing`: CPU-frugal bursts or exact spacing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacingMode {
    Sleep,
    Spin,
}

impl PacingMode {
    pub fn as_str(self) -> &'static str {
        match self {
            PacingMode::Sleep => "sleep",
            PacingMode::Spin => "spin",
        }
    }
}

/// One `misura udp` run, checked. A sweep sets one field and checks again.
#[derive(Clone, Debug)]
pub struct UdpPlan {
    pub client: ClientPlan,
    pub rate: LinkRate,
    pub msg_size: ByteSize,
    pub duration: DurationArg,
    pub df: bool,
    pub reverse: bool,
    pub pacing: PacingMode,
}

impl UdpPlan {
    pub fn new(client: ClientPlan, k: &UdpKnobs, s: &UdpShape) -> Result<UdpPlan, Refusal> {
        let p = UdpPlan {
            client,
            rate: k.rate.clone(),
            msg_size: k.msg_size.clone(),
            duration: s.duration.clone(),
            df: s.df,
            reverse: s.reverse,
            pacing: s.pacing,
        };
        p.check()?;
        Ok(p)
    }

    /// Every bound (the rate's is checked as it is parsed).
    pub fn check(&self) -> Result<(), Refusal> {
        self.client.check()?;
        let size = self.msg_size.bytes;
        if !(HEADER as u64..=MAX_DATAGRAM).contains(&size) {
            return Err(Refusal::UdpMsgSize {
                size,
                min: HEADER as u64,
                max: MAX_DATAGRAM,
            });
        }
        Refusal::at_least_1ns(&self.duration, Timed::Duration)?;
        Ok(())
    }

    pub fn direction(&self) -> Direction {
        Direction::of(self.reverse, false)
    }

    pub fn duration_ns(&self) -> u64 {
        self.duration.ns as u64
    }

    pub fn rate_bps(&self) -> u64 {
        self.rate.bps
    }

    pub fn msg_size(&self) -> u64 {
        self.msg_size.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(msg_size: u64, pacing: PacingMode) -> Result<UdpPlan, Refusal> {
        let client = crate::client::on_host("h");
        let knobs = UdpKnobs {
            rate: "10M".parse().unwrap(),
            msg_size: msg_size.to_string().parse().unwrap(),
        };
        let shape = UdpShape {
            duration: "1s".parse().unwrap(),
            df: false,
            reverse: true,
            pacing,
        };
        UdpPlan::new(client, &knobs, &shape)
    }

    #[test]
    fn plain_knobs_are_checked_into_a_plan() {
        let p = plan(1472, PacingMode::Spin).unwrap();
        assert_eq!((p.rate_bps(), p.msg_size()), (10_000_000, 1472));
        assert_eq!(
            (p.direction(), p.pacing.as_str()),
            (Direction::Reverse, "spin")
        );
        assert_eq!(
            plan(23, PacingMode::Sleep).err().unwrap(),
            Refusal::UdpMsgSize {
                size: 23,
                min: 24,
                max: 65507
            }
        );
    }
}
