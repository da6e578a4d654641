//! misura speaking irtt (the Isochronous Round-Trip Tester, protocol
//! version 1, as Debian's irtt 0.9.0): a reflector that answers `irtt
//! client` (`misura reflect --irtt`) and a client that probes `irtt
//! server` (`misura rtt --peer irtt`, `misura load --reflector irtt://`).
//!
//! The packets are `misura_wire::irtt`'s. [`reflector`] decides without a
//! clock or a socket; [`server`] and [`client`] are the I/O loops around
//! a kernel-stamped UDP socket, [`reflect`] the reflector's run around
//! [`server`]'s loop, [`tally`] the client's bookkeeping; [`report`] holds the results.

#![forbid(unsafe_code)]

pub mod client;
pub mod error;
mod exit_class;
pub mod grant;
pub mod probe;
pub mod reflect;
pub mod reflector;
pub mod report;
pub mod server;
pub mod tally;
