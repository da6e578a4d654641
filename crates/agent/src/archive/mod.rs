//! Delivery of the outbox to the sinks: one thread per `[[sink]]`, each with
//! its own store connection. A thread takes the oldest results its sink has
//! not acknowledged (up to `batch`; a smaller batch waits until its oldest
//! result is `linger` old), sends them, and records the new
//! position in the store only after the sink said yes: at-least-once, and
//! exactly-once where the sink dedups by run id (ClickHouse here, any HTTP
//! receiver by the `Misura-Run-Id` header). A failure is kept as the sink's
//! last error and retried with exponential back-off (1 s doubling to 60 s);
//! waiting results are bounded by count and age, the oldest dropped first
//! and counted (checked as each result is kept, and every `HOUSEKEEPING`
//! while a sink backs off), their per-probe logs freed.
//!
//! Stopping: a thread ends within one request of its sink (the sink's
//! `timeout`, at most `sinks::MAX_TIMEOUT`); the agent waits for it
//! `STOP_WAIT` and then exits without it. A batch not acknowledged stays in
//! the outbox and goes again after the restart.

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
/// How often a backing-off sink enforces its bounds and refreshes its
/// figures on /metrics.
const HOUSEKEEPING: Duration = Duration::from_millis(500);
/// How long a stopping agent waits for its sink threads.
pub const STOP_WAIT: Duration = Duration::from_secs(3);

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
    fn deliver(&mut self, batch: &[Pending], stop: &AtomicUsize) -> Delivery {
        match self {
            Driver::ClickHouse(c) => c.deliver(batch, stop),
            Driver::RemoteWrite(r) => r.deliver(batch),
            Driver::Http(h) => h.deliver(batch, stop),
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
    pause_with(stop, d, &mut || {});
}

/// Sleep `d`, waking early when the agent stops, and run `every` each
/// `HOUSEKEEPING` meanwhile.
fn pause_with(stop: &AtomicUsize, d: Duration, every: &mut dyn FnMut()) {
    let end = Instant::now() + d;
    let mut next = Instant::now() + HOUSEKEEPING;
    while stop.load(Ordering::Relaxed) == 0 && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(50).min(end - Instant::now()));
        if Instant::now() >= next {
            every();
            next += HOUSEKEEPING;
        }
    }
}

/// Wait for the sink threads at most `STOP_WAIT`: one still in a request
/// is left behind (the process exits under it; its batch stays waiting).
pub fn join(threads: Vec<JoinHandle<()>>) {
    let end = Instant::now() + STOP_WAIT;
    while Instant::now() < end && threads.iter().any(|t| !t.is_finished()) {
        std::thread::sleep(Duration::from_millis(20));
    }
    for t in threads {
        if t.is_finished() {
            let _ = t.join();
        } else {
            log::warn!(
                "misura agent: sink {}: still in a request after {} s of stopping: left behind; what it was sending stays in the outbox",
                t.thread().name().unwrap_or("?").trim_start_matches("sink-"),
                STOP_WAIT.as_secs()
            );
        }
    }
}

/// Enforce `sink`'s bounds now (the oldest beyond them dropped, their
/// per-probe logs freed). Returns how many were dropped.
pub fn enforce(store: &mut Store, sink: &Sink) -> Result<i64, String> {
    let n = store
        .enforce_bounds(
            &sink.name,
            sink.max_waiting,
            now_ns().saturating_sub(sink.max_age.as_ns()),
        )
        .map_err(|e| e.to_string())?;
    if n > 0 {
        store.prune_outbox().map_err(|e| e.to_string())?;
    }
    Ok(n)
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
                log::error!(
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

/// Bounds, and the figures /metrics shows (`dropped` since the agent
/// started, from the store, where the keeper's drops are counted too).
fn housekeep(store: &mut Store, sink: &Sink, o: &Options, dropped_before: i64) {
    let name = sink.name.as_str();
    match enforce(store, sink) {
        Ok(0) => {}
        Ok(n) => log::warn!("misura agent: sink {name}: {n} results dropped, older or more than its max_age/max_waiting allow (counted in misura_sink_dropped_total)"),
        Err(e) => log::error!("misura agent: sink {name}: store: {e}"),
    }
    if let Ok(all) = store.sink_status() {
        if let Some(st) = all.iter().find(|s| s.name == name) {
            let mut g = o.stats.lock().unwrap_or_else(|p| p.into_inner());
            let c = g.entry(name.to_string()).or_default();
            c.waiting = st.waiting as u64;
            c.oldest_waiting_ns = st.oldest_waiting_ns;
            c.dropped = (st.dropped - dropped_before).max(0) as u64;
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
    let dropped_before = store
        .sink_status()
        .ok()
        .and_then(|all| all.into_iter().find(|s| s.name == name))
        .map_or(0, |s| s.dropped);
    while o.stop.load(Ordering::Relaxed) == 0 {
        housekeep(&mut store, sink, o, dropped_before);
        let batch = match store.pending(name, sink.batch) {
            Ok(b) => b,
            Err(e) => {
                log::error!("misura agent: sink {name}: reading the outbox: {e}");
                pause(&o.stop, backoff);
                continue;
            }
        };
        let young = batch
            .first()
            .is_some_and(|p| now_ns().saturating_sub(p.created_ns) < sink.linger.as_ns());
        if batch.is_empty() || (batch.len() < sink.batch as usize && young) {
            pause(&o.stop, IDLE_POLL);
            continue;
        }
        let d = driver.deliver(&batch, &o.stop);
        if d.done > 0 {
            let upto = batch[d.done - 1].pos;
            if let Err(e) = store.ack(name, upto, d.done as i64, now_ns()) {
                log::error!("misura agent: sink {name}: recording the acknowledged position: {e}");
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
                    log::info!("misura agent: sink {name}: delivering again");
                }
                failing = false;
                backoff = MIN_BACKOFF;
            }
            Some(_) if o.stop.load(Ordering::Relaxed) != 0 => {}
            Some(e) => {
                if !failing {
                    log::warn!("misura agent: sink {name}: {e}; results wait in the store and are retried with back-off");
                }
                failing = true;
                let _ = store.sink_error(name, &e, now_ns());
                counters(&mut |c| c.errors += 1);
                pause_with(&o.stop, backoff, &mut || {
                    housekeep(&mut store, sink, o, dropped_before)
                });
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
        }
    }
}
