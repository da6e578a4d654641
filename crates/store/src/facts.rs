//! What a run is found by, read from its result's JSON (every misura result
//! carries `started_at`, `host.hostname`, and `config` or equivalent), and
//! where runs go ([`StoreConfig`]): shared by the binary's store hook and
//! the agent, which keeps every result it measures.

use crate::RunFacts;
use serde_json::Value;
use std::path::PathBuf;

/// Where runs go: the store's path, and whether runs are kept at all.
#[derive(Clone, Debug)]
pub struct StoreConfig {
    pub path: PathBuf,
    pub enabled: bool,
}

fn str_at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    let mut cur = v;
    for k in path {
        cur = cur.get(k)?;
    }
    cur.as_str()
}

/// The searchable facts of the result `v` of `subcommand` against `target`.
pub fn facts(subcommand: &str, target: &str, v: &Value) -> RunFacts {
    let sizes = v
        .pointer("/config/sizes")
        .or_else(|| v.pointer("/config/request_sizes"))
        .and_then(|s| s.as_array())
        .map(|a| {
            a.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(",")
        })
        .unwrap_or_default();
    let ts = v
        .pointer("/timestamps/sources_used/0")
        .and_then(|s| s.as_str())
        .or_else(|| str_at(v, &["timestamps", "client_rx"]))
        .unwrap_or("")
        .to_string();
    RunFacts {
        started_at: str_at(v, &["started_at"]).unwrap_or("").to_string(),
        subcommand: subcommand.to_string(),
        target: target.to_string(),
        sizes,
        timestamp_source: ts,
        host: str_at(v, &["host", "hostname"]).unwrap_or("").to_string(),
        complete: v.get("complete").and_then(|c| c.as_bool()).unwrap_or(true),
    }
}
