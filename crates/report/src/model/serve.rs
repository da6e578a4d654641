//! The report of `misura serve`: every test it served, a table per client
//! and the aggregate (seed 001, Tables 4 and 5: several senders to one
//! receiver, per-sender and aggregate throughput), and what it refused.

use super::meta::{HostFingerprint, Meta};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The server's limits and set-up, as resolved.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ServeConfig {
    pub listen: String,
    pub port: u16,
    pub netns: Option<String>,
    pub max_tests: usize,
    pub max_duration_ns: i64,
    pub max_rate_bps: u64,
    pub max_streams: usize,
    pub handshake_timeout_ns: i64,
    pub idle_timeout_ns: i64,
    pub max_per_source: usize,
    pub max_connections: usize,
    pub authenticated: bool,
    pub auth_window_ns: i64,
    /// `--busy-poll`: how long a forward TCP test's reader polls before it
    /// sleeps, ns (0: it sleeps at once).
    #[serde(default)]
    pub busy_poll_ns: i64,
}

/// One test the server ran, with the receiver's figures.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ServedTest {
    pub test_id: u64,
    /// The control connection's source address.
    pub client: String,
    /// Free text the client sent (`F_CLIENT_NAME`), if any.
    pub client_name: Option<String>,
    /// "tcp", "udp", "rr-tcp", "rr-udp" or "crr".
    pub kind: String,
    /// "forward" (client sends), "reverse" (server sends) or "bidir".
    pub direction: String,
    pub streams: u64,
    pub msg_size: u64,
    pub request_size: u64,
    pub response_size: u64,
    /// Start of the test (ACCEPT sent), RFC 3339 UTC.
    pub started_at: String,
    pub requested_duration_ns: i64,
    /// The receiver's span: first to last byte received (server side for
    /// forward, the client's DONE for reverse).
    pub elapsed_ns: i64,
    /// Bytes the server received / sent (application payload).
    pub bytes_received: u64,
    pub bytes_sent: u64,
    /// Bytes the client said it received (reverse and bidir), from DONE.
    pub client_bytes_received: Option<u64>,
    pub packets_received: u64,
    pub packets_sent: u64,
    /// Receiver throughput, bit/s of payload: forward from the server's
    /// count, reverse from the client's, bidir the sum of both directions.
    pub throughput_bps: Option<f64>,
    pub transactions: u64,
    pub transactions_per_s: Option<f64>,
    /// UDP: datagrams lost (the sender's count minus those received).
    pub lost: Option<u64>,
    pub loss_ratio: Option<f64>,
    pub duplicates: Option<u64>,
    pub reordered: Option<u64>,
    pub jitter_ns: Option<f64>,
    /// One-way delay: receive clock minus the sender's clock (meaningful
    /// only when both clocks are synchronised; same host: exact).
    pub owd_min_ns: Option<i64>,
    pub owd_max_ns: Option<i64>,
    /// Bytes received per data stream.
    pub stream_bytes: Vec<u64>,
    /// Socket buffers the kernel granted on the server's data sockets
    /// (`getsockopt`, which on Linux reports twice the value asked for).
    pub sndbuf_granted: Option<u64>,
    pub rcvbuf_granted: Option<u64>,
    /// The server process's CPU time during the test (`getrusage`
    /// RUSAGE_SELF); shared with any test that overlapped it.
    pub cpu_user_ns: u64,
    pub cpu_system_ns: u64,
    /// Another test overlapped this one, so its CPU time is shared.
    pub cpu_shared: bool,
    /// The test did not end normally (peer vanished, idle timeout, stop).
    pub partial: bool,
    pub partial_reason: Option<String>,
    /// The client's figures that failed the check against what the server
    /// counted (`peer.implausible`): named, and left out of the figures.
    /// Empty when none failed, and in older results.
    #[serde(default)]
    pub warnings: Vec<super::Warning>,
}

/// One client's row: seed 001's "throughput a Milano / Roma / Torino".
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ClientRow {
    pub client: String,
    pub client_name: Option<String>,
    pub tests: u64,
    pub partial_tests: u64,
    pub bytes_received: u64,
    pub bytes_sent: u64,
    /// Mean receiver throughput over this client's throughput tests.
    pub mean_throughput_bps: Option<f64>,
    pub transactions: u64,
    pub lost: u64,
}

/// Tables 4 and 5: per message size, each client's throughput and their sum.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SizeRow {
    pub msg_size: u64,
    /// client → mean receiver throughput at this size (bit/s).
    pub per_client_bps: BTreeMap<String, f64>,
    pub aggregate_bps: f64,
}

/// What the server refused or dropped, by reason.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ServeCounters {
    pub connections_accepted: u64,
    pub connections_refused_full: u64,
    pub connections_evicted: u64,
    pub handshake_timeouts: u64,
    pub malformed: u64,
    pub unknown_test_id: u64,
    pub tests_accepted: u64,
    pub tests_refused: u64,
    /// Refusal reason (the text before any figure) → count.
    pub refusals: BTreeMap<String, u64>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ServeReport {
    #[serde(flatten)]
    pub meta: Meta,
    pub host: HostFingerprint,
    pub config: ServeConfig,
    pub tests: Vec<ServedTest>,
    pub clients: Vec<ClientRow>,
    pub by_msg_size: Vec<SizeRow>,
    /// Sum of the clients' mean throughputs (seed 001's "throughput
    /// aggregato").
    pub aggregate_throughput_bps: f64,
    pub aggregate_bytes_received: u64,
    pub counters: ServeCounters,
    /// False when tests were still running at the stop.
    pub complete: bool,
}

pub fn client_key(t: &ServedTest) -> String {
    match &t.client_name {
        Some(n) if !n.is_empty() => format!("{n} ({})", t.client),
        _ => t.client.clone(),
    }
}

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// Per-client rows, the per-size table and the aggregate, from the tests.
pub fn summarise(tests: &[ServedTest]) -> (Vec<ClientRow>, Vec<SizeRow>, f64, u64) {
    let mut clients: BTreeMap<String, (ClientRow, Vec<f64>)> = BTreeMap::new();
    let mut sizes: BTreeMap<u64, BTreeMap<String, Vec<f64>>> = BTreeMap::new();
    for t in tests {
        let key = client_key(t);
        let (row, tp) = clients.entry(key.clone()).or_insert_with(|| {
            (
                ClientRow {
                    client: t.client.clone(),
                    client_name: t.client_name.clone(),
                    tests: 0,
                    partial_tests: 0,
                    bytes_received: 0,
                    bytes_sent: 0,
                    mean_throughput_bps: None,
                    transactions: 0,
                    lost: 0,
                },
                Vec::new(),
            )
        });
        row.tests += 1;
        row.partial_tests += u64::from(t.partial);
        row.bytes_received += t.bytes_received;
        row.bytes_sent += t.bytes_sent;
        row.transactions += t.transactions;
        row.lost += t.lost.unwrap_or(0);
        if matches!(t.kind.as_str(), "tcp" | "udp") {
            if let Some(b) = t.throughput_bps {
                tp.push(b);
                sizes
                    .entry(t.msg_size)
                    .or_default()
                    .entry(key)
                    .or_default()
                    .push(b);
            }
        }
    }
    let mut aggregate = 0.0;
    let mut bytes = 0;
    let rows: Vec<ClientRow> = clients
        .into_values()
        .map(|(mut r, tp)| {
            r.mean_throughput_bps = mean(&tp);
            aggregate += r.mean_throughput_bps.unwrap_or(0.0);
            bytes += r.bytes_received;
            r
        })
        .collect();
    let by_size = sizes
        .into_iter()
        .map(|(msg_size, per)| {
            let per_client_bps: BTreeMap<String, f64> = per
                .into_iter()
                .filter_map(|(k, v)| Some((k, mean(&v)?)))
                .collect();
            let aggregate_bps = per_client_bps.values().sum();
            SizeRow {
                msg_size,
                per_client_bps,
                aggregate_bps,
            }
        })
        .collect();
    (rows, by_size, aggregate, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::serve::test_line;

    fn t(client: &str, size: u64, bps: f64) -> ServedTest {
        ServedTest {
            test_id: 1,
            client: client.into(),
            client_name: None,
            kind: "tcp".into(),
            direction: "forward".into(),
            streams: 1,
            msg_size: size,
            request_size: 0,
            response_size: 0,
            started_at: String::new(),
            requested_duration_ns: 1_000_000_000,
            elapsed_ns: 1_000_000_000,
            bytes_received: (bps / 8.0) as u64,
            bytes_sent: 0,
            client_bytes_received: None,
            packets_received: 0,
            packets_sent: 0,
            throughput_bps: Some(bps),
            transactions: 0,
            transactions_per_s: None,
            lost: None,
            loss_ratio: None,
            duplicates: None,
            reordered: None,
            jitter_ns: None,
            owd_min_ns: None,
            owd_max_ns: None,
            stream_bytes: vec![],
            sndbuf_granted: None,
            rcvbuf_granted: None,
            cpu_user_ns: 0,
            cpu_system_ns: 0,
            cpu_shared: false,
            partial: false,
            partial_reason: None,
            warnings: vec![],
        }
    }

    #[test]
    fn aggregate_is_the_sum_of_the_senders() {
        // Seed 001, Table 4, message size 1000: 5.92 + 5.31 + 6.02 = 17.25 Mbit/s.
        let tests = [
            t("milano", 1000, 5.92e6),
            t("roma", 1000, 5.31e6),
            t("torino", 1000, 6.02e6),
            t("milano", 10, 2.89e6),
        ];
        let (rows, sizes, agg, _) = summarise(&tests);
        assert_eq!(rows.len(), 3);
        assert_eq!(sizes.len(), 2);
        let s1000 = sizes.iter().find(|s| s.msg_size == 1000).unwrap();
        assert!((s1000.aggregate_bps - 17.25e6).abs() < 1.0);
        assert!((agg - ((5.92e6 + 2.89e6) / 2.0 + 5.31e6 + 6.02e6)).abs() < 1.0);
        let mut out = Vec::new();
        let line = test_line(&tests[0]);
        assert!(line.contains("5.92 Mbit/s"), "{line}");
        out.extend_from_slice(line.as_bytes());
    }
}
