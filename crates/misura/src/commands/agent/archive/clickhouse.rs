//! The ClickHouse sink, over ClickHouse's HTTP interface: one row per result
//! in `misura_runs` and, with `per_probe`, one row per probe in
//! `misura_probes` (DDL below and in docs/fleet.md; times are UInt64 ns,
//! which also suits ClickHouse 18.16, which has no DateTime64).
//!
//! Exactly-once by run id: before inserting a batch the sink asks which of
//! its run ids the tables already hold and inserts only the others, probes
//! before their run row. A batch the agent sent but could not record as
//! acknowledged (SIGKILL, lost reply) is found there on the retry and not
//! inserted twice. Each insert is one statement well under ClickHouse's
//! block size (1 048 576 rows), so it is stored whole or not at all; the
//! tables are ReplacingMergeTree on keys that end in the run id, a second
//! line of defence should two agents ever share a run id.

use super::delivery::Delivery;
use super::figures;
use crate::commands::agent::sinks::Sink;
use crate::shared::http_client::Client;
use misura_store::outbox::Pending;
use serde_json::{json, Value};
use std::collections::HashSet;

/// Most probe rows in one INSERT (whole runs are never split).
const PROBE_ROWS_PER_INSERT: usize = 200_000;
/// Run ids per existence query: 2 000 × 35 bytes stays far below
/// ClickHouse's default `max_query_size` (256 KiB).
const IDS_PER_QUERY: usize = 2_000;
/// Largest reply read from ClickHouse (an id list of one batch fits).
const MAX_REPLY: u64 = 4 << 20;

/// `misura_runs`: one row per result. `{db}` is the sink's database.
pub const RUNS_DDL: &str = "CREATE TABLE IF NOT EXISTS {db}.misura_runs (
    run_id String,
    agent String,
    target String,
    subcommand String,
    started_ns UInt64,
    stored_ns UInt64,
    complete UInt8,
    timestamp_source String,
    probes_sent UInt64,
    probes_received UInt64,
    probes_lost UInt64,
    figure String,
    median_ns Nullable(Int64),
    p99_ns Nullable(Int64),
    throughput_bps Nullable(Float64),
    transactions_per_s Nullable(Float64),
    result String
) ENGINE = ReplacingMergeTree()
PARTITION BY toYYYYMM(toDateTime(intDiv(started_ns, 1000000000)))
ORDER BY (agent, target, started_ns, run_id)";

/// `misura_probes`: one row per probe (rtt) or frame (oneway).
pub const PROBES_DDL: &str = "CREATE TABLE IF NOT EXISTS {db}.misura_probes (
    run_id String,
    agent String,
    target String,
    seq UInt64,
    size UInt32,
    sent_ns UInt64,
    lost UInt8,
    user_ns Nullable(Int64),
    kernel_ns Nullable(Int64),
    network_ns Nullable(Int64),
    forward_ns Nullable(Int64),
    backward_ns Nullable(Int64)
) ENGINE = ReplacingMergeTree()
PARTITION BY toYYYYMM(toDateTime(intDiv(sent_ns, 1000000000)))
ORDER BY (agent, target, run_id, seq)";

pub struct ClickHouse {
    client: Client,
    url: String,
    db: String,
    per_probe: bool,
    create: bool,
    created: bool,
}

/// `s` as a ClickHouse string literal.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// Percent-encoding of a URL query value.
fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

impl ClickHouse {
    pub fn new(sink: &Sink, create: bool) -> ClickHouse {
        let crate::commands::agent::sinks::SinkKind::ClickHouse {
            database,
            user,
            password,
            per_probe,
        } = &sink.kind
        else {
            unreachable!("a ClickHouse sink")
        };
        let mut url = sink.url.clone();
        let mut params = Vec::new();
        if let Some(u) = user {
            params.push(format!("user={}", encode(u)));
        }
        if let Some(p) = password {
            params.push(format!("password={}", encode(p)));
        }
        if !params.is_empty() {
            url.push(if url.contains('?') { '&' } else { '?' });
            url.push_str(&params.join("&"));
        }
        ClickHouse {
            client: Client::new(
                std::time::Duration::from_nanos(sink.timeout_ns as u64),
                MAX_REPLY,
            ),
            url,
            db: database.clone(),
            per_probe: *per_probe,
            create,
            created: false,
        }
    }

    /// Run one statement (the body may carry data after it).
    fn exec(&self, body: &[u8]) -> Result<String, String> {
        let r = self.client.post(&self.url, &[], body)?;
        if r.status != 200 {
            return Err(format!("ClickHouse answered {}: {}", r.status, r.reason()));
        }
        Ok(String::from_utf8_lossy(&r.body).into_owned())
    }

    fn ensure_tables(&mut self) -> Result<(), String> {
        if self.created || !self.create {
            return Ok(());
        }
        self.exec(RUNS_DDL.replace("{db}", &self.db).as_bytes())
            .map_err(|e| format!("creating {}.misura_runs: {e}", self.db))?;
        if self.per_probe {
            self.exec(PROBES_DDL.replace("{db}", &self.db).as_bytes())
                .map_err(|e| format!("creating {}.misura_probes: {e}", self.db))?;
        }
        self.created = true;
        Ok(())
    }

    /// Which of `ids` `table` holds already (asked in chunks: ClickHouse
    /// refuses a query text over `max_query_size`, 256 KiB by default).
    fn present(&self, table: &str, ids: &[&str]) -> Result<HashSet<String>, String> {
        let mut have = HashSet::new();
        for chunk in ids.chunks(IDS_PER_QUERY) {
            let list = chunk.iter().map(|i| quote(i)).collect::<Vec<_>>().join(",");
            let q = format!(
                "SELECT DISTINCT run_id FROM {}.{table} WHERE run_id IN ({list}) FORMAT TabSeparated",
                self.db
            );
            have.extend(self.exec(q.as_bytes())?.lines().map(str::to_string));
        }
        Ok(have)
    }

    fn insert(&self, table: &str, rows: &[Value]) -> Result<(), String> {
        if rows.is_empty() {
            return Ok(());
        }
        let mut body = format!("INSERT INTO {}.{table} FORMAT JSONEachRow\n", self.db).into_bytes();
        for r in rows {
            body.extend_from_slice(r.to_string().as_bytes());
            body.push(b'\n');
        }
        self.exec(&body).map(drop)
    }

    pub fn deliver(&mut self, batch: &[Pending]) -> Delivery {
        match self.deliver_all(batch) {
            Ok(()) => Delivery::all(batch.len()),
            Err(e) => Delivery::failed(0, e),
        }
    }

    fn deliver_all(&mut self, batch: &[Pending]) -> Result<(), String> {
        self.ensure_tables()?;
        let ids: Vec<&str> = batch.iter().map(|p| p.run_id.as_str()).collect();
        let done = self.present("misura_runs", &ids)?;
        let todo: Vec<&Pending> = batch.iter().filter(|p| !done.contains(&p.run_id)).collect();
        if todo.is_empty() {
            return Ok(());
        }
        if self.per_probe {
            let ids: Vec<&str> = todo.iter().map(|p| p.run_id.as_str()).collect();
            let have = self.present("misura_probes", &ids)?;
            let mut rows = Vec::new();
            for p in todo.iter().filter(|p| !have.contains(&p.run_id)) {
                rows.extend(probe_rows(p));
                if rows.len() >= PROBE_ROWS_PER_INSERT {
                    self.insert("misura_probes", &rows)?;
                    rows.clear();
                }
            }
            self.insert("misura_probes", &rows)?;
        }
        let rows: Vec<Value> = todo.iter().map(|p| run_row(p)).collect();
        self.insert("misura_runs", &rows)
    }
}

/// A result's row of `misura_runs`.
pub fn run_row(p: &Pending) -> Value {
    let v: Value = serde_json::from_str(&p.result).unwrap_or(Value::Null);
    let f = figures::of(&v);
    json!({
        "run_id": p.run_id,
        "agent": p.agent,
        "target": p.target,
        "subcommand": p.kind,
        "started_ns": f.started_ns,
        "stored_ns": p.created_ns.max(0) as u64,
        "complete": u8::from(f.complete),
        "timestamp_source": f.timestamp_source,
        "probes_sent": f.sent,
        "probes_received": f.received,
        "probes_lost": f.lost,
        "figure": f.figure,
        "median_ns": f.median_ns,
        "p99_ns": f.p99_ns,
        "throughput_bps": f.throughput_bps,
        "transactions_per_s": f.transactions_per_s,
        "result": p.result,
    })
}

/// The rows of `misura_probes` from a result's per-probe CSV log (rtt's or
/// oneway's `--frames` columns); rows that do not parse are skipped.
pub fn probe_rows(p: &Pending) -> Vec<Value> {
    let Some(csv) = &p.probes else {
        return Vec::new();
    };
    let mut lines = csv.lines();
    let Some(header) = lines.next() else {
        return Vec::new();
    };
    let cols: Vec<&str> = header.split(',').collect();
    let at = |names: &[&str]| names.iter().find_map(|n| cols.iter().position(|c| c == n));
    let seq = at(&["seq"]);
    let size = at(&["request_bytes", "payload_bytes"]);
    let sent = at(&["tx_kernel_ns", "tx1_ns"]);
    let lost = at(&["lost"]);
    let user = at(&["user_rtt_ns", "mul_ns"]);
    let kernel = at(&["kernel_rtt_ns", "kernel_ns"]);
    let network = at(&["network_rtt_ns"]);
    let forward = at(&["forward_ns"]);
    let backward = at(&["backward_ns"]);
    let mut out = Vec::new();
    for line in lines {
        let cells: Vec<&str> = line.split(',').collect();
        let int = |i: Option<usize>| {
            i.and_then(|i| cells.get(i))
                .and_then(|c| c.parse::<i64>().ok())
        };
        let Some(s) = int(seq) else { continue };
        out.push(json!({
            "run_id": p.run_id,
            "agent": p.agent,
            "target": p.target,
            "seq": s.max(0),
            "size": int(size).unwrap_or(0).clamp(0, u32::MAX as i64),
            "sent_ns": int(sent).unwrap_or(0).max(0),
            "lost": u8::from(int(lost).unwrap_or(0) != 0),
            "user_ns": int(user),
            "kernel_ns": int(kernel),
            "network_ns": int(network),
            "forward_ns": int(forward),
            "backward_ns": int(backward),
        }));
    }
    out
}
