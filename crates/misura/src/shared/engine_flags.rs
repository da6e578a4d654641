//! The frame engine's flags, shared by every command that drives it
//! (rfc2544, y1564, oneway's engine mode): clap groups the commands
//! flatten, and `--engine`/`--frame-format`'s values, each turned into
//! misura-engine's plain options here, so the engine knows no command line.

use crate::shared::common_flags::FrameFormatFlag;
use crate::shared::exit::Failure;
use clap::{Args, ValueEnum};
use misura_bench::{BenchError, Role};
use misura_cli::units::{DurationArg, Ethertype};
use misura_engine::{EngineArgs, EngineChoice};
use misura_measure::period::{PeriodBounds, PeriodError};
use misura_measure::time::{Period, Span};

/// `--cores` and `--qdisc-bypass`.
#[derive(Args, Debug, Clone, PartialEq)]
pub struct EngineFlags {
    /// Spread generation and reception over this many cores (1-16), each
    /// with its own transmit path and receive ring; counts merge exactly.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=16))]
    pub cores: u64,
    /// Send with PACKET_QDISC_BYPASS: frames skip the TX port's qdisc (and
    /// taps such as tcpdump).
    #[arg(long)]
    pub qdisc_bypass: bool,
}

impl From<&EngineFlags> for EngineArgs {
    fn from(f: &EngineFlags) -> EngineArgs {
        EngineArgs {
            cores: f.cores,
            qdisc_bypass: f.qdisc_bypass,
        }
    }
}

/// `--engine`'s values for the commands that only drive the frame engine.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum EngineFlag {
    /// The best path that opens: xdp, then mmap and packet (packet first on veth).
    Auto,
    /// `sendmmsg` on a raw packet socket.
    Packet,
    /// The kernel's `PACKET_TX_RING`.
    Mmap,
    /// An AF_XDP socket (copy or zero-copy, native or generic mode).
    Xdp,
}

impl From<EngineFlag> for EngineChoice {
    fn from(f: EngineFlag) -> EngineChoice {
        match f {
            EngineFlag::Auto => EngineChoice::Auto,
            EngineFlag::Packet => EngineChoice::Packet,
            EngineFlag::Mmap => EngineChoice::Mmap,
            EngineFlag::Xdp => EngineChoice::Xdp,
        }
    }
}

/// The ports and the engine of a command that only drives the frame
/// engine (`rfc2544`, `y1564`).
#[derive(Args, Debug, Clone)]
pub struct EnginePorts {
    /// Port that sends the test frames.
    #[arg(long)]
    pub tx: String,
    /// Port that receives them.
    #[arg(long)]
    pub rx: String,
    /// Transmit path: auto (the best that opens: xdp, then mmap or packet),
    /// packet (sendmmsg), mmap (PACKET_TX_RING) or xdp (AF_XDP).
    #[arg(long, value_enum, default_value_t = EngineFlag::Auto)]
    pub engine: EngineFlag,
    #[command(flatten)]
    pub engine_args: EngineFlags,
    /// Pin core 0 of the engine to this CPU (the others to the next ones).
    #[arg(long)]
    pub cpu: Option<usize>,
    /// Ethertype of the test frames.
    #[arg(long, value_name = "HEX", default_value = "0x88B5")]
    pub ethertype: Ethertype,
    /// Test frames as misura's own or inside PTPv2 Sync headers, which NICs
    /// that stamp only PTP in hardware (Intel 82576, 82599, X710) stamp:
    /// auto takes PTP where that gives NIC RX stamps and the frames are
    /// 102 bytes or more.
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = FrameFormatFlag::Auto)]
    pub frame_format: FrameFormatFlag,
    /// Repeat a trial (rfc2544: a throughput search trial, a frame loss
    /// step, a back-to-back burst) or a configuration-test step (y1564)
    /// that the tester itself fell behind in (its loop descheduled
    /// past the schedule's slack, its receive ring overran) up to N times
    /// before reporting it as tester-limited (0-10). Such a
    /// trial measured the host, not the SUT; each spoiled attempt stays in
    /// the result. A tester too slow for the rate fails every attempt, and
    /// the result is then inconclusive (exit 8), never the SUT's.
    #[arg(long, value_name = "N", default_value_t = 2,
          value_parser = clap::value_parser!(u32).range(0..=MAX_TESTER_RETRIES as i64))]
    pub tester_retries: u32,
}

/// Most repeats of a spoiled trial (`--tester-retries`).
pub const MAX_TESTER_RETRIES: u32 = 10;

impl EnginePorts {
    /// The ports and the engine these flags ask for.
    pub fn ports(&self) -> misura_bench::Ports {
        misura_bench::Ports {
            tx: self.tx.clone(),
            rx: self.rx.clone(),
            choice: self.engine.into(),
            args: (&self.engine_args).into(),
            cpu: self.cpu,
            ethertype: self.ethertype.value,
            frame_format: self.frame_format.into(),
            tester_retries: self.tester_retries,
        }
    }
}

/// The flag that names a port.
fn port_flag(role: Role) -> &'static str {
    match role {
        Role::Tx => "--tx",
        Role::Rx => "--rx",
    }
}

/// A benchmark's refusal of the ports or the CPU as the sentence naming
/// the flags (exit 2); any other error as it is.
pub fn port_refusal(e: BenchError) -> anyhow::Error {
    match e {
        BenchError::SamePort { port } => Failure::Usage(format!(
            "--tx and --rx are both {port}: the frames must leave one port and arrive on another, through the SUT (e.g. --tx p1 --rx p2)"
        )),
        BenchError::Loopback { role } => Failure::Usage(format!(
            "{} lo: the loopback has no cable to an SUT; give a port wired to it (e.g. the lab's p1 and p2)",
            port_flag(role)
        )),
        BenchError::CpuOffline { cpu, online } => Failure::Usage(format!(
            "--cpu {cpu}: this host has {online} online CPU(s), 0 to {} (see /sys/devices/system/cpu/online)",
            online - 1
        )),
        BenchError::NoMac { role, port } => Failure::Usage(format!(
            "{} {port}: the port has no Ethernet address, so no test frame can be addressed through it; give an Ethernet port wired to the SUT",
            port_flag(role)
        )),
        e => return e.into(),
    }
    .into()
}

/// `--trial`: the length of a full trial, one flag for both commands that
/// drive the engine in trials (rfc2544's confirmation trials and frame
/// loss steps, y1564's configuration-test steps), with one set of bounds.
#[derive(Args, Debug, Clone)]
pub struct TrialArgs {
    /// Length of a full trial: rfc2544's confirmation trials and frame loss
    /// steps, y1564's configuration-test steps (RFC 2544 asks at least 60 s,
    /// Y.1564 suggests 60 s; 10 ms to 24 h). --step-duration is the same.
    #[arg(
        long = "trial",
        value_name = "DURATION",
        default_value = "60s",
        alias = "step-duration"
    )]
    pub trial: DurationArg,
}

/// The shortest `--trial` accepted, ns.
pub const MIN_TRIAL_NS: i64 = 10_000_000;
/// The longest `--trial` accepted: a day (a longer trial only delays the
/// result), ns.
pub const MAX_TRIAL_NS: i64 = 86_400_000_000_000;

impl TrialArgs {
    /// The trial's length, within [`MIN_TRIAL_NS`]..=[`MAX_TRIAL_NS`]
    /// (exit 5 below, 2 above, naming the flag and the bound).
    pub fn span(&self) -> Result<Span, Failure> {
        let bounds = PeriodBounds {
            min: Span::from_ns(MIN_TRIAL_NS),
            max: Span::from_ns(MAX_TRIAL_NS),
        };
        match Period::within(self.trial.span(), bounds) {
            Ok(p) => Ok(p.span()),
            Err(e @ PeriodError::TooShort { .. }) => Err(self.trial.period_failure("--trial", e)),
            Err(PeriodError::TooLong { .. }) => Err(Failure::Usage(format!(
                "--trial {} is too long: at most 24h",
                self.trial
            ))),
        }
    }
}
