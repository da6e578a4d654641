//! What a plan of the library's refused, typed: the given value and the
//! bound, never a flag's name (`misura`'s `shared/throughput_words.rs`
//! words each with its flags), and its exit class.

use misura_cli::units::{ByteSize, DurationArg};
use misura_measure::period::{PeriodBounds, PeriodError};
use misura_measure::time::{Period, Span};
use std::net::SocketAddr;
use std::time::Duration;

/// What a plan, or a server's announced limits, refused: the given value
/// and the bound, named by what they are, never by a flag (the binary
/// words each with its flags, in its [`Class`]).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Refusal {
    #[error("message size {size} must be between 1 byte and 64 MiB")]
    TcpMsgSize { size: ByteSize },
    #[error("message size {size} must be between {min} and {max} bytes (the UDP payload limit)")]
    UdpMsgSize { size: u64, min: u64, max: u64 },
    /// A duration under its least, or over its most.
    #[error("{of} {value} is too {}", too(error))]
    Duration {
        of: Timed,
        value: DurationArg,
        error: PeriodError,
    },
    #[error("the number of streams, {given}, must be between 1 and {max}")]
    Streams { given: u32, max: u32 },
    #[error("{given} clients is out of range: it must be between 1 and {max} (each client is a thread with its own connections; run more machines for more)")]
    Clients { given: u32, max: u32 },
    #[error("busy-poll window {value}: must be between 0 and {max:?} (a longer window spins through every gap: a whole CPU)")]
    BusyPoll { value: DurationArg, max: Duration },
    /// A connection per transaction asked of UDP.
    #[error("a connection per transaction opens TCP connections: use it with TCP")]
    ConnectNeedsTcp,
    #[error("{side} size {size} is out of range (1 … {max} bytes)")]
    TransactionSize { side: Side, size: u64, max: u64 },
    #[error("the burst, {given}, must be between 1 and {max}")]
    Burst { given: u32, max: u32 },
    /// UDP transactions too small to carry their number, more than one in
    /// flight.
    #[error("UDP requests or responses under 16 bytes carry no transaction number, so only one can be in flight: use a burst of 1, or sizes of 16 bytes or more")]
    BareBurst,
    #[error("a duration of {secs} s is above iperf3's bound of {max} s")]
    Iperf3Duration { secs: u64, max: u64 },
    #[error("{clients} clients: an iperf3 server runs one test at a time, so a test against iperf3 runs one client")]
    Iperf3Clients { clients: u32 },
    #[error("a key file is misura's own authentication; a test against iperf3 does not use it")]
    Iperf3Key,
    /// A TCP test's streams above iperf3's bound.
    #[error("{streams} streams is above iperf3's bound of {max} streams")]
    Iperf3Streams { streams: u32, max: u32 },
    /// A UDP test's streams out of iperf3's range.
    #[error("{streams} streams must be between 1 and {max} (iperf3's bound)")]
    Iperf3StreamsRange { streams: u32, max: u32 },
    #[error("message size {size} is above iperf3's bound of {max} bytes (1M)")]
    Iperf3MsgSize { size: ByteSize, max: u64 },
    #[error("interval reports are not available against iperf3")]
    Iperf3Interval,
    #[error("socket buffers above iperf3's bound of {max} bytes (512M)")]
    Iperf3Window { max: u64 },
    #[error("duration {:.1} s is above the server's limit of {:.1} s: ask for less", *asked_ns as f64 / 1e9, *limit_ns as f64 / 1e9)]
    ServerDuration { asked_ns: u64, limit_ns: u64 },
    #[error("{streams} streams is above the server's limit of {limit}")]
    ServerStreams { streams: u64, limit: u64 },
    #[error("rate {:.3} Mbit/s is above the server's limit of {:.3} Mbit/s", *rate_bps as f64 / 1e6, *limit_bps as f64 / 1e6)]
    ServerRate { rate_bps: u64, limit_bps: u64 },
    #[error("misura serve at {addr} requires authentication: give its shared key")]
    AuthRequired { addr: SocketAddr },
    /// One run of a sweep refused (`parameter`: the swept one's long name).
    #[error("the run with {parameter} {value}: {why}")]
    SweepRun {
        parameter: &'static str,
        value: String,
        why: Box<Refusal>,
    },
    /// A sweep with no parameter of several values (`parameters`: the
    /// sweepable ones' long names).
    #[error("give one of {} a list (10,100,1000) or a range (1..12) to sweep", parameters.join(", "))]
    NothingSwept { parameters: Vec<&'static str> },
    #[error("sweep one parameter at a time: {} each have several values; give a list to only one", parameters.join(" and "))]
    SeveralSwept { parameters: Vec<&'static str> },
}

/// A [`Refusal`]'s exit class, which the binary maps to its code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// A usage slip (exit 2).
    Usage,
    /// A parameter out of its bounds (exit 5).
    Params,
}

/// Which duration of a plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timed {
    /// The test's.
    Duration,
    /// Its interval reports'.
    Interval,
}

/// Which size of a transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Request,
    Response,
}

impl std::fmt::Display for Timed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Timed::Duration => "duration",
            Timed::Interval => "interval",
        })
    }
}

impl std::fmt::Display for Side {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Side::Request => "request",
            Side::Response => "response",
        })
    }
}

/// A period bound missed, in words: "short: it must be at least 1 ns".
pub fn too(e: &PeriodError) -> String {
    let (what, bound) = match e {
        PeriodError::TooShort { min, .. } => ("short: it must be at least", min),
        PeriodError::TooLong { max, .. } => ("long: it must be at most", max),
    };
    format!(
        "{what} {}",
        misura_report::clock::human_ns(bound.as_ns() as f64)
    )
}

impl Refusal {
    /// Its exit class: a usage slip, or a parameter out of bounds.
    pub fn class(&self) -> Class {
        match self {
            Refusal::BusyPoll { .. }
            | Refusal::ConnectNeedsTcp
            | Refusal::AuthRequired { .. }
            | Refusal::NothingSwept { .. }
            | Refusal::SeveralSwept { .. } => Class::Usage,
            Refusal::TcpMsgSize { .. }
            | Refusal::UdpMsgSize { .. }
            | Refusal::Duration { .. }
            | Refusal::Streams { .. }
            | Refusal::Clients { .. }
            | Refusal::TransactionSize { .. }
            | Refusal::Burst { .. }
            | Refusal::BareBurst
            | Refusal::Iperf3Duration { .. }
            | Refusal::Iperf3Clients { .. }
            | Refusal::Iperf3Key
            | Refusal::Iperf3Streams { .. }
            | Refusal::Iperf3StreamsRange { .. }
            | Refusal::Iperf3MsgSize { .. }
            | Refusal::Iperf3Interval
            | Refusal::Iperf3Window { .. }
            | Refusal::ServerDuration { .. }
            | Refusal::ServerStreams { .. }
            | Refusal::ServerRate { .. }
            | Refusal::SweepRun { .. } => Class::Params,
        }
    }

    /// `d` as at least 1 ns, refused as `of`.
    pub fn at_least_1ns(d: &DurationArg, of: Timed) -> Result<(), Refusal> {
        let bounds = PeriodBounds {
            min: Span::from_ns(1),
            max: Span::MAX,
        };
        Period::within(d.span(), bounds)
            .map(drop)
            .map_err(|error| Refusal::Duration {
                of,
                value: d.clone(),
                error,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One of each refusal, as the plans make them.
    fn every_refusal() -> Vec<Refusal> {
        use Refusal as R;
        let short = Refusal::at_least_1ns(&"0s".parse().unwrap(), Timed::Interval).unwrap_err();
        vec![
            R::TcpMsgSize {
                size: "65M".parse().unwrap(),
            },
            R::UdpMsgSize {
                size: 23,
                min: 24,
                max: 65507,
            },
            short.clone(),
            R::Streams {
                given: 0,
                max: 1024,
            },
            R::Clients {
                given: 100_000,
                max: 256,
            },
            R::BusyPoll {
                value: "10s".parse().unwrap(),
                max: Duration::from_millis(1),
            },
            R::ConnectNeedsTcp,
            R::TransactionSize {
                side: Side::Response,
                size: 0,
                max: 65507,
            },
            R::Burst {
                given: 0,
                max: 1024,
            },
            R::BareBurst,
            R::Iperf3Duration {
                secs: 90_000,
                max: 86_400,
            },
            R::Iperf3Clients { clients: 2 },
            R::Iperf3Key,
            R::Iperf3Streams {
                streams: 200,
                max: 128,
            },
            R::Iperf3StreamsRange {
                streams: 0,
                max: 128,
            },
            R::Iperf3MsgSize {
                size: "2M".parse().unwrap(),
                max: 1 << 20,
            },
            R::Iperf3Interval,
            R::Iperf3Window { max: 512 << 20 },
            R::ServerDuration {
                asked_ns: 120_000_000_000,
                limit_ns: 60_000_000_000,
            },
            R::ServerStreams {
                streams: 17,
                limit: 16,
            },
            R::ServerRate {
                rate_bps: 2_000_000,
                limit_bps: 1_000_000,
            },
            R::AuthRequired {
                addr: ([127, 0, 0, 1], 5862).into(),
            },
            R::SweepRun {
                parameter: "msg-size",
                value: "0".into(),
                why: Box::new(short),
            },
            R::NothingSwept {
                parameters: vec!["msg-size", "streams"],
            },
            R::SeveralSwept {
                parameters: vec!["msg-size", "streams"],
            },
        ]
    }

    #[test]
    fn a_refusal_names_no_flag() {
        for r in every_refusal() {
            let msg = r.to_string();
            assert!(!msg.contains("--"), "{msg}");
            assert!(!msg.is_empty());
        }
        let short = Refusal::at_least_1ns(&"0s".parse().unwrap(), Timed::Duration).unwrap_err();
        assert_eq!(
            short.to_string(),
            "duration 0s is too short: it must be at least 1 ns"
        );
        assert_eq!(short.class(), Class::Params);
        assert_eq!(Refusal::ConnectNeedsTcp.class(), Class::Usage);
        let values = "on,maybe".parse::<crate::sweep::ValueList<crate::sweep::OnOff>>();
        let values = values.unwrap_err().to_string();
        assert_eq!(
            values,
            "`maybe` is neither on nor off: the sweep goes over on,off"
        );
    }
}
