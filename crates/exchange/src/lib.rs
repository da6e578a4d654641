//! `misura exchange`'s method: seed 002's sequence on raw frames. The
//! initiator sends a trigger (S1 bytes) and its own data frame (S2); the
//! responder answers each trigger with its data frame; the initiator times
//! the phases.
//!
//! Frames are misura probes ([`frames`]): Ethernet + the 40-byte probe
//! header, whose `stream` says what the frame is (1 trigger, 2 initiator
//! data, 3 responder data) and whose `seq` is the cycle number; padded to
//! the frame size. An [`ExchangePlan`] checked once (typed [`PlanError`]s
//! that name no flag, [`plan`]) opens the raw socket on the interface that
//! faces the peer ([`port`]); [`initiate`] runs the timed cycles and
//! [`respond`] the other end, each returning its report; [`measure`] runs
//! the end the plan asks for, the one call the binary makes. Its errors
//! say their exit class (`exit_class.rs`). The binary
//! (`commands/exchange`) turns the flags into the plan, words a refusal
//! with them, prints, exports, stores and exits.
#![forbid(unsafe_code)]

pub mod error;
mod exit_class;
pub mod frames;
pub mod initiator;
pub mod plan;
pub mod port;
pub mod responder;

pub use error::ExchangeError;
pub use initiator::{initiate, Initiated};
pub use plan::{ExchangePlan, Frame, Knob, PlanError};
pub use responder::{respond, Ready};

use misura_report::exchange::ResponderReport;
use std::sync::atomic::AtomicUsize;

/// A finished exchange, as the plan asked: the responder's report, or the
/// initiator's run (boxed: the two differ much in size).
pub enum Exchanged {
    Responder(Box<ResponderReport>),
    Initiator(Box<Initiated>),
}

/// Run the end of the exchange the plan asks for (`respond`: the
/// responder, which tells `ready` once it listens; else the initiator).
pub fn measure(
    plan: &ExchangePlan,
    stop: &AtomicUsize,
    ready: &mut dyn FnMut(&Ready<'_>),
) -> Result<Exchanged, ExchangeError> {
    Ok(if plan.respond {
        Exchanged::Responder(Box::new(respond(plan, stop, ready)?))
    } else {
        Exchanged::Initiator(Box::new(initiate(plan, stop)?))
    })
}

impl ExchangePlan {
    /// What the run is stored under: the interface and the peer.
    pub fn target(&self) -> String {
        format!("{} {}", self.interface, self.peer)
    }
}
