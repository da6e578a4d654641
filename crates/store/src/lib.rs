//! The results store: every run kept in an embedded SQLite database, the full
//! JSON result beside indexed columns for the figures people search by (time,
//! subcommand, target or interfaces, sizes, timestamp source, host).
//!
//! Safe to share: WAL journaling and a busy timeout let several misura
//! processes write at once; a database that is not misura's, or comes from a
//! newer misura, is refused with a message and never written to.
//!
//! Long: the schema, its migrations and the queries, with their tests on a
//! scratch database.
#![forbid(unsafe_code)]

use rusqlite::{params, Connection, OpenFlags, OptionalExtension};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Identifies a misura store (SQLite `application_id`, "MSRA").
pub const APPLICATION_ID: i32 = 0x4D53_5241;
/// Schema version this build writes (SQLite `user_version`).
pub const SCHEMA_VERSION: i32 = 2;

pub mod outbox;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path}: not a misura results store (another program's SQLite database); choose another file with --store, or --no-store")]
    Foreign { path: PathBuf },
    #[error("{path}: written by a newer misura (store version {found}, this one reads up to {SCHEMA_VERSION}); upgrade misura or use another --store")]
    Newer { path: PathBuf, found: i32 },
    #[error("{path}: cannot be opened as a results store ({source}); if the file is damaged, move it aside — nothing was written to it")]
    Open {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    #[error("{path}: the store is damaged ({what}); the run was not kept in it: recover it with `sqlite3 {path} .recover`, or move it aside and a new store is made")]
    Damaged { path: PathBuf, what: String },
    #[error("{path}: cannot create its directory: {source}")]
    Dir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: an empty store (being created just now, or nothing kept in it yet); try again in a moment")]
    Empty { path: PathBuf },
    #[error("run {0} is not in the store (see `misura history`)")]
    NoSuchRun(i64),
    #[error("the stored result of run {id} is not valid JSON: {source}")]
    BadJson {
        id: i64,
        #[source]
        source: serde_json::Error,
    },
    #[error("results store: {0}")]
    Sql(#[from] rusqlite::Error),
}

/// The searchable facts of a run, taken from its JSON result.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunFacts {
    pub started_at: String,
    /// "oneway", "rtt", "clock-timer", …
    pub subcommand: String,
    /// Host, address or interface pair the run measured.
    pub target: String,
    pub sizes: String,
    pub timestamp_source: String,
    pub host: String,
    pub complete: bool,
}

/// One row of `misura history`.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSummary {
    pub id: i64,
    pub facts: RunFacts,
    /// The run's headline figure, as text, if the result names one.
    pub headline: Option<String>,
}

/// Filters for listing runs (all optional, combined with AND).
#[derive(Clone, Debug, Default)]
pub struct Filter {
    pub subcommand: Option<String>,
    /// Substring of the target.
    pub target: Option<String>,
    /// RFC 3339 prefixes compare as text: "2026-11" matches November 2026.
    pub since: Option<String>,
    pub until: Option<String>,
    pub limit: Option<u32>,
}

pub struct Store {
    pub(crate) conn: Connection,
    path: PathBuf,
}

/// Default location: `$XDG_DATA_HOME/misura/results.sqlite`.
pub fn default_path(data_dir: Option<PathBuf>) -> PathBuf {
    data_dir
        .unwrap_or_else(|| PathBuf::from("."))
        .join("misura")
        .join("results.sqlite")
}

impl Store {
    /// Open (creating if needed) the store at `path`.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::Dir {
                path: path.into(),
                source,
            })?;
        }
        let existed = path.exists()
            && std::fs::metadata(path)
                .map(|m| m.len() > 0)
                .unwrap_or(false);
        let open_err = |source| StoreError::Open {
            path: path.into(),
            source,
        };
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE,
        )
        .map_err(open_err)?;
        conn.busy_timeout(Duration::from_secs(10))
            .map_err(open_err)?;
        // Reading the header fails on a file that is not SQLite at all.
        let app: i32 = conn
            .query_row("PRAGMA application_id", [], |r| r.get(0))
            .map_err(open_err)?;
        let ver: i32 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(open_err)?;
        if existed {
            let tables: i64 = conn
                .query_row(
                    "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
                    [],
                    |r| r.get(0),
                )
                .map_err(open_err)?;
            if app != APPLICATION_ID && (app != 0 || tables > 0) {
                return Err(StoreError::Foreign { path: path.into() });
            }
            if ver > SCHEMA_VERSION {
                return Err(StoreError::Newer {
                    path: path.into(),
                    found: ver,
                });
            }
        }
        let store = Store {
            conn,
            path: path.into(),
        };
        // A store already in its current form is not written at open: a
        // damaged one keeps every byte until a run is actually saved.
        let journal: String = store
            .conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .map_err(open_err)?;
        let current = existed
            && app == APPLICATION_ID
            && ver == SCHEMA_VERSION
            && journal.eq_ignore_ascii_case("wal");
        if !current {
            store.migrate().map_err(|e| store.damaged(e))?;
        }
        Ok(store)
    }

    /// Open an existing store only to read it (`history`, `show`,
    /// `compare`, `report RUN`): works on a store this user cannot write,
    /// and writes nothing to it (its mtime stays).
    pub fn open_read_only(path: &Path) -> Result<Store, StoreError> {
        let open_err = |source| StoreError::Open {
            path: path.into(),
            source,
        };
        let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
            .map_err(open_err)?;
        conn.busy_timeout(Duration::from_secs(10))
            .map_err(open_err)?;
        let app: i32 = conn
            .query_row("PRAGMA application_id", [], |r| r.get(0))
            .map_err(open_err)?;
        let ver: i32 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(open_err)?;
        if app != APPLICATION_ID {
            // A store another misura is creating has no tables yet, and its
            // application id is set in the same transaction as its tables.
            let tables: i64 = conn
                .query_row(
                    "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
                    [],
                    |r| r.get(0),
                )
                .map_err(open_err)?;
            if app == 0 && tables == 0 {
                return Err(StoreError::Empty { path: path.into() });
            }
            return Err(StoreError::Foreign { path: path.into() });
        }
        if ver > SCHEMA_VERSION {
            return Err(StoreError::Newer {
                path: path.into(),
                found: ver,
            });
        }
        Ok(Store {
            conn,
            path: path.into(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// SQLite's "malformed" and "not a database" become a message saying
    /// the store is damaged and what to do.
    fn damaged(&self, e: StoreError) -> StoreError {
        if let StoreError::Sql(rusqlite::Error::SqliteFailure(f, _)) = &e {
            if matches!(
                f.code,
                rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase
            ) {
                return StoreError::Damaged {
                    path: self.path.clone(),
                    what: e.to_string(),
                };
            }
        }
        e
    }

    fn migrate(&self) -> Result<(), StoreError> {
        // WAL lets readers and one writer at a time proceed; the busy timeout
        // makes concurrent writers wait their turn instead of failing.
        let _: String = self
            .conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
        self.conn.execute_batch(&format!(
            "BEGIN IMMEDIATE;
             CREATE TABLE IF NOT EXISTS runs (
                 id INTEGER PRIMARY KEY AUTOINCREMENT,
                 started_at TEXT NOT NULL,
                 subcommand TEXT NOT NULL,
                 target TEXT NOT NULL,
                 sizes TEXT NOT NULL,
                 timestamp_source TEXT NOT NULL,
                 host TEXT NOT NULL,
                 complete INTEGER NOT NULL,
                 format TEXT NOT NULL,
                 format_version INTEGER NOT NULL,
                 result TEXT NOT NULL
             );
             CREATE INDEX IF NOT EXISTS runs_time ON runs (started_at);
             CREATE INDEX IF NOT EXISTS runs_sub ON runs (subcommand, started_at);
             CREATE INDEX IF NOT EXISTS runs_target ON runs (target);
             {outbox}
             PRAGMA application_id = {APPLICATION_ID};
             PRAGMA user_version = {SCHEMA_VERSION};
             COMMIT;",
            outbox = outbox::SCHEMA
        ))?;
        Ok(())
    }

    /// Keep a run. Returns its id.
    pub fn save(&self, facts: &RunFacts, result: &serde_json::Value) -> Result<i64, StoreError> {
        insert_run(&self.conn, facts, result).map_err(|e| self.damaged(e))
    }

    /// Runs matching `f`, newest first.
    pub fn list(&self, f: &Filter) -> Result<Vec<RunSummary>, StoreError> {
        let mut sql = String::from(
            "SELECT id, started_at, subcommand, target, sizes, timestamp_source, host, complete, result FROM runs WHERE 1=1",
        );
        let mut args: Vec<String> = Vec::new();
        if let Some(s) = &f.subcommand {
            args.push(s.clone());
            sql += &format!(" AND subcommand = ?{}", args.len());
        }
        if let Some(t) = &f.target {
            args.push(format!("%{t}%"));
            sql += &format!(" AND target LIKE ?{}", args.len());
        }
        if let Some(s) = &f.since {
            args.push(s.clone());
            sql += &format!(" AND started_at >= ?{}", args.len());
        }
        if let Some(u) = &f.until {
            args.push(format!("{u}\u{10FFFF}"));
            sql += &format!(" AND started_at <= ?{}", args.len());
        }
        sql += " ORDER BY started_at DESC, id DESC";
        if let Some(l) = f.limit {
            sql += &format!(" LIMIT {l}");
        }
        let mut stmt = self.conn.prepare(&sql)?;
        let rows = stmt.query_map(rusqlite::params_from_iter(args.iter()), |r| {
            let result: String = r.get(8)?;
            Ok(RunSummary {
                id: r.get(0)?,
                facts: RunFacts {
                    started_at: r.get(1)?,
                    subcommand: r.get(2)?,
                    target: r.get(3)?,
                    sizes: r.get(4)?,
                    timestamp_source: r.get(5)?,
                    host: r.get(6)?,
                    complete: r.get(7)?,
                },
                headline: headline(&result),
            })
        })?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    /// The full JSON result of run `id`.
    pub fn get(&self, id: i64) -> Result<(RunFacts, serde_json::Value), StoreError> {
        let row = self
            .conn
            .query_row(
                "SELECT started_at, subcommand, target, sizes, timestamp_source, host, complete, result FROM runs WHERE id = ?1",
                params![id],
                |r| {
                    Ok((
                        RunFacts {
                            started_at: r.get(0)?,
                            subcommand: r.get(1)?,
                            target: r.get(2)?,
                            sizes: r.get(3)?,
                            timestamp_source: r.get(4)?,
                            host: r.get(5)?,
                            complete: r.get(6)?,
                        },
                        r.get::<_, String>(7)?,
                    ))
                },
            )
            .optional()?;
        let (facts, text) = row.ok_or(StoreError::NoSuchRun(id))?;
        let v = serde_json::from_str(&text).map_err(|source| StoreError::BadJson { id, source })?;
        Ok((facts, v))
    }

    pub fn count(&self) -> Result<i64, StoreError> {
        Ok(self
            .conn
            .query_row("SELECT count(*) FROM runs", [], |r| r.get(0))?)
    }
}

/// Insert a run's row (on the connection or inside a transaction).
pub(crate) fn insert_run(
    conn: &Connection,
    facts: &RunFacts,
    result: &serde_json::Value,
) -> Result<i64, StoreError> {
    let format = result.get("format").and_then(|f| f.as_str()).unwrap_or("");
    let version = result
        .get("format_version")
        .and_then(|f| f.as_i64())
        .unwrap_or(0);
    conn.execute(
        "INSERT INTO runs (started_at, subcommand, target, sizes, timestamp_source, host, complete, format, format_version, result)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        params![
            facts.started_at,
            facts.subcommand,
            facts.target,
            facts.sizes,
            facts.timestamp_source,
            facts.host,
            facts.complete,
            format,
            version,
            result.to_string()
        ],
    )?;
    Ok(conn.last_insert_rowid())
}

/// The headline figure a result names at its top level, as text.
fn headline(result: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(result).ok()?;
    for (key, unit) in [
        ("throughput_bps", "bit/s"),
        ("transactions_per_s", "transactions/s"),
    ] {
        if let Some(x) = v.get(key).and_then(|x| x.as_f64()) {
            return Some(if unit == "bit/s" {
                human_bps(x)
            } else {
                format!("{x:.0} {unit}")
            });
        }
    }
    if let Some(h) = service_headline(&v) {
        return Some(h);
    }
    // rfc2544: the first size's NDR, unless it is the tester's limit;
    // y1564: the verdict.
    if let Some(ndr) = v
        .pointer("/sizes/0/throughput/ndr/lower_fps")
        .and_then(|x| x.as_f64())
    {
        let label = v
            .pointer("/sizes/0/label")
            .and_then(|x| x.as_str())
            .unwrap_or("?");
        let t = |p: &str| v.pointer(&format!("/sizes/0/throughput/{p}"));
        // Older results say it only by the search's stop and no failed
        // trial above the NDR (its upper bound is then the line rate).
        let upper = t("ndr/upper_fps").and_then(|x| x.as_f64());
        let line = v.pointer("/sizes/0/line_rate_fps").and_then(|x| x.as_f64());
        let old_limited = t("stopped_by").and_then(|x| x.as_str()) == Some("tester_limit")
            && matches!((upper, line), (Some(u), Some(l)) if u >= l * (1.0 - 1e-9));
        let limited = t("ndr/tester_limited").and_then(|x| x.as_bool()) == Some(true);
        if limited || old_limited {
            return Some(format!("INCONCLUSIVE (tester limit) at {label} B"));
        }
        let more = v
            .get("inconclusive")
            .and_then(|x| x.as_array())
            .is_some_and(|a| !a.is_empty());
        return Some(format!(
            "NDR {ndr:.0} frames/s at {label} B{}",
            if more { ", partly INCONCLUSIVE" } else { "" }
        ));
    }
    if v.get("format").and_then(|f| f.as_str()) == Some("misura.y1564") {
        let pass = v.get("pass").and_then(|p| p.as_bool()).unwrap_or(false);
        let inconclusive = v.get("inconclusive").and_then(|p| p.as_bool()) == Some(true);
        return Some(
            match (pass, inconclusive) {
                (true, _) => "Y.1564 PASS",
                (false, true) => "Y.1564 INCONCLUSIVE (tester limit)",
                (false, false) => "Y.1564 FAIL",
            }
            .into(),
        );
    }
    let med = |p: &[&str]| {
        let mut cur = &v;
        for k in p {
            cur = match k.parse::<usize>() {
                Ok(i) => cur.get(i)?,
                Err(_) => cur.get(k)?,
            };
        }
        cur.as_i64()
    };
    for (path, what) in [
        (
            &["overall", "network_rtt", "median_ns"][..],
            "network RTT median",
        ),
        (&["overall", "mul", "median_ns"][..], "Mul median"),
        (&["latency", "median_ns"][..], "wake-up latency median"),
        (&["runs", "0", "steps", "median_ns"][..], "read step median"),
    ] {
        if let Some(ns) = med(path) {
            return Some(format!("{what} {}", human_ns(ns as f64)));
        }
    }
    None
}

/// Nanoseconds in the unit that suits them: 37 ns, 4.00 µs, 212.50 ms.
fn human_ns(ns: f64) -> String {
    match ns.abs() {
        a if a < 1e3 => format!("{ns:.0} ns"),
        a if a < 1e6 => format!("{:.2} µs", ns / 1e3),
        a if a < 1e9 => format!("{:.2} ms", ns / 1e6),
        _ => format!("{:.2} s", ns / 1e9),
    }
}

/// Bits per second as people read them: 19.13 Mbit/s.
fn human_bps(b: f64) -> String {
    match b {
        b if b >= 1e9 => format!("{:.2} Gbit/s", b / 1e9),
        b if b >= 1e6 => format!("{:.2} Mbit/s", b / 1e6),
        b if b >= 1e3 => format!("{:.2} kbit/s", b / 1e3),
        b => format!("{b:.0} bit/s"),
    }
}

/// The headline of a load, setup, serve or reflect result.
fn service_headline(v: &serde_json::Value) -> Option<String> {
    let f = |p: &str| v.pointer(p).and_then(|x| x.as_f64());
    match v.get("format").and_then(|f| f.as_str()) {
        Some("misura.load") => {
            let loaded = v
                .get("phases")?
                .as_array()?
                .iter()
                .find(|p| p.get("name").and_then(|n| n.as_str()) == Some("loaded"))?;
            let (what, p) = match loaded.get("network_rtt").filter(|x| !x.is_null()) {
                Some(p) => ("network", p),
                None => ("user", loaded.get("user_rtt")?),
            };
            let med = p.get("median_ns").and_then(|x| x.as_f64())?;
            let inflation = f(&format!("/inflation/{what}_rtt_ns"))
                .map_or(String::new(), |i| format!(" (+{} over idle)", human_ns(i)));
            let rpm = f(&format!("/responsiveness/rpm_{what}"))
                .map_or(String::new(), |r| format!(", {r:.0} RPM"));
            Some(format!(
                "loaded {what} RTT median {}{inflation}{rpm}",
                human_ns(med)
            ))
        }
        Some("misura.serve") => {
            let tests = v
                .get("tests")
                .and_then(|t| t.as_array())
                .map_or(0, |t| t.len());
            let bps = f("/aggregate_throughput_bps").unwrap_or(0.0);
            Some(format!("{tests} test(s) served, {} in all", human_bps(bps)))
        }
        Some("misura.reflect") => {
            let replied = f("/counters/replied")?;
            let s = f("/duration_s").unwrap_or(0.0);
            Some(format!("{replied:.0} replies in {s:.0} s"))
        }
        _ => {
            // `setup`: the first gap's mean set-up delay.
            let mean = f("/gaps/0/setup_mean_ns")?;
            Some(format!("set-up delay mean {}", human_ns(mean)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tester_limited_result_is_never_headlined_as_the_suts() {
        let rfc = |ndr: &str, stopped: &str, extra: &str| {
            format!(
                r#"{{"format":"misura.rfc2544","sizes":[{{"label":"512","line_rate_fps":23496.0,"throughput":{{"stopped_by":"{stopped}","ndr":{{"lower_fps":662.0,"upper_fps":23496.0{ndr}}}}}}}]{extra}}}"#
            )
        };
        // Older result: stopped by the tester with no failed trial above.
        assert_eq!(
            headline(&rfc("", "tester_limit", "")).as_deref(),
            Some("INCONCLUSIVE (tester limit) at 512 B")
        );
        assert_eq!(
            headline(&rfc(r#","tester_limited":true"#, "resolution", "")).as_deref(),
            Some("INCONCLUSIVE (tester limit) at 512 B")
        );
        assert_eq!(
            headline(&rfc(r#","tester_limited":false"#, "resolution", "")).as_deref(),
            Some("NDR 662 frames/s at 512 B")
        );
        assert_eq!(
            headline(&rfc("", "resolution", r#","inconclusive":["loss"]"#)).as_deref(),
            Some("NDR 662 frames/s at 512 B, partly INCONCLUSIVE")
        );
        let y = |pass: bool, inc: bool| {
            headline(&format!(
                r#"{{"format":"misura.y1564","pass":{pass},"inconclusive":{inc}}}"#
            ))
        };
        assert_eq!(
            y(false, true).as_deref(),
            Some("Y.1564 INCONCLUSIVE (tester limit)")
        );
        assert_eq!(y(false, false).as_deref(), Some("Y.1564 FAIL"));
        assert_eq!(y(true, false).as_deref(), Some("Y.1564 PASS"));
    }

    #[test]
    fn load_setup_serve_and_reflect_have_readable_headlines() {
        let h = |j: &str| headline(j);
        assert_eq!(
            h(r#"{"throughput_bps": 19131409.0}"#).as_deref(),
            Some("19.13 Mbit/s")
        );
        let load = r#"{"format":"misura.load","phases":[{"name":"idle"},{"name":"loaded",
            "network_rtt":{"median_ns":212500000.0}}],"inflation":{"network_rtt_ns":200000000.0},
            "responsiveness":{"rpm_network":282.4}}"#;
        assert_eq!(
            h(load).as_deref(),
            Some("loaded network RTT median 212.50 ms (+200.00 ms over idle), 282 RPM")
        );
        let serve = r#"{"format":"misura.serve","tests":[{},{}],"aggregate_throughput_bps":9.4e8}"#;
        assert_eq!(
            h(serve).as_deref(),
            Some("2 test(s) served, 940.00 Mbit/s in all")
        );
        let reflect =
            r#"{"format":"misura.reflect","counters":{"replied":1000},"duration_s":10.2}"#;
        assert_eq!(h(reflect).as_deref(), Some("1000 replies in 10 s"));
        let setup = r#"{"format":"misura.setup","gaps":[{"setup_mean_ns":41000.0}]}"#;
        assert_eq!(h(setup).as_deref(), Some("set-up delay mean 41.00 µs"));
        let rtt = r#"{"overall":{"network_rtt":{"median_ns":200123456}}}"#;
        assert_eq!(h(rtt).as_deref(), Some("network RTT median 200.12 ms"));
    }

    fn tmp(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("misura-store-test-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d.join("results.sqlite")
    }

    fn facts(sub: &str, target: &str, at: &str) -> RunFacts {
        RunFacts {
            started_at: at.into(),
            subcommand: sub.into(),
            target: target.into(),
            sizes: "46".into(),
            timestamp_source: "kernel software".into(),
            host: "vm".into(),
            complete: true,
        }
    }

    #[test]
    fn save_list_get() {
        let p = tmp("basic");
        let s = Store::open(&p).unwrap();
        let r = serde_json::json!({"format": "misura.rtt", "format_version": 1, "overall": {"network_rtt": {"median_ns": 1500}}});
        let a = s
            .save(&facts("rtt", "198.18.0.2:862", "2026-11-22T01:00:00Z"), &r)
            .unwrap();
        let b = s
            .save(
                &facts("oneway", "p1->p2", "2026-11-22T02:00:00Z"),
                &serde_json::json!({"format": "misura.oneway"}),
            )
            .unwrap();
        let all = s.list(&Filter::default()).unwrap();
        assert_eq!(all.iter().map(|r| r.id).collect::<Vec<_>>(), vec![b, a]);
        assert_eq!(
            all[1].headline.as_deref(),
            Some("network RTT median 1.50 µs")
        );
        let rtt = s
            .list(&Filter {
                subcommand: Some("rtt".into()),
                ..Default::default()
            })
            .unwrap();
        assert_eq!(rtt.len(), 1);
        let by_target = s
            .list(&Filter {
                target: Some("198.18".into()),
                ..Default::default()
            })
            .unwrap();
        assert_eq!(by_target[0].id, a);
        let since = s
            .list(&Filter {
                since: Some("2026-11-22T01:30".into()),
                ..Default::default()
            })
            .unwrap();
        assert_eq!(since.len(), 1);
        let until = s
            .list(&Filter {
                until: Some("2026-11-22T01".into()),
                ..Default::default()
            })
            .unwrap();
        assert_eq!(until.len(), 1);
        assert_eq!(s.get(a).unwrap().1, r);
        assert!(matches!(s.get(999), Err(StoreError::NoSuchRun(999))));
    }

    #[test]
    fn foreign_newer_and_corrupt_files_are_refused_untouched() {
        // Another program's SQLite database.
        let p = tmp("foreign");
        {
            let c = Connection::open(&p).unwrap();
            c.execute_batch("CREATE TABLE cats (name TEXT); INSERT INTO cats VALUES ('tom');")
                .unwrap();
        }
        let before = std::fs::read(&p).unwrap();
        assert!(matches!(Store::open(&p), Err(StoreError::Foreign { .. })));
        assert_eq!(std::fs::read(&p).unwrap(), before);
        // A store from a newer misura.
        let p = tmp("newer");
        drop(Store::open(&p).unwrap());
        {
            let c = Connection::open(&p).unwrap();
            c.execute_batch("PRAGMA user_version = 99;").unwrap();
        }
        assert!(matches!(
            Store::open(&p),
            Err(StoreError::Newer { found: 99, .. })
        ));
        // Not SQLite at all.
        let p = tmp("garbage");
        std::fs::write(
            &p,
            b"this is not a database, just some text that is long enough to have a header",
        )
        .unwrap();
        let before = std::fs::read(&p).unwrap();
        let e = Store::open(&p).err().expect("refused");
        assert!(e.to_string().contains("nothing was written"), "{e}");
        assert_eq!(std::fs::read(&p).unwrap(), before);
    }

    #[test]
    fn a_store_with_damaged_pages_is_not_rewritten_by_opening_it() {
        // Issue 13, finding 12: a run against a damaged store rewrote two
        // header bytes (the change counters of a needless migration).
        let p = tmp("damaged");
        {
            let s = Store::open(&p).unwrap();
            let big = serde_json::json!({"format": "misura.rtt", "pad": "x".repeat(3000)});
            for i in 0..100 {
                s.save(
                    &facts("rtt", &format!("t{i}"), "2026-11-22T01:00:00Z"),
                    &big,
                )
                .unwrap();
            }
        }
        let mut bytes = std::fs::read(&p).unwrap();
        let mid = bytes.len() / 2;
        for b in &mut bytes[mid..mid + 20_000] {
            *b = 0xA5;
        }
        std::fs::write(&p, &bytes).unwrap();
        let s = Store::open(&p).expect("the header is intact, so it opens");
        drop(s);
        assert!(
            std::fs::read(&p).unwrap() == bytes,
            "opening changed the file"
        );
        // Saving into it fails naming the damage, or succeeds; a failure
        // leaves the main file as it was.
        let s = Store::open(&p).unwrap();
        let r = (0..50).try_for_each(|i| {
            s.save(
                &facts("rtt", &format!("u{i}"), "2026-11-23T01:00:00Z"),
                &serde_json::json!({"pad": "y".repeat(3000)}),
            )
            .map(drop)
        });
        if let Err(e) = r {
            assert!(matches!(e, StoreError::Damaged { .. }), "{e}");
            assert!(e.to_string().contains(".recover"), "{e}");
        }
    }

    #[test]
    fn a_store_being_created_is_not_called_foreign() {
        let p = tmp("empty");
        std::fs::write(&p, b"").unwrap();
        assert!(matches!(
            Store::open_read_only(&p),
            Err(StoreError::Empty { .. })
        ));
    }

    #[test]
    fn concurrent_writers_all_succeed() {
        let p = tmp("concurrent");
        drop(Store::open(&p).unwrap());
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let p = p.clone();
                std::thread::spawn(move || {
                    let s = Store::open(&p).unwrap();
                    for i in 0..50 {
                        s.save(
                            &facts(
                                "rtt",
                                &format!("t{t}"),
                                &format!("2026-11-22T00:{i:02}:00Z"),
                            ),
                            &serde_json::json!({"i": i}),
                        )
                        .unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(Store::open(&p).unwrap().count().unwrap(), 200);
    }
}
