//! `misura serve`: one finished test's figures — the record the report
//! keeps (receiver truth: the server for what it received, the client's
//! DONE for what the client received) and the RESULT message sent back.

use super::test::*;
use crate::proto::{self, Fields};
use misura_report::serve::ServedTest;
use misura_wire::control::{Message, Value};
use std::sync::atomic::Ordering;

/// From the first to the last instant (ns since the test's start), 0 when
/// nothing happened.
fn span(first: i64, last: i64) -> i64 {
    if first == i64::MAX || last < first {
        0
    } else {
        last - first
    }
}

fn rx_span(t: &Test) -> i64 {
    span(
        t.first_rx.load(Ordering::Relaxed),
        t.last_rx.load(Ordering::Relaxed),
    )
}

fn bps(bytes: u64, ns: i64) -> Option<f64> {
    (ns > 0).then(|| bytes as f64 * 8.0 * 1e9 / ns as f64)
}

/// The test's throughput as its receivers measured it, and over how long.
fn throughput(t: &Test, bytes_received: u64, done: &Message) -> (Option<f64>, i64) {
    let spec = &t.spec;
    let client_rx = done.opt_u64(proto::F_BYTES).filter(|_| spec.server_sends());
    let client_elapsed = done.opt_u64(proto::F_ELAPSED_NS).map(|v| v as i64);
    let server_bps = if spec.server_receives() {
        bps(bytes_received, rx_span(t))
    } else {
        None
    };
    let client_bps = match (client_rx, client_elapsed) {
        (Some(b), Some(ns)) => bps(b, ns),
        _ => None,
    };
    match spec.direction.as_str() {
        "forward" => (server_bps, rx_span(t)),
        "reverse" => (client_bps, client_elapsed.unwrap_or(0)),
        _ => {
            let sum = match (server_bps, client_bps) {
                (Some(a), Some(b)) => Some(a + b),
                (a, b) => a.or(b),
            };
            (sum, rx_span(t))
        }
    }
}

/// UDP loss and its ratio: counted here when the server receives, from the
/// client's DONE when it does.
fn udp_loss(t: &Test, f: &UdpFigures, done: &Message) -> (Option<u64>, Option<f64>) {
    let spec = &t.spec;
    if spec.kind != "udp" {
        return (None, None);
    }
    if spec.server_receives() {
        // The client's own count of what it sent (forward udp):
        // F_PACKETS_SENT, or F_PACKETS from a client that only sends.
        let sent = done.opt_u64(proto::F_PACKETS_SENT).or_else(|| {
            done.opt_u64(proto::F_PACKETS)
                .filter(|_| spec.direction == "forward")
        });
        let expected = sent.unwrap_or_else(|| f.highest.map_or(0, |h| h + 1));
        let lost = expected.saturating_sub(f.received);
        return (
            Some(lost),
            (expected > 0).then(|| lost as f64 / expected as f64),
        );
    }
    let lost = done.opt_u64(proto::F_LOST);
    (
        lost,
        lost.filter(|_| f.sent > 0)
            .map(|l| l as f64 / f.sent as f64),
    )
}

/// The record of a finished test; `cpu` is the server's (user, system) ns
/// over the test.
pub(super) fn figures_of(t: &Test, f: &UdpFigures, done: &Message, cpu: (u64, u64)) -> ServedTest {
    let spec = &t.spec;
    let udp = spec.kind == "udp";
    let bytes_received = if udp {
        f.bytes
    } else {
        t.bytes_rx.load(Ordering::Relaxed)
    };
    let transactions = t.transactions.load(Ordering::Relaxed);
    let (throughput_bps, elapsed_ns) = throughput(t, bytes_received, done);
    let (lost, loss_ratio) = udp_loss(t, f, done);
    let partial_reason = t.partial.lock().unwrap().clone();
    let txn_span = span(
        t.first_rx.load(Ordering::Relaxed),
        t.last_tx.load(Ordering::Relaxed),
    );
    ServedTest {
        test_id: t.id,
        client: t.peer.ip().to_string(),
        client_name: spec.client_name.clone(),
        kind: spec.kind.clone(),
        direction: spec.direction.clone(),
        streams: spec.streams,
        msg_size: spec.msg_size,
        request_size: spec.request_size,
        response_size: spec.response_size,
        started_at: t.started_at.clone(),
        requested_duration_ns: spec.duration.as_nanos() as i64,
        elapsed_ns: if transactions > 0 && !udp && spec.kind != "tcp" {
            txn_span
        } else {
            elapsed_ns
        },
        bytes_received,
        bytes_sent: t.bytes_tx.load(Ordering::Relaxed),
        client_bytes_received: done.opt_u64(proto::F_BYTES).filter(|_| spec.server_sends()),
        packets_received: if udp { f.received } else { 0 },
        packets_sent: if udp { f.sent } else { 0 },
        throughput_bps,
        transactions,
        transactions_per_s: (transactions > 0 && txn_span > 0)
            .then(|| transactions as f64 * 1e9 / txn_span as f64),
        lost,
        loss_ratio,
        duplicates: udp.then_some(f.duplicates),
        reordered: udp.then_some(f.reordered),
        jitter_ns: (udp && spec.server_receives()).then_some(f.jitter_ns),
        owd_min_ns: f.owd_min,
        owd_max_ns: f.owd_max,
        stream_bytes: t.stream_bytes.lock().unwrap().clone(),
        sndbuf_granted: Some(t.sndbuf.load(Ordering::Relaxed)).filter(|v| *v > 0),
        rcvbuf_granted: Some(t.rcvbuf.load(Ordering::Relaxed)).filter(|v| *v > 0),
        cpu_user_ns: cpu.0,
        cpu_system_ns: cpu.1,
        cpu_shared: t.cpu_shared.load(Ordering::Relaxed),
        partial: partial_reason.is_some(),
        partial_reason,
        warnings: vec![],
    }
}

/// RESULT: the server's figures of a finished test, for the client.
pub(super) fn result_message(t: &Test, f: &UdpFigures, record: &ServedTest) -> Message {
    let spec = &t.spec;
    let udp_received = spec.kind == "udp" && spec.server_receives();
    let packets_rx = if spec.kind == "udp" {
        f.received
    } else {
        t.transactions.load(Ordering::Relaxed)
    };
    let packed: Vec<u8> = record
        .stream_bytes
        .iter()
        .flat_map(|b| b.to_be_bytes())
        .collect();
    let server_elapsed = if spec.server_receives() {
        rx_span(t)
    } else {
        span(
            t.first_tx.load(Ordering::Relaxed),
            t.last_tx.load(Ordering::Relaxed),
        )
    };
    let mut result = Message::new(proto::RESULT)
        .with(proto::F_TEST_ID, Value::U64(t.id))
        .with(proto::F_BYTES, Value::U64(record.bytes_received))
        .with(proto::F_PACKETS, Value::U64(packets_rx))
        .with(proto::F_BYTES_SENT, Value::U64(record.bytes_sent))
        .with(proto::F_PACKETS_SENT, Value::U64(record.packets_sent))
        .with(
            proto::F_ELAPSED_NS,
            Value::U64(server_elapsed.max(0) as u64),
        )
        .with(proto::F_STREAM_BYTES, Value::Bytes(packed))
        .with(proto::F_CPU_USER_NS, Value::U64(record.cpu_user_ns))
        .with(proto::F_CPU_SYSTEM_NS, Value::U64(record.cpu_system_ns))
        .with(proto::F_TRANSACTIONS, Value::U64(record.transactions))
        .with(proto::F_PARTIAL, Value::Bool(record.partial));
    if let Some(v) = record.sndbuf_granted {
        result = result.with(proto::F_SNDBUF, Value::U64(v));
    }
    if let Some(v) = record.rcvbuf_granted {
        result = result.with(proto::F_RCVBUF, Value::U64(v));
    }
    if udp_received {
        result = result
            .with(proto::F_LOST, Value::U64(record.lost.unwrap_or(0)))
            .with(proto::F_DUPLICATES, Value::U64(f.duplicates))
            .with(proto::F_REORDERED, Value::U64(f.reordered))
            .with(proto::F_JITTER_NS, Value::U64(f.jitter_ns.round() as u64));
        if let (Some(a), Some(b)) = (f.owd_min, f.owd_max) {
            result = result
                .with(proto::F_OWD_MIN_NS, Value::I64(a))
                .with(proto::F_OWD_MAX_NS, Value::I64(b));
        }
    }
    if let Some(p) = f
        .pacing
        .as_ref()
        .and_then(|p| serde_json::to_string(p).ok())
    {
        result = result.with(proto::F_PACING, Value::Str(p));
    }
    if let Some(why) = &record.partial_reason {
        result = result.with(proto::F_REASON, Value::Str(why.chars().take(512).collect()));
    }
    result
}
