//! Flags of `misura exchange`.

use crate::shared::units::{DurationArg, Ethertype};
use clap::Args;
use misura_wire::MacAddr;

/// Flags of `misura exchange`.
#[derive(Args, Debug, Clone)]
pub struct ExchangeArgs {
    /// Interface that faces the peer.
    #[arg(long, value_name = "IF")]
    pub interface: String,
    /// MAC address of the peer (only its frames are answered or counted).
    #[arg(long, value_name = "MAC")]
    pub peer: MacAddr,
    /// Be the responder (Ichiki's slave): answer each trigger with a data frame.
    #[arg(long)]
    pub respond: bool,
    /// S1: trigger frame size in bytes, destination address through FCS.
    #[arg(long, default_value_t = 64)]
    pub trigger: usize,
    /// S2: data frame size each side sends after the trigger.
    #[arg(long, default_value_t = 530)]
    pub data: usize,
    /// Number of cycles (initiator).
    #[arg(long, default_value_t = 1000)]
    pub count: u64,
    /// Cycle period (the seed: about 4 ms).
    #[arg(long, default_value = "4ms")]
    pub period: DurationArg,
    /// Give up on a cycle after this long without the peer's data frame.
    #[arg(long, default_value = "5ms")]
    pub timeout: DurationArg,
    /// Count phases longer than this (the seed counted over 30 µs).
    #[arg(long, default_value = "30us")]
    pub threshold: DurationArg,
    /// Ethertype of the frames.
    #[arg(long, default_value = "0x88B5")]
    pub ethertype: Ethertype,
    /// Stop the responder after this long (default: until SIGINT/SIGTERM).
    #[arg(long)]
    pub duration: Option<DurationArg>,
    /// Responder: busy-poll instead of sleeping in poll(2) between frames.
    #[arg(long)]
    pub busy_poll: bool,
    /// Pin to this CPU.
    #[arg(long)]
    pub cpu: Option<usize>,
    #[command(flatten)]
    pub out: crate::shared::output::OutputArgs,
    #[command(flatten)]
    pub ns: crate::shared::common_flags::NetnsArgs,
}
