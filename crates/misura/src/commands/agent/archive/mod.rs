//! Delivery of the outbox to the sinks: one thread per `[[sink]]`, each with
//! its own store connection. A thread takes the oldest results its sink has
//! not acknowledged (up to `batch`; a smaller batch waits until its oldest
//! result is `linger` old), sends them, and records the new
//! position in the store only after the sink said yes: at-least-once, and
//! exactly-once where the sink dedups by run id (ClickHouse here, any HTTP
//! receiver by the `Misura-Run-Id` header). A failure is kept as the sink's
//! last error and retried with exponential back-off (1 s doubling to 60 s);
//! waiting results are bounded by count and age, the oldest dropped first
//! and counted.

pub mod clickhouse;
pub mod delivery;
pub mod figures;
pub mod http_json;
pub mod remote_write;

use super::sinks::{Sink, SinkKind};
use delivery::Delivery;
use misura_store::outbox::Pending;
use misura_store::Store;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const MIN_BACKOFF: Duration = Duration::from_secs(1);
const MAX_BACKOFF: Duration = Duration::from_secs(60);
/// How often an idle sink looks for new results.
const IDLE_POLL: Duration = Duration::from_millis(250);

/// A sink's figures for `/metrics`.
#[derive(Clone, Debug, Default)]
pub struct SinkCounters {
    pub kind: &'static str,
    pub sent: u64,
    pub dropped: u64,
    pub errors: u64,
    pub waiting: u64,
    pub oldest_waiting_ns: Option<i64>,
}

pub type SinkStats = Arc<Mutex<BTreeMap<String, SinkCounters>>>;

enum Driver {
    ClickHouse(clickhouse::ClickHouse),
    RemoteWrite(remote_write::RemoteWrite),
    Http(http_json::HttpJson),
}

impl Driver {
    fn deliver(&mut self, batch: &[Pending]) -> Delivery {
        match self {
            Driver::ClickHouse(c) => c.deliver(batch),
            Driver::RemoteWrite(r) => r.deliver(batch),
            Driver::Http(h) => h.deliver(batch),
        }
    }
}

/// What every sink thread shares.
#[derive(Clone)]
pub struct Options {
    pub store: PathBuf,
    pub labels: BTreeMap<String, String>,
    /// Create ClickHouse tables that are missing (`--no-create` clears it).
    pub create: bool,
    pub stop: Arc<AtomicUsize>,
    pub stats: SinkStats,
}

pub fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

/// Sleep `d`, waking early when the agent stops.
fn pause(stop: &AtomicUsize, d: Duration) {
    let end = Instant::now() + d;
    while stop.load(Ordering::Relaxed) == 0 && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(50).min(end - Instant::now()));
    }
}

/// Start one delivery thread per sink.
pub fn start(sinks: &[Sink], o: &Options) -> std::io::Result<Vec<JoinHandle<()>>> {
    let mut threads = Vec::new();
    for s in sinks {
        let driver = match &s.kind {
            SinkKind::ClickHouse { .. } => {
                Driver::ClickHouse(clickhouse::ClickHouse::new(s, o.create))
            }
            SinkKind::RemoteWrite => {
                Driver::RemoteWrite(remote_write::RemoteWrite::new(s, o.labels.clone()))
            }
            SinkKind::Http => Driver::Http(http_json::HttpJson::new(s)),
        };
        o.stats
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(s.name.clone())
            .or_default()
            .kind = s.kind_label();
        let (s, o) = (s.clone(), o.clone());
        threads.push(
            std::thread::Builder::new()
                .name(format!("sink-{}", s.name))
                .spawn(move || work(&s, driver, &o))?,
        );
    }
    Ok(threads)
}

fn open(o: &Options, name: &str) -> Option<Store> {
    loop {
        match Store::open(&o.store) {
            Ok(s) => return Some(s),
            Err(e) => {
                eprintln!(
                    "misura agent: sink {name}: cannot open the store: {e}; trying again in 10 s"
                );
                pause(&o.stop, Duration::from_secs(10));
                if o.stop.load(Ordering::Relaxed) != 0 {
                    return None;
                }
            }
        }
    }
}

fn work(sink: &Sink, mut driver: Driver, o: &Options) {
    let Some(mut store) = open(o, &sink.name) else {
        return;
    };
    let name = sink.name.as_str();
    let mut backoff = MIN_BACKOFF;
    let mut failing = false;
    let mut acks = 0u64;
    let counters = |f: &mut dyn FnMut(&mut SinkCounters)| {
        let mut g = o.stats.lock().unwrap_or_else(|p| p.into_inner());
        f(g.entry(name.to_string()).or_default());
    };
    while o.stop.load(Ordering::Relaxed) == 0 {
        let now = now_ns();
        match store.enforce_bounds(name, sink.max_waiting, now.saturating_sub(sink.max_age_ns)) {
            Ok(0) => {}
            Ok(n) => {
                eprintln!("misura agent: sink {name}: {n} results dropped, older or more than its max_age/max_waiting allow (counted in misura_sink_dropped_total)");
                counters(&mut |c| c.dropped += n as u64);
            }
            Err(e) => eprintln!("misura agent: sink {name}: store: {e}"),
        }
        if let Ok(all) = store.sink_status() {
            if let Some(st) = all.iter().find(|s| s.name == name) {
                counters(&mut |c| {
                    c.waiting = st.waiting as u64;
                    c.oldest_waiting_ns = st.oldest_waiting_ns;
                });
            }
        }
        let batch = match store.pending(name, sink.batch) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("misura agent: sink {name}: reading the outbox: {e}");
                pause(&o.stop, backoff);
                continue;
            }
        };
        let young = batch
            .first()
            .is_some_and(|p| now_ns().saturating_sub(p.created_ns) < sink.linger_ns);
        if batch.is_empty() || (batch.len() < sink.batch as usize && young) {
            pause(&o.stop, IDLE_POLL);
            continue;
        }
        let d = driver.deliver(&batch);
        if d.done > 0 {
            let upto = batch[d.done - 1].pos;
            if let Err(e) = store.ack(name, upto, d.done as i64, now_ns()) {
                eprintln!("misura agent: sink {name}: recording the acknowledged position: {e}");
            }
            counters(&mut |c| c.sent += d.done as u64);
            acks += 1;
            if acks % 16 == 1 {
                let _ = store.prune_outbox();
            }
        }
        match d.error {
            None => {
                if failing {
                    eprintln!("misura agent: sink {name}: delivering again");
                }
                failing = false;
                backoff = MIN_BACKOFF;
            }
            Some(e) => {
                if !failing {
                    eprintln!("misura agent: sink {name}: {e}; results wait in the store and are retried with back-off");
                }
                failing = true;
                let _ = store.sink_error(name, &e, now_ns());
                counters(&mut |c| c.errors += 1);
                pause(&o.stop, backoff);
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
        }
    }
}
