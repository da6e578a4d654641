//! Speaking iperf3 (issue 28): misura as a client of `iperf3 -s` and as a
//! server for `iperf3 -c`, over iperf3's own control protocol
//! (`misura_wire::iperf3`). The client's result is misura's usual tcp/udp
//! result with the peer's figures beside (`peer`).

pub mod client;
pub mod control;
pub mod data;
pub mod plan;
pub mod probe;
pub mod report;
pub mod server;
mod server_end;

pub use client::{run, run_on, Iperf3Plan, PeerRun};
pub use report::{tcp_report, udp_report, Iperf3TcpReport, Iperf3UdpReport, PeerFigures};
