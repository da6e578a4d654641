//! The plan of a `misura udp` run: the flags a sweep can vary (clap groups
//! the binary flattens into its command), checked into the plan (the
//! bounds named in each error).

use super::datagram::HEADER;
use crate::client::{ClientPlan, Direction};
use misura_cli::exit::Failure;
use misura_cli::units::{ByteSize, DurationArg, LinkRate};

/// `--msg-size` when not given (a sweep's default list too).
pub const DEFAULT_MSG_SIZE: &str = "1472";
/// The largest UDP payload over IPv4.
const MAX_DATAGRAM: u64 = 65_507;

/// The flags of `misura udp` that `misura sweep udp` can vary (with
/// `--clients`).
#[derive(clap::Args, Debug, Clone)]
pub struct UdpKnobs {
    /// Sending rate of UDP payload (e.g. 10M, 1G).
    #[arg(long, value_name = "RATE")]
    pub rate: LinkRate,
    /// UDP payload per datagram, bytes (≥ 24).
    #[arg(long, default_value = DEFAULT_MSG_SIZE, value_name = "BYTES")]
    pub msg_size: ByteSize,
}

/// The other flags of `misura udp`: the same in every run of a sweep.
#[derive(clap::Args, Debug, Clone)]
pub struct UdpShape {
    /// Length of the test.
    #[arg(long, default_value = "10s", value_name = "DURATION")]
    pub duration: DurationArg,
    /// Set don't-fragment on the sender's socket.
    #[arg(long)]
    pub df: bool,
    /// The server sends, the client receives.
    #[arg(long)]
    pub reverse: bool,
    /// How the sender (either end) waits for the next datagram: `sleep`
    /// sleeps until a measured margin before each burst and spins at most
    /// 1/8 of the time, sending datagrams closer than a sleep can resolve
    /// together (the default: a fraction of a CPU at 1 Gbit/s); `spin` sends
    /// every datagram at its own time, spinning as long as it takes (up to
    /// a whole CPU), for the most even spacing.
    #[arg(long, value_enum, default_value_t = PacingMode::Sleep)]
    pub pacing: PacingMode,
}

/// `--pacing`: CPU-frugal bursts or exact spacing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
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
    pub fn new(client: ClientPlan, k: &UdpKnobs, s: &UdpShape) -> Result<UdpPlan, Failure> {
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

    /// Every bound, named by its flag (the rate's is checked as it is parsed).
    pub fn check(&self) -> Result<(), Failure> {
        self.client.check()?;
        let size = self.msg_size.bytes;
        if !(HEADER as u64..=MAX_DATAGRAM).contains(&size) {
            return Err(Failure::Params(format!(
                "--msg-size {size} must be between {HEADER} and {MAX_DATAGRAM} bytes (the UDP payload limit)"
            )));
        }
        self.duration.at_least("--duration", 1)?;
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
    use crate::client::parsed::Parsed;
    use crate::client::Direction;

    type W = Parsed<UdpKnobs, UdpShape>;

    fn plan(args: &[&str]) -> Result<UdpPlan, Failure> {
        W::plan(args, UdpPlan::new)
    }

    #[test]
    fn flags_resolve_into_a_plan() {
        let p = plan(&["t", "h", "--rate", "10M", "--df", "--reverse"]).unwrap();
        assert_eq!(
            (p.rate_bps(), p.msg_size(), p.duration_ns()),
            (10_000_000, 1472, 10_000_000_000)
        );
        assert_eq!(p.direction(), Direction::Reverse);
        assert!(p.df);
        assert_eq!(p.pacing, PacingMode::Sleep);
        let p = plan(&["t", "h", "--rate", "10M", "--pacing", "spin"]).unwrap();
        assert_eq!(p.pacing.as_str(), "spin");
        assert!(W::of(&["t", "h", "--rate", "1M", "--pacing", "nap"]).is_err());
        assert!(W::of(&["t", "h"]).is_err(), "--rate is required");
        assert!(W::of(&["t", "h", "--rate", "fast"]).is_err());
    }

    #[test]
    fn bounds_name_their_flag() {
        let e = |args: &[&str]| match plan(args) {
            Err(Failure::Params(m)) => m,
            other => panic!("{:?}", other.map(|p| p.msg_size)),
        };
        assert_eq!(
            e(&["t", "h", "--rate", "10M", "--msg-size", "23"]),
            "--msg-size 23 must be between 24 and 65507 bytes (the UDP payload limit)"
        );
        assert!(e(&["t", "h", "--rate", "10M", "--msg-size", "65508"]).starts_with("--msg-size"));
        assert!(e(&["t", "h", "--rate", "10M", "--duration", "0s"]).starts_with("--duration"));
        assert!(plan(&["t", "h", "--rate", "10M", "--msg-size", "24"]).is_ok());
    }
}
