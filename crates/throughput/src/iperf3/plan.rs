//! misura's tcp/udp plans as iperf3 parameters, each flag checked against
//! what iperf3 can carry.

use super::client::Iperf3Plan;
use crate::client::Direction;
use crate::error::Refusal;
use crate::tcp::TcpPlan;
use crate::udp::UdpPlan;
use misura_wire::iperf3::{Params, Protocol, MAX_STREAMS, MAX_TCP_BLOCK, MAX_TIME_S, MAX_WINDOW};

/// iperf3's `time` is whole seconds: a duration rounds up.
fn seconds(ns: u64) -> Result<u64, Refusal> {
    let s = ns.div_ceil(1_000_000_000).max(1);
    if s > MAX_TIME_S {
        return Err(Refusal::Iperf3Duration {
            secs: s,
            max: MAX_TIME_S,
        });
    }
    Ok(s)
}

fn version() -> Option<String> {
    // iperf3 servers read client_version but do not act on it; say who we are.
    Some(format!("misura-{}", env!("CARGO_PKG_VERSION")))
}

fn one_client(clients: u32, key: bool) -> Result<(), Refusal> {
    if clients != 1 {
        return Err(Refusal::Iperf3Clients { clients });
    }
    if key {
        return Err(Refusal::Iperf3Key);
    }
    Ok(())
}

impl Iperf3Plan {
    pub fn from_tcp(
        p: &TcpPlan,
        cport: Option<u16>,
        rate_bps: Option<u64>,
    ) -> Result<Iperf3Plan, Refusal> {
        one_client(p.client.clients, p.client.key_file.is_some())?;
        if p.streams > MAX_STREAMS {
            return Err(Refusal::Iperf3Streams {
                streams: p.streams,
                max: MAX_STREAMS,
            });
        }
        if p.msg_size.bytes > MAX_TCP_BLOCK {
            return Err(Refusal::Iperf3MsgSize {
                size: p.msg_size.clone(),
                max: MAX_TCP_BLOCK,
            });
        }
        if p.interval.is_some() {
            return Err(Refusal::Iperf3Interval);
        }
        let window = p.sndbuf.as_ref().or(p.rcvbuf.as_ref()).map(|b| b.bytes);
        if window.is_some_and(|w| w > MAX_WINDOW) {
            return Err(Refusal::Iperf3Window { max: MAX_WINDOW });
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
    pub fn from_udp(p: &UdpPlan, cport: Option<u16>, streams: u32) -> Result<Iperf3Plan, Refusal> {
        one_client(p.client.clients, p.client.key_file.is_some())?;
        if !(1..=MAX_STREAMS).contains(&streams) {
            return Err(Refusal::Iperf3StreamsRange {
                streams,
                max: MAX_STREAMS,
            });
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
