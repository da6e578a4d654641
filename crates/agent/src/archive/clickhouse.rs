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
//!
//! A lost reply must not double a batch whatever its timing: an INSERT
//! whose reply was lost (a reset, a timeout) may still commit seconds
//! later, after the retry's check, and ClickHouse 18.16 has neither an
//! insert deduplication token nor dedup of identical blocks outside
//! Replicated tables (nor lists an INSERT in `system.processes` before its
//! body has arrived). So rows never go straight into the tables: each batch
//! goes into a staging table of this agent's sink (`misura_runs_in_TAG`,
//! ENGINE = Memory), and one server-side statement moves from there the
//! runs the table does not hold yet (`INSERT … SELECT … WHERE run_id NOT
//! IN (…) LIMIT 1 BY …`). That move carries one fixed `query_id` per sink
//! and table, so ClickHouse never runs two of them at once (it refuses the
//! second), and a move that runs late, or twice, moves nothing twice. The
//! batch is acknowledged once its run ids are seen in `misura_runs`.

use super::delivery::Delivery;
use super::figures;
use crate::http_client::Client;
use crate::sinks::Sink;
use misura_store::outbox::Pending;
use serde_json::{json, Value};
use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};

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
    name: String,
    /// The staging tables exist (made once per process).
    staged: bool,
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
        let crate::sinks::SinkKind::ClickHouse {
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
                std::time::Duration::from_nanos(sink.timeout.as_ns() as u64),
                MAX_REPLY,
            ),
            url,
            db: database.clone(),
            per_probe: *per_probe,
            create,
            created: false,
            name: sink.name.clone(),
            staged: false,
        }
    }

    /// Run one statement (`params`: more URL parameters; `body`: the
    /// statement, or the data when the statement is in `params`).
    fn exec_with(&self, params: &str, body: &[u8]) -> Result<String, String> {
        let url = if params.is_empty() {
            self.url.clone()
        } else {
            format!(
                "{}{}{params}",
                self.url,
                if self.url.contains('?') { '&' } else { '?' }
            )
        };
        let r = self.client.post(&url, &[], body)?;
        if r.status != 200 {
            return Err(format!("ClickHouse answered {}: {}", r.status, r.reason()));
        }
        Ok(String::from_utf8_lossy(&r.body).into_owned())
    }

    fn exec(&self, body: &[u8]) -> Result<String, String> {
        self.exec_with("", body)
    }

    /// This agent's sink, as a tag in staging table names and query ids.
    fn tag(&self, agent: &str) -> String {
        // FNV-1a: hex digits only, nothing to quote.
        let mut h: u64 = 0xcbf29ce484222325;
        for b in agent.bytes().chain([0]).chain(self.name.bytes()) {
            h = (h ^ u64::from(b)).wrapping_mul(0x100000001b3);
        }
        format!("{h:016x}")
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
            let found = self.exec(q.as_bytes()).map_err(|e| {
                format!(
                    "SELECT DISTINCT run_id FROM {}.{table} (which run ids it holds): {e}",
                    self.db
                )
            })?;
            have.extend(found.lines().map(str::to_string));
        }
        Ok(have)
    }

    /// The staging table of `table` for this agent's sink (`tag`), made
    /// when missing (ENGINE = Memory: ClickHouse keeps its definition, not
    /// its rows, across a restart; the batch is then sent again).
    fn staging(&mut self, tag: &str) -> Result<(), String> {
        if self.staged {
            return Ok(());
        }
        let tables: &[&str] = if self.per_probe {
            &["misura_runs", "misura_probes"]
        } else {
            &["misura_runs"]
        };
        for t in tables {
            let q = format!(
                "CREATE TABLE IF NOT EXISTS {db}.{t}_in_{tag} AS {db}.{t} ENGINE = Memory",
                db = self.db
            );
            self.exec(q.as_bytes()).map_err(|e| format!("{q}: {e}"))?;
        }
        self.staged = true;
        Ok(())
    }

    /// Put `rows` into `table` through its staging table: rows into the
    /// staging table, then one move of the runs `table` does not hold yet,
    /// then the staging table emptied.
    fn move_in(&self, tag: &str, table: &str, rows: &[Value]) -> Result<(), String> {
        if rows.is_empty() {
            return Ok(());
        }
        let db = &self.db;
        let staging = format!("{db}.{table}_in_{tag}");
        let statement = format!("INSERT INTO {staging} FORMAT JSONEachRow");
        let mut body = Vec::new();
        for r in rows {
            body.extend_from_slice(r.to_string().as_bytes());
            body.push(b'\n');
        }
        self.exec_with(&format!("query={}", encode(&statement)), &body)
            .map_err(|e| format!("{statement} ({} rows): {e}", rows.len()))?;
        let key = if table == "misura_probes" {
            "run_id, seq"
        } else {
            "run_id"
        };
        let query_id = format!("misura-{tag}-{table}");
        let mv = format!(
            "INSERT INTO {db}.{table} SELECT * FROM {staging} WHERE run_id NOT IN \
             (SELECT run_id FROM {db}.{table} WHERE run_id IN (SELECT run_id FROM {staging})) \
             LIMIT 1 BY {key}"
        );
        self.exec_with(&format!("query_id={}", encode(&query_id)), mv.as_bytes())
            .map_err(|e| {
                format!("moving the new runs from {staging} into {db}.{table} (INSERT … SELECT, query_id {query_id}): {e}")
            })?;
        // Rows a late copy of an earlier staging insert leaves are moved by
        // the next batch's move or emptied here; either way not twice.
        let _ = self.exec(format!("TRUNCATE TABLE {staging}").as_bytes());
        Ok(())
    }

    pub fn deliver(&mut self, batch: &[Pending], stop: &AtomicUsize) -> Delivery {
        match self.deliver_all(batch, stop) {
            Ok(()) => Delivery::all(batch.len()),
            Err(e) => Delivery::failed(0, e),
        }
    }

    fn deliver_all(&mut self, batch: &[Pending], stop: &AtomicUsize) -> Result<(), String> {
        self.ensure_tables()?;
        let Some(first) = batch.first() else {
            return Ok(());
        };
        let tag = self.tag(&first.agent);
        self.staging(&tag)?;
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
                    self.move_in(&tag, "misura_probes", &rows)?;
                    rows.clear();
                    if stop.load(Ordering::Relaxed) != 0 {
                        return Err(
                            "the agent is stopping: the rest of the batch waits in the outbox"
                                .into(),
                        );
                    }
                }
            }
            self.move_in(&tag, "misura_probes", &rows)?;
        }
        let rows: Vec<Value> = todo.iter().map(|p| run_row(p)).collect();
        self.move_in(&tag, "misura_runs", &rows)?;
        let ids: Vec<&str> = todo.iter().map(|p| p.run_id.as_str()).collect();
        let there = self.present("misura_runs", &ids)?;
        match ids.iter().find(|i| !there.contains(**i)) {
            None => Ok(()),
            Some(missing) => Err(format!(
                "run {missing} is not in {}.misura_runs after its move (did ClickHouse restart and lose the staging table's rows?): the batch goes again",
                self.db
            )),
        }
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
