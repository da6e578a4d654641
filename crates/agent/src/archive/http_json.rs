//! The HTTP JSON sink: one POST per result, the result's own JSON document
//! (as its schema describes it) as the body, with `Misura-Run-Id`,
//! `Misura-Agent` and `Misura-Target` headers so a receiver (Logstash,
//! OpenSearch, a perfSONAR-style archive) can keep each run once. Any 2xx
//! acknowledges the result.

use super::delivery::Delivery;
use crate::http_client::Client;
use crate::sinks::Sink;
use misura_store::outbox::Pending;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Largest reply body read from a receiver.
const MAX_REPLY: u64 = 64 << 10;

pub struct HttpJson {
    client: Client,
    url: String,
    headers: Vec<(String, String)>,
}

impl HttpJson {
    pub fn new(sink: &Sink) -> HttpJson {
        HttpJson {
            client: Client::new(
                std::time::Duration::from_nanos(sink.timeout.as_ns() as u64),
                MAX_REPLY,
            ),
            url: sink.url.clone(),
            headers: sink.headers.clone(),
        }
    }

    /// POST each result in turn; a stopping agent ends the batch after the
    /// request under way (the rest waits in the outbox).
    pub fn deliver(&mut self, batch: &[Pending], stop: &AtomicUsize) -> Delivery {
        for (i, p) in batch.iter().enumerate() {
            if stop.load(Ordering::Relaxed) != 0 {
                return Delivery::failed(i, "the agent is stopping".into());
            }
            let mut h: Vec<(&str, &str)> = vec![
                ("Content-Type", "application/json"),
                ("Misura-Run-Id", &p.run_id),
                ("Misura-Agent", &p.agent),
                ("Misura-Target", &p.target),
            ];
            h.extend(self.headers.iter().map(|(k, v)| (k.as_str(), v.as_str())));
            match self.client.post(&self.url, &h, p.result.as_bytes()) {
                Ok(r) if (200..300).contains(&r.status) => {}
                Ok(r) => {
                    return Delivery::failed(
                        i,
                        format!(
                            "POST of run {} to {}: receiver answered {}: {}",
                            p.run_id,
                            self.url,
                            r.status,
                            r.reason()
                        ),
                    )
                }
                Err(e) => {
                    return Delivery::failed(
                        i,
                        format!("POST of run {} to {}: {e}", p.run_id, self.url),
                    )
                }
            }
        }
        Delivery::all(batch.len())
    }
}
