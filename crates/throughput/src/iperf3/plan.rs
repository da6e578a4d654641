//! misura's tcp/udp plans as iperf3 parameters, each flag checked against
//! what iperf3 can carry.

use super::client::Iperf3Plan;
use crate::client::Direction;
use crate::tcp::TcpPlan;
use crate::udp::UdpPlan;
use misura_cli::exit::Failure;
use misura_wire::iperf3::{Params, Protocol, MAX_STREAMS, MAX_TCP_BLOCK, MAX_TIME_S, MAX_WINDOW};

/// iperf3's `time` is whole seconds: a duration rounds up.
fn seconds(ns: u64) -> Result<u64, Failure> {
    let s = ns.div_ceil(1_000_000_000).max(1);
    if s > MAX_TIME_S {
        return Err(Failure::Params(format!(
            "--duration of {s} s is above iperf3's bound of {MAX_TIME_S} s"
        )));
    }
    Ok(s)
}

fn version() -> Option<String> {
    // iperf3 servers read client_version but do not act on it; say who we are.
    Some(format!("misura-{}", env!("CARGO_PKG_VERSION")))
}

fn one_client(clients: u32, key: bool) -> Result<(), Failure> {
    if clients != 1 {
        return Err(Failure::Params(format!(
            "--clients {clients}: an iperf3 server runs one test at a time, so --peer iperf3 runs one client"
        )));
    }
    if key {
        return Err(Failure::Params(
            "--key-file is misura's own authentication; --peer iperf3 does not use it".into(),
        ));
    }
    Ok(())
}

impl Iperf3Plan {
    pub fn from_tcp(
        p: &TcpPlan,
        cport: Option<u16>,
        rate_bps: Option<u64>,
    ) -> Result<Iperf3Plan, Failure> {
        one_client(p.client.clients, p.client.key_file.is_some())?;
        if p.streams > MAX_STREAMS {
            return Err(Failure::Params(format!(
                "--streams {} is above iperf3's bound of {MAX_STREAMS} streams",
                p.streams
            )));
        }
        if p.msg_size.bytes > MAX_TCP_BLOCK {
            return Err(Failure::Params(format!(
                "--msg-size {} is above iperf3's bound of {MAX_TCP_BLOCK} bytes (1M)",
                p.msg_size
            )));
        }
        if p.interval.is_some() {
            return Err(Failure::Params(
                "--interval is not available with --peer iperf3".into(),
            ));
        }
        let window = p.sndbuf.as_ref().or(p.rcvbuf.as_ref()).map(|b| b.bytes);
        if window.is_some_and(|w| w > MAX_WINDOW) {
            return Err(Failure::Params(format!(
                "--sndbuf/--rcvbuf above iperf3's bound of {MAX_WINDOW} bytes (512M)"
            )));
        }
        Ok(Iperf3Plan {
            host: p.client.host.clone(),
            cport,
            params: Params {
                protocol: Protocol::Tcp,
                time: seconds(p.duration_ns())?,
                parallel: p.streams,
                reverse: p.direction == Direction::Reverse,
                bidirectional: p.direction == Direction::Bidir,
                len: Some(p.msg_size.bytes),
                window,
                nodelay: p.nodelay,
                bandwidth: rate_bps,
                client_version: version(),
                ..Default::default()
            },
        })
    }

    /// `streams`: iperf3's -P, each stream at the plan's rate.
    pub fn from_udp(p: &UdpPlan, cport: Option<u16>, streams: u32) -> Result<Iperf3Plan, Failure> {
        one_client(p.client.clients, p.client.key_file.is_some())?;
        if !(1..=MAX_STREAMS).contains(&streams) {
            return Err(Failure::Params(format!(
                "--streams {streams} must be between 1 and {MAX_STREAMS} (iperf3's bound)"
            )));
        }
        Ok(Iperf3Plan {
            host: p.client.host.clone(),
            cport,
            params: Params {
                protocol: Protocol::Udp,
                time: seconds(p.duration_ns())?,
                parallel: streams,
                reverse: p.reverse,
                len: Some(p.msg_size()),
                bandwidth: Some(p.rate_bps()),
                dont_fragment: p.df,
                client_version: version(),
                ..Default::default()
            },
        })
    }
}
