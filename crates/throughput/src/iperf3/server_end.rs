//! The end of a test of misura's iperf3 server: the results exchange
//! with the client, the results misura sends as the server, and the
//! record that goes into serve's report (the client's claims vetted
//! against what this side counted).

use super::control::Ctrl;
use super::data::StreamOutcome;
use super::report::{implausible_warning, vet, OwnCount};
use crate::error::Result;
use misura_report::serve::ServedTest;
use misura_wire::iperf3::{Params, Protocol, Results, State, StreamResult};
use std::io::Read;
use std::net::SocketAddr;
use std::time::Duration;

pub(super) fn exchange(
    c: &mut Ctrl,
    p: &Params,
    outs: &[StreamOutcome],
    elapsed: Duration,
    cpu: (u64, u64),
) -> Result<Results> {
    c.write_state(State::ExchangeResults)?;
    let body = c.read_json("the client's results message")?;
    let theirs = Results::parse(&body)?;
    c.write_json(&own_results(p, outs, elapsed, cpu).to_json())?;
    c.write_state(State::DisplayResults)?;
    // IPERF_DONE, or the client's close: either ends the test.
    let mut b = [0u8; 1];
    let _ = c.s.set_read_timeout(Some(Duration::from_secs(2)));
    let _ = c.s.read(&mut b);
    Ok(theirs)
}

fn own_results(p: &Params, outs: &[StreamOutcome], elapsed: Duration, cpu: (u64, u64)) -> Results {
    let ns = elapsed.as_nanos().max(1) as f64;
    let pct = |x: u64| 100.0 * x as f64 / ns;
    let (send, _) = p.senders();
    let server_sends = send < outs.len() as u32;
    Results {
        cpu_util_total: pct(cpu.0 + cpu.1),
        cpu_util_user: pct(cpu.0),
        cpu_util_system: pct(cpu.1),
        sender_has_retransmits: if server_sends {
            (p.protocol == Protocol::Tcp) as i64
        } else {
            -1
        },
        congestion_used: None,
        streams: outs
            .iter()
            .enumerate()
            .map(|(k, o)| StreamResult {
                id: super::client::stream_id(k),
                bytes: o.bytes,
                retransmits: match (o.sender, o.info) {
                    (true, Some(i)) if p.protocol == Protocol::Tcp => i.total_retrans as i64,
                    _ => -1,
                },
                jitter: o.jitter_s,
                errors: o.lost as i64,
                packets: o.packets as i64,
                start_time: Some(0.0),
                end_time: Some(elapsed.as_secs_f64()),
            })
            .collect(),
    }
}

#[allow(clippy::too_many_arguments)]
pub(super) fn record(
    p: &Params,
    peer: SocketAddr,
    started_at: String,
    elapsed: Duration,
    outs: &[StreamOutcome],
    client: Option<&Results>,
    cpu: (u64, u64),
    reason: Option<String>,
) -> ServedTest {
    let rx: u64 = outs.iter().filter(|o| !o.sender).map(|o| o.bytes).sum();
    let tx: u64 = outs.iter().filter(|o| o.sender).map(|o| o.bytes).sum();
    let el = elapsed.as_nanos() as i64;
    // The client's figures checked against what this end counted: a
    // failing one is named and kept out of the figures below.
    let own = |id: i64| {
        (id >= 1 && id != 2)
            .then(|| outs.get(index_of(id)))
            .flatten()
            .map(|o| OwnCount {
                sent: o.sender,
                bytes: o.bytes,
            })
    };
    let (why, bad, _cpu) = client.map_or((vec![], vec![], false), |r| {
        vet(r, &own, el as u64, p.protocol == Protocol::Tcp)
    });
    let warning = implausible_warning(&format!("iperf3 client {}", peer.ip()), &why);
    // The client's count of what it received from the server's senders.
    let client_rx = client.map(|r| {
        r.streams
            .iter()
            .filter(|s| !bad.contains(&s.id))
            .filter(|s| outs.get(index_of(s.id)).is_some_and(|o| o.sender))
            .try_fold(0u64, |a, s| a.checked_add(s.bytes))
            .unwrap_or(u64::MAX)
    });
    let receiver = rx.saturating_add(client_rx.unwrap_or(0));
    let udp = p.protocol == Protocol::Udp;
    let lost: u64 = outs.iter().filter(|o| !o.sender).map(|o| o.lost).sum();
    let rxp: u64 = outs
        .iter()
        .filter(|o| !o.sender)
        .map(|o| o.received_packets)
        .sum();
    ServedTest {
        test_id: 0,
        client: peer.ip().to_canonical().to_string(),
        client_name: Some(format!(
            "iperf3 {}",
            p.client_version
                .clone()
                .unwrap_or_else(|| "(no version)".into())
        )),
        kind: if udp { "udp" } else { "tcp" }.into(),
        direction: match (p.bidirectional, p.reverse) {
            (true, _) => "bidir",
            (false, true) => "reverse",
            _ => "forward",
        }
        .into(),
        streams: p.parallel as u64,
        msg_size: p.len.unwrap_or(0),
        request_size: 0,
        response_size: 0,
        started_at,
        requested_duration_ns: p.time as i64 * 1_000_000_000,
        elapsed_ns: el,
        bytes_received: rx,
        bytes_sent: tx,
        client_bytes_received: client_rx,
        packets_received: rxp,
        packets_sent: outs.iter().filter(|o| o.sender).map(|o| o.packets).sum(),
        throughput_bps: (el > 0).then(|| receiver as f64 * 8e9 / el as f64),
        transactions: 0,
        transactions_per_s: None,
        lost: udp.then_some(lost),
        loss_ratio: (udp && rxp + lost > 0).then(|| lost as f64 / (rxp + lost) as f64),
        duplicates: None,
        reordered: udp.then(|| outs.iter().map(|o| o.out_of_order).sum()),
        jitter_ns: udp.then(|| outs.iter().map(|o| o.jitter_s).fold(0.0, f64::max) * 1e9),
        owd_min_ns: None,
        owd_max_ns: None,
        stream_bytes: outs.iter().filter(|o| !o.sender).map(|o| o.bytes).collect(),
        sndbuf_granted: None,
        rcvbuf_granted: None,
        cpu_user_ns: cpu.0,
        cpu_system_ns: cpu.1,
        cpu_shared: false,
        partial: reason.is_some(),
        partial_reason: reason,
        warnings: warning.into_iter().collect(),
    }
}

/// The index of iperf3's stream id (1, 3, 4, … → 0, 1, 2, …).
fn index_of(id: i64) -> usize {
    if id <= 1 {
        0
    } else {
        id as usize - 2
    }
}
