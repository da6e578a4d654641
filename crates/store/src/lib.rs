//! The results store: every run kept in an embedded SQLite database, the full
//! JSON result beside indexed columns for the figures people search by (time,
//! subcommand, target or interfaces, sizes, timestamp source, host).
//!
//! Safe to share: WAL journaling and a busy timeout let several misura
//! processes write at once; a database that is not misura's, or comes from a
//! newer misura, is refused with a message and never written to.
#![forbid(unsafe_code)]

use rusqlite::{params, Connection, OpenFlags, OptionalExtension};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Identifies a misura store (SQLite `application_id`, "MSRA").
pub const APPLICATION_ID: i32 = 0x4D53_5241;
/// Schema version this build writes (SQLite `user_version`).
pub const SCHEMA_VERSION: i32 = 2;

mod facts;
mod headline;
pub mod history;
pub mod outbox;

pub use facts::{facts, StoreConfig};

use headline::headline;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path}: not a misura results store (another program's SQLite database); choose another file, or keep no store")]
    Foreign { path: PathBuf },
    #[error("{path}: written by a newer misura (store version {found}, this one reads up to {SCHEMA_VERSION}); upgrade misura or use another store")]
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
    #[error("the stored result of run {id} is {bytes} bytes, over the {limit}-byte bound on what is read of one run (a run this large was not written by misura, or its histograms hold far more buckets than any run needs); read it with `sqlite3` if you must")]
    RowTooLarge { id: i64, bytes: u64, limit: u64 },
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
/// The most bytes of one stored result that `history`, `show`, `compare`
/// and `report` read (issue 33, item 13: a 490 MB row took 5.0 GB to
/// report, and `history` over large rows 2.6 GB; a row parses into about
/// 30 times its size, so 8 MiB is at most some 250 MB, one row at a time).
/// misura's own results are far smaller: a histogram's buckets are bounded
/// by its precision.
pub const MAX_ROW_BYTES: u64 = 8 * 1024 * 1024;

pub fn default_path(data_dir: Option<PathBuf>) -> PathBuf {
    data_dir
        .unwrap_or_else(|| PathBuf::from("."))
        .join("misura")
        .join("results.sqlite")
}

/// The database's `application_id` and `user_version`; reading them fails
/// on a file that is not SQLite at all.
fn header(conn: &Connection) -> rusqlite::Result<(i32, i32)> {
    let app = conn.query_row("PRAGMA application_id", [], |r| r.get(0))?;
    let ver = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    Ok((app, ver))
}

/// How many tables the database has (none: new, or being created).
fn table_count(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
        [],
        |r| r.get(0),
    )
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
        let (app, ver) = header(&conn).map_err(open_err)?;
        if existed {
            let tables = table_count(&conn).map_err(open_err)?;
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
        let (app, ver) = header(&conn).map_err(open_err)?;
        if app != APPLICATION_ID {
            // A store another misura is creating has no tables yet, and its
            // application id is set in the same transaction as its tables.
            let tables = table_count(&conn).map_err(open_err)?;
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
            "SELECT id, started_at, subcommand, target, sizes, timestamp_source, host, complete, \
             CASE WHEN length(CAST(result AS BLOB)) <= CAST(?1 AS INTEGER) THEN result END, length(CAST(result AS BLOB)) \
             FROM runs WHERE 1=1",
        );
        let mut args: Vec<String> = vec![MAX_ROW_BYTES.to_string()];
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
            // A row over the bound is not read: its size is the headline.
            let result: Option<String> = r.get(8)?;
            let bytes: i64 = r.get(9)?;
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
                headline: match result {
                    Some(r) => headline(&r),
                    None => Some(format!(
                        "({bytes}-byte result, over the {MAX_ROW_BYTES}-byte bound: not read)"
                    )),
                },
            })
        })?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    /// The full JSON result of run `id`.
    pub fn get(&self, id: i64) -> Result<(RunFacts, serde_json::Value), StoreError> {
        let row = self
            .conn
            .query_row(
                "SELECT started_at, subcommand, target, sizes, timestamp_source, host, complete, \
                 CASE WHEN length(CAST(result AS BLOB)) <= ?2 THEN result END, length(CAST(result AS BLOB)) \
                 FROM runs WHERE id = ?1",
                params![id, MAX_ROW_BYTES as i64],
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
                        r.get::<_, Option<String>>(7)?,
                        r.get::<_, i64>(8)?,
                    ))
                },
            )
            .optional()?;
        let (facts, text, bytes) = row.ok_or(StoreError::NoSuchRun(id))?;
        let text = text.ok_or(StoreError::RowTooLarge {
            id,
            bytes: bytes.max(0) as u64,
            limit: MAX_ROW_BYTES,
        })?;
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

#[cfg(test)]
mod tests;
