//! The Prometheus remote-write sink (protocol version 1: a protobuf
//! `WriteRequest`, snappy block-compressed, POSTed). Each result becomes
//! samples at the time its run started: its headline latency (median and
//! 99th percentile, seconds), probe counts, and throughput for throughput
//! runs, labelled agent, target, kind and the agent's own labels. Sent from
//! the outbox like every sink, so a receiver that was down gets the samples
//! it missed, at their own times.
//!
//! The protobuf encoder is written here: the message has four fields in
//! three nested types (`WriteRequest{TimeSeries{Label, Sample}}`), which a
//! few lines of varint and length-delimited encoding cover, where a
//! protobuf crate would bring code generation and a build step for them.

use super::delivery::Delivery;
use super::figures;
use crate::http_client::Client;
use crate::sinks::Sink;
use misura_store::outbox::Pending;
use std::collections::BTreeMap;

/// Largest reply body read from a receiver.
const MAX_REPLY: u64 = 64 << 10;

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A length-delimited field (wire type 2).
fn bytes_field(out: &mut Vec<u8>, field: u32, b: &[u8]) {
    varint(out, u64::from(field << 3 | 2));
    varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

/// One series: its labels (sorted by name, `__name__` among them) and its
/// samples (ms since the epoch, value), oldest first.
pub type Series = (Labels, Vec<(i64, f64)>);

/// A series' labels, sorted by name.
pub type Labels = Vec<(String, String)>;

/// `WriteRequest` of prometheus/prompb/remote.proto, protobuf-encoded.
pub fn encode(series: &[Series]) -> Vec<u8> {
    let mut out = Vec::new();
    for (labels, samples) in series {
        let mut ts = Vec::new();
        for (name, value) in labels {
            let mut l = Vec::new();
            bytes_field(&mut l, 1, name.as_bytes());
            bytes_field(&mut l, 2, value.as_bytes());
            bytes_field(&mut ts, 1, &l);
        }
        for (ms, v) in samples {
            let mut s = Vec::new();
            // value: double, field 1, wire type 1 (64-bit).
            s.push(1 << 3 | 1);
            s.extend_from_slice(&v.to_le_bytes());
            // timestamp: int64, field 2, varint.
            s.push(2 << 3);
            varint(&mut s, *ms as u64);
            bytes_field(&mut ts, 2, &s);
        }
        bytes_field(&mut out, 1, &ts);
    }
    out
}

/// The series of a batch of results: one per (figure, agent, target),
/// samples in outbox order.
pub fn series_of(batch: &[Pending], labels: &BTreeMap<String, String>) -> Vec<Series> {
    let mut by: BTreeMap<Labels, Vec<(i64, f64)>> = BTreeMap::new();
    for p in batch {
        let v: serde_json::Value = serde_json::from_str(&p.result).unwrap_or_default();
        let f = figures::of(&v);
        let ms = (f.started_ns / 1_000_000) as i64;
        let mut values: Vec<(&str, f64)> = Vec::new();
        if let Some(m) = f.median_ns {
            values.push(("misura_run_latency_median_seconds", m as f64 / 1e9));
        }
        if let Some(m) = f.p99_ns {
            values.push(("misura_run_latency_p99_seconds", m as f64 / 1e9));
        }
        if f.sent > 0 {
            values.push(("misura_run_probes_sent", f.sent as f64));
            values.push(("misura_run_probes_lost", f.lost as f64));
        }
        if let Some(t) = f.throughput_bps {
            values.push(("misura_run_throughput_bits_per_second", t));
        }
        if let Some(t) = f.transactions_per_s {
            values.push(("misura_run_transactions_per_second", t));
        }
        for (name, value) in values {
            let mut l: Labels = vec![
                ("__name__".into(), name.into()),
                ("agent".into(), p.agent.clone()),
                ("target".into(), p.target.clone()),
                ("kind".into(), p.kind.clone()),
            ];
            if !f.figure.is_empty() && name.contains("latency") {
                l.push(("figure".into(), f.figure.clone()));
            }
            for (k, v) in labels {
                if !l.iter().any(|(n, _)| n == k) {
                    l.push((k.clone(), v.clone()));
                }
            }
            l.sort();
            by.entry(l).or_default().push((ms, value));
        }
    }
    by.into_iter()
        .map(|(l, mut s)| {
            s.sort_by_key(|x| x.0);
            (l, s)
        })
        .collect()
}

pub struct RemoteWrite {
    client: Client,
    url: String,
    headers: Vec<(String, String)>,
    labels: BTreeMap<String, String>,
}

impl RemoteWrite {
    pub fn new(sink: &Sink, labels: BTreeMap<String, String>) -> RemoteWrite {
        RemoteWrite {
            client: Client::new(
                std::time::Duration::from_nanos(sink.timeout.as_ns() as u64),
                MAX_REPLY,
            ),
            url: sink.url.clone(),
            headers: sink.headers.clone(),
            labels,
        }
    }

    pub fn deliver(&mut self, batch: &[Pending]) -> Delivery {
        let series = series_of(batch, &self.labels);
        if series.is_empty() {
            return Delivery::all(batch.len());
        }
        let body = match snap::raw::Encoder::new().compress_vec(&encode(&series)) {
            Ok(b) => b,
            Err(e) => return Delivery::failed(0, format!("snappy: {e}")),
        };
        let mut h: Vec<(&str, &str)> = vec![
            ("Content-Encoding", "snappy"),
            ("Content-Type", "application/x-protobuf"),
            ("X-Prometheus-Remote-Write-Version", "0.1.0"),
        ];
        h.extend(self.headers.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        match self.client.post(&self.url, &h, &body) {
            Ok(r) if (200..300).contains(&r.status) => Delivery::all(batch.len()),
            Ok(r) => Delivery::failed(
                0,
                format!(
                    "remote-write POST of {} results to {}: receiver answered {}: {}",
                    batch.len(),
                    self.url,
                    r.status,
                    r.reason()
                ),
            ),
            Err(e) => Delivery::failed(
                0,
                format!(
                    "remote-write POST of {} results to {}: {e}",
                    batch.len(),
                    self.url
                ),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_as_protobuf_does() {
        // Hand-checked bytes of WriteRequest{timeseries: [{labels: [{a, b}],
        // samples: [{value: 1.0, timestamp: 300}]}]}.
        let b = encode(&[(vec![("a".into(), "b".into())], vec![(300, 1.0)])]);
        let sample = [0x09, 0, 0, 0, 0, 0, 0, 0xF0, 0x3F, 0x10, 0xAC, 0x02];
        let mut want = vec![0x0A, 2 + 6 + 2 + sample.len() as u8];
        want.extend([0x0A, 6, 0x0A, 1, b'a', 0x12, 1, b'b']);
        want.extend([0x12, sample.len() as u8]);
        want.extend(sample);
        assert_eq!(b, want);
    }

    #[test]
    fn one_series_per_figure_and_target_in_time_order() {
        let p = |id: &str, at: &str, med: i64| Pending {
            pos: 1,
            run_id: id.into(),
            agent: "a1".into(),
            target: "t".into(),
            kind: "rtt".into(),
            created_ns: 0,
            result: serde_json::json!({"started_at": at, "totals": {"sent": 10, "lost": 1},
                "overall": {"network_rtt": {"median_ns": med, "p99_ns": med * 2}}})
            .to_string(),
            probes: None,
        };
        let labels = BTreeMap::from([("site".to_string(), "lab".to_string())]);
        let s = series_of(
            &[
                p("2", "2026-11-24T00:00:02Z", 2000),
                p("1", "2026-11-24T00:00:01Z", 1000),
            ],
            &labels,
        );
        assert_eq!(s.len(), 4);
        let med = s
            .iter()
            .find(|(l, _)| {
                l.iter()
                    .any(|(k, v)| k == "__name__" && v == "misura_run_latency_median_seconds")
            })
            .unwrap();
        assert!(med.0.contains(&("site".into(), "lab".into())));
        assert!(med.0.windows(2).all(|w| w[0].0 < w[1].0), "labels sorted");
        assert_eq!(
            med.1,
            vec![(1_795_478_401_000, 1e-6), (1_795_478_402_000, 2e-6)]
        );
    }
}
