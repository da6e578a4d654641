//! Flags of `misura exchange`, the exchange's plan they ask
//! ([`ExchangeArgs::request`]) and its refusals in their words.

use crate::shared::exit::Failure;
use crate::shared::units::{DurationArg, Ethertype};
use clap::Args;
use misura_exchange::{ExchangeError, ExchangePlan, Frame, Knob, PlanError};
use misura_report::clock::human_ns;
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

impl ExchangeArgs {
    /// The flags as the exchange's plan (checked by the library).
    pub fn request(&self) -> ExchangePlan {
        ExchangePlan {
            interface: self.interface.clone(),
            peer: self.peer,
            respond: self.respond,
            trigger: self.trigger,
            data: self.data,
            count: self.count,
            period: self.period.span(),
            timeout: self.timeout.span(),
            threshold: self.threshold.span(),
            ethertype: self.ethertype.value,
            duration: self.duration.as_ref().map(|d| d.span()),
            busy_poll: self.busy_poll,
            cpu: self.cpu,
            netns: self.ns.netns.clone(),
        }
    }

    /// The library's error: a refused plan in the flags' words, the host's
    /// and the NIC's errors as they are (their sentences and classes are
    /// their own), the others with the class they say.
    pub fn refusal(&self, e: ExchangeError) -> anyhow::Error {
        match e {
            ExchangeError::Plan(p) => self.flag_sentence(p).into(),
            ExchangeError::Sys(s) => s.into(),
            ExchangeError::Hardware(h) => h.into(),
            e => e.into(),
        }
    }

    /// What the plan refused, in the flags' words.
    fn flag_sentence(&self, e: PlanError) -> Failure {
        Failure::Params(match e {
            PlanError::TooShort { knob, min } => {
                let (flag, value) = match knob {
                    Knob::Period => ("--period", &self.period),
                    Knob::Timeout => ("--timeout", &self.timeout),
                };
                format!(
                    "{flag} {value} is too short: it must be at least {}",
                    human_ns(min.as_ns() as f64)
                )
            }
            PlanError::FrameSize {
                frame,
                bytes,
                max,
                interface,
            } => {
                let flag = match frame {
                    Frame::Trigger => "--trigger",
                    Frame::Data => "--data",
                };
                format!("{flag} {bytes}: frame sizes run from 64 bytes to {max} (the MTU of {interface} plus header and FCS)")
            }
        })
    }
}
