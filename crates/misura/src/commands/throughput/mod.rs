//! Throughput, request/response and set-up tests: the `misura serve`
//! server and its clients (tcp, udp, rr, setup, sweep) over one control protocol.

pub mod client;
pub mod pacing;
pub mod poll_window;
pub mod proto;
pub mod rr;
pub mod serve;
pub mod setup;
pub mod sweep;
pub mod tcp;
pub mod udp;
