//! misura's throughput, request/response and set-up tests: the server
//! (`misura serve`) and its clients (`tcp`, `udp`, `rr`, `setup`) over one
//! control protocol, whose messages are `misura_wire::test_control`'s.
//!
//! A test is planned (`TcpPlan`, `UdpPlan`, … from plain knobs and shapes
//! that the binary's clap groups convert into; no flag is parsed here),
//! measured (`tcp::measure`, …) and returned as its report
//! (`misura_report::throughput`); the binary prints, stores and exits.
//! `peer` runs a tcp or udp test against misura serve or an iperf3 server
//! (or whichever a probe finds), and `sweep` runs one test once per value
//! of one parameter and tabulates the runs (`misura sweep`). Its errors
//! are typed (`error`): `ThroughputError`, with the control protocol's
//! `ControlError`, an iperf3 peer's `Iperf3PeerError` and a plan's
//! `Refusal` (`refusal`: the value and the bound, no flag; the binary
//! words it with its flags) in it.
#![forbid(unsafe_code)]

pub mod client;
pub mod error;
mod exit_class;
pub mod iperf3;
pub mod pacing;
pub mod peer;
pub mod poll_window;
pub mod proto;
pub mod refusal;
pub mod rr;
pub mod serve;
pub mod setup;
pub mod sweep;
pub mod tcp;
pub mod udp;
