//! The flags of `misura sweep tcp|udp|rr`: each test's own flags, the
//! sweepable ones as lists or ranges (clap parses them once into
//! `misura_throughput::sweep`'s `ValueList`s), converted into the
//! library's plain sweeps.

use crate::shared::client_flags::{RrShapeArgs, TcpShapeArgs, UdpShapeArgs};
use misura_cli::units::{ByteSize, LinkRate};
use misura_throughput::client;
use misura_throughput::rr as trr;
use misura_throughput::sweep::values::ValuesError;
use misura_throughput::sweep::{rr, tcp, udp, OnOff, Sweepable, ValueList};
use misura_throughput::tcp as ttcp;
use misura_throughput::udp as tudp;

/// `--nodelay`'s list, a value neither on nor off refused naming the flag.
fn nodelay_values(s: &str) -> Result<ValueList<OnOff>, String> {
    s.parse().map_err(|e| match e {
        ValuesError::Value { value, .. } => {
            format!("`{value}` is neither on nor off: --nodelay sweeps over on,off")
        }
        e => e.to_string(),
    })
}

/// A test's sweep flags and the library's plain sweep they give.
pub trait SweepFlags: clap::Args {
    type Plain: Sweepable;
    fn plain(&self) -> Self::Plain;
}

/// `misura sweep tcp`'s own flags: `misura tcp`'s, the sweepable ones as lists.
#[derive(clap::Args, Debug, Clone)]
pub struct TcpSweepArgs {
    /// Parallel data connections, or a list or range of them to sweep.
    #[arg(long, default_value = ttcp::DEFAULT_STREAMS, value_name = "N|LIST")]
    pub streams: ValueList<u32>,
    /// Size of each write (e.g. 1400, 64K), or a list or range of sizes to sweep.
    #[arg(long, default_value = ttcp::DEFAULT_MSG_SIZE, value_name = "BYTES|LIST")]
    pub msg_size: ValueList<ByteSize>,
    /// SO_SNDBUF to ask for, or a list of them to sweep (default: the kernel's autotuning).
    #[arg(long, value_name = "BYTES|LIST")]
    pub sndbuf: Option<ValueList<ByteSize>>,
    /// SO_RCVBUF to ask for, or a list of them to sweep (default: the kernel's autotuning).
    #[arg(long, value_name = "BYTES|LIST")]
    pub rcvbuf: Option<ValueList<ByteSize>>,
    /// TCP_NODELAY in every run, or `on,off` to sweep it.
    #[arg(long, num_args = 0..=1, default_missing_value = "on", value_name = "on,off", value_parser = nodelay_values)]
    pub nodelay: Option<ValueList<OnOff>>,
    /// Clients at once, or a list or range of counts to sweep.
    #[arg(long, default_value = client::DEFAULT_CLIENTS, value_name = "N|LIST")]
    pub clients: ValueList<u32>,
    #[command(flatten)]
    pub shape: TcpShapeArgs,
}

impl SweepFlags for TcpSweepArgs {
    type Plain = tcp::TcpSweep;
    fn plain(&self) -> tcp::TcpSweep {
        tcp::TcpSweep {
            streams: self.streams.clone(),
            msg_size: self.msg_size.clone(),
            sndbuf: self.sndbuf.clone(),
            rcvbuf: self.rcvbuf.clone(),
            nodelay: self.nodelay.clone(),
            clients: self.clients.clone(),
            shape: (&self.shape).into(),
        }
    }
}

/// `misura sweep udp`'s own flags: `misura udp`'s, the sweepable ones as lists.
#[derive(clap::Args, Debug, Clone)]
pub struct UdpSweepArgs {
    /// Sending rate of UDP payload (e.g. 10M, 1G), or a list of rates to sweep.
    #[arg(long, value_name = "RATE|LIST")]
    pub rate: ValueList<LinkRate>,
    /// UDP payload per datagram, bytes (≥ 24), or a list or range of sizes to sweep.
    #[arg(long, default_value = tudp::DEFAULT_MSG_SIZE, value_name = "BYTES|LIST")]
    pub msg_size: ValueList<ByteSize>,
    /// Clients at once, or a list or range of counts to sweep.
    #[arg(long, default_value = client::DEFAULT_CLIENTS, value_name = "N|LIST")]
    pub clients: ValueList<u32>,
    #[command(flatten)]
    pub shape: UdpShapeArgs,
}

impl SweepFlags for UdpSweepArgs {
    type Plain = udp::UdpSweep;
    fn plain(&self) -> udp::UdpSweep {
        udp::UdpSweep {
            rate: self.rate.clone(),
            msg_size: self.msg_size.clone(),
            clients: self.clients.clone(),
            shape: (&self.shape).into(),
        }
    }
}

/// `misura sweep rr`'s own flags: `misura rr`'s, the sweepable ones as lists.
#[derive(clap::Args, Debug, Clone)]
pub struct RrSweepArgs {
    /// Request size, bytes (udp: ≥ 16), or a list or range of sizes to sweep.
    #[arg(long, value_name = "BYTES|LIST")]
    pub request: Option<ValueList<ByteSize>>,
    /// Response size, bytes (udp: ≥ 16), or a list or range of sizes to sweep.
    #[arg(long, value_name = "BYTES|LIST")]
    pub response: Option<ValueList<ByteSize>>,
    /// Transactions in flight, or a list or range of them to sweep.
    #[arg(long, default_value = trr::DEFAULT_BURST, value_name = "N|LIST")]
    pub burst: ValueList<u32>,
    /// Clients at once, or a list or range of counts to sweep.
    #[arg(long, default_value = client::DEFAULT_CLIENTS, value_name = "N|LIST")]
    pub clients: ValueList<u32>,
    #[command(flatten)]
    pub shape: RrShapeArgs,
}

impl SweepFlags for RrSweepArgs {
    type Plain = rr::RrSweep;
    fn plain(&self) -> rr::RrSweep {
        rr::RrSweep {
            request: self.request.clone(),
            response: self.response.clone(),
            burst: self.burst.clone(),
            clients: self.clients.clone(),
            shape: (&self.shape).into(),
        }
    }
}
