//! What `misura-throughput` refused (its `Refusal`, which names no flag),
//! worded with the flags of `tcp`, `udp`, `rr`, `serve`, `sweep` and
//! `load`, in its exit class; and the two iperf3 errors whose words name
//! a flag. Its own module (on misura-cli's `Failure`, not the binary's
//! exit module) so that `code_for` can ask it for the class without an
//! import cycle.

use misura_cli::exit::Failure;
use misura_throughput::error::{Class, Iperf3PeerError, Refusal, Side, ThroughputError, Timed};
use misura_throughput::udp::BlockedByDf;

/// The refusal as the sentence that names its flags, in its class (exit 2
/// for a usage slip, 5 for a parameter).
pub fn sentence(r: &Refusal) -> Failure {
    let words = words(r);
    match r.class() {
        Class::Usage => Failure::Usage(words),
        Class::Params => Failure::Params(words),
    }
}

/// A throughput error as the binary reports it: a refusal in its flags'
/// words, an iperf3 peer's that names a flag (`--peer auto`, `--cport`)
/// with it, with the same chain and class; any other as it is.
pub fn error(e: ThroughputError) -> anyhow::Error {
    use Iperf3PeerError as P;
    match e {
        ThroughputError::Refusal(r) => sentence(&r).into(),
        ThroughputError::Iperf3(P::NoPeer { tried }) => anyhow::anyhow!(
            "--peer auto found neither misura serve nor an iperf3 server ({tried}); give --peer iperf3, or start `misura serve` there"
        ),
        ThroughputError::Iperf3(P::BindCport { port, source }) => cport(port, source),
        ThroughputError::Iperf3(P::Stream {
            stream,
            addr,
            source,
        }) => match *source {
            ThroughputError::Iperf3(P::BindCport { port, source }) => cport(port, source)
                .context(format!("opening iperf3 data stream {stream} to {addr}")),
            source => ThroughputError::Iperf3(P::Stream {
                stream,
                addr,
                source: Box::new(source),
            })
            .into(),
        },
        e => e.into(),
    }
}

/// `udp --df` that measured nothing (datagrams above the path MTU), in
/// the flags' words.
pub fn blocked_by_df(b: &BlockedByDf) -> String {
    format!(
        "--msg-size {} with --df: nothing arrived ({} sends failed with EMSGSIZE): a {}-byte \
         datagram is a {}-byte IPv4 packet, above the path MTU of {}, and \
         don't-fragment forbids splitting it. Use --msg-size {}, or leave out --df to let it \
         be fragmented",
        b.msg_size,
        b.failed,
        b.msg_size,
        b.packet(),
        b.mtu_text(),
        b.fits()
    )
}

/// A `--cport` that could not be bound: the host's error, in the words
/// the library's `BindCport` gives without the flag.
fn cport(port: u16, source: std::io::Error) -> anyhow::Error {
    anyhow::Error::new(source).context(format!("binding --cport {port}"))
}

fn flag(of: Timed) -> &'static str {
    match of {
        Timed::Duration => "--duration",
        Timed::Interval => "--interval",
    }
}

/// The sentence, as the plans said it when they named the flags.
/// The refusal's sentence, with its flags.
pub fn words(r: &Refusal) -> String {
    use Refusal as R;
    match r {
        R::TcpMsgSize { size } => format!("--msg-size {size} must be between 1 byte and 64 MiB"),
        R::UdpMsgSize { size, min, max } => format!(
            "--msg-size {size} must be between {min} and {max} bytes (the UDP payload limit)"
        ),
        R::Duration { of, value, error } => value.period_failure(flag(*of), *error).to_string(),
        R::Streams { max, .. } => format!("--streams must be between 1 and {max}"),
        R::Clients { given, max } => format!(
            "--clients {given} is out of range: it must be between 1 and {max} (each client is a thread with its own connections; run more machines for more)"
        ),
        R::BusyPoll { value, max } => format!(
            "--busy-poll {value}: must be between 0 and {max:?} (a longer window spins through \
             every gap: a whole CPU)"
        ),
        R::ConnectNeedsTcp => "--connect opens TCP connections: use it with --proto tcp".into(),
        R::TransactionSize { side, size, max } => {
            let flag = match side {
                Side::Request => "--request",
                Side::Response => "--response",
            };
            format!("{flag} {size} is out of range (1 … {max} bytes)")
        }
        R::Burst { max, .. } => format!("--burst must be between 1 and {max}"),
        R::BareBurst => "UDP requests or responses under 16 bytes carry no transaction number, so only one can be in flight: use --burst 1, or sizes of 16 bytes or more".into(),
        R::Iperf3Duration { secs, max } => {
            format!("--duration of {secs} s is above iperf3's bound of {max} s")
        }
        R::Iperf3Clients { clients } => format!(
            "--clients {clients}: an iperf3 server runs one test at a time, so --peer iperf3 runs one client"
        ),
        R::Iperf3Key => {
            "--key-file is misura's own authentication; --peer iperf3 does not use it".into()
        }
        R::Iperf3Streams { streams, max } => {
            format!("--streams {streams} is above iperf3's bound of {max} streams")
        }
        R::Iperf3StreamsRange { streams, max } => {
            format!("--streams {streams} must be between 1 and {max} (iperf3's bound)")
        }
        R::Iperf3MsgSize { size, max } => {
            format!("--msg-size {size} is above iperf3's bound of {max} bytes (1M)")
        }
        R::Iperf3Interval => "--interval is not available with --peer iperf3".into(),
        R::Iperf3Window { max } => {
            format!("--sndbuf/--rcvbuf above iperf3's bound of {max} bytes (512M)")
        }
        R::ServerDuration { .. } => format!("{r} (--duration)"),
        R::ServerStreams { .. } | R::ServerRate { .. } => r.to_string(),
        R::AuthRequired { addr } => format!(
            "misura serve at {addr} requires authentication: give its shared key with --key-file"
        ),
        R::SweepRun {
            parameter,
            value,
            why,
        } => format!("the run with --{parameter} {value}: {}", words(why)),
        R::NothingSwept { parameters } => format!(
            "give one of --{} a list (10,100,1000) or a range (1..12) to sweep",
            parameters.join(", --")
        ),
        R::SeveralSwept { parameters } => format!(
            "sweep one parameter at a time: --{} each have several values; give a list to only one flag",
            parameters.join(" and --")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_refusal_is_worded_with_its_flags_and_class() {
        use Refusal as R;
        let zero = |of| Refusal::at_least_1ns(&"0s".parse().unwrap(), of).unwrap_err();
        let cases: Vec<(Refusal, i32, &str)> = vec![
            (
                R::TcpMsgSize {
                    size: "65M".parse().unwrap(),
                },
                5,
                "--msg-size 65M must be between 1 byte and 64 MiB",
            ),
            (
                R::UdpMsgSize {
                    size: 23,
                    min: 24,
                    max: 65507,
                },
                5,
                "--msg-size 23 must be between 24 and 65507 bytes (the UDP payload limit)",
            ),
            (
                zero(Timed::Duration),
                5,
                "--duration 0s is too short: it must be at least 1 ns",
            ),
            (
                zero(Timed::Interval),
                5,
                "--interval 0s is too short: it must be at least 1 ns",
            ),
            (
                R::Streams { given: 0, max: 1024 },
                5,
                "--streams must be between 1 and 1024",
            ),
            (
                R::Clients {
                    given: 100_000,
                    max: 256,
                },
                5,
                "--clients 100000 is out of range: it must be between 1 and 256 (each client is a thread with its own connections; run more machines for more)",
            ),
            (
                R::BusyPoll {
                    value: "10s".parse().unwrap(),
                    max: Duration::from_millis(1),
                },
                2,
                "--busy-poll 10s: must be between 0 and 1ms (a longer window spins through every gap: a whole CPU)",
            ),
            (
                R::ConnectNeedsTcp,
                2,
                "--connect opens TCP connections: use it with --proto tcp",
            ),
            (
                R::TransactionSize {
                    side: Side::Request,
                    size: 0,
                    max: 65507,
                },
                5,
                "--request 0 is out of range (1 … 65507 bytes)",
            ),
            (
                R::TransactionSize {
                    side: Side::Response,
                    size: 70000,
                    max: 65507,
                },
                5,
                "--response 70000 is out of range (1 … 65507 bytes)",
            ),
            (
                R::Burst { given: 0, max: 1024 },
                5,
                "--burst must be between 1 and 1024",
            ),
            (
                R::BareBurst,
                5,
                "UDP requests or responses under 16 bytes carry no transaction number, so only one can be in flight: use --burst 1, or sizes of 16 bytes or more",
            ),
            (
                R::Iperf3Duration {
                    secs: 90_000,
                    max: 86_400,
                },
                5,
                "--duration of 90000 s is above iperf3's bound of 86400 s",
            ),
            (
                R::Iperf3Clients { clients: 2 },
                5,
                "--clients 2: an iperf3 server runs one test at a time, so --peer iperf3 runs one client",
            ),
            (
                R::Iperf3Key,
                5,
                "--key-file is misura's own authentication; --peer iperf3 does not use it",
            ),
            (
                R::Iperf3Streams {
                    streams: 200,
                    max: 128,
                },
                5,
                "--streams 200 is above iperf3's bound of 128 streams",
            ),
            (
                R::Iperf3StreamsRange {
                    streams: 0,
                    max: 128,
                },
                5,
                "--streams 0 must be between 1 and 128 (iperf3's bound)",
            ),
            (
                R::Iperf3MsgSize {
                    size: "2M".parse().unwrap(),
                    max: 1 << 20,
                },
                5,
                "--msg-size 2M is above iperf3's bound of 1048576 bytes (1M)",
            ),
            (
                R::Iperf3Interval,
                5,
                "--interval is not available with --peer iperf3",
            ),
            (
                R::Iperf3Window { max: 512 << 20 },
                5,
                "--sndbuf/--rcvbuf above iperf3's bound of 536870912 bytes (512M)",
            ),
            (
                R::ServerDuration {
                    asked_ns: 120_000_000_000,
                    limit_ns: 60_000_000_000,
                },
                5,
                "duration 120.0 s is above the server's limit of 60.0 s: ask for less (--duration)",
            ),
            (
                R::ServerStreams {
                    streams: 17,
                    limit: 16,
                },
                5,
                "17 streams is above the server's limit of 16",
            ),
            (
                R::ServerRate {
                    rate_bps: 2_000_000,
                    limit_bps: 1_000_000,
                },
                5,
                "rate 2.000 Mbit/s is above the server's limit of 1.000 Mbit/s",
            ),
            (
                R::AuthRequired {
                    addr: ([127, 0, 0, 1], 5862).into(),
                },
                2,
                "misura serve at 127.0.0.1:5862 requires authentication: give its shared key with --key-file",
            ),
            (
                R::SweepRun {
                    parameter: "request",
                    value: "1".into(),
                    why: Box::new(R::BareBurst),
                },
                5,
                "the run with --request 1: UDP requests or responses under 16 bytes",
            ),
            (
                R::NothingSwept {
                    parameters: vec!["streams", "clients", "burst"],
                },
                2,
                "give one of --streams, --clients, --burst a list (10,100,1000) or a range (1..12) to sweep",
            ),
            (
                R::SeveralSwept {
                    parameters: vec!["streams", "burst"],
                },
                2,
                "sweep one parameter at a time: --streams and --burst each have several values; give a list to only one flag",
            ),
        ];
        for (r, code, words) in cases {
            let f = sentence(&r);
            assert_eq!(
                (
                    crate::shared::exit::code(f.class()),
                    crate::shared::exit::code(r.class().into())
                ),
                (code, code),
                "{r:?}"
            );
            assert!(f.to_string().starts_with(words), "{f}");
        }
    }

    #[test]
    fn an_iperf3_error_keeps_its_flag_chain_and_class() {
        let bind = ThroughputError::from(Iperf3PeerError::Stream {
            stream: 1,
            addr: ([127, 0, 0, 1], 5201).into(),
            source: Box::new(
                Iperf3PeerError::BindCport {
                    port: 5000,
                    source: std::io::ErrorKind::AddrInUse.into(),
                }
                .into(),
            ),
        });
        let e = error(bind);
        assert_eq!(
            format!("{e:#}"),
            "opening iperf3 data stream 1 to 127.0.0.1:5201: binding --cport 5000: address in use"
        );
        assert_eq!(crate::shared::exit::code_for(&e), 1);
        let none = Iperf3PeerError::NoPeer { tried: "x".into() };
        let e = error(none.into());
        assert!(
            e.to_string().starts_with("--peer auto found neither"),
            "{e}"
        );
        let key = error(Refusal::Iperf3Key.into());
        assert_eq!(crate::shared::exit::code_for(&key), 5);
    }

    #[test]
    fn df_that_measured_nothing_is_worded_with_its_flags() {
        let b = BlockedByDf {
            msg_size: 2000,
            failed: 1220,
            path_mtu: Some(1500),
        };
        assert_eq!(
            blocked_by_df(&b),
            "--msg-size 2000 with --df: nothing arrived (1220 sends failed with EMSGSIZE): a \
             2000-byte datagram is a 2028-byte IPv4 packet, above the path MTU of 1500 bytes, \
             and don't-fragment forbids splitting it. Use --msg-size 1472 or less, or leave out \
             --df to let it be fragmented"
        );
        assert!(!b.to_string().contains("--"), "{b}");
        let unknown = BlockedByDf {
            path_mtu: None,
            ..b
        };
        assert!(blocked_by_df(&unknown).contains("path MTU of unknown, and"));
        assert!(blocked_by_df(&unknown).contains("Use --msg-size smaller,"));
    }
}
