//! The agent's outbox: every result `misura agent` produces is kept in the
//! store (the `runs` table, as any run) and, in the same transaction, queued
//! in `outbox` with the run's id (`run_id`, unique per result). Each sink
//! (ClickHouse, remote-write, HTTP) has a row in `sinks` with the outbox
//! position it has acknowledged, so a restarted agent resends from there:
//! at-least-once delivery, made exactly-once on the sink side by `run_id`.
//!
//! Waiting is bounded per sink by count and age: past either, the oldest
//! waiting results are skipped for that sink (still in `runs`) and counted
//! in `dropped`. Once every sink has a result, its per-probe log is freed;
//! its outbox row stays, tying the stored run to its run id.

use crate::{RunFacts, Store, StoreError};
use rusqlite::{params, OptionalExtension};

/// Tables added in store version 2.
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS outbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run INTEGER NOT NULL,
    run_id TEXT NOT NULL UNIQUE,
    agent TEXT NOT NULL,
    target TEXT NOT NULL,
    kind TEXT NOT NULL,
    created_ns INTEGER NOT NULL,
    probes TEXT
);
CREATE TABLE IF NOT EXISTS sinks (
    name TEXT PRIMARY KEY,
    acked INTEGER NOT NULL DEFAULT 0,
    sent INTEGER NOT NULL DEFAULT 0,
    dropped INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    last_error_ns INTEGER,
    last_ok_ns INTEGER
);";

/// A result as the agent queues it.
#[derive(Clone, Debug)]
pub struct NewResult<'a> {
    pub run_id: &'a str,
    pub agent: &'a str,
    pub target: &'a str,
    /// "rtt", "oneway", "tcp", …
    pub kind: &'a str,
    /// When the agent kept it (CLOCK_REALTIME, ns).
    pub created_ns: i64,
    /// The per-probe CSV log, when the agent collected one.
    pub probes: Option<&'a str>,
}

/// A result waiting for a sink.
#[derive(Clone, Debug, PartialEq)]
pub struct Pending {
    /// Its outbox position.
    pub pos: i64,
    pub run_id: String,
    pub agent: String,
    pub target: String,
    pub kind: String,
    pub created_ns: i64,
    /// The full JSON result.
    pub result: String,
    pub probes: Option<String>,
}

/// What `misura archive status` shows for one sink.
#[derive(Clone, Debug, PartialEq)]
pub struct SinkStatus {
    pub name: String,
    pub waiting: i64,
    pub oldest_waiting_ns: Option<i64>,
    pub sent: i64,
    pub dropped: i64,
    pub last_error: Option<String>,
    pub last_error_ns: Option<i64>,
    pub last_ok_ns: Option<i64>,
}

impl Store {
    /// Keep a result and queue it for the sinks, in one transaction: it is
    /// in both or in neither. Returns its outbox position.
    pub fn keep_for_sinks(
        &mut self,
        facts: &RunFacts,
        result: &serde_json::Value,
        r: &NewResult,
    ) -> Result<i64, StoreError> {
        let tx = self.conn.transaction()?;
        let run = crate::insert_run(&tx, facts, result)?;
        tx.execute(
            "INSERT INTO outbox (run, run_id, agent, target, kind, created_ns, probes)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                run,
                r.run_id,
                r.agent,
                r.target,
                r.kind,
                r.created_ns,
                r.probes
            ],
        )?;
        let pos = tx.last_insert_rowid();
        tx.commit().map_err(|e| self.damaged(e.into()))?;
        Ok(pos)
    }

    /// Make the configured sinks known (a new one starts with what is in
    /// the outbox); sinks no longer configured are forgotten, so they stop
    /// holding results in the outbox.
    pub fn register_sinks(&mut self, names: &[String]) -> Result<(), StoreError> {
        let tx = self.conn.transaction()?;
        for n in names {
            tx.execute("INSERT OR IGNORE INTO sinks (name) VALUES (?1)", params![n])?;
        }
        let known: Vec<String> = {
            let mut st = tx.prepare("SELECT name FROM sinks")?;
            let rows = st.query_map([], |r| r.get(0))?;
            rows.collect::<Result<_, _>>()?
        };
        for k in known.iter().filter(|k| !names.contains(k)) {
            tx.execute("DELETE FROM sinks WHERE name = ?1", params![k])?;
        }
        tx.commit()?;
        Ok(())
    }

    fn acked(&self, sink: &str) -> Result<i64, StoreError> {
        Ok(self
            .conn
            .query_row(
                "SELECT acked FROM sinks WHERE name = ?1",
                params![sink],
                |r| r.get(0),
            )
            .optional()?
            .unwrap_or(0))
    }

    /// Up to `limit` results `sink` has not acknowledged, oldest first.
    pub fn pending(&self, sink: &str, limit: u32) -> Result<Vec<Pending>, StoreError> {
        let after = self.acked(sink)?;
        let mut st = self.conn.prepare(
            "SELECT o.id, o.run_id, o.agent, o.target, o.kind, o.created_ns, r.result, o.probes
             FROM outbox o JOIN runs r ON r.id = o.run
             WHERE o.id > ?1 ORDER BY o.id LIMIT ?2",
        )?;
        let rows = st.query_map(params![after, limit], |r| {
            Ok(Pending {
                pos: r.get(0)?,
                run_id: r.get(1)?,
                agent: r.get(2)?,
                target: r.get(3)?,
                kind: r.get(4)?,
                created_ns: r.get(5)?,
                result: r.get(6)?,
                probes: r.get(7)?,
            })
        })?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    /// `sink` has stored everything up to position `upto` (`n` results).
    pub fn ack(&self, sink: &str, upto: i64, n: i64, now_ns: i64) -> Result<(), StoreError> {
        self.conn.execute(
            "UPDATE sinks SET acked = max(acked, ?2), sent = sent + ?3, last_ok_ns = ?4, last_error = NULL
             WHERE name = ?1",
            params![sink, upto, n, now_ns],
        )?;
        Ok(())
    }

    /// Remember why `sink` refused or could not be reached.
    pub fn sink_error(&self, sink: &str, error: &str, now_ns: i64) -> Result<(), StoreError> {
        self.conn.execute(
            "UPDATE sinks SET last_error = ?2, last_error_ns = ?3 WHERE name = ?1",
            params![sink, error, now_ns],
        )?;
        Ok(())
    }

    /// Keep `sink`'s waiting results within `max_waiting` and no older than
    /// `oldest_ns`: the oldest beyond either are skipped for this sink and
    /// counted. Returns how many were dropped now.
    pub fn enforce_bounds(
        &mut self,
        sink: &str,
        max_waiting: i64,
        oldest_ns: i64,
    ) -> Result<i64, StoreError> {
        // Immediate: the keeper and the sink's thread both enforce bounds,
        // each on its own connection; a deferred transaction that read and
        // then writes would fail against the other's commit.
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let acked: i64 = tx
            .query_row(
                "SELECT acked FROM sinks WHERE name = ?1",
                params![sink],
                |r| r.get(0),
            )
            .optional()?
            .unwrap_or(0);
        // By age: everything created before `oldest_ns`.
        let by_age: Option<i64> = tx.query_row(
            "SELECT max(id) FROM outbox WHERE id > ?1 AND created_ns < ?2",
            params![acked, oldest_ns],
            |r| r.get(0),
        )?;
        let mut to = acked.max(by_age.unwrap_or(0));
        // By count: keep the newest `max_waiting`.
        let by_count: Option<i64> = tx
            .query_row(
                "SELECT id FROM outbox WHERE id > ?1 ORDER BY id DESC LIMIT 1 OFFSET ?2",
                params![to, max_waiting],
                |r| r.get(0),
            )
            .optional()?;
        to = to.max(by_count.unwrap_or(0));
        let dropped = if to > acked {
            let n: i64 = tx.query_row(
                "SELECT count(*) FROM outbox WHERE id > ?1 AND id <= ?2",
                params![acked, to],
                |r| r.get(0),
            )?;
            tx.execute(
                "UPDATE sinks SET acked = ?2, dropped = dropped + ?3 WHERE name = ?1",
                params![sink, to, n],
            )?;
            n
        } else {
            0
        };
        tx.commit()?;
        Ok(dropped)
    }

    /// Free the per-probe logs every sink has acknowledged (the row stays:
    /// it ties the stored run to its run id). Returns how many were freed.
    pub fn prune_outbox(&self) -> Result<usize, StoreError> {
        let low: Option<i64> = self
            .conn
            .query_row("SELECT min(acked) FROM sinks", [], |r| r.get(0))?;
        match low {
            Some(low) => Ok(self.conn.execute(
                "UPDATE outbox SET probes = NULL WHERE id <= ?1 AND probes IS NOT NULL",
                params![low],
            )?),
            None => Ok(0),
        }
    }

    /// Every known sink's queue, by name.
    pub fn sink_status(&self) -> Result<Vec<SinkStatus>, StoreError> {
        let has: i64 = self.conn.query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'sinks'",
            [],
            |r| r.get(0),
        )?;
        if has == 0 {
            return Ok(Vec::new());
        }
        let mut st = self.conn.prepare(
            "SELECT s.name,
                    (SELECT count(*) FROM outbox o WHERE o.id > s.acked),
                    (SELECT min(o.created_ns) FROM outbox o WHERE o.id > s.acked),
                    s.sent, s.dropped, s.last_error, s.last_error_ns, s.last_ok_ns
             FROM sinks s ORDER BY s.name",
        )?;
        let rows = st.query_map([], |r| {
            Ok(SinkStatus {
                name: r.get(0)?,
                waiting: r.get(1)?,
                oldest_waiting_ns: r.get(2)?,
                sent: r.get(3)?,
                dropped: r.get(4)?,
                last_error: r.get(5)?,
                last_error_ns: r.get(6)?,
                last_ok_ns: r.get(7)?,
            })
        })?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    /// How many results the outbox holds (acknowledged by some sinks or none).
    pub fn outbox_len(&self) -> Result<i64, StoreError> {
        Ok(self
            .conn
            .query_row("SELECT count(*) FROM outbox", [], |r| r.get(0))?)
    }

    /// Every run id the agent queued, oldest first: what a sink should hold.
    pub fn queued_run_ids(&self) -> Result<Vec<String>, StoreError> {
        let mut st = self.conn.prepare("SELECT run_id FROM outbox ORDER BY id")?;
        let rows = st.query_map([], |r| r.get(0))?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(name: &str) -> Store {
        let d =
            std::env::temp_dir().join(format!("misura-outbox-test-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Store::open(&d.join("results.sqlite")).unwrap()
    }

    fn keep(s: &mut Store, i: i64) -> i64 {
        let id = format!("run-{i}");
        s.keep_for_sinks(
            &RunFacts {
                subcommand: "rtt".into(),
                ..Default::default()
            },
            &serde_json::json!({"format": "misura.rtt", "i": i}),
            &NewResult {
                run_id: &id,
                agent: "a1",
                target: "t",
                kind: "rtt",
                created_ns: i * 1000,
                probes: Some("seq\n1\n"),
            },
        )
        .unwrap()
    }

    #[test]
    fn positions_are_kept_per_sink() {
        let mut s = store("positions");
        s.register_sinks(&["ch".into(), "rw".into()]).unwrap();
        for i in 1..=5 {
            keep(&mut s, i);
        }
        let p = s.pending("ch", 3).unwrap();
        assert_eq!(
            p.iter().map(|p| p.run_id.as_str()).collect::<Vec<_>>(),
            ["run-1", "run-2", "run-3"]
        );
        assert!(p[0].result.contains("\"i\":1"));
        s.ack("ch", p[2].pos, 3, 1).unwrap();
        assert_eq!(s.pending("ch", 10).unwrap().len(), 2);
        assert_eq!(s.pending("rw", 10).unwrap().len(), 5);
        // Nothing is pruned until both have it.
        assert_eq!(s.prune_outbox().unwrap(), 0);
        s.ack("rw", p[1].pos, 2, 1).unwrap();
        assert_eq!(s.prune_outbox().unwrap(), 2);
        assert_eq!(s.queued_run_ids().unwrap().len(), 5);
        let st = s.sink_status().unwrap();
        assert_eq!(st[0].name, "ch");
        assert_eq!((st[0].waiting, st[0].sent), (2, 3));
        assert_eq!(st[0].oldest_waiting_ns, Some(4000));
        assert_eq!((st[1].waiting, st[1].sent), (3, 2));
        // A sink removed from the configuration no longer holds the outbox.
        s.register_sinks(&["ch".into()]).unwrap();
        assert_eq!(s.sink_status().unwrap().len(), 1);
    }

    #[test]
    fn bounds_drop_the_oldest_and_count_them() {
        let mut s = store("bounds");
        s.register_sinks(&["ch".into()]).unwrap();
        for i in 1..=10 {
            keep(&mut s, i);
        }
        s.sink_error("ch", "connection refused", 5).unwrap();
        // Age: results created before 3000 ns go.
        assert_eq!(s.enforce_bounds("ch", 100, 3000).unwrap(), 2);
        // Count: keep the newest 5.
        assert_eq!(s.enforce_bounds("ch", 5, 0).unwrap(), 3);
        assert_eq!(s.enforce_bounds("ch", 5, 0).unwrap(), 0);
        let p = s.pending("ch", 100).unwrap();
        assert_eq!(p.first().unwrap().run_id, "run-6");
        let st = &s.sink_status().unwrap()[0];
        assert_eq!((st.waiting, st.dropped, st.sent), (5, 5, 0));
        assert_eq!(st.last_error.as_deref(), Some("connection refused"));
    }
}
