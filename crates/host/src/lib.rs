//! `misura host`'s method: what on this host affects timing precision
//! ([`check`]), and the safe changes to it, planned, applied with the old
//! values kept in a state file, and reverted from that file ([`tune`]).
//!
//! Every setting is read on its own: an unreadable file or a driver without
//! the feature becomes that setting's state ("unreadable: permission
//! denied", "not supported by driver veth"), never a failure of the command.
//! Each run takes a plan the binary resolves from the flags once
//! ([`CheckPlan`], [`TunePlan`]) and returns its report; what it refuses is
//! a typed [`TuneError`] that names no flag. Nothing here prints: the binary
//! (`commands/host`) checks for root, prints, writes the notes and exits.
#![forbid(unsafe_code)]

pub mod check;
pub mod readings;
pub mod tune;

pub use check::{check, CheckPlan};
pub use tune::{revert, tune, Reverted, TuneError, TunePlan};
