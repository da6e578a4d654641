//! The `[[sink]]` tables of the agent's configuration: where results are
//! archived (ClickHouse, Prometheus remote-write, HTTP JSON), each checked
//! with the line of any mistake.

use super::config::origin::{ConfigError, Origin};
use misura_measure::time::Span;
use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Spanned;

/// Most results in one batch (one ClickHouse insert, one remote-write
/// request); also the default.
pub const MAX_BATCH: i64 = 10_000;
const DEFAULT_BATCH: i64 = 500;
/// Waiting results per sink when the file does not say.
const DEFAULT_MAX_WAITING: i64 = 1_000_000;
/// Longest sink `timeout`: a stopping agent waits for one request
/// (systemd's default stop timeout is 90 s).
pub const MAX_TIMEOUT_NS: i64 = 60_000_000_000;
/// Oldest waiting result when the file does not say: a week.
const DEFAULT_MAX_AGE_NS: i64 = 7 * 86_400 * 1_000_000_000;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSink {
    name: Option<Spanned<String>>,
    kind: Spanned<String>,
    url: Spanned<String>,
    batch: Option<Spanned<i64>>,
    max_waiting: Option<Spanned<i64>>,
    max_age: Option<Spanned<String>>,
    timeout: Option<Spanned<String>>,
    linger: Option<Spanned<String>>,
    headers: Option<BTreeMap<String, String>>,
    // clickhouse
    database: Option<Spanned<String>>,
    user: Option<String>,
    password: Option<String>,
    per_probe: Option<Spanned<bool>>,
}

/// What a sink is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SinkKind {
    /// ClickHouse's HTTP interface: `misura_runs` and, with `per_probe`,
    /// `misura_probes`.
    ClickHouse {
        database: String,
        user: Option<String>,
        password: Option<String>,
        per_probe: bool,
    },
    /// Prometheus remote-write v1 (protobuf + snappy).
    RemoteWrite,
    /// One POST per result, the result's JSON document as body.
    Http,
}

/// One validated sink.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sink {
    pub name: String,
    pub kind: SinkKind,
    pub url: String,
    pub batch: u32,
    pub max_waiting: i64,
    pub max_age: Span,
    pub timeout: Span,
    /// A batch smaller than `batch` waits until its oldest result is this
    /// old: fewer, larger requests (ClickHouse wants about one insert a
    /// second per table, not one per result).
    pub linger: Span,
    pub headers: Vec<(String, String)>,
}

impl Sink {
    pub fn kind_label(&self) -> &'static str {
        match self.kind {
            SinkKind::ClickHouse { .. } => "clickhouse",
            SinkKind::RemoteWrite => "remote-write",
            SinkKind::Http => "http",
        }
    }

    /// Whether this sink wants every probe's row (the agent then has each
    /// run log its probes).
    pub fn per_probe(&self) -> bool {
        matches!(
            self.kind,
            SinkKind::ClickHouse {
                per_probe: true,
                ..
            }
        )
    }
}

fn plain(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}

impl Origin<'_> {
    fn bounded(
        &self,
        what: &str,
        v: &Option<Spanned<i64>>,
        range: std::ops::RangeInclusive<i64>,
        default: i64,
    ) -> Result<i64, ConfigError> {
        match v {
            None => Ok(default),
            Some(v) if range.contains(v.get_ref()) => Ok(*v.get_ref()),
            Some(v) => Err(self.err(
                v.span(),
                format!(
                    "sink {what} = {} is impossible: use {} to {}",
                    v.get_ref(),
                    range.start(),
                    range.end()
                ),
            )),
        }
    }

    fn sink_duration(
        &self,
        what: &str,
        v: &Option<Spanned<String>>,
        default: i64,
        max: Option<(i64, &str)>,
    ) -> Result<Span, ConfigError> {
        let Some(v) = v else {
            return Ok(Span::from_ns(default));
        };
        let ns = v
            .get_ref()
            .parse::<misura_cli::units::DurationArg>()
            .map(|d| d.ns)
            .map_err(|e| self.err(v.span(), format!("sink {what}: {e}")))?;
        if ns <= 0 {
            return Err(self.err(v.span(), format!("sink {what} must be positive")));
        }
        if let Some((max, why)) = max.filter(|(m, _)| ns > *m) {
            return Err(self.err(
                v.span(),
                format!(
                    "sink {what} = \"{}\" is too long: at most {} s ({why})",
                    v.get_ref(),
                    max / 1_000_000_000
                ),
            ));
        }
        Ok(Span::from_ns(ns))
    }

    pub(super) fn sink(&self, raw: RawSink) -> Result<Sink, ConfigError> {
        let url = raw.url.get_ref().clone();
        if !(url.starts_with("http://") || url.starts_with("https://")) || url.len() > 2048 {
            return Err(self.err(
                raw.url.span(),
                format!(
                    "sink url \"{url}\": give an http:// or https:// URL (at most 2048 characters)"
                ),
            ));
        }
        let per_probe = raw.per_probe.as_ref().map(|p| *p.get_ref());
        let kind = match raw.kind.get_ref().as_str() {
            "clickhouse" => {
                let database = match &raw.database {
                    Some(d) if plain(d.get_ref()) => d.get_ref().clone(),
                    Some(d) => {
                        return Err(self.err(
                            d.span(),
                            format!("sink database `{}`: use letters, digits, - _ .", d.get_ref()),
                        ))
                    }
                    None => "default".into(),
                };
                SinkKind::ClickHouse {
                    database,
                    user: raw.user,
                    password: raw.password,
                    per_probe: per_probe.unwrap_or(false),
                }
            }
            k @ ("remote-write" | "http") => {
                if let Some(p) = &raw.per_probe {
                    return Err(self.err(
                        p.span(),
                        format!("per_probe belongs to kind \"clickhouse\", not \"{k}\""),
                    ));
                }
                if let Some(d) = &raw.database {
                    return Err(self.err(
                        d.span(),
                        format!("database belongs to kind \"clickhouse\", not \"{k}\""),
                    ));
                }
                if k == "http" {
                    SinkKind::Http
                } else {
                    SinkKind::RemoteWrite
                }
            }
            other => {
                return Err(self.err(
                    raw.kind.span(),
                    format!("unknown sink kind \"{other}\" (use \"clickhouse\", \"remote-write\" or \"http\")"),
                ))
            }
        };
        let name = match &raw.name {
            Some(n) if plain(n.get_ref()) => n.get_ref().clone(),
            Some(n) => {
                return Err(self.err(
                    n.span(),
                    format!(
                        "sink name `{}`: use 1 to 64 letters, digits, - _ .",
                        n.get_ref()
                    ),
                ))
            }
            None => raw.kind.get_ref().clone(),
        };
        let headers: Vec<(String, String)> = raw.headers.unwrap_or_default().into_iter().collect();
        if headers.len() > 32
            || headers.iter().any(|(k, v)| {
                k.is_empty()
                    || !k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                    || v.bytes().any(|b| b < 0x20 && b != b'\t')
                    || v.len() > 4096
            })
        {
            return Err(self.err(
                raw.url.span(),
                format!("sink `{name}`: headers must be at most 32 `Name = \"value\"` pairs (letters, digits, -; values without control characters)"),
            ));
        }
        Ok(Sink {
            name,
            kind,
            url,
            batch: self.bounded("batch", &raw.batch, 1..=MAX_BATCH, DEFAULT_BATCH)? as u32,
            max_waiting: self.bounded(
                "max_waiting",
                &raw.max_waiting,
                1..=100_000_000,
                DEFAULT_MAX_WAITING,
            )?,
            max_age: self.sink_duration("max_age", &raw.max_age, DEFAULT_MAX_AGE_NS, None)?,
            timeout: self.sink_duration(
                "timeout",
                &raw.timeout,
                10_000_000_000,
                Some((MAX_TIMEOUT_NS, "a stopping agent waits for one request")),
            )?,
            linger: self.sink_duration(
                "linger",
                &raw.linger,
                1_000_000_000,
                Some((
                    3_600_000_000_000,
                    "a batch waits no longer for more results",
                )),
            )?,
            headers,
        })
    }
}
