//! The flags every client of `misura serve` shares (`tcp`, `udp`, `rr`,
//! `setup`, `sweep`, and `load`'s flows): the target, the key file, output
//! and namespace; the clap groups of the tcp, udp and rr tests' knobs and
//! shapes (`tcp`, `udp`, `rr`, their sweeps and `load`'s flows flatten
//! them), converted with `From` into `misura_throughput`'s plain values;
//! and how a client test's report reaches main. The clients themselves are
//! `misura_throughput::client`'s.
//!
//! Exit codes of the clients (crate::shared::exit): 0 the test ran to its end;
//! 1 the server is unreachable, refused the test (busy, authentication,
//! any REFUSE — its reason is printed), or was lost during the test (the
//! partial result is still written); 2 bad command line; 5 parameters the
//! server announced it would refuse (above its HELLO limits) or that make
//! no sense (e.g. a UDP datagram below 24 bytes); 6 an output file cannot
//! be written; 130/143 interrupted.

use crate::shared::common_flags::NetnsArgs;
use crate::shared::output::{CsvArgs, Finished, OutputArgs, Report};
use misura_cli::units::{ByteSize, DurationArg, LinkRate};
pub use misura_throughput::client::*;
use misura_throughput::error::Refusal;
use misura_throughput::{rr, tcp, udp};
use std::io::Write;
use std::path::PathBuf;

/// The target and output flags every client test shares (a sweep too).
#[derive(clap::Args, Debug, Clone)]
pub struct ClientArgs {
    /// The server (`misura serve`): HOST, HOST:PORT, [V6ADDR]:PORT (default port 5862).
    #[arg(value_name = "HOST[:PORT]")]
    pub host: String,
    /// Shared key of a server started with --key-file (hex on the first line, or raw bytes).
    #[arg(long, value_name = "FILE")]
    pub key_file: Option<PathBuf>,
    #[command(flatten)]
    pub out: OutputArgs,
    #[command(flatten)]
    pub csv: CsvArgs,
    #[command(flatten)]
    pub ns: NetnsArgs,
}

/// `--clients`, which every client test has (a sweep's is a list).
#[derive(clap::Args, Debug, Clone)]
pub struct ClientsArg {
    /// Run N clients at once from this machine (threads, each with its own
    /// control connection); the result lists each and the sum.
    #[arg(long, default_value = DEFAULT_CLIENTS, value_name = "N")]
    pub clients: u32,
}

/// The target flags checked into the part of a plan they give.
pub fn plan(a: &ClientArgs, clients: u32) -> Result<ClientPlan, Refusal> {
    let p = ClientPlan {
        host: a.host.clone(),
        key_file: a.key_file.clone(),
        netns: a.ns.netns.clone(),
        clients,
        quiet: a.out.quiet || a.out.json,
    };
    p.check()?;
    Ok(p)
}

/// A client test's report as main delivers it: exit code 1 when a client
/// did not complete; kept in the store under `subcommand` and the host.
pub fn finished<T: serde::Serialize + 'static>(
    complete: bool,
    report: T,
    subcommand: &str,
    host: &str,
    text: fn(&T, &mut dyn Write) -> std::io::Result<()>,
    csv: fn(&T, &mut dyn Write) -> std::io::Result<()>,
) -> Finished {
    let code = exit_code(complete);
    Finished::with_code(
        Report::new(report, subcommand, host, text).with_csv(csv),
        code,
    )
}

/// The flags of `misura tcp` that `misura sweep tcp` can vary (with
/// `--clients`).
#[derive(clap::Args, Debug, Clone)]
pub struct TcpKnobsArgs {
    /// Parallel data connections.
    #[arg(long, default_value = tcp::DEFAULT_STREAMS, value_name = "N")]
    pub streams: u32,
    /// Size of each write (e.g. 1400, 64K).
    #[arg(long, default_value = tcp::DEFAULT_MSG_SIZE, value_name = "BYTES")]
    pub msg_size: ByteSize,
    /// SO_SNDBUF to ask for (default: the kernel's autotuning).
    #[arg(long, value_name = "BYTES")]
    pub sndbuf: Option<ByteSize>,
    /// SO_RCVBUF to ask for (default: the kernel's autotuning).
    #[arg(long, value_name = "BYTES")]
    pub rcvbuf: Option<ByteSize>,
    /// Set TCP_NODELAY (no Nagle) on the data connections of both ends.
    #[arg(long)]
    pub nodelay: bool,
}

/// The other flags of `misura tcp`: the same in every run of a sweep.
#[derive(clap::Args, Debug, Clone)]
pub struct TcpShapeArgs {
    /// The server sends, the client receives.
    #[arg(long, conflicts_with = "bidir")]
    pub reverse: bool,
    /// Both send at once on every connection (full duplex).
    #[arg(long)]
    pub bidir: bool,
    /// Length of the test.
    #[arg(long, default_value = "10s", value_name = "DURATION")]
    pub duration: DurationArg,
    /// Also report the bytes moved in every interval of this length.
    #[arg(long, value_name = "DURATION")]
    pub interval: Option<DurationArg>,
    /// One thread per stream, for multi-core hosts (default: one thread
    /// drives all streams of a client with non-blocking sockets and poll(2)).
    #[arg(long)]
    pub threads: bool,
    /// While the client receives (--reverse, --bidir), its poll(2) loop
    /// keeps polling for up to this long before it sleeps (at most 1ms; 0
    /// sleeps at once). Data that comes within it is read without a
    /// wake-up; on a VM each wake-up of an idle CPU costs the sender's CPU
    /// an interrupt through the hypervisor. It costs client CPU (cpu_local
    /// shows it); --threads readers block and do not use it.
    #[arg(long, value_name = "DURATION", default_value = "5us")]
    pub busy_poll: DurationArg,
}

impl From<&TcpKnobsArgs> for tcp::TcpKnobs {
    fn from(a: &TcpKnobsArgs) -> Self {
        tcp::TcpKnobs {
            streams: a.streams,
            msg_size: a.msg_size.clone(),
            sndbuf: a.sndbuf.clone(),
            rcvbuf: a.rcvbuf.clone(),
            nodelay: a.nodelay,
        }
    }
}

impl From<&TcpShapeArgs> for tcp::TcpShape {
    fn from(a: &TcpShapeArgs) -> Self {
        tcp::TcpShape {
            reverse: a.reverse,
            bidir: a.bidir,
            duration: a.duration.clone(),
            interval: a.interval.clone(),
            threads: a.threads,
            busy_poll: a.busy_poll.clone(),
        }
    }
}

/// The flags of `misura udp` that `misura sweep udp` can vary (with
/// `--clients`).
#[derive(clap::Args, Debug, Clone)]
pub struct UdpKnobsArgs {
    /// Sending rate of UDP payload (e.g. 10M, 1G).
    #[arg(long, value_name = "RATE")]
    pub rate: LinkRate,
    /// UDP payload per datagram, bytes (≥ 24).
    #[arg(long, default_value = udp::DEFAULT_MSG_SIZE, value_name = "BYTES")]
    pub msg_size: ByteSize,
}

/// The other flags of `misura udp`: the same in every run of a sweep.
#[derive(clap::Args, Debug, Clone)]
pub struct UdpShapeArgs {
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
    #[arg(long, value_enum, default_value_t = PacingFlag::Sleep)]
    pub pacing: PacingFlag,
}

/// `--pacing`: CPU-frugal bursts or exact spacing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum PacingFlag {
    Sleep,
    Spin,
}

impl From<PacingFlag> for udp::PacingMode {
    fn from(p: PacingFlag) -> Self {
        match p {
            PacingFlag::Sleep => udp::PacingMode::Sleep,
            PacingFlag::Spin => udp::PacingMode::Spin,
        }
    }
}

impl From<&UdpKnobsArgs> for udp::UdpKnobs {
    fn from(a: &UdpKnobsArgs) -> Self {
        udp::UdpKnobs {
            rate: a.rate.clone(),
            msg_size: a.msg_size.clone(),
        }
    }
}

impl From<&UdpShapeArgs> for udp::UdpShape {
    fn from(a: &UdpShapeArgs) -> Self {
        udp::UdpShape {
            duration: a.duration.clone(),
            df: a.df,
            reverse: a.reverse,
            pacing: a.pacing.into(),
        }
    }
}

/// The flags of `misura rr` that `misura sweep rr` can vary (with
/// `--clients`).
#[derive(clap::Args, Debug, Clone)]
pub struct RrKnobsArgs {
    /// Request size, bytes (udp: ≥ 16).
    #[arg(long, value_name = "BYTES")]
    pub request: Option<ByteSize>,
    /// Response size, bytes (udp: ≥ 16).
    #[arg(long, value_name = "BYTES")]
    pub response: Option<ByteSize>,
    /// Transactions in flight.
    #[arg(long, default_value = rr::DEFAULT_BURST, value_name = "N")]
    pub burst: u32,
}

/// The other flags of `misura rr`: the same in every run of a sweep.
#[derive(clap::Args, Debug, Clone)]
pub struct RrShapeArgs {
    /// tcp or udp.
    #[arg(long, value_enum, default_value_t = RrProtoFlag::Tcp)]
    pub proto: RrProtoFlag,
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
pub enum RrProtoFlag {
    Tcp,
    Udp,
}

impl From<RrProtoFlag> for rr::RrProto {
    fn from(p: RrProtoFlag) -> Self {
        match p {
            RrProtoFlag::Tcp => rr::RrProto::Tcp,
            RrProtoFlag::Udp => rr::RrProto::Udp,
        }
    }
}

impl From<&RrKnobsArgs> for rr::RrKnobs {
    fn from(a: &RrKnobsArgs) -> Self {
        rr::RrKnobs {
            request: a.request.clone(),
            response: a.response.clone(),
            burst: a.burst,
        }
    }
}

impl From<&RrShapeArgs> for rr::RrShape {
    fn from(a: &RrShapeArgs) -> Self {
        rr::RrShape {
            proto: a.proto.into(),
            connect: a.connect,
            duration: a.duration.clone(),
            timeout: a.timeout.clone(),
        }
    }
}
