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
//! [`respond`] the other end, each returning its report. The binary
//! (`commands/exchange`) turns the flags into the plan, prints, exports,
//! stores and exits.
#![forbid(unsafe_code)]

pub mod error;
pub mod frames;
pub mod initiator;
pub mod plan;
pub mod port;
pub mod responder;

pub use error::ExchangeError;
pub use initiator::{initiate, Initiated};
pub use plan::{ExchangePlan, Frame, Knob, PlanError};
pub use responder::{respond, Ready};
