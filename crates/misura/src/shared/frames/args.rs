//! The frame engine's flags, shared by every command that drives it
//! (each command names its own `--engine` choices).

use super::open::EngineChoice;
use crate::shared::units::Ethertype;
use clap::Args;

#[derive(Args, Debug, Clone, PartialEq)]
pub struct EngineArgs {
    /// Spread generation and reception over this many cores (1-16), each
    /// with its own transmit path and receive ring; counts merge exactly.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=16))]
    pub cores: u64,
    /// Send with PACKET_QDISC_BYPASS: frames skip the TX port's qdisc (and
    /// taps such as tcpdump).
    #[arg(long)]
    pub qdisc_bypass: bool,
}

impl Default for EngineArgs {
    fn default() -> EngineArgs {
        EngineArgs {
            cores: 1,
            qdisc_bypass: false,
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
    #[arg(long, value_enum, default_value_t = EngineChoice::Auto)]
    pub engine: EngineChoice,
    #[command(flatten)]
    pub engine_args: EngineArgs,
    /// Pin core 0 of the engine to this CPU (the others to the next ones).
    #[arg(long)]
    pub cpu: Option<usize>,
    /// Ethertype of the test frames.
    #[arg(long, value_name = "HEX", default_value = "0x88B5")]
    pub ethertype: Ethertype,
    /// Repeat a back-to-back burst (rfc2544) or a configuration-test step
    /// (y1564) that the tester itself fell behind in (its loop descheduled
    /// past the schedule's slack, its receive ring overran) up to N times
    /// before reporting it as tester-limited (0-10). Such a
    /// trial measured the host, not the SUT; each spoiled attempt stays in
    /// the result. A tester too slow for the rate fails every attempt.
    #[arg(long, value_name = "N", default_value_t = 2,
          value_parser = clap::value_parser!(u32).range(0..=MAX_TESTER_RETRIES as i64))]
    pub tester_retries: u32,
}

/// Most repeats of a spoiled trial (`--tester-retries`).
pub const MAX_TESTER_RETRIES: u32 = 10;

impl EnginePorts {
    /// Each core's CPU: --cpu and the ones after it; none without --cpu.
    pub fn cpus(&self) -> Vec<usize> {
        let online = misura_sys::sched::online_cpus().max(1);
        let cores = self.engine_args.cores as usize;
        self.cpu
            .map_or_else(Vec::new, |c| (0..cores).map(|i| (c + i) % online).collect())
    }
}
